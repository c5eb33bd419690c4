"""Neural-network ops: definitions (TF's core/ops/nn_ops.cc) and Python API (python/ops/nn_ops.py, nn_impl.py).

Kernels: ``aicslib/kernels/conv_ops.py``, ``conv_grad_input_ops.py``,
``conv_grad_filter_ops.py`` (Conv2D and its backprops), ``depthwise_conv_op.py``,
``aicslib/kernels/nn_ops.py`` (activations, softmax, losses, BiasAdd) and
``aicslib/kernels/pooling_ops.py`` (pools). Gradients: ``aicslib/ops/nn_grad.py``.

As in TF2, ``strides``, ``ksize`` and ``dilations`` accept an int or a list of
1, 2 or 4 ints; ``padding`` is ``"SAME"``, ``"VALID"`` or (convolutions) an
explicit list of 4 ``[before, after]`` pairs in ``data_format`` order.
"""
import builtins

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.op_def import register_op
from ..framework.kernel_shape_util import get_windowed_output_size
from ..framework.execute import apply_op
from ..framework.eager import EagerTensor
from ..framework.ops import Tensor, convert_to_tensor, name_scope
from ..framework.tensor_shape import TensorShape, dimension_value
from ..framework.common_shapes import unchanged_shape, scalar_shape
from . import array_ops, math_ops

_FLOAT = "{half, bfloat16, float, double}"
_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


# ---------------------------------------------------------------------------
# Shape functions

def _conv_geometry_from_attrs(ctx_attr, in_shape, k_hw):
    """(Ho, Wo) for NHWC/NCHW attrs, or raises ValueError; dims may be None."""
    fmt = ctx_attr("data_format")
    strides, dil = ctx_attr("strides"), ctx_attr("dilations")
    hi, wi = (1, 2) if fmt == "NHWC" else (2, 3)
    pad = ctx_attr("padding")
    if pad == "EXPLICIT":
        p = list(ctx_attr("explicit_paddings"))
        if len(p) != 8:
            raise ValueError(f"explicit_paddings must have 8 entries, got {len(p)}")
        pads = [(p[2 * hi], p[2 * hi + 1]), (p[2 * wi], p[2 * wi + 1])]
    else:
        pads = [pad, pad]
    out = []
    for axis, k, pd in ((hi, k_hw[0], pads[0]), (wi, k_hw[1], pads[1])):
        size = in_shape[axis]
        if size is None or k is None:
            out.append(None)
        else:
            out.append(get_windowed_output_size(size, k, strides[axis], dil[axis], pd)[0])
    return out, hi, wi


def _check_conv_attrs(ctx_attr):
    strides, dil = ctx_attr("strides"), ctx_attr("dilations")
    if len(strides) != 4 or len(dil) != 4:
        raise ValueError(f"strides and dilations must have 4 entries, got {strides} and {dil}")
    # Strides and dilations in the batch and depth dimensions are the kernel's to refuse, when
    # the graph runs (TF's shape function accepts them, its kernels raise UnimplementedError).
    if min(strides) < 1 or min(dil) < 1:
        raise ValueError(f"strides and dilations must be >= 1, got {strides} and {dil}")


def _conv2d_shape(ctx):
    x, f = ctx.input_shape(0), ctx.input_shape(1)
    _check_conv_attrs(ctx.attr)
    if x.rank is not None and x.rank != 4:
        raise ValueError(f"input must be 4-dimensional, got shape {x}")
    if f.rank is not None and f.rank != 4:
        raise ValueError(f"filter must be 4-dimensional, got shape {f}")
    if x.rank is None or f.rank is None:
        return TensorShape([None] * 4)
    fmt = ctx.attr("data_format")
    c_axis = 3 if fmt == "NHWC" else 1
    c_in = x[c_axis]
    depthwise = ctx.op_type.startswith("Depthwise")
    if c_in is not None and f[2] is not None and c_in != f[2]:
        raise ValueError(f"Depth of input ({c_in}) must match the filter's in-depth ({f[2]}): "
                         f"input shape {x}, filter shape {f}")
    (ho, wo), hi, wi = _conv_geometry_from_attrs(ctx.attr, x, (f[0], f[1]))
    k_out = (None if c_in is None and f[2] is None or f[3] is None else (f[2] or c_in) * f[3]) \
        if depthwise else f[3]
    dims = [x[0], None, None, None]
    dims[hi], dims[wi], dims[c_axis] = ho, wo, k_out
    return TensorShape(dims)


def _shape_from_sizes_input(index):
    def fn(ctx):
        v = ctx.input_constant(index)
        if v is None:
            return TensorShape([None] * 4)
        v = [int(d) for d in np.asarray(v).reshape(-1)]
        if len(v) != 4:
            raise ValueError(f"sizes input must have 4 elements, got {v}")
        return TensorShape(v)
    return fn


# ---------------------------------------------------------------------------
# Op definitions

def _conv_op(name, inputs):
    b = register_op(name)
    for spec in inputs:
        b = b.input(spec)
    return (b.output("output: T").attr(f"T: {_FLOAT}").attr("strides: list(int)")
            .attr("use_cudnn_on_gpu: bool = true")
            .attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
            .attr("explicit_paddings: list(int) = []")
            .attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
            .attr("dilations: list(int) = [1, 1, 1, 1]"))


_conv_op("Conv2D", ["input: T", "filter: T"]).set_shape_fn(_conv2d_shape)
_conv_op("Conv2DBackpropInput", ["input_sizes: int32", "filter: T", "out_backprop: T"]) \
    .set_shape_fn(_shape_from_sizes_input(0))
_conv_op("Conv2DBackpropFilter", ["input: T", "filter_sizes: int32", "out_backprop: T"]) \
    .set_shape_fn(_shape_from_sizes_input(1))
_conv_op("DepthwiseConv2dNative", ["input: T", "filter: T"]).set_shape_fn(_conv2d_shape)
_conv_op("DepthwiseConv2dNativeBackpropInput", ["input_sizes: int32", "filter: T", "out_backprop: T"]) \
    .set_shape_fn(_shape_from_sizes_input(0))
_conv_op("DepthwiseConv2dNativeBackpropFilter", ["input: T", "filter_sizes: int32", "out_backprop: T"]) \
    .set_shape_fn(_shape_from_sizes_input(1))


def _bias_add_shape(ctx):
    x, b = ctx.input_shape(0), ctx.input_shape(1)
    if b.rank is not None and b.rank != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {b.rank}: bias shape {b}")
    if x.rank is not None and x.rank < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.rank}: value shape {x}")
    if x.rank is not None and b.rank is not None:
        c_axis = -1 if ctx.attr("data_format") == "NHWC" or x.rank < 3 else 1
        if x[c_axis] is not None and b[0] is not None and x[c_axis] != b[0]:
            raise ValueError(f"Dimensions must be equal, but are {x[c_axis]} and {b[0]}: "
                             f"value shape {x}, bias shape {b}")
    return x


def _bias_add_grad_shape(ctx):
    x = ctx.input_shape(0)
    if x.rank is None:
        return TensorShape([None])
    c_axis = -1 if ctx.attr("data_format") == "NHWC" or x.rank < 3 else 1
    return TensorShape([x[c_axis]])


register_op("BiasAdd").input("value: T").input("bias: T").output("output: T").attr(f"T: {_FLOAT}") \
    .attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'").set_shape_fn(_bias_add_shape)
register_op("BiasAddGrad").input("out_backprop: T").output("output: T").attr(f"T: {_FLOAT}") \
    .attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'").set_shape_fn(_bias_add_grad_shape)

register_op("Relu").input("features: T").output("activations: T").attr(f"T: {_FLOAT}") \
    .set_shape_fn(unchanged_shape)
register_op("Relu6").input("features: T").output("activations: T").attr(f"T: {_FLOAT}") \
    .set_shape_fn(unchanged_shape)
register_op("Elu").input("features: T").output("activations: T").attr(f"T: {_FLOAT}") \
    .set_shape_fn(unchanged_shape)


def _softmax_shape(ctx):
    x = ctx.input_shape(0)
    if x.rank == 0:   # TF's WithRankAtLeast(1): a softmax over no axis
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return x


register_op("Softmax").input("logits: T").output("softmax: T").attr(f"T: {_FLOAT}") \
    .set_shape_fn(_softmax_shape)
register_op("LogSoftmax").input("logits: T").output("logsoftmax: T").attr(f"T: {_FLOAT}") \
    .set_shape_fn(_softmax_shape)
register_op("LeakyRelu").input("features: T").output("activations: T").attr("alpha: float = 0.2") \
    .attr(f"T: {_FLOAT}").set_shape_fn(unchanged_shape)
register_op("ReluGrad").input("gradients: T").input("features: T").output("backprops: T") \
    .attr(f"T: {_FLOAT}").set_shape_fn(unchanged_shape)
register_op("Relu6Grad").input("gradients: T").input("features: T").output("backprops: T") \
    .attr(f"T: {_FLOAT}").set_shape_fn(unchanged_shape)
register_op("EluGrad").input("gradients: T").input("outputs: T").output("backprops: T") \
    .attr(f"T: {_FLOAT}").set_shape_fn(unchanged_shape)
register_op("LeakyReluGrad").input("gradients: T").input("features: T").output("backprops: T") \
    .attr("alpha: float = 0.2").attr(f"T: {_FLOAT}").set_shape_fn(unchanged_shape)

register_op("L2Loss").input("t: T").output("output: T").attr(f"T: {_FLOAT}").set_shape_fn(scalar_shape)


def _xent_shape(ctx):
    f, labels = ctx.input_shape(0), ctx.input_shape(1)
    sparse = ctx.op_type.startswith("Sparse")
    if f.rank is not None and f.rank != 2:
        raise ValueError(f"logits must be 2-dimensional, got shape {f}")
    if f.rank is None:
        return TensorShape([None]), TensorShape([None, None])
    if not sparse and labels.rank is not None:
        if labels.rank != 2:
            raise ValueError(f"labels must be 2-dimensional, got shape {labels}")
        for a, b in zip(f.dims, labels.dims):
            if a is not None and b is not None and a != b:
                raise ValueError(f"logits and labels must be broadcastable: logits_size={f} labels_size={labels}")
    batch_differs = labels.rank == 1 and labels[0] is not None and f[0] is not None and labels[0] != f[0]
    if sparse and labels.rank is not None and (labels.rank != 1 or batch_differs):
        raise ValueError(f"labels must be 1-D with the batch size of logits: logits shape {f}, labels shape {labels}")
    return TensorShape([f[0]]), f


register_op("SoftmaxCrossEntropyWithLogits").input("features: T").input("labels: T") \
    .output("loss: T").output("backprop: T").attr(f"T: {_FLOAT}").set_shape_fn(_xent_shape)
register_op("SparseSoftmaxCrossEntropyWithLogits").input("features: T").input("labels: Tlabels") \
    .output("loss: T").output("backprop: T").attr(f"T: {_FLOAT}") \
    .attr("Tlabels: {int32, int64} = DT_INT64").set_shape_fn(_xent_shape)


def _pool_shape(ctx):
    x = ctx.input_shape(0)
    ksize, strides = ctx.attr("ksize"), ctx.attr("strides")
    if len(ksize) != 4 or len(strides) != 4:
        raise ValueError(f"ksize and strides must have 4 entries, got {ksize} and {strides}")
    for i, k in enumerate(ksize):
        if k <= 0:
            raise ValueError(f"Sliding window ksize for dimension {i} was zero.")
    if x.rank is not None and x.rank != 4:
        raise ValueError(f"input must be 4-dimensional, got shape {x}")
    if x.rank is None:
        return TensorShape([None] * 4)
    fmt = ctx.attr("data_format") if ctx.has_attr("data_format") else "NHWC"
    hi, wi = (1, 2) if fmt == "NHWC" else (2, 3)
    c = 3 if fmt == "NHWC" else 1
    # Pooling over the batch is the kernel's to refuse (TF's shape function accepts it).
    dims = list(x.dims)
    if ksize[c] != 1 and ctx.op_type in ("MaxPool", "AvgPool"):
        # depthwise pooling (MaxPool's kernel does it, AvgPool's refuses): windows of channels
        k = ksize[c]
        dims[c] = dims[c] // k if dims[c] is not None and dims[c] % k == 0 else None
        return TensorShape(dims)
    for a in (hi, wi):
        if dims[a] is not None:
            dims[a] = get_windowed_output_size(dims[a], ksize[a], strides[a], 1, ctx.attr("padding"))[0]
    return TensorShape(dims)


def _pool_op(name, inputs, outputs, data_format=True, types=_FLOAT):
    b = register_op(name)
    for spec in inputs:
        b = b.input(spec)
    for spec in outputs:
        b = b.output(spec)
    b = b.attr(f"T: {types}").attr("ksize: list(int) >= 4").attr("strides: list(int) >= 4") \
        .attr("padding: {'SAME', 'VALID'}")
    if data_format:
        b = b.attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    return b


_pool_op("AvgPool", ["value: T"], ["output: T"]).set_shape_fn(_pool_shape)
_pool_op("AvgPoolGrad", ["orig_input_shape: int32", "grad: T"], ["output: T"]) \
    .set_shape_fn(_shape_from_sizes_input(0))
_pool_op("MaxPool", ["input: T"], ["output: T"]).set_shape_fn(_pool_shape)
_pool_op("MaxPoolGrad", ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"]) \
    .set_shape_fn(unchanged_shape)
_pool_op("MaxPoolGradGrad", ["orig_input: T", "orig_output: T", "grad: T"], ["output: T"]) \
    .set_shape_fn(lambda ctx: ctx.input_shape(1))
_pool_op("MaxPoolWithArgmax", ["input: T"], ["output: T", "argmax: Targmax"], data_format=False) \
    .attr("Targmax: {int32, int64} = DT_INT64").attr("include_batch_in_index: bool = false") \
    .set_shape_fn(lambda ctx: (_pool_shape(ctx),) * 2)
_pool_op("MaxPoolGradWithArgmax", ["input: T", "grad: T", "argmax: Targmax"], ["output: T"], data_format=False) \
    .attr("Targmax: {int32, int64}").attr("include_batch_in_index: bool = false") \
    .set_shape_fn(unchanged_shape)
_pool_op("MaxPoolGradGradWithArgmax", ["input: T", "grad: T", "argmax: Targmax"], ["output: T"],
         data_format=False) \
    .attr("Targmax: {int32, int64}").attr("include_batch_in_index: bool = false") \
    .set_shape_fn(lambda ctx: ctx.input_shape(2))


# ---------------------------------------------------------------------------
# Argument normalisation (TF2's nn_ops._get_sequence and friends)

def _get_sequence(value, n, channel_index, name):
    """An int or a list of 1, n or n+2 ints -> the full list of n+2 (with 1 at batch and channel)."""
    if value is None:
        value = 1
    if isinstance(value, (int, np.integer)):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    out = [1] * (n + 2)
    spatial = [i for i in range(n + 2) if i not in (0, channel_index)]
    for i, v in zip(spatial, value):
        out[i] = v
    return out


def _channel_index(data_format):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return 3 if data_format == "NHWC" else 1


def _shape_str(t):
    try:
        return str(t.shape)
    except AttributeError:
        return str(np.shape(t))


def _padding_attrs(padding, data_format, x, f):
    """padding -> {"padding": ..., "explicit_paddings": [...]}, or InvalidArgumentError naming both shapes."""
    if isinstance(padding, (str, bytes)):
        p = padding.decode() if isinstance(padding, bytes) else padding
        if p.upper() not in ("SAME", "VALID"):
            raise InvalidArgumentError(
                None, None, f"padding must be 'SAME', 'VALID' or a list of explicit paddings, got {padding!r} "
                            f"(input shape {_shape_str(x)}, filter shape {_shape_str(f)})")
        return {"padding": p.upper(), "explicit_paddings": []}
    try:
        pairs = [[int(a) for a in pair] for pair in padding]
    except TypeError:
        raise InvalidArgumentError(None, None, f"padding {padding!r} is not a string nor a list of pairs "
                                               f"(input shape {_shape_str(x)}, filter shape {_shape_str(f)})") from None
    c = _channel_index(data_format)
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs) or pairs[0] != [0, 0] or pairs[c] != [0, 0] \
            or any(v < 0 for p in pairs for v in p):
        raise InvalidArgumentError(
            None, None, f"explicit padding must be 4 non-negative [before, after] pairs with [0, 0] for the "
                        f"batch and channel dimensions, got {padding!r} "
                        f"(input shape {_shape_str(x)}, filter shape {_shape_str(f)})")
    return {"padding": "EXPLICIT", "explicit_paddings": [v for p in pairs for v in p]}


def _conv_attrs(x, f, strides, padding, data_format, dilations):
    data_format = data_format or "NHWC"
    c = _channel_index(data_format)
    attrs = {"strides": _get_sequence(strides, 2, c, "strides"),
             "dilations": _get_sequence(dilations, 2, c, "dilations"),
             "data_format": data_format}
    attrs.update(_padding_attrs(padding, data_format, x, f))
    return attrs


def _is_tensor(v):
    return isinstance(v, (Tensor, EagerTensor)) or hasattr(v, "_as_graph_element")


def _same_float(x, f):
    """Both as tensors of one dtype; a NumPy/Python value takes the dtype of the tensor beside it."""
    if not _is_tensor(x) and _is_tensor(f):
        f = convert_to_tensor(f)
        x = convert_to_tensor(x, dtype=f.dtype)
    else:
        x = convert_to_tensor(x)
        f = convert_to_tensor(f) if _is_tensor(f) else convert_to_tensor(f, dtype=x.dtype)
    if x.dtype != f.dtype:
        raise InvalidArgumentError(None, None, f"input and filter must have the same dtype, got {x.dtype.name} "
                                               f"and {f.dtype.name} (input shape {x.shape}, filter shape {f.shape})")
    return x, f


def _check_channels(x, f, what="filter"):
    xs, fs = x.shape, f.shape
    if xs.rank == 4 and fs.rank == 4:
        return
    if xs.rank is not None and fs.rank is not None:
        raise InvalidArgumentError(None, None, f"input and {what} must be 4-D: input shape {xs}, "
                                               f"{what} shape {fs}")


# ---------------------------------------------------------------------------
# Python API: convolutions

def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution (``tf.nn.conv2d``, TF2 signature; TF1's is ``aics.compat.v1.nn.conv2d``).

    ``input`` is NHWC (or NCHW with ``data_format="NCHW"``), ``filters`` HWIO.
    The CPU kernel picks its algorithm (im2col + GEMM or Winograd) by the rule
    in ``aicslib.kernels.conv_ops.choose_conv2d_algorithm``; force one with the
    environment variable ``AICS_CONV_ALGO=direct|im2col|winograd``.
    """
    x, f = _same_float(input, filters)
    _check_channels(x, f)
    return apply_op("Conv2D", [x, f], _conv_attrs(x, f, strides, padding, data_format, dilations), name=name)


def conv2d_backprop_input(input_sizes, filters, out_backprop, strides, padding, data_format="NHWC",
                          dilations=None, name=None):
    """Gradient of conv2d with respect to its input (``tf.nn.conv2d_backprop_input``)."""
    f, dy = _same_float(filters, out_backprop)
    sizes = input_sizes if hasattr(input_sizes, "dtype") and not isinstance(input_sizes, np.ndarray) \
        else np.asarray(input_sizes, np.int32)
    return apply_op("Conv2DBackpropInput", [sizes, f, dy],
                    _conv_attrs(dy, f, strides, padding, data_format, dilations), name=name)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, data_format="NHWC",
                           dilations=None, name=None):
    """Gradient of conv2d with respect to its filter (``tf.nn.conv2d_backprop_filter``)."""
    x, dy = _same_float(input, out_backprop)
    sizes = filter_sizes if hasattr(filter_sizes, "dtype") and not isinstance(filter_sizes, np.ndarray) \
        else np.asarray(filter_sizes, np.int32)
    return apply_op("Conv2DBackpropFilter", [x, sizes, dy],
                    _conv_attrs(x, dy, strides, padding, data_format, dilations), name=name)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):
    """Depthwise 2-D convolution (``tf.nn.depthwise_conv2d``): filter ``[kh, kw, C, M]``,
    output channel ``c*M + m``. ``strides`` must be ``[1, s, s, 1]``-like (equal), as in TF."""
    data_format = data_format or "NHWC"
    x, f = _same_float(input, filter)
    _check_channels(x, f)
    attrs = _conv_attrs(x, f, strides, padding, data_format, dilations)
    return apply_op("DepthwiseConv2dNative", [x, f], attrs, name=name)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,
                                           data_format="NHWC", dilations=None, name=None):
    f, dy = _same_float(filter, out_backprop)
    return apply_op("DepthwiseConv2dNativeBackpropInput", [np.asarray(input_sizes, np.int32)
                    if not hasattr(input_sizes, "op") else input_sizes, f, dy],
                    _conv_attrs(dy, f, strides, padding, data_format, dilations), name=name)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                                            data_format="NHWC", dilations=None, name=None):
    x, dy = _same_float(input, out_backprop)
    return apply_op("DepthwiseConv2dNativeBackpropFilter", [x, np.asarray(filter_sizes, np.int32)
                    if not hasattr(filter_sizes, "op") else filter_sizes, dy],
                    _conv_attrs(x, dy, strides, padding, data_format, dilations), name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                     data_format=None, dilations=None, name=None):
    """Depthwise conv followed by a 1x1 conv (``tf.nn.separable_conv2d``)."""
    data_format = data_format or "NHWC"
    with name_scope(name, "separable_conv2d"):
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations,
                                     name="depthwise")
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], "VALID", data_format, name="pointwise")


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` along the channel axis (last for NHWC/N..C, axis 1 for NCHW)."""
    x = convert_to_tensor(value)
    b = convert_to_tensor(bias, dtype=x.dtype)
    return apply_op("BiasAdd", [x, b], {"data_format": data_format or "NHWC"}, name=name)


# ---------------------------------------------------------------------------
# Python API: activations

def relu(features, name=None):
    """max(features, 0)."""
    return apply_op("Relu", [features], name=name)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return apply_op("Relu6", [features], name=name)


def elu(features, name=None):
    """features if > 0 else exp(features) - 1."""
    return apply_op("Elu", [features], name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """features if > 0 else alpha * features."""
    return apply_op("LeakyRelu", [features], {"alpha": float(alpha)}, name=name)


sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


def _last_axis_op(op_type, logits, axis, name):
    x = convert_to_tensor(logits)
    rank = x.shape.rank
    if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, [x], name=name)
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis} needs a known rank")
    axis = axis % rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    y = apply_op(op_type, [array_ops.transpose(x, perm)])
    return array_ops.transpose(y, perm, name=name)


def softmax(logits, axis=None, name=None):
    """exp(logits) / sum(exp(logits), axis), computed stably (max subtracted)."""
    return _last_axis_op("Softmax", logits, axis, name)


def log_softmax(logits, axis=None, name=None):
    """logits - log(sum(exp(logits), axis)), computed stably."""
    return _last_axis_op("LogSoftmax", logits, axis, name)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """TF2 dropout: zeroes each element with probability ``rate`` and scales the rest by 1/(1-rate)."""
    from . import random_ops
    with name_scope(name, "dropout"):
        x = convert_to_tensor(x)
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor, got {x.dtype.name}")
        if isinstance(rate, (int, float)) and not 0 <= rate < 1:
            raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}")
        if isinstance(rate, (int, float)) and rate == 0:
            return array_ops.identity(x)
        shape = array_ops.shape(x) if noise_shape is None else noise_shape
        keep = 1.0 - rate
        rnd = random_ops.random_uniform(shape, dtype=x.dtype, seed=seed)
        mask = math_ops.cast(math_ops.greater_equal(rnd, np.asarray(rate, x.dtype.as_numpy_dtype)), x.dtype)
        scale = np.asarray(1.0 / keep, x.dtype.as_numpy_dtype) if isinstance(keep, float) else 1.0 / keep
        return x * scale * mask


# ---------------------------------------------------------------------------
# Python API: pooling

def _pool_attrs(ksize, strides, padding, data_format):
    data_format = data_format or "NHWC"
    c = _channel_index(data_format)
    if not isinstance(padding, (str, bytes)) or padding.upper() not in ("SAME", "VALID"):
        raise InvalidArgumentError(None, None, f"pooling padding must be 'SAME' or 'VALID', got {padding!r}")
    return {"ksize": _get_sequence(ksize, 2, c, "ksize"), "strides": _get_sequence(strides, 2, c, "strides"),
            "padding": padding.upper(), "data_format": data_format}


def max_pool(input, ksize, strides, padding, data_format="NHWC", name=None):
    """Max pooling (``tf.nn.max_pool2d``); SAME padding never selects a padded position."""
    return apply_op("MaxPool", [input], _pool_attrs(ksize, strides, padding, data_format), name=name)


max_pool2d = max_pool


def avg_pool(input, ksize, strides, padding, data_format="NHWC", name=None):
    """Average pooling; with SAME padding each window averages only its in-image pixels, as TF."""
    return apply_op("AvgPool", [input], _pool_attrs(ksize, strides, padding, data_format), name=name)


avg_pool2d = avg_pool


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype=dtypes.int64,
                         include_batch_in_index=False, name=None):
    """Max pooling that also returns the flat index of each maximum:
    ``(y * width + x) * channels + c`` (plus ``b * height * width * channels``
    with ``include_batch_in_index``)."""
    if data_format != "NHWC":
        raise ValueError("max_pool_with_argmax only supports data_format 'NHWC'")
    attrs = _pool_attrs(ksize, strides, padding, data_format)
    del attrs["data_format"]
    attrs.update(Targmax=dtypes.as_dtype(output_dtype), include_batch_in_index=builtins.bool(include_batch_in_index))
    return apply_op("MaxPoolWithArgmax", [input], attrs, name=name)


# ---------------------------------------------------------------------------
# Python API: losses and normalisation

def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return apply_op("L2Loss", [t], name=name)


def _flatten_logits(x, axis):
    rank = x.shape.rank
    if rank is None:
        raise ValueError("logits must have a known rank")
    if rank == 0:
        raise InvalidArgumentError(None, None, "logits must have >= 1 dimension, got []")
    if axis is not None and axis % builtins.max(rank, 1) != rank - 1:
        perm = list(range(rank))
        a = axis % rank
        perm[a], perm[-1] = perm[-1], perm[a]
        x = array_ops.transpose(x, perm)
    return x


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross entropy between ``labels`` (a distribution per row) and softmax(logits), TF2's v2.

    One fused op (``SoftmaxCrossEntropyWithLogits``) computes the loss and its
    gradient ``softmax - labels`` together; large logits stay finite."""
    with name_scope(name, "softmax_cross_entropy_with_logits"):
        logits = convert_to_tensor(logits)
        if isinstance(labels, (Tensor, EagerTensor)) and labels.dtype != logits.dtype:
            labels = math_ops.cast(labels, logits.dtype)  # as TF: "labels and logits must be of the same type"
        labels = convert_to_tensor(labels, dtype=logits.dtype)
        x, z = _flatten_logits(logits, axis), _flatten_logits(labels, axis)
        rank = x.shape.rank
        if rank == 2:
            return apply_op("SoftmaxCrossEntropyWithLogits", [x, z])[0]
        shape = array_ops.shape(x)
        batch_shape = array_ops.slice(shape, [0], [rank - 1])
        depth = dimension_value(x.shape[-1])
        x2 = array_ops.reshape(x, [-1, -1 if depth is None else depth])
        z2 = array_ops.reshape(z, array_ops.shape(x2))
        loss = apply_op("SoftmaxCrossEntropyWithLogits", [x2, z2])[0]
        return array_ops.reshape(loss, batch_shape)


softmax_cross_entropy_with_logits_v2 = softmax_cross_entropy_with_logits


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Cross entropy with integer class labels: ``-log softmax(logits)[label]``."""
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits"):
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        if labels.dtype not in (dtypes.int32, dtypes.int64):
            labels = math_ops.cast(labels, dtypes.int64)
        lr, xr = labels.shape.rank, logits.shape.rank
        if lr is not None and xr is not None and lr != xr - 1:
            raise InvalidArgumentError(None, None, f"Rank mismatch: Rank of labels (received {lr}) should equal "
                                                   f"rank of logits minus 1 (received {xr}): labels shape "
                                                   f"{labels.shape}, logits shape {logits.shape}")
        if xr == 2:
            return apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels])[0]
        n_classes = dimension_value(logits.shape[-1])
        n_classes = -1 if n_classes is None else n_classes
        x2 = array_ops.reshape(logits, [-1, n_classes])
        l2 = array_ops.reshape(labels, [-1])
        loss = apply_op("SparseSoftmaxCrossEntropyWithLogits", [x2, l2])[0]
        return array_ops.reshape(loss, array_ops.shape(labels))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """``max(x, 0) - x * z + log(1 + exp(-|x|))``: stable for large |logits|."""
    with name_scope(name, "logistic_loss"):
        x = convert_to_tensor(logits)
        z = convert_to_tensor(labels, dtype=x.dtype)
        if x.shape.rank is not None and z.shape.rank is not None and x.shape.as_list() != z.shape.as_list() \
                and x.shape.is_fully_defined() and z.shape.is_fully_defined():
            raise ValueError(f"logits and labels must have the same shape ({x.shape} vs {z.shape})")
        # As TF, select instead of relu/abs: at x == 0 the gradient is then sigmoid(0) - z = 0.5 - z
        # (relu and abs have gradient 0 there, which would give -z for zero-initialised models).
        zeros = array_ops.zeros_like(x)
        cond = math_ops.greater_equal(x, zeros)
        relu_logits = math_ops.where(cond, x, zeros)
        neg_abs_logits = math_ops.where(cond, -x, x)
        return relu_logits - x * z + math_ops.log1p(math_ops.exp(neg_abs_logits))


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross entropy with the positive term weighted by ``pos_weight`` (TF2 signature)."""
    with name_scope(name, "logistic_loss"):
        x = convert_to_tensor(logits)
        z = convert_to_tensor(labels, dtype=x.dtype)
        q = convert_to_tensor(pos_weight, dtype=x.dtype)
        log_weight = 1.0 + (q - 1.0) * z
        return (1.0 - z) * x + log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(x))) + relu(-x))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance over ``axes`` (``tf.nn.moments``)."""
    with name_scope(name, "moments"):
        x = convert_to_tensor(x)
        y = math_ops.cast(x, dtypes.float32) if x.dtype in (dtypes.float16, dtypes.bfloat16) else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True)
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)),
                                        axes, keepdims=True)
        if not keepdims:
            mean = array_ops.squeeze(mean, list(axes))
            variance = array_ops.squeeze(variance, list(axes))
        if y.dtype != x.dtype:
            mean, variance = math_ops.cast(mean, x.dtype), math_ops.cast(variance, x.dtype)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``scale * (x - mean) / sqrt(variance + epsilon) + offset`` (``tf.nn.batch_normalization``)."""
    with name_scope(name, "batchnorm"):
        x = convert_to_tensor(x)
        inv = math_ops.rsqrt(convert_to_tensor(variance, dtype=x.dtype) + variance_epsilon)
        if scale is not None:
            inv = inv * convert_to_tensor(scale, dtype=x.dtype)
        mean = convert_to_tensor(mean, dtype=x.dtype)
        shift = (convert_to_tensor(offset, dtype=x.dtype) - mean * inv) if offset is not None else -mean * inv
        return x * inv + shift
