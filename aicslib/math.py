"""``aics.math``: TF2's namespace for math ops (``tf.math.reduce_sum``, ``tf.math.log``, ...).

The ops are defined in ``aicslib/ops/math_ops.py``; the functions written here
are TF's composites of them (``reduce_logsumexp``, ``count_nonzero``,
``reduce_any``...), built from registered ops so they work in graphs, eagerly
and under GradientTape.
"""
import numpy as np

from .framework import dtypes
from .framework.missing_api import module_getattr
from .framework.ops import convert_to_tensor, name_scope
from .ops import array_ops, math_ops
from .ops.math_ops import (abs, add, add_n, argmax, argmin, cos, divide, equal, exp, floordiv,  # noqa: F401
                           floormod, greater, greater_equal, is_finite, less, less_equal, log, log1p,
                           logical_and, logical_not, logical_or, maximum, minimum, multiply,
                           negative, not_equal, pow, realdiv, reciprocal, reduce_max, reduce_mean,
                           reduce_min, reduce_prod, reduce_sum, rsqrt, scalar_mul, sigmoid, sign, sin,
                           sqrt, square, squared_difference, subtract, tan, tanh, truediv)
from .ops.math_ops import floormod as mod  # noqa: F401
from .ops.nn_ops import l2_loss as _l2_loss  # noqa: F401
from .ops.nn_ops import log_softmax, softmax  # noqa: F401
from .ops.complex_ops import angle, complex, conj, imag, real  # noqa: F401
from .ops.array_ops import unsorted_segment_sum  # noqa: F401

__getattr__ = module_getattr(__name__)


def _bool_reduce(reducer, input_tensor, axis, keepdims, name, default_name):
    with name_scope(name, default_name):
        x = convert_to_tensor(input_tensor, dtype=dtypes.bool)
        as_int = math_ops.cast(x, dtypes.int32)
        return math_ops.cast(reducer(as_int, axis=axis, keepdims=keepdims), dtypes.bool)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over ``axis`` (all axes when None)."""
    return _bool_reduce(math_ops.reduce_max, input_tensor, axis, keepdims, name, "reduce_any")


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over ``axis`` (all axes when None)."""
    return _bool_reduce(math_ops.reduce_min, input_tensor, axis, keepdims, name, "reduce_all")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """``log(sum(exp(x)))`` computed stably: the maximum is taken out first."""
    with name_scope(name, "ReduceLogSumExp"):
        x = convert_to_tensor(input_tensor)
        m = array_ops.stop_gradient(math_ops.reduce_max(x, axis=axis, keepdims=True))
        m = math_ops.where(math_ops.is_finite(m), m, array_ops.zeros_like(m))
        s = math_ops.reduce_sum(math_ops.exp(x - m), axis=axis, keepdims=True)
        out = math_ops.log(s) + m
        if not keepdims:
            out = math_ops.reduce_sum(out, axis=axis) if axis is not None else array_ops.reshape(out, [])
        return out


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance (divides by N) over ``axis``."""
    with name_scope(name, "reduce_variance"):
        x = convert_to_tensor(input_tensor)
        mean = math_ops.reduce_mean(x, axis=axis, keepdims=True)
        return math_ops.reduce_mean(math_ops.squared_difference(x, mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    with name_scope(name, "reduce_std"):
        return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    with name_scope(name, "reduce_euclidean_norm"):
        x = convert_to_tensor(input_tensor)
        return math_ops.sqrt(math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=keepdims))


def count_nonzero(input, axis=None, keepdims=None, dtype=dtypes.int64, name=None):
    """The number of non-zero elements over ``axis``, as ``dtype`` (int64)."""
    with name_scope(name, "count_nonzero"):
        x = convert_to_tensor(input)
        zero = np.zeros((), x.dtype.as_numpy_dtype)
        nz = math_ops.cast(math_ops.not_equal(x, zero), dtypes.int64)
        return math_ops.cast(math_ops.reduce_sum(nz, axis=axis, keepdims=bool(keepdims)), dtype)


def floor(x, name=None):
    """Largest integer not greater than x, element-wise (as FloorDiv by 1)."""
    with name_scope(name, "Floor"):
        x = convert_to_tensor(x)
        return math_ops.floordiv(x, np.ones((), x.dtype.as_numpy_dtype))


def ceil(x, name=None):
    with name_scope(name, "Ceil"):
        x = convert_to_tensor(x)
        return -math_ops.floordiv(-x, np.ones((), x.dtype.as_numpy_dtype))


def round(x, name=None):
    """Rounds half to even, as TF (``round(0.5) == 0``, ``round(1.5) == 2``)."""
    with name_scope(name, "Round"):
        x = convert_to_tensor(x)
        if x.dtype.is_integer:
            return array_ops.identity(x)
        f = floor(x)
        diff = x - f
        half = np.asarray(0.5, x.dtype.as_numpy_dtype)
        two = np.asarray(2.0, x.dtype.as_numpy_dtype)
        f_is_odd = math_ops.not_equal(math_ops.floormod(f, two), np.zeros((), x.dtype.as_numpy_dtype))
        up = math_ops.logical_or(math_ops.greater(diff, half),
                                 math_ops.logical_and(math_ops.equal(diff, half), f_is_odd))
        return math_ops.where(up, f + 1.0, f)


def softplus(features, name=None):
    """``log(1 + exp(x))``, computed stably as ``max(x, 0) + log1p(exp(-|x|))``."""
    with name_scope(name, "Softplus"):
        x = convert_to_tensor(features)
        return math_ops.maximum(x, 0.0) + math_ops.log1p(math_ops.exp(-math_ops.abs(x)))


def log_sigmoid(x, name=None):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    with name_scope(name, "LogSigmoid"):
        return -softplus(-convert_to_tensor(x))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """``x / sqrt(max(sum(x**2, axis), epsilon))``."""
    with name_scope(name, "l2_normalize"):
        x = convert_to_tensor(x)
        sq = math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
        return x * math_ops.rsqrt(math_ops.maximum(sq, epsilon))


def divide_no_nan(x, y, name=None):
    """``x / y``, 0 where ``y == 0``."""
    with name_scope(name, "div_no_nan"):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype)
        zero = np.zeros((), y.dtype.as_numpy_dtype)
        is_zero = math_ops.equal(y, zero)
        safe = math_ops.where(is_zero, array_ops.ones_like(y), y)
        return math_ops.where(is_zero, array_ops.zeros_like(x * safe), math_ops.divide(x, safe))


def xlogy(x, y, name=None):
    """``x * log(y)``, 0 where ``x == 0``."""
    with name_scope(name, "xlogy"):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=x.dtype)
        zero = np.zeros((), x.dtype.as_numpy_dtype)
        safe_y = math_ops.where(math_ops.equal(x, zero), array_ops.ones_like(y), y)
        return x * math_ops.log(safe_y)


def in_top_k(targets, predictions, k, name=None):
    """TF2 argument order: whether ``targets[i]`` is among the ``k`` largest of ``predictions[i]``."""
    from .ops.nn_impl import in_top_k as in_top_k_v1
    return in_top_k_v1(predictions, targets, k, name=name)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (float)."""
    if axis != 0:
        raise NotImplementedError("linspace(axis != 0) is not implemented in aicslib.")
    with name_scope(name, "LinSpace"):
        start = convert_to_tensor(start)
        if not start.dtype.is_floating:
            start = math_ops.cast(start, dtypes.float32)
        stop = convert_to_tensor(stop, dtype=start.dtype) if hasattr(stop, "dtype") else \
            convert_to_tensor(np.asarray(stop, start.dtype.as_numpy_dtype))
        num = convert_to_tensor(num)
        if not num.dtype.is_integer:   # TF's check: range(0, 2.5) would give 3 values
            shown = num.numpy() if hasattr(num, "numpy") else num.name
            raise TypeError(f"Argument `tensor` (name: num) must be of type integer. Received "
                            f"`tensor` = {shown} of dtype: {num.dtype.name}")
        n = math_ops.cast(num, start.dtype)
        step = (stop - start) / math_ops.maximum(n - 1.0, 1.0)
        idx = math_ops.cast(array_ops.range(0, num), start.dtype)
        if start.shape.rank:
            idx = array_ops.reshape(idx, [-1] + [1] * start.shape.rank)
        return start + idx * step


