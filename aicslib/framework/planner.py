"""The planner: which nodes a Session step runs, in what order, and when each value can go.

TF's DirectSession prunes the graph to what the fetches need
(``PruneForTargets``), its executor runs nodes once their inputs are ready and
drops a tensor when its last consumer has run. Here those three decisions are
one replaceable function, the **planner**, which every Session executor
follows (sequential, one thread per device, and, for the pruning, the
control-flow executor)::

    planner(targets, feeds, keep) -> (order, free_after)

* ``targets``: the Operations the step must run (fetched ops, and the
  producers of fetched tensors that are not fed);
* ``feeds``: the fed Tensors (a container supporting ``in``). A fed tensor's
  value is given, so the op producing it is not needed for it: feeds cut
  their fan-in;
* ``keep``: the Tensors the step returns (a container supporting ``in``);
  they are never freed.

It returns

* ``order``: every Operation the targets need (through ``op.inputs`` that are
  not fed and through ``op.control_inputs``), each after all the ops it needs;
  a cycle is an ``InvalidArgumentError``;
* ``free_after``: one entry per op of ``order``, the Tensors whose value can
  be dropped once that op has run: those it consumes last, and those it
  produces that nothing consumes; never one in ``keep``.

The Session calls the seam ``aicslib.framework.session.planner``
(``seam.py``); ``default_planner`` below is the library's, and
``aics.experimental.use_planner(fn)`` puts another in its place for the
duration of a ``with`` block. A graph rewriter
(Grappler) runs between planning and execution; when it replaces nodes, the
freeing is recomputed for the new ones with ``last_uses``.
"""
import operator

from .errors import InvalidArgumentError


def fetch_targets(elements, feeds):
    """The ops a step must run for its fetches: each fetched op, each fetched tensor's producer
    (unless the tensor is fed: then its value is known without running anything)."""
    return [el if not hasattr(el, "value_index") else el.op for el in elements
            if not hasattr(el, "value_index") or el not in feeds]


def default_planner(targets, feeds, keep):
    """Depth-first pruning and ordering from the targets, then each value's last use."""
    order = prune(targets, feeds)
    return order, last_uses(order, keep)


def prune(targets, feeds, allow_cycles=False):
    """The ops ``targets`` need, stopping at fed tensors, each after the ops it needs.

    A depth-first walk; an op reached again while its own inputs are still being
    walked closes a cycle: an error, unless ``allow_cycles`` (a while loop's
    back edge, for the control-flow executor, which needs no order).
    """
    order, state = [], {}
    for root in targets:
        if state.get(root) == 2:
            continue
        stack = [(root, _needs(root, feeds))]
        state[root] = 1
        while stack:
            op, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[op] = 2
                order.append(op)
                continue
            st = state.get(nxt)
            if st == 1 and not allow_cycles:
                raise InvalidArgumentError(None, nxt, f"Graph contains a cycle: node '{nxt.name}' "
                                           f"depends on itself (through '{op.name}').")
            if st is None:
                state[nxt] = 1
                stack.append((nxt, _needs(nxt, feeds)))
    return order


def _needs(op, feeds):
    for t in op.inputs:
        if t not in feeds:
            yield t.op
    yield from op.control_inputs


def last_uses(order, keep, inputs=operator.attrgetter("inputs"), outputs=operator.attrgetter("outputs")):
    """Per op of ``order``, the tensors to drop once it has run (not those in ``keep``).

    As TF's executor, an intermediate is freed as soon as nothing else needs it,
    so a long graph holds only its live values, not every result of the step.
    ``inputs`` and ``outputs`` say what an entry of ``order`` reads and makes (an
    executor's steps name their values by slot).
    """
    last = {}
    for i, op in enumerate(order):
        for t in inputs(op):
            last[t] = i
    free = [[] for _ in order]
    for i, op in enumerate(order):
        for t in outputs(op):
            if t not in last and t not in keep:
                free[i].append(t)  # produced but never consumed (e.g. an unused output)
    for t, i in last.items():
        if t not in keep:
            free[i].append(t)
    return free
