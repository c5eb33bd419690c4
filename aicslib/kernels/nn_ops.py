"""CPU kernels of the NN ops (TF's core/kernels/relu_op.cc, softmax_op.cc, xent_op.cc,
bias_op.cc, l2loss_op.cc): activations, softmax, cross entropy, BiasAdd, L2Loss.

Convolution kernels are in ``conv_ops.py``, ``conv_grad_*_ops.py`` and
``depthwise_conv_op.py``; pooling kernels in ``pooling_ops.py``.
Every kernel returns an array of its input's dtype.
"""
import numpy as np

from ..framework.allocator import forwarded
from ..framework.dtypes import bfloat16, float16, float32, float64, int32, int64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel

FLOAT = {"T": [float16, bfloat16, float32, float64]}


def _like(result, x):
    return result if result.dtype == x.dtype else result.astype(x.dtype)


# --- activations (Relu and Relu6: rows of framework/cwise_table.py, fusable) ---------------

@register_kernel("ReluGrad", type_constraint=FLOAT, forward_inputs=(0,))
def _relu_grad(gradients, features, out=None):
    if gradients.shape != features.shape:  # TF's ValidateSameSize (relu_op.h)
        raise InvalidArgumentError(None, None, f"g and a must be the same size: {list(gradients.shape)} vs "
                                               f"{list(features.shape)}")
    # TF's formula, gradients * (features > 0): one multiply, faster than np.where
    # (benchmarks/README.md, "Reference kernels"); into the incoming gradient's buffer when the
    # executor forwards it.
    out = forwarded(out, gradients.shape, gradients.dtype)
    return np.multiply(gradients, features > 0, dtype=gradients.dtype, out=out)


@register_kernel("Relu6Grad", type_constraint=FLOAT)
def _relu6_grad(gradients, features):
    return np.where((features > 0) & (features < 6), gradients, gradients.dtype.type(0))


@register_kernel("Elu", type_constraint=FLOAT)
def _elu(features):
    return np.where(features > 0, features, np.expm1(np.minimum(features, 0)))


@register_kernel("EluGrad", type_constraint=FLOAT)
def _elu_grad(gradients, outputs):
    return np.where(outputs > 0, gradients, gradients * (outputs + 1))


@register_kernel("LeakyRelu", type_constraint=FLOAT)
def _leaky_relu(features, alpha):
    return np.where(features > 0, features, features * features.dtype.type(alpha))


@register_kernel("LeakyReluGrad", type_constraint=FLOAT)
def _leaky_relu_grad(gradients, features, alpha):
    return np.where(features > 0, gradients, gradients * gradients.dtype.type(alpha))


# --- softmax -----------------------------------------------------------------

# A row holding +inf or NaN gives NaN where inf - inf or NaN appears. How far that NaN spreads
# depends on TF's kernel:
# - TF's reference (Eigen) kernel, softmax_op_functor.h: exp(x - max) then times 1 / sum. The
#   NaN reaches the row's sum and so every entry: [inf, 1] -> [nan, nan]. TF runs it for float64,
#   float16 and bfloat16 eagerly, and for LogSoftmax of every dtype (oneDNN has no LogSoftmax in
#   TF), which gives [nan, nan] the same way.
# - TF's oneDNN kernel (_MklSoftmax), which TF 2.21 on x86 runs for float32 Softmax eagerly and
#   in graphs (mkl_layout_pass.cc rewrites Softmax to it): its exp clamps its argument into
#   [ln FLT_MIN, ln FLT_MAX] with min/max instructions that return the bound for a NaN, so
#   exp(NaN) is exp(ln FLT_MAX) = +inf, the row's sum is +inf, and the other entries come out
#   as 0 / inf = 0: [inf, 1] -> [nan, 0] (issue 29's TF 2.21 result). (TF's grappler folds a
#   Softmax of constants with the Eigen kernel before that rewrite; aicslib folds with this one.)
# Both silently (no RuntimeWarning).
_ONEDNN_SOFTMAX = (np.dtype(np.float32),)


def _log_softmax(x):
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = x - x.max(axis=-1, keepdims=True)      # largest logit becomes 0: exp never overflows
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _no_classes(logits):
    """True for logits with no class axis to normalize over: an empty result, as in TF
    (NumPy's max of an empty axis would raise)."""
    if logits.ndim < 1:
        raise InvalidArgumentError(None, None, "logits must have >= 1 dimension, got []")
    return logits.shape[-1] == 0


@register_kernel("Softmax", type_constraint=FLOAT)
def _softmax(logits):
    if _no_classes(logits):
        return np.empty_like(logits)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        total = e.sum(axis=-1, keepdims=True)
        if logits.dtype in _ONEDNN_SOFTMAX:
            # Only a NaN in e makes a row's sum NaN (the other entries are in [0, 1]): one check
            # on the sums, so finite rows pay nothing more. In such a row oneDNN divides by a sum
            # of +inf (above): NaN stays NaN, everything else becomes 0.
            bad = np.isnan(total)
            if bad.any():
                rows = bad[..., 0]
                e[rows] = np.where(np.isnan(e[rows]), e.dtype.type(np.nan), e.dtype.type(0))
                total[rows] = 1
        e /= total
    return _like(e, logits)


@register_kernel("LogSoftmax", type_constraint=FLOAT)
def _log_softmax_kernel(logits):
    if _no_classes(logits):
        return np.empty_like(logits)
    return _like(_log_softmax(logits), logits)


@register_kernel("SoftmaxCrossEntropyWithLogits", type_constraint=FLOAT)
def _softmax_xent(features, labels):
    """loss = -sum(labels * log_softmax(features)), backprop = softmax(features) - labels."""
    logp = _log_softmax(features)
    loss = -(labels * logp).sum(axis=-1)
    backprop = np.exp(logp) - labels
    return _like(loss, features), _like(backprop, features)


@register_kernel("SparseSoftmaxCrossEntropyWithLogits",
                 type_constraint={"T": FLOAT["T"], "Tlabels": [int32, int64]})
def _sparse_softmax_xent(features, labels):
    """TF's SparseXentEigenImpl: with z = features - max, loss = log(sum(exp z)) - z[label] and
    backprop = exp(z) / sum(exp z), minus 1 at the label (one exp per entry)."""
    n, classes = features.shape
    labels = np.asarray(labels)
    if n and (labels.min() < 0 or labels.max() >= classes):
        bad = (labels < 0) | (labels >= classes)
        raise InvalidArgumentError(None, None, f"Received a label value of {int(labels[bad][0])} which is "
                                               f"outside the valid range of [0, {classes}).")
    rows = np.arange(n)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        z = features - features.max(axis=-1, keepdims=True)
        backprop = np.exp(z)
        total = backprop.sum(axis=-1, keepdims=True)
        loss = np.log(total[:, 0]) - z[rows, labels]
        backprop /= total
    backprop[rows, labels] -= 1
    return _like(loss, features), _like(backprop, features)


# --- BiasAdd, L2Loss -----------------------------------------------------------

def _bias_shape(ndim, data_format, c):
    if data_format == "NCHW" and ndim >= 3:
        return (1, c) + (1,) * (ndim - 2)
    return (c,)


@register_kernel("BiasAdd", type_constraint=FLOAT)
def _bias_add(value, bias, data_format):
    c_axis = 1 if data_format == "NCHW" and value.ndim >= 3 else -1
    if value.shape[c_axis] != bias.shape[0]:
        raise ValueError(f"Must provide as many biases as the channel dimension of the input tensor: "
                         f"value shape {value.shape}, bias shape {bias.shape}, data_format {data_format}")
    return value + bias.reshape(_bias_shape(value.ndim, data_format, bias.shape[0]))


@register_kernel("BiasAddGrad", type_constraint=FLOAT)
def _bias_add_grad(out_backprop, data_format):
    if data_format == "NCHW" and out_backprop.ndim >= 3:
        axes = (0,) + tuple(range(2, out_backprop.ndim))
        return _like(out_backprop.sum(axis=axes), out_backprop)
    c = out_backprop.shape[-1]
    return _like(out_backprop.reshape(-1, c).sum(axis=0), out_backprop)


@register_kernel("L2Loss", type_constraint=FLOAT)
def _l2_loss(t):
    flat = t.reshape(-1)
    return _like(np.asarray(np.dot(flat, flat) / 2), t)
