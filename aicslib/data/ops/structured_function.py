"""Functions of a dataset's elements (TF's python/data/ops/structured_function.py).

The function given to ``map`` or ``filter`` is *traced into a graph* once, its arguments
placeholders with the element's dtypes and shapes, and that graph runs for every element.
Eager tensors and variables the function uses are captured, as by TF's FuncGraph: fed at
every run, so a variable's current value is read.
"""
import threading

from ...framework.ops import convert_to_tensor
from ..util.structure import flatten, normalize, pack_sequence_as


def function_graph(what):
    """A graph to trace a dataset function into."""
    from ...eager.function import FuncGraph
    return FuncGraph(what)


def capture_feeds(graph):
    """The feed that gives ``graph``'s captured eager values their current values."""
    return {ph: value.array for value, ph in graph.captures}


def call_with_element(func, element):
    """TF's calling convention: a tuple element is passed as arguments, anything else whole."""
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return func(*element)
    return func(element)


class StructuredFunction:
    """A function of one element, traced once into its own graph and run per element.

    ``phs`` are its placeholders, ``outs`` its output tensors (flat) and ``structure`` the
    structure the function returned (lists become tuples)."""

    def __init__(self, input_spec, func, what):
        from ...ops.array_ops import placeholder
        self._graph = function_graph(what)
        with self._graph.as_default():
            phs = [placeholder(s.dtype, s.shape, name=f"arg{i}")
                   for i, s in enumerate(flatten(input_spec))]
            out = call_with_element(func, pack_sequence_as(input_spec, phs))
            if isinstance(out, list):
                out = tuple(out)
            out = normalize(out)
            outs = [convert_to_tensor(o) for o in flatten(out)]
        self.phs, self.outs, self.structure = phs, outs, out
        self._session = None
        self._lock = threading.Lock()

    def __call__(self, flat, fetches=None):
        """The outputs (``fetches``, a subset of ``outs``; default all) for the element ``flat``."""
        from ...framework.session import Session
        with self._lock:
            if self._session is None:
                self._session = Session(graph=self._graph)
        feed = capture_feeds(self._graph)
        feed.update(zip(self.phs, flat))
        return self._session.run(self.outs if fetches is None else fetches, feed_dict=feed)
