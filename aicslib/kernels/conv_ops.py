"""Conv2D forward in NumPy: direct loops, im2col + GEMM, Winograd, and the rule that picks one.

Exercise 5.7 asks how TensorFlow computes ``Conv2D`` on a CPU. TensorFlow's
``Conv2DOp::Compute`` (core/kernels/conv_ops.cc) checks its parameters,
computes the output shape (``GetWindowedOutputSize``), and then dispatches:
1x1 convolutions and "whole image" filters go straight to a GEMM
(``LaunchConv2DOp`` -> ``functor::MatMulConvFunctor``), deep convolutions may go
to ``LaunchDeepConvOp``, and everything else to Eigen's ``SpatialConvolution``,
which *is* an im2col ("extract image patches") followed by a tensor
contraction, i.e. a GEMM.

This module has one readable function per algorithm, all on NumPy arrays with
TensorFlow's layouts: input NHWC ``(N, H, W, C)``, filter HWIO ``(kh, kw, C, K)``,
output NHWC ``(N, Ho, Wo, K)``. Every function takes ``(x, w, strides, padding,
dilations)`` with ``strides``/``dilations`` as ``(sh, sw)`` and ``padding`` one of
``"SAME"``, ``"VALID"`` or explicit ``[(top, bottom), (left, right)]``.

=========================  ============================================================
``conv2d_direct``          loops over output pixels and filter taps (reference, slow)
``conv2d_im2col``          im2col through ``as_strided`` (no copy until the GEMM
                           needs it) + one GEMM ``(N*Ho*Wo, kh*kw*C) @ (kh*kw*C, K)``
``conv2d_winograd``        Winograd F(2x2, 3x3): the 36 multiplies per 2x2 output
                           tile become 16 (2.25x fewer), done as 16 GEMMs
``conv2d_winograd_f4``     Winograd F(4x4, 3x3): 36 multiplies per 4x4 tile (4x fewer),
                           36 GEMMs; the auto rule's choice on big deep layers
``conv2d_nchw``            NCHW/OIHW in and out, through NHWC (``conv2d_im2col_nchw``:
                           Caffe's per-image GEMM)
``conv2d``                 picks an algorithm (rule in ``choose_conv2d_algorithm``)
=========================  ============================================================

Forcing an algorithm: pass ``algorithm="direct" | "im2col" | "winograd"`` to
:func:`conv2d`, or set the environment variable ``AICS_CONV_ALGO`` (read by
``aicslib.flags``; call ``aicslib.flags.reload()`` after changing it in a
running process). ``"auto"`` (the default) applies the rule.

Elsewhere: the backprops in conv_grad_input_ops.py / conv_grad_filter_ops.py,
depthwise convolution in depthwise_conv_op.py, the geometry they share in
conv_2d.py, and the blocking and threads that make them fast (measured on 2
Zen4 cores, see benchmarks/bench_conv.py) in work_sharder.py.

The ``Conv2D`` kernel registration is at the end of this file, as
``REGISTER_KERNEL_BUILDER`` is at the end of TF's conv_ops.cc.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.kernel_registry import register_kernel
from ..native import winograd_binding
from . import work_sharder
from .conv_2d import (as_floats, cast_like, conv_args_from_attrs, conv_geometry, from_nhwc, hw_pair,
                      im2col_view, pad_nhwc, padded_slab, to_nhwc)
from .conv_layout import nchw_to_nhwc, nhwc_to_nchw, oihw_to_hwio
from .work_sharder import (batched_gemm, gemm, run_blocks, run_blocks_overlapping, scratch, sharded_matmul,
                           split_blocks)

__all__ = [
    "conv2d", "conv2d_direct", "conv2d_im2col", "conv2d_winograd",
    "conv2d_nchw", "conv2d_im2col_nchw", "choose_conv2d_algorithm", "requested_algorithm",
    "conv2d_flops", "ALGORITHMS", "native_winograd_transforms", "native_winograd_rule",
    "NATIVE_WINOGRAD_MIN_CHANNELS", "NATIVE_WINOGRAD_MIN_TILES", "NATIVE_WINOGRAD4_MIN_TILES",
    "winograd_applicable", "winograd_filter_transform",
    "winograd_input_transform", "winograd_combine",
    "WINOGRAD_BT", "WINOGRAD_G", "WINOGRAD_AT", "WINOGRAD_G2",
    "WINOGRAD_MIN_CHANNELS", "WINOGRAD_MIN_PIXELS",
    "conv2d_winograd_f4", "winograd4_filter_transform", "winograd4_input_transform", "winograd_tile_size",
    "WINOGRAD4_BT", "WINOGRAD4_G", "WINOGRAD4_AT", "WINOGRAD4_G2", "WINOGRAD4_MIN_CHANNELS",
    "WINOGRAD4_PIXELS_PER_WEIGHT",
]

ALGORITHMS = ("direct", "im2col", "winograd")

#: Winograd is chosen (3x3, stride 1, dilation 1) when C_in and C_out are at
#: least this: with fewer channels its transforms cost more than the
#: multiplies it saves (measured: 0.8x the CPU time of im2col at 64 channels,
#: 1.0x at 48, 1.1-1.8x at 16-32).
WINOGRAD_MIN_CHANNELS = 64
#: ... and when the output has at least this many pixels (N*Ho*Wo): the
#: filter transform is paid once per call whatever the batch (measured
#: 7x7x512: 1.15x im2col's CPU time at batch 4, 0.88x at batch 8).
WINOGRAD_MIN_PIXELS = 384
#: Both thresholds are this many times higher when the GEMMs run on aicslib's C
#: SGEMM (``AICS_GEMM``, ``work_sharder.gemm``): its multiply-adds are about twice
#: as fast as the BLAS the figures above were measured with, so the transforms
#: weigh twice as much (measured with it, batch 8: 56x56x64 im2col 0.8x Winograd's
#: time, 28x28x128 1.15x, 7x7x512 0.85x).
NATIVE_GEMM_WINOGRAD_SCALE = 2

_F32 = np.float32
_FLOAT = {"T": [float16, bfloat16, float32, float64]}


def conv2d_flops(x_shape, w_shape, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    """Multiply-adds x 2 of the direct convolution (the usual GFLOP/s convention)."""
    g = conv_geometry(x_shape, w_shape, strides, padding, dilations)
    return 2 * g["N"] * g["Ho"] * g["Wo"] * g["K"] * g["C"] * g["kh"] * g["kw"]


# ----------------------------------------------------------------------------
# Forward: direct loops
# ----------------------------------------------------------------------------

def conv2d_direct(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """The definition, as loops: for every output pixel, for every filter tap,
    multiply the input pixel's C channels by the tap's (C, K) matrix.

    ``y[n, oh, ow, k] = sum_{i, j, c} xp[n, oh*sh + i*dh, ow*sw + j*dw, c] * w[i, j, c, k]``

    The batch and channel sums are vectorised (``@``) so that the teaching
    example runs in seconds; the pixel and tap loops are explicit.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    xp = pad_nhwc(x, g["pt"], g["pb"], g["pl"], g["pr"])
    y = np.zeros((g["N"], g["Ho"], g["Wo"], g["K"]), dtype=x.dtype)
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(g["kh"]):
                for j in range(g["kw"]):
                    ih = oh * g["sh"] + i * g["dh"]
                    iw = ow * g["sw"] + j * g["dw"]
                    y[:, oh, ow, :] += xp[:, ih, iw, :] @ w[i, j]
    return y


# ----------------------------------------------------------------------------
# Forward: im2col + GEMM
# ----------------------------------------------------------------------------

def conv2d_im2col(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None, epilogue=None):
    """im2col + GEMM: ``Y(N*Ho*Wo, K) = cols(N*Ho*Wo, kh*kw*C) @ W(kh*kw*C, K)``.

    ``im2col_view`` gives the patch matrix as a strided view of the padded
    input; each block of its rows is copied into a contiguous buffer and
    multiplied by the (reshaped, already contiguous) HWIO filter, writing
    straight into the NHWC output. A 1x1, stride-1 convolution needs no
    im2col at all: the NHWC input already *is* the ``(N*H*W, C)`` matrix.
    ``epilogue``: see :func:`conv2d`.
    """
    x, w = as_floats(x, w)
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    N, C, K, kh, kw, Ho, Wo = g["N"], g["C"], g["K"], g["kh"], g["kw"], g["Ho"], g["Wo"]
    w2 = w.reshape(kh * kw * C, K)
    if kh == kw == 1 and g["sh"] == g["sw"] == 1 and not any(g[p] for p in ("pt", "pb", "pl", "pr")):
        y = sharded_matmul(x.reshape(-1, C), w2, np.empty((N, Ho, Wo, K), x.dtype).reshape(-1, K))
        return _epilogue_by_rows(epilogue, y).reshape(N, Ho, Wo, K)
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]
    y = np.empty((N, Ho, Wo, K), dtype=x.dtype)

    def block(b):
        n0, n1, r0, r1 = b
        # the padded input rows this block of output rows reads, then its im2col view
        slab = padded_slab(x, n0, n1, r0 * sh - g["pt"], (r1 - r0 - 1) * sh + (kh - 1) * dh + 1,
                           -g["pl"], (Wo - 1) * sw + (kw - 1) * dw + 1, "im2col_pad")
        rows = im2col_view(slab, kh, kw, r1 - r0, Wo, (sh, sw), (dh, dw))   # (nb, rows, Wo, kh, kw, C)
        patch = scratch("im2col", rows.shape, x.dtype)           # the im2col block, contiguous
        np.copyto(patch, rows)
        sharded_matmul(patch.reshape(-1, kh * kw * C), w2, y[n0:n1, r0:r1].reshape(-1, K))
        if epilogue is not None:
            epilogue(y[n0:n1, r0:r1])

    if N * Ho * Wo:
        run_blocks(block, split_blocks(N, Ho, Wo * kh * kw * C * 4, block_bytes, Wo))
    return y


def conv2d_im2col_nchw(x_nchw, w_oihw, strides=(1, 1), padding="VALID", dilations=(1, 1)):
    """Caffe's convolution: NCHW input, OIHW filter, per image
    ``Y(K, Ho*Wo) = W(K, C*kh*kw) @ cols(C*kh*kw, Ho*Wo)``.

    Here the im2col matrix is transposed relative to the NHWC version: one
    *column* per output pixel, and the GEMM's result is already the image's
    NCHW output.
    """
    x, w = as_floats(x_nchw, w_oihw)
    N, C, H, W = x.shape
    K, _, kh, kw = w.shape
    g = conv_geometry((N, H, W, C), (kh, kw, w.shape[1], K), strides, padding, dilations)
    Ho, Wo, sh, sw, dh, dw = g["Ho"], g["Wo"], g["sh"], g["sw"], g["dh"], g["dw"]
    xp = np.pad(x, ((0, 0), (0, 0), (g["pt"], g["pb"]), (g["pl"], g["pr"])))
    w2 = w.reshape(K, C * kh * kw)
    y = np.empty((N, K, Ho, Wo), dtype=x.dtype)
    s_n, s_c, s_h, s_w = xp.strides
    for n in range(N):
        cols = as_strided(xp[n], shape=(C, kh, kw, Ho, Wo),
                          strides=(s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw), writeable=False)
        sharded_matmul(w2, cols.reshape(C * kh * kw, Ho * Wo), y[n].reshape(K, Ho * Wo))
    return y


# ----------------------------------------------------------------------------
# Forward: Winograd F(2x2, 3x3)
# ----------------------------------------------------------------------------
# A 1-D F(2, 3) computes two outputs of a 3-tap correlation from 4 inputs with
# 4 multiplies instead of 6:   y = A^T [ (G g) * (B^T d) ]
# The 2-D version nests it:     Y = A^T [ (G g G^T) * (B^T d B) ] A
# on 4x4 input tiles d (stride 2, overlapping by 2) giving 2x2 output tiles Y:
# 16 multiplies instead of 36. Summed over the C input channels, the
# element-wise product becomes, for each of the 16 positions (a, b) of the tile,
# a GEMM  M[a,b](tiles, K) = V[a,b](tiles, C) @ U[a,b](C, K).

WINOGRAD_BT = np.array([[1, 0, -1, 0],
                        [0, 1, 1, 0],
                        [0, -1, 1, 0],
                        [0, 1, 0, -1]], dtype=_F32)      #: input transform B^T (4x4)
WINOGRAD_G = np.array([[1, 0, 0],
                       [0.5, 0.5, 0.5],
                       [0.5, -0.5, 0.5],
                       [0, 0, 1]], dtype=_F32)           #: filter transform G (4x3)
WINOGRAD_AT = np.array([[1, 1, 1, 0],
                        [0, 1, -1, -1]], dtype=_F32)     #: output transform A^T (2x4)


def _combine(coeffs, terms, out):
    """``out[...] = sum_i coeffs[i] * terms[i]``, one row of a transform matrix.

    The Winograd B^T and A^T matrices contain only 0 and +-1, so a row is a
    few additions/subtractions of whole arrays; zero coefficients cost nothing.
    A row whose non-zero entries share one magnitude (G's ``.5, -.5, .5``) is
    done as +-1 additions and a final scaling.
    """
    nz = [(float(c), t) for c, t in zip(coeffs, terms) if c != 0]
    scale = abs(nz[0][0])
    if all(abs(c) == scale for c, _ in nz) and scale != 1:
        _combine([c / scale for c, _ in nz], [t for _, t in nz], out)
        return np.multiply(out, scale, out=out)
    (c0, t0), rest = nz[0], nz[1:]
    if rest and c0 == 1 and abs(rest[0][0]) == 1:
        c1, t1 = rest.pop(0)
        (np.add if c1 == 1 else np.subtract)(t0, t1, out=out)
    elif rest and c0 == -1 and rest[0][0] == 1:
        c1, t1 = rest.pop(0)
        np.subtract(t1, t0, out=out)
    elif c0 == 1:
        np.copyto(out, t0)
    else:
        np.multiply(t0, c0, out=out)
    for c, t in rest:
        if c == 1:
            np.add(out, t, out=out)
        elif c == -1:
            np.subtract(out, t, out=out)
        else:
            out += c * t
    return out


#: G (x) G: the 2-D filter transform ``U = G g G^T`` of a flattened 3x3 filter
#: ``g`` is the 16x9 matrix product ``U.flat = (G (x) G) @ g.flat``.
WINOGRAD_G2 = np.kron(WINOGRAD_G, WINOGRAD_G)


def _winograd_geometry(algorithm, x, w, filter_transform, strides, padding, dilations):
    """Float operands and the geometry of a Winograd convolution (either tile size); the filter's
    shape comes from ``filter_transform`` (T, C, K) when a precomputed U replaces ``w``. Only 3x3
    filters at stride 1 and dilation 1 have a Winograd form here: anything else is refused."""
    x = as_floats(x)
    if filter_transform is None:
        x, w = as_floats(x, w)
        w_shape = w.shape
    else:
        w_shape = (3, 3) + tuple(filter_transform.shape[1:])
    g = conv_geometry(x.shape, w_shape, strides, padding, dilations)
    if (g["kh"], g["kw"], g["sh"], g["sw"], g["dh"], g["dw"]) != (3, 3, 1, 1, 1, 1):
        raise ValueError(f"{algorithm} supports 3x3 filters with stride 1 and dilation 1 only, "
                         f"got filter {w_shape[:2]}, strides {strides}, dilations {dilations}")
    return x, w, g


def winograd_filter_transform(w, rotate180=False):
    """``U = G g G^T`` for every (c, k): HWIO (3, 3, C, K) -> (16, C, K).

    All C*K filters at once as one GEMM ``(G (x) G) (16, 9) @ w (9, C*K)``,
    done in column blocks that fit in cache. ``rotate180`` transforms the
    filter turned by 180 degrees (used by the input gradient) by reversing
    the 9 columns of ``G (x) G`` instead of copying the filter.
    """
    return _transform_filters(w, WINOGRAD_G2, rotate180, 1 << 15, 2)


def _transform_filters(w, G2, rotate180, step, m):
    """``G2 (T, 9) @ w (9, C*K)`` in column blocks of ``step`` on the kernel threads; the
    180-degree turn reverses G2's 9 columns instead of copying the filter. A float32 filter
    goes through the C transform of F(m x m, 3x3) where it builds (``G g G^T`` per filter:
    the GEMM's inner dimension of 9 keeps it far below its peak)."""
    _, _, C, K = w.shape
    w = np.ascontiguousarray(w)
    lib = winograd_binding.library() if w.dtype == np.float32 else None
    if lib is not None:
        U = np.empty((G2.shape[0], C, K), dtype=w.dtype)
        c_step = max(1, step // max(K, 1))
        run_blocks(lambda b: winograd_binding.filter_transform(lib, m, w, U, b[0], b[1], rotate180),
                   [(c0, min(c0 + c_step, C), 0, 0) for c0 in range(0, C, c_step)])
        return U
    G2 = np.ascontiguousarray(G2[:, ::-1] if rotate180 else G2, dtype=w.dtype)
    src = w.reshape(9, C * K)
    U = np.empty((G2.shape[0], C * K), dtype=w.dtype)
    run_blocks(lambda b: gemm(G2, src[:, b[0]:b[1]], U[:, b[0]:b[1]]),
               [(s0, min(s0 + step, C * K), 0, 0) for s0 in range(0, C * K, step)])
    return U.reshape(G2.shape[0], C, K)


def native_winograd_transforms(x):
    """The C library of Winograd's transforms (``aicslib/native/src/aics_winograd.c``: one pass
    over the tiles instead of one per non-zero of B^T or A^T) for a float32 input it handles,
    or None: the NumPy transforms below then do the work (where no C compiler exists)."""
    return winograd_binding.library() if winograd_binding.handles(x) else None


#: With the C transforms, a Winograd block's GEMMs may be this thin (tiles), so that each
#: thread runs its own images start to end instead of the threads meeting after each phase
#: (each meeting costs 30-50 us: waking a pool thread) ...
NATIVE_WINOGRAD_MIN_GEMM_ROWS = 96
#: ... when the channels are at most this many (beyond, each block packing its own copy of
#: the 16 or 36 transformed filters costs more than the meetings) ...
NATIVE_WINOGRAD_THIN_MAX_CHANNELS = 128
#: ... and when each block still has this many GEMM flops (less is faster on one thread).
NATIVE_WINOGRAD_MIN_BLOCK_FLOPS = 16e6


def winograd_min_gemm_rows(lib, positions, C, K):
    """The fewest GEMM rows (tiles) of a block of a Winograd conv with ``positions`` (16 or 36)
    products, or None for ``split_blocks``' default; see ``NATIVE_WINOGRAD_MIN_GEMM_ROWS``.
    Measured on 2 Zen5 cores, 4x28x28x64 F(4x4): 0.41 ms split by images, 0.55 ms by phases."""
    if lib is None or max(C, K) > NATIVE_WINOGRAD_THIN_MAX_CHANNELS:
        return None
    return max(NATIVE_WINOGRAD_MIN_GEMM_ROWS, int(-(-NATIVE_WINOGRAD_MIN_BLOCK_FLOPS // (2 * positions * C * K))))


def winograd_input_transform(x, pt, pl, n0, n1, r0, r1, tw, V):
    """``V[a, b] = B^T d B`` for the 4x4 input tiles of images ``n0:n1``, tile rows ``r0:r1``.

    Tile ``(r, q)`` (output pixels ``2r..2r+1, 2q..2q+1``) reads input rows
    ``2r - pt .. 2r + 3 - pt`` and columns ``2q - pl .. 2q + 3 - pl`` (zeros
    outside ``x``). ``V`` has shape ``(4, 4, n1-n0, r1-r0, tw, C)``. Shared by
    the forward and the Winograd filter gradient (conv_grad_filter_ops.py).
    """
    lib = native_winograd_transforms(x)
    if lib is not None:
        return winograd_binding.input_transform(lib, 2, x, 2 * r0 - pt, -pl, n0, n1, r1 - r0, tw, V)
    nb, nr, C = n1 - n0, r1 - r0, x.shape[3]
    BT = WINOGRAD_BT
    # zero-padded input rows 2*r0 .. 2*r1+1 (tile row r reads rows 2r .. 2r+3)
    xp = padded_slab(x, n0, n1, 2 * r0 - pt, 2 * nr + 2, -pl, 2 * tw + 2, "wino_pad")
    # columns first: Tc[b] = sum_j BT[b, j] * (column 2q+j), all rows
    cols = [xp[:, :, j: j + 2 * tw: 2] for j in range(4)]                 # (nb, 2nr+2, tw, C)
    Tc = scratch("wino_T", (4, nb, 2 * nr + 2, tw, C), x.dtype)
    for bb in range(4):
        _combine(BT[bb], cols, out=Tc[bb])
    # then rows: V[a, b] = sum_i BT[a, i] * Tc[b][row 2r+i]   (all four b at once)
    rows = [Tc[:, :, i: i + 2 * nr: 2] for i in range(4)]                 # (4, nb, nr, tw, C)
    for a in range(4):
        _combine(BT[a], rows, out=V[a])
    return V


def winograd_combine(coeffs, terms, out):
    """``out[...] = sum_i coeffs[i] * terms[i]`` (one row of a Winograd transform matrix)."""
    return _combine(coeffs, terms, out)


def conv2d_winograd(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None,
                    filter_transform=None, epilogue=None):
    """Winograd F(2x2, 3x3) convolution (3x3 filter, stride 1, dilation 1).

    1. Filter transform ``U = G g G^T``                   -> (16, C, K)
    2. Input transform  ``V = B^T d B`` per 4x4 tile d     -> (16, tiles, C)
    3. 16 GEMMs         ``M[p] = V[p] @ U[p]``             -> (16, tiles, K)
    4. Output transform ``Y = A^T M A`` per tile           -> 2x2 outputs per tile

    The transforms of steps 2 and 4 are separable, so they are applied as a
    column pass and a row pass over all tiles at once (``d B`` then
    ``B^T (.)``), one array operation per non-zero of ``WINOGRAD_BT`` /
    ``WINOGRAD_AT``; float32 inputs use the C transforms where they build
    (``native_winograd_transforms``: one pass each). Odd output sizes are
    padded up to whole 2x2 tiles and cropped. Work is done in blocks of
    images (or tile rows) so that V and M stay in cache, and blocks run on ``NUM_THREADS`` threads; when there are
    too few tiles for several blocks (a deep layer on a small image) the
    threads split each phase instead (transforms by image, GEMMs by position).
    ``filter_transform`` may pass a precomputed U of shape (16, C, K) instead
    of ``w`` (a fixed filter, or the transposed U of the backprop below).
    ``epilogue``: see :func:`conv2d`.
    """
    x, w, g = _winograd_geometry("conv2d_winograd", x, w, filter_transform, strides, padding, dilations)
    return _winograd_conv(2, x, w, g, filter_transform, block_bytes, epilogue)


def _winograd2_output(M, y):
    """NumPy's F(2x2) output transform: ``y`` (nb, 2*nr, 2*tw, K) from ``M`` (4, 4, nb, nr, tw, K),
    ``Y = A^T M A`` as a row pass (all b at once) then a column pass written into the pixels."""
    _, _, nb, nr, tw, K = M.shape
    AT = WINOGRAD_AT
    S = scratch("wino_S", (2, 4, nb, nr, tw, K), M.dtype)       # S[i] = sum_a AT[i, a] M[a]
    for i in range(2):
        _combine(AT[i], [M[a] for a in range(4)], out=S[i])
    y6 = y.reshape(nb, nr, 2, tw, 2, K)                          # Y[i, j] = sum_b AT[j, b] S[i][b]
    for j in range(2):
        _combine(AT[j], [S[:, bb] for bb in range(4)], out=y6[:, :, :, :, j].transpose(2, 0, 1, 3, 4))


# ----------------------------------------------------------------------------
# Forward: Winograd F(4x4, 3x3)
# ----------------------------------------------------------------------------
# The same algorithm on 6x6 input tiles giving 4x4 output tiles (Lavin & Gray
# 2016, interpolation points 0, +-1, +-2, inf): 36 multiplies per 16 outputs
# instead of 144, i.e. 4x fewer than direct and 1.78x fewer than F(2x2, 3x3).
# The price is transform matrices with entries other than 0 and +-1 (more
# additions per tile, more float32 rounding: measured errors of about 1e-5 of
# the output's largest value at 256 channels instead of 5e-7; float64 stays
# exact to 1e-11). The GEMMs are what the big layers spend their time in, so
# the auto rule picks this tile for big deep layers (``winograd_tile_size``);
# the F(2x2) above stays the teaching version and what ``"winograd"`` forces.

WINOGRAD4_BT = np.array([[4, 0, -5, 0, 1, 0],
                         [0, -4, -4, 1, 1, 0],
                         [0, 4, -4, -1, 1, 0],
                         [0, -2, -1, 2, 1, 0],
                         [0, 2, -1, -2, 1, 0],
                         [0, 4, 0, -5, 0, 1]], dtype=_F32)     #: input transform B^T (6x6)
WINOGRAD4_G = np.array([[1 / 4, 0, 0],
                        [-1 / 6, -1 / 6, -1 / 6],
                        [-1 / 6, 1 / 6, -1 / 6],
                        [1 / 24, 1 / 12, 1 / 6],
                        [1 / 24, -1 / 12, 1 / 6],
                        [0, 0, 1]])                              #: filter transform G (6x3)
WINOGRAD4_AT = np.array([[1, 1, 1, 1, 1, 0],
                         [0, 1, -1, 2, -2, 0],
                         [0, 1, 1, 4, 4, 0],
                         [0, 1, -1, 8, -8, 1]], dtype=_F32)    #: output transform A^T (4x6)
#: G (x) G (36x9): ``U.flat = WINOGRAD4_G2 @ g.flat`` for a 3x3 filter ``g``.
WINOGRAD4_G2 = np.kron(WINOGRAD4_G, WINOGRAD4_G)


def _combine_grouped(coeffs, terms, out, tmp):
    """``out[...] = sum_i coeffs[i] * terms[i]`` for any coefficients.

    Terms whose coefficients share a magnitude are added first and scaled
    once (``-4 d1 - 4 d2 + d3 + d4`` is ``(d3 + d4) - 4 (d1 + d2)``): each
    pass over memory costs as much as the arithmetic. ``tmp`` (the shape of
    ``out``) holds the scaled groups.
    """
    groups = {}
    for c, t in zip(coeffs, terms):
        if c != 0:
            groups.setdefault(abs(float(c)), []).append((c > 0, t))
    order = sorted(groups, key=lambda m: (m != 1, m))        # the unscaled group straight into out
    for n, mag in enumerate(order):
        items = groups[mag]
        pos = [t for p, t in items if p]
        neg = [t for p, t in items if not p]
        scale = mag
        if not pos:
            pos, neg, scale = neg, [], -mag
        if n > 0 and scale == 1:
            for t in pos:
                np.add(out, t, out=out)
            for t in neg:
                np.subtract(out, t, out=out)
            continue
        dst = out if n == 0 else tmp
        if len(pos) == 1 and not neg and scale != 1:
            np.multiply(pos[0], scale, out=dst)
        else:
            if len(pos) >= 2:
                np.add(pos[0], pos[1], out=dst)
                pos = pos[2:]
            elif neg:
                np.subtract(pos[0], neg[0], out=dst)
                pos, neg = [], neg[1:]
            else:
                np.copyto(dst, pos[0])
                pos = []
            for t in pos:
                np.add(dst, t, out=dst)
            for t in neg:
                np.subtract(dst, t, out=dst)
            if scale != 1:
                np.multiply(dst, scale, out=dst)
        if n > 0:
            np.add(out, tmp, out=out)
    return out


def winograd4_filter_transform(w, rotate180=False):
    """``U = G g G^T`` of F(4x4, 3x3) for every (c, k): HWIO (3, 3, C, K) -> (36, C, K).

    As :func:`winograd_filter_transform`: one GEMM ``(G (x) G) (36, 9) @ w (9, C*K)``
    in column blocks; ``rotate180`` reverses the 9 columns instead of the filter.
    """
    return _transform_filters(w, WINOGRAD4_G2, rotate180, 1 << 14, 4)


def winograd4_input_transform(x, pt, pl, n0, n1, r0, r1, tw, V):
    """``V[a, b] = B^T d B`` for the 6x6 input tiles of images ``n0:n1``, tile rows ``r0:r1``.

    Tile ``(r, q)`` (output pixels ``4r..4r+3, 4q..4q+3``) reads input rows
    ``4r - pt .. 4r + 5 - pt`` and columns ``4q - pl .. 4q + 5 - pl`` (zeros
    outside ``x``). ``V`` has shape ``(6, 6, n1-n0, r1-r0, tw, C)``.
    """
    lib = native_winograd_transforms(x)
    if lib is not None:
        return winograd_binding.input_transform(lib, 4, x, 4 * r0 - pt, -pl, n0, n1, r1 - r0, tw, V)
    nb, nr, C = n1 - n0, r1 - r0, x.shape[3]
    BT = WINOGRAD4_BT
    xp = padded_slab(x, n0, n1, 4 * r0 - pt, 4 * nr + 2, -pl, 4 * tw + 2, "wino4_pad")
    cols = [xp[:, :, j: j + 4 * tw: 4] for j in range(6)]                 # (nb, 4nr+2, tw, C)
    Tc = scratch("wino4_T", (6, nb, 4 * nr + 2, tw, C), x.dtype)
    tmp = scratch("wino4_Ttmp", (nb, 4 * nr + 2, tw, C), x.dtype)
    for bb in range(6):
        _combine_grouped(BT[bb], cols, Tc[bb], tmp)
    rows = [Tc[:, :, i: i + 4 * nr: 4] for i in range(6)]                 # (6, nb, nr, tw, C)
    tmp = scratch("wino4_Vtmp", (6, nb, nr, tw, C), x.dtype)
    for a in range(6):
        _combine_grouped(BT[a], rows, V[a], tmp)
    return V


def conv2d_winograd_f4(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None,
                       filter_transform=None, epilogue=None):
    """Winograd F(4x4, 3x3) convolution (3x3 filter, stride 1, dilation 1).

    The steps of :func:`conv2d_winograd` with 6x6 input tiles and 4x4 output
    tiles: ``U = G g G^T`` (36, C, K); ``V = B^T d B`` (36, tiles, C); 36 GEMMs
    ``M[p] = V[p] @ U[p]``; ``Y = A^T M A``. Output sizes that are not
    multiples of 4 are padded up to whole tiles and cropped.
    ``filter_transform`` may pass a precomputed U (36, C, K) instead of ``w``.
    ``epilogue``: see :func:`conv2d`.
    """
    x, w, g = _winograd_geometry("conv2d_winograd_f4", x, w, filter_transform, strides, padding, dilations)
    return _winograd_conv(4, x, w, g, filter_transform, block_bytes, epilogue)


#: A^T (x) A^T (16, 36): F(4x4)'s output transform of a flattened 6x6 tile.
WINOGRAD4_AT2 = np.kron(WINOGRAD4_AT, WINOGRAD4_AT)


def _winograd4_output(M, y):
    """NumPy's F(4x4) output transform: ``y`` (nb, 4*nr, 4*tw, K) from ``M`` (6, 6, nb, nr, tw, K).

    As one GEMM ``Y(16, tiles*K) = (A^T (x) A^T)(16, 36) @ M(36, tiles*K)``: M is contiguous
    that way, and the 18 scaled additions per row of the separable form cost 3-4x more here
    (passes over memory with non-unit coefficients).
    """
    _, _, nb, nr, tw, K = M.shape
    Y = scratch("wino4_Y", (16, nb * nr * tw * K), M.dtype)
    gemm(WINOGRAD4_AT2.astype(M.dtype), M.reshape(36, -1), Y)
    np.copyto(y.reshape(nb, nr, 4, tw, 4, K), Y.reshape(4, 4, nb, nr, tw, K).transpose(2, 3, 0, 4, 1, 5))


# ----------------------------------------------------------------------------
# Winograd: the driver both tile sizes share
# ----------------------------------------------------------------------------

#: Per output tile size m: the filter and input transforms, NumPy's output transform, and the
#: work (tiles x C x K) from which one block's phases are shared by the threads (see below).
_WINOGRAD_FILTERS = {2: winograd_filter_transform, 4: winograd4_filter_transform}
_WINOGRAD_INPUTS = {2: winograd_input_transform, 4: winograd4_input_transform}
_WINOGRAD_NUMPY_OUTPUTS = {2: _winograd2_output, 4: _winograd4_output}
_WINOGRAD_PHASED_WORK = {2: 1 << 20, 4: 1 << 18}


def _winograd_conv(m, x, w, g, filter_transform, block_bytes, epilogue):
    """F(m x m, 3x3) on checked operands (``_winograd_geometry``): ``U`` (T = (m+2)^2 filter
    components), then per block of images or tile rows: ``V``, T GEMMs, the output pixels.

    Blocks keep V and M in cache and run on the threads while the calling thread transforms
    the filters (``run_blocks_overlapping``). When the tiles are too few for several blocks (a
    deep layer on a small image), the threads share each phase instead: the transforms by
    image (or tile row), the GEMMs by position.
    """
    N, C, K, Ho, Wo = g["N"], g["C"], g["K"], g["Ho"], g["Wo"]
    a, T = m + 2, (m + 2) ** 2
    th, tw = -(-Ho // m), -(-Wo // m)                  # tiles per column / row
    yfull = np.empty((N, m * th, m * tw, K), dtype=x.dtype)
    lib = native_winograd_transforms(x)
    input_transform = _WINOGRAD_INPUTS[m]
    c_stage = getattr(epilogue, "c_output_stage", None) if lib is not None else None

    def filters():
        return _WINOGRAD_FILTERS[m](w) if filter_transform is None else filter_transform

    def output_transform(n0, n1, r0, r1, M):
        """Output pixels of those tiles from M (a, a, nb, nr, tw, K), then the epilogue."""
        y = yfull[n0:n1, m * r0: m * r1]
        if lib is not None:
            winograd_binding.output_transform(lib, m, M, y, c_stage)
        else:
            _WINOGRAD_NUMPY_OUTPUTS[m](M, y)
        if epilogue is not None and c_stage is None:
            epilogue(y)

    def block(b, get_filters):
        """One block of tiles, start to end: transforms and T GEMMs on this thread."""
        n0, n1, r0, r1 = b
        P = (n1 - n0) * (r1 - r0) * tw
        V = scratch(f"wino{m}_V", (a, a, n1 - n0, r1 - r0, tw, C), x.dtype)
        input_transform(x, g["pt"], g["pl"], n0, n1, r0, r1, tw, V)
        M = scratch(f"wino{m}_M", (T, P, K), x.dtype)               # M[p] = V[p] @ U[p]
        batched_gemm(V.reshape(T, P, C), get_filters(), M)
        output_transform(n0, n1, r0, r1, M.reshape(a, a, n1 - n0, r1 - r0, tw, K))

    blocks = split_blocks(N, th, tw * T * max(C, K) * 4, block_bytes, tw,
                          winograd_min_gemm_rows(lib, T, C, K)) if N * th * tw else []
    threads = work_sharder.NUM_THREADS
    if not (len(blocks) == 1 and threads > 1 and th * tw * N * C * K >= _WINOGRAD_PHASED_WORK[m]):
        run_blocks_overlapping(filters, block, blocks)
    else:
        U = filters()
        P = N * th * tw
        V = scratch(f"wino{m}_V_all", (a, a, N, th, tw, C), x.dtype)
        M = scratch(f"wino{m}_M_all", (T, P, K), x.dtype)
        if N >= threads:
            step = -(-N // threads)
            parts = [(n, min(n + step, N), 0, th) for n in range(0, N, step)]
        else:
            step = -(-th // threads)
            parts = [(n, n + 1, r, min(r + step, th)) for n in range(N) for r in range(0, th, step)]
        run_blocks(lambda p: input_transform(x, g["pt"], g["pl"], *p, tw, V[:, :, p[0]:p[1], p[2]:p[3]]), parts)
        step = -(-T // threads)
        VT = V.reshape(T, P, C)
        run_blocks(lambda q: batched_gemm(VT[q[0]:q[1]], U[q[0]:q[1]], M[q[0]:q[1]]),
                   [(q, min(q + step, T), 0, 0) for q in range(0, T, step)])
        M6 = M.reshape(a, a, N, th, tw, K)
        run_blocks(lambda p: output_transform(*p, M6[:, :, p[0]:p[1], p[2]:p[3]]), parts)
    if Ho == m * th and Wo == m * tw:
        return yfull
    return np.ascontiguousarray(yfull[:, :Ho, :Wo])


# ----------------------------------------------------------------------------
# Dispatch
# ----------------------------------------------------------------------------

def _epilogue_by_rows(epilogue, y):
    """``epilogue`` applied in place to ``y`` (NHWC or ``(pixels, K)``), its rows split over the threads."""
    if epilogue is None:
        return y
    rows = y.shape[0] if y.ndim == 2 else y.shape[0] * y.shape[1]
    flat = y.reshape(rows, -1) if y.ndim == 2 else y.reshape(y.shape[0] * y.shape[1], y.shape[2], y.shape[3])
    step = max(1, -(-rows // work_sharder.NUM_THREADS))
    run_blocks(lambda b: epilogue(flat[b[0]:b[1]]), [(r, min(r + step, rows), 0, 0) for r in range(0, rows, step)])
    return y


def winograd_applicable(w_shape, strides=(1, 1), dilations=(1, 1)):
    """F(2x2, 3x3) needs a 3x3 filter, stride 1 and dilation 1."""
    return (tuple(w_shape[:2]) == (3, 3) and hw_pair(strides, "strides") == (1, 1)
            and hw_pair(dilations, "dilations") == (1, 1))


#: With the C transforms (``native_winograd_transforms``), Winograd is chosen from this many
#: channels (C_in and C_out) ...
NATIVE_WINOGRAD_MIN_CHANNELS = 16
#: ... when the batch has at least this many F(2x2) tiles (the rows of its GEMMs: fewer make
#: thin GEMMs, and the filter transform, paid once per call, outweighs what they save) ...
NATIVE_WINOGRAD_MIN_TILES = 160
#: ... and F(4x4, 3x3) when it has at least this many F(4x4) tiles.
NATIVE_WINOGRAD4_MIN_TILES = 96


def native_winograd_rule():
    """Whether the auto rule is the one measured with the C transforms (they build here)."""
    return winograd_binding.library() is not None


def choose_conv2d_algorithm(w_shape, strides=(1, 1), dilations=(1, 1), x_shape=None):
    """The documented rule used by ``conv2d(..., algorithm="auto")``.

    Where the C Winograd transforms build (``native_winograd_rule()``; measured on 2 Zen5
    cores with the C SGEMM, batch 1-8, 7x7 to 224x224 layers, 16 to 512 channels):

    * 3x3 filter, stride 1, dilation 1, ``C_in`` and ``C_out`` at least
      ``NATIVE_WINOGRAD_MIN_CHANNELS`` (16) and at least ``NATIVE_WINOGRAD_MIN_TILES`` (160)
      2x2 output tiles in the batch -> ``"winograd"`` (4x28x28x64: 0.41 ms against im2col's
      0.65; 1x224x224x64: 5.2 against 10.4; 1x14x14x256, 49 tiles: 1.2 against 0.87);
    * everything else -> ``"im2col"``.

    Otherwise (NumPy transforms, one pass over memory per term):

    * 3x3 filter, stride 1, dilation 1, ``C_in`` and ``C_out`` at least
      ``WINOGRAD_MIN_CHANNELS`` (64) and at least ``WINOGRAD_MIN_PIXELS`` (384)
      output pixels in the batch -> ``"winograd"`` (2.25x fewer multiplies;
      below those sizes its transforms, filter transform included, cost more
      than the multiplies they save); both thresholds are
      ``NATIVE_GEMM_WINOGRAD_SCALE`` times higher when the GEMMs run on the C SGEMM;
    * everything else -> ``"im2col"`` (a 1x1 stride-1 conv is then a plain GEMM).

    ``"direct"`` is never chosen automatically: it is the teaching reference.
    The thresholds come from benchmarks/bench_conv.py on 2 Zen4 cores.
    """
    if native_winograd_rule():
        if not winograd_applicable(w_shape, strides, dilations) or min(w_shape[2:]) < NATIVE_WINOGRAD_MIN_CHANNELS:
            return "im2col"
        if x_shape is not None and x_shape[0] * -(-x_shape[1] // 2) * -(-x_shape[2] // 2) < NATIVE_WINOGRAD_MIN_TILES:
            return "im2col"
        return "winograd"
    scale = NATIVE_GEMM_WINOGRAD_SCALE if work_sharder.native_gemm_library() is not None else 1
    if (not winograd_applicable(w_shape, strides, dilations)
            or min(w_shape[2:]) < WINOGRAD_MIN_CHANNELS * scale):
        return "im2col"
    if x_shape is not None and x_shape[0] * x_shape[1] * x_shape[2] < WINOGRAD_MIN_PIXELS * scale:
        return "im2col"
    return "winograd"


#: F(4x4, 3x3) replaces F(2x2, 3x3) in the auto rule when C_in and C_out are at
#: least this (below, its bigger transforms eat what its GEMMs save) ...
WINOGRAD4_MIN_CHANNELS = 64
#: ... and when the output has at least ``C_in * C_out / WINOGRAD4_PIXELS_PER_WEIGHT``
#: pixels: its filter transform (36 values per (c, k) instead of 16) is paid per call.
WINOGRAD4_PIXELS_PER_WEIGHT = 64


def winograd_tile_size(w_shape, out_shape):
    """The output tile the auto rule uses for a Winograd conv: 4 (F(4x4, 3x3)) or 2.

    Measured on one Zen5 core (CPU time of the forward, VGG19 and ResNet layers):
    F(4x4) is 1.1-1.25x faster on 224x224x64 .. 56x56x64 (batch 8) layers,
    1.2-1.45x on 112x112x128 .. 56x56x256, even on 28x28x512 and slower (0.6x)
    on 14x14x512 at batch 1, where 16 tiles per image make thin GEMMs and the
    filter transform dominates. An output size that F(4x4) would pad by more
    than 10% over F(2x2) (14x14: 16x16) keeps 2.

    With the C transforms (``native_winograd_rule()``), F(4x4) wins at any channel count
    whenever its GEMMs have at least ``NATIVE_WINOGRAD4_MIN_TILES`` rows (4x28x28x16: 0.14 ms
    against 0.16; 1x56x56x256: 4.3 against 5.7; 1x28x28x512, 49 tiles: 9.5 against 6.5).
    """
    C, K = int(w_shape[2]), int(w_shape[3])
    N, Ho, Wo = (int(v) for v in out_shape[:3])
    if native_winograd_rule():
        if N * -(-Ho // 4) * -(-Wo // 4) < NATIVE_WINOGRAD4_MIN_TILES:
            return 2
    elif min(C, K) < WINOGRAD4_MIN_CHANNELS or N * Ho * Wo * WINOGRAD4_PIXELS_PER_WEIGHT < C * K:
        return 2
    padded2 = (2 * -(-Ho // 2)) * (2 * -(-Wo // 2))
    padded4 = (4 * -(-Ho // 4)) * (4 * -(-Wo // 4))
    return 4 if padded4 <= 1.1 * padded2 else 2


def requested_algorithm(algorithm):
    if algorithm is None or algorithm == "auto":
        from .. import flags                   # read lazily: AICS_CONV_ALGO
        algorithm = getattr(flags, "CONV_ALGO", "auto") or "auto"
    algorithm = str(algorithm).lower()
    if algorithm != "auto" and algorithm not in ALGORITHMS:
        raise ValueError(f"unknown conv2d algorithm {algorithm!r}; expected one of "
                         f"{('auto',) + ALGORITHMS}")
    return algorithm


def conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), algorithm="auto", epilogue=None):
    """2-D convolution (NHWC input, HWIO filter) with a choice of algorithm.

    ``algorithm``: ``"auto"`` (default: ``aicslib.flags.CONV_ALGO``, i.e. the
    environment variable ``AICS_CONV_ALGO``, and if that is ``auto`` too, the
    rule of :func:`choose_conv2d_algorithm`), ``"direct"``, ``"im2col"`` or
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
    it, ``OutputStage.c_arguments``; None: no C form) is applied by the C
    Winograd output transform itself, to each tile's pixels as it writes them
    (TF's oneDNN "post-ops"), instead of being called.
    """
    explicit = algorithm not in (None, "auto")
    algo = requested_algorithm(algorithm)
    x, w = as_floats(x, w)
    if algo == "auto":
        algo = choose_conv2d_algorithm(w.shape, strides, dilations, x.shape)
    if algo == "winograd" and not explicit and not winograd_applicable(w.shape, strides, dilations):
        algo = "im2col"            # AICS_CONV_ALGO=winograd on a conv Winograd cannot do
    if algo == "winograd" and not explicit:
        g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
        if winograd_tile_size(w.shape, (g["N"], g["Ho"], g["Wo"])) == 4:
            return conv2d_winograd_f4(x, w, strides, padding, dilations, epilogue=epilogue)
    if algo == "direct":
        y = conv2d_direct(x, w, strides, padding, dilations)
        return y if epilogue is None else _epilogue_by_rows(epilogue, y)
    fn = {"direct": conv2d_direct, "im2col": conv2d_im2col, "winograd": conv2d_winograd}[algo]
    return fn(x, w, strides, padding, dilations, epilogue=epilogue)


def conv2d_nchw(x_nchw, w_oihw, strides=(1, 1), padding="VALID", dilations=(1, 1), algorithm="auto"):
    """Convolution of an NCHW input with an OIHW filter, returning NCHW.

    Converts to NHWC/HWIO, runs :func:`conv2d`, converts back (what TF does
    when a CPU kernel only supports NHWC: the layout optimizer inserts
    transposes around it).
    """
    y = conv2d(nchw_to_nhwc(np.asarray(x_nchw)), oihw_to_hwio(np.asarray(w_oihw)),
               strides, padding, dilations, algorithm)
    return nhwc_to_nchw(y)


# ----------------------------------------------------------------------------
# Kernel registration (TF: REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU)...)
# in core/kernels/conv_ops.cc)
# ----------------------------------------------------------------------------

@register_kernel("Conv2D", type_constraint=_FLOAT)
def _conv2d_kernel(input, filter, strides, padding, explicit_paddings, data_format, dilations):  # noqa: A002
    s, p, d = conv_args_from_attrs(strides, padding, explicit_paddings, data_format, dilations,
                                   "Conv2D")
    y = conv2d(to_nhwc(input, data_format), filter, s, p, d)
    return cast_like(from_nhwc(y, data_format), input)
