"""``aics.compat.v1.image``: the TF1 resize functions (``align_corners``, legacy centres).

``resize``/``resize_images`` take TF1's ``method`` ints (``ResizeMethod.BILINEAR == 0``);
every other name is ``aics.image``'s.

``tf.compat.v1.image.resize_bilinear(images, size, align_corners=False,
half_pixel_centers=False)`` samples output pixel ``i`` at input coordinate
``i * in/out`` by default, which shifts the image; TF2's ``tf.image.resize``
uses ``(i + 0.5) * in/out - 0.5`` (``half_pixel_centers=True`` here). See the
docstrings of each function for the three conventions.
"""
from ...framework.missing_api import module_getattr
from ...ops.image_metrics import total_variation
from ...ops.image_ops_v1 import ResizeMethodV1 as ResizeMethod
from ...ops.image_ops_v1 import resize_images
from ...ops.image_ops import (  # noqa: F401
    adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation, central_crop,
    convert_image_dtype, crop_to_bounding_box, decode_image, decode_jpeg, decode_png, flip_left_right,
    flip_up_down, pad_to_bounding_box, per_image_standardization, random_crop, random_flip_left_right,
    resize_area, resize_bicubic, resize_bilinear, resize_image_with_crop_or_pad, resize_nearest_neighbor,
    rot90)
from ...ops.bounding_box_ops import sample_distorted_bounding_box  # noqa: F401  (seed, seed2)

resize = resize_images  # TF1's tf.image.resize is resize_images (legacy pixel centres)


def _from_image(name):
    from ... import image
    return getattr(image, name)


__getattr__ = module_getattr(__name__, _from_image)

__all__ = ["ResizeMethod", "resize", "resize_images", "total_variation", "resize_bilinear",
           "resize_nearest_neighbor", "resize_bicubic", "resize_area", "resize_image_with_crop_or_pad"]
