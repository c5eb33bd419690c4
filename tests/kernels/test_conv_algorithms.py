"""Convolution kernels against brute force: the reference (aicslib/kernels/conv_ops.py,
conv_grad_input_ops.py, conv_grad_filter_ops.py, depthwise_conv_op.py) and the speed layer's
(aicslib/accel: conv_forward.py, conv_winograd.py, conv_backprop_*.py, depthwise.py), each test
that both have run on both (the ``layer`` parameter).

The references here are written independently of the module: a 7-loop
convolution in plain Python (float64), a vectorised float64 version of the
same sum used for finite differences, and TensorFlow's padding rules typed
in again from the documentation.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from aicslib.framework.kernel_shape_util import get_windowed_output_size
from aicslib.kernels import conv_grad_filter_ops as cgf
from aicslib.kernels import conv_grad_input_ops as cgi
from aicslib.kernels import conv_ops as co
from aicslib.kernels import conv_layout as cl
from aicslib.kernels import depthwise_conv_op as dwc
from aicslib.accel import conv_backprop_filter as fcgf
from aicslib.accel import conv_backprop_input as fcgi
from aicslib.accel import conv_forward as fco
from aicslib.accel import conv_policy
from aicslib.accel import conv_winograd as fcw
from aicslib.accel import depthwise as fdwc
from aicslib.accel import winograd_transforms as fwt
from aicslib.accel import work_sharder

RTOL = 1e-4

#: Each layer's functions: the reference kernels' and the speed layer's.
LAYERS = {
    "reference": {"conv2d": co.conv2d, "winograd": co.conv2d_winograd, "backprop_input": cgi, "backprop_filter": cgf,
                  "depthwise": dwc},
    "accel": {"conv2d": fco.conv2d, "winograd": fcw.conv2d_winograd, "backprop_input": fcgi, "backprop_filter": fcgf,
              "depthwise": fdwc},
}


# ----------------------------------------------------------------------------
# Independent references
# ----------------------------------------------------------------------------

def tf_same_or_valid(in_size, k, s, d, padding):
    """TF's rules, from the tf.nn.convolution documentation."""
    ek = (k - 1) * d + 1
    if padding == "SAME":
        out = math.ceil(in_size / s)
        total = max((out - 1) * s + ek - in_size, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        return math.ceil((in_size - ek + 1) / s), 0, 0
    before, after = padding
    return (in_size + before + after - ek) // s + 1, before, after


def ref_pads(x_shape, w_shape, strides, padding, dilations):
    if isinstance(padding, str):
        ph = pw = padding
    else:
        ph, pw = padding
    Ho, pt, _ = tf_same_or_valid(x_shape[1], w_shape[0], strides[0], dilations[0], ph)
    Wo, pl, _ = tf_same_or_valid(x_shape[2], w_shape[1], strides[1], dilations[1], pw)
    return Ho, Wo, pt, pl


def brute_conv(x, w, strides, padding, dilations):
    """The definition, seven loops, float64, zero padding by bounds checks."""
    N, H, W, C = x.shape
    kh, kw, _, K = w.shape
    sh, sw = strides
    dh, dw = dilations
    Ho, Wo, pt, pl = ref_pads(x.shape, w.shape, strides, padding, dilations)
    xl, wl = x.astype(np.float64).tolist(), w.astype(np.float64).tolist()
    y = np.zeros((N, Ho, Wo, K))
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for k in range(K):
                    acc = 0.0
                    for i in range(kh):
                        ih = oh * sh + i * dh - pt
                        if not 0 <= ih < H:
                            continue
                        for j in range(kw):
                            iw = ow * sw + j * dw - pl
                            if not 0 <= iw < W:
                                continue
                            for c in range(C):
                                acc += xl[n][ih][iw][c] * wl[i][j][c][k]
                    y[n, oh, ow, k] = acc
    return y


def fast_ref_conv(x, w, strides, padding, dilations):
    """Same sum, vectorised over pixels (float64), for finite differences."""
    N, H, W, C = x.shape
    kh, kw, _, K = w.shape
    sh, sw = strides
    dh, dw = dilations
    Ho, Wo, pt, pl = ref_pads(x.shape, w.shape, strides, padding, dilations)
    big = np.zeros((N, H + 2 * (kh * dh + pt + sh * Ho), W + 2 * (kw * dw + pl + sw * Wo), C))
    oh0, ow0 = kh * dh + sh * Ho, kw * dw + sw * Wo
    big[:, oh0:oh0 + H, ow0:ow0 + W] = x
    y = np.zeros((N, Ho, Wo, K))
    for i in range(kh):
        for j in range(kw):
            r0, c0 = oh0 - pt + i * dh, ow0 - pl + j * dw
            patch = big[:, r0:r0 + sh * (Ho - 1) + 1:sh, c0:c0 + sw * (Wo - 1) + 1:sw]
            y += patch @ w[i, j].astype(np.float64)
    return y


def brute_depthwise(x, w, strides, padding, dilations):
    N, H, W, C = x.shape
    kh, kw, _, M = w.shape
    Ho, Wo, pt, pl = ref_pads(x.shape, w.shape, strides, padding, dilations)
    y = np.zeros((N, Ho, Wo, C * M))
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for c in range(C):
                    for m in range(M):
                        acc = 0.0
                        for i in range(kh):
                            for j in range(kw):
                                ih = oh * strides[0] + i * dilations[0] - pt
                                iw = ow * strides[1] + j * dilations[1] - pl
                                if 0 <= ih < H and 0 <= iw < W:
                                    acc += float(x[n, ih, iw, c]) * float(w[i, j, c, m])
                        y[n, oh, ow, c * M + m] = acc
    return y


def numerical_grad(f, a, eps=1e-3):
    """Central differences of the scalar f at a (float64)."""
    a = a.astype(np.float64).copy()
    g = np.zeros_like(a)
    flat, gflat = a.reshape(-1), g.reshape(-1)
    for idx in range(flat.size):
        old = flat[idx]
        flat[idx] = old + eps
        fp = f(a)
        flat[idx] = old - eps
        fm = f(a)
        flat[idx] = old
        gflat[idx] = (fp - fm) / (2 * eps)
    return g


def assert_close(actual, expected, rtol=RTOL):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(np.abs(expected).max(initial=0.0), 1e-6)
    err = np.abs(actual - expected).max(initial=0.0)
    assert err <= rtol * scale, f"max error {err:.3g} > {rtol} * {scale:.3g}"


def rand(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def forward_algorithms(w_shape, strides, dilations):
    algos = ["direct", "im2col"]
    if w_shape[:2] == (3, 3) and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1):
        algos.append("winograd")
    return algos


# ----------------------------------------------------------------------------
# Output size and padding
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("in_size,k,s,d,padding,expected", [
    (5, 3, 2, 1, "SAME", (3, 1, 1)),
    (6, 3, 2, 1, "SAME", (3, 0, 1)),       # odd total padding: the extra pixel goes after
    (7, 3, 1, 1, "SAME", (7, 1, 1)),
    (4, 4, 1, 1, "SAME", (4, 1, 2)),
    (7, 3, 2, 2, "VALID", (2, 0, 0)),      # ceil((7 - 4) / 2)
    (6, 3, 2, 1, "VALID", (2, 0, 0)),
    (224, 7, 2, 1, "SAME", (112, 2, 3)),   # ResNet stem, as TF computes it
    (5, 3, 1, 2, "SAME", (5, 2, 2)),
    (5, 3, 2, 1, (2, 0), (3, 2, 0)),
    (6, 3, 2, 1, (0, 1), (3, 0, 1)),
])
def test_conv_output_size_matches_tf(in_size, k, s, d, padding, expected):
    assert get_windowed_output_size(in_size, k, s, d, padding) == expected
    assert tf_same_or_valid(in_size, k, s, d, padding) == expected


@pytest.mark.parametrize("layer", LAYERS)
def test_bad_padding_and_channel_mismatch_raise(layer):
    with pytest.raises(ValueError, match="padding"):
        get_windowed_output_size(5, 3, 1, 1, "FULL")
    with pytest.raises(ValueError, match=r"\(1, 5, 5, 3\).*\(3, 3, 4, 2\)"):
        LAYERS[layer]["conv2d"](np.zeros((1, 5, 5, 3), np.float32), np.zeros((3, 3, 4, 2), np.float32))
    with pytest.raises(ValueError, match="negative"):
        get_windowed_output_size(2, 5, 1, 1, "VALID")


# ----------------------------------------------------------------------------
# Forward: every algorithm against brute force
# ----------------------------------------------------------------------------

FORWARD_CASES = [
    # x shape, w shape, strides, padding, dilations
    ((2, 7, 9, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 8, 8, 5), (3, 3, 5, 6), (1, 1), "VALID", (1, 1)),
    ((3, 5, 6, 2), (3, 3, 2, 3), (1, 1), [(2, 0), (1, 3)], (1, 1)),
    ((2, 9, 7, 3), (3, 2, 3, 4), (2, 1), "SAME", (1, 2)),
    ((2, 10, 11, 3), (3, 3, 3, 5), (2, 2), "SAME", (2, 2)),
    ((2, 9, 9, 4), (3, 3, 4, 2), (2, 2), "VALID", (1, 1)),
    ((1, 6, 7, 3), (1, 1, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 6, 7, 3), (1, 1, 3, 4), (2, 2), "VALID", (1, 1)),
    ((2, 5, 5, 2), (5, 5, 2, 3), (1, 1), "SAME", (1, 1)),
    ((1, 1, 1, 4), (3, 3, 4, 2), (1, 1), "SAME", (1, 1)),
    ((2, 7, 7, 3), (2, 2, 3, 2), (1, 1), "SAME", (2, 2)),
    ((2, 4, 4, 2), (3, 3, 2, 2), (1, 1), [(0, 0), (0, 0)], (1, 1)),
]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("xs,ws,strides,padding,dil", FORWARD_CASES)
def test_forward_algorithms_match_brute_force(xs, ws, strides, padding, dil, layer):
    rng = np.random.default_rng(hash((xs, ws)) % 2 ** 32)
    x, w = rand(rng, xs), rand(rng, ws)
    ref = brute_conv(x, w, strides, padding, dil)
    outs = {}
    for algo in forward_algorithms(ws, strides, dil) + ["auto"]:
        y = LAYERS[layer]["conv2d"](x, w, strides, padding, dil, algorithm=algo)
        assert y.dtype == np.float32
        assert_close(y, ref)
        outs[algo] = y
    # and with each other
    for a in outs:
        assert_close(outs[a], outs["direct"])


@pytest.mark.parametrize("hw", [(1, 1), (2, 3), (5, 5), (6, 7), (8, 8), (13, 4)])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("layer", LAYERS)
def test_winograd_odd_and_even_sizes(hw, padding, layer):
    conv2d_winograd = LAYERS[layer]["winograd"]
    rng = np.random.default_rng(7)
    x, w = rand(rng, (2,) + hw + (3,)), rand(rng, (3, 3, 3, 5))
    if padding == "VALID" and min(hw) < 2:
        # TF: VALID output size ceil((in - 3 + 1) / 1) is negative -> an error, not a result.
        with pytest.raises(ValueError, match="would be negative"):
            conv2d_winograd(x, w, (1, 1), padding)
        return
    if padding == "VALID" and min(hw) < 3:
        # Output size 0 along one axis: an empty result of the right shape, as TF returns.
        out_hw = tuple(max(d - 2, 0) for d in hw)
        assert conv2d_winograd(x, w, (1, 1), padding).shape == (2,) + out_hw + (5,)
        return
    assert_close(conv2d_winograd(x, w, (1, 1), padding), brute_conv(x, w, (1, 1), padding, (1, 1)))


@pytest.mark.parametrize("layer", LAYERS)
def test_winograd_rejects_what_it_cannot_do(layer):
    x, w = np.zeros((1, 6, 6, 2), np.float32), np.zeros((3, 3, 2, 2), np.float32)
    with pytest.raises(ValueError, match="3x3"):
        LAYERS[layer]["winograd"](x, w, (2, 2), "SAME")
    with pytest.raises(ValueError, match="3x3"):
        LAYERS[layer]["winograd"](x, np.zeros((5, 5, 2, 2), np.float32), (1, 1), "SAME")
    with pytest.raises(ValueError, match="3x3"):
        LAYERS[layer]["conv2d"](x, w, (1, 1), "SAME", (2, 2), algorithm="winograd")


def test_winograd_transform_matrices_are_the_textbook_ones():
    # F(2, 3) in 1-D: y = A^T [(G g) * (B^T d)] is the 3-tap correlation of d with g
    rng = np.random.default_rng(0)
    d, g = rng.standard_normal(4), rng.standard_normal(3)
    y = co.WINOGRAD_AT @ ((co.WINOGRAD_G @ g) * (co.WINOGRAD_BT @ d))
    np.testing.assert_allclose(y, [d[0:3] @ g, d[1:4] @ g], rtol=1e-6)
    # the filter transform is G g G^T for every channel pair
    w = rand(rng, (3, 3, 2, 3))
    U = fwt.winograd_filter_transform(w).reshape(4, 4, 2, 3)
    expected = np.einsum("ai,ijck,bj->abck", co.WINOGRAD_G, w, co.WINOGRAD_G)
    np.testing.assert_allclose(U, expected, rtol=1e-5, atol=1e-6)


def test_blocked_and_threaded_paths_agree(monkeypatch):
    """Tiny blocks (one output row each) exercise the row-splitting and threads."""
    monkeypatch.setattr(work_sharder, "MIN_GEMM_ROWS", 1)
    rng = np.random.default_rng(3)
    x, w = rand(rng, (3, 11, 9, 4)), rand(rng, (3, 3, 4, 5))
    ref = fast_ref_conv(x, w, (1, 1), "SAME", (1, 1))
    for bb in (1, 200, 10 ** 9):
        assert_close(fco.conv2d_im2col(x, w, (1, 1), "SAME", block_bytes=bb), ref)
        assert_close(fcw.conv2d_winograd(x, w, (1, 1), "SAME", block_bytes=bb), ref)
    dy = rand(rng, ref.shape)
    bi = cgi.conv2d_backprop_input_direct(dy, w, x.shape, (1, 1), "SAME")
    bf = cgf.conv2d_backprop_filter_direct(x, dy, w.shape, (1, 1), "SAME")
    for bb in (1, 10 ** 9):
        assert_close(fcgi.conv2d_backprop_input_gemm(dy, w, x.shape, (1, 1), "SAME", block_bytes=bb), bi)
        assert_close(fcgf.conv2d_backprop_filter_gemm(x, dy, w.shape, (1, 1), "SAME", block_bytes=bb), bf)


def test_results_do_not_alias_scratch_buffers():
    rng = np.random.default_rng(4)
    x, w = rand(rng, (2, 8, 8, 16)), rand(rng, (3, 3, 16, 16))
    y1 = fcw.conv2d_winograd(x, w, (1, 1), "SAME")
    y1_copy = y1.copy()
    fcw.conv2d_winograd(rand(rng, (2, 8, 8, 16)), w, (1, 1), "SAME")
    fco.conv2d_im2col(rand(rng, (2, 8, 8, 16)), w, (1, 1), "SAME")
    np.testing.assert_array_equal(y1, y1_copy)


@pytest.mark.parametrize("layer", LAYERS)
def test_float64_and_non_contiguous_inputs(layer):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 8, 3))[:, :, ::2]        # float64, strided view
    w = rng.standard_normal((3, 3, 3, 2))
    ref = brute_conv(x, w, (1, 1), "SAME", (1, 1))
    for algo in ("im2col", "winograd", "direct"):
        assert_close(LAYERS[layer]["conv2d"](x, w, (1, 1), "SAME", algorithm=algo), ref)


# ----------------------------------------------------------------------------
# Dispatch and forcing an algorithm
# ----------------------------------------------------------------------------

def test_dispatch_rule(monkeypatch):
    from aicslib import flags
    monkeypatch.setattr(flags, "GEMM", "blas")       # the thresholds as measured with BLAS
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # and NumPy transforms
    assert conv_policy.choose_conv2d_algorithm((3, 3, 64, 64), (1, 1), (1, 1), (8, 56, 56, 64)) == "winograd"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 64, 64), (2, 2), (1, 1), (8, 56, 56, 64)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 64, 64), (1, 1), (2, 2), (8, 56, 56, 64)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((1, 1, 64, 64), (1, 1), (1, 1), (8, 56, 56, 64)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 3, 64), (1, 1), (1, 1), (8, 56, 56, 3)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 32, 32), (1, 1), (1, 1), (8, 56, 56, 32)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 512, 512), (1, 1), (1, 1), (8, 7, 7, 512)) == "winograd"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 512, 512), (1, 1), (1, 1), (1, 7, 7, 512)) == "im2col"


def test_dispatch_rule_with_the_c_sgemm_doubles_the_winograd_thresholds(monkeypatch):
    from aicslib import flags
    from aicslib.accel import c_sgemm
    if c_sgemm.library() is None:
        pytest.skip(f"C SGEMM not built: {c_sgemm.fallback_reason()}")
    monkeypatch.setattr(flags, "GEMM", "native")
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # NumPy transforms
    scale = conv_policy.NATIVE_GEMM_WINOGRAD_SCALE
    assert scale > 1
    c = conv_policy.WINOGRAD_MIN_CHANNELS * scale
    px = conv_policy.WINOGRAD_MIN_PIXELS * scale
    assert conv_policy.choose_conv2d_algorithm((3, 3, c // 2, c // 2), (1, 1), (1, 1), (8, 56, 56, c // 2)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, c, c), (1, 1), (1, 1), (8, 28, 28, c)) == "winograd"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 512, 512), (1, 1), (1, 1), (1, 1, px - 1, 512)) == "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, 512, 512), (1, 1), (1, 1), (1, 1, px, 512)) == "winograd"


@pytest.mark.parametrize("forced", ["direct", "im2col", "winograd"])
@pytest.mark.parametrize("module", [co, fco], ids=["reference", "accel"])
def test_algorithm_can_be_forced_by_argument_and_environment(monkeypatch, forced, module):
    from aicslib import flags
    calls = []
    for name in ("direct", "im2col", "winograd"):
        real = getattr(module, f"conv2d_{name}")
        monkeypatch.setattr(module, f"conv2d_{name}",
                            lambda *a, _real=real, _n=name, **k: calls.append(_n) or _real(*a, **k))
    rng = np.random.default_rng(0)
    x, w = rand(rng, (1, 6, 6, 2)), rand(rng, (3, 3, 2, 2))
    module.conv2d(x, w, (1, 1), "SAME", algorithm=forced)
    assert calls[-1] == forced
    monkeypatch.setenv("AICS_CONV_ALGO", forced)
    flags.reload()
    try:
        module.conv2d(x, w, (1, 1), "SAME")                # algorithm="auto" reads the flag
        assert calls[-1] == forced
        # an environment-forced winograd falls back on a conv it cannot do
        module.conv2d(x, w, (2, 2), "SAME")
        assert calls[-1] == ("im2col" if forced == "winograd" else forced)
    finally:
        monkeypatch.delenv("AICS_CONV_ALGO")
        flags.reload()
    module.conv2d(x, w, (1, 1), "SAME")
    assert calls[-1] == "im2col"                    # 2 channels: the rule says im2col
    with pytest.raises(ValueError, match="unknown conv2d algorithm"):
        module.conv2d(x, w, algorithm="fft")


# ----------------------------------------------------------------------------
# Backprop: GEMM/col2im vs loops vs numerical gradients
# ----------------------------------------------------------------------------

BACKPROP_CASES = [
    ((2, 5, 6, 2), (3, 3, 2, 3), (1, 1), "SAME", (1, 1)),
    ((2, 6, 5, 2), (3, 3, 2, 2), (2, 2), "SAME", (1, 1)),
    ((1, 7, 6, 2), (3, 2, 2, 2), (2, 1), "VALID", (1, 2)),
    ((2, 5, 5, 1), (2, 2, 1, 2), (1, 1), [(1, 2), (0, 1)], (2, 1)),
    ((1, 4, 4, 2), (3, 3, 2, 2), (1, 1), [(3, 0), (0, 4)], (1, 1)),   # padding > k-1
    ((2, 5, 4, 3), (1, 1, 3, 2), (2, 2), "SAME", (1, 1)),
]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("xs,ws,strides,padding,dil", BACKPROP_CASES)
def test_backprops_match_numerical_gradients(xs, ws, strides, padding, dil, layer):
    rng = np.random.default_rng(abs(hash((xs, ws, strides))) % 2 ** 32)
    x, w = rand(rng, xs), rand(rng, ws)
    y = fast_ref_conv(x, w, strides, padding, dil)
    assert_close(y, brute_conv(x, w, strides, padding, dil), rtol=1e-9)
    dy = rand(rng, y.shape).astype(np.float64)
    num_dx = numerical_grad(lambda a: (fast_ref_conv(a, w, strides, padding, dil) * dy).sum(), x)
    num_dw = numerical_grad(lambda a: (fast_ref_conv(x, a, strides, padding, dil) * dy).sum(), w)
    dy32 = dy.astype(np.float32)
    stride1 = tuple(strides) == (1, 1)
    bi_algos = ["direct", "gemm", "auto"]
    if layer == "accel" and stride1 and padding != [(3, 0), (0, 4)]:    # the forward algorithms on dy
        bi_algos.append("im2col")
        if ws[:2] == (3, 3) and tuple(dil) == (1, 1):
            bi_algos.append("winograd")
    for algo in bi_algos:
        dx = LAYERS[layer]["backprop_input"].conv2d_backprop_input(dy32, w, xs, strides, padding, dil, algorithm=algo)
        assert dx.shape == xs and dx.dtype == np.float32
        assert_close(dx, num_dx)
    for algo in ("direct", "gemm", "auto"):
        dw = LAYERS[layer]["backprop_filter"].conv2d_backprop_filter(x, dy32, ws, strides, padding, dil, algorithm=algo)
        assert dw.shape == ws and dw.dtype == np.float32
        assert_close(dw, num_dw)


def test_backprop_input_forced_algorithm_that_cannot_apply_raises():
    dy, w = np.zeros((1, 3, 3, 2), np.float32), np.zeros((3, 3, 2, 2), np.float32)
    with pytest.raises(ValueError, match="stride 1"):
        fcgi.conv2d_backprop_input(dy, w, (1, 6, 6, 2), (2, 2), "SAME", algorithm="winograd")
    for module in (cgi, fcgi):
        with pytest.raises(ValueError, match="shape"):
            module.conv2d_backprop_input(np.zeros((1, 4, 4, 2), np.float32), w, (1, 6, 6, 2), (2, 2), "SAME")


@pytest.mark.parametrize("gemm", ["blas", "native"])
@pytest.mark.parametrize("C,K", [(64, 64), (65, 70)])
def test_backprops_on_deeper_layers_agree_with_loops(C, K, gemm, monkeypatch):
    """Sizes where auto picks Winograd for the input gradient (with BLAS GEMMs; im2col with the C SGEMM)."""
    from aicslib import flags
    from aicslib.accel import c_sgemm
    if gemm == "native" and c_sgemm.library() is None:
        pytest.skip(f"C SGEMM not built: {c_sgemm.fallback_reason()}")
    monkeypatch.setattr(flags, "GEMM", gemm)
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)   # the rule of the NumPy transforms
    rng = np.random.default_rng(11)
    x, w = rand(rng, (2, 15, 13, C)), rand(rng, (3, 3, C, K))
    dy = rand(rng, (2, 15, 13, K))
    expected = "winograd" if gemm == "blas" else "im2col"
    assert conv_policy.choose_conv2d_algorithm((3, 3, K, C), (1, 1), (1, 1), dy.shape) == expected
    ref_dx = cgi.conv2d_backprop_input_direct(dy, w, x.shape, (1, 1), "SAME")
    for algo in ("auto", "gemm", "im2col", "winograd"):
        assert_close(fcgi.conv2d_backprop_input(dy, w, x.shape, (1, 1), "SAME", algorithm=algo), ref_dx)
    ref_dw = cgf.conv2d_backprop_filter_direct(x, dy, w.shape, (1, 1), "SAME")
    assert_close(fcgf.conv2d_backprop_filter(x, dy, w.shape, (1, 1), "SAME"), ref_dw)
    y = fco.conv2d(x, w, (1, 1), "SAME")
    assert_close(y, fast_ref_conv(x, w, (1, 1), "SAME", (1, 1)))


# ----------------------------------------------------------------------------
# Layouts
# ----------------------------------------------------------------------------

def test_layout_helpers_round_trip():
    rng = np.random.default_rng(0)
    x, w = rand(rng, (2, 3, 4, 5)), rand(rng, (3, 2, 5, 4))
    assert cl.nhwc_to_nchw(x).shape == (2, 5, 3, 4)
    np.testing.assert_array_equal(cl.nchw_to_nhwc(cl.nhwc_to_nchw(x)), x)
    assert cl.hwio_to_oihw(w).shape == (4, 5, 3, 2)
    np.testing.assert_array_equal(cl.oihw_to_hwio(cl.hwio_to_oihw(w)), w)
    assert cl.nhwc_to_nchw(x).flags["C_CONTIGUOUS"]
    assert cl.nhwc_to_nchw(x)[1, 4, 2, 3] == x[1, 2, 3, 4]
    assert cl.hwio_to_oihw(w)[3, 4, 2, 1] == w[2, 1, 4, 3]


@pytest.mark.parametrize("strides,padding", [((1, 1), "SAME"), ((2, 2), "VALID"), ((2, 1), "SAME")])
def test_nchw_oihw_agree_with_nhwc_hwio(strides, padding):
    rng = np.random.default_rng(1)
    x, w = rand(rng, (2, 9, 8, 3)), rand(rng, (3, 3, 3, 4))
    ref = brute_conv(x, w, strides, padding, (1, 1))
    x_nchw, w_oihw = cl.nhwc_to_nchw(x), cl.hwio_to_oihw(w)
    for algo in ("im2col", "direct", "auto"):
        y = co.conv2d_nchw(x_nchw, w_oihw, strides, padding, algorithm=algo)
        assert y.shape == (2, 4) + ref.shape[1:3]
        assert_close(cl.nchw_to_nhwc(y), ref)
    assert_close(cl.nchw_to_nhwc(co.conv2d_im2col_nchw(x_nchw, w_oihw, strides, padding)), ref)


# ----------------------------------------------------------------------------
# Depthwise
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("xs,ws,strides,padding,dil", [
    ((2, 6, 7, 3), (3, 3, 3, 1), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 2), (3, 3, 2, 2), (2, 2), "SAME", (1, 1)),
    ((1, 8, 8, 2), (3, 2, 2, 3), (1, 2), "VALID", (2, 1)),
    ((2, 5, 5, 2), (2, 2, 2, 1), (1, 1), [(1, 0), (2, 1)], (1, 1)),
])
@pytest.mark.parametrize("layer", LAYERS)
def test_depthwise_forward_and_backprops(xs, ws, strides, padding, dil, layer):
    dw_kernels = LAYERS[layer]["depthwise"]
    rng = np.random.default_rng(2)
    x, w = rand(rng, xs), rand(rng, ws)
    ref = brute_depthwise(x, w, strides, padding, dil)
    assert_close(dw_kernels.depthwise_conv2d(x, w, strides, padding, dil), ref)
    assert_close(dwc.depthwise_conv2d_direct(x, w, strides, padding, dil), ref)
    # a depthwise conv is a conv whose filter is block-diagonal over channels
    C, M = ws[2], ws[3]
    wfull = np.zeros(ws[:2] + (C, C * M), np.float32)
    for c in range(C):
        wfull[:, :, c, c * M:(c + 1) * M] = w[:, :, c, :]
    dy = rand(rng, ref.shape).astype(np.float64)
    num_dx = numerical_grad(lambda a: (fast_ref_conv(a, wfull, strides, padding, dil) * dy).sum(), x)
    dx = dw_kernels.depthwise_conv2d_backprop_input(dy.astype(np.float32), w, xs, strides, padding, dil)
    assert_close(dx, num_dx)
    num_dwfull = numerical_grad(lambda a: (fast_ref_conv(x, a, strides, padding, dil) * dy).sum(), wfull)
    num_dw = np.stack([num_dwfull[:, :, c, c * M:(c + 1) * M] for c in range(C)], axis=2)
    dw = dw_kernels.depthwise_conv2d_backprop_filter(x, dy.astype(np.float32), ws, strides, padding, dil)
    assert dw.shape == ws
    assert_close(dw, num_dw)


# ----------------------------------------------------------------------------
# Random small shapes (hypothesis)
# ----------------------------------------------------------------------------

@st.composite
def conv_cases(draw):
    n = draw(st.integers(1, 2))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    c, k = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.one_of(st.sampled_from(["SAME", "VALID"]),
                             st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                                       st.tuples(st.integers(0, 2), st.integers(0, 2))).map(list)))
    seed = draw(st.integers(0, 2 ** 16))
    return (n, h, w, c), (kh, kw, c, k), (sh, sw), padding, (dh, dw), seed


@pytest.mark.parametrize("layer", LAYERS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases())
def test_random_shapes_all_algorithms(layer, case):
    bi, bf = LAYERS[layer]["backprop_input"], LAYERS[layer]["backprop_filter"]
    xs, ws, strides, padding, dil, seed = case
    Ho, Wo, _, _ = ref_pads(xs, ws, strides, padding, dil)
    if Ho <= 0 or Wo <= 0:
        return
    rng = np.random.default_rng(seed)
    x, w = rand(rng, xs), rand(rng, ws)
    ref = brute_conv(x, w, strides, padding, dil)
    for algo in forward_algorithms(ws, strides, dil) + ["auto"]:
        assert_close(LAYERS[layer]["conv2d"](x, w, strides, padding, dil, algorithm=algo), ref)
    dy = rand(rng, ref.shape)
    dx_ref = cgi.conv2d_backprop_input_direct(dy, w, xs, strides, padding, dil)
    dw_ref = cgf.conv2d_backprop_filter_direct(x, dy, ws, strides, padding, dil)
    # direct loops vs the adjoint identity <conv(x), dy> = <x, dx> = <w, dw>
    inner = float((ref * dy).sum())
    scale = float(np.abs(ref).max() * np.abs(dy).sum()) + 1e-6
    assert abs(float((x.astype(np.float64) * dx_ref).sum()) - inner) <= RTOL * scale
    assert abs(float((w.astype(np.float64) * dw_ref).sum()) - inner) <= RTOL * scale
    assert_close(bi.conv2d_backprop_input(dy, w, xs, strides, padding, dil), dx_ref)
    assert_close(bi.conv2d_backprop_input_gemm(dy, w, xs, strides, padding, dil), dx_ref)
    assert_close(bf.conv2d_backprop_filter(x, dy, ws, strides, padding, dil), dw_ref)


@pytest.mark.parametrize("layer", LAYERS)
@settings(max_examples=15, deadline=None)
@given(conv_cases())
def test_random_shapes_depthwise(layer, case):
    xs, ws, strides, padding, dil, seed = case
    ws = ws[:3] + (ws[3] % 2 + 1,)
    Ho, Wo, _, _ = ref_pads(xs, ws, strides, padding, dil)
    if Ho <= 0 or Wo <= 0:
        return
    rng = np.random.default_rng(seed)
    x, w = rand(rng, xs), rand(rng, ws)
    assert_close(LAYERS[layer]["depthwise"].depthwise_conv2d(x, w, strides, padding, dil),
                 brute_depthwise(x, w, strides, padding, dil))


def test_winograd_deep_layer_on_small_image():
    """Few tiles, many channels: the 16 GEMMs (and the filter transform) are shared between threads."""
    rng = np.random.default_rng(12)
    x, w = rand(rng, (2, 5, 5, 256)), rand(rng, (3, 3, 256, 256)) / 16
    assert fcw.conv2d_winograd(x, w, (1, 1), "SAME").shape == (2, 5, 5, 256)
    assert_close(fcw.conv2d_winograd(x, w, (1, 1), "SAME"), fast_ref_conv(x, w, (1, 1), "SAME", (1, 1)))
    dy = rand(rng, (2, 5, 5, 256))
    assert_close(fcgi.conv2d_backprop_input(dy, w, x.shape, (1, 1), "SAME", algorithm="winograd"),
                 fcgi.conv2d_backprop_input_gemm(dy, w, x.shape, (1, 1), "SAME"))
    expected = np.einsum("ai,ijck,bj->abck", co.WINOGRAD_G, w, co.WINOGRAD_G).reshape(16, 256, 256)
    np.testing.assert_allclose(fwt.winograd_filter_transform(w), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ksize,strides", [(3, (1, 1)), (1, (1, 1)), (3, (2, 2))])
def test_gemm_split_over_threads_agrees(monkeypatch, ksize, strides):
    """One block whose GEMM is cut into row or column pieces run on the threads."""
    monkeypatch.setattr(work_sharder, "SPLIT_GEMM_FLOPS", 0)
    monkeypatch.setattr(work_sharder, "MIN_GEMM_ROWS", 10 ** 9)
    rng = np.random.default_rng(13)
    x, w = rand(rng, (2, 7, 6, 5)), rand(rng, (ksize, ksize, 5, 9))
    ref = fast_ref_conv(x, w, strides, "SAME", (1, 1))
    assert_close(fco.conv2d_im2col(x, w, strides, "SAME"), ref)
    dy = rand(rng, ref.shape)
    assert_close(fcgi.conv2d_backprop_input_gemm(dy, w, x.shape, strides, "SAME"),
                 cgi.conv2d_backprop_input_direct(dy, w, x.shape, strides, "SAME"))
    assert_close(fcgf.conv2d_backprop_filter_gemm(x, dy, w.shape, strides, "SAME"),
                 cgf.conv2d_backprop_filter_direct(x, dy, w.shape, strides, "SAME"))


def test_winograd_single_image_deep_layer():
    rng = np.random.default_rng(14)
    x, w = rand(rng, (1, 6, 7, 160)), rand(rng, (3, 3, 160, 130)) / 12
    assert_close(fcw.conv2d_winograd(x, w, (1, 1), "SAME"), fast_ref_conv(x, w, (1, 1), "SAME", (1, 1)))
