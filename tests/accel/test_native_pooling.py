"""MaxPoolGrad in C (aicslib/accel/src/aics_pooling.c, aicslib/accel/pooling.py) against the NumPy
reference kernel (aicslib/kernels/pooling_ops.py) (bit for bit where
windows do not overlap; where they do, the two add a pixel's gradients in another order), and both
against a loop over windows that applies TF's rule (the first maximum, row-major, gets the window's
gradient): ties, NaN, -inf, -0.0, SAME and VALID, overlapping and disjoint windows."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aicslib.accel import c_pooling
from aicslib.accel import pooling as fpo
from aicslib.kernels import pooling_ops as po

from native_library import library_fixture


lib = library_fixture(c_pooling, "C pooling kernel")


def loop_max_pool_grad(x, y, g, k, s, padding):
    """TF's rule by loops over windows and taps (float64 sums, padding never wins unless -inf)."""
    N, H, W, C = x.shape
    _, _, _, _, Ho, Wo, pt, pl, _, _ = po.pool_geometry(x.shape, [1, k[0], k[1], 1], [1, s[0], s[1], 1],
                                                     padding, "NHWC")
    dx = np.zeros(x.shape, np.float64)
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for c in range(C):
                    for i in range(k[0]):
                        h = oh * s[0] + i - pt
                        hit = False
                        for j in range(k[1]):
                            w = ow * s[1] + j - pl
                            v = x[n, h, w, c] if 0 <= h < H and 0 <= w < W else -np.inf
                            if v == y[n, oh, ow, c]:
                                if 0 <= h < H and 0 <= w < W:
                                    dx[n, h, w, c] += g[n, oh, ow, c]
                                hit = True
                                break
                        if hit:
                            break
    return dx


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 3), H=st.integers(1, 7), W=st.integers(1, 7), C=st.integers(1, 70),
       k=st.tuples(st.integers(1, 3), st.integers(1, 3)), s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.sampled_from(["SAME", "VALID"]), specials=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_c_kernel_gives_the_numpy_kernels_answers_and_tfs_rule(lib, N, H, W, C, k, s, padding, specials, seed):
    rng = np.random.default_rng(seed)
    if padding == "VALID" and (H < k[0] or W < k[1]):
        return
    x = rng.integers(-2, 3, (N, H, W, C)).astype(np.float32)            # small integers: many ties
    if specials:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = [np.nan, -np.inf, np.inf]
    ksize, strides = [1, k[0], k[1], 1], [1, s[0], s[1], 1]
    y = po.max_pool(x, ksize, strides, padding)
    g = rng.standard_normal(y.shape).astype(np.float32)
    if specials:
        g.reshape(-1)[: min(3, g.size)] = [-0.0, np.nan, np.inf][: min(3, g.size)]
    got = fpo.max_pool_grad(x, y, g, ksize, strides, padding)
    numpy_kernel = po.max_pool_grad(x, y, g, ksize, strides, padding)
    if s[0] >= k[0] and s[1] >= k[1]:
        np.testing.assert_array_equal(got.view(np.int32), numpy_kernel.view(np.int32))   # -0.0 and NaN too
    else:
        np.testing.assert_allclose(got, numpy_kernel, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, loop_max_pool_grad(x, y, g, k, s, padding), rtol=1e-6, atol=1e-6)


def test_big_inputs_split_over_the_threads_give_the_same_result(lib, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 32, 32, 128)).astype(np.float32)
    assert x.size >= fpo.NATIVE_SPLIT_ELEMENTS
    k = [1, 3, 3, 1]
    s = [1, 2, 2, 1]
    y = po.max_pool(x, k, s, "SAME")
    g = rng.standard_normal(y.shape).astype(np.float32)
    got = fpo.max_pool_grad(x, y, g, k, s, "SAME")
    np.testing.assert_allclose(got, po.max_pool_grad(x, y, g, k, s, "SAME"), rtol=1e-6, atol=1e-6)
    # the split by image gives exactly the one-thread result
    monkeypatch.setattr(fpo, "NATIVE_SPLIT_ELEMENTS", x.size + 1)
    np.testing.assert_array_equal(got, fpo.max_pool_grad(x, y, g, k, s, "SAME"))


def test_float64_and_strided_inputs(lib):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 6, 3))
    k = s = [1, 2, 2, 1]
    y = po.max_pool(x, k, s, "VALID")
    g = rng.standard_normal(y.shape)
    ref = loop_max_pool_grad(x, y, g, (2, 2), (2, 2), "VALID")
    np.testing.assert_allclose(po.max_pool_grad(x, y, g, k, s, "VALID"), ref)          # NumPy, float64
    x32, y32, g32 = (np.asfortranarray(a.astype(np.float32)) for a in (x, y, g))   # not C-contiguous
    np.testing.assert_allclose(fpo.max_pool_grad(x32, y32, g32, k, s, "VALID"), ref, rtol=1e-6)


def test_the_binding_refuses_arrays_the_c_code_cannot_read(lib):
    x = np.zeros((1, 4, 4, 2), np.float32)
    y = np.zeros((1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="the gradient must be a C-contiguous float32 NHWC array, got float64"):
        c_pooling.max_pool_grad(lib, x, y, y.astype(np.float64), np.zeros_like(x), (2, 2, 2, 2, 0, 0), 0, 1)
    with pytest.raises(ValueError, match="the input must be"):
        c_pooling.max_pool_grad(lib, np.asfortranarray(x), y, y, np.zeros_like(x), (2, 2, 2, 2, 0, 0), 0, 1)
