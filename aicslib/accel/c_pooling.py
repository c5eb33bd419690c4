"""MaxPoolGrad in C (``src/aics_pooling.c``) through ctypes.

``aicslib/kernels/pooling_ops.py`` (the reference) sends each window's gradient to its first
maximum with one masked NumPy copy per window tap; the speed layer's float32 MaxPoolGrad
(``pooling.py``) calls :func:`max_pool_grad` instead where this library is built (one pass over
the windows; the same answers, bit for bit where windows do not overlap).
"""
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_pooling"


#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


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
