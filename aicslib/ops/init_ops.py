"""Variable initializers (TF's python/ops/init_ops.py), TF 1.x names and defaults.

An initializer is a callable ``init(shape, dtype=None, partition_info=None)``
returning a tensor (an op in a graph, a value eagerly), used as
``aics.Variable(init([784, 300]))`` or ``Variable(lambda: init(shape))``.

| initializer | values |
|---|---|
| ``zeros_initializer()`` | 0 |
| ``ones_initializer()`` | 1 |
| ``constant_initializer(value)`` | ``value`` (scalar, or a list/array of the full shape) |
| ``random_normal_initializer(mean=0, stddev=1)`` | N(mean, stddev^2) |
| ``truncated_normal_initializer(mean=0, stddev=1)`` | N(mean, stddev^2) redrawn beyond 2 stddev |
| ``random_uniform_initializer(minval=0, maxval=None)`` | U(minval, maxval) |
| ``glorot_uniform_initializer()`` | U(-l, l), l = sqrt(6 / (fan_in + fan_out)) (default for dense weights) |
| ``glorot_normal_initializer()`` | truncated N(0, 2 / (fan_in + fan_out)) |
| ``he_normal()`` | truncated N(0, 2 / fan_in) |
| ``he_uniform()`` | U(-l, l), l = sqrt(6 / fan_in) |
| ``orthogonal_initializer(gain=1)`` | a (semi-)orthogonal matrix, from the QR decomposition of a normal matrix |

Fans follow TF: for a ``[fan_in, fan_out]`` matrix the obvious; for a conv
kernel ``[kh, kw, in, out]``: ``fan_in = kh*kw*in``, ``fan_out = kh*kw*out``.
Truncated normals are scaled by 1/0.87962566 so the variance is as stated.
"""
import math

import numpy as np

from ..framework import dtypes
from ..framework.ops import convert_to_tensor
from ..framework.tensor_shape import as_shape
from . import array_ops, random_ops

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "TruncatedNormal",
           "RandomUniform", "VarianceScaling", "Orthogonal", "zeros_initializer",
           "ones_initializer", "constant_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "random_uniform_initializer",
           "variance_scaling_initializer", "glorot_uniform_initializer",
           "glorot_normal_initializer", "he_normal", "he_uniform", "lecun_normal",
           "lecun_uniform", "orthogonal_initializer", "compute_fans"]

_TRUNC_STD = 0.87962566103423978  # std of a unit normal truncated to [-2, 2]


def _shape_list(shape):
    s = as_shape(shape)
    if not s.is_fully_defined():
        raise ValueError(f"Initializers need a fully defined shape, got {s}.")
    return s.as_list()


def compute_fans(shape):
    """(fan_in, fan_out) of a weight shape, as TF's ``_compute_fans``."""
    shape = _shape_list(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for d in shape[:-2]:
        receptive *= d
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    """Base class: ``__call__(shape, dtype=None, partition_info=None)`` returns a tensor."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    def _dtype(self, dtype):
        return dtypes.as_dtype(dtype if dtype is not None else self.dtype)

    def __repr__(self):
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({cfg})"


class Zeros(Initializer):
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(_shape_list(shape), self._dtype(dtype))


class Ones(Initializer):
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(_shape_list(shape), self._dtype(dtype))


class Constant(Initializer):
    """A scalar is broadcast; a list/array must have exactly ``prod(shape)`` elements."""

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        shape = _shape_list(shape)
        dt = self._dtype(dtype)
        value = np.asarray(self.value)
        if value.ndim == 0:
            return array_ops.fill(shape, convert_to_tensor(value.astype(dt.as_numpy_dtype)))
        verify = self.verify_shape if verify_shape is None else verify_shape
        if verify and list(value.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {value.shape}.")
        n = int(np.prod(shape))
        if value.size != n:
            raise ValueError(f"constant_initializer: {value.size} values given for shape "
                             f"{shape} ({n} elements).")
        return convert_to_tensor(value.reshape(shape).astype(dt.as_numpy_dtype), dtype=dt)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(_shape_list(shape), self.mean, self.stddev,
                                        self._dtype(dtype), seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(_shape_list(shape), self.mean, self.stddev,
                                           self._dtype(dtype), seed=self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(_shape_list(shape), self.minval, self.maxval,
                                         self._dtype(dtype), seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class VarianceScaling(Initializer):
    """Variance ``scale / n`` with n = fan_in, fan_out or their mean (``mode``);
    ``distribution`` is "truncated_normal" (default, as TF >= 1.13), "untruncated_normal"
    or "uniform"."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be a positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dt = self._dtype(dtype)
        if self.distribution == "truncated_normal":
            std = math.sqrt(scale) / _TRUNC_STD
            return random_ops.truncated_normal(shape, 0.0, std, dt, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dt, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dt, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


class Orthogonal(Initializer):
    """A matrix with orthonormal rows or columns (times ``gain``), reshaped to ``shape``.

    As TF: the Q of the QR decomposition of a normal matrix drawn with ``seed`` (so a seed
    gives TF's matrix), its columns' signs made those of R's diagonal so that the result is
    uniformly distributed over orthogonal matrices.
    """

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        from . import linalg_ops, math_ops
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        dt = self._dtype(dtype)
        flat = (cols, rows) if rows < cols else (rows, cols)
        a = random_ops.random_normal(flat, dtype=dt, seed=self.seed)
        q, r = linalg_ops.qr(a, full_matrices=False)
        k = min(rows, cols)
        diag = math_ops.reduce_sum(r * array_ops.eye(k, dtype=dt), axis=1)
        q = q * math_ops.sign(diag)
        if rows < cols:
            q = array_ops.transpose(q)
        return math_ops.multiply(array_ops.reshape(q, shape), np.asarray(self.gain, dt.as_numpy_dtype))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


# TF 1.x spellings.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
variance_scaling_initializer = VarianceScaling
orthogonal_initializer = Orthogonal


def glorot_uniform_initializer(seed=None, dtype=dtypes.float32):
    """Xavier/Glorot uniform: U(-l, l), l = sqrt(6 / (fan_in + fan_out))."""
    return VarianceScaling(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=dtypes.float32):
    return VarianceScaling(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    """He et al. 2015: truncated N(0, 2 / fan_in); for ReLU layers."""
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)
