"""Conv2DBackpropFilter in NumPy: the filter gradient as im2col and a GEMM.

TF's ``Conv2DBackpropFilter`` (core/kernels/conv_grad_filter_ops.cc) goes
through ``Eigen::SpatialConvolutionBackwardKernel``: the im2col matrix of the
input, then one contraction ``cols^T @ dY`` over all output pixels.

==================================  ==================================================
``conv2d_backprop_filter_direct``   loops (reference)
``conv2d_backprop_filter_gemm``     im2col then GEMM ``cols^T @ dY``
``conv2d_backprop_filter_winograd`` Winograd F(2x2, 3x3) run backwards: 16 GEMMs ``V^T @ (A dY A^T)``
``conv2d_backprop_filter``          picks one (the forward's rule)
==================================  ==================================================

Layouts and arguments as in conv_ops.py; ``filter_shape`` is the HWIO shape of ``w``.
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from .conv_2d import (as_floats, cast_like, conv_args_from_attrs, conv_geometry, im2col_view, pad_nhwc,
                      padded_slab, to_nhwc)
from .conv_ops import (WINOGRAD_AT, WINOGRAD_G2, choose_conv2d_algorithm, requested_algorithm, winograd_combine,
                       winograd_input_transform)
from . import work_sharder
from .work_sharder import SingleThreadedBlas, gemm, in_worker, run_blocks, scratch, sharded_matmul, split_blocks

__all__ = ["conv2d_backprop_filter", "conv2d_backprop_filter_direct", "conv2d_backprop_filter_gemm",
           "conv2d_backprop_filter_winograd"]

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


def conv2d_backprop_filter_gemm(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                                block_bytes=None):
    """Filter gradient as TF/Eigen computes it: im2col, then one GEMM
    ``dW(kh*kw*C, K) = cols(N*Ho*Wo, kh*kw*C)^T @ dY(N*Ho*Wo, K)``.

    The contraction runs over all ``N*Ho*Wo`` output pixels; it is blocked
    over images (partial sums added at the end), which is the same GEMM with
    its inner dimension split.
    """
    x, dy = as_floats(x, dy)
    kh, kw, C, K = (int(s) for s in filter_shape)
    g = conv_geometry(x.shape, (kh, kw, C, K), strides, padding, dilations)
    N, Ho, Wo = g["N"], g["Ho"], g["Wo"]
    if dy.shape != (N, Ho, Wo, K):
        raise ValueError(f"out_backprop shape {dy.shape} does not match the forward output "
                         f"{(N, Ho, Wo, K)} of input {x.shape} and filter {tuple(filter_shape)}")
    if kh == kw == 1 and g["sh"] == g["sw"] == 1 and not any(g[p] for p in ("pt", "pb", "pl", "pr")):
        return sharded_matmul(x.reshape(-1, C).T, dy.reshape(-1, K), np.empty((C, K), x.dtype)).reshape(1, 1, C, K)
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]

    def block(b):
        n0, n1, r0, r1 = b
        slab = padded_slab(x, n0, n1, r0 * sh - g["pt"], (r1 - r0 - 1) * sh + (kh - 1) * dh + 1,
                           -g["pl"], (Wo - 1) * sw + (kw - 1) * dw + 1, "im2col_pad")
        rows = im2col_view(slab, kh, kw, r1 - r0, Wo, (sh, sw), (dh, dw))
        patch = scratch("im2col", rows.shape, x.dtype)
        np.copyto(patch, rows)
        return sharded_matmul(patch.reshape(-1, kh * kw * C).T, dy[n0:n1, r0:r1].reshape(-1, K),
                              np.empty((kh * kw * C, K), x.dtype))

    if N * Ho * Wo == 0:
        return np.zeros((kh, kw, C, K), dtype=x.dtype)
    parts = run_blocks(block, split_blocks(N, Ho, Wo * kh * kw * C * 4, block_bytes, Wo))
    dw = parts[0]
    for p in parts[1:]:
        dw += p
    return dw.reshape(kh, kw, C, K)


def conv2d_backprop_filter_winograd(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                                    block_bytes=None):
    """Filter gradient of a 3x3, stride-1, dilation-1 conv with Winograd F(2x2, 3x3).

    The forward computes every 2x2 output tile as ``Y = A^T [U * V] A`` with
    ``U = (G (x) G) w`` (16 values per (c, k)) and ``V = B^T d B`` (the 4x4
    input tile). Everything is linear in ``w``, so its gradient is the same
    algorithm transposed::

        dU[p](C, K) = sum over tiles of V[p](tiles, C)^T @ (A dY A^T)[p](tiles, K)
        dW(9, C*K)  = (G (x) G)^T (9, 16) @ dU(16, C*K)

    16 GEMMs over all output tiles instead of one 9x larger im2col GEMM:
    2.25x fewer multiplies, and no 9x im2col copy (the input transform is the
    forward's). Output sizes that are odd get a zero row/column of ``dY``.
    """
    x, dy = as_floats(x, dy)
    kh, kw, C, K = (int(s) for s in filter_shape)
    g = conv_geometry(x.shape, (kh, kw, C, K), strides, padding, dilations)
    if (kh, kw, g["sh"], g["sw"], g["dh"], g["dw"]) != (3, 3, 1, 1, 1, 1):
        raise ValueError("conv2d_backprop_filter_winograd supports 3x3 filters with stride 1 and dilation 1 "
                         f"only, got filter {(kh, kw)}, strides {strides}, dilations {dilations}")
    N, Ho, Wo = g["N"], g["Ho"], g["Wo"]
    if dy.shape != (N, Ho, Wo, K):
        raise ValueError(f"out_backprop shape {dy.shape} does not match the forward output "
                         f"{(N, Ho, Wo, K)} of input {x.shape} and filter {tuple(filter_shape)}")
    if N * Ho * Wo == 0:
        return np.zeros((kh, kw, C, K), dtype=x.dtype)
    th, tw = -(-Ho // 2), -(-Wo // 2)
    AT = WINOGRAD_AT

    def dy_transform(n0, n1, r0, r1, D):
        """D[a, b] = (A dY A^T)[a, b] for the 2x2 dY tiles of these images and tile rows."""
        nb, nr = n1 - n0, r1 - r0
        src = padded_slab(dy, n0, n1, 2 * r0, 2 * nr, 0, 2 * tw, "wino_dy")    # zeros past odd edges
        cols = [src[:, :, j::2] for j in range(2)]                          # (nb, 2nr, tw, K)
        T = scratch("wino_dyT", (4, nb, 2 * nr, tw, K), x.dtype)
        for b in range(4):
            winograd_combine(AT[:, b], cols, out=T[b])
        rows = [T[:, :, i::2] for i in range(2)]                            # (4, nb, nr, tw, K)
        for a in range(4):
            winograd_combine(AT[:, a], rows, out=D[a])

    def block(b):
        n0, n1, r0, r1 = b
        nb, nr = n1 - n0, r1 - r0
        P = nb * nr * tw
        V = scratch("wino_V", (4, 4, nb, nr, tw, C), x.dtype)
        winograd_input_transform(x, g["pt"], g["pl"], n0, n1, r0, r1, tw, V)
        D = scratch("wino_D", (4, 4, nb, nr, tw, K), x.dtype)
        dy_transform(n0, n1, r0, r1, D)
        V16, D16 = V.reshape(16, P, C), D.reshape(16, P, K)
        part = np.empty((16, C, K), dtype=x.dtype)

        def gemms(q):                # one BLAS call each: a stacked matmul of transposed views is not BLAS
            for p in range(q[0], q[1]):
                gemm(V16[p].T, D16[p], part[p])
        if len(blocks) == 1 and not in_worker():
            # few tiles (a deep layer on a small image): one block, so the
            # threads share its 16 GEMMs instead
            step = -(-16 // work_sharder.NUM_THREADS)
            run_blocks(gemms, [(q, min(q + step, 16), 0, 0) for q in range(0, 16, step)])
        else:
            gemms((0, 16))
        return part

    blocks = split_blocks(N, th, tw * 16 * (C + K) * x.itemsize, block_bytes, tw)
    parts = run_blocks(block, blocks)
    dU = parts[0]
    for p in parts[1:]:
        dU += p
    G2t = np.ascontiguousarray(WINOGRAD_G2.T, dtype=x.dtype)                # (9, 16)
    with SingleThreadedBlas():           # a small GEMM: waking BLAS threads costs more than it saves
        return (G2t @ dU.reshape(16, C * K)).reshape(3, 3, C, K)


def conv2d_backprop_filter(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                           algorithm="auto"):
    """Gradient of ``conv2d(x, w)`` with respect to ``w``, given ``dy``.

    ``algorithm``: ``"auto"`` -> im2col + GEMM when the GEMMs run on the C
    SGEMM, else the forward's rule (:func:`~.conv_ops.choose_conv2d_algorithm`
    on the filter and ``dy``'s pixels: Winograd for deep 3x3 stride-1 layers);
    ``"gemm"``/``"im2col"`` -> :func:`conv2d_backprop_filter_gemm`;
    ``"winograd"`` -> :func:`conv2d_backprop_filter_winograd` (GEMM on a conv
    it cannot do: not 3x3, stride 1, dilation 1); ``"direct"`` -> loops.
    """
    requested = algorithm if algorithm not in (None, "auto") else None
    algo = (requested or requested_algorithm(None)).lower()
    if algo == "direct":
        return conv2d_backprop_filter_direct(x, dy, filter_shape, strides, padding, dilations)
    x, dy = as_floats(x, dy)
    fs = tuple(int(s) for s in filter_shape)
    if algo == "auto":
        # With the C SGEMM, one big GEMM beats Winograd's 16 thin ones and transforms
        # (measured, batch 8: 0.7x its time at 56x56x64 and 7x7x512, 1.0x at 28x28x128)
        native = work_sharder.native_gemm_library() is not None
        algo = "gemm" if native else choose_conv2d_algorithm(fs, strides, dilations, dy.shape)
    if algo == "winograd":
        if fs[:2] == (3, 3) and tuple(conv_geometry(x.shape, fs, strides, padding, dilations)[k]
                                      for k in ("sh", "sw", "dh", "dw")) == (1, 1, 1, 1):
            return conv2d_backprop_filter_winograd(x, dy, fs, strides, padding, dilations)
    return conv2d_backprop_filter_gemm(x, dy, fs, strides, padding, dilations)


# ----------------------------------------------------------------------------
# Kernel registration (TF: REGISTER_KERNEL_BUILDER(Name("Conv2DBackpropFilter")...)
# in core/kernels/conv_grad_filter_ops.cc)
# ----------------------------------------------------------------------------

@register_kernel("Conv2DBackpropFilter", type_constraint=_FLOAT)
def _conv2d_backprop_filter_kernel(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                   explicit_paddings, data_format, dilations):
    s, p, d = conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations)
    fs = [int(v) for v in np.asarray(filter_sizes).reshape(-1)]
    dw = conv2d_backprop_filter(to_nhwc(input, data_format), to_nhwc(out_backprop, data_format),
                                fs, s, p, d)
    return cast_like(dw, input)
