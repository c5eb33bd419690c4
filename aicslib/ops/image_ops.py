"""Image ops: definitions (TF's core/ops/image_ops.cc) and the Python API, ``aics.image``
(TF's python/ops/image_ops.py over image_ops_impl.py), by subject:

====================  ==========================================================================
``image_resize.py``   ``resize`` (TF2) and TF1's ``resize_bilinear`` and friends
``image_crop.py``     crops, pads, flips, ``transpose``, ``rot90``
``image_color.py``    ``convert_image_dtype``, colour spaces, adjustments, standardisation
``image_decode.py``   ``decode_image``, ``decode_jpeg``, ``decode_png``, ...
``image_shapes.py``   the rank and size helpers they share
``image_grad.py``     gradients (TF's python/ops/image_grad.py)
====================  ==========================================================================

Kernels with TF's exact arithmetic are in ``aicslib/kernels/``: resize_ops.py,
colorspace_ops.py, decode_image_op.py (TF's core/kernels/image/).
As in TensorFlow, only the numerical heavy lifting is an op of its own
(resizes, colour-space adjustments, decoding); crops, pads, flips, brightness,
dtype conversion and standardisation are composed in Python from array and
math ops, so they run eagerly and in graphs and get gradients for free.

TF2 vs TF1: ``resize`` follows TF2 (half-pixel centres, ``antialias``); the
TF1 functions with ``align_corners`` / legacy pixel centres are
``aics.compat.v1.image.resize_bilinear`` and friends.
"""
import numpy as np

from ..framework.gradient_registry import no_gradient
from ..framework.op_def import register_op
from ..framework.tensor_shape import TensorShape
from .image_color import (adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation,
                          convert_image_dtype, grayscale_to_rgb, hsv_to_rgb, per_image_standardization,
                          random_brightness, random_contrast, random_hue, random_saturation,
                          rgb_to_grayscale, rgb_to_hsv)
from .image_crop import (central_crop, crop_to_bounding_box, flip_left_right, flip_up_down,
                         pad_to_bounding_box, random_crop, random_flip_left_right, random_flip_up_down,
                         resize_image_with_crop_or_pad, resize_with_crop_or_pad, rot90, transpose)
from .image_decode import decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png
from .image_resize import (ResizeMethod, resize, resize_area, resize_bicubic, resize_bilinear,
                           resize_nearest_neighbor, scale_and_translate)

_REAL = "{int8, uint8, int16, int32, int64, half, bfloat16, float, double}"
_FLOAT = "{half, bfloat16, float, double}"


# ---------------------------------------------------------------------------
# Op definitions and shape functions

def _resize_shape(ctx):
    x = ctx.input_shape(0)
    if x.rank is not None and x.rank != 4:
        raise ValueError(f"input must be 4-dimensional, got shape {x}")
    size = ctx.input_constant(1)
    n, c = (x.dims[0], x.dims[3]) if x.rank == 4 else (None, None)
    if size is None:
        return TensorShape([n, None, None, c])
    size = np.asarray(size).reshape(-1)
    if size.shape != (2,):
        raise ValueError(f"size must have two elements, got {size.tolist()}")
    return TensorShape([n, int(size[0]), int(size[1]), c])


def _grad_like_input_shape(i):
    return lambda ctx: ctx.input_shape(i)


def _resize_op(builder, output_type):
    """The signature the resize family shares: images and a size in, resized images out."""
    return builder.input("images: T").input("size: int32").output(f"resized_images: {output_type}") \
        .attr(f"T: {_REAL}").attr("align_corners: bool = false").attr("half_pixel_centers: bool = false") \
        .set_shape_fn(_resize_shape)


def _resize_grad_op(builder):
    return builder.input("grads: float").input("original_image: T").output("output: T") \
        .attr(f"T: {_FLOAT}").attr("align_corners: bool = false").attr("half_pixel_centers: bool = false") \
        .set_shape_fn(_grad_like_input_shape(1))


_resize_op(register_op("ResizeBilinear"), "float")
_resize_op(register_op("ResizeNearestNeighbor"), "T")
_resize_op(register_op("ResizeBicubic"), "float")
register_op("ResizeArea").input("images: T").input("size: int32").output("resized_images: float") \
    .attr(f"T: {_REAL}").attr("align_corners: bool = false").set_shape_fn(_resize_shape)
register_op("ScaleAndTranslate").input("images: T").input("size: int32").input("scale: float") \
    .input("translation: float").output("resized_images: float").attr(f"T: {_REAL}") \
    .attr("kernel_type: string = 'lanczos3'").attr("antialias: bool = true").set_shape_fn(_resize_shape)

_resize_grad_op(register_op("ResizeBilinearGrad"))
_resize_grad_op(register_op("ResizeBicubicGrad"))


def _nn_grad_shape(ctx):
    g = ctx.input_shape(0)
    size = ctx.input_constant(1)
    n, c = (g.dims[0], g.dims[3]) if g.rank == 4 else (None, None)
    if size is None:
        return TensorShape([n, None, None, c])
    size = np.asarray(size).reshape(-1)
    return TensorShape([n, int(size[0]), int(size[1]), c])


register_op("ResizeNearestNeighborGrad").input("grads: T").input("size: int32").output("output: T") \
    .attr("T: {uint8, int8, int32, half, bfloat16, float, double}") \
    .attr("align_corners: bool = false").attr("half_pixel_centers: bool = false").set_shape_fn(_nn_grad_shape)
register_op("ScaleAndTranslateGrad").input("grads: T").input("original_image: T").input("scale: float") \
    .input("translation: float").output("output: T").attr("T: {float}") \
    .attr("kernel_type: string = 'lanczos3'").attr("antialias: bool = true") \
    .set_shape_fn(_grad_like_input_shape(1))

register_op("AdjustContrastv2").input("images: T").input("contrast_factor: float").output("output: T") \
    .attr("T: {half, float} = DT_FLOAT").set_shape_fn(_grad_like_input_shape(0))
register_op("AdjustSaturation").input("images: T").input("scale: float").output("output: T") \
    .attr("T: {half, float} = DT_FLOAT").set_shape_fn(_grad_like_input_shape(0))
register_op("AdjustHue").input("images: T").input("delta: float").output("output: T") \
    .attr("T: {half, float} = DT_FLOAT").set_shape_fn(_grad_like_input_shape(0))
register_op("RGBToHSV").input("images: T").output("output: T").attr(f"T: {_FLOAT} = DT_FLOAT") \
    .set_shape_fn(_grad_like_input_shape(0))
register_op("HSVToRGB").input("images: T").output("output: T").attr(f"T: {_FLOAT} = DT_FLOAT") \
    .set_shape_fn(_grad_like_input_shape(0))


def _decode_shape(ctx):
    if ctx.op_type == "DecodeGif":
        return TensorShape([None, None, None, 3])
    if ctx.op_type == "DecodeImage" and ctx.attr("expand_animations"):
        return TensorShape(None)
    ch = ctx.attr("channels")
    return TensorShape([None, None, ch if ch else None])


register_op("DecodeImage").input("contents: string").output("image: uint8").attr("channels: int = 0") \
    .attr("expand_animations: bool = true").set_shape_fn(_decode_shape)
register_op("DecodeJpeg").input("contents: string").output("image: uint8").attr("channels: int = 0") \
    .set_shape_fn(_decode_shape)
register_op("DecodePng").input("contents: string").output("image: uint8").attr("channels: int = 0") \
    .set_shape_fn(_decode_shape)
register_op("DecodeBmp").input("contents: string").output("image: uint8").attr("channels: int = 0") \
    .set_shape_fn(_decode_shape)
register_op("DecodeGif").input("contents: string").output("image: uint8").set_shape_fn(_decode_shape)

# As in TensorFlow, ResizeArea, AdjustContrastv2, AdjustSaturation, AdjustHue and HSVToRGB have
# no gradient registered at all: a tape that has to go through one raises LookupError (TF's
# autodiff guide shows exactly that with adjust_contrast). These are marked not differentiable
# instead: differentiating through them raises nothing and contributes nothing (aics.no_gradient).
no_gradient("RGBToHSV")
no_gradient("DecodeImage")
no_gradient("DecodeJpeg")
no_gradient("DecodePng")
no_gradient("DecodeBmp")
no_gradient("DecodeGif")
no_gradient("ResizeBilinearGrad")
no_gradient("ResizeBicubicGrad")
no_gradient("ResizeNearestNeighborGrad")
no_gradient("ScaleAndTranslateGrad")

from . import image_grad  # noqa: E402,F401  (the gradients: registered once the ops are)

__all__ = [
    "ResizeMethod", "resize", "resize_bilinear", "resize_nearest_neighbor", "resize_bicubic",
    "resize_area", "scale_and_translate", "crop_to_bounding_box", "pad_to_bounding_box",
    "resize_with_crop_or_pad", "resize_image_with_crop_or_pad", "central_crop", "random_crop",
    "flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down", "transpose",
    "rot90", "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue",
    "random_brightness", "random_contrast", "random_saturation", "random_hue", "rgb_to_hsv",
    "hsv_to_rgb", "rgb_to_grayscale", "grayscale_to_rgb", "per_image_standardization",
    "convert_image_dtype", "decode_image", "decode_jpeg", "decode_png", "decode_bmp", "decode_gif",
]
