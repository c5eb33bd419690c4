"""``aics.image``: image ops with TensorFlow's names and arithmetic (``tf.image``).

TF2 semantics (``resize`` uses half-pixel centres and ``antialias``); the TF1
resize functions live in ``aics.compat.v1.image``. Op definitions and the
Python API: aicslib/ops/image_ops.py; NumPy kernels: aicslib/kernels/resize_ops.py,
colorspace_ops.py and decode_image_op.py.
"""
from .ops.image_ops import (
    ResizeMethod, adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation, central_crop,
    convert_image_dtype, crop_to_bounding_box, decode_bmp, decode_gif, decode_image, decode_jpeg,
    decode_png, flip_left_right, flip_up_down, grayscale_to_rgb, hsv_to_rgb, pad_to_bounding_box,
    per_image_standardization, random_brightness, random_contrast, random_crop, random_flip_left_right,
    random_flip_up_down, random_hue, random_saturation, resize, resize_with_crop_or_pad, rgb_to_grayscale,
    rgb_to_hsv, rot90, transpose)
from .ops.image_metrics import total_variation
from .ops.image_ops_v1 import resize_images
from .ops import io_ops as _io_ops  # noqa: F401  (ReadFile for aics.io.read_file)
from .ops.bounding_box_ops import sample_distorted_bounding_box_v2 as sample_distorted_bounding_box  # noqa: F401

__all__ = [
    "ResizeMethod", "adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation",
    "central_crop", "convert_image_dtype", "crop_to_bounding_box", "decode_bmp", "decode_gif",
    "decode_image", "decode_jpeg", "decode_png", "flip_left_right", "flip_up_down", "grayscale_to_rgb",
    "hsv_to_rgb", "pad_to_bounding_box", "per_image_standardization", "random_brightness",
    "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down", "random_hue",
    "random_saturation", "resize", "resize_with_crop_or_pad", "rgb_to_grayscale", "rgb_to_hsv", "rot90",
    "transpose", "total_variation", "resize_images",
]
