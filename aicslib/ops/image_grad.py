"""Gradients of the image ops (TF's python/ops/image_grad.py): the resizes' backward ops.

As in TensorFlow, ResizeArea, AdjustContrastv2, AdjustSaturation, AdjustHue and HSVToRGB have
no gradient registered at all (image_ops.py lists what is marked not differentiable).
"""
import numpy as np

from ..framework import dtypes
from ..framework.execute import apply_op
from ..framework.gradient_registry import RegisterGradient
from . import array_ops, math_ops
from .image_resize import resize


def _resize_attrs(op):
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    return [apply_op("ResizeBilinearGrad", [grad, op.inputs[0]], _resize_attrs(op)), None]


@RegisterGradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    return [apply_op("ResizeBicubicGrad", [grad, op.inputs[0]], _resize_attrs(op)), None]


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op, grad):
    x = op.inputs[0]
    shape = x.shape
    if shape.rank == 4 and shape.dims[1] is not None and shape.dims[2] is not None:
        size = np.array(shape.dims[1:3], np.int32)
    else:
        size = array_ops.slice(array_ops.shape(x), [1], [2])
    return [apply_op("ResizeNearestNeighborGrad", [grad, size], _resize_attrs(op)), None]


@RegisterGradient("ScaleAndTranslate")
def _scale_and_translate_grad(op, grad):
    attrs = {"kernel_type": op.get_attr("kernel_type"), "antialias": op.get_attr("antialias")}
    x = op.inputs[0]
    g = apply_op("ScaleAndTranslateGrad", [grad, math_ops.cast(x, dtypes.float32), op.inputs[2],
                                           op.inputs[3]], attrs)
    return [math_ops.cast(g, x.dtype), None, None, None]


# ---------------------------------------------------------------------------
# Numerical gradient checks (tests/ops/test_gradient_registry.py). The resize ops
# return float32, so the float64 inputs are scaled down to keep float32
# rounding far below the checker's tolerance.

def _small(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape) * 1e-6


GRADIENT_CHECK_RECIPES = {
    "ResizeBilinear": lambda: (lambda x: resize(x, [3, 5]), [_small(1, 4, 3, 2)]),
    "ResizeNearestNeighbor": lambda: (lambda x: resize(x, [5, 2], method="nearest"), [_small(2, 3, 4, 1)]),
    "ResizeBicubic": lambda: (lambda x: resize(x, [5, 3], method="bicubic"), [_small(1, 4, 4, 1)]),
    "ScaleAndTranslate": lambda: (lambda x: resize(x, [2, 3], antialias=True), [_small(1, 5, 4, 2)]),
}
