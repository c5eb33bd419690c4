"""The packed float32 GEMM (``src/aics_sgemm_packed.c``) through ctypes: the convolution kernels' GEMM.

``aicslib/kernels/work_sharder.py`` runs every float32 GEMM of the convolution
kernels (im2col, the gradients, Winograd's batched products, Gram matrices)
through :func:`sgemm` when this library builds and ``AICS_GEMM`` allows it, and
through NumPy's BLAS otherwise. Why: the C file is compiled with
``-march=native`` on the machine that runs it, so its micro-kernel uses the
CPU's widest vectors, where NumPy's OpenBLAS may be pinned to an older CPU's
kernels (``OPENBLAS_CORETYPE``); ``benchmarks/bench_gemm.py`` measures the two.

Results equal BLAS's up to rounding (both add each dot product in fp32, in
another order and with fused multiply-adds), and each output element is
computed by the same instructions wherever it lies in the matrix: splitting the
rows or columns of a product over threads gives bit-identical numbers.
"""
import ctypes

import numpy as np

from .c_library import CLibrary

LIBRARY_NAME = "aics_sgemm_packed_ctypes"
C_SOURCE = "aics_sgemm_packed.c"
LIBRARY_FILE = "libaics_sgemm_packed.so"
EXTRA_FLAGS = ("-std=c11", "-ffp-contract=fast", "-pthread")


def _declare(lib):
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    # int aics_sgemm_packed(m, n, k, a, rsa, csa, b, rsb, csb, c, ldc, accumulate)
    lib.aics_sgemm_packed.argtypes = [i64, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i64, ctypes.c_int]
    lib.aics_sgemm_packed.restype = ctypes.c_int
    # int aics_sgemm_packed_batched(count, m, n, k, a, bsa, rsa, csa, b, bsb, rsb, csb, c, bsc, ldc, accumulate)
    lib.aics_sgemm_packed_batched.argtypes = [i64, i64, i64, i64, ptr, i64, i64, i64, ptr, i64, i64, i64,
                                              ptr, i64, i64, ctypes.c_int]
    lib.aics_sgemm_packed_batched.restype = ctypes.c_int
    lib.aics_sgemm_packed_tile.argtypes = [ctypes.POINTER(i64), ctypes.POINTER(i64)]
    lib.aics_sgemm_packed_tile.restype = ctypes.c_int


_LIBRARY = CLibrary(LIBRARY_NAME, C_SOURCE, [], LIBRARY_FILE, EXTRA_FLAGS, _declare,
                    "float32 GEMMs run on NumPy's BLAS instead")

library = _LIBRARY.get
fallback_reason = _LIBRARY.fallback_reason
reset = _LIBRARY.reset


def micro_tile():
    """``(MR, NR)``: the register tile of C the compiled micro-kernel keeps (12 x 32 with AVX-512)."""
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
