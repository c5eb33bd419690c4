"""Colour: dtype conversion, colour spaces, adjustments (brightness, contrast, saturation, hue,
their random versions) and standardisation (the "Converting Between Colorspaces" and "Image
Adjustments" sections of TF's image_ops_impl.py).

``convert_image_dtype`` fixes what pixel values mean: integers [0, MAX], floats [0, 1). The
adjustments work in float and convert back to the input's dtype. Contrast, saturation, hue and
the HSV conversions are ops of their own (kernels: aicslib/kernels/colorspace_ops.py); the rest
is composed from array and math ops.
"""
import numpy as np

from ..framework import dtypes
from ..framework.execute import apply_op
from ..framework.ops import convert_to_tensor, name_scope
from . import array_ops, math_ops, random_ops
from .image_shapes import check_image, static_dims


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``: integers mean [0, MAX], floats [0, 1).

    int -> float: ``cast(x) * (1 / MAX_in)``; float -> int: ``cast(x * (MAX_out + 0.5))``
    (clamped first when ``saturate``); int -> int: floor-divide or multiply by the
    ratio of the ranges; float -> float: plain cast.
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == image.dtype:
        return array_ops.identity(image, name=name)
    with name_scope(name, "convert_image"):
        src_np, dst_np = image.dtype.as_numpy_dtype, dtype.as_numpy_dtype
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = int(np.iinfo(src_np).max), int(np.iinfo(dst_np).max)
            if scale_in > scale_out:
                scale = (scale_in + 1) // (scale_out + 1)
                scaled = math_ops.floordiv(image, np.asarray(scale, src_np))
                return _saturate_cast(scaled, dtype) if saturate else math_ops.cast(scaled, dtype)
            cast = _saturate_cast(image, dtype) if saturate else math_ops.cast(image, dtype)
            scale = (scale_out + 1) // (scale_in + 1)
            return math_ops.multiply(cast, np.asarray(scale, dst_np))
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype)
        if image.dtype.is_integer:
            cast = math_ops.cast(image, dtype)
            scale = 1.0 / float(np.iinfo(src_np).max)
            return math_ops.multiply(cast, np.asarray(scale, dst_np))
        scale = float(np.iinfo(dst_np).max) + 0.5
        scaled = math_ops.multiply(image, np.asarray(scale, src_np))
        return _saturate_cast(scaled, dtype) if saturate else math_ops.cast(scaled, dtype)


def _saturate_cast(value, dtype):
    """``tf.dtypes.saturate_cast``: clamp to the target's range, then cast."""
    dtype = dtypes.as_dtype(dtype)
    src = value.dtype.as_numpy_dtype
    info = np.iinfo(dtype.as_numpy_dtype)
    if value.dtype.is_floating:
        lo, hi = np.asarray(info.min, src), np.asarray(info.max, src)
        if float(hi) > info.max:       # float(max) rounded up (int32/int64 targets)
            hi = np.nextafter(hi, np.asarray(0, src))
        return math_ops.cast(math_ops.clip_by_value(value, lo, hi), dtype)
    sinfo = np.iinfo(src)
    if sinfo.min < info.min or sinfo.max > info.max:
        value = math_ops.clip_by_value(value, np.asarray(max(info.min, sinfo.min), src),
                                       np.asarray(min(info.max, sinfo.max), src))
    return math_ops.cast(value, dtype)


def _to_float(image):
    if image.dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def adjust_brightness(image, delta):
    """``image + delta`` in float (ints scaled to [0, 1] first), back with saturation."""
    with name_scope(None, "adjust_brightness"):
        image = convert_to_tensor(image, name="image")
        orig = image.dtype
        flt = _to_float(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype))
        return convert_image_dtype(adjusted, orig, saturate=True)


def _adjust_in_float(op_type, image, factor, scope, name=None, arg="image", saturate=False):
    """The colour op ``op_type`` run on ``image`` in float with a float32 ``factor``, the
    result converted back to the image's dtype."""
    with name_scope(name, scope):
        image = convert_to_tensor(image, name=arg)
        adjusted = apply_op(op_type, [_to_float(image), math_ops.cast(factor, dtypes.float32)])
        return convert_image_dtype(adjusted, image.dtype, saturate=saturate)


def adjust_contrast(images, contrast_factor):
    """Per image and channel: ``(x - mean) * contrast_factor + mean`` (AdjustContrastv2)."""
    return _adjust_in_float("AdjustContrastv2", images, contrast_factor, "adjust_contrast",
                            arg="images", saturate=True)


def adjust_saturation(image, saturation_factor, name=None):
    """Scale the HSV saturation by ``saturation_factor`` (clipped to [0, 1])."""
    return _adjust_in_float("AdjustSaturation", image, saturation_factor, "adjust_saturation", name)


def adjust_hue(image, delta, name=None):
    """Rotate the hue by ``delta`` (in [-1, 1], a fraction of the colour wheel)."""
    if isinstance(delta, (int, float, np.floating, np.integer)) and not -1 <= float(delta) <= 1:
        raise ValueError("delta must be in the interval [-1, 1]")
    return _adjust_in_float("AdjustHue", image, delta, "adjust_hue", name)


def random_brightness(image, max_delta, seed=None):
    """``adjust_brightness`` by a delta uniform in ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def _random_factor(lower, upper, seed):
    """A factor uniform in ``[lower, upper)``, checked as TF's random_contrast/saturation do."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return random_ops.random_uniform([], lower, upper, seed=seed)


def random_contrast(image, lower, upper, seed=None):
    """``adjust_contrast`` by a factor uniform in ``[lower, upper)``."""
    return adjust_contrast(image, _random_factor(lower, upper, seed))


def random_saturation(image, lower, upper, seed=None):
    return adjust_saturation(image, _random_factor(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def rgb_to_hsv(images, name=None):
    return apply_op("RGBToHSV", [images], name=name)


def hsv_to_rgb(images, name=None):
    return apply_op("HSVToRGB", [images], name=name)


def rgb_to_grayscale(images, name=None):
    """Weighted channel sum ``[0.2989, 0.5870, 0.1140]``, keeping a channel axis of 1."""
    with name_scope(name, "rgb_to_grayscale"):
        images = convert_to_tensor(images, name="images")
        orig = images.dtype
        flt = convert_image_dtype(images, dtypes.float32)
        w = np.array([0.2989, 0.5870, 0.1140], np.float32)
        gray = math_ops.reduce_sum(flt * w, axis=-1, keepdims=True)
        return convert_image_dtype(gray, orig)


def grayscale_to_rgb(images, name=None):
    with name_scope(name, "grayscale_to_rgb"):
        images = convert_to_tensor(images, name="images")
        rank, _ = static_dims(images)
        return array_ops.tile(images, [1] * (rank - 1) + [3])


def per_image_standardization(image, name=None):
    """``(x - mean) / max(stddev, 1/sqrt(N))`` per image (N = h*w*c), float32."""
    with name_scope(name, "per_image_standardization"):
        image = check_image(convert_to_tensor(image, name="image"))
        image = math_ops.cast(image, dtypes.float32)
        _, dims = static_dims(image)
        num_pixels = int(np.prod(dims[-3:])) if dims and all(d is not None for d in dims[-3:]) else None
        if num_pixels is None:
            num_pixels = math_ops.reduce_prod(array_ops.slice(array_ops.shape(image), [-3 + len(dims)], [3]))
        axes = [-1, -2, -3]
        mean = math_ops.reduce_mean(image, axis=axes, keepdims=True)
        var = math_ops.reduce_mean(math_ops.squared_difference(image, mean), axis=axes, keepdims=True)
        stddev = math_ops.sqrt(var)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, dtypes.float32))
        adjusted = math_ops.maximum(stddev, min_stddev)
        return math_ops.divide(math_ops.subtract(image, mean), adjusted)
