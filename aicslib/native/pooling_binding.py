"""MaxPoolGrad in C (``src/aics_pooling.c``) through ctypes.

``aicslib/kernels/pooling_ops.py`` sends each window's gradient to its first maximum with one
masked NumPy copy per window tap; for float32 it calls :func:`max_pool_grad` instead when this
library builds (one pass over the windows; the same answers, bit for bit where windows do not
overlap), and keeps its NumPy code otherwise.
"""
import ctypes

import numpy as np

from .c_library import CLibrary

LIBRARY_NAME = "aics_pooling_ctypes"
C_SOURCE = "aics_pooling.c"
LIBRARY_FILE = "libaics_pooling.so"
EXTRA_FLAGS = ("-std=c99",)


def _declare(lib):
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    # int aics_max_pool_grad_f32(x, y, g, dx, H, W, C, Ho, Wo, kh, kw, sh, sw, pt, pl, n0, n1)
    lib.aics_max_pool_grad_f32.argtypes = [ptr] * 4 + [i64] * 13
    lib.aics_max_pool_grad_f32.restype = ctypes.c_int


_LIBRARY = CLibrary(LIBRARY_NAME, C_SOURCE, [], LIBRARY_FILE, EXTRA_FLAGS, _declare,
                    "MaxPoolGrad computes with NumPy instead")

library = _LIBRARY.get
fallback_reason = _LIBRARY.fallback_reason
reset = _LIBRARY.reset


def max_pool_grad(lib, x, y, g, dx, geometry, n0, n1):
    """Adds images ``n0:n1`` of the max-pool gradient into ``dx`` (zeros on entry, NHWC like ``x``;
    all four C-contiguous float32, as ``pooling_ops.max_pool_grad`` makes them, else ValueError):
    ``g[n, oh, ow, c]`` goes to the first maximum of its window. ``geometry``:
    ``(kh, kw, sh, sw, pt, pl)``; ``y`` and ``g`` are the pooled output's shape."""
    for name, a in (("input", x), ("output", y), ("gradient", g), ("input gradient", dx)):
        if a.dtype != np.float32 or a.ndim != 4 or not a.flags.c_contiguous:
            raise ValueError(f"MaxPoolGrad in C: the {name} must be a C-contiguous float32 NHWC array, "
                             f"got {a.dtype} of shape {a.shape}")
    N, H, W, C = x.shape
    Ho, Wo = y.shape[1:3]
    kh, kw, sh, sw, pt, pl = geometry
    status = lib.aics_max_pool_grad_f32(x.ctypes.data, y.ctypes.data, g.ctypes.data, dx.ctypes.data,
                                        H, W, C, Ho, Wo, kh, kw, sh, sw, pt, pl, n0, n1)
    if status != 0:
        raise RuntimeError(f"aics_max_pool_grad_f32 failed (status {status}) on a {x.shape} input")
    return dx
