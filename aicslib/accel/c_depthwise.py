"""The C depthwise-convolution kernels (``src/aics_depthwise.c``) through ctypes.

``depthwise.py`` calls these for float32 and float64 and keeps NumPy tap loops
as the fallback: ``library()`` returns None (and ``fallback_reason()`` says why)
where the library was not built at install, and the kernels then compute with
NumPy, giving the same numbers up to rounding (the C loops add the taps with
fused multiply-adds, the same on every CPU).

Every C function takes ``g``, a 14-element int64 geometry array (the order of
``GEOMETRY_KEYS``), the operands as C-contiguous arrays of the function's
element type, and a row range ``[r0, r1)`` of its result so that threads can
share the work; it returns 0, or -1 for a geometry it does not handle.
"""
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_depthwise"

#: The geometry array's entries, in the order of the C enum (``G_N`` ... ``G_WO``).
GEOMETRY_KEYS = ("N", "H", "W", "C", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pl", "Ho", "Wo")

#: The element types with a C kernel: numpy dtype -> name suffix of the C functions.
SUFFIXES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


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
