"""Resize kernels and their gradients (TF's core/kernels/image/).

| here                         | TensorFlow                                            |
|------------------------------|-------------------------------------------------------|
| ``resize_bilinear``          | resize_bilinear_op.cc                                 |
| ``resize_nearest_neighbor``  | resize_nearest_neighbor_op.cc                         |
| ``resize_bicubic``           | resize_bicubic_op.cc                                  |
| ``resize_area``              | resize_area_op.cc                                     |
| ``scale_and_translate``      | scale_and_translate_op.cc, sampling_kernels.h         |
|                              | (antialiased ``tf.image.resize``)                     |
| ``*_grad``                   | the ``*Grad`` kernels in the same files               |

Each kernel takes 4-D ``[batch, height, width, channels]`` input, as TF's do.
Arithmetic is done in float32 in the same order as the C++ kernels (for
example bilinear interpolates along x first, then y), so results match
TensorFlow to the last bit or within a few float32 ulps.
"""
import numpy as np

from ..framework import errors as _errors
from ..framework.allocator import check_allocation
from ..framework.kernel_registry import register_kernel

_F32 = np.float32


def _invalid(msg):
    return _errors.InvalidArgumentError(None, None, msg)


def _check_resize_input(images, size, op):
    images = np.asarray(images)
    if images.ndim != 4:
        raise _invalid(f"{op}: input must be 4-dimensional{list(images.shape)}")
    size = np.asarray(size)
    if size.ndim != 1:
        raise _invalid(f"{op}: shape_t must be 1-dimensional{list(size.shape)}")
    if size.shape[0] != 2:
        raise _invalid(f"{op}: shape_t must have two elements{list(size.shape)}")
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise _invalid(f"{op}: output dimensions must be positive")
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise _invalid(f"{op}: input image must be of non-zero size")
    out_dtype = images.dtype if op == "ResizeNearestNeighbor" else _F32
    check_allocation([images.shape[0], out_h, out_w, images.shape[3]], out_dtype)
    return images, out_h, out_w


def _resize_scale(in_size, out_size, align_corners):
    """CalculateResizeScale in image_resizer_state.h (float32)."""
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _check_centers(align_corners, half_pixel_centers, op):
    if half_pixel_centers and align_corners:
        raise _invalid(f"{op}: If half_pixel_centers is True, align_corners must be False.")


def _bilinear_weights(in_size, out_size, align_corners, half_pixel_centers):
    """compute_interpolation_weights: (lower, upper, lerp) per output index."""
    scale = _resize_scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=_F32)
    if half_pixel_centers:
        src = (i + _F32(0.5)) * scale - _F32(0.5)     # HalfPixelScaler
    else:
        src = i * scale                               # LegacyScaler
    src = src.astype(_F32)
    fl = np.floor(src)
    lower = np.maximum(fl.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    lerp = (src - fl).astype(_F32)
    return lower, upper, lerp



@register_kernel("ResizeBilinear")
def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False):
    """ResizeBilinear kernel: 4-D in, float32 out.

    ``half_pixel_centers=True`` (TF2's ``tf.image.resize``): output pixel ``i``
    samples input coordinate ``(i + 0.5) * in/out - 0.5``. The legacy TF1
    default (both flags False) samples ``i * in/out``, which shifts the image
    up-left by half an output pixel; ``align_corners=True`` samples
    ``i * (in-1)/(out-1)`` so the corner pixels coincide. Neighbours are
    clamped at the border. Per output pixel::

        top    = tl + (tr - tl) * x_lerp
        bottom = bl + (br - bl) * x_lerp
        out    = top + (bottom - top) * y_lerp
    """
    images, out_h, out_w = _check_resize_input(images, size, "ResizeBilinear")
    _check_centers(align_corners, half_pixel_centers, "ResizeBilinear")
    n, in_h, in_w, c = images.shape
    ylo, yhi, yl = _bilinear_weights(in_h, out_h, align_corners, half_pixel_centers)
    xlo, xhi, xl = _bilinear_weights(in_w, out_w, align_corners, half_pixel_centers)
    out = np.empty((n, out_h, out_w, c), _F32)
    # Optimised for NumPy, same arithmetic: each corner is fetched with a
    # strided view when its indices form an arithmetic progression (integer
    # downscale factors) and with a gather otherwise; gathers run on the source
    # dtype (a uint8 pixel is moved as one 3-byte item) and the conversion to
    # float32 comes after. The lerp weights are repeated per channel so every
    # multiply broadcasts along a contiguous axis. Work goes in blocks of rows
    # so the temporaries stay in cache.
    xl_rep = np.repeat(xl, c)[None, None, :]          # (1, 1, out_w * c)
    block = max(1, (1 << 16) // max(out_w * c, 1))
    for b in range(n):
        img = images[b]
        for r0 in range(0, out_h, block):
            r1 = min(out_h, r0 + block)
            yl_b = yl[r0:r1, None]
            tl = _corner(img, ylo[r0:r1], xlo)
            tr = _corner(img, ylo[r0:r1], xhi)
            np.subtract(tr, tl, out=tr)
            np.multiply(tr, xl_rep[0], out=tr)
            np.add(tl, tr, out=tl)                 # top
            bl = _corner(img, yhi[r0:r1], xlo)
            br = _corner(img, yhi[r0:r1], xhi)
            np.subtract(br, bl, out=br)
            np.multiply(br, xl_rep[0], out=br)
            np.add(bl, br, out=bl)                 # bottom
            np.subtract(bl, tl, out=bl)
            np.multiply(bl, yl_b, out=bl)
            np.add(tl, bl, out=out[b, r0:r1].reshape(r1 - r0, out_w * c))
    return out


def _as_slice(idx):
    """A slice equal to the index array, if it is an increasing progression."""
    if len(idx) == 1:
        return slice(int(idx[0]), int(idx[0]) + 1)
    step = int(idx[1] - idx[0])
    if step <= 0 or not np.array_equal(np.diff(idx), np.full(len(idx) - 1, step)):
        return None
    return slice(int(idx[0]), int(idx[-1]) + 1, step)


def _corner(img, yidx, xidx):
    """img[yidx][:, xidx] as float32 of shape (len(yidx), len(xidx) * C)."""
    h, w, c = img.shape
    ys = _as_slice(yidx)
    rows = img[ys] if ys is not None else np.take(img, yidx, axis=0)
    xs = _as_slice(xidx)
    if xs is not None:
        cols = rows[:, xs]
    elif rows.dtype.itemsize * c <= 16 and rows.strides[-1] == rows.itemsize and rows.strides[-2] == rows.itemsize * c:
        pix = rows.view(np.dtype((np.void, rows.itemsize * c)))[..., 0]
        cols = np.take(pix, xidx, axis=1).view(rows.dtype).reshape(len(yidx), len(xidx), c)
    else:
        cols = np.take(rows, xidx, axis=1)
    return cols.astype(_F32).reshape(len(yidx), len(xidx) * c)


def _round_half_away(x):
    fl = np.floor(x)
    return fl + ((x - fl) >= _F32(0.5))


def _nearest_indices(in_size, out_size, align_corners, half_pixel_centers):
    scale = _resize_scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=_F32)
    if half_pixel_centers:
        src = ((i + _F32(0.5)) * scale).astype(_F32)   # HalfPixelScalerForNN: no -0.5
    else:
        src = (i * scale).astype(_F32)
    idx = _round_half_away(src) if align_corners else np.floor(src)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        idx = np.maximum(idx, 0)
    return idx


@register_kernel("ResizeNearestNeighbor")
def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False):
    """ResizeNearestNeighbor kernel: keeps the input dtype.

    Source index: ``min(floor((i + 0.5) * in/out), in - 1)`` with half-pixel
    centres (TF2), ``min(floor(i * in/out), in - 1)`` legacy, and
    ``round(i * (in-1)/(out-1))`` (half away from zero) with align_corners.
    """
    images, out_h, out_w = _check_resize_input(images, size, "ResizeNearestNeighbor")
    _check_centers(align_corners, half_pixel_centers, "ResizeNearestNeighbor")
    yi = _nearest_indices(images.shape[1], out_h, align_corners, half_pixel_centers)
    xi = _nearest_indices(images.shape[2], out_w, align_corners, half_pixel_centers)
    return np.ascontiguousarray(images[:, yi][:, :, xi])


_CUBIC_TABLE_SIZE = 1024
_cubic_tables = {}


def _cubic_coeffs_table(a):
    """InitCoeffsTable: kernel sampled at 1/1024 steps (double math, stored float)."""
    if a not in _cubic_tables:
        x = np.arange(_CUBIC_TABLE_SIZE + 1, dtype=np.float64) / _CUBIC_TABLE_SIZE
        x = x.astype(_F32).astype(np.float64)
        t = np.empty((_CUBIC_TABLE_SIZE + 1) * 2, _F32)
        t[0::2] = ((a + 2) * x - (a + 3)) * x * x + 1
        x1 = (x.astype(_F32) + _F32(1.0)).astype(np.float64)
        t[1::2] = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
        _cubic_tables[a] = t
    return _cubic_tables[a]


def _bicubic_weights(in_size, out_size, align_corners, half_pixel_centers):
    """GetWeightsAndIndices: 4 indices and weights per output index."""
    scale = _resize_scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=_F32)
    if half_pixel_centers:
        src = ((i + _F32(0.5)) * scale - _F32(0.5)).astype(_F32)
    else:
        src = (i * scale).astype(_F32)
    in_loc = np.floor(src).astype(np.int64)
    delta = (src - in_loc.astype(_F32)).astype(_F32)
    offset = np.rint(delta * _F32(_CUBIC_TABLE_SIZE)).astype(np.int64)   # lrintf
    use_keys = bool(half_pixel_centers)
    table = _cubic_coeffs_table(-0.5 if use_keys else -0.75)
    w = np.stack([table[offset * 2 + 1], table[offset * 2],
                  table[(_CUBIC_TABLE_SIZE - offset) * 2],
                  table[(_CUBIC_TABLE_SIZE - offset) * 2 + 1]], axis=1).astype(_F32)
    raw = np.stack([in_loc - 1, in_loc, in_loc + 1, in_loc + 2], axis=1)
    idx = np.clip(raw, 0, in_size - 1)
    if use_keys:
        # Keys cubic (TF2): samples outside the image get weight 0 and the rest
        # are renormalised, as scale_and_translate does.
        w = np.where(idx == raw, w, _F32(0)).astype(_F32)
        total = (((w[:, 0] + w[:, 1]) + w[:, 2]) + w[:, 3]).astype(_F32)
        ok = np.abs(total) >= _F32(1000.0) * np.finfo(_F32).tiny
        with np.errstate(divide="ignore"):
            inv = (_F32(1.0) / total).astype(_F32)
        w = np.where(ok[:, None], w * inv[:, None], w).astype(_F32)
    return idx, w


@register_kernel("ResizeBicubic")
def resize_bicubic(images, size, align_corners=False, half_pixel_centers=False):
    """ResizeBicubic kernel: float32 out.

    Coefficients come from a 1025-entry table of the cubic convolution kernel
    (``a = -0.5``, Keys, with half-pixel centres as in TF2; ``a = -0.75``
    legacy), looked up at ``round(frac * 1024)``. Interpolates along x, then y.
    """
    images, out_h, out_w = _check_resize_input(images, size, "ResizeBicubic")
    _check_centers(align_corners, half_pixel_centers, "ResizeBicubic")
    yi, yw = _bicubic_weights(images.shape[1], out_h, align_corners, half_pixel_centers)
    xi, xw = _bicubic_weights(images.shape[2], out_w, align_corners, half_pixel_centers)
    x = images.astype(_F32, copy=False)
    # x pass for every input row: sum_k w_k * v_k (left to right, float32)
    cols = [np.take(x, xi[:, k], axis=2) * xw[None, None, :, k, None] for k in range(4)]
    xs = ((cols[0] + cols[1]) + cols[2]) + cols[3]
    rows = [np.take(xs, yi[:, k], axis=1) * yw[None, :, k, None, None] for k in range(4)]
    return (((rows[0] + rows[1]) + rows[2]) + rows[3]).astype(_F32)


def _area_matrix(in_size, out_size, align_corners):
    """Weights of resize_area along one axis: ``A[out, in]`` (float32)."""
    scale = _resize_scale(in_size, out_size, align_corners)
    A = np.zeros((out_size, in_size), _F32)
    for o in range(out_size):
        lo = _F32(o) * scale
        hi = _F32(o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            if i < lo:
                s = scale if i + 1 > hi else _F32(i + 1) - lo
            else:
                s = (hi - _F32(i)) if i + 1 > hi else _F32(1.0)
            A[o, min(in_size - 1, max(0, i))] += _F32(s)
    return A, scale


@register_kernel("ResizeArea")
def resize_area(images, size, align_corners=False):
    """ResizeArea kernel: each output pixel averages the input area it covers.

    Pixel ``o`` covers ``[o * s, (o+1) * s)`` with ``s = in/out``; partially
    covered input pixels count with their covered fraction, and the sum is
    multiplied by ``1 / (s_h * s_w)``. (TF always uses these pixel-area
    semantics; ``half_pixel_centers`` does not apply.)
    """
    images, out_h, out_w = _check_resize_input(images, size, "ResizeArea")
    Ay, sy = _area_matrix(images.shape[1], out_h, align_corners)
    Ax, sx = _area_matrix(images.shape[2], out_w, align_corners)
    x = images.astype(_F32, copy=False)
    t = _apply_band(x, Ax, 2)        # sum over x first, then y, as the kernel does
    t = _apply_band(t, Ay, 1)
    scale = _F32(1.0 / float(_F32(sy * sx)))  # 1.0 / (hs * ws): float product, double divide
    return (t * scale).astype(_F32)


def _kernel_fn(kernel_type):
    def triangle(x):
        return np.where(x < 1.0, 1.0 - x, 0.0).astype(_F32)

    def keyscubic(x):
        return np.where(x >= 2.0, 0.0, np.where(
            x >= 1.0, ((_F32(-0.5) * x + _F32(2.5)) * x - _F32(4.0)) * x + _F32(2.0),
            ((_F32(1.5) * x - _F32(2.5)) * x) * x + _F32(1.0))).astype(_F32)

    def mitchellcubic(x):
        return np.where(x >= 2.0, 0.0, np.where(
            x >= 1.0, (((_F32(-7.0 / 18.0)) * x + _F32(2.0)) * x - _F32(10.0 / 3.0)) * x + _F32(16.0 / 9.0),
            (((_F32(7.0 / 6.0)) * x - _F32(2.0)) * x) * x + _F32(8.0 / 9.0))).astype(_F32)

    def lanczos(radius):
        def f(x):
            pi = _F32(3.14159265359)
            with np.errstate(divide="ignore", invalid="ignore"):
                v = (_F32(radius) * np.sin(pi * x) * np.sin(pi * x / _F32(radius))
                     / (pi * pi * x * x)).astype(_F32)
            return np.where(x > radius, 0.0, np.where(x <= 1e-3, 1.0, v)).astype(_F32)
        return f, float(radius)

    def gaussian(x):
        sigma = _F32(1.5) / _F32(3.0)
        v = np.exp(-(x.astype(np.float64) ** 2) / (2.0 * float(sigma) * float(sigma)))
        return np.where(x >= 1.5, 0.0, v).astype(_F32)

    def box(x):
        return np.where(x < 0.5, 1.0, np.where(x == 0.5, 0.5, 0.0)).astype(_F32)

    table = {
        "triangle": (triangle, 1.0), "keyscubic": (keyscubic, 2.0),
        "mitchellcubic": (mitchellcubic, 2.0), "lanczos1": lanczos(1),
        "lanczos3": lanczos(3), "lanczos5": lanczos(5), "gaussian": (gaussian, 1.5),
        "box": (box, 1.0),
    }
    if kernel_type not in table:
        raise _invalid(f"ScaleAndTranslate: Unrecognized kernel type: {kernel_type}")
    return table[kernel_type]


def _span_matrix(in_size, out_size, scale, translate, kernel_type, antialias):
    """ComputeSpans as a dense ``W[out, in]`` float32 matrix."""
    kernel, radius = _kernel_fn(kernel_type)
    inv_scale = _F32(1.0 / float(scale))
    inv_translate = _F32(-inv_scale * _F32(translate))
    kernel_scale = max(inv_scale, _F32(1.0)) if antialias else _F32(1.0)
    one_over_kernel_scale = _F32(1.0) / kernel_scale
    span_size = min(2 * int(np.ceil(_F32(radius) * kernel_scale)) + 1, in_size)
    W = np.zeros((out_size, in_size), _F32)
    for x in range(out_size):
        sample = _F32(_F32(x) + _F32(0.5)) * inv_scale + inv_translate
        if sample < 0 or sample > in_size:
            continue
        start = int(np.ceil(sample - _F32(radius) * kernel_scale - _F32(0.5)))
        end = int(np.floor(sample + _F32(radius) * kernel_scale - _F32(0.5)))
        start = min(max(start, 0), in_size - 1)
        end = min(max(end, 0), in_size - 1) + 1
        if end - start > span_size:  # cannot happen; mirrors the kernel's check
            raise _errors.InternalError(None, None, "ScaleAndTranslate: span too large")
        src = np.arange(start, end, dtype=_F32)
        pos = (src + _F32(0.5) - sample).astype(_F32)
        w = kernel(np.abs(pos * one_over_kernel_scale).astype(_F32))
        total = _F32(0)
        for v in w:
            total = _F32(total + v)
        if abs(total) >= _F32(1000.0) * np.finfo(_F32).tiny:
            W[x, start:end] = w * (_F32(1.0) / total)
    return W


@register_kernel("ScaleAndTranslate")
def scale_and_translate(images, size, scale, translation, kernel_type="lanczos3",
                        antialias=True):
    """ScaleAndTranslate kernel (used by ``tf.image.resize(..., antialias=True)``).

    Output pixel centre ``x + 0.5`` maps to input position
    ``(x + 0.5 - t) / s``. The kernel (triangle = bilinear, keyscubic = bicubic,
    lanczos3/5, gaussian, mitchellcubic, box) is widened by ``1/s`` when
    downsampling with ``antialias``, so it low-pass filters instead of skipping
    pixels; weights of each output pixel are normalised to sum to 1.
    """
    images, out_h, out_w = _check_resize_input(images, size, "ScaleAndTranslate")
    scale = np.asarray(scale, _F32).reshape(-1)
    translation = np.asarray(translation, _F32).reshape(-1)
    if scale.shape != (2,) or translation.shape != (2,):
        raise _invalid("ScaleAndTranslate: scale and translation must be 1-D with 2 elements")
    if scale[0] <= 0 or scale[1] <= 0:
        raise _invalid("ScaleAndTranslate: Scale must be greater than zero.")
    Wy = _span_matrix(images.shape[1], out_h, scale[0], translation[0], kernel_type, antialias)
    Wx = _span_matrix(images.shape[2], out_w, scale[1], translation[1], kernel_type, antialias)
    x = images.astype(_F32, copy=False)
    t = _apply_band(x, Wy, 1)        # rows (y) first, as GatherSpans
    return _apply_band(t, Wx, 2)


def _apply_band(x, W, axis):
    """``sum_i W[o, i] * x[..., i, ...]`` along ``axis``, using that each row of W
    is a short band (a span): one gather and multiply-add per tap, float32."""
    out_size, in_size = W.shape
    nz = W != 0
    has = nz.any(axis=1)
    start = np.where(has, nz.argmax(axis=1), 0)
    end = np.where(has, in_size - nz[:, ::-1].argmax(axis=1), 0)
    span = int(max(1, (end - start).max(initial=1)))
    shape = [1] * x.ndim
    shape[axis] = out_size
    out = None
    for k in range(span):
        idx = start + k
        valid = idx < in_size
        idx = np.minimum(idx, in_size - 1)
        w = np.where(valid, W[np.arange(out_size), idx], _F32(0)).astype(_F32).reshape(shape)
        term = np.take(x, idx, axis=axis) * w
        out = term if out is None else np.add(out, term, out=out)
    return out.astype(_F32, copy=False)


# --------------------------------------------------------------------------
# Gradients of the resize kernels. Each resize is linear and separable:
# out = Wy . x . Wx^T per image and channel, so its gradient is
# dx = Wy^T . dout . Wx (TF's ResizeBilinearGrad etc. scatter the same weights).
# --------------------------------------------------------------------------

def _bilinear_matrix(in_size, out_size, align_corners, half_pixel_centers):
    lo, hi, lerp = _bilinear_weights(in_size, out_size, align_corners, half_pixel_centers)
    W = np.zeros((out_size, in_size), np.float64)
    rows = np.arange(out_size)
    np.add.at(W, (rows, lo), 1.0 - lerp.astype(np.float64))
    np.add.at(W, (rows, hi), lerp.astype(np.float64))
    return W


def _nearest_matrix(in_size, out_size, align_corners, half_pixel_centers):
    idx = _nearest_indices(in_size, out_size, align_corners, half_pixel_centers)
    W = np.zeros((out_size, in_size), np.float64)
    W[np.arange(out_size), idx] = 1.0
    return W


def _bicubic_matrix(in_size, out_size, align_corners, half_pixel_centers):
    idx, w = _bicubic_weights(in_size, out_size, align_corners, half_pixel_centers)
    W = np.zeros((out_size, in_size), np.float64)
    for k in range(4):
        np.add.at(W, (np.arange(out_size), idx[:, k]), w[:, k].astype(np.float64))
    return W


def _apply_transpose(grads, Wy, Wx, dtype):
    g = np.asarray(grads, np.float64)
    t = np.einsum("oi,nopc->nipc", Wy, g, optimize=True)
    return np.einsum("pj,nipc->nijc", Wx, t, optimize=True).astype(dtype)


@register_kernel("ResizeBilinearGrad")
def resize_bilinear_grad(grads, original_image, align_corners=False, half_pixel_centers=False):
    """ResizeBilinearGrad: d(original_image) from d(resized), same dtype as the image."""
    _check_centers(align_corners, half_pixel_centers, "ResizeBilinearGrad")
    _, h, w, _ = original_image.shape
    _, oh, ow, _ = grads.shape
    return _apply_transpose(grads, _bilinear_matrix(h, oh, align_corners, half_pixel_centers),
                            _bilinear_matrix(w, ow, align_corners, half_pixel_centers), original_image.dtype)


@register_kernel("ResizeNearestNeighborGrad")
def resize_nearest_neighbor_grad(grads, size, align_corners=False, half_pixel_centers=False):
    """ResizeNearestNeighborGrad: each output gradient goes to the pixel it copied."""
    _check_centers(align_corners, half_pixel_centers, "ResizeNearestNeighborGrad")
    h, w = (int(v) for v in np.asarray(size).reshape(-1))
    _, oh, ow, _ = grads.shape
    return _apply_transpose(grads, _nearest_matrix(h, oh, align_corners, half_pixel_centers),
                            _nearest_matrix(w, ow, align_corners, half_pixel_centers), grads.dtype)


@register_kernel("ResizeBicubicGrad")
def resize_bicubic_grad(grads, original_image, align_corners=False, half_pixel_centers=False):
    _check_centers(align_corners, half_pixel_centers, "ResizeBicubicGrad")
    _, h, w, _ = original_image.shape
    _, oh, ow, _ = grads.shape
    return _apply_transpose(grads, _bicubic_matrix(h, oh, align_corners, half_pixel_centers),
                            _bicubic_matrix(w, ow, align_corners, half_pixel_centers), original_image.dtype)


@register_kernel("ScaleAndTranslateGrad")
def scale_and_translate_grad(grads, original_image, scale, translation, kernel_type="lanczos3",
                             antialias=True):
    _, h, w, _ = original_image.shape
    _, oh, ow, _ = grads.shape
    scale = np.asarray(scale, _F32).reshape(-1)
    translation = np.asarray(translation, _F32).reshape(-1)
    Wy = _span_matrix(h, oh, scale[0], translation[0], kernel_type, antialias).astype(np.float64)
    Wx = _span_matrix(w, ow, scale[1], translation[1], kernel_type, antialias).astype(np.float64)
    return _apply_transpose(grads, Wy, Wx, _F32)
