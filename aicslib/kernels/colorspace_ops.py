"""Colour-space and colour-adjustment kernels (TF's core/kernels/image/).

| here                         | TensorFlow                                            |
|------------------------------|-------------------------------------------------------|
| ``rgb_to_hsv``/``hsv_to_rgb``| colorspace_op.h                                       |
| ``adjust_contrastv2``        | adjust_contrast_op.cc                                 |
| ``adjust_saturation``        | adjust_saturation_op.cc                               |
| ``adjust_hue``               | adjust_hue_op.cc                                      |

The adjust kernels compute in float32 whatever the input dtype (half or
float) and return the input dtype, as TF's CPU kernels do. AdjustSaturation
and AdjustHue carry their own HSV conversions, as their C++ files do, rather
than RGBToHSV's, so that they round like TensorFlow.
"""
import numpy as np

from ..framework import errors as _errors
from ..framework.kernel_registry import register_kernel

_F32 = np.float32


def _invalid(msg):
    return _errors.InvalidArgumentError(None, None, msg)


def _is_float(dt):
    return np.issubdtype(dt, np.floating)


def _check_rgb(image, op):
    if image.ndim < 3:
        raise _invalid(f"{op}: input must be at least 3-D, got shape{list(image.shape)}")
    if image.shape[-1] != 3:
        raise _invalid(f"{op}: input must have 3 channels but instead has {image.shape[-1]} channels.")


@register_kernel("AdjustContrastv2")
def adjust_contrastv2(images, contrast_factor):
    """AdjustContrastv2 kernel: ``(x - mean) * factor + mean``, mean per image and channel."""
    dtype = np.asarray(images).dtype
    images = np.asarray(images, _F32)
    if images.ndim < 3:
        raise _invalid(f"AdjustContrastv2: input must be at least 3-D, got shape{list(images.shape)}")
    f = np.asarray(contrast_factor, _F32)
    if f.ndim != 0:
        raise _invalid(f"AdjustContrastv2: contrast_factor must be scalar: {list(f.shape)}")
    h, w = images.shape[-3], images.shape[-2]
    sums = images.sum(axis=(-3, -2), keepdims=True, dtype=_F32)
    mean = (sums * _F32(1.0 / (h * w))).astype(_F32) if h * w else sums
    return ((images - mean) * f + mean).astype(dtype)


def _rgb_to_hsv_scalarwise(r, g, b):
    """internal::rgb_to_hsv of adjust_saturation_op.cc, vectorised (float32)."""
    vv = np.maximum(r, np.maximum(g, b))
    rng = (vv - np.minimum(r, np.minimum(g, b))).astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(vv > 0, rng / vv, _F32(0)).astype(_F32)
        norm = (_F32(1.0) / (_F32(6.0) * rng)).astype(_F32)
        hr = norm * (g - b)
        hg = ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(_F32)
        hb = ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(_F32)
    h = np.where(r == vv, hr, np.where(g == vv, hg, hb)).astype(_F32)
    h = np.where(rng <= 0, _F32(0), h)
    h = np.where(h < 0, h + _F32(1), h).astype(_F32)
    return h, s, vv


def _hsv_to_rgb_scalarwise(h, s, v):
    c = (s * v).astype(_F32)
    m = (v - c).astype(_F32)
    dh = (h * _F32(6)).astype(_F32)
    cat = dh.astype(np.int64)              # static_cast<int>: truncation
    fmodu = np.fmod(dh, _F32(2.0)).astype(_F32)
    fmodu = np.where(fmodu < 0, fmodu + _F32(2.0), fmodu)
    x = (c * (_F32(1) - np.abs(fmodu - _F32(1)))).astype(_F32)
    z = np.zeros_like(c)
    rr = np.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4, cat == 5], [c, x, z, z, x, c], z)
    gg = np.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4, cat == 5], [x, c, c, x, z, z], z)
    bb = np.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4, cat == 5], [z, z, x, c, c, x], z)
    return (rr + m).astype(_F32), (gg + m).astype(_F32), (bb + m).astype(_F32)


@register_kernel("AdjustSaturation")
def adjust_saturation(images, scale):
    """AdjustSaturation kernel: HSV, ``s = clip(s * scale, 0, 1)``, back to RGB."""
    dtype = np.asarray(images).dtype
    images = np.asarray(images, _F32)
    _check_rgb(images, "AdjustSaturation")
    h, s, v = _rgb_to_hsv_scalarwise(images[..., 0], images[..., 1], images[..., 2])
    s = np.minimum(_F32(1.0), np.maximum(_F32(0.0), (s * _F32(scale)).astype(_F32)))
    return np.stack(_hsv_to_rgb_scalarwise(h, s, v), axis=-1).astype(dtype)


@register_kernel("AdjustHue")
def adjust_hue(images, delta):
    """AdjustHue kernel: hue in [0, 6) from the sorted channels, rotated by 6 * delta."""
    dtype = np.asarray(images).dtype
    images = np.asarray(images, _F32)
    _check_rgb(images, "AdjustHue")
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    # rgb_to_hv_range: classify by channel order (ties go to either side)
    r_lt_g = r < g
    conds = [r_lt_g & (b < r), r_lt_g & ~(b < r) & (b > g), r_lt_g & ~(b < r) & ~(b > g),
             ~r_lt_g & (b < g), ~r_lt_g & ~(b < g) & (b > r)]
    cat = np.select(conds, [1, 3, 2, 0, 4], 5)
    vmax = np.select(conds, [g, b, g, r, b], r)
    vmid = np.select(conds, [r, g, b, g, r], b)
    vmin = np.select(conds, [b, r, r, b, g], g)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((vmid - vmin) / (vmax - vmin)).astype(_F32)
    inc = (cat & 1) == 0
    h = (cat.astype(_F32) + np.where(inc, ratio, _F32(1) - ratio)).astype(_F32)
    h = np.where(vmax == vmin, _F32(0), h).astype(_F32)
    h = (h + _F32(delta) * _F32(6)).astype(_F32)
    # while (h < 0) h += 6; while (h >= 6) h -= 6;
    for _ in range(4):
        h = np.where(h < 0, h + _F32(6), h).astype(_F32)
        h = np.where(h >= 6, h - _F32(6), h).astype(_F32)
    # hv_range_to_rgb
    cat = h.astype(np.int64)
    ratio = (h - cat.astype(_F32)).astype(_F32)
    inc = (cat & 1) == 0
    ratio = np.where(inc, ratio, _F32(1) - ratio).astype(_F32)
    vmid = (vmin + ratio * (vmax - vmin)).astype(_F32)
    cs = [cat == 0, cat == 1, cat == 2, cat == 3, cat == 4]
    out_r = np.select(cs, [vmax, vmid, vmin, vmin, vmid], vmax)
    out_g = np.select(cs, [vmid, vmax, vmax, vmid, vmin], vmin)
    out_b = np.select(cs, [vmin, vmin, vmid, vmax, vmax], vmid)
    return np.stack([out_r, out_g, out_b], axis=-1).astype(dtype)


@register_kernel("RGBToHSV")
def rgb_to_hsv(images):
    """RGBToHSV kernel (colorspace_op.h), float input in [0, 1]."""
    images = np.asarray(images)
    if not _is_float(images.dtype):
        raise TypeError(f"rgb_to_hsv expects a float tensor, got {images.dtype}")
    if images.ndim < 1 or images.shape[-1] != 3:
        channels = images.shape[-1] if images.ndim else 0
        raise _invalid(f"RGBToHSV: input must have 3 channels but input only has {channels} channels.")
    dt = images.dtype
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    mn = np.minimum(np.minimum(r, g), b)
    rng = (v - mn).astype(dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, rng / v, 0).astype(dt)
        norm = (np.array(1, dt) / rng * np.array(1.0 / 6.0, dt)).astype(dt)
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + np.array(2.0 / 6.0, dt),
                              norm * (r - g) + np.array(4.0 / 6.0, dt))).astype(dt)
    h = np.where(rng > 0, h, 0).astype(dt)
    h = np.where(h < 0, h + np.array(1, dt), h).astype(dt)
    return np.stack([h, s, v], axis=-1)


@register_kernel("HSVToRGB")
def hsv_to_rgb(images):
    """HSVToRGB kernel (colorspace_op.h): piecewise-linear channels of ``6h``."""
    images = np.asarray(images)
    if not _is_float(images.dtype):
        raise TypeError(f"hsv_to_rgb expects a float tensor, got {images.dtype}")
    if images.ndim < 1 or images.shape[-1] != 3:
        raise _invalid("HSVToRGB: input must have 3 channels")
    dt = images.dtype
    h, s, v = images[..., 0], images[..., 1], images[..., 2]
    dh = (h * np.array(6, dt)).astype(dt)
    dr = np.clip(np.abs(dh - 3) - 1, 0, 1).astype(dt)
    dg = np.clip(-np.abs(dh - 2) + 2, 0, 1).astype(dt)
    db = np.clip(-np.abs(dh - 4) + 2, 0, 1).astype(dt)
    one_s = (1 - s).astype(dt)
    return np.stack([((one_s + s * dr) * v), ((one_s + s * dg) * v), ((one_s + s * db) * v)],
                    axis=-1).astype(dt)
