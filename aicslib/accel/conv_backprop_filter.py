"""Conv2DBackpropFilter in the speed layer: im2col + GEMM by blocks, or Winograd run backwards.

The reference (``aicslib/kernels/conv_grad_filter_ops.py``) builds the whole
im2col matrix and makes one GEMM ``cols^T @ dY``. Here the same runs by blocks
on the work sharder's threads, and a 3x3 stride-1 filter gradient can run as
Winograd F(2x2) or F(4x4) transposed: T GEMMs ``V^T @ (A dY A^T)`` instead of
one 9x larger im2col GEMM (:func:`conv2d_backprop_filter_winograd`).
"""
import threading

import numpy as np

from ..kernels.conv_2d import as_floats, backprop_filter_operands, conv_geometry, im2col_view
from ..kernels.conv_grad_filter_ops import conv2d_backprop_filter_direct
from ..kernels.conv_ops import requested_algorithm
from . import c_winograd, work_sharder
from .conv_policy import choose_conv2d_algorithm, native_winograd_rule, winograd_tile_size
from .winograd_transforms import (WINOGRAD4_G2, WINOGRAD_G2, grad_output_transform2, grad_output_transform4,
                                  native_winograd_transforms, winograd4_input_transform, winograd_input_transform)
from .work_sharder import (SingleThreadedBlas, batched_gemm, in_worker, padded_slab, run_blocks, scratch,
                           sharded_matmul, split_blocks)

__all__ = ["conv2d_backprop_filter", "conv2d_backprop_filter_gemm", "conv2d_backprop_filter_winograd"]


def conv2d_backprop_filter_gemm(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                                block_bytes=None):
    """Filter gradient as TF/Eigen computes it: im2col, then one GEMM
    ``dW(kh*kw*C, K) = cols(N*Ho*Wo, kh*kw*C)^T @ dY(N*Ho*Wo, K)``.

    The contraction runs over all ``N*Ho*Wo`` output pixels; it is blocked
    over images on the threads (partial sums added at the end), which is the
    same GEMM with its inner dimension split.
    """
    x, dy, g = backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "C", "K", "kh", "kw", "Ho", "Wo"))
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
                                    block_bytes=None, tile=2):
    """Filter gradient of a 3x3, stride-1, dilation-1 conv with Winograd F(m x m, 3x3), ``m = tile``
    (2 or 4).

    The forward computes every m x m output tile as ``Y = A^T [U * V] A`` with
    ``U = (G (x) G) w`` ((m+2)^2 values per (c, k)) and ``V = B^T d B`` (the
    (m+2) x (m+2) input tile). Everything is linear in ``w``, so its gradient is
    the same algorithm transposed::

        dU[p](C, K) = sum over tiles of V[p](tiles, C)^T @ (A dY A^T)[p](tiles, K)
        dW(9, C*K)  = (G (x) G)^T (9, T) @ dU(T, C*K)

    T = 16 (or 36) GEMMs over all output tiles instead of one 9x larger im2col
    GEMM: 2.25x (or 4x) fewer multiplies, and no 9x im2col copy (the input
    transform is the forward's). Output sizes that are not multiples of m get
    zero rows/columns of ``dY``. Float32 operands use the C transforms where
    they are built (``winograd_transforms.native_winograd_transforms``).
    """
    x, dy, g = backprop_filter_operands(x, dy, filter_shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = (g[k] for k in ("N", "C", "K", "kh", "kw", "Ho", "Wo"))
    if (kh, kw, g["sh"], g["sw"], g["dh"], g["dw"]) != (3, 3, 1, 1, 1, 1):
        raise ValueError("conv2d_backprop_filter_winograd supports 3x3 filters with stride 1 and dilation 1 "
                         f"only, got filter {(kh, kw)}, strides {strides}, dilations {dilations}")
    if tile not in (2, 4):
        raise ValueError(f"conv2d_backprop_filter_winograd: tile must be 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)), "
                         f"got {tile!r}")
    if N * Ho * Wo == 0:
        return np.zeros((kh, kw, C, K), dtype=x.dtype)
    m = tile
    a, T = m + 2, (m + 2) ** 2
    th, tw = -(-Ho // m), -(-Wo // m)
    lib = native_winograd_transforms(x) if c_winograd.handles(dy) else None
    input_transform = winograd_input_transform if m == 2 else winograd4_input_transform

    def dy_transform(n0, n1, r0, r1, D):
        """D[a, b] = (A dY A^T)[a, b] for the m x m dY tiles of these images and tile rows."""
        if lib is not None:
            c_winograd.grad_output_transform(lib, m, dy, m * r0, n0, n1, r1 - r0, tw, D)
        elif m == 2:
            grad_output_transform2(dy, n0, n1, r0, r1, tw, D)
        else:
            grad_output_transform4(dy, n0, n1, r0, r1, tw, D)

    def transformed(b):
        n0, n1, r0, r1 = b
        nb, nr = n1 - n0, r1 - r0
        V = scratch(f"wino{m}_V", (a, a, nb, nr, tw, C), x.dtype)
        input_transform(x, g["pt"], g["pl"], n0, n1, r0, r1, tw, V)
        D = scratch(f"wino{m}_D", (a, a, nb, nr, tw, K), x.dtype)
        dy_transform(n0, n1, r0, r1, D)
        P = nb * nr * tw
        return V.reshape(T, P, C).transpose(0, 2, 1), D.reshape(T, P, K)

    sums = {}                       # thread -> the sum of dU over the blocks it ran

    def block(b):
        Vt, D = transformed(b)
        mine = sums.get(threading.get_ident())
        if mine is None:
            mine = sums[threading.get_ident()] = np.empty((T, C, K), dtype=x.dtype)
            batched_gemm(Vt, D, mine)
        else:
            batched_gemm(Vt, D, mine, accumulate=True)

    blocks = split_blocks(N, th, tw * T * (C + K) * x.itemsize, block_bytes, tw)
    if len(blocks) == 1 and not in_worker() and work_sharder.NUM_THREADS > 1:
        # few tiles (a deep layer on a small image): one block, so the threads share its T GEMMs instead
        Vt, D = transformed(blocks[0])
        dU = np.empty((T, C, K), dtype=x.dtype)
        step = -(-T // work_sharder.NUM_THREADS)
        run_blocks(lambda q: batched_gemm(Vt[q[0]:q[1]], D[q[0]:q[1]], dU[q[0]:q[1]]),
                   [(q, min(q + step, T), 0, 0) for q in range(0, T, step)])
    else:
        run_blocks(block, blocks)
        dU, *rest = sums.values()
        for part in rest:
            dU += part
    G2t = np.ascontiguousarray((WINOGRAD_G2 if m == 2 else WINOGRAD4_G2).T, dtype=x.dtype)    # (9, T)
    with SingleThreadedBlas():           # a small GEMM: waking BLAS threads costs more than it saves
        return (G2t @ dU.reshape(T, C * K)).reshape(3, 3, C, K)


def conv2d_backprop_filter(x, dy, filter_shape, strides=(1, 1), padding="VALID", dilations=(1, 1),
                           algorithm="auto"):
    """Gradient of ``conv2d(x, w)`` with respect to ``w``, given ``dy``.

    ``algorithm``: ``"auto"`` -> the forward's rule and tile size
    (:func:`~.conv_policy.choose_conv2d_algorithm` and ``winograd_tile_size`` on the
    filter and ``dy``'s pixels) where the C Winograd transforms build; else
    im2col + GEMM when the GEMMs run on the C SGEMM, else the forward's rule
    with F(2x2, 3x3);
    ``"gemm"``/``"im2col"`` -> :func:`conv2d_backprop_filter_gemm`;
    ``"winograd"`` -> :func:`conv2d_backprop_filter_winograd` with F(2x2, 3x3) (GEMM
    on a conv it cannot do: not 3x3, stride 1, dilation 1); ``"direct"`` -> loops.
    """
    requested = algorithm if algorithm not in (None, "auto") else None
    algo = (requested or requested_algorithm(None)).lower()
    if algo == "direct":
        return conv2d_backprop_filter_direct(x, dy, filter_shape, strides, padding, dilations)
    x, dy = as_floats(x, dy)
    fs = tuple(int(s) for s in filter_shape)
    tile = 2
    if algo == "auto":
        if native_winograd_rule():
            # With the C transforms the forward's rule and tile fit the filter gradient too
            # (benchmarks/README.md, "Conv2DBackpropFilter")
            algo = choose_conv2d_algorithm(fs, strides, dilations, dy.shape)
            tile = winograd_tile_size(fs, dy.shape) if algo == "winograd" else 2
        elif work_sharder.native_gemm_library() is not None:
            # With the C SGEMM and NumPy's transforms, one big GEMM beats Winograd's 16 thin
            # ones (benchmarks/README.md, "Conv2DBackpropFilter")
            algo = "gemm"
        else:
            algo = choose_conv2d_algorithm(fs, strides, dilations, dy.shape)
    if algo == "winograd":
        if fs[:2] == (3, 3) and tuple(conv_geometry(x.shape, fs, strides, padding, dilations)[k]
                                      for k in ("sh", "sw", "dh", "dw")) == (1, 1, 1, 1):
            return conv2d_backprop_filter_winograd(x, dy, fs, strides, padding, dilations, tile=tile)
    return conv2d_backprop_filter_gemm(x, dy, fs, strides, padding, dilations)

