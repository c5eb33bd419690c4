"""Neural-network functions composed of other ops (TF's python/ops/nn_impl.py and the
LRN of AlexNet-era code), so their gradients come from the ops they are built of.

- ``local_response_normalization(x, depth_radius=5, bias=1, alpha=1, beta=0.5)``:
  ``x / (bias + alpha * sum_{c' in [c-r, c+r]} x[..., c']**2) ** beta`` over the
  last (channel) axis, as ``tf.nn.lrn``.
- ``l2_normalize``, ``in_top_k`` (TF1 argument order: predictions first), ``top_k``.
"""
import numpy as np

from ..framework import dtypes
from ..framework.ops import convert_to_tensor, name_scope
from ..framework.tensor_shape import dimension_value
from . import array_ops, math_ops


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                                 name=None):
    with name_scope(name, "LRN"):
        x = convert_to_tensor(input)
        if x.shape.rank != 4:
            raise ValueError(f"LRN: input must be 4-dimensional (NHWC), got shape {x.shape}")
        c = dimension_value(x.shape[-1])
        if c is None:
            raise ValueError("LRN: the channel dimension must be known.")
        r = int(depth_radius)
        sq = math_ops.square(x)
        padded = array_ops.pad(sq, [[0, 0], [0, 0], [0, 0], [r, r]])
        window = math_ops.add_n([padded[:, :, :, k:k + c] for k in range(2 * r + 1)])
        scale = np.asarray(bias, x.dtype.as_numpy_dtype) + np.asarray(alpha, x.dtype.as_numpy_dtype) * window
        return x * math_ops.pow(scale, np.asarray(-beta, x.dtype.as_numpy_dtype))


lrn = local_response_normalization


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x**2, axis), epsilon))`` (``dim`` is TF1's name for ``axis``)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'dim' and 'axis'")
        axis = dim
    with name_scope(name, "l2_normalize"):
        x = convert_to_tensor(x)
        sq = math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
        return x * math_ops.rsqrt(math_ops.maximum(sq, epsilon))


def in_top_k(predictions, targets, k, name=None):
    """TF1 ``tf.nn.in_top_k``: whether ``targets[i]`` is among the ``k`` largest of ``predictions[i]``
    (ties counted as TF's kernel does: a target is in the top k when fewer than k scores beat it)."""
    with name_scope(name, "in_top_k"):
        p = convert_to_tensor(predictions)
        t = math_ops.cast(targets, dtypes.int32)
        depth = dimension_value(p.shape[-1]) if p.shape.rank else None
        depth = array_ops.shape(p)[-1] if depth is None else depth
        target_score = math_ops.reduce_sum(p * array_ops.one_hot(t, depth, dtype=p.dtype), axis=1)
        higher = math_ops.reduce_sum(math_ops.cast(
            math_ops.greater(p, array_ops.expand_dims(target_score, 1)), dtypes.int32), axis=1)
        return math_ops.less(higher, k)
