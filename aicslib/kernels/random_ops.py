"""Random CPU kernels (TF's core/kernels/random_op.cc): TF's own generator and distributions.

Each kernel keeps one Philox stream per (node, seeds, dtype) for the session (eagerly:
for the process, as TF2's kernel cache), so a seeded program draws the same numbers as
on TensorFlow, run after run (kernels/philox_random.py).
"""
import numpy as np

from ..framework.allocator import check_allocation
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from . import philox_random


def _shape(shape, op):
    s = np.asarray(shape).reshape(-1)
    if np.any(s < 0):
        raise InvalidArgumentError(None, None, f"{op}: shape must be non-negative, got {s.tolist()}")
    shape = tuple(int(d) for d in s)
    check_allocation(shape, np.float32)
    return shape


def _stream(ctx, seed, seed2, dtype):
    key = ("rng", ctx.node_name, "philox", int(seed), int(seed2), dtype.name)
    stream = ctx.resources.get(key)
    if stream is None:
        stream = ctx.resources[key] = philox_random.PhiloxStream(seed, seed2)
    return stream


def _draw(ctx, op, draw, shape, seed, seed2, dtype):
    shape = _shape(shape, op)
    n = int(np.prod(shape, dtype=np.int64))
    out = draw(_stream(ctx, seed, seed2, dtype), n, dtype.as_numpy_dtype)
    return out.reshape(shape)


@register_kernel("RandomStandardNormal")
def _normal(ctx, shape, seed, seed2, dtype):
    return _draw(ctx, "RandomStandardNormal", philox_random.normal, shape, seed, seed2, dtype)


@register_kernel("RandomUniform")
def _uniform(ctx, shape, seed, seed2, dtype):
    return _draw(ctx, "RandomUniform", philox_random.uniform, shape, seed, seed2, dtype)


@register_kernel("TruncatedNormal")
def _truncated_normal(ctx, shape, seed, seed2, dtype):
    return _draw(ctx, "TruncatedNormal", philox_random.truncated_normal, shape, seed, seed2, dtype)


@register_kernel("RandomUniformInt")
def _uniform_int(ctx, shape, minval, maxval, seed, seed2, Tout):
    if not minval < maxval:
        raise InvalidArgumentError(None, None, f"Need minval < maxval: {minval} >= {maxval}")
    shape = _shape(shape, "RandomUniformInt")
    n = int(np.prod(shape, dtype=np.int64))
    out = philox_random.uniform_int(_stream(ctx, seed, seed2, Tout), n, minval, maxval, Tout.as_numpy_dtype)
    return out.reshape(shape)


@register_kernel("RandomShuffle")
def _shuffle(ctx, value, seed, seed2):
    if value.ndim == 0:
        return value
    stream = _stream(ctx, seed, seed2, _ShuffleKey)
    return value[philox_random.shuffle_permutation(stream, value.shape[0])]


class _ShuffleKey:
    name = "shuffle"  # RandomShuffle's stream does not depend on the element dtype
