"""Winograd's input and output transforms in C (``src/aics_winograd.c``) through ctypes.

``conv_winograd.py`` computes F(2x2, 3x3) and F(4x4, 3x3) convolutions as
transforms around batched GEMMs. Its NumPy transforms (``winograd_transforms.py``)
make one pass over the tiles per non-zero of the transform matrices; for float32
it calls these instead where the library is built (one pass each). The two agree
up to float32 rounding (they add the terms in another order).
"""
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_winograd"

#: The output tile sizes the C code has: F(2x2, 3x3) and F(4x4, 3x3).
TILE_SIZES = (2, 4)


#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


def _tile_strides(a, m, name):
    """Element strides ``(t, n, r)`` of a ``(m+2, m+2, nb, nr, tw, C)`` tile array whose (q, c)
    are contiguous and whose two component axes merge into one (t = a * (m+2) + b)."""
    s = [v // 4 for v in a.strides]
    side, C = m + 2, a.shape[5]
    if a.shape[:2] != (side, side) or s[0] != side * s[1] or s[5] != 1 or s[4] != C:
        raise ValueError(f"Winograd F({m}x{m}, 3x3) {name}: expected a ({side}, {side}, images, tile rows, "
                         f"tiles per row, channels) float32 array with contiguous tiles, got shape "
                         f"{a.shape} and strides {a.strides}")
    return s[1], s[2], s[3]


def handles(x):
    """Whether the C transforms take this input: float32 NHWC with contiguous channels."""
    return x.dtype == np.float32 and x.ndim == 4 and (x.strides[3] == 4 or x.shape[3] <= 1) \
        and all(v % 4 == 0 for v in x.strides)


def input_transform(lib, m, x, row0, col0, n0, n1, nr, tw, V):
    """``V[a, b, n, r, q] = (B^T d B)[a, b]`` for the ``(m+2) x (m+2)`` tile ``d`` of image ``n0 + n``
    whose top-left pixel is ``(row0 + m*r, col0 + m*q)`` (zeros outside ``x``), for ``n < n1 - n0``,
    ``r < nr``, ``q < tw``. ``V``: float32 ``(m+2, m+2, n1-n0, nr, tw, C)``, written in place."""
    vt, vn, vr = _tile_strides(V, m, "input tiles V")
    N, H, W, C = x.shape
    xs = [v // 4 for v in x.strides]
    status = lib.aics_winograd_input_f32(m, x[n0:n1].ctypes.data, xs[0], xs[1], xs[2], H, W, C,
                                         n1 - n0, row0, col0, nr, tw, V.ctypes.data, vt, vn, vr)
    if status != 0:
        raise RuntimeError(f"aics_winograd_input_f32 failed (status {status}) for F({m}x{m}, 3x3) "
                           f"on a {x.shape} input")
    return V


#: ``output_transform``'s ``c_stage`` when there is no output stage.
NO_OUTPUT_STAGE = (-1, None, None, None, 0)


def output_transform(lib, m, M, y, c_stage=None):
    """``y`` (``(nb, m*nr, m*tw, K)``, contiguous channels, written in place) from ``M``
    (``(m+2, m+2, nb, nr, tw, K)``): each tile's ``m x m`` pixels ``A^T M A``, then a fused
    conv's output stage on them when ``c_stage`` gives one (``c_output_stage.c_arguments``)."""
    mt, mn, mr = _tile_strides(M, m, "products M")
    _, _, nb, nr, tw, K = M.shape
    if y.shape != (nb, m * nr, m * tw, K) or y.dtype != np.float32 or (y.strides[3] != 4 and K > 1):
        raise ValueError(f"Winograd F({m}x{m}, 3x3) output: expected a float32 ({nb}, {m * nr}, {m * tw}, {K}) "
                         f"array with contiguous channels, got {y.dtype} {y.shape}")
    ys = [v // 4 for v in y.strides]
    status = lib.aics_winograd_output_f32(m, M.ctypes.data, mt, mn, mr, nb, nr, tw, K,
                                          y.ctypes.data, ys[0], ys[1], ys[2], *(c_stage or NO_OUTPUT_STAGE))
    if status != 0:
        raise RuntimeError(f"aics_winograd_output_f32 failed (status {status}) for F({m}x{m}, 3x3)")
    return y


def filter_transform(lib, m, w, U, c0=0, c1=None, rotate180=False):
    """``U[:, c0:c1] = G g G^T`` of the filters of input channels ``c0:c1`` (``U``: float32
    ``((m+2)^2, C, K)``, contiguous, written in place) from the float32 HWIO filter ``w``
    (3, 3, C, K), contiguous; ``rotate180``: of each filter turned by 180 degrees."""
    _, _, C, K = w.shape
    c1 = C if c1 is None else c1
    if (w.dtype != np.float32 or U.dtype != np.float32 or not w.flags.c_contiguous
            or not U.flags.c_contiguous or U.shape != ((m + 2) ** 2, C, K) or w.shape[:2] != (3, 3)):
        raise ValueError(f"Winograd F({m}x{m}, 3x3) filter transform: expected a contiguous float32 "
                         f"(3, 3, C, K) filter and ({(m + 2) ** 2}, C, K) result, got {w.dtype} {w.shape} "
                         f"and {U.dtype} {U.shape}")
    status = lib.aics_winograd_filter_f32(m, w.ctypes.data, C, K, c0, c1, 1 if rotate180 else 0, U.ctypes.data)
    if status != 0:
        raise RuntimeError(f"aics_winograd_filter_f32 failed (status {status}) for F({m}x{m}, 3x3)")
    return U


def grad_output_transform(lib, m, dy, row0, n0, n1, nr, tw, D):
    """The filter gradient's ``D[a, b, n, r, q] = (A dY A^T)[a, b]`` for the ``m x m`` tile of ``dy``
    (NHWC, contiguous channels) of image ``n0 + n`` whose top-left pixel is ``(row0 + m*r, m*q)``
    (zeros past its edges). ``D``: float32 ``(m+2, m+2, n1-n0, nr, tw, K)``, written in place."""
    dt, dn, dr = _tile_strides(D, m, "output-gradient tiles D")
    N, Ho, Wo, K = dy.shape
    ds = [v // 4 for v in dy.strides]
    status = lib.aics_winograd_grad_output_f32(m, dy[n0:n1].ctypes.data, ds[0], ds[1], ds[2], Ho, Wo, K,
                                               n1 - n0, row0, nr, tw, D.ctypes.data, dt, dn, dr)
    if status != 0:
        raise RuntimeError(f"aics_winograd_grad_output_f32 failed (status {status}) for F({m}x{m}, 3x3) "
                           f"on a {dy.shape} output gradient")
    return D
