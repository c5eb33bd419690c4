"""Notebook 07 (style transfer): one layer's style loss (Gatys et al. 2016), in float64 NumPy.

For a feature map of shape ``(1, H, W, C)``, reshape it to ``F``, ``M = H*W`` rows (positions) by
``N = C`` columns (channels). The Gram matrix ``G = F^T F`` is ``N x N``: channel i against
channel j summed over every position, so it keeps which features occur together and drops where.
Against the style image's Gram matrix ``A``::

    E_l = sum_ij (G_ij - A_ij)^2 / (4 N^2 M^2)

These are the values the exercise is checked against; the exercise itself builds the same loss
from aicslib's ops (aicslib's own version: ``aicslib.models.style_transfer.style_layer_loss``).
"""
import numpy as np


def gram(features):
    """G = F^T F (float64) of a ``(1, H, W, C)`` feature map."""
    f = np.asarray(features, np.float64)
    flat = f.reshape(-1, f.shape[-1])
    return flat.T @ flat


def layer_loss(features, target_gram):
    """E_l (a float64 number) of a ``(1, H, W, C)`` feature map against a ``(C, C)`` Gram matrix."""
    f = np.asarray(features)
    n, m = f.shape[-1], f.shape[1] * f.shape[2]
    return float(np.sum((gram(f) - np.asarray(target_gram, np.float64)) ** 2) / (4.0 * n ** 2 * m ** 2))


def conv_cost(size):
    """(multiply-adds, FLOPs) of VGG19's 16 conv layers on a (1, size, size, 3) image: per layer
    H * W * C_out * 3 * 3 * C_in multiply-adds, H = W = the side after the 2x2 stride-2 SAME poolings
    before the layer (ceil(side / 2) each); one multiply-add is 2 FLOPs."""
    from aicslib.models import vgg19

    macs = 0
    for name in vgg19.CONV_LAYERS:
        kh, kw, c_in, c_out = vgg19.WEIGHT_SHAPES[name][0]
        side = size
        for _ in range(int(name[len("conv")]) - 1):
            side = (side + 1) // 2
        macs += side * side * c_out * kh * kw * c_in
    return macs, 2 * macs


def conv_cost_from_graph(size):
    """The same count with each block's side taken from the shape aicslib's own SAME 2x2 pooling op
    infers in a graph (an independent check of ``conv_cost``: the pooling rule comes from the op,
    not from a formula)."""
    import aicslib as aics
    from aicslib.models import vgg19

    sides = {}
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float32, [1, size, size, 1])
        for block in range(1, 6):
            sides[block] = x.shape.as_list()[1]
            x = aics.nn.max_pool(x, 2, 2, "SAME")
    macs = 0
    for name in vgg19.CONV_LAYERS:
        kh, kw, c_in, c_out = vgg19.WEIGHT_SHAPES[name][0]
        side = sides[int(name[len("conv")])]
        macs += side * side * c_out * kh * kw * c_in
    return macs, 2 * macs
