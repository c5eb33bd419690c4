"""NumPy reference versions of the composite ``tf.image`` functions.

TensorFlow writes these in Python from array and math ops
(python/ops/image_ops_impl.py), and so does aicslib/ops/image_ops.py. The
versions here redo the same arithmetic directly in NumPy, on top of the raw
kernels, so that the tests can compare the graph/eager result with
an independent computation and with values documented for TensorFlow.

Like ``tf.image`` they accept 3-D ``[height, width, channels]`` or 4-D input.
Not part of the package: nothing registered uses them.
"""
import numpy as np

from aicslib.framework import errors as _errors
from aicslib.kernels import colorspace_ops, resize_ops

_F32 = np.float32


def _invalid(msg):
    return _errors.InvalidArgumentError(None, None, msg)


# --------------------------------------------------------------------------
# tf.image.resize (TF2) and helpers shared by the composite functions
# --------------------------------------------------------------------------

def _to_4d(images, name="images"):
    images = np.asarray(images)
    if images.ndim == 3:
        return images[None], False
    if images.ndim == 4:
        return images, True
    raise ValueError(f"'{name}' (shape {images.shape}) must have either 3 or 4 dimensions.")


def _from_4d(x, is_batch):
    return x if is_batch else x[0]


def resize(images, size, method="bilinear", preserve_aspect_ratio=False,
           antialias=False):
    """``tf.image.resize`` with TF2 semantics.

    * bilinear/bicubic/nearest use half-pixel centres (TF2); area uses pixel
      areas; lanczos3/5, gaussian, mitchellcubic go through scale_and_translate.
    * ``antialias=True`` with bilinear/bicubic switches to scale_and_translate
      with the triangle/keyscubic kernel (low-pass filter when downsampling).
    * Output is float32, except ``nearest``, which keeps the input dtype.
    * ``preserve_aspect_ratio``: scale by ``min(h'/h, w'/w)`` and round
      (half to even) each side, so the result fits inside ``size``.
    """
    x, is_batch = _to_4d(images)
    size = np.asarray(size)
    if size.shape != (2,):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if not np.issubdtype(size.dtype, np.integer):
        raise TypeError(f"'size' must be an integer tensor, got {size.dtype}")
    new_h, new_w = int(size[0]), int(size[1])
    if preserve_aspect_ratio:
        h, w = _F32(x.shape[1]), _F32(x.shape[2])
        f = min(_F32(new_h) / h, _F32(new_w) / w)
        new_h = int(np.round(_F32(f * h)))
        new_w = int(np.round(_F32(f * w)))
    size = (new_h, new_w)
    method = str(method).lower() if not hasattr(method, "value") else method.value
    sat = ("lanczos3", "lanczos5", "gaussian", "mitchellcubic")

    def sat_resize(kernel):
        scale = np.array([_F32(new_h) / _F32(x.shape[1]), _F32(new_w) / _F32(x.shape[2])], _F32)
        return resize_ops.scale_and_translate(x, size, scale, np.zeros(2, _F32), kernel, antialias=antialias)

    if method == "bilinear":
        out = sat_resize("triangle") if antialias else resize_ops.resize_bilinear(x, size, half_pixel_centers=True)
    elif method == "nearest":
        out = resize_ops.resize_nearest_neighbor(x, size, half_pixel_centers=True)
    elif method == "bicubic":
        out = sat_resize("keyscubic") if antialias else resize_ops.resize_bicubic(x, size, half_pixel_centers=True)
    elif method == "area":
        out = resize_ops.resize_area(x, size)
    elif method in sat:
        out = sat_resize(method)
    else:
        raise ValueError(f"Resize method is not implemented: {method}")
    return _from_4d(out, is_batch)


# --------------------------------------------------------------------------
# Crops, pads, flips (python/ops/image_ops_impl.py)
# --------------------------------------------------------------------------

def _check_image(image, name="image"):
    image = np.asarray(image)
    if image.ndim not in (3, 4):
        raise ValueError(f"'{name}' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if any(d == 0 for d in image.shape[-3:]):
        raise ValueError(f"inner 3 dims of '{name}.shape' must be > 0: {image.shape}")
    return image


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Crops ``[offset_h : offset_h + target_h, offset_w : offset_w + target_w]``."""
    image = _check_image(image)
    x, is_batch = _to_4d(image)
    h, w = x.shape[1], x.shape[2]
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    if ow < 0:
        raise ValueError("offset_width must be >= 0.")
    if oh < 0:
        raise ValueError("offset_height must be >= 0.")
    if tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th <= 0:
        raise ValueError("target_height must be > 0.")
    if w < tw + ow:
        raise ValueError(f"width must be >= target + offset. (width {w}, target {tw}, offset {ow})")
    if h < th + oh:
        raise ValueError(f"height must be >= target + offset. (height {h}, target {th}, offset {oh})")
    return _from_4d(x[:, oh:oh + th, ow:ow + tw, :].copy(), is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Zero-pads to ``target`` with the image's top-left corner at ``offset``."""
    image = _check_image(image)
    x, is_batch = _to_4d(image)
    h, w = x.shape[1], x.shape[2]
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    after_w = tw - ow - w
    after_h = th - oh - h
    if oh < 0:
        raise ValueError("offset_height must be >= 0")
    if ow < 0:
        raise ValueError("offset_width must be >= 0")
    if after_w < 0:
        raise ValueError(f"width must be <= target - offset (width {w}, target {tw}, offset {ow})")
    if after_h < 0:
        raise ValueError(f"height must be <= target - offset (height {h}, target {th}, offset {oh})")
    out = np.pad(x, [(0, 0), (oh, after_h), (ow, after_w), (0, 0)])
    return _from_4d(out, is_batch)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centre-crops and/or zero-pads to the target size.

    Offsets are ``max(-diff // 2, 0)`` for the crop and ``max(diff // 2, 0)``
    for the pad (``diff = target - size``, Python floor division), so with an
    odd difference the extra row/column is removed from (or added at) the
    bottom/right.
    """
    image = _check_image(image)
    th, tw = int(target_height), int(target_width)
    if tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th <= 0:
        raise ValueError("target_height must be > 0.")
    x, is_batch = _to_4d(image)
    h, w = x.shape[1], x.shape[2]
    width_diff = tw - w
    offset_crop_width = max(-width_diff // 2, 0)
    offset_pad_width = max(width_diff // 2, 0)
    height_diff = th - h
    offset_crop_height = max(-height_diff // 2, 0)
    offset_pad_height = max(height_diff // 2, 0)
    cropped = crop_to_bounding_box(x, offset_crop_height, offset_crop_width, min(th, h), min(tw, w))
    resized = pad_to_bounding_box(cropped, offset_pad_height, offset_pad_width, th, tw)
    return _from_4d(resized, is_batch)


def central_crop(image, central_fraction):
    """Keeps the central ``central_fraction`` of height and width.

    TF computes ``start = int((h - h * fraction) / 2)`` (in double, truncated)
    and keeps ``h - 2 * start`` rows, so the crop is symmetric and can be one
    pixel larger than ``h * fraction`` (e.g. 300 x 0.875 -> 264 rows, not 262).
    """
    image = _check_image(image)
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return image
    x, is_batch = _to_4d(image)
    h, w = x.shape[1], x.shape[2]
    hs = int((float(h) - float(h) * central_fraction) / 2)
    ws = int((float(w) - float(w) * central_fraction) / 2)
    return _from_4d(x[:, hs:h - hs, ws:w - ws, :].copy(), is_batch)


def random_crop(value, size, seed=None, rng=None):
    """Random ``size``-shaped slice of ``value`` (any rank); offsets are uniform."""
    value = np.asarray(value)
    size = [int(s) for s in np.asarray(size).reshape(-1)]
    if len(size) != value.ndim:
        raise ValueError(f"size {size} must have as many elements as value has dimensions {value.shape}")
    if any(s > d for s, d in zip(size, value.shape)):
        raise _invalid(f"Need value.shape >= size, got {list(value.shape)} vs {size}")
    rng = rng if rng is not None else np.random.default_rng(seed)
    offs = [int(rng.integers(0, d - s + 1)) for s, d in zip(size, value.shape)]
    return value[tuple(slice(o, o + s) for o, s in zip(offs, size))].copy()


def flip_left_right(image):
    image = _check_image(image)
    return np.ascontiguousarray(image[..., :, ::-1, :])


def flip_up_down(image):
    image = _check_image(image)
    return np.ascontiguousarray(image[..., ::-1, :, :])


def transpose(image):
    image = _check_image(image)
    return np.ascontiguousarray(np.swapaxes(image, -3, -2))


def rot90(image, k=1):
    """Rotates counter-clockwise by ``k`` quarter turns (k may be negative)."""
    image = _check_image(image)
    return np.ascontiguousarray(np.rot90(image, int(k) % 4, axes=(image.ndim - 3, image.ndim - 2)))


# --------------------------------------------------------------------------
# dtype conversion
# --------------------------------------------------------------------------

def _is_float(dt):
    return np.issubdtype(dt, np.floating)


def _is_int(dt):
    return np.issubdtype(dt, np.integer) or dt == np.bool_


def _dtype_max(dt):
    return np.finfo(dt).max if _is_float(dt) else np.iinfo(dt).max


def _saturate_cast(x, dtype):
    """``tf.dtypes.saturate_cast``: clamp to the target range, then cast."""
    dtype = np.dtype(dtype)
    if _is_int(dtype) and dtype != np.bool_:
        info = np.iinfo(dtype)
        if _is_float(x.dtype):
            with np.errstate(invalid="ignore"):
                y = np.clip(x, info.min, info.max).astype(dtype)
            # float(max) may round above max (int32/int64): pin those to max
            return np.where(x >= float(info.max), info.max, y).astype(dtype)
        src = np.iinfo(x.dtype)
        if src.min < info.min or src.max > info.max:
            x = np.clip(x, max(info.min, src.min), min(info.max, src.max))
    return x.astype(dtype)


def convert_image_dtype(image, dtype, saturate=False):
    """``tf.image.convert_image_dtype``.

    Integers represent ``[0, MAX]``, floats ``[0, 1)``:

    * int -> int, narrowing: ``x // ((MAX_in + 1) // (MAX_out + 1))``;
      widening: ``x * ((MAX_out + 1) // (MAX_in + 1))`` (so uint8 255 -> 65280,
      a round trip is exact).
    * int -> float: ``cast(x) * (1 / MAX_in)`` (the reciprocal in the target
      float type, so 255 -> 1.0 exactly but not every value equals x / 255).
    * float -> int: ``cast(x * (MAX_out + 0.5))`` (truncation; 1.0 -> 255).
      Out-of-range floats wrap unless ``saturate=True``, which clamps first.
    * float -> float: plain cast.
    """
    image = np.asarray(image)
    dtype = np.dtype(dtype)
    if not (_is_float(dtype) or _is_int(dtype)):
        raise AttributeError("dtype must be either floating point or integer")
    if not (_is_float(image.dtype) or _is_int(image.dtype)):
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype:
        return image.copy()
    if _is_int(image.dtype) and _is_int(dtype):
        scale_in = int(_dtype_max(image.dtype))
        scale_out = int(_dtype_max(dtype))
        if scale_in > scale_out:
            scale = (scale_in + 1) // (scale_out + 1)
            scaled = np.floor_divide(image, np.array(scale, image.dtype))
            return _saturate_cast(scaled, dtype) if saturate else scaled.astype(dtype)
        cast = _saturate_cast(image, dtype) if saturate else image.astype(dtype)
        scale = (scale_out + 1) // (scale_in + 1)
        return (cast * np.array(scale, dtype)).astype(dtype)
    if _is_float(image.dtype) and _is_float(dtype):
        return image.astype(dtype)
    if _is_int(image.dtype):
        cast = image.astype(dtype)
        return (cast * np.array(1.0 / float(_dtype_max(image.dtype)), dtype)).astype(dtype)
    scale = float(_dtype_max(dtype)) + 0.5
    scaled = image * np.array(scale, image.dtype)
    if saturate:
        return _saturate_cast(scaled, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return scaled.astype(dtype)


def _to_float(image):
    """image -> float (float16/32 kept), as the adjust_* helpers do."""
    image = np.asarray(image)
    if image.dtype in (np.float16, np.float32):
        return image
    return convert_image_dtype(image, _F32)


# --------------------------------------------------------------------------
# Colour adjustments
# --------------------------------------------------------------------------

def adjust_brightness(image, delta):
    """``x + delta`` in float, converted back to the input dtype with saturation."""
    image = np.asarray(image)
    flt = _to_float(image)
    adjusted = (flt + np.array(delta, flt.dtype)).astype(flt.dtype)
    return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: per channel ``(x - mean) * factor + mean``."""
    images = np.asarray(images)
    flt = _to_float(images)
    adjusted = colorspace_ops.adjust_contrastv2(flt, contrast_factor)
    return convert_image_dtype(adjusted, images.dtype, saturate=True)


def adjust_saturation(image, saturation_factor):
    image = np.asarray(image)
    flt = _to_float(image)
    adjusted = colorspace_ops.adjust_saturation(flt, saturation_factor)
    return convert_image_dtype(adjusted, image.dtype)


def adjust_hue(image, delta):
    """``tf.image.adjust_hue``: rotate hue by ``delta`` (a fraction of the colour wheel)."""
    if not -1 <= float(delta) <= 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    image = np.asarray(image)
    flt = _to_float(image)
    adjusted = colorspace_ops.adjust_hue(flt, delta)
    return convert_image_dtype(adjusted, image.dtype)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * x ** gamma`` in float (ints scaled to [0, 1] first), back to the dtype."""
    image = np.asarray(image)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    if _is_float(image.dtype):
        return (gain * image ** np.array(gamma, image.dtype)).astype(image.dtype)
    flt = convert_image_dtype(image, _F32)
    adj = (_F32(gain) * flt ** _F32(gamma)).astype(_F32)
    return convert_image_dtype(adj, image.dtype, saturate=True)


def rgb_to_grayscale(images):
    """Weighted sum with ``[0.2989, 0.5870, 0.1140]`` in float, back to the dtype."""
    images = np.asarray(images)
    flt = convert_image_dtype(images, _F32)
    gray = np.tensordot(flt, np.array([0.2989, 0.5870, 0.1140], _F32), axes=([-1], [-1]))
    return convert_image_dtype(gray[..., None].astype(_F32), images.dtype)


def grayscale_to_rgb(images):
    images = np.asarray(images)
    if images.ndim < 2 or images.shape[-1] != 1:
        raise ValueError(f"Last dimension of a grayscale image should be size 1, got {images.shape}")
    return np.repeat(images, 3, axis=-1)


def per_image_standardization(image):
    """``(x - mean) / max(stddev, 1 / sqrt(num_pixels))`` per image, float32.

    ``num_pixels`` counts height * width * channels; the floor on the stddev
    keeps a uniform image from dividing by zero.
    """
    image = _check_image(image)
    x = image.astype(_F32)
    num = int(np.prod(x.shape[-3:]))
    axes = (-1, -2, -3)
    mean = x.mean(axis=axes, keepdims=True, dtype=_F32)
    var = np.square(x - mean).mean(axis=axes, keepdims=True, dtype=_F32)
    std = np.sqrt(var).astype(_F32)
    min_std = (_F32(1.0) / np.sqrt(_F32(num))).astype(_F32)
    adj = np.maximum(std, min_std)
    return ((x - mean) / adj).astype(_F32)
