"""TF1's ``tf.image.resize_images`` (``tf.compat.v1.image.resize``), with ``ResizeMethodV1``.

TF1 chose the method by an int (``0`` bilinear, ``1`` nearest neighbour, ``2``
bicubic, ``3`` area) and sampled with the legacy pixel centres (output pixel
``i`` reads input coordinate ``i * in/out``; ``align_corners=True`` lines up the
corner pixels instead). TF2's ``tf.image.resize`` uses half-pixel centres and
names methods by strings; both method spellings are accepted here, as in TF.
As in TF, a resize to the image's own static size returns the image unchanged.
"""
import numpy as np

from ..framework.ops import convert_to_tensor, name_scope
from . import image_ops


class ResizeMethodV1:
    """The ``method`` ints of TF1's ``resize_images``."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_BY_METHOD = {
    ResizeMethodV1.BILINEAR: image_ops.resize_bilinear, image_ops.ResizeMethod.BILINEAR: image_ops.resize_bilinear,
    ResizeMethodV1.NEAREST_NEIGHBOR: image_ops.resize_nearest_neighbor,
    image_ops.ResizeMethod.NEAREST_NEIGHBOR: image_ops.resize_nearest_neighbor,
    ResizeMethodV1.BICUBIC: image_ops.resize_bicubic, image_ops.ResizeMethod.BICUBIC: image_ops.resize_bicubic,
    ResizeMethodV1.AREA: image_ops.resize_area, image_ops.ResizeMethod.AREA: image_ops.resize_area,
}


def _static_size(size):
    """``size`` as two ints when it is a Python/NumPy value, else None (a tensor)."""
    if hasattr(size, "dtype") and not isinstance(size, np.ndarray):
        return None
    arr = np.asarray(size)
    if arr.shape != (2,):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError("'size' must be a 1-D int32 Tensor")
    return [int(arr[0]), int(arr[1])]


def resize_images(images, size, method=ResizeMethodV1.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """Resizes 4-D ``[batch, h, w, c]`` or 3-D ``[h, w, c]`` images to ``size = [new_h, new_w]``.

    TF1 semantics (legacy pixel centres, ``align_corners``); float32 output except
    for nearest neighbour, which keeps the dtype. ``preserve_aspect_ratio`` fits the
    result inside ``size`` (needs static image sizes and a constant ``size`` here).
    """
    method = getattr(method, "value", method)
    resizer = _BY_METHOD.get(method.lower() if isinstance(method, str) else method)
    if resizer is None:
        raise ValueError(f"Resize method is not implemented: {method}")
    with name_scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.rank
        if rank is None:
            raise ValueError("'images' contains no shape.")
        if rank not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        height, width = images.shape.as_list()[-3:-1]
        new = _static_size(size)
        if preserve_aspect_ratio:
            if new is None or height is None or width is None:
                raise ValueError("resize_images(preserve_aspect_ratio=True) needs static image sizes "
                                 "and a constant size in aicslib.")
            f32 = np.float32
            scale = min(f32(new[0]) / f32(height), f32(new[1]) / f32(width))
            new = [int(np.round(scale * f32(height))), int(np.round(scale * f32(width)))]
        if new is not None and [height, width] == new:
            return images
        return resizer(images, new if new is not None else size, align_corners=align_corners)
