"""Conv2DBackpropInput in NumPy: the input gradient as a GEMM and col2im.

TF's ``Conv2DBackpropInput`` (core/kernels/conv_grad_input_ops.cc) goes
through ``Eigen::SpatialConvolutionBackwardInput``: a contraction (GEMM)
``dY @ W^T``, the gradient of the im2col matrix, then a col2im scatter-add
back onto the input pixels. (For stride 1 the same gradient is also a forward
convolution of ``dy`` with the rotated filter: the speed layer,
``aicslib/accel/conv_backprop_input.py``, uses that to run Winograd on it.)

=================================  ====================================================
``conv2d_backprop_input_direct``   loops (the definition)
``conv2d_backprop_input_gemm``     GEMM ``dY @ W^T`` then col2im
``conv2d_backprop_input``          ``gemm``, or ``direct`` when asked (``AICS_CONV_ALGO``)
=================================  ====================================================

Layouts and arguments as in conv_ops.py; ``input_shape`` is the NHWC shape of ``x``.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import as_floats, backprop_input_operands, conv_geometry, run_backprop_input
from .conv_ops import requested_algorithm

__all__ = ["conv2d_backprop_input", "conv2d_backprop_input_direct", "conv2d_backprop_input_gemm"]

_FLOAT = {"T": [float16, bfloat16, float32, float64]}


# ----------------------------------------------------------------------------
# Backprop to the input:  dx = col2im(dY @ W^T)
# ----------------------------------------------------------------------------

def conv2d_backprop_input_direct(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Loop reference for the input gradient: every output pixel sends
    ``dy[n, oh, ow, :] @ w[i, j].T`` back to the input pixel tap (i, j) read."""
    dy, w = as_floats(dy, w)
    g = conv_geometry(tuple(input_shape), w.shape, strides, padding, dilations)
    N, H, W, C = (int(s) for s in input_shape)
    dxp = np.zeros((N, H + g["pt"] + g["pb"], W + g["pl"] + g["pr"], C), dtype=dy.dtype)
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(g["kh"]):
                for j in range(g["kw"]):
                    ih = oh * g["sh"] + i * g["dh"]
                    iw = ow * g["sw"] + j * g["dw"]
                    dxp[:, ih, iw, :] += dy[:, oh, ow, :] @ w[i, j].T
    return dxp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W].copy()



def conv2d_backprop_input_gemm(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Input gradient as TF/Eigen computes it: one GEMM, then col2im.

    ``dcols(N*Ho*Wo, kh*kw*C) = dY(N*Ho*Wo, K) @ W(kh*kw*C, K)^T`` is the
    gradient of the im2col matrix; col2im adds every patch row back onto the
    input pixels it was copied from (the transpose of im2col). Overlapping
    patches make this a scatter-*add*; it is done tap by tap, ``kh*kw`` strided
    array additions, never a loop over pixels.
    """
    dy, w, g = backprop_input_operands(dy, w, input_shape, strides, padding, dilations)
    N, H, W, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "H", "W", "C", "K", "kh", "kw", "Ho", "Wo"))
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]
    dcols = (dy.reshape(-1, K) @ w.reshape(kh * kw * C, K).T).reshape(N, Ho, Wo, kh, kw, C)    # GEMM
    dxp = np.zeros((N, H + g["pt"] + g["pb"], W + g["pl"] + g["pr"], C), dtype=dy.dtype)
    for i in range(kh):                                                                     # col2im
        for j in range(kw):
            dst = dxp[:, i * dh: i * dh + (Ho - 1) * sh + 1: sh, j * dw: j * dw + (Wo - 1) * sw + 1: sw]
            dst += dcols[:, :, :, i, j]
    return np.ascontiguousarray(dxp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W])


def conv2d_backprop_input(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                          algorithm="auto"):
    """Gradient of ``conv2d(x, w)`` with respect to ``x``, given ``dy``.

    ``algorithm``: ``"gemm"`` (GEMM + col2im, :func:`conv2d_backprop_input_gemm`) or
    ``"direct"`` (loops); ``"auto"``: ``"direct"`` when ``AICS_CONV_ALGO`` says so, else
    ``"gemm"`` (the forward's other algorithms are the speed layer's business here).
    """
    if (algorithm if algorithm not in (None, "auto") else requested_algorithm(None)) == "direct":
        return conv2d_backprop_input_direct(dy, w, input_shape, strides, padding, dilations)
    return conv2d_backprop_input_gemm(dy, w, input_shape, strides, padding, dilations)


# ----------------------------------------------------------------------------
# Kernel registration (TF: REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropInput")...)
# in core/kernels/conv_grad_input_ops.cc)
# ----------------------------------------------------------------------------

@register_kernel("Conv2DBackpropInput", type_constraint=_FLOAT)
def _conv2d_backprop_input_kernel(input_sizes, filter, out_backprop, strides, padding,
                                  explicit_paddings, data_format, dilations):
    return run_backprop_input(conv2d_backprop_input, "Conv2DBackpropInput", input_sizes, filter, out_backprop,
                              strides, padding, explicit_paddings, data_format, dilations)
