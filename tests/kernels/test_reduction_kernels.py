"""The Sum and Mean kernels (aicslib/kernels/reduction_ops.py) call NumPy's reduction ufunc
directly, without np.sum / np.mean's Python layers: their results must stay bit-identical to
np.sum / np.mean (accumulated in float32 for the half types, rounded once), for every axis set,
keepdims, and the empty mean's NaN and warning."""
import warnings

import ml_dtypes
import numpy as np
import pytest

from aicslib.kernels import reduction_ops


def _bits(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("axes", [[0], [1, 2], [0, 1, 2], [-1], []])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_sum_and_mean_are_numpys_bits(dtype, axes, keep_dims):
    x = np.random.default_rng(len(axes)).standard_normal((5, 7, 9)).astype(dtype)
    acc = np.float32 if dtype in (np.float16, ml_dtypes.bfloat16) else dtype
    ax = tuple(a % 3 for a in axes)
    for kernel, reference in ((reduction_ops._sum, np.sum), (reduction_ops._mean, np.mean)):
        got = kernel(x, np.array(axes, np.int32), keep_dims)
        want = np.asarray(reference(x, axis=ax, keepdims=keep_dims, dtype=acc)).astype(dtype)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.array_equal(_bits(got), _bits(want)), f"{kernel.__name__} {axes} {keep_dims}"


def test_mean_of_nothing_is_numpys_nan_with_its_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = reduction_ops._mean(np.zeros((0, 3), np.float32), np.array([0]), False)
    assert np.isnan(got).all() and got.shape == (3,)
    assert any("Mean of empty slice" in str(w.message) for w in caught)
