"""Graph-mode reverse-mode differentiation (TF's python/ops/gradients_util.py): the library's
implementation behind ``aics.gradients`` (``gradients_impl.py`` is the seam).

``default_gradients(ys, xs, grad_ys, stop_gradients)`` adds the backward pass
to the graph: it finds the ops between ``xs`` and ``ys``, walks them from the
ys back in reverse topological order, calls each op's registered gradient
function (which adds ops under ``gradients/<op>_grad/``), and sums the
contributions that reach a tensor along different paths.
"""
import collections

from ..framework import context
from ..framework.gradient_registry import gradient_registry
from ..framework.ops import Tensor, name_scope
from ..framework.tensor_shape import v2_shapes_inside
from ..framework import dtypes


def as_tensor_list(xs, what):
    """``xs`` (one or a list; Variables as their handles) as a list of graph Tensors."""
    from .variables import Variable
    if xs is None:
        raise ValueError(f"{what} must not be None.")
    items = xs if isinstance(xs, (list, tuple)) else [xs]
    out = []
    for x in items:
        if isinstance(x, Variable):
            out.append(graph_tensor_of(x))
        elif isinstance(x, Tensor):
            out.append(x)
        else:
            raise TypeError(f"{what} must be graph Tensors or Variables, got {x!r}. "
                            f"(In eager mode use aics.GradientTape.)")
    return out


def graph_tensor_of(x):
    """The graph tensor to differentiate for ``x``: a variable's handle; inside ``aics.function``
    an eager variable's handle is the function's capture of it (a placeholder fed the variable)."""
    from .variables import Variable
    if isinstance(x, Variable):
        x = x.handle
    if not isinstance(x, Tensor) and not context.executing_eagerly():
        from ..framework.ops import get_default_graph
        g = get_default_graph()
        if hasattr(g, "capture"):
            return g.capture(x)
    return x


def aggregate(grads):
    """Sums the gradient contributions reaching one tensor (None when there are none)."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    from .math_ops import add_n
    return add_n(grads)


def _differentiable(t):
    return t.dtype.is_floating or t.dtype.is_complex or t.dtype == dtypes.resource


def call_gradient_function(op, out_grads):
    """Runs op's gradient function; returns one gradient (or None) per input."""
    op_type = op.gradient_type or op.type
    fn = gradient_registry.lookup(op_type)  # LookupError names the op type
    if fn is None:
        return [None] * len(op.inputs)
    if any(g is None for g in out_grads):
        from .array_ops import zeros_like
        out_grads = [zeros_like(o) if g is None else g for g, o in zip(out_grads, op.outputs)]
    with v2_shapes_inside():
        in_grads = fn(op, *out_grads)
    if not isinstance(in_grads, (list, tuple)):
        in_grads = [in_grads]
    in_grads = list(in_grads)
    if len(in_grads) != len(op.inputs):
        raise ValueError(f"Num gradients {len(in_grads)} generated for op '{op.name}' of type "
                         f"{op.type} do not match num inputs {len(op.inputs)}")
    return in_grads


def default_gradients(ys, xs, grad_ys, stop_gradients):
    """The gradients of sum(ys) for each of ``xs``, built in the default graph (the ys' graph,
    inside the caller's name scope); None where a x is not connected to the ys."""
    from .array_ops import ones_like
    from ..framework.ops import convert_to_tensor
    stops = stop_gradients
    # Ops reachable forward from xs (through data edges) ...
    forward = set()
    stack = [c for x in xs for c in x.consumers()]
    while stack:
        op = stack.pop()
        if op in forward:
            continue
        forward.add(op)
        for t in op.outputs:
            if t in stops:
                continue
            stack.extend(t.consumers())
    # ... that the ys depend on: those are the ops gradients flow through.
    between = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in between or op not in forward:
            continue
        between.add(op)
        stack.extend(t.op for t in op.inputs)
    pending = collections.Counter()
    for op in between:
        for t in op.inputs:
            if t.op in between:
                pending[t.op] += 1
    grads = collections.defaultdict(list)
    for i, y in enumerate(ys):
        gy = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else None
        if gy is None:
            gy = ones_like(y, name=f"grad_ys_{i}")
        else:
            gy = convert_to_tensor(gy, dtype=y.dtype)
        grads[y].append(gy)
    xs_set = set(xs)
    ready = [op for op in between if pending[op] == 0]
    ready.sort(key=lambda o: -o.id)
    done = set()
    while ready:
        op = ready.pop()
        done.add(op)
        out_grads = [aggregate(grads.get(t, [])) for t in op.outputs]
        has_grad = any(g is not None for g in out_grads) and not any(t in stops for t in op.outputs)
        if has_grad:
            with name_scope(op.name + "_grad"):
                in_grads = call_gradient_function(op, out_grads)
            for t, g in zip(op.inputs, in_grads):
                if g is None:
                    continue
                if t.op in between or t in xs_set:
                    if isinstance(g, Tensor) and t.shape.rank is not None and t.dtype != dtypes.resource:
                        try:
                            g.set_shape(t.shape)
                        except ValueError:
                            raise ValueError(f"Gradient for input '{t.name}' of '{op.name}' has shape "
                                             f"{g.shape}, expected {t.shape}") from None
                    grads[t].append(g)
        for t in op.inputs:
            if t.op in between:
                pending[t.op] -= 1
                if pending[t.op] == 0:
                    ready.append(t.op)
        ready.sort(key=lambda o: -o.id)
    out = []
    for x in xs:
        g = aggregate(grads.get(x, []))
        out.append(g)
    return out
