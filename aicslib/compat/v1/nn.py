"""``tf.compat.v1.nn``: ``aics.nn`` with TF1's signatures where they differ.

``dropout(x, keep_prob)``: the second positional argument is the probability
to *keep* (TF2: ``rate``, the probability to drop); ``softmax(logits, dim=)``;
``softmax_cross_entropy_with_logits`` takes named arguments only and sends no
gradient into the labels. Pooling takes ``value`` (TF2: ``input``), ``conv2d``
``filter`` and ``use_cudnn_on_gpu``, ``depthwise_conv2d``/``separable_conv2d``
an atrous ``rate``, ``conv2d_transpose`` ``value``/``filter``; each also accepts
the TF2 name, and both at once is an error, as in TF.
"""
from ...framework.missing_api import module_getattr
from ...nn import *  # noqa: F403
from ...nn import __all__ as _nn_all
from .signatures import (dropout, log_softmax, softmax, softmax_cross_entropy_with_logits,  # noqa: F401
                         sparse_softmax_cross_entropy_with_logits)
from ...ops.nn_ops import softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits_v2  # noqa: F401
from ...ops.embedding_ops import embedding_lookup
from ...ops.nn_impl import in_top_k, l2_normalize, local_response_normalization, lrn
from ...ops.rnn import (bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn,
                        static_rnn)
from . import rnn_cell
from .signatures import deprecated_argument_lookup


def _pool_v1(fn):
    def pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):
        value = deprecated_argument_lookup("input", input, "value", value)
        return fn(value, ksize, strides, padding, data_format=data_format, name=name)
    pool.__name__ = fn.__name__
    pool.__doc__ = f"TF1 ``{fn.__name__}``: the input is ``value`` (TF2 ``input``).\n\n{fn.__doc__}"
    return pool


def _nn_ops():
    from ...ops import nn_ops
    return nn_ops


max_pool = _pool_v1(_nn_ops().max_pool)
avg_pool = _pool_v1(_nn_ops().avg_pool)
avg_pool2d = avg_pool


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """TF1 ``conv2d``: the kernel is ``filter`` (TF2 ``filters``); ``use_cudnn_on_gpu`` is ignored
    (aicslib runs on the CPU)."""
    del use_cudnn_on_gpu
    filters = deprecated_argument_lookup("filters", filters, "filter", filter)
    return _nn_ops().conv2d(input, filters, strides, padding, data_format=data_format,
                            dilations=dilations, name=name)


def _rate_dilations(rate, dilations):
    if rate is not None and dilations is not None:
        raise ValueError("Cannot specify both 'rate' and 'dilations'")
    if rate is None:
        return dilations
    r = list(rate) if isinstance(rate, (list, tuple)) else [rate, rate]
    return [1, r[0], r[1], 1]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,
                     dilations=None):
    """TF1 ``depthwise_conv2d``: ``rate`` is the atrous (dilation) rate ``[rh, rw]``."""
    return _nn_ops().depthwise_conv2d(input, filter, strides, padding, data_format=data_format,
                                      dilations=_rate_dilations(rate, dilations), name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """TF1 ``separable_conv2d``: ``rate`` is the depthwise step's atrous rate."""
    return _nn_ops().separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                                      data_format=data_format,
                                      dilations=_rate_dilations(rate, dilations), name=name)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):
    """TF1 ``conv2d_transpose``: ``value`` and ``filter`` are TF2's ``input`` and ``filters``."""
    from ... import nn
    value = deprecated_argument_lookup("input", input, "value", value)
    filters = deprecated_argument_lookup("filters", filters, "filter", filter)
    return nn.conv2d_transpose(value, filters, output_shape, strides, padding=padding,
                               data_format=data_format, dilations=dilations, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """TF1 ``nn.moments``: ``keep_dims`` is the old name of ``keepdims``."""
    from ...ops import nn_ops
    from .signatures import deprecated_argument_lookup
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    return nn_ops.moments(x, axes, shift=shift, keepdims=bool(keepdims), name=name)


def xw_plus_b(x, weights, biases, name=None):
    """``matmul(x, weights) + biases`` (TF1's ``nn.xw_plus_b``)."""
    from ...framework.ops import name_scope
    from ...ops import math_ops, nn_ops
    with name_scope(name, "xw_plus_b"):
        return nn_ops.bias_add(math_ops.matmul(x, weights), biases)


def _from_nn(name):
    from ... import nn
    return getattr(nn, name)


__getattr__ = module_getattr(__name__, _from_nn)

__all__ = list(_nn_all) + ["max_pool", "avg_pool", "avg_pool2d", "conv2d", "depthwise_conv2d",
                           "separable_conv2d", "conv2d_transpose", "xw_plus_b", "embedding_lookup", "in_top_k",
                           "l2_normalize",
                           "local_response_normalization", "lrn", "moments", "rnn_cell", "static_rnn",
                           "dynamic_rnn", "static_bidirectional_rnn", "bidirectional_dynamic_rnn"]
