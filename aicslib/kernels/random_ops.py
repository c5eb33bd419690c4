"""Random CPU kernels (TF's core/kernels/random_op.cc): one NumPy Generator per node and seed pair."""
import numpy as np

from ..framework.allocator import check_allocation
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel


def _shape(shape, op):
    s = np.asarray(shape).reshape(-1)
    if np.any(s < 0):
        raise InvalidArgumentError(None, None, f"{op}: shape must be non-negative, got {s.tolist()}")
    shape = tuple(int(d) for d in s)
    check_allocation(shape, np.float32)
    return shape


@register_kernel("RandomStandardNormal")
def _normal(ctx, shape, seed, seed2, dtype):
    g = ctx.random_generator(seed, seed2)
    values = g.standard_normal(_shape(shape, "RandomStandardNormal"), dtype=np.float32)
    return values.astype(dtype.as_numpy_dtype, copy=False)


@register_kernel("RandomUniform")
def _uniform(ctx, shape, seed, seed2, dtype):
    g = ctx.random_generator(seed, seed2)
    return g.random(_shape(shape, "RandomUniform"), dtype=np.float32).astype(dtype.as_numpy_dtype, copy=False)


@register_kernel("TruncatedNormal")
def _truncated_normal(ctx, shape, seed, seed2, dtype):
    g = ctx.random_generator(seed, seed2)
    shape = _shape(shape, "TruncatedNormal")
    out = g.standard_normal(shape, dtype=np.float32)
    bad = np.abs(out) > 2
    while bad.any():  # re-draw outside two standard deviations, as TF does
        out[bad] = g.standard_normal(int(bad.sum()), dtype=np.float32)
        bad = np.abs(out) > 2
    return out.astype(dtype.as_numpy_dtype, copy=False)


@register_kernel("RandomUniformInt")
def _uniform_int(ctx, shape, minval, maxval, seed, seed2, Tout):
    if not minval < maxval:
        raise InvalidArgumentError(None, None, f"Need minval < maxval: {minval} >= {maxval}")
    g = ctx.random_generator(seed, seed2)
    return g.integers(minval, maxval, size=_shape(shape, "RandomUniformInt"), dtype=Tout.as_numpy_dtype)


@register_kernel("RandomShuffle")
def _shuffle(ctx, value, seed, seed2):
    g = ctx.random_generator(seed, seed2)
    if value.ndim == 0:
        return value
    return value[g.permutation(value.shape[0])]
