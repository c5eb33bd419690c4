"""The speed layer's Winograd F(4x4, 3x3) (aicslib/accel/conv_winograd.py), the rule that picks
its tile (conv_policy.py), and the GEMMs cut over threads (work_sharder.py), each against
references written here (loops in float64, NumPy's product).

Covered: ``conv2d_winograd_f4`` on odd/even/non-multiple-of-4 sizes and
explicit paddings, blocked and phase-split (one image, deep layer) paths, one
and two threads; its filter transform against ``G g G^T`` computed per filter;
the auto rule (F(4x4) only on big deep layers, an explicit ``"winograd"`` stays
F(2x2)); the input gradient through the F(4x4) path and through GradientTape;
``work_sharder.sharded_matmul`` cut along the inner dimension and
``work_sharder.matmul``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aicslib as aics
from aicslib.accel import conv_backprop_input as cgi
from aicslib.accel import conv_forward as co
from aicslib.accel import conv_policy
from aicslib.accel import conv_winograd as cw
from aicslib.accel import winograd_transforms as wt
from aicslib.accel import work_sharder

from accel_switch import accel_on_off  # noqa: F401

SETTINGS = settings(max_examples=25, deadline=None)


def brute_conv(x, w, padding):
    """Stride-1 correlation by loops over output pixels and taps, in float64.

    ``padding``: "SAME", "VALID" or ((top, bottom), (left, right)) (TF's rule for SAME).
    """
    x, w = x.astype(np.float64), w.astype(np.float64)
    N, H, W, C = x.shape
    kh, kw, _, K = w.shape
    if padding == "VALID":
        (pt, pb), (pl, pr) = (0, 0), (0, 0)
    elif padding == "SAME":
        th, tw = kh - 1, kw - 1
        (pt, pb), (pl, pr) = (th // 2, th - th // 2), (tw // 2, tw - tw // 2)
    else:
        (pt, pb), (pl, pr) = padding
    xp = np.zeros((N, H + pt + pb, W + pl + pr, C))
    xp[:, pt:pt + H, pl:pl + W] = x
    Ho, Wo = xp.shape[1] - kh + 1, xp.shape[2] - kw + 1
    y = np.zeros((N, Ho, Wo, K))
    for oh in range(Ho):
        for ow in range(Wo):
            for i in range(kh):
                for j in range(kw):
                    y[:, oh, ow] += xp[:, oh + i, ow + j] @ w[i, j]
    return y


def brute_input_grad(dy, w, x_shape, padding):
    """dx of a stride-1 conv by loops: every output pixel sends dy @ w[i, j].T back."""
    dy, w = dy.astype(np.float64), w.astype(np.float64)
    N, H, W, C = x_shape
    kh, kw = w.shape[:2]
    th, tw = kh - 1, kw - 1
    pt, pl = (th // 2, tw // 2) if padding == "SAME" else (0, 0)
    pb, pr = (th - th // 2, tw - tw // 2) if padding == "SAME" else (0, 0)
    dxp = np.zeros((N, H + pt + pb, W + pl + pr, C))
    for oh in range(dy.shape[1]):
        for ow in range(dy.shape[2]):
            for i in range(kh):
                for j in range(kw):
                    dxp[:, oh + i, ow + j] += dy[:, oh, ow] @ w[i, j].T
    return dxp[:, pt:pt + H, pl:pl + W]


def assert_close(got, ref, rel=3e-5):
    assert got.shape == ref.shape
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(got, ref, rtol=0, atol=rel * scale)


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request, monkeypatch):
    monkeypatch.setattr(work_sharder, "NUM_THREADS", request.param)
    return request.param


# ----------------------------------------------------------------------------
# Winograd F(4x4, 3x3)
# ----------------------------------------------------------------------------

def test_f4_transform_matrices_compute_a_1d_correlation():
    """A^T [(G g) * (B^T d)] is the 4-output, 3-tap correlation of the 6 inputs d."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        d, g = rng.standard_normal(6), rng.standard_normal(3)
        got = wt.WINOGRAD4_AT.astype(np.float64) @ ((wt.WINOGRAD4_G @ g) * (wt.WINOGRAD4_BT @ d))
        np.testing.assert_allclose(got, [d[i:i + 3] @ g for i in range(4)], rtol=1e-12, atol=1e-12)


def test_f4_filter_transform_is_g_w_gt_per_filter():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 3, 2, 3)).astype(np.float32)
    G = wt.WINOGRAD4_G
    for rotate in (False, True):
        U = wt.winograd4_filter_transform(w, rotate180=rotate).reshape(6, 6, 2, 3)
        for c in range(2):
            for k in range(3):
                f = w[::-1, ::-1, c, k] if rotate else w[:, :, c, k]
                np.testing.assert_allclose(U[:, :, c, k], G @ f.astype(np.float64) @ G.T, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(n=st.integers(1, 3), h=st.integers(3, 13), w_=st.integers(3, 13), c=st.integers(1, 9),
       k=st.integers(1, 9), padding=st.sampled_from(["SAME", "VALID", ((2, 0), (1, 3)), ((0, 1), (2, 2))]),
       small_blocks=st.booleans(), seed=st.integers(0, 2**16))
def test_f4_forward_matches_loops(n, h, w_, c, k, padding, small_blocks, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w_, c)).astype(np.float32)
    w = rng.standard_normal((3, 3, c, k)).astype(np.float32)
    got = cw.conv2d_winograd_f4(x, w, (1, 1), padding, block_bytes=64 if small_blocks else None)
    assert_close(got, brute_conv(x, w, padding))


@pytest.mark.parametrize("n", [1, 3])
def test_f4_phase_split_path_matches_loops(threads, n):
    """A deep layer on few tiles: one block whose phases are shared by the threads."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((n, 9, 10, 96)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 96, 40)) / 30).astype(np.float32)
    assert_close(cw.conv2d_winograd_f4(x, w, (1, 1), "SAME"), brute_conv(x, w, "SAME"))


def test_f4_float64_is_exact_to_double_rounding():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 7, 4))
    w = rng.standard_normal((3, 3, 4, 5))
    got = cw.conv2d_winograd_f4(x, w, (1, 1), "SAME")
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, brute_conv(x, w, "SAME"), rtol=1e-11, atol=1e-11)


def test_f4_rejects_what_it_cannot_do():
    x = np.ones((1, 8, 8, 2), np.float32)
    with pytest.raises(ValueError, match="3x3 filters with stride 1"):
        cw.conv2d_winograd_f4(x, np.ones((3, 3, 2, 2), np.float32), (2, 2), "SAME")
    with pytest.raises(ValueError, match="3x3 filters with stride 1"):
        cw.conv2d_winograd_f4(x, np.ones((5, 5, 2, 2), np.float32), (1, 1), "SAME")


def test_tile_rule(monkeypatch):
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # the rule of the NumPy transforms
    # big deep layers -> F(4x4)
    assert conv_policy.winograd_tile_size((3, 3, 256, 256), (1, 56, 56)) == 4
    assert conv_policy.winograd_tile_size((3, 3, 128, 128), (8, 28, 28)) == 4
    assert conv_policy.winograd_tile_size((3, 3, 64, 64), (8, 56, 56)) == 4
    # fewer channels, too few pixels per weight, or 14x14 (padded to 16x16) -> F(2x2)
    assert conv_policy.winograd_tile_size((3, 3, 32, 64), (8, 56, 56)) == 2
    assert conv_policy.winograd_tile_size((3, 3, 512, 512), (1, 28, 28)) == 2
    assert conv_policy.winograd_tile_size((3, 3, 256, 256), (8, 14, 14)) == 2


def test_auto_uses_f4_where_the_rule_says_and_explicit_winograd_stays_f2(monkeypatch):
    calls = []
    real_f4, real_f2 = cw.conv2d_winograd_f4, cw.conv2d_winograd
    monkeypatch.setattr(co, "conv2d_winograd_f4", lambda *a, **k: calls.append("f4") or real_f4(*a, **k))
    monkeypatch.setattr(co, "conv2d_winograd", lambda *a, **k: calls.append("f2") or real_f2(*a, **k))
    monkeypatch.setattr(co, "winograd_tile_size", lambda w_shape, out_shape: 4)
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # the thresholds below are its
    monkeypatch.setattr(conv_policy, "WINOGRAD_MIN_CHANNELS", 1)
    monkeypatch.setattr(conv_policy, "WINOGRAD_MIN_PIXELS", 1)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    ref = brute_conv(x, w, "SAME")
    assert_close(co.conv2d(x, w, (1, 1), "SAME"), ref)
    assert calls == ["f4"]
    assert_close(co.conv2d(x, w, (1, 1), "SAME", algorithm="winograd"), ref)
    assert calls == ["f4", "f2"]


@pytest.fixture
def small_deep_layers_use_f4(monkeypatch):
    """Small test shapes take the auto rule's Winograd F(4x4) path of big layers."""
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # the thresholds below are its
    monkeypatch.setattr(conv_policy, "WINOGRAD_MIN_PIXELS", 1)
    monkeypatch.setattr(conv_policy, "WINOGRAD4_PIXELS_PER_WEIGHT", 1024)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_input_gradient_through_f4_matches_loops(threads, small_deep_layers_use_f4, padding):
    rng = np.random.default_rng(5)
    x_shape = (2, 12, 8, 128)
    w = (rng.standard_normal((3, 3, 128, 128)) / 30).astype(np.float32)
    ho = 12 if padding == "SAME" else 10
    wo = 8 if padding == "SAME" else 6
    dy = rng.standard_normal((2, ho, wo, 128)).astype(np.float32)
    assert conv_policy.winograd_tile_size((3, 3, 128, 128), x_shape) == 4     # the path under test
    got = cgi.conv2d_backprop_input(dy, w, x_shape, (1, 1), padding)
    assert_close(got, brute_input_grad(dy, w, x_shape, padding))


def test_tape_gradient_of_a_deep_layer_matches_a_numerical_gradient(small_deep_layers_use_f4, monkeypatch):
    """conv2d -> sum of squares, the input gradient (F(4x4) path) against central differences."""
    rng = np.random.default_rng(6)
    x0 = rng.standard_normal((1, 8, 8, 128))
    w = rng.standard_normal((3, 3, 128, 128)) / 30
    assert conv_policy.winograd_tile_size(w.shape, (1, 8, 8)) == 4
    used = []
    real_f4 = cw.conv2d_winograd_f4
    monkeypatch.setattr(cgi, "conv2d_winograd_f4", lambda *a, **k: used.append(1) or real_f4(*a, **k))
    xv = aics.Variable(x0)
    with aics.GradientTape() as tape:
        loss = aics.reduce_sum(aics.square(aics.nn.conv2d(xv, aics.constant(w), [1, 1, 1, 1], "SAME")))
    g = tape.gradient(loss, xv).numpy()
    assert used, "the input gradient did not take the F(4x4) path"

    def f(x):
        return float(np.sum(brute_conv(x, w, "SAME") ** 2))
    eps = 1e-4
    for idx in [(0, 0, 0, 0), (0, 3, 4, 17), (0, 7, 7, 127), (0, 5, 0, 64)]:
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num = (f(xp) - f(xm)) / (2 * eps)
        assert abs(g[idx] - num) <= 1e-5 * max(1.0, abs(num))


# ----------------------------------------------------------------------------
# GEMMs over the threads
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("m,k,n", [(64, 5000, 64), (16, 3001, 48), (300, 200, 100), (7, 9000, 3)])
def test_sharded_matmul_matches_numpy(threads, monkeypatch, m, k, n):
    monkeypatch.setattr(work_sharder, "SPLIT_GEMM_FLOPS", 0)        # split even these small products
    rng = np.random.default_rng(7)
    f = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    got = work_sharder.sharded_matmul(f.T, b, out)                  # a Gram-like F^T B
    assert got is out
    ref = f.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("shape", [(3, 4, 5), (200, 300, 100), (2000, 64, 64), (64, 6000, 64)])
def test_matmul_matches_numpy(threads, shape):
    m, k, n = shape
    rng = np.random.default_rng(8)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    got = work_sharder.matmul(a, b)
    assert got.dtype == np.float32 and got.shape == (m, n)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    got64 = work_sharder.matmul(a.astype(np.float64), b)
    assert got64.dtype == np.float64
    np.testing.assert_allclose(got64, ref, rtol=1e-12, atol=1e-10)


# ----------------------------------------------------------------------------
# Average pooling whose windows tile the image (VGG's 2x2 stride 2)
# ----------------------------------------------------------------------------

def brute_avg_pool(x, k, s):
    N, H, W, C = x.shape
    Ho, Wo = (H - k) // s + 1, (W - k) // s + 1
    y = np.zeros((N, Ho, Wo, C))
    for oh in range(Ho):
        for ow in range(Wo):
            y[:, oh, ow] = x[:, oh * s:oh * s + k, ow * s:ow * s + k].astype(np.float64).mean(axis=(1, 2))
    return y


def brute_avg_pool_grad(x_shape, g, k, s):
    dx = np.zeros(x_shape)
    for oh in range(g.shape[1]):
        for ow in range(g.shape[2]):
            dx[:, oh * s:oh * s + k, ow * s:ow * s + k] += g[:, oh, ow][:, None, None] / (k * k)
    return dx


@SETTINGS
@given(n=st.integers(1, 2), ho=st.integers(1, 5), wo=st.integers(1, 5), c=st.integers(1, 4),
       k=st.sampled_from([1, 2, 3]), dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 999))
def test_tiling_avg_pool_and_its_gradient_match_loops(n, ho, wo, c, k, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, ho * k, wo * k, c)).astype(dtype)
    g = rng.standard_normal((n, ho, wo, c)).astype(dtype)
    for padding in ("VALID", "SAME"):          # SAME needs no padding when the windows tile the image
        y = aics.nn.avg_pool(aics.constant(x), [1, k, k, 1], [1, k, k, 1], padding).numpy()
        assert y.dtype == dtype
        np.testing.assert_allclose(y, brute_avg_pool(x, k, k), rtol=1e-5, atol=1e-5)
        xv = aics.Variable(x)
        with aics.GradientTape() as tape:
            out = aics.nn.avg_pool(xv, [1, k, k, 1], [1, k, k, 1], padding)
        dx = tape.gradient(out, xv, output_gradients=aics.constant(g)).numpy()
        np.testing.assert_allclose(dx, brute_avg_pool_grad(x.shape, g, k, k), rtol=1e-5, atol=1e-6)


def test_avg_pool_on_odd_sizes_still_divides_by_the_pixels_in_the_image():
    """7x7 with 2x2 stride 2 SAME: the last row/column of windows has 2 (or 1) pixels, not 4."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 7, 7, 2)).astype(np.float32)
    y = aics.nn.avg_pool(aics.constant(x), [1, 2, 2, 1], [1, 2, 2, 1], "SAME").numpy()
    assert y.shape == (1, 4, 4, 2)
    np.testing.assert_allclose(y[0, 3, 3], x[0, 6, 6], rtol=1e-6)
    np.testing.assert_allclose(y[0, 0, 3], x[0, 0:2, 6].mean(axis=0), rtol=1e-6)


# ----------------------------------------------------------------------------
# The fused output stage applied block by block (conv2d's epilogue, _FusedConv2D)
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm,shape", [
    ("im2col", (3, 9, 7, 4)), ("winograd", (2, 9, 7, 4)), ("f4", (2, 11, 9, 4)), ("f4", (1, 13, 10, 4)),
    ("direct", (1, 5, 4, 3)), ("im2col_1x1", (2, 6, 5, 4))])
def test_epilogue_blocks_cover_the_output_once(threads, monkeypatch, algorithm, shape):
    """Bias + ReLU applied per block equals applying them to the finished output (each
    element exactly once: a second application of the bias would show)."""
    monkeypatch.setattr(work_sharder, "BLOCK_BYTES", 256)           # many small blocks
    monkeypatch.setattr(work_sharder, "MIN_GEMM_ROWS", 1)
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape).astype(np.float32)
    k = 1 if algorithm == "im2col_1x1" else 3
    w = rng.standard_normal((k, k, shape[3], 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    seen = []

    def epilogue(blk):
        seen.append(blk.size)
        np.add(blk, b, out=blk)
        np.maximum(blk, 0, out=blk)
    if algorithm == "f4":
        got = cw.conv2d_winograd_f4(x, w, (1, 1), "SAME", epilogue=epilogue)
    else:
        got = co.conv2d(x, w, (1, 1), "SAME", algorithm=algorithm.replace("_1x1", ""), epilogue=epilogue)
    ref = np.maximum(brute_conv(x, w, "SAME") + b, 0)
    assert_close(got, ref)
    assert len(seen) >= 1


@pytest.mark.usefixtures("accel_on_off")
def test_fused_conv_bias_relu_in_a_graph_matches_loops():
    """A Conv2D+BiasAdd+Relu that the remapper fuses, on a Winograd-sized layer."""
    rng = np.random.default_rng(11)
    xv = rng.standard_normal((1, 20, 20, 64)).astype(np.float32)
    wv = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
    bv = rng.standard_normal(64).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [1, 20, 20, 64], name="x")
        y = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(x, aics.constant(wv), 1, "SAME"), aics.constant(bv)))
        with aics.Session(graph=g) as sess:
            got = sess.run(y, {x: xv})
    assert_close(got, np.maximum(brute_conv(xv, wv, "SAME") + bv, 0))


def test_f2_phase_split_path_on_one_image_matches_loops(threads):
    """F(2x2): a deep layer on one small image is one block; its transforms are split by tile row."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((1, 8, 7, 256)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 256, 256)) / 48).astype(np.float32)
    assert_close(cw.conv2d_winograd(x, w, (1, 1), "SAME"), brute_conv(x, w, "SAME"))
