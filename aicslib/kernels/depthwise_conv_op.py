"""Depthwise convolution in NumPy: forward and both backprops.

TF's ``DepthwiseConv2dNative`` (core/kernels/depthwise_conv_op.cc) and its
gradients (depthwise_conv_grad_op.cc). The filter is ``(kh, kw, C, M)``: each
input channel ``c`` has its own ``M`` filters and output channel ``c*M + m``,
so there is no channel sum and no GEMM: each kernel loops over the ``kh*kw``
filter taps and does one broadcast multiply-add of a strided view of the
padded input (or gradient) per tap, never a loop over pixels.

=====================================  ============================================
``depthwise_conv2d_direct``            loops over pixels and taps (the definition)
``depthwise_conv2d``                   forward: per tap, ``y += tap * w[i, j]``
``depthwise_conv2d_backprop_input``    per tap, ``dx[tap] += dy * w[i, j]`` (summed over M)
``depthwise_conv2d_backprop_filter``   per tap, ``dw[i, j] = sum of tap * dy``
=====================================  ============================================

The speed layer (``aicslib/accel/depthwise.py``: C kernels, or these tap loops
by cache-sized blocks on threads) registers preferred kernels beside these.
Layouts and arguments as in conv_ops.py.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import (as_floats, backprop_filter_operands, backprop_input_operands, conv_geometry, pad_nhwc,
                      run_backprop_filter, run_backprop_input, run_forward)

__all__ = [
    "depthwise_conv2d", "depthwise_conv2d_direct", "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_backprop_filter",
]

_FLOAT = {"T": [float16, bfloat16, float32, float64]}


def _tap(a, i, j, g):
    """The ``(N, Ho, Wo, C)`` strided view of padded ``a`` that filter tap ``(i, j)`` meets."""
    return a[:, i * g["dh"]: i * g["dh"] + (g["Ho"] - 1) * g["sh"] + 1: g["sh"],
             j * g["dw"]: j * g["dw"] + (g["Wo"] - 1) * g["sw"] + 1: g["sw"]]


def depthwise_conv2d_direct(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Loop reference: ``y[n, oh, ow, c*M + m] = sum_{i,j} xp[n, ih, iw, c] * w[i, j, c, m]``."""
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    kh, kw, C, M = w.shape
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    y = np.zeros((g["N"], g["Ho"], g["Wo"], C, M), dtype=x.dtype)
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(kh):
                for j in range(kw):
                    y[:, oh, ow] += xp[:, oh * g["sh"] + i * g["dh"], ow * g["sw"] + j * g["dw"], :, None] * w[i, j]
    return y.reshape(g["N"], g["Ho"], g["Wo"], C * M)


def depthwise_conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Depthwise convolution (``tf.nn.depthwise_conv2d_native``), one pass per filter tap:
    ``y[..., c, m] += tap[..., c] * w[i, j, c, m]``, where ``tap`` is the strided view of the
    padded input that tap ``(i, j)`` reads for every output pixel."""
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    kh, kw, C, M = w.shape
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    y = np.zeros((g["N"], g["Ho"], g["Wo"], C, M), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            y += _tap(xp, i, j, g)[..., None] * w[i, j]
    return y.reshape(g["N"], g["Ho"], g["Wo"], C * M)


def depthwise_conv2d_backprop_input(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Input gradient of :func:`depthwise_conv2d`: tap ``(i, j)`` sends
    ``sum_m dy[..., c, m] * w[i, j, c, m]`` back to the input pixels it read (a scatter-add
    into the padded gradient: windows overlap), then the padding is cropped."""
    dy, w, g = backprop_input_operands(dy, w, input_shape, strides, padding, dilations, depthwise=True)
    N, H, W, C = g["N"], g["H"], g["W"], g["C"]
    kh, kw, _, M = w.shape
    dy5 = dy.reshape(N, g["Ho"], g["Wo"], C, M)
    dxp = np.zeros((N, H + g["pt"] + g["pb"], W + g["pl"] + g["pr"], C), dtype=dy.dtype)
    for i in range(kh):
        for j in range(kw):
            _tap(dxp, i, j, g)[...] += (dy5 * w[i, j]).sum(axis=4)
    return np.ascontiguousarray(dxp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W])


def depthwise_conv2d_backprop_filter(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Filter gradient of :func:`depthwise_conv2d`: per tap,
    ``dw[i, j, c, m] = sum_{n, oh, ow} tap[n, oh, ow, c] * dy[n, oh, ow, c, m]``."""
    x, dy, g = backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations, depthwise=True)
    kh, kw, C, M = g["kh"], g["kw"], g["C"], g["K"]
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    dy5 = dy.reshape(g["N"], g["Ho"], g["Wo"], C, M)
    dw = np.empty((kh, kw, C, M), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            dw[i, j] = np.einsum("nhwc,nhwcm->cm", _tap(xp, i, j, g), dy5)
    return dw


# ----------------------------------------------------------------------------
# Kernel registrations (TF: REGISTER_KERNEL_BUILDER(Name("DepthwiseConv2dNative")...)
# in core/kernels/depthwise_conv_op.cc and depthwise_conv_grad_op.cc)
# ----------------------------------------------------------------------------

@register_kernel("DepthwiseConv2dNative", type_constraint=_FLOAT)
def _depthwise_kernel(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    return run_forward(depthwise_conv2d, "DepthwiseConv2dNative", input, filter, strides, padding,
                       explicit_paddings, data_format, dilations)


@register_kernel("DepthwiseConv2dNativeBackpropInput", type_constraint=_FLOAT)
def _depthwise_bi_kernel(input_sizes, filter, out_backprop, strides, padding,
                         explicit_paddings, data_format, dilations):
    return run_backprop_input(depthwise_conv2d_backprop_input, "DepthwiseConv2dNativeBackpropInput", input_sizes,
                              filter, out_backprop, strides, padding, explicit_paddings, data_format, dilations)


@register_kernel("DepthwiseConv2dNativeBackpropFilter", type_constraint=_FLOAT)
def _depthwise_bf_kernel(input, filter_sizes, out_backprop, strides, padding,
                         explicit_paddings, data_format, dilations):
    return run_backprop_filter(depthwise_conv2d_backprop_filter, "DepthwiseConv2dNativeBackpropFilter", input,
                               filter_sizes, out_backprop, strides, padding, explicit_paddings, data_format,
                               dilations)
