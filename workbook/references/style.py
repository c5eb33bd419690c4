"""Notebook 13 (style transfer): one layer's style loss (Gatys et al. 2016), in float64 NumPy.

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
