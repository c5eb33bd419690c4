"""Notebook 12 (sparse training): which weights a magnitude-pruning mask keeps, by brute force.

tfmot's rule (``pruning_impl.Pruning._update_mask``; aicslib's ``sparsity.magnitude_mask``): to
reach sparsity ``s`` on ``n`` weights, keep ``k = max(round(n (1 - s)), 1)`` of them, ``round``
computed in float32 and rounding halves to even as ``tf.round`` does (n = 10, s = 0.25: 7.5 -> 8;
s = 0.75: 2.5 -> 2). The threshold is the k-th largest ``|w|`` and every weight with
``|w| >= threshold`` is kept, so ties at the threshold keep more than k.

``keep`` decides each weight on its own, without a sort: a weight survives exactly when fewer
than k weights are strictly larger in magnitude. O(n^2): for checking, not for training.
"""
import numpy as np


def kept_count(n, sparsity):
    """k = max(round((1 - s) * n), 1), in float32, halves to even."""
    return max(int(np.round(np.float32(1.0 - np.float32(sparsity)) * np.float32(n))), 1)


def keep(weights, sparsity):
    """(boolean array of weights' shape: True where the weight survives, k)."""
    magnitudes = np.abs(np.asarray(weights, np.float64)).ravel()
    k = kept_count(magnitudes.size, sparsity)
    larger = (magnitudes[None, :] > magnitudes[:, None]).sum(axis=1)    # per weight: how many beat it
    return (larger < k).reshape(np.shape(weights)), k
