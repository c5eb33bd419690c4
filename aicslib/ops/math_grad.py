"""Gradients of math ops (TF's python/ops/math_grad.py), written with ops.

Each function gets the forward ``op`` and the gradient of its output and
returns one gradient per input. Because they are built from ops, they run
eagerly under a GradientTape, add nodes under ``aics.gradients``, and can
themselves be differentiated.
"""
import numpy as np

from ..framework import dtypes
from ..framework.eager import EagerTensor
from ..framework.execute import apply_op
from ..framework.ops import Tensor, constant_value
from ..framework.gradient_registry import RegisterGradient, no_gradient
from . import array_ops, math_ops
from .complex_ops import conj  # complex inputs: the chain rule runs on conjugates (ops/complex_grad.py)


def static_shape(t):
    """t's shape as a list of ints when fully known at graph-build time, else None."""
    if type(t) is EagerTensor:  # a value: its array's shape, without building a TensorShape
        return list(np.shape(t.numpy()))
    s = t.shape
    return s.as_list() if s.is_fully_defined() else None


def sum_to_shape(grad, x, other=None):
    """Reduces a broadcast gradient back to the shape of input ``x``.

    ``other`` is the op's other input, when there is one: it can show, from static
    shapes alone, that ``x`` was not broadcast along a dimension whose size is unknown
    (the batch dimension, typically), so no run-time shape arithmetic is needed.
    """
    gs, xs = static_shape(grad), static_shape(x)
    if gs is not None and xs is not None:
        if gs == xs:
            return grad
        lead = len(gs) - len(xs)
        axes = list(range(lead)) + [i + lead for i, d in enumerate(xs) if d == 1 and gs[i + lead] != 1]
        if axes:
            grad = math_ops.reduce_sum(grad, axes)
        return array_ops.reshape(grad, xs) if static_shape(grad) != xs else grad
    axes = _static_reduction_axes(x.shape, None if other is None else other.shape, grad.shape)
    if axes is not None:
        if axes:
            grad = math_ops.reduce_sum(grad, axes)
        xs = x.shape
        if xs.rank is not None and sum(d is None for d in xs.dims) <= 1 and xs.rank != grad.shape.rank:
            return array_ops.reshape(grad, [-1 if d is None else d for d in xs.dims])
        return grad
    sx = array_ops.shape(x)
    rx, _ = broadcast_gradient_args(sx, array_ops.shape(grad))
    return array_ops.reshape(math_ops.reduce_sum(grad, rx), sx)


def _static_reduction_axes(x_shape, other_shape, grad_shape):
    """Axes of ``grad`` to sum for input ``x`` under NumPy broadcasting, or None when only
    run-time shapes can tell. Leading axes x lacks are always summed; an axis where x has
    size 1 is summed (harmless if the output is 1 there too); an axis where x's size is
    unknown is not summed only if the other input cannot have widened it (it lacks the
    axis or has size 1 there)."""
    if x_shape.rank is None or grad_shape.rank is None or x_shape.rank > grad_shape.rank:
        return None
    lead = grad_shape.rank - x_shape.rank
    if other_shape is not None and other_shape.rank is None:
        return None
    o_lead = None if other_shape is None else grad_shape.rank - other_shape.rank
    axes = list(range(lead))
    for i, d in enumerate(x_shape.dims):
        g = grad_shape.dims[i + lead]
        if d == 1:
            if g != 1:
                axes.append(i + lead)
        elif d is None:
            if other_shape is None:
                return None
            j = i + lead - o_lead
            od = other_shape.dims[j] if j >= 0 else 1
            if od != 1:
                return None
    return axes


def broadcast_gradient_args(s0, s1):
    return apply_op("BroadcastGradientArgs", [s0, s1])


def _binary(op, gx, gy):
    x, y = op.inputs
    return [None if gx is None else sum_to_shape(gx, x, y), None if gy is None else sum_to_shape(gy, y, x)]


@RegisterGradient("Add")   # TF1's Add (strings use it; numbers go to AddV2)
@RegisterGradient("AddV2")
def _add_grad(op, grad):
    return _binary(op, grad, grad)


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    return _binary(op, grad, -grad)


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return _binary(op, grad * conj(y), conj(x) * grad)


@RegisterGradient("RealDiv")
def _realdiv_grad(op, grad):
    x, y = op.inputs
    x, y = conj(x), conj(y)
    return _binary(op, grad / y, -grad * x / (y * y))


@RegisterGradient("FloorMod")
def _floormod_grad(op, grad):
    x, y = op.inputs
    return _binary(op, grad, -grad * math_ops.floordiv(x, y))


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * y * math_ops.pow(x, y - array_ops.ones_like(y))
    positive = math_ops.greater(x, array_ops.zeros_like(x))
    safe_x = math_ops.where(positive, x, array_ops.ones_like(x))
    gy = grad * z * math_ops.where(positive, math_ops.log(safe_x), array_ops.zeros_like(x))
    return _binary(op, gx, gy)


def _minmax_grad(op, grad, select):
    x, y = op.inputs
    mask = select(x, y)
    zeros = array_ops.zeros_like(grad)
    return _binary(op, math_ops.where(mask, grad, zeros), math_ops.where(mask, zeros, grad))


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    return _minmax_grad(op, grad, math_ops.greater_equal)


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    return _minmax_grad(op, grad, math_ops.less_equal)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    g = 2.0 * grad * (x - y) if x.dtype.is_floating else grad * (x - y) * 2
    return _binary(op, g, -g)


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return -grad


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return grad * math_ops.sign(op.inputs[0])


@RegisterGradient("Square")
def _square_grad(op, grad):
    x = conj(op.inputs[0])
    return grad * (2.0 * x)


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    return grad * 0.5 / conj(op.outputs[0])


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return grad * -0.5 * y * y * y


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    y = conj(op.outputs[0])
    return -grad * y * y


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    return grad * conj(op.outputs[0])


@RegisterGradient("Log")
def _log_grad(op, grad):
    return grad / conj(op.inputs[0])


@RegisterGradient("Log1p")
def _log1p_grad(op, grad):
    return grad / (1.0 + op.inputs[0])


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    """d sin(x) = cos(x) dx (TF: math_grad.py, _SinGrad)."""
    return grad * math_ops.cos(conj(op.inputs[0]))


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    return -grad * math_ops.sin(conj(op.inputs[0]))


# "Tan" has no gradient on purpose: registering it is the exercise in notebook 09.


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    y = conj(op.outputs[0])
    return grad * (1.0 - y * y)


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    y = conj(op.outputs[0])
    return grad * y * (1.0 - y)


@RegisterGradient("SelectV2")
def _select_grad(op, grad):
    c, t, e = op.inputs
    zeros = array_ops.zeros_like(grad)
    return [None, sum_to_shape(math_ops.where(c, grad, zeros), t),
            sum_to_shape(math_ops.where(c, zeros, grad), e)]


@RegisterGradient("ClipByValue")
def _clip_grad(op, grad):
    x, lo, hi = op.inputs
    zeros = array_ops.zeros_like(grad)
    below = math_ops.less(x, lo)
    above = math_ops.greater(x, hi)
    inside = math_ops.logical_not(math_ops.logical_or(below, above))
    return [math_ops.where(inside, grad, zeros), sum_to_shape(math_ops.where(below, grad, zeros), lo),
            sum_to_shape(math_ops.where(above, grad, zeros), hi)]


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src, dst = op.get_attr("SrcT"), op.get_attr("DstT")
    if (src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex):
        return math_ops.cast(grad, src)  # complex -> real keeps the real part, as TF
    return None


@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    a, b = (conj(t) for t in op.inputs)
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")

    def mm(x, y, transpose_a=False, transpose_b=False):  # the raw op, as TF's gen_math_ops.mat_mul
        return apply_op("MatMul", [x, y], {"transpose_a": transpose_a, "transpose_b": transpose_b})
    # Eagerly the tape says which inputs need no gradient (TF's skip_input_indices),
    # e.g. the input images of the first layer: skip that product.
    skip = getattr(op, "skip_input_indices", None) or ()
    ga = gb = None
    if not ta and not tb:
        if 0 not in skip:
            ga = mm(grad, b, transpose_b=True)
        if 1 not in skip:
            gb = mm(a, grad, transpose_a=True)
    elif not ta and tb:
        if 0 not in skip:
            ga = mm(grad, b)
        if 1 not in skip:
            gb = mm(grad, a, transpose_a=True)
    elif ta and not tb:
        if 0 not in skip:
            ga = mm(b, grad, transpose_b=True)
        if 1 not in skip:
            gb = mm(a, grad)
    else:
        if 0 not in skip:
            ga = mm(b, grad, transpose_a=True, transpose_b=True)
        if 1 not in skip:
            gb = mm(grad, a, transpose_a=True, transpose_b=True)
    return [ga, gb]


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    x, y = op.inputs
    if x.dtype.is_complex:  # TF's adjoints: conjugate transposes
        x, y = conj(x), conj(y)
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")
    mm = math_ops.matmul
    if not ax:
        gx = mm(grad, y, transpose_b=not ay) if not ay else mm(grad, y)
    else:
        gx = mm(y, grad, transpose_a=ay, transpose_b=True)
    if not ay:
        gy = mm(x, grad, transpose_a=not ax) if not ax else mm(x, grad)
    else:
        gy = mm(grad, x, transpose_a=True, transpose_b=ax)
    return [sum_to_shape(gx, x), sum_to_shape(gy, y)]


def _kept_dims_shape(x, axes_tensor):
    """Shape of x with the reduced axes set to 1 (static when possible)."""
    axes = static_value(axes_tensor)
    if x.shape.rank is not None and axes is not None:
        rank = x.shape.rank
        ax = {int(a) % rank for a in np.asarray(axes).reshape(-1)} if rank else set()
        kept = [1 if i in ax else d for i, d in enumerate(x.shape.dims)]
        if sum(d is None for d in kept) <= 1:  # one unknown size can be left to reshape (-1)
            return [-1 if d is None else d for d in kept]
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    # axes may be a scalar: make it a vector so the one-hot rows sum per axis. A scalar x
    # (rank 0, fed into a placeholder of unknown shape) has no axes: divide by at least 1.
    ax = math_ops.floormod(math_ops.cast(array_ops.reshape(axes_tensor, [-1]), dtypes.int32),
                           math_ops.maximum(rank, 1))
    hits = math_ops.reduce_sum(array_ops.one_hot(ax, rank, dtype=dtypes.int32), axis=0)
    return math_ops.where(math_ops.greater(hits, 0), array_ops.ones_like(shape), shape)


def static_value(t):
    """t's value when known without running anything, else None: an eager tensor's
    array, or a graph tensor's constant value (a Const, the Shape of a known shape)."""
    if isinstance(t, Tensor):
        return constant_value(t)
    if isinstance(t, EagerTensor):
        return t.numpy()
    return None


def _broadcast_back(op, grad):
    x, axes = op.inputs
    if not op.get_attr("keep_dims") and static_shape(grad) != []:  # a scalar broadcasts as it is
        grad = array_ops.reshape(grad, _kept_dims_shape(x, axes))
    xs = static_shape(x)
    return array_ops.broadcast_to(grad, xs if xs is not None else array_ops.shape(x))


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return [_broadcast_back(op, grad), None]


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    xs, ys = static_shape(x), static_shape(y)
    if xs is not None and ys is not None:
        count = max(int(np.prod(xs)) // max(int(np.prod(ys)), 1), 1)
        scale = np.asarray(1.0 / count, x.dtype.as_numpy_dtype)
        return [_broadcast_back(op, grad) * scale, None]
    count = math_ops.cast(array_ops.size(x), x.dtype) / math_ops.cast(
        math_ops.maximum(array_ops.size(y), 1), x.dtype)
    return [_broadcast_back(op, grad) / count, None]


def _minmax_reduce_grad(op, grad):
    x, axes = op.inputs
    y = op.outputs[0]
    keep = _kept_dims_shape(x, axes)
    y = array_ops.reshape(y, keep)
    grad = array_ops.reshape(grad, keep)
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype)
    num_selected = array_ops.reshape(math_ops.reduce_sum(indicators, axes), keep)
    return [math_ops.divide(indicators, num_selected) * grad, None]


@RegisterGradient("Max")
def _max_grad(op, grad):
    return _minmax_reduce_grad(op, grad)


@RegisterGradient("Min")
def _min_grad(op, grad):
    return _minmax_reduce_grad(op, grad)


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    """grad * prod / x. Exact for inputs without zeros (TF's version also handles zeros)."""
    x = op.inputs[0]
    y = op.outputs[0]
    keep = _kept_dims_shape(x, op.inputs[1])
    return [array_ops.reshape(grad * y, keep) / x, None]


no_gradient("Greater")
no_gradient("GreaterEqual")
no_gradient("Less")
no_gradient("LessEqual")
no_gradient("Equal")
no_gradient("NotEqual")
no_gradient("LogicalAnd")
no_gradient("LogicalOr")
no_gradient("LogicalNot")
no_gradient("IsFinite")
no_gradient("ArgMax")
no_gradient("ArgMin")


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    """Zero almost everywhere: TF defines it so rather than leaving the input unconnected."""
    return array_ops.zeros_like(op.inputs[0])


no_gradient("FloorDiv")


# ---------------------------------------------------------------------------
# How to check each gradient above numerically: op type -> () -> (fn, [float64 inputs]).
# tests/ops/test_gradient_registry.py walks the gradient registry and needs one recipe per
# differentiable op, so an op added without a correct gradient fails CI.

def _rng(seed=0):
    return np.random.default_rng(seed)


def _pos(*shape):
    return _rng(1).uniform(0.5, 2.0, shape)


def _any(*shape, seed=0):
    return _rng(seed).standard_normal(shape)


GRADIENT_CHECK_RECIPES = {
    "AddV2": lambda: (math_ops.add, [_any(2, 3), _any(3, seed=1)]),
    "Sub": lambda: (math_ops.subtract, [_any(2, 1), _any(1, 3, seed=1)]),
    "Mul": lambda: (math_ops.multiply, [_any(2, 3), _any(2, 1, seed=1)]),
    "RealDiv": lambda: (math_ops.divide, [_any(2, 3), _pos(3)]),
    "FloorMod": lambda: (math_ops.floormod, [_pos(2, 3) * 3.3, _pos(3)]),
    "Pow": lambda: (math_ops.pow, [_pos(2, 3), _any(3, seed=2)]),
    "Maximum": lambda: (math_ops.maximum, [_any(2, 3), _any(2, 3, seed=5)]),
    "Minimum": lambda: (math_ops.minimum, [_any(2, 3), _any(2, 3, seed=5)]),
    "SquaredDifference": lambda: (math_ops.squared_difference, [_any(2, 3), _any(3, seed=1)]),
    "Neg": lambda: (math_ops.negative, [_any(2, 3)]),
    "Abs": lambda: (math_ops.abs, [_any(2, 3)]),
    "Sign": lambda: (math_ops.sign, [_any(2, 3)]),  # 0 away from x = 0, where sign jumps
    "Square": lambda: (math_ops.square, [_any(2, 3)]),
    "Sqrt": lambda: (math_ops.sqrt, [_pos(2, 3)]),
    "Rsqrt": lambda: (math_ops.rsqrt, [_pos(2, 3)]),
    "Reciprocal": lambda: (math_ops.reciprocal, [_pos(2, 3)]),
    "Exp": lambda: (math_ops.exp, [_any(2, 3)]),
    "Log": lambda: (math_ops.log, [_pos(2, 3)]),
    "Log1p": lambda: (math_ops.log1p, [_pos(2, 3)]),
    "Sin": lambda: (math_ops.sin, [_any(2, 3)]),
    "Cos": lambda: (math_ops.cos, [_any(2, 3)]),
    "Tanh": lambda: (math_ops.tanh, [_any(2, 3)]),
    "Sigmoid": lambda: (math_ops.sigmoid, [_any(2, 3)]),
    "SelectV2": lambda: (lambda a, b: math_ops.where(np.array([[True, False, True]]), a, b),
                         [_any(2, 3), _any(1, 3, seed=1)]),
    "ClipByValue": lambda: (lambda t: math_ops.clip_by_value(t, -0.5, 0.7), [_any(3, 4)]),
    "AddN": lambda: (lambda a, b, c: math_ops.add_n([a, b, c]), [_any(2, 2), _any(2, 2, seed=1), _any(2, 2, seed=2)]),
    # float64 -> float32 rounds (~6e-8), so use a wide step: the function is linear anyway.
    "Cast": lambda: (lambda x: math_ops.cast(x, dtypes.float32) * 1.0, [_any(2, 3)], 1e-4, 1e-2),
    "MatMul": lambda: (lambda a, b: math_ops.matmul(a, b, transpose_b=True), [_any(2, 3), _any(4, 3, seed=1)]),
    "BatchMatMulV2": lambda: (math_ops.matmul, [_any(2, 2, 3), _any(3, 4, seed=1)]),
    "Sum": lambda: (lambda x: math_ops.reduce_sum(x, axis=1), [_any(2, 3, 4)]),
    "Mean": lambda: (lambda x: math_ops.reduce_mean(x, axis=[0, 2], keepdims=True), [_any(2, 3, 4)]),
    "Max": lambda: (lambda x: math_ops.reduce_max(x, axis=0), [_any(3, 4)]),
    "Min": lambda: (lambda x: math_ops.reduce_min(x, axis=1), [_any(3, 4)]),
    "Prod": lambda: (lambda x: math_ops.reduce_prod(x, axis=1), [_pos(3, 4)]),
}
