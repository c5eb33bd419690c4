"""The C depthwise-convolution kernels (aicslib/accel/src/aics_depthwise.c) behind
aicslib/accel/depthwise.py: forward, backprop-input and backprop-filter against
brute-force loops written here (their own padding arithmetic, float64), against the NumPy
path, through GradientTape against numerical gradients, and the fallback to NumPy where the
library was not built.
"""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import aicslib as aics
from aicslib import flags
from aicslib.accel import c_depthwise, native_loader
from aicslib.accel import depthwise as dwc

from native_library import library_fixture


# The library built at install; where it was not built these tests cannot run the C path.
native = library_fixture(c_depthwise, "C depthwise kernels", name="native")


# ----------------------------------------------------------------------------
# Brute-force reference (its own geometry: TF's SAME / VALID rules, explicit pairs)
# ----------------------------------------------------------------------------

def ref_geometry(size, k, stride, dilation, padding, axis):
    """(output size, padding before) along one axis, as TensorFlow defines them."""
    span = (k - 1) * dilation + 1
    if padding == "SAME":
        out = math.ceil(size / stride)
        total = max((out - 1) * stride + span - size, 0)
        return out, total // 2
    if padding == "VALID":
        return max(0, math.ceil((size - span + 1) / stride)), 0
    before, after = padding[axis]
    return max(0, (size + before + after - span) // stride + 1), before


def taps(x_shape, w_shape, strides, padding, dilations):
    """Every (oh, ow, ih, iw, i, j) with the input pixel inside the input."""
    _, H, W, _ = x_shape
    kh, kw = w_shape[:2]
    Ho, pt = ref_geometry(H, kh, strides[0], dilations[0], padding, 0)
    Wo, pl = ref_geometry(W, kw, strides[1], dilations[1], padding, 1)
    found = []
    for oh in range(Ho):
        for ow in range(Wo):
            for i in range(kh):
                for j in range(kw):
                    ih, iw = oh * strides[0] - pt + i * dilations[0], ow * strides[1] - pl + j * dilations[1]
                    if 0 <= ih < H and 0 <= iw < W:
                        found.append((oh, ow, ih, iw, i, j))
    return Ho, Wo, found


def brute_forward(x, w, strides, padding, dilations):
    x, w = x.astype(np.float64), w.astype(np.float64)
    N, _, _, C = x.shape
    M = w.shape[3]
    Ho, Wo, found = taps(x.shape, w.shape, strides, padding, dilations)
    y = np.zeros((N, Ho, Wo, C, M))
    for oh, ow, ih, iw, i, j in found:
        y[:, oh, ow] += x[:, ih, iw, :, None] * w[i, j]
    return y.reshape(N, Ho, Wo, C * M)


def brute_backprop_input(dy, w, x_shape, strides, padding, dilations):
    N, H, W, C = x_shape
    M = w.shape[3]
    dy, w = dy.astype(np.float64).reshape(dy.shape[:3] + (C, M)), w.astype(np.float64)
    _, _, found = taps(x_shape, w.shape, strides, padding, dilations)
    dx = np.zeros((N, H, W, C))
    for oh, ow, ih, iw, i, j in found:
        dx[:, ih, iw] += (dy[:, oh, ow] * w[i, j]).sum(axis=-1)
    return dx


def brute_backprop_filter(x, dy, w_shape, strides, padding, dilations):
    N, _, _, C = x.shape
    kh, kw, _, M = w_shape
    x, dy = x.astype(np.float64), dy.astype(np.float64).reshape(dy.shape[:3] + (C, M))
    _, _, found = taps(x.shape, w_shape, strides, padding, dilations)
    dw = np.zeros((kh, kw, C, M))
    for oh, ow, ih, iw, i, j in found:
        dw[i, j] += (x[:, ih, iw, :, None] * dy[:, oh, ow]).sum(axis=0)
    return dw


def assert_close(got, want, dtype):
    tol = 1e-10 if dtype == np.float64 else 2e-5
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


# ----------------------------------------------------------------------------
# C kernels vs loops and vs NumPy
# ----------------------------------------------------------------------------

paddings = st.one_of(
    st.sampled_from(["SAME", "VALID"]),
    st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3)),
              st.tuples(st.integers(0, 3), st.integers(0, 3))).map(list))


@st.composite
def cases(draw):
    """Shapes that reach every branch of the C code: channel counts across the vector chunk
    (32 float32 / 16 float64 with AVX-512), the tail chunk of 8 and single channels; widths
    with and without a full block of 4 interior pixels; 3-wide filters at strides 1 and 2
    (the specialised forward) and any other filter; dilations; every padding kind."""
    kh, kw = draw(st.integers(1, 4)), draw(st.sampled_from([1, 2, 3, 3, 4]))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilations = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    if draw(st.booleans()):
        dilations = (1, 1)
    padding = draw(paddings)
    N, H, W = draw(st.integers(1, 2)), draw(st.integers(1, 9)), draw(st.integers(1, 13))
    C, M = draw(st.sampled_from([1, 3, 8, 13, 16, 32, 41])), draw(st.integers(1, 3))
    if C > 16:
        M = 1
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2**16))
    return (N, H, W, C, M, kh, kw, strides, dilations, padding, dtype, seed)


def draw_arrays(case):
    N, H, W, C, M, kh, kw, strides, dilations, padding, dtype, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, H, W, C)).astype(dtype)
    w = rng.standard_normal((kh, kw, C, M)).astype(dtype)
    Ho, Wo, _ = taps(x.shape, w.shape, strides, padding, dilations)
    dy = rng.standard_normal((N, Ho, Wo, C * M)).astype(dtype)
    return x, w, dy, Ho, Wo


@settings(max_examples=60, deadline=None)
@given(cases())
def test_native_kernels_match_brute_force_and_numpy(native, case):
    N, H, W, C, M, kh, kw, strides, dilations, padding, dtype, seed = case
    x, w, dy, Ho, Wo = draw_arrays(case)
    assume(Ho > 0 and Wo > 0)
    args = (strides, padding, dilations)

    y = dwc.depthwise_conv2d(x, w, *args, algorithm="native")
    assert y.dtype == dtype
    assert_close(y, brute_forward(x, w, *args), dtype)
    assert_close(y, dwc.depthwise_conv2d(x, w, *args, algorithm="numpy"), dtype)

    dx = dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, *args, algorithm="native")
    assert_close(dx, brute_backprop_input(dy, w, x.shape, *args), dtype)
    assert_close(dx, dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, *args, algorithm="numpy"), dtype)

    dw = dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, *args, algorithm="native")
    assert_close(dw, brute_backprop_filter(x, dy, w.shape, *args), dtype)
    assert_close(dw, dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, *args, algorithm="numpy"), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, stride", [
    ((2, 9, 14, 64), 1), ((1, 6, 13, 32), 1), ((1, 5, 11, 40), 1), ((1, 4, 12, 48), 1),  # rows end 0, 3, 1, 2
    ((2, 10, 17, 48), 2), ((1, 7, 9, 40), 2)])                                          # pixels after blocks of 4
def test_mobilenet_like_layers_match_brute_force(native, dtype, x_shape, stride):
    """3x3 filters at strides 1 and 2 with whole vector chunks of channels: the specialised
    forward (register blocks of 4 pixels) and the blocked backprop-filter, beside the tails."""
    rng = np.random.default_rng(x_shape[2])
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal((3, 3, x_shape[3], 1)).astype(dtype)
    args = ((stride, stride), "SAME", (1, 1))
    y = dwc.depthwise_conv2d(x, w, *args, algorithm="native")
    assert_close(y, brute_forward(x, w, *args), dtype)
    dy = rng.standard_normal(y.shape).astype(dtype)
    assert_close(dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, *args, algorithm="native"),
                 brute_backprop_input(dy, w, x.shape, *args), dtype)
    assert_close(dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, *args, algorithm="native"),
                 brute_backprop_filter(x, dy, w.shape, *args), dtype)


@pytest.mark.parametrize("layer", [
    ((2, 14, 14, 64), (1, 1), "SAME"),      # a MobileNet layer shape, scaled down
    ((2, 16, 15, 48), (2, 2), "SAME"),      # stride 2, odd width: the gather backprop-input
    ((1, 11, 12, 40), (1, 2), [(2, 0), (0, 3)]),
])
def test_native_kernels_split_over_threads(native, monkeypatch, layer):
    """Rows cut into many ranges run by the caller and the pool give the one-range result."""
    x_shape, strides, padding = layer
    rng = np.random.default_rng(7)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((3, 3, x_shape[3], 1)).astype(np.float32)
    y1 = dwc.depthwise_conv2d(x, w, strides, padding, algorithm="native")
    dy = rng.standard_normal(y1.shape).astype(np.float32)
    dx1 = dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, strides, padding, algorithm="native")
    dw1 = dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, strides, padding, algorithm="native")
    monkeypatch.setattr(dwc, "NATIVE_MIN_SPLIT_MACS", 0)
    monkeypatch.setattr(dwc, "NATIVE_FINE_SPLIT_MACS", 0)
    monkeypatch.setattr(dwc, "NATIVE_BLOCKS_PER_THREAD", 5)
    if dwc.NUM_THREADS < 2:
        monkeypatch.setattr(dwc, "NUM_THREADS", 2)
    assert_close(y1, brute_forward(x, w, strides, padding, (1, 1)), np.float32)
    assert_close(dx1, brute_backprop_input(dy, w, x.shape, strides, padding, (1, 1)), np.float32)
    np.testing.assert_array_equal(dwc.depthwise_conv2d(x, w, strides, padding, algorithm="native"), y1)
    np.testing.assert_array_equal(
        dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, strides, padding, algorithm="native"), dx1)
    dw_split = dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, strides, padding, algorithm="native")
    assert_close(dw_split, dw1, np.float32)               # partial sums added in another order
    assert_close(dw_split, brute_backprop_filter(x, dy, w.shape, strides, padding, (1, 1)), np.float32)


def test_native_is_the_default_and_half_precision_runs_in_float32(native):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 6, 7, 5)).astype(np.float16)
    w = rng.standard_normal((3, 3, 5, 2)).astype(np.float16)
    assert dwc.native_library() is native
    y = aics.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME").numpy()
    assert y.dtype == np.float16
    want = brute_forward(x.astype(np.float32), w.astype(np.float32), (1, 1), "SAME", (1, 1))
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2e-2, atol=2e-2)


def test_gradient_tape_matches_numerical_gradients(native):
    """d/dx and d/dw of sum(depthwise_conv2d(x, w) * r) through GradientTape (the C backprops)
    against central differences of the C forward, float64."""
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal((1, 5, 6, 3))
    w0 = rng.standard_normal((3, 2, 3, 2))
    strides, padding = [1, 2, 2, 1], "SAME"
    r = rng.standard_normal(brute_forward(x0, w0, (2, 2), "SAME", (1, 1)).shape)
    xv, wv = aics.Variable(x0), aics.Variable(w0)
    with aics.GradientTape() as tape:
        loss = aics.reduce_sum(aics.nn.depthwise_conv2d(xv, wv, strides, padding) * r)
    gx, gw = (g.numpy() for g in tape.gradient(loss, [xv, wv]))

    def f(x, w):
        return float((dwc.depthwise_conv2d(x, w, (2, 2), "SAME") * r).sum())

    eps = 1e-6
    for got, arr, call in ((gx, x0, lambda a: f(a, w0)), (gw, w0, lambda a: f(x0, a))):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            up, down = arr.copy(), arr.copy()
            up[idx] += eps
            down[idx] -= eps
            num[idx] = (call(up) - call(down)) / (2 * eps)
        np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-7)


def test_nchw_kernels_run_native(native):
    """The registered kernels (NCHW transposed to NHWC and back) give the loop results."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 7, 8, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 4, 1)).astype(np.float32)
    y = aics.nn.depthwise_conv2d(np.ascontiguousarray(x.transpose(0, 3, 1, 2)), w, [1, 1, 2, 2], "VALID",
                                 data_format="NCHW").numpy()
    assert_close(y.transpose(0, 2, 3, 1), brute_forward(x, w, (2, 2), "VALID", (1, 1)), np.float32)


# ----------------------------------------------------------------------------
# Choosing the path, and the fallback without a compiler
# ----------------------------------------------------------------------------

def test_numpy_forced_by_flag_and_bad_values_rejected(native, monkeypatch):
    monkeypatch.setenv("AICS_DEPTHWISE_ALGO", "numpy")
    flags.reload()
    try:
        assert dwc.native_library() is None
        assert dwc.native_library("native") is native          # the argument wins over the variable
        monkeypatch.setenv("AICS_DEPTHWISE_ALGO", "fast")
        flags.reload()
        with pytest.raises(ValueError, match="AICS_DEPTHWISE_ALGO"):
            dwc.depthwise_conv2d(np.ones((1, 3, 3, 1)), np.ones((1, 1, 1, 1)))
    finally:
        monkeypatch.delenv("AICS_DEPTHWISE_ALGO")
        flags.reload()
    with pytest.raises(ValueError, match="algorithm must be one of auto, native, numpy"):
        dwc.depthwise_conv2d(np.ones((1, 3, 3, 1)), np.ones((1, 1, 1, 1)), algorithm="winograd")
    assert dwc.native_library(block_bytes=1 << 16) is None      # the NumPy tuning knob selects NumPy


def test_where_it_was_not_built_numpy_computes_the_same(native, monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 7, 5))
    w = rng.standard_normal((3, 3, 5, 2))
    y = dwc.depthwise_conv2d(x, w, (2, 1), "SAME")
    dy = rng.standard_normal(y.shape)
    with native_loader.without_library(c_depthwise.LIBRARY, "no compiler at install"):
        assert dwc.native_library() is None
        assert c_depthwise.fallback_reason() == "no compiler at install"
        assert_close(dwc.depthwise_conv2d(x, w, (2, 1), "SAME"), y, np.float64)
        assert_close(dwc.depthwise_conv2d(x, w, (2, 1), "SAME"), brute_forward(x, w, (2, 1), "SAME", (1, 1)),
                     np.float64)
        assert_close(dwc.depthwise_conv2d_backprop_input(dy, w, x.shape, (2, 1), "SAME"),
                     brute_backprop_input(dy, w, x.shape, (2, 1), "SAME", (1, 1)), np.float64)
        assert_close(dwc.depthwise_conv2d_backprop_filter(x, dy, w.shape, (2, 1), "SAME"),
                     brute_backprop_filter(x, dy, w.shape, (2, 1), "SAME", (1, 1)), np.float64)
        with pytest.raises(RuntimeError, match="native algorithm was asked for.*no compiler at install"):
            dwc.depthwise_conv2d(x, w, algorithm="native")
    assert c_depthwise.library() is native


def test_c_functions_reject_a_bad_geometry(native):
    """The C side checks what it is given (negative sizes, zero strides) and says so."""
    g = dict(N=1, H=3, W=3, C=2, kh=1, kw=1, sh=0, sw=1, dh=1, dw=1, pt=0, pl=0, Ho=3, Wo=3)
    x = np.zeros((1, 3, 3, 2), np.float32)
    fn = c_depthwise.function(native, "forward", np.float32)
    with pytest.raises(RuntimeError, match="aics_depthwise_forward_f32 failed"):
        c_depthwise.call(fn, c_depthwise.geometry_array(g), x, x[0, 0, :1], x.copy(), 0, 3)
