"""What a GradientTape records while a graph is being built (inside ``aics.function``).

Eagerly a tape keeps the ops it saw run. While a graph is built, the graph
itself holds the ops, but a tape must still see only the ops created inside
its ``with`` block (and outside ``stop_recording()``), as TF's tape in a
FuncGraph does: in

    y = x * x                      # before the tape
    with aics.GradientTape() as t:
        t.watch(x)
        z = y * x
    t.gradient(z, x)               # y, as in TF: the tape never saw y = x * x

the gradient must not flow through ``y``. A graph numbers its ops in creation
order (``op.id``), so the record is a list of id spans ``[start, end)`` per
graph; ``unrecorded_outputs`` gives the outputs of every other op, which the
tape's ``gradient`` passes to ``aics.gradients`` as ``stop_gradients``.
"""
import weakref

from ..framework import context
from ..framework.ops import get_default_graph

_spans = weakref.WeakKeyDictionary()  # tape -> [[graph, start id, end id or None], ...]


def open_span(tape):
    """The tape starts (or resumes) recording: a new span if a graph is being built."""
    if context.executing_eagerly():
        return
    graph = get_default_graph()
    _spans.setdefault(tape, []).append([graph, len(graph.get_operations()), None])


def close_span(tape):
    """The tape stops (or pauses) recording: the open span ends at the graph's current op count."""
    for span in _spans.get(tape, ()):
        if span[2] is None:
            span[2] = len(span[0].get_operations())


def unrecorded_outputs(tape, graph):
    """Outputs of the ops of ``graph`` created outside every span of ``tape`` (None when the tape
    has no span on this graph: it was entered eagerly, and every op counts as recorded)."""
    ops = graph.get_operations()
    spans = [(s, len(ops) if e is None else e) for g, s, e in _spans.get(tape, ()) if g is graph]
    if not spans:
        return None
    out = []
    for op in ops:
        if not any(s <= op.id < e for s, e in spans):
            out.extend(op.outputs)
    return out
