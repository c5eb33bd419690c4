"""Conv2D forward in the speed layer: im2col + GEMM by blocks on threads, and the dispatch.

The reference (``aicslib/kernels/conv_ops.py``) builds the whole im2col matrix
and makes one GEMM. Here each block of output rows copies only its own patch
rows into a reused scratch buffer (in cache while its GEMM reads them), the
blocks run on the work sharder's threads, the GEMM is the C SGEMM, and a fused
conv's output stage (``epilogue``) runs on each block while it is in cache.
:func:`conv2d` picks the algorithm (``conv_policy.py``) among this im2col,
Winograd (``conv_winograd.py``) and the reference's direct loops.
"""
import numpy as np

from ..kernels.conv_2d import as_floats, conv_geometry, im2col_view
from ..kernels.conv_ops import conv2d_direct, resolve_algorithm
from . import c_sgemm, work_sharder
from .conv_policy import choose_conv2d_algorithm, winograd_tile_size
from .conv_winograd import conv2d_winograd, conv2d_winograd_f4
from .work_sharder import padded_slab, run_blocks, scratch, sharded_matmul, split_blocks

__all__ = ["conv2d", "conv2d_im2col", "epilogue_by_rows"]


def conv2d_im2col(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None, epilogue=None,
                  out=None):
    """im2col + GEMM: ``Y(N*Ho*Wo, K) = cols(N*Ho*Wo, kh*kw*C) @ W(kh*kw*C, K)``.

    ``im2col_view`` gives the patch matrix as a strided view of the padded
    input; each block of its rows is copied into a contiguous buffer and
    multiplied by the (reshaped, already contiguous) HWIO filter, writing
    straight into the NHWC output. A 1x1, stride-1 convolution needs no
    im2col at all: the NHWC input already *is* the ``(N*H*W, C)`` matrix.
    Blocks of output rows (``split_blocks``) run on the work sharder's threads.
    ``epilogue``: see :func:`conv2d`. ``out``: an ``(N, Ho, Wo, K)`` array (a strided view
    too: the input gradient by phases writes each phase into its pixels of ``dx``) to write
    the result into; a block whose part of it is not contiguous is computed in a scratch
    buffer and copied there while in cache.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = g["N"], g["C"], g["K"], g["kh"], g["kw"], g["Ho"], g["Wo"]
    w2 = w.reshape(kh * kw * C, K)
    if out is not None and (out.shape != (N, Ho, Wo, K) or out.dtype != x.dtype):
        raise ValueError(f"conv2d_im2col: out must be {x.dtype}{[N, Ho, Wo, K]}, got {out.dtype}{list(out.shape)}")
    if (kh == kw == 1 and g["sh"] == g["sw"] == 1 and not any(g[p] for p in ("pt", "pb", "pl", "pr"))
            and (out is None or out.flags.c_contiguous)):
        y = np.empty((N, Ho, Wo, K), x.dtype) if out is None else out
        sharded_matmul(x.reshape(-1, C), w2, y.reshape(-1, K))
        epilogue_by_rows(epilogue, y.reshape(-1, K))
        return y
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]
    y = np.empty((N, Ho, Wo, K), dtype=x.dtype) if out is None else out
    implicit = _implicit_gemm(x, w2, y, g)

    def block(b):
        n0, n1, r0, r1 = b
        if implicit is not None:
            lib, xc, wc = implicit
            c_sgemm.conv2d_implicit(lib, xc, wc, y[n0:n1, r0:r1], g, n0, n1, r0, r1)
            if epilogue is not None:
                epilogue(y[n0:n1, r0:r1])
            return
        # the padded input rows this block of output rows reads, then its im2col view
        slab = padded_slab(x, n0, n1, r0 * sh - g["pt"], (r1 - r0 - 1) * sh + (kh - 1) * dh + 1,
                           -g["pl"], (Wo - 1) * sw + (kw - 1) * dw + 1, "im2col_pad")
        rows = im2col_view(slab, kh, kw, r1 - r0, Wo, (sh, sw), (dh, dw))   # (nb, rows, Wo, kh, kw, C)
        patch = scratch("im2col", rows.shape, x.dtype)           # the im2col block, contiguous
        np.copyto(patch, rows)
        dst = y[n0:n1, r0:r1]
        if dst.flags.c_contiguous:
            sharded_matmul(patch.reshape(-1, kh * kw * C), w2, dst.reshape(-1, K))
        else:
            res = scratch("im2col_out", dst.shape, x.dtype)
            sharded_matmul(patch.reshape(-1, kh * kw * C), w2, res.reshape(-1, K))
            np.copyto(dst, res)
        if epilogue is not None:
            epilogue(dst)

    if N * Ho * Wo:
        run_blocks(block, split_blocks(N, Ho, Wo * kh * kw * C * 4, block_bytes, Wo))
    return y


def _implicit_gemm(x, w2, y, g):
    """``(library, x, w2)`` when a strided conv runs as the C implicit GEMM
    (:func:`~.c_sgemm.conv2d_implicit`), else None.

    A strided convolution's im2col matrix is no view of the input that a GEMM could read
    directly, and the im2col path's copy of it cost issue 29's 56x56x64 stride-2 layer about a
    fifth of its time; the implicit GEMM reads each row of A where it lies instead, as oneDNN's
    direct convolution needs no copy either (benchmarks/README.md, "Strided Conv2D forward").
    Stride 1 keeps the im2col path and Winograd, which the thresholds of conv_policy.py were
    measured with.
    """
    if (g["sh"], g["sw"]) == (1, 1) or x.dtype != np.float32 or g["C"] > c_sgemm.CONV_MAX_CHANNELS:
        return None
    if not (y.flags.c_contiguous and y.dtype == np.float32):
        return None
    lib = work_sharder.native_gemm_library()
    if lib is None:
        return None
    return lib, np.ascontiguousarray(x), np.ascontiguousarray(w2)


def epilogue_by_rows(epilogue, y):
    """``epilogue`` applied in place to ``y`` (NHWC or ``(pixels, K)``), its rows split over the threads."""
    if epilogue is None:
        return y
    rows = y.shape[0] if y.ndim == 2 else y.shape[0] * y.shape[1]
    flat = y.reshape(rows, -1) if y.ndim == 2 else y.reshape(y.shape[0] * y.shape[1], y.shape[2], y.shape[3])
    step = max(1, -(-rows // work_sharder.NUM_THREADS))
    run_blocks(lambda b: epilogue(flat[b[0]:b[1]]), [(r, min(r + step, rows), 0, 0) for r in range(0, rows, step)])
    return y


def conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), algorithm="auto", epilogue=None):
    """2-D convolution (NHWC input, HWIO filter) with a choice of algorithm: the speed layer's Conv2D.

    ``algorithm``: ``"auto"`` (default: ``aicslib.flags.CONV_ALGO``, i.e. the
    environment variable ``AICS_CONV_ALGO``, and if that is ``auto`` too, the
    rule of :func:`~.conv_policy.choose_conv2d_algorithm`), ``"direct"``, ``"im2col"`` or
    ``"winograd"``. A forced ``"winograd"`` on a conv it cannot do (not 3x3,
    stride 1, dilation 1) falls back to im2col when it came from the
    environment, and raises when it was passed explicitly. An explicit
    ``"winograd"`` is F(2x2, 3x3); otherwise the tile is
    :func:`winograd_tile_size`'s (F(4x4, 3x3) on big deep layers).

    ``epilogue(y_block)``, when given, is applied in place to each block of
    the output as soon as it is computed, on the thread that computed it
    (a fused bias and activation: TF's output kernel, run while the block is
    in cache and spread over the threads). A block may include the rows and
    columns of a Winograd tile that lie past the output; they are cropped.
    An epilogue with a ``c_output_stage`` attribute (its stage as C code takes
    it, ``fused_output_stage.OutputStage.c_arguments``; None: no C form) is applied by the C
    Winograd output transform itself, to each tile's pixels as it writes them
    (TF's oneDNN "post-ops"), instead of being called.
    """
    x, w = as_floats(x, w)
    algo, explicit = resolve_algorithm(algorithm, w.shape, strides, dilations, x.shape, choose_conv2d_algorithm)
    if algo == "winograd" and not explicit:
        g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
        if winograd_tile_size(w.shape, (g["N"], g["Ho"], g["Wo"])) == 4:
            return conv2d_winograd_f4(x, w, strides, padding, dilations, epilogue=epilogue)
    if algo == "direct":
        y = conv2d_direct(x, w, strides, padding, dilations)
        return y if epilogue is None else epilogue_by_rows(epilogue, y)
    fn = {"direct": conv2d_direct, "im2col": conv2d_im2col, "winograd": conv2d_winograd}[algo]
    return fn(x, w, strides, padding, dilations, epilogue=epilogue)

