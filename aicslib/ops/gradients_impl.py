"""``aics.gradients`` (TF's python/ops/gradients_impl.py) and the seam behind it.

``gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None)``
checks and normalizes its arguments, hands a graph with while loops to
``control_flow_grad`` (which differentiates each loop whole and calls
``gradients`` again for the loop-free parts), and otherwise calls the
replaceable **implementation** inside ``with graph.as_default(), name_scope(name)``::

    implementation(ys, xs, grad_ys, stop_gradients) -> [gradient or None per x]

* ``ys``, ``xs``: lists of Tensors of one graph (a Variable arrives as its handle);
* ``grad_ys``: None, or one entry per y: its incoming gradient, None for ones;
* ``stop_gradients``: a set of Tensors no gradient flows through.

It returns one Tensor per x, the gradient of sum(ys), or None where x does not
reach the ys. The library's is ``gradients_util.default_gradients``;
``aics.experimental.use_gradients(fn)`` puts another in its place for the
duration of a ``with`` block. Every graph gradient goes through it:
``aics.gradients``, ``GradientTape`` inside ``aics.function``, optimizers'
``minimize``, and the loop-free parts of a loop's gradient.
"""
from ..framework import context
from ..framework.ops import name_scope
from ..framework.seam import Seam
from .gradients_util import as_tensor_list, default_gradients, graph_tensor_of  # noqa: F401

#: The seam (see the module docstring); replaced for a ``with`` block by ``use_gradients``.
implementation = Seam("gradients", default_gradients, "fn(ys, xs, grad_ys, stop_gradients) -> [gradient per x]")
use_gradients = implementation.use


def gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None, **unused):
    """Symbolic gradients of sum(ys) with respect to each of ``xs``; None where unconnected.

    TF's other keywords (``gate_gradients``, ``aggregation_method``...) are accepted and ignored."""
    if context.executing_eagerly():
        raise RuntimeError("aics.gradients is not supported when eager execution is enabled. "
                           "Use aics.GradientTape instead.")
    ys = as_tensor_list(ys, "ys")
    xs = as_tensor_list(xs, "xs")
    stops = set(as_tensor_list(stop_gradients, "stop_gradients")) if stop_gradients else set()
    if grad_ys is not None and not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    graph = ys[0].graph
    from . import control_flow_grad
    if control_flow_grad.needs_loop_gradient(graph):  # while loops are differentiated whole
        with graph.as_default():
            return control_flow_grad.gradients_through_loops(ys, xs, grad_ys, name, stops)
    with graph.as_default(), name_scope(name):
        return list(implementation(ys, xs, grad_ys, stops))
