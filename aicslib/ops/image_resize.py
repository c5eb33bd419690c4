"""Resizing (the "Resizing" section of TF's image_ops_impl.py): ``resize`` with TF2's
half-pixel centres and ``antialias``, and TF1's ``resize_bilinear`` and friends with
``align_corners`` and the legacy pixel centres (aics.compat.v1.image).

Every method is an op (kernels with TF's exact arithmetic: aicslib/kernels/resize_ops.py);
their gradients are in image_grad.py.
"""
import numpy as np

from ..framework import dtypes
from ..framework.execute import apply_op
from ..framework.ops import convert_to_tensor, name_scope
from . import array_ops, math_ops
from .image_shapes import NO_RANK_HINT, from_4d, static_dims, static_hw, to_4d


class ResizeMethod:
    """The ``method`` strings of ``tf.image.resize``."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False,
           name=None):
    """``tf.image.resize`` (TF2 semantics).

    * ``bilinear``, ``bicubic``, ``nearest``: half-pixel centres, i.e. output
      pixel ``i`` looks at input coordinate ``(i + 0.5) * in/out - 0.5`` (the
      TF1 ops' default looked at ``i * in/out`` and shifted the image).
    * ``area``: average over the covered input area.
    * ``lanczos3``, ``lanczos5``, ``gaussian``, ``mitchellcubic``: the
      ScaleAndTranslate op with that kernel.
    * ``antialias=True`` (bilinear, bicubic, and the kernels above): when
      downsampling, the kernel is widened by ``in/out`` so every input pixel
      contributes -- a low-pass filter instead of aliasing.
    * Returns float32, except ``nearest``, which keeps the input dtype.
    * ``preserve_aspect_ratio``: the result fits inside ``size`` with the same
      aspect ratio (sides rounded half to even).

    Args: ``images`` 4-D ``[batch, h, w, c]`` or 3-D ``[h, w, c]``; ``size``
    ``[new_height, new_width]`` (ints or an int32 tensor).
    """
    with name_scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        rank, _ = static_dims(images)
        if rank is None:
            raise ValueError(f"'images' contains no shape: its rank must be known {NO_RANK_HINT}.")
        if rank not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        if isinstance(size, (list, tuple, np.ndarray)):
            size_np = np.asarray(size)
            if size_np.shape != (2,):
                raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
            if not np.issubdtype(size_np.dtype, np.integer):
                raise TypeError(f"'size' must be an integer tensor, got {size_np.dtype}")
            size = size_np.astype(np.int32)
        else:
            size = convert_to_tensor(size)
            if size.shape.rank is not None and size.shape.as_list() != [2]:
                raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        x, is_batch = to_4d(images)
        if preserve_aspect_ratio:
            h, w = static_hw(x)
            if h is None or w is None or not isinstance(size, np.ndarray):
                raise ValueError("preserve_aspect_ratio needs static image dimensions and a constant size "
                                 "in aicslib.")
            f32 = np.float32
            f = min(f32(size[0]) / f32(h), f32(size[1]) / f32(w))
            size = np.array([np.round(f32(f * f32(h))), np.round(f32(f * f32(w)))], np.int32)
        method = getattr(method, "value", method)
        method = str(method).lower()

        def sat(kernel):
            h, w = static_hw(x)
            if isinstance(size, np.ndarray) and h is not None and w is not None:
                scale = np.array([np.float32(size[0]) / np.float32(h), np.float32(size[1]) / np.float32(w)],
                                 np.float32)
            else:
                hw = math_ops.cast(array_ops.slice(array_ops.shape(x), [1], [2]), dtypes.float32)
                scale = math_ops.cast(size, dtypes.float32) / hw
            return apply_op("ScaleAndTranslate", [x, size, scale, np.zeros(2, np.float32)],
                            {"kernel_type": kernel, "antialias": antialias})

        centers = {"half_pixel_centers": True}
        if method == ResizeMethod.BILINEAR:
            out = sat("triangle") if antialias else apply_op("ResizeBilinear", [x, size], centers)
        elif method == ResizeMethod.NEAREST_NEIGHBOR:
            out = apply_op("ResizeNearestNeighbor", [x, size], centers)
        elif method == ResizeMethod.BICUBIC:
            out = sat("keyscubic") if antialias else apply_op("ResizeBicubic", [x, size], centers)
        elif method == ResizeMethod.AREA:
            out = apply_op("ResizeArea", [x, size])
        elif method in (ResizeMethod.LANCZOS3, ResizeMethod.LANCZOS5, ResizeMethod.GAUSSIAN,
                        ResizeMethod.MITCHELLCUBIC):
            out = sat(method)
        else:
            raise ValueError(f"Resize method is not implemented: {method}")
        return from_4d(out, is_batch)


def _resize_v1(op_type, images, size, align_corners, half_pixel_centers, name):
    images = convert_to_tensor(images, name="images")
    x, is_batch = to_4d(images)
    size = np.asarray(size, np.int32) if isinstance(size, (list, tuple, np.ndarray)) else size
    out = apply_op(op_type, [x, size], {"align_corners": align_corners,
                                        "half_pixel_centers": half_pixel_centers}, name=name)
    return from_4d(out, is_batch)


def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """TF1 ``tf.compat.v1.image.resize_bilinear`` (float32 output).

    Three ways to place the samples (``s = in/out``):

    * default (legacy, ``half_pixel_centers=False``): output pixel ``i`` reads
      input coordinate ``i * s``. Pixel *corners* are aligned at the top-left
      only, so the result is shifted up-left by ``(s - 1) / 2`` pixels -- the
      reason TF2 changed the default.
    * ``align_corners=True``: ``i * (in - 1)/(out - 1)``: the centres of the
      four corner pixels coincide, the scale is slightly different from
      ``s``.
    * ``half_pixel_centers=True``: ``(i + 0.5) * s - 0.5``: pixel centres
      line up -- what ``tf.image.resize`` (TF2) does.
    """
    return _resize_v1("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """TF1 ``tf.compat.v1.image.resize_nearest_neighbor`` (keeps the dtype).

    Legacy: source ``floor(i * s)``; ``align_corners``: ``round(i * (in-1)/(out-1))``;
    ``half_pixel_centers``: ``floor((i + 0.5) * s)`` (TF2).
    """
    return _resize_v1("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """TF1 ``tf.compat.v1.image.resize_bicubic``: legacy uses ``a = -0.75``, half-pixel ``a = -0.5``."""
    return _resize_v1("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    images = convert_to_tensor(images, name="images")
    x, is_batch = to_4d(images)
    size = np.asarray(size, np.int32) if isinstance(size, (list, tuple, np.ndarray)) else size
    return from_4d(apply_op("ResizeArea", [x, size], {"align_corners": align_corners}, name=name), is_batch)


def scale_and_translate(images, size, scale, translation, kernel_type="lanczos3", antialias=True, name=None):
    return apply_op("ScaleAndTranslate", [images, np.asarray(size, np.int32), np.asarray(scale, np.float32),
                                          np.asarray(translation, np.float32)],
                    {"kernel_type": kernel_type, "antialias": antialias}, name=name)
