"""Notebook 15 (operator fusion): the output stage of a fused Conv2D/MatMul, written out.

``bias_act(y, bias, activation)`` is what ``bias_act_inplace`` must leave in ``y``: the bias added
along the last axis, then ReLU or ReLU6, in ``y``'s dtype. It returns a NEW array (three y-sized
temporaries, exactly what the exercise must avoid), so it is the expected value, not an answer;
aicslib's fused kernels do the same in place (``aicslib/kernels/fused_eigen_output_kernels.py``).
"""
import numpy as np


def bias_act(y, bias, activation="relu"):
    """act(y + bias) as a new array of y's dtype; activation is "relu" or "relu6"."""
    y = np.asarray(y)
    zero, six = y.dtype.type(0), y.dtype.type(6)
    pre = y + np.asarray(bias, dtype=y.dtype)
    if activation == "relu":
        return np.maximum(pre, zero)
    if activation == "relu6":
        return np.minimum(np.maximum(pre, zero), six)
    raise ValueError(f"unknown activation {activation!r}")


def chain_estimate(n, n_ops, fused, peak_gflops, bw_gbs):
    """(bytes moved, roofline bound in seconds) of ``n_ops`` element-wise float32 ops over ``n``
    elements: each op reads and writes 4n bytes unfused; a fused chain reads x and writes y once."""
    bytes_moved = 8 * n * (1 if fused else n_ops)
    return bytes_moved, max(n * n_ops / (peak_gflops * 1e9), bytes_moved / (bw_gbs * 1e9))
