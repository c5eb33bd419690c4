"""TF1 signatures of ops whose TF2 signature renamed an argument.

TF1 spelled the reduction axis ``reduction_indices`` and ``keepdims``
``keep_dims``; ``expand_dims`` took ``dim``, ``softmax`` ``dim``, ``argmax``
``dimension``. TensorFlow's ``*_v1`` functions accept both spellings and reject
both at once; these do the same and call the TF2 op, so the TF2 signatures
in ``aicslib`` stay as TF2 has them.
"""
from ... import linalg as _linalg, math as _math
from ...framework import dtypes
from ...ops import array_ops, math_ops, nn_ops


def deprecated_argument_lookup(new_name, new_value, old_name, old_value):
    """The value given under either name; both at once is an error (TF's rule and message)."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{old_name}' and '{new_name}'")
        return old_value
    return new_value


def _reduce_v1(fn):
    def reduce_v1(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                  keep_dims=None):
        axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
        keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
        return fn(input_tensor, axis=axis, keepdims=bool(keepdims), name=name)
    reduce_v1.__name__ = fn.__name__
    reduce_v1.__doc__ = (f"TF1 ``{fn.__name__}``: ``reduction_indices`` is ``axis``, ``keep_dims`` "
                         f"is ``keepdims``.\n\n{fn.__doc__ or ''}")
    return reduce_v1


reduce_sum = _reduce_v1(math_ops.reduce_sum)
reduce_mean = _reduce_v1(math_ops.reduce_mean)
reduce_max = _reduce_v1(math_ops.reduce_max)
reduce_min = _reduce_v1(math_ops.reduce_min)
reduce_prod = _reduce_v1(math_ops.reduce_prod)
reduce_all = _reduce_v1(_math.reduce_all)
reduce_any = _reduce_v1(_math.reduce_any)
reduce_logsumexp = _reduce_v1(_math.reduce_logsumexp)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):
    """TF1 ``count_nonzero``: ``input`` is the new name of ``input_tensor``, as the axis/keepdims pairs."""
    input_tensor = deprecated_argument_lookup("input", input, "input_tensor", input_tensor)
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return _math.count_nonzero(input_tensor, axis=axis, keepdims=keepdims, dtype=dtype, name=name)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """TF1 ``norm``: ``keep_dims`` is the old name of ``keepdims``."""
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return _linalg.norm(tensor, ord=ord, axis=axis, keepdims=keepdims, name=name)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    """TF1 ``argmax``: ``dimension`` is the old name of ``axis``."""
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return math_ops.argmax(input, axis=axis, output_type=output_type, name=name)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return math_ops.argmin(input, axis=axis, output_type=output_type, name=name)


def arg_max(input, dimension, name=None, output_type=dtypes.int64):
    """TF1's deprecated ``tf.arg_max(input, dimension)``: ``argmax`` along ``dimension``."""
    return math_ops.argmax(input, axis=dimension, output_type=output_type, name=name)


def arg_min(input, dimension, name=None, output_type=dtypes.int64):
    """TF1's deprecated ``tf.arg_min(input, dimension)``: ``argmin`` along ``dimension``."""
    return math_ops.argmin(input, axis=dimension, output_type=output_type, name=name)


def expand_dims(input, axis=None, name=None, dim=None):
    """TF1 ``expand_dims``: ``dim`` is the old name of ``axis``."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return array_ops.expand_dims(input, axis, name=name)


def squeeze(input, axis=None, name=None, squeeze_dims=None):
    axis = deprecated_argument_lookup("axis", axis, "squeeze_dims", squeeze_dims)
    return array_ops.squeeze(input, axis, name=name)


def softmax(logits, axis=None, name=None, dim=None):
    """TF1 ``nn.softmax``: ``dim`` is the old name of ``axis``."""
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return nn_ops.softmax(logits, axis=axis, name=name)


def log_softmax(logits, axis=None, name=None, dim=None):
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return nn_ops.log_softmax(logits, axis=axis, name=name)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1 ``nn.dropout``: the second positional argument is ``keep_prob``.

    ``dropout(x, 0.8)`` keeps 80% of the elements (scaled by 1/0.8); pass
    ``rate=0.2`` for the TF2 meaning. ``keep_prob`` may be a tensor (a
    placeholder fed 0.5 while training and 1.0 while testing).
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
    if keep_prob is None and rate is None:
        raise ValueError("dropout needs keep_prob (TF1) or rate.")
    if keep_prob is not None:
        if not hasattr(keep_prob, "dtype"):
            keep_prob = float(keep_prob)
            if not 0 < keep_prob <= 1:
                raise ValueError(f"keep_prob must be a scalar tensor or a float in the range "
                                 f"(0, 1], got {keep_prob}")
            rate = 1.0 - keep_prob
        else:
            return _dropout_keep_tensor(x, keep_prob, noise_shape, seed, name)
    return nn_ops.dropout(x, rate, noise_shape=noise_shape, seed=seed, name=name)


def _dropout_keep_tensor(x, keep_prob, noise_shape, seed, name):
    """TF1's graph: keep where ``uniform[0, 1) >= 1 - keep_prob``, scale kept ones by 1/keep_prob."""
    from ...framework.ops import convert_to_tensor, name_scope
    from ...ops import random_ops
    with name_scope(name, "dropout"):
        x = convert_to_tensor(x)
        keep = math_ops.cast(keep_prob, x.dtype)
        shape = array_ops.shape(x) if noise_shape is None else noise_shape
        rnd = random_ops.random_uniform(shape, dtype=x.dtype, seed=seed)
        mask = math_ops.cast(math_ops.greater_equal(rnd, 1.0 - keep), x.dtype)
        return math_ops.divide(x, keep) * mask


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """TF1 ``softmax_cross_entropy_with_logits``: named arguments only; no gradient flows into labels."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    axis = deprecated_argument_lookup("axis", axis, "dim", dim if dim != -1 else None)
    labels = array_ops.stop_gradient(labels)
    return nn_ops.softmax_cross_entropy_with_logits(labels, logits, axis=-1 if axis is None else axis,
                                                    name=name)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    return nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name=name)


def _to(dtype, default_name):
    def to(x, name=default_name):
        return math_ops.cast(x, dtype, name=name)
    to.__name__ = f"to_{dtype.name}"
    to.__doc__ = f"TF1's ``cast(x, {dtype.name})`` (removed in TF2)."
    return to


to_float = _to(dtypes.float32, "ToFloat")
to_double = _to(dtypes.float64, "ToDouble")
to_int32 = _to(dtypes.int32, "ToInt32")
to_int64 = _to(dtypes.int64, "ToInt64")


def div(x, y, name=None):
    """TF1 ``div``: Python 2 division, floor division for integers, true division for floats."""
    x = x if hasattr(x, "dtype") else array_ops.constant(x)
    if x.dtype.is_integer:
        return math_ops.floordiv(x, y, name=name)
    return math_ops.realdiv(x, y, name=name)
