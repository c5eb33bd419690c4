"""Reductions and arg-reductions (TF's core/kernels/reduction_ops_*.cc, argmax_op.cc).

Sum and Mean of half types (bfloat16, float16) accumulate in float32 and round once at
the end, as TF's kernels do for bfloat16: its reduction functor reduces bfloat16 through a
float32 intermediate (measured on TF 2.21's CPU kernels: bit-identical to cast to float32,
reduce, cast back, for sums and means over all axes and along each axis of a matrix).
Summing in the half type itself loses every addend smaller than half an ulp of the running
total: with bfloat16's 8-bit significand a running sum stops growing at 256 when adding
values around 1 (NumPy's own bfloat16 sum of 100000 uniform [0, 1) values gives 256; the
true sum is about 50000). TF's CPU float16 path is the exception we do not copy: Eigen sums
it in half precision, and the mean of 100000 float16 values comes out 0 (apparently the
count is converted to float16, where 100000 overflows to inf). We give float16 the same
float32 accumulation as bfloat16.
"""
import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from ..framework.cwise_table import NUM

_HALF_TYPES = ("bfloat16", "float16")


_accumulators = {}


def _accumulator(dtype):
    """float32 for the half types (accumulate there, round once), else the type itself."""
    acc = _accumulators.get(dtype)
    if acc is None:     # NumPy's dtype.name is computed in Python on every read: once per dtype
        acc = _accumulators[dtype] = np.dtype(np.float32) if np.dtype(dtype).name in _HALF_TYPES else dtype
    return acc


def _axes(x, reduction_indices, op):
    # Python ints (tolist) for the checks: comparisons of NumPy scalars cost a few times more,
    # and a training step runs several reductions (bias gradients, the loss's mean).
    axes = np.asarray(reduction_indices).reshape(-1).tolist()
    rank = x.ndim
    checked = []
    for a in axes:
        if not -rank <= a < (rank if rank else 1):
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension ({a} for input with "
                                       f"{rank} dimension(s)) in {op}")
        if rank:
            checked.append(a % rank)
    return tuple(checked)


@register_kernel("Sum", type_constraint={"T": NUM})
def _sum(input, reduction_indices, keep_dims=False):
    # np.add.reduce is what np.sum calls, without np.sum's Python dispatch layers
    total = np.add.reduce(input, axis=_axes(input, reduction_indices, "Sum"), keepdims=keep_dims,
                          dtype=_accumulator(input.dtype))
    return np.asarray(total).astype(input.dtype, copy=False)


@register_kernel("Mean", type_constraint={"T": NUM})
def _mean(input, reduction_indices, keep_dims=False):
    axes = _axes(input, reduction_indices, "Mean")
    if input.dtype.kind in "iu":  # TF's integer mean truncates
        n = int(np.prod([input.shape[a] for a in axes])) if axes else 1
        return (np.sum(input, axis=axes, keepdims=keep_dims, dtype=np.int64) // max(n, 1)).astype(input.dtype)
    count = 1
    for a in axes:
        count *= input.shape[a]
    if count == 0:      # NumPy's mean of nothing: NaN, with its "Mean of empty slice" warning
        mean = np.mean(input, axis=axes, keepdims=keep_dims, dtype=_accumulator(input.dtype))
        return np.asarray(mean).astype(input.dtype, copy=False)
    # np.mean's own steps (_methods._mean: the sum, then one division by the count in the
    # accumulator's type), without its Python layers: the same bits
    total = np.add.reduce(input, axis=axes, keepdims=keep_dims, dtype=_accumulator(input.dtype))
    if isinstance(total, np.ndarray):
        mean = np.true_divide(total, count, out=total, casting="unsafe")
    else:
        mean = total.dtype.type(total / count)
    return np.asarray(mean).astype(input.dtype, copy=False)


@register_kernel("Max", type_constraint={"T": NUM})
def _max(input, reduction_indices, keep_dims=False):
    axes = _axes(input, reduction_indices, "Max")
    if input.size == 0:
        return np.full(_reduced_shape(input, axes, keep_dims), -np.inf if input.dtype.kind == "f"
                       else np.iinfo(input.dtype).min, input.dtype)
    return np.max(input, axis=axes, keepdims=keep_dims)


@register_kernel("Min", type_constraint={"T": NUM})
def _min(input, reduction_indices, keep_dims=False):
    axes = _axes(input, reduction_indices, "Min")
    if input.size == 0:
        return np.full(_reduced_shape(input, axes, keep_dims), np.inf if input.dtype.kind == "f"
                       else np.iinfo(input.dtype).max, input.dtype)
    return np.min(input, axis=axes, keepdims=keep_dims)


@register_kernel("Prod", type_constraint={"T": NUM})
def _prod(input, reduction_indices, keep_dims=False):
    return np.prod(input, axis=_axes(input, reduction_indices, "Prod"), keepdims=keep_dims, dtype=input.dtype)


def _reduced_shape(x, axes, keep):
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep else \
        tuple(d for i, d in enumerate(x.shape) if i not in axes)


@register_kernel("ArgMax", type_constraint={"T": NUM})
def _argmax(input, dimension, output_type):
    axis = int(dimension)
    if not -input.ndim <= axis < input.ndim:
        raise InvalidArgumentError(None, None, f"Expected dimension in the range [{-input.ndim}, "
                                   f"{input.ndim}), but got {axis}")
    if input.shape[axis] == 0:
        raise InvalidArgumentError(None, None, "Reduction axis is empty in ArgMax")
    return np.argmax(input, axis=axis).astype(output_type.as_numpy_dtype)


@register_kernel("ArgMin", type_constraint={"T": NUM})
def _argmin(input, dimension, output_type):
    axis = int(dimension)
    if not -input.ndim <= axis < input.ndim:
        raise InvalidArgumentError(None, None, f"Expected dimension in the range [{-input.ndim}, "
                                   f"{input.ndim}), but got {axis}")
    if input.shape[axis] == 0:
        raise InvalidArgumentError(None, None, "Reduction axis is empty in ArgMin")
    return np.argmin(input, axis=axis).astype(output_type.as_numpy_dtype)
