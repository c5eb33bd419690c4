"""The C depthwise-convolution kernels (``src/aics_depthwise.c``) through ctypes.

aicslib/kernels/depthwise_conv_op.py calls these for float32 and float64 and
keeps its NumPy code as the fallback: ``library()`` returns None (and
``fallback_reason()`` says why) when there is no C compiler or the build fails,
and the kernel then computes with NumPy, giving the same numbers (up to
rounding: the C loops add the taps in another order, with fused multiply-adds).

The library is compiled on first use into the cache of ``build`` (a folder
named by a hash of the sources, compiler and flags) and loaded once per process.
``-ffp-contract=fast`` lets the compiler fuse ``acc += x * w`` into one FMA
instruction (ISO C mode forbids it by default); ``-march=native`` where the
compiler accepts it lets it use the widest vector registers of this CPU.

Every C function takes ``g``, a 14-element int64 geometry array (the order of
``GEOMETRY_KEYS``), the operands as C-contiguous arrays of the function's
element type, and a row range ``[r0, r1)`` of its result so that threads can
share the work; it returns 0, or -1 for a geometry it does not handle.
"""
import ctypes

import numpy as np

from .c_library import CLibrary

LIBRARY_NAME = "aics_depthwise_ctypes"
C_SOURCE = "aics_depthwise.c"
C_TEMPLATE = "aics_depthwise_impl.h"
LIBRARY_FILE = "libaics_depthwise.so"
EXTRA_FLAGS = ("-std=c99", "-ffp-contract=fast")

#: The geometry array's entries, in the order of the C enum (``G_N`` ... ``G_WO``).
GEOMETRY_KEYS = ("N", "H", "W", "C", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pl", "Ho", "Wo")

#: The element types with a C kernel: numpy dtype -> name suffix of the C functions.
SUFFIXES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _declare(lib):
    ptr, i64 = ctypes.c_void_p, ctypes.c_int64
    for suffix in SUFFIXES.values():
        for name, extra in (("forward", []), ("backprop_input", [ptr]), ("backprop_filter", [])):
            fn = getattr(lib, f"aics_depthwise_{name}_{suffix}")
            # int f(const int64_t *g, const T *a, const T *b, T *out, int64_t r0, int64_t r1[, int64_t *scratch])
            fn.argtypes = [ptr, ptr, ptr, ptr, i64, i64] + extra
            fn.restype = ctypes.c_int


_LIBRARY = CLibrary(LIBRARY_NAME, C_SOURCE, [C_TEMPLATE], LIBRARY_FILE, EXTRA_FLAGS, _declare,
                    "depthwise convolution computes with NumPy instead")


def compile_library():
    """Path of the compiled library (built into the cache on first use).

    Raises ``build.CompilerNotFoundError`` without a compiler, ``build.BuildError`` when it fails.
    """
    return _LIBRARY.compile()


def load_library(path):
    """``ctypes.CDLL`` of the library with every function's argtypes and restype declared."""
    return _LIBRARY.load(path)


def library():
    """The loaded library, or None when it cannot be built here (``fallback_reason()`` says why).

    Built and loaded once per process; a failure is remembered too, so the NumPy path is taken
    at once afterwards (``reset()`` tries again, e.g. after installing a compiler).
    """
    return _LIBRARY.get()


def fallback_reason():
    """Why ``library()`` is None (no compiler, a failed build), or None when it loaded."""
    return _LIBRARY.fallback_reason()


def reset():
    """Forget the library and the failure (after changing AICS_NATIVE_CC & co.)."""
    _LIBRARY.reset()


def geometry_array(g):
    """The int64 geometry array the C functions take, from a ``conv_geometry``-style dict."""
    return np.array([int(g[k]) for k in GEOMETRY_KEYS], dtype=np.int64)


def function(lib, name, dtype):
    """The C function ``aics_depthwise_<name>_<f32|f64>`` for arrays of ``dtype``."""
    return getattr(lib, f"aics_depthwise_{name}_{SUFFIXES[np.dtype(dtype)]}")


def call(fn, geometry, a, b, out, r0, r1, scratch=None):
    """``fn(geometry, a, b, out, r0, r1[, scratch])``; RuntimeError naming it on a bad status.

    The arrays must be C-contiguous and of the function's element type (the caller's job:
    ctypes passes raw pointers and would read anything else as garbage). The GIL is released
    during the call, so threads calling different row ranges run in parallel.
    """
    args = [geometry.ctypes.data, a.ctypes.data, b.ctypes.data, out.ctypes.data, int(r0), int(r1)]
    if scratch is not None:
        args.append(scratch.ctypes.data)
    status = fn(*args)
    if status != 0:
        raise RuntimeError(f"{fn.__name__} failed (status {status}) for geometry "
                           f"{dict(zip(GEOMETRY_KEYS, geometry.tolist()))}")
    return out
