"""``aics.nn``: neural-network ops (TF2's ``tf.nn``).

Op definitions and Python wrappers: ``aicslib/ops/nn_ops.py``; kernels:
``aicslib/kernels/conv_ops.py`` (convolution algorithms: direct, im2col + GEMM,
Winograd), ``conv_grad_input_ops.py`` / ``conv_grad_filter_ops.py`` (backprop as
GEMM + col2im), ``depthwise_conv_op.py``, ``nn_ops.py``, ``pooling_ops.py``;
gradients: ``aicslib/ops/nn_grad.py``.

The Conv2D kernel chooses its algorithm by a rule
(``aicslib.kernels.conv_ops.choose_conv2d_algorithm``); set the environment
variable ``AICS_CONV_ALGO`` to ``direct``, ``im2col`` or ``winograd`` (then
``aicslib.flags.reload()``) to force one.
"""
from .ops import nn_grad as _nn_grad  # noqa: F401  (registers the gradients)
from .ops.embedding_ops import embedding_lookup_v2 as embedding_lookup  # noqa: F401
from .ops.nn_impl import l2_normalize, local_response_normalization, lrn  # noqa: F401
from .math import in_top_k
from .ops.nn_ops import (avg_pool, avg_pool2d, batch_normalization, bias_add, conv2d,
                         conv2d_backprop_filter, conv2d_backprop_input, depthwise_conv2d,
                         depthwise_conv2d_native_backprop_filter, depthwise_conv2d_native_backprop_input,
                         dropout, elu, l2_loss, leaky_relu, log_softmax, max_pool, max_pool2d,
                         max_pool_with_argmax, moments, relu, relu6, separable_conv2d, sigmoid,
                         sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
                         softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits,
                         tanh, weighted_cross_entropy_with_logits)



def softplus(features, name=None):
    """``log(exp(x) + 1)``, written ``(x + |x|) / 2 + log1p(exp(-|x|))`` so that it neither
    overflows for large ``x`` nor loses its gradient (``sigmoid(x)``, 0.5 at 0)."""
    from .framework.ops import convert_to_tensor, name_scope
    from .ops import math_ops
    with name_scope(name, "Softplus"):
        x = convert_to_tensor(features)
        a = math_ops.abs(x)
        return math_ops.add(math_ops.multiply(math_ops.add(x, a), 0.5),
                            math_ops.log1p(math_ops.exp(math_ops.negative(a))))


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",
                     dilations=None, name=None):
    """The transpose (gradient) of ``conv2d``: ``filters`` is ``[kh, kw, out_channels, in_channels]``
    and ``output_shape`` the full NHWC shape of the result, as in TF."""
    from .ops import nn_ops
    return nn_ops.conv2d_backprop_input(output_shape, filters, input, strides, padding,
                                        data_format=data_format, dilations=dilations,
                                        name=name or "conv2d_transpose")


__all__ = [
    "softplus", "in_top_k", "conv2d_transpose",
    "avg_pool", "avg_pool2d", "batch_normalization", "bias_add", "conv2d", "conv2d_backprop_filter",
    "conv2d_backprop_input", "depthwise_conv2d", "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input", "dropout", "elu", "l2_loss", "leaky_relu", "log_softmax",
    "max_pool", "max_pool2d", "max_pool_with_argmax", "moments", "relu", "relu6", "separable_conv2d",
    "sigmoid", "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits", "tanh",
    "weighted_cross_entropy_with_logits",
]
