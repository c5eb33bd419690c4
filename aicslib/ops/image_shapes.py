"""Rank and size helpers shared by the image functions (TF's image_ops_impl.py keeps them as
``_CheckAtLeast3DImage``, ``_ImageDimensions``, ...): images are 3-D ``[h, w, c]`` or 4-D
``[batch, h, w, c]``; the functions work on 4-D and give back the rank they were given."""
import numpy as np

from . import array_ops


def static_dims(image):
    """(rank, [dims]) of a tensor's static shape; dims may hold None."""
    s = image.shape
    if s.rank is None:
        return None, None
    return s.rank, list(s.dims)


NO_RANK_HINT = ("(decode_image returns an unknown rank in graphs because GIFs are 4-D: pass "
                 "expand_animations=False, or use decode_jpeg/decode_png, to get a 3-D image)")


def check_image(image, require_static=False, name="image"):
    rank, dims = static_dims(image)
    if rank is None:
        raise ValueError(f"'{name}' contains no shape: its rank must be known {NO_RANK_HINT}.")
    if rank not in (3, 4):
        raise ValueError(f"'{name}' (shape {image.shape}) must have either 3 or 4 dimensions.")
    if any(d == 0 for d in dims[-3:]):
        raise ValueError(f"inner 3 dims of '{name}.shape' must be > 0: {image.shape}")
    return image


def to_4d(image):
    rank, _ = static_dims(image)
    if rank == 3:
        return array_ops.expand_dims(image, 0), False
    return image, True


def from_4d(image, is_batch):
    return image if is_batch else array_ops.squeeze(image, [0])


def static_hw(image):
    """Static (height, width) of a 3-D or 4-D image, each int or None."""
    rank, dims = static_dims(image)
    if rank is None:
        return None, None
    return dims[-3], dims[-2]


def int_or_tensor(v):
    if isinstance(v, (int, np.integer)):
        return int(v)
    if hasattr(v, "dtype") and not isinstance(v, np.ndarray):
        return v
    return int(np.asarray(v))


def reverse_axis(x, axis):
    """Reverse along one (non-negative) axis: ``x[..., ::-1, ...]``, a StridedSlice
    with stride -1 (TF uses ReverseV2; values and gradient are the same)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]
