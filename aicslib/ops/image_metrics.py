"""Image measures composed from array and math ops (TF's image_ops_impl.py): ``total_variation``."""
from ..framework.ops import convert_to_tensor, name_scope
from . import math_ops


def total_variation(images, name=None):
    """The sum of absolute differences between neighbouring pixels, down and across.

    A 4-D ``[batch, h, w, c]`` batch gives one value per image (shape ``[batch]``);
    a 3-D image gives a scalar. Style transfer adds it to the loss to smooth the
    generated image (it is not normalised by the image size, as in TF).
    """
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.rank
        if ndims == 3:
            down = images[1:, :, :] - images[:-1, :, :]
            across = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            down = images[:, 1:, :, :] - images[:, :-1, :, :]
            across = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (math_ops.reduce_sum(math_ops.abs(down), axis=axis)
                + math_ops.reduce_sum(math_ops.abs(across), axis=axis))
