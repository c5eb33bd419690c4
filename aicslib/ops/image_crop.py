"""Cropping, padding, flipping, rotating and transposing (those sections of TF's
image_ops_impl.py), composed from array ops (Slice, Pad, StridedSlice, Transpose), so they run
eagerly and in graphs and get their gradients from those ops. Sizes may be dynamic (tensors).
"""
import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.ops import convert_to_tensor, name_scope
from ..framework.tensor_shape import TensorShape
from . import array_ops, math_ops, random_ops
from .image_shapes import check_image, from_4d, int_or_tensor, reverse_axis, static_dims, static_hw, to_4d


def _is_static(*vals):
    return all(isinstance(v, int) for v in vals)


def _dim(x, i):
    """Size of axis ``i`` of a 4-D tensor: an int when static, else an int32 scalar tensor."""
    d = x.shape.dims[i] if x.shape.rank is not None else None
    return int(d) if d is not None else array_ops.gather(array_ops.shape(x), i)


def _max(a, b):
    return max(a, b) if _is_static(a, b) else math_ops.maximum(a, b)


def _min(a, b):
    return min(a, b) if _is_static(a, b) else math_ops.minimum(a, b)


def _setstatic_hw(out, ref, th, tw):
    """Gives a 4-D result the static shape TF's functions promise (``set_shape``):
    batch and channels of ``ref``, height/width ``th``/``tw`` where they are ints."""
    if ref.shape.rank != 4 or not hasattr(out, "set_shape"):
        return out
    dims = list(ref.shape.dims)
    dims[1] = th if isinstance(th, int) else None
    dims[2] = tw if isinstance(tw, int) else None
    try:
        out.set_shape(TensorShape(dims))
    except (ValueError, AttributeError, TypeError):
        pass
    return out


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width, name=None):
    """``image[..., oh:oh+th, ow:ow+tw, :]``.

    The box is checked against the static shape when that is known (ValueError,
    as TF); with dynamic sizes the Slice kernel reports a bad box when it runs.
    """
    with name_scope(name, "crop_to_bounding_box"):
        image = check_image(convert_to_tensor(image, name="image"))
        x, is_batch = to_4d(image)
        oh, ow, th, tw = (int_or_tensor(v) for v in (offset_height, offset_width, target_height, target_width))
        h, w = static_hw(x)
        if _is_static(ow) and ow < 0:
            raise ValueError("offset_width must be >= 0.")
        if _is_static(oh) and oh < 0:
            raise ValueError("offset_height must be >= 0.")
        if _is_static(tw) and tw <= 0:
            raise ValueError("target_width must be > 0.")
        if _is_static(th) and th <= 0:
            raise ValueError("target_height must be > 0.")
        if _is_static(ow, tw) and w is not None and w < tw + ow:
            raise ValueError(f"width must be >= target + offset. (width {w}, target {tw}, offset {ow})")
        if _is_static(oh, th) and h is not None and h < th + oh:
            raise ValueError(f"height must be >= target + offset. (height {h}, target {th}, offset {oh})")
        if _is_static(oh, ow, th, tw):
            begin = np.array([0, oh, ow, 0], np.int32)
            size = np.array([-1, th, tw, -1], np.int32)
        else:
            begin = array_ops.stack([0, oh, ow, 0])
            size = array_ops.stack([-1, th, tw, -1])
        out = array_ops.slice(x, begin, size)
        return from_4d(_setstatic_hw(out, x, th, tw), is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width, name=None):
    """Zero-pads to ``target`` with the image's top-left corner at ``offset``."""
    with name_scope(name, "pad_to_bounding_box"):
        image = check_image(convert_to_tensor(image, name="image"))
        x, is_batch = to_4d(image)
        oh, ow, th, tw = (int_or_tensor(v) for v in (offset_height, offset_width, target_height, target_width))
        h, w = _dim(x, 1), _dim(x, 2)
        after_w = tw - ow - w
        after_h = th - oh - h
        if _is_static(oh) and oh < 0:
            raise ValueError("offset_height must be >= 0")
        if _is_static(ow) and ow < 0:
            raise ValueError("offset_width must be >= 0")
        if _is_static(after_w) and after_w < 0:
            raise ValueError(f"width must be <= target - offset (width {w}, target {tw}, offset {ow})")
        if _is_static(after_h) and after_h < 0:
            raise ValueError(f"height must be <= target - offset (height {h}, target {th}, offset {oh})")
        if _is_static(oh, ow, after_h, after_w):
            paddings = np.array([[0, 0], [oh, after_h], [ow, after_w], [0, 0]], np.int32)
        else:
            paddings = array_ops.reshape(array_ops.stack([0, 0, oh, after_h, ow, after_w, 0, 0]), [4, 2])
        out = array_ops.pad(x, paddings)
        return from_4d(_setstatic_hw(out, x, th, tw), is_batch)


def resize_with_crop_or_pad(image, target_height, target_width, name=None):
    """Centre crop and/or zero pad to the target size.

    Offsets ``max(-diff // 2, 0)`` (crop) and ``max(diff // 2, 0)`` (pad) with
    ``diff = target - size`` (floor division): an odd leftover row/column is
    cut from, or added at, the bottom/right. Works with dynamic image sizes.
    """
    with name_scope(name, "resize_image_with_crop_or_pad"):
        image = check_image(convert_to_tensor(image, name="image"))
        th, tw = int(target_height), int(target_width)
        if tw <= 0:
            raise ValueError("target_width must be > 0.")
        if th <= 0:
            raise ValueError("target_height must be > 0.")
        x, is_batch = to_4d(image)
        h, w = _dim(x, 1), _dim(x, 2)
        width_diff, height_diff = tw - w, th - h
        if _is_static(width_diff, height_diff):
            half = lambda d: d // 2  # noqa: E731
            neg_half = lambda d: -d // 2  # noqa: E731
        else:
            half = lambda d: d // 2 if isinstance(d, int) else math_ops.floordiv(d, 2)  # noqa: E731
            neg_half = lambda d: -d // 2 if isinstance(d, int) else math_ops.floordiv(-d, 2)  # noqa: E731
        offset_crop_width = _max(neg_half(width_diff), 0)
        offset_pad_width = _max(half(width_diff), 0)
        offset_crop_height = _max(neg_half(height_diff), 0)
        offset_pad_height = _max(half(height_diff), 0)
        cropped = crop_to_bounding_box(x, offset_crop_height, offset_crop_width, _min(th, h), _min(tw, w))
        resized = pad_to_bounding_box(cropped, offset_pad_height, offset_pad_width, th, tw)
        return from_4d(_setstatic_hw(resized, x, th, tw), is_batch)


resize_image_with_crop_or_pad = resize_with_crop_or_pad


def central_crop(image, central_fraction, name=None):
    """Keeps the central ``central_fraction`` of height and width.

    ``start = int((h - h * fraction) / 2)`` (in double) and ``h - 2 * start``
    rows are kept: symmetric, e.g. 300 rows at 0.875 -> 264, not round(262.5).
    Works with dynamic image sizes.
    """
    with name_scope(name, "central_crop"):
        image = check_image(convert_to_tensor(image, name="image"))
        if central_fraction <= 0.0 or central_fraction > 1.0:
            raise ValueError("central_fraction must be within (0, 1]")
        if central_fraction == 1.0:
            return image
        x, _ = to_4d(image)
        h, w = _dim(x, 1), _dim(x, 2)

        def start(d):
            if isinstance(d, int):
                return int((float(d) - float(d) * central_fraction) / 2)
            dd = math_ops.cast(d, dtypes.float64)
            return math_ops.cast((dd - dd * float(central_fraction)) / 2.0, dtypes.int32)

        hs, ws = start(h), start(w)
        return crop_to_bounding_box(image, hs, ws, h - 2 * hs, w - 2 * ws)


def random_crop(value, size, seed=None, name=None):
    """A uniformly placed ``size`` window of ``value`` (any rank), as tf.image.random_crop:
    ``offset = random_uniform(int32) % (shape - size + 1)``."""
    with name_scope(name, "random_crop"):
        value = convert_to_tensor(value, name="value")
        size_np = np.asarray(size, np.int32).reshape(-1)
        rank, dims = static_dims(value)
        if rank is not None and len(size_np) != rank:
            raise ValueError(f"size {size_np.tolist()} must have {rank} elements")
        if dims is not None and all(d is not None for d in dims):
            if any(s > d for s, d in zip(size_np, dims)):
                raise InvalidArgumentError(None, None, f"Need value.shape >= size, got {dims} vs {size_np.tolist()}")
            limit = np.asarray(dims, np.int32) - size_np + 1
        else:
            limit = array_ops.shape(value) - size_np + 1
        rnd = random_ops.random_uniform([len(size_np)], maxval=np.iinfo(np.int32).max, dtype=dtypes.int32,
                                        seed=seed)
        offset = math_ops.floormod(rnd, limit)
        return array_ops.slice(value, offset, size_np)


def _flip_axis(image, axis3):
    image = check_image(convert_to_tensor(image, name="image"))
    rank, _ = static_dims(image)
    return reverse_axis(image, axis3 + (1 if rank == 4 else 0))


def flip_left_right(image, name=None):
    """Mirror horizontally (the width axis)."""
    with name_scope(name, "flip_left_right"):
        return _flip_axis(image, 1)


def flip_up_down(image, name=None):
    """Mirror vertically (the height axis)."""
    with name_scope(name, "flip_up_down"):
        return _flip_axis(image, 0)


def _random_flip(image, axis3, seed, scope):
    with name_scope(None, scope):
        image = check_image(convert_to_tensor(image, name="image"))
        rank, dims = static_dims(image)
        flipped = _flip_axis(image, axis3)
        if rank == 4:
            batch = dims[0] if dims[0] is not None else array_ops.slice(array_ops.shape(image), [0], [1])
            shape = [batch] if isinstance(batch, int) else batch
            u = random_ops.random_uniform(shape, 0, 1.0, seed=seed)
            cond = math_ops.less(array_ops.reshape(u, [-1, 1, 1, 1]), 0.5)
        else:
            cond = math_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
        return math_ops.where(cond, flipped, image)


def random_flip_left_right(image, seed=None):
    """Flips each image left-right with probability 1/2 (independently per image of a batch)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose(image, name=None):
    """Swap height and width."""
    with name_scope(name, "transpose"):
        image = check_image(convert_to_tensor(image, name="image"))
        rank, _ = static_dims(image)
        return array_ops.transpose(image, [0, 2, 1, 3] if rank == 4 else [1, 0, 2])


def rot90(image, k=1, name=None):
    """Rotate counter-clockwise by ``k`` quarter turns (Python int ``k``)."""
    with name_scope(name, "rot90"):
        image = check_image(convert_to_tensor(image, name="image"))
        k = int(k) % 4
        rank, _ = static_dims(image)
        b = 1 if rank == 4 else 0
        perm = [0, 2, 1, 3] if rank == 4 else [1, 0, 2]
        if k == 0:
            return image
        if k == 1:
            return array_ops.transpose(reverse_axis(image, b + 1), perm)
        if k == 2:
            return reverse_axis(reverse_axis(image, b), b + 1)
        return reverse_axis(array_ops.transpose(image, perm), b + 1)
