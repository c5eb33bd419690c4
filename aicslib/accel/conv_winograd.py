"""Winograd convolution, F(2x2, 3x3) and F(4x4, 3x3), blocked and threaded: the speed layer's driver.

``aicslib/kernels/conv_ops.py`` holds the readable F(2x2, 3x3) (the reference).
This is the same algorithm cut into blocks of images or tile rows that keep the
transformed tiles ``V`` and products ``M`` in cache, run on the work sharder's
threads while the calling thread transforms the filters; the transforms are C's
where built (``winograd_transforms.py``), the T = 16 or 36 products one batched
C SGEMM call per block (``work_sharder.batched_gemm``). A fused conv's output
stage (an ``epilogue``) is applied to each block as soon as it is computed, by
the C output transform itself where it can (TF's oneDNN "post-ops").
"""
import numpy as np

from ..kernels.conv_2d import as_floats, conv_geometry
from . import c_winograd, work_sharder
from .winograd_transforms import (native_winograd_transforms, winograd2_output, winograd4_filter_transform,
                                  winograd4_input_transform, winograd4_output, winograd_filter_transform,
                                  winograd_input_transform)
from .work_sharder import batched_gemm, run_blocks, run_blocks_overlapping, scratch, split_blocks

__all__ = ["conv2d_winograd", "conv2d_winograd_f4", "winograd_min_gemm_rows", "NATIVE_WINOGRAD_MIN_GEMM_ROWS",
           "NATIVE_WINOGRAD_THIN_MAX_CHANNELS", "NATIVE_WINOGRAD_MIN_BLOCK_FLOPS"]


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
    ``epilogue``: see :func:`conv_forward.conv2d`.
    """
    x, w, g = _winograd_geometry("conv2d_winograd", x, w, filter_transform, strides, padding, dilations)
    return _winograd_conv(2, x, w, g, filter_transform, block_bytes, epilogue)


def conv2d_winograd_f4(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), block_bytes=None,
                       filter_transform=None, epilogue=None):
    """Winograd F(4x4, 3x3) convolution (3x3 filter, stride 1, dilation 1).

    The steps of :func:`conv2d_winograd` with 6x6 input tiles and 4x4 output
    tiles: ``U = G g G^T`` (36, C, K); ``V = B^T d B`` (36, tiles, C); 36 GEMMs
    ``M[p] = V[p] @ U[p]``; ``Y = A^T M A``. Output sizes that are not
    multiples of 4 are padded up to whole tiles and cropped.
    ``filter_transform`` may pass a precomputed U (36, C, K) instead of ``w``.
    ``epilogue``: see :func:`conv_forward.conv2d`.
    """
    x, w, g = _winograd_geometry("conv2d_winograd_f4", x, w, filter_transform, strides, padding, dilations)
    return _winograd_conv(4, x, w, g, filter_transform, block_bytes, epilogue)


#: With the C transforms, a Winograd block's GEMMs may be this thin (tiles), so that each
#: thread runs its own images start to end instead of the threads meeting after each phase
#: (each meeting wakes a pool thread: benchmarks/README.md) ...
NATIVE_WINOGRAD_MIN_GEMM_ROWS = 96
#: ... when the channels are at most this many (beyond, each block packing its own copy of
#: the 16 or 36 transformed filters costs more than the meetings) ...
NATIVE_WINOGRAD_THIN_MAX_CHANNELS = 128
#: ... and when each block still has this many GEMM flops (less is faster on one thread).
NATIVE_WINOGRAD_MIN_BLOCK_FLOPS = 16e6


def winograd_min_gemm_rows(lib, positions, C, K):
    """The fewest GEMM rows (tiles) of a block of a Winograd conv with ``positions`` (16 or 36)
    products, or None for ``split_blocks``' default; see ``NATIVE_WINOGRAD_MIN_GEMM_ROWS``
    (measured: benchmarks/README.md, "Winograd blocks")."""
    if lib is None or max(C, K) > NATIVE_WINOGRAD_THIN_MAX_CHANNELS:
        return None
    return max(NATIVE_WINOGRAD_MIN_GEMM_ROWS, int(-(-NATIVE_WINOGRAD_MIN_BLOCK_FLOPS // (2 * positions * C * K))))


#: Per output tile size m: the filter and input transforms, NumPy's output transform, and the
#: work (tiles x C x K) from which one block's phases are shared by the threads (see below).
_WINOGRAD_FILTERS = {2: winograd_filter_transform, 4: winograd4_filter_transform}


_WINOGRAD_INPUTS = {2: winograd_input_transform, 4: winograd4_input_transform}


_WINOGRAD_NUMPY_OUTPUTS = {2: winograd2_output, 4: winograd4_output}


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
            c_winograd.output_transform(lib, m, M, y, c_stage)
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

