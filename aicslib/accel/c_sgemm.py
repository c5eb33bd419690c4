"""The packed float32 GEMM (``src/aics_sgemm_packed.c``) through ctypes: the convolution kernels' GEMM.

``work_sharder.py`` runs every float32 GEMM of the speed layer's convolution
kernels (im2col, the gradients, Winograd's batched products, Gram matrices)
through :func:`sgemm` when this library is built and ``AICS_GEMM`` allows it,
and through NumPy's BLAS otherwise. Why: the library holds a micro-kernel per
instruction set and runs the widest this CPU has, where NumPy's OpenBLAS may be
pinned to an older CPU's kernels (``OPENBLAS_CORETYPE``);
``benchmarks/bench_gemm.py`` measures the two.

Results equal BLAS's up to rounding (both add each dot product in fp32, in
another order and with fused multiply-adds). Each output element is computed by
the same operations wherever it lies in the matrix, whatever the instruction
set: splitting the rows or columns of a product over threads, or running it on
another CPU, gives bit-identical numbers.
"""
import ctypes
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_sgemm"


#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


def micro_tile():
    """``(MR, NR)``: the register tile of C the selected micro-kernel keeps (12 x 32 with AVX-512)."""
    lib = library()
    if lib is None:
        raise RuntimeError(f"aics_sgemm_packed is not available here: {fallback_reason()}")
    mr, nr = ctypes.c_int64(), ctypes.c_int64()
    lib.aics_sgemm_packed_tile(ctypes.byref(mr), ctypes.byref(nr))
    return mr.value, nr.value


def sgemm(lib, a, b, out, accumulate=False):
    """``out[...] = a @ b`` (``+=`` when ``accumulate``) for 2-D float32 arrays, in C on this thread.

    ``a`` and ``b`` may have any strides (a transposed view is packed as it is read); ``out``
    needs unit column stride and must not overlap them (the caller's job, as BLAS's). The GIL
    is released during the call, so threads computing different blocks run in parallel.
    """
    (m, k), n = a.shape, b.shape[1]
    sa, sb, so = a.strides, b.strides, out.strides
    status = lib.aics_sgemm_packed(m, n, k, a.ctypes.data, sa[0] >> 2, sa[1] >> 2,
                                   b.ctypes.data, sb[0] >> 2, sb[1] >> 2,
                                   out.ctypes.data, so[0] >> 2, 1 if accumulate else 0)
    if status != 0:
        raise MemoryError(f"aics_sgemm_packed failed (status {status}) for a {m}x{k} @ {k}x{n} product")
    return out


def sgemm_batched(lib, a, b, out, accumulate=False):
    """``out[i] = a[i] @ b[i]`` for stacks of float32 matrices (3-D), in one C call.

    Each product as :func:`sgemm` computes it; the stacks may have any strides, ``out`` unit
    column stride (:func:`usable_batched`).
    """
    count, m, k = a.shape
    n = b.shape[2]
    sa, sb, so = (tuple(s >> 2 for s in x.strides) for x in (a, b, out))
    status = lib.aics_sgemm_packed_batched(count, m, n, k, a.ctypes.data, *sa, b.ctypes.data, *sb,
                                           out.ctypes.data, so[0], so[1], 1 if accumulate else 0)
    if status != 0:
        raise MemoryError(f"aics_sgemm_packed_batched failed (status {status}) for {count} "
                          f"{m}x{k} @ {k}x{n} products")
    return out


def usable_batched(a, b, out):
    """:func:`usable` for 3-D stacks of the same count."""
    return (a.ndim == b.ndim == out.ndim == 3 and a.shape[0] == b.shape[0] == out.shape[0]
            and usable(a[0], b[0], out[0]) and all(s % 4 == 0 for s in a.strides + b.strides + out.strides)
            and not np.may_share_memory(out, a) and not np.may_share_memory(out, b))


def usable(a, b, out):
    """Whether :func:`sgemm` may compute ``out = a @ b``: float32 2-D operands, ``out`` with unit
    column stride (rows may be strided), and no overlap between ``out`` and an operand."""
    return (a.dtype == np.float32 and b.dtype == np.float32 and out.dtype == np.float32
            and a.ndim == 2 and b.ndim == 2 and out.ndim == 2
            and (out.strides[1] == 4 or out.shape[1] <= 1)
            and all(s % 4 == 0 for s in a.strides + b.strides + out.strides)
            and not np.may_share_memory(out, a) and not np.may_share_memory(out, b))


#: Input channels :func:`conv2d_implicit` takes at most (the C side's zero row for the padding).
CONV_MAX_CHANNELS = 4096


def conv2d_implicit(lib, x, w2, y, g, n0, n1, r0, r1):
    """Output rows ``r0:r1`` of images ``n0:n1`` of a Conv2D into ``y`` (their pixels, contiguous
    ``(pixels, K)`` float32), in C on this thread: the im2col GEMM with the rows of the im2col
    matrix read where they lie in ``x`` (contiguous NHWC float32) instead of from a copy.

    ``w2``: the HWIO filter as a contiguous ``(kh*kw*C, K)`` matrix; ``g``: ``conv_geometry``'s
    dict. Every version gives the same bits (each element: one sum over the taps, then the
    channels), which differ from :func:`sgemm`'s of the im2col matrix only by rounding.
    """
    geometry = np.array([g[k] for k in ("H", "W", "C", "K", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pl",
                                        "Ho", "Wo")], np.int64)
    status = lib.aics_conv2d_implicit(geometry.ctypes.data, x.ctypes.data, w2.ctypes.data, y.ctypes.data,
                                      n0, n1, r0, r1)
    if status != 0:
        error = ValueError if status == -1 else MemoryError     # -1: a geometry the C side refuses
        raise error(f"aics_conv2d_implicit failed (status {status}) for output rows {r0}:{r1} of "
                    f"images {n0}:{n1}, geometry {geometry.tolist()} (H, W, C, K, kh, kw, sh, sw, dh, dw, "
                    f"pt, pl, Ho, Wo)")
    return y
