"""Gradients of the NN ops (TF's python/ops/nn_grad.py), written with ops.

Conv2D's gradient is the pair of ops Conv2DBackpropInput / Conv2DBackpropFilter,
and each of those has the other two convolutions as its gradient, exactly as
in TensorFlow, so second derivatives work too.
"""
import numpy as np

from ..framework import dtypes
from ..framework.gradient_registry import RegisterGradient
from ..framework.execute import apply_op
from . import array_ops, math_ops
from . import batch_norm_ops, nn_ops
from .math_grad import static_value


def _attrs(op, names):
    return {n: op.get_attr(n) for n in names}


_CONV = ("strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")
_POOL = ("ksize", "strides", "padding", "data_format")
_POOL_ARGMAX = ("ksize", "strides", "padding", "include_batch_in_index")


def _shape(t):
    """The shape of t as an int32 vector: a constant when static, else a Shape op."""
    s = t.shape
    if s.is_fully_defined():
        return np.asarray(s.as_list(), np.int32)
    return array_ops.shape(t, out_type=dtypes.int32)


# --- convolutions ------------------------------------------------------------

@RegisterGradient("Conv2D")
def _conv2d_grad(op, grad):
    x, f = op.inputs
    a = _attrs(op, _CONV)
    # Eagerly the tape says which inputs need no gradient (TF's skip_input_indices): the
    # images into the first layer, typically, whose backprop would cost a full convolution.
    skip = getattr(op, "skip_input_indices", None) or ()
    return [None if 0 in skip else apply_op("Conv2DBackpropInput", [_shape(x), f, grad], a),
            None if 1 in skip else apply_op("Conv2DBackpropFilter", [x, _shape(f), grad], a)]


@RegisterGradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    a = _attrs(op, _CONV)
    return [None,
            apply_op("Conv2DBackpropFilter", [grad, _shape(f), dy], a),
            apply_op("Conv2D", [grad, f], a)]


@RegisterGradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    a = _attrs(op, _CONV)
    return [apply_op("Conv2DBackpropInput", [_shape(x), grad, dy], a),
            None,
            apply_op("Conv2D", [x, grad], a)]


@RegisterGradient("DepthwiseConv2dNative")
def _depthwise_grad(op, grad):
    x, f = op.inputs
    a = _attrs(op, _CONV)
    return [apply_op("DepthwiseConv2dNativeBackpropInput", [_shape(x), f, grad], a),
            apply_op("DepthwiseConv2dNativeBackpropFilter", [x, _shape(f), grad], a)]


@RegisterGradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    a = _attrs(op, _CONV)
    return [None,
            apply_op("DepthwiseConv2dNativeBackpropFilter", [grad, _shape(f), dy], a),
            apply_op("DepthwiseConv2dNative", [grad, f], a)]


@RegisterGradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    a = _attrs(op, _CONV)
    return [apply_op("DepthwiseConv2dNativeBackpropInput", [_shape(x), grad, dy], a),
            None,
            apply_op("DepthwiseConv2dNative", [x, grad], a)]


# --- BiasAdd -------------------------------------------------------------------

@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    return [grad, apply_op("BiasAddGrad", [grad], {"data_format": op.get_attr("data_format")})]


@RegisterGradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    dy = op.inputs[0]
    rank = dy.shape.rank
    if op.get_attr("data_format") == "NCHW" and rank is not None and rank >= 3:
        b = array_ops.reshape(grad, [1, -1] + [1] * (rank - 2))
    else:
        b = array_ops.reshape(grad, [1] * (rank - 1) + [-1])
    s = dy.shape.as_list() if dy.shape.is_fully_defined() else array_ops.shape(dy)
    return array_ops.broadcast_to(b, s)


# --- activations -------------------------------------------------------------------

@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return apply_op("ReluGrad", [grad, op.outputs[0]])


@RegisterGradient("ReluGrad")
def _relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("ReluGrad", [grad, x]), array_ops.zeros_like(x)]


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    return apply_op("Relu6Grad", [grad, op.inputs[0]])


@RegisterGradient("Relu6Grad")
def _relu6_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("Relu6Grad", [grad, x]), array_ops.zeros_like(x)]


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    return apply_op("EluGrad", [grad, op.outputs[0]])


@RegisterGradient("EluGrad")
def _elu_grad_grad(op, grad):
    g, y = op.inputs
    zeros = array_ops.zeros_like(y)
    return [apply_op("EluGrad", [grad, y]), math_ops.where(math_ops.less(y, zeros), grad * g, zeros)]


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return apply_op("LeakyReluGrad", [grad, op.inputs[0]], {"alpha": op.get_attr("alpha")})


@RegisterGradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    x = op.inputs[1]
    return [apply_op("LeakyReluGrad", [grad, x], {"alpha": op.get_attr("alpha")}), array_ops.zeros_like(x)]


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(y)


# --- losses --------------------------------------------------------------------------

@RegisterGradient("L2Loss")
def _l2_loss_grad(op, grad):
    return op.inputs[0] * grad


def _is_zero(t):
    """True for a gradient known to be zero: None, a zero constant, or the ZerosLike the
    framework fills in for an output nothing differentiated (so its term is skipped)."""
    if t is None or getattr(getattr(t, "op", None), "type", None) == "ZerosLike":
        return True
    v = static_value(t)
    return v is not None and not np.any(v)


def _xent_second_order(logits, grad_grad):
    """The term of the logits gradient that flows through the op's second output (backprop)."""
    softmax = nn_ops.softmax(logits)
    inner = math_ops.reduce_sum(grad_grad * softmax, -1, keepdims=True)
    return (grad_grad - inner) * softmax


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_grad=None):
    logits = op.inputs[0]
    g = array_ops.expand_dims(grad_loss, -1) if grad_loss is not None else None
    grad = g * op.outputs[1] if g is not None else None
    if not _is_zero(grad_grad):
        extra = _xent_second_order(logits, grad_grad)
        grad = extra if grad is None else grad + extra
    glabels = g * -nn_ops.log_softmax(logits) if g is not None else None
    return [grad, glabels]


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_grad=None):
    logits = op.inputs[0]
    grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1] if grad_loss is not None else None
    if not _is_zero(grad_grad):
        extra = _xent_second_order(logits, grad_grad)
        grad = extra if grad is None else grad + extra
    return [grad, None]


# --- pooling ---------------------------------------------------------------------

@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    return apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _attrs(op, _POOL))


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGradGrad", [x, y, grad], _attrs(op, _POOL))]


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGrad", [x, y, grad], _attrs(op, _POOL))]


@RegisterGradient("AvgPool")
def _avg_pool_grad(op, grad):
    return apply_op("AvgPoolGrad", [_shape(op.inputs[0]), grad], _attrs(op, _POOL))


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, apply_op("AvgPool", [grad], _attrs(op, _POOL))]


@RegisterGradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, unused_argmax_grad=None):
    a = _attrs(op, _POOL_ARGMAX)
    return apply_op("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]], a)


@RegisterGradient("MaxPoolGradWithArgmax")
def _max_pool_grad_with_argmax_grad(op, grad):
    x, _, argmax = op.inputs
    a = _attrs(op, _POOL_ARGMAX)
    return [array_ops.zeros_like(x), apply_op("MaxPoolGradGradWithArgmax", [x, grad, argmax], a), None]


@RegisterGradient("MaxPoolGradGradWithArgmax")
def _max_pool_grad_grad_with_argmax_grad(op, grad):
    x, _, argmax = op.inputs
    a = _attrs(op, _POOL_ARGMAX)
    return [array_ops.zeros_like(x), apply_op("MaxPoolGradWithArgmax", [x, grad, argmax], a), None]


# --- batch normalization -----------------------------------------------------

@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_v3_grad(op, grad_y, *unused_statistics_grads):
    # As TF's _BaseFusedBatchNormGrad: training mode hands the kernel the batch statistics the
    # forward saved (outputs 3, 4), inference mode the population ones it was given (inputs 3, 4).
    # No gradient flows to mean/variance or from the batch_mean/batch_variance outputs.
    x, scale = op.inputs[0], op.inputs[1]
    a = _attrs(op, ("epsilon", "data_format", "is_training"))
    stats = (op.outputs[3], op.outputs[4]) if a["is_training"] else (op.inputs[3], op.inputs[4])
    dx, dscale, doffset, _, _ = apply_op("FusedBatchNormGradV3", [grad_y, x, scale, *stats, op.outputs[5]], a)
    return [dx, dscale, doffset, None, None]


# ---------------------------------------------------------------------------
# Numerical-check recipes (see math_grad.GRADIENT_CHECK_RECIPES):
# op type -> () -> (fn, [float64 inputs][, tolerance, delta]).

def _any(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _distinct(*shape, seed=0):
    """Values at least 0.05 apart, so that no max-pool window has a tie (or a near tie)."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n) * 0.05 - n * 0.025
    return v.reshape(shape)


def _pooled(x, k, s, padding):
    """The forward MaxPool output, an input of the pool-gradient ops checked below."""
    return nn_ops.max_pool(x, k, s, padding)


def _argmax(x, k, s, padding):
    """The forward MaxPoolWithArgmax indices (int64), likewise."""
    return nn_ops.max_pool_with_argmax(x, k, s, padding)[1]


_X = _any(2, 5, 6, 3)
_F = _any(3, 3, 3, 2, seed=1)
_CONV_KW = dict(strides=[1, 2, 1, 1], padding="SAME")
_DY = _any(2, 3, 6, 2, seed=2)           # output shape of conv2d(_X, _F, **_CONV_KW)
_DW = _any(3, 2, 3, 2, seed=3)           # depthwise filter, multiplier 2
_DDY = _any(2, 3, 6, 6, seed=4)          # output shape of depthwise_conv2d(_X, _DW, **_CONV_KW)
_P = _distinct(2, 5, 5, 2, seed=5)       # max-pool input without ties


def _xent_labels():
    p = np.random.default_rng(7).uniform(0.1, 1.0, (3, 4))
    return p / p.sum(axis=1, keepdims=True)


GRADIENT_CHECK_RECIPES = {
    "FusedBatchNormV3": lambda: (lambda x, s, o: batch_norm_ops.fused_batch_norm(
        x, s, o, epsilon=0.01, is_training=True)[0] * _any(2, 3, 2, 3, seed=9),
        [_any(2, 3, 2, 3), _any(3, seed=1), _any(3, seed=2)]),
    "Conv2D": lambda: (lambda x, f: nn_ops.conv2d(x, f, [1, 2, 1, 1], "SAME", dilations=[1, 1, 2, 1]),
                       [_X, _F]),
    "Conv2DBackpropInput": lambda: (lambda f, dy: nn_ops.conv2d_backprop_input(
        [2, 5, 6, 3], f, dy, **_CONV_KW), [_F, _DY]),
    "Conv2DBackpropFilter": lambda: (lambda x, dy: nn_ops.conv2d_backprop_filter(
        x, [3, 3, 3, 2], dy, **_CONV_KW), [_X, _DY]),
    "DepthwiseConv2dNative": lambda: (lambda x, f: nn_ops.depthwise_conv2d(x, f, [1, 2, 1, 1], "SAME"),
                                      [_X, _DW]),
    "DepthwiseConv2dNativeBackpropInput": lambda: (lambda f, dy: nn_ops.depthwise_conv2d_native_backprop_input(
        [2, 5, 6, 3], f, dy, **_CONV_KW), [_DW, _DDY]),
    "DepthwiseConv2dNativeBackpropFilter": lambda: (lambda x, dy: nn_ops.depthwise_conv2d_native_backprop_filter(
        x, [3, 2, 3, 2], dy, **_CONV_KW), [_X, _DDY]),
    "BiasAdd": lambda: (lambda x, b: nn_ops.bias_add(x, b, data_format="NCHW"), [_any(2, 3, 2, 2), _any(3, seed=1)]),
    "BiasAddGrad": lambda: (lambda g: apply_op("BiasAddGrad", [g], {"data_format": "NHWC"}), [_any(2, 2, 3)]),
    "Relu": lambda: (nn_ops.relu, [_any(3, 4)]),
    "ReluGrad": lambda: (lambda g: apply_op("ReluGrad", [g, _any(3, 4, seed=1)]), [_any(3, 4)]),
    "Relu6": lambda: (nn_ops.relu6, [_any(3, 4) * 4]),
    "Relu6Grad": lambda: (lambda g: apply_op("Relu6Grad", [g, _any(3, 4, seed=1) * 4]), [_any(3, 4)]),
    "Elu": lambda: (nn_ops.elu, [_any(3, 4)]),
    "EluGrad": lambda: (lambda g, y: apply_op("EluGrad", [g, y]),
                        [_any(3, 4), np.abs(_any(3, 4, seed=1)) * [[-0.5], [1], [-0.9]]]),
    "LeakyRelu": lambda: (lambda x: nn_ops.leaky_relu(x, 0.3), [_any(3, 4)]),
    "LeakyReluGrad": lambda: (lambda g: apply_op("LeakyReluGrad", [g, _any(3, 4, seed=1)], {"alpha": 0.3}),
                              [_any(3, 4)]),
    "Softmax": lambda: (lambda x: nn_ops.softmax(x) * np.arange(1.0, 5.0), [_any(3, 4)]),
    "LogSoftmax": lambda: (lambda x: nn_ops.log_softmax(x) * np.arange(1.0, 5.0), [_any(3, 4)]),
    "L2Loss": lambda: (nn_ops.l2_loss, [_any(3, 4)]),
    "SoftmaxCrossEntropyWithLogits": lambda: (
        lambda x, z: nn_ops.softmax_cross_entropy_with_logits(z, x), [_any(3, 4), _xent_labels()]),
    "SparseSoftmaxCrossEntropyWithLogits": lambda: (
        lambda x: nn_ops.sparse_softmax_cross_entropy_with_logits(np.array([0, 3, 1]), x), [_any(3, 4)]),
    "MaxPool": lambda: (lambda x: nn_ops.max_pool(x, 3, 2, "SAME"), [_P]),
    "MaxPoolGrad": lambda: (lambda g: apply_op("MaxPoolGrad", [_P, _pooled(_P, 3, 2, "SAME"), g],
                                               {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}),
                            [_any(2, 3, 3, 2)]),
    "MaxPoolGradGrad": lambda: (lambda g: apply_op("MaxPoolGradGrad", [_P, _pooled(_P, 3, 2, "SAME"), g],
                                                   {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1],
                                                    "padding": "SAME"}), [_any(2, 5, 5, 2)]),
    "AvgPool": lambda: (lambda x: nn_ops.avg_pool(x, [2, 3], [2, 1], "SAME"), [_any(2, 5, 5, 2)]),
    "AvgPoolGrad": lambda: (lambda g: apply_op("AvgPoolGrad", [np.array([2, 5, 5, 2], np.int32), g],
                                               {"ksize": [1, 2, 3, 1], "strides": [1, 2, 1, 1], "padding": "SAME"}),
                            [_any(2, 3, 5, 2)]),
    "MaxPoolWithArgmax": lambda: (lambda x: nn_ops.max_pool_with_argmax(x, 3, 2, "SAME")[0], [_P]),
    "MaxPoolGradWithArgmax": lambda: (lambda g: apply_op(
        "MaxPoolGradWithArgmax", [_P, g, _argmax(_P, 3, 2, "SAME")],
        {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}), [_any(2, 3, 3, 2)]),
    "MaxPoolGradGradWithArgmax": lambda: (lambda g: apply_op(
        "MaxPoolGradGradWithArgmax", [_P, g, _argmax(_P, 3, 2, "SAME")],
        {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}), [_any(2, 5, 5, 2)]),
}
