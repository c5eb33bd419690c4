"""Conv2DBackpropInput of a strided convolution by phases: ``s_h * s_w`` stride-1 convolutions.

With stride ``s`` an input pixel ``h'`` (in padded coordinates) is reached only by the filter
taps ``i`` with ``i = h' (mod s)``: writing ``h' = a + s*u`` (``a``, the pixel's phase) and
``i = a + s*t``, the forward's ``h' = s*oh + i`` gives ``oh = u - t``, so::

    dx_pad[a + s*u] = sum over t of dy[u - t] @ w[a + s*t]^T

a stride-1 ("full") correlation of ``dy`` with the sub-filter ``w[a::s]`` flipped. Each of the
``s_h * s_w`` phases of the input gradient is one such convolution, run by the forward's
blocked im2col + GEMM (:func:`~.conv_forward.conv2d_im2col`: threads, C SGEMM), and written
straight into its pixels of ``dx``. The phases' sub-filters hold the filter's taps once in
all, so the multiply-adds are those of GEMM + col2im, without col2im's ``kh*kw`` scatter-adds
over a ``kh*kw`` times larger gradient of the im2col matrix (TF's CPU kernel and PyTorch's
slow path pay those; oneDNN's strided backward data works by phases too).
"""
import numpy as np

from ..kernels.conv_2d import backprop_input_operands
from .conv_forward import conv2d_im2col

__all__ = ["conv2d_backprop_input_phases"]


def _phase_rows(a, pad_before, size, k, s, n_out):
    """For phase ``a`` of one spatial axis: ``(first, count, taps, lo, hi, pad_lo, pad_hi)``.

    The phase's input pixels are ``first, first + s, ...`` (``count`` of them, unpadded
    coordinates), its filter taps ``a, a + s, ...`` (``taps``), and its stride-1 correlation
    reads ``dy[lo:hi]`` padded with ``pad_lo`` / ``pad_hi`` zeros.
    """
    first = (a - pad_before) % s
    count = len(range(first, size, s))
    taps = len(range(a, k, s))
    u0 = (first + pad_before) // s             # the phase index u of the first pixel
    lo, hi = u0 - (taps - 1), u0 + count       # dy rows read: u - t for t < taps
    return first, count, taps, max(lo, 0), min(hi, n_out), max(0, -lo), max(0, hi - n_out)


def conv2d_backprop_input_phases(dy, w, input_shape, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Gradient of ``conv2d(x, w, strides, padding)`` with respect to ``x`` (NHWC, HWIO), by phases.

    Any stride (1 is one phase: the plain "full" correlation); dilation 1 only.
    """
    dy, w, g = backprop_input_operands(dy, w, input_shape, strides, padding, dilations)
    if (g["dh"], g["dw"]) != (1, 1):
        raise ValueError(f"conv2d_backprop_input_phases needs dilation 1, got {dilations}")
    N, H, W, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "H", "W", "C", "K", "kh", "kw", "Ho", "Wo"))
    sh, sw = g["sh"], g["sw"]
    dx = np.empty((N, H, W, C), dtype=dy.dtype)
    for a in range(sh):
        h0, nh, th, r0, r1, pt, pb = _phase_rows(a, g["pt"], H, kh, sh, Ho)
        if nh == 0:
            continue
        for b in range(sw):
            w0, nw, tw, c0, c1, pl, pr = _phase_rows(b, g["pl"], W, kw, sw, Wo)
            if nw == 0:
                continue
            target = dx[:, h0::sh, w0::sw]
            if th == 0 or tw == 0 or r1 <= r0 or c1 <= c0 or N == 0:
                target[...] = 0                   # no tap reaches these pixels, or no dy row does
                continue
            # the flipped sub-filter with in/out channels swapped: (th, tw, K, C)
            w_phase = np.ascontiguousarray(w[a::sh, b::sw][::-1, ::-1].transpose(0, 1, 3, 2))
            conv2d_im2col(dy[:, r0:r1, c0:c1], w_phase, (1, 1), [(pt, pb), (pl, pr)], out=target)
    return dx
