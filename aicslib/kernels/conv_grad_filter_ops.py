"""Conv2DBackpropFilter in NumPy: the filter gradient as im2col and a GEMM.

TF's ``Conv2DBackpropFilter`` (core/kernels/conv_grad_filter_ops.cc) goes
through ``Eigen::SpatialConvolutionBackwardKernel``: the im2col matrix of the
input, then one contraction ``cols^T @ dY`` over all output pixels. (The speed
layer, ``aicslib/accel/conv_backprop_filter.py``, also runs Winograd backwards.)

==================================  ==================================================
``conv2d_backprop_filter_direct``   loops (the definition)
``conv2d_backprop_filter_gemm``     im2col then GEMM ``cols^T @ dY``
``conv2d_backprop_filter``          ``gemm``, or ``direct`` when asked (``AICS_CONV_ALGO``)
==================================  ==================================================

Layouts and arguments as in conv_ops.py; ``filter_shape`` is the HWIO shape of ``w``.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import (as_floats, backprop_filter_operands, conv_geometry, im2col_view, pad_nhwc,
                      run_backprop_filter)
from .conv_ops import requested_algorithm

__all__ = ["conv2d_backprop_filter", "conv2d_backprop_filter_direct", "conv2d_backprop_filter_gemm"]

_FLOAT = {"T": [float16, bfloat16, float32, float64]}


# ----------------------------------------------------------------------------
# Backprop to the filter:  dW = cols^T @ dY
# ----------------------------------------------------------------------------

def conv2d_backprop_filter_direct(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Loop reference for the filter gradient:
    ``dw[i, j] += xp[:, ih, iw, :]^T @ dy[:, oh, ow, :]`` over output pixels and taps."""
    x, dy = as_floats(x, dy)
    kh, kw, C, K = (int(s) for s in filter_shape)
    g = conv_geometry(x.shape, (kh, kw, C, K), strides, padding, dilations)
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    dw = np.zeros((kh, kw, C, K), dtype=x.dtype)
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(kh):
                for j in range(kw):
                    ih = oh * g["sh"] + i * g["dh"]
                    iw = ow * g["sw"] + j * g["dw"]
                    dw[i, j] += xp[:, ih, iw, :].T @ dy[:, oh, ow, :]
    return dw



def conv2d_backprop_filter_gemm(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Filter gradient as TF/Eigen computes it: im2col, then one GEMM
    ``dW(kh*kw*C, K) = cols(N*Ho*Wo, kh*kw*C)^T @ dY(N*Ho*Wo, K)``: the contraction
    runs over all ``N*Ho*Wo`` output pixels."""
    x, dy, g = backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "C", "K", "kh", "kw", "Ho", "Wo"))
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    cols = im2col_view(xp, kh, kw, Ho, Wo, (g["sh"], g["sw"]), (g["dh"], g["dw"])).reshape(N * Ho * Wo, kh * kw * C)
    return (cols.T @ dy.reshape(N * Ho * Wo, K)).reshape(kh, kw, C, K)


def conv2d_backprop_filter(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                           algorithm="auto"):
    """Gradient of ``conv2d(x, w)`` with respect to ``w``, given ``dy``.

    ``algorithm``: ``"gemm"`` (:func:`conv2d_backprop_filter_gemm`) or ``"direct"`` (loops);
    ``"auto"``: ``"direct"`` when ``AICS_CONV_ALGO`` says so, else ``"gemm"``.
    """
    if (algorithm if algorithm not in (None, "auto") else requested_algorithm(None)) == "direct":
        return conv2d_backprop_filter_direct(x, dy, filter_shape, strides, padding, dilations)
    return conv2d_backprop_filter_gemm(x, dy, filter_shape, strides, padding, dilations)


# ----------------------------------------------------------------------------
# Kernel registration (TF: REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropFilter")...)
# in core/kernels/conv_grad_filter_ops.cc)
# ----------------------------------------------------------------------------

@register_kernel("Conv2DBackpropFilter", type_constraint=_FLOAT)
def _conv2d_backprop_filter_kernel(input, filter_sizes, out_backprop, strides, padding,
                                   explicit_paddings, data_format, dilations):
    return run_backprop_filter(conv2d_backprop_filter, "Conv2DBackpropFilter", input, filter_sizes,
                               out_backprop, strides, padding, explicit_paddings, data_format, dilations)
