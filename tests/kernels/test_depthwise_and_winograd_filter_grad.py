"""Depthwise convolution and the Conv2D filter gradient, each against brute-force loops written
here (independent of aicslib's geometry code).

Covered: depthwise forward / input gradient / filter gradient, the reference's tap loops and
the speed layer's (C kernels; the blocked tap loop with W-stride phases, the stride-1 input
gradient as a rotated forward conv, its col2im fallback, depth multiplier M > 1 as repeated
channels, tiny blocks), the speed layer's Winograd filter gradient (odd/even output sizes,
explicit paddings, the auto rule and its GEMM fallback), and numerical gradients of depthwise
convolution through GradientTape on both layers.
"""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import aicslib as aics
from aicslib.accel import conv_backprop_filter as cgf
from aicslib.accel import depthwise as fdwc
from aicslib.kernels import conv_grad_filter_ops as reference_cgf
from aicslib.kernels import depthwise_conv_op as dwc

from accel_switch import accel_on_off  # noqa: F401

#: The depthwise kernels of each layer; ``block_bytes`` (tiny blocks) is the speed layer's only.
DEPTHWISE = {"reference": dwc, "accel": fdwc}

SETTINGS = settings(max_examples=40, deadline=None)


# ----------------------------------------------------------------------------
# Independent reference: TF's padding rule and the convolution sums as loops
# ----------------------------------------------------------------------------

def out_and_pads(size, k, s, d, pad):
    """(out, before, after) along one axis, by TF's documented rule."""
    ke = (k - 1) * d + 1
    if pad == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + ke - size, 0)
        return out, total // 2, total - total // 2
    if pad == "VALID":
        return (size - ke) // s + 1, 0, 0
    before, after = pad
    return (size + before + after - ke) // s + 1, before, after


def geometry(x_shape, kh, kw, strides, padding, dilations):
    N, H, W, C = x_shape
    ph, pw = (padding, padding) if isinstance(padding, str) else padding
    Ho, pt, pb = out_and_pads(H, kh, strides[0], dilations[0], ph)
    Wo, pl, pr = out_and_pads(W, kw, strides[1], dilations[1], pw)
    return Ho, Wo, pt, pb, pl, pr


def brute_depthwise_all(x, w, dy, strides, padding, dilations):
    """Forward, input gradient and filter gradient of a depthwise conv, by loops."""
    N, H, W, C = x.shape
    kh, kw, _, M = w.shape
    Ho, Wo, pt, pb, pl, pr = geometry(x.shape, kh, kw, strides, padding, dilations)
    xp = np.zeros((N, H + pt + pb, W + pl + pr, C))
    xp[:, pt:pt + H, pl:pl + W] = x
    y = np.zeros((N, Ho, Wo, C, M))
    dxp = np.zeros_like(xp)
    dw = np.zeros((kh, kw, C, M))
    dy5 = dy.reshape(N, Ho, Wo, C, M)
    for oh in range(Ho):
        for ow in range(Wo):
            for i in range(kh):
                for j in range(kw):
                    ih, iw = oh * strides[0] + i * dilations[0], ow * strides[1] + j * dilations[1]
                    y[:, oh, ow] += xp[:, ih, iw, :, None] * w[i, j]
                    dxp[:, ih, iw] += (dy5[:, oh, ow] * w[i, j]).sum(-1)
                    dw[i, j] += (xp[:, ih, iw, :, None] * dy5[:, oh, ow]).sum(0)
    return y.reshape(N, Ho, Wo, C * M), dxp[:, pt:pt + H, pl:pl + W], dw


def brute_conv_filter_grad(x, dy, kh, kw, padding):
    """dW of a stride-1, dilation-1 Conv2D, by loops."""
    N, H, W, C = x.shape
    Ho, Wo, pt, pb, pl, pr = geometry(x.shape, kh, kw, (1, 1), padding, (1, 1))
    xp = np.zeros((N, H + pt + pb, W + pl + pr, C))
    xp[:, pt:pt + H, pl:pl + W] = x
    dw = np.zeros((kh, kw, C, dy.shape[3]))
    for oh in range(Ho):
        for ow in range(Wo):
            for i in range(kh):
                for j in range(kw):
                    dw[i, j] += xp[:, oh + i, ow + j, :].T @ dy[:, oh, ow, :]
    return dw


def close(a, b, tol=1e-9):
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.size:
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))


pads_1d = st.one_of(st.tuples(st.integers(0, 3), st.integers(0, 3)))
paddings = st.one_of(st.sampled_from(["SAME", "VALID"]), st.tuples(pads_1d, pads_1d))


# ----------------------------------------------------------------------------
# Depthwise convolution
# ----------------------------------------------------------------------------

@SETTINGS
@given(n=st.integers(1, 2), h=st.integers(1, 9), w_=st.integers(1, 9), c=st.integers(1, 4),
       m=st.integers(1, 3), kh=st.integers(1, 4), kw=st.integers(1, 4),
       sh=st.integers(1, 3), sw=st.integers(1, 3), dil=st.sampled_from([(1, 1), (2, 1), (1, 2), (2, 3)]),
       padding=paddings, small_blocks=st.booleans(), seed=st.integers(0, 2**16),
       layer=st.sampled_from(sorted(DEPTHWISE)))
def test_depthwise_all_passes_match_loops(n, h, w_, c, m, kh, kw, sh, sw, dil, padding, small_blocks, seed, layer):
    strides = (sh, sw)
    if strides != (1, 1) and dil != (1, 1):
        dil = (1, 1)                     # TF does not combine strides and dilations > 1
    Ho, Wo, *_ = geometry((n, h, w_, c), kh, kw, strides, padding, dil)
    assume(Ho >= 1 and Wo >= 1)          # TF rejects a filter larger than the padded input
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w_, c))
    w = rng.standard_normal((kh, kw, c, m))
    dy = rng.standard_normal((n, Ho, Wo, c * m))
    y_ref, dx_ref, dw_ref = brute_depthwise_all(x, w, dy, strides, padding, dil)
    # tiny blocks: one output row per block, many blocks
    kw_ = {"block_bytes": 64 if small_blocks else None} if layer == "accel" else {}
    mod = DEPTHWISE[layer]
    close(mod.depthwise_conv2d(x, w, strides, padding, dil, **kw_), y_ref)
    close(mod.depthwise_conv2d_backprop_input(dy, w, x.shape, strides, padding, dil, **kw_), dx_ref)
    close(mod.depthwise_conv2d_backprop_filter(x, dy, w.shape, strides, padding, dil, **kw_), dw_ref)


@pytest.mark.parametrize("layer", DEPTHWISE)
def test_depthwise_input_grad_wide_explicit_padding_uses_col2im_and_is_right(layer):
    # padding wider than the filter: the rotated-conv padding would be negative
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4, 3))
    w = rng.standard_normal((2, 2, 3, 2))
    padding = ((4, 1), (0, 3))
    Ho, Wo, *_ = geometry(x.shape, 2, 2, (1, 1), padding, (1, 1))
    dy = rng.standard_normal((2, Ho, Wo, 6))
    _, dx_ref, dw_ref = brute_depthwise_all(x, w, dy, (1, 1), padding, (1, 1))
    close(DEPTHWISE[layer].depthwise_conv2d_backprop_input(dy, w, x.shape, (1, 1), padding), dx_ref)
    close(DEPTHWISE[layer].depthwise_conv2d_backprop_filter(x, dy, w.shape, (1, 1), padding), dw_ref)


@pytest.mark.parametrize("layer", DEPTHWISE)
@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_depthwise_float32_stays_float32_and_matches_float64(strides, layer):
    dwk = DEPTHWISE[layer]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 12, 11, 16))
    w = rng.standard_normal((3, 3, 16, 1))
    Ho, Wo, *_ = geometry(x.shape, 3, 3, strides, "SAME", (1, 1))
    dy = rng.standard_normal((2, Ho, Wo, 16)).astype(np.float32)
    y_ref, dx_ref, dw_ref = brute_depthwise_all(x, w, dy.astype(np.float64), strides, "SAME", (1, 1))
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    for got, ref in ((dwk.depthwise_conv2d(x32, w32, strides, "SAME"), y_ref),
                     (dwk.depthwise_conv2d_backprop_input(dy, w32, x.shape, strides, "SAME"), dx_ref),
                     (dwk.depthwise_conv2d_backprop_filter(x32, dy, w.shape, strides, "SAME"), dw_ref)):
        assert got.dtype == np.float32
        close(got, ref, tol=2e-5)


@pytest.mark.parametrize("layer", DEPTHWISE)
def test_depthwise_rejects_wrong_out_backprop_shape(layer):
    w = np.ones((3, 3, 4, 2))
    with pytest.raises(ValueError, match="out_backprop shape"):
        DEPTHWISE[layer].depthwise_conv2d_backprop_input(np.ones((1, 5, 5, 4)), w, (1, 5, 5, 4), (1, 1), "SAME")
    with pytest.raises(ValueError, match="out_backprop shape"):
        DEPTHWISE[layer].depthwise_conv2d_backprop_filter(np.ones((1, 5, 5, 4)), np.ones((1, 5, 5, 4)), w.shape,
                                                          (1, 1), "SAME")


@pytest.mark.usefixtures("accel_on_off")
@pytest.mark.parametrize("strides,m", [((1, 1), 2), ((2, 2), 1)])
def test_depthwise_tape_gradients_match_numerical(strides, m):
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((1, 5, 6, 2))
    w0 = rng.standard_normal((3, 3, 2, m))
    s = [1, strides[0], strides[1], 1]

    def loss(xv, wv):
        y = aics.nn.depthwise_conv2d(aics.constant(xv), aics.constant(wv), s, "SAME")
        return float(np.sum(np.asarray(y) * np.cos(np.arange(np.asarray(y).size).reshape(np.asarray(y).shape))))

    xv, wv = aics.Variable(x0), aics.Variable(w0)
    with aics.GradientTape() as tape:
        y = aics.nn.depthwise_conv2d(xv, wv, s, "SAME")
        weights = aics.constant(np.cos(np.arange(int(np.prod(y.shape))).reshape(y.shape)))
        total = aics.reduce_sum(y * weights)
    gx, gw = (np.asarray(g) for g in tape.gradient(total, [xv, wv]))
    eps = 1e-6
    for arr, grad, which in ((x0, gx, 0), (w0, gw, 1)):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (plus, w0) if which == 0 else (x0, plus)
            args_m = (minus, w0) if which == 0 else (x0, minus)
            num[idx] = (loss(*args_p) - loss(*args_m)) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------
# Conv2D filter gradient through Winograd F(2x2, 3x3)
# ----------------------------------------------------------------------------

@SETTINGS
@given(n=st.integers(1, 2), h=st.integers(1, 9), w_=st.integers(1, 9), c=st.integers(1, 4),
       k=st.integers(1, 4), padding=paddings, small_blocks=st.booleans(), seed=st.integers(0, 2**16),
       tile=st.sampled_from([2, 4]), f32=st.booleans())
def test_winograd_filter_grad_matches_loops(n, h, w_, c, k, padding, small_blocks, seed, tile, f32):
    """F(2x2) and F(4x4); float64 (NumPy transforms) and float32 (the C ones, where they build)."""
    Ho, Wo, *_ = geometry((n, h, w_, c), 3, 3, (1, 1), padding, (1, 1))
    assume(Ho >= 1 and Wo >= 1)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w_, c))
    dy = rng.standard_normal((n, Ho, Wo, k))
    dtype = np.float32 if f32 else np.float64
    got = cgf.conv2d_backprop_filter_winograd(x.astype(dtype), dy.astype(dtype), (3, 3, c, k), (1, 1), padding,
                                              block_bytes=64 if small_blocks else None, tile=tile)
    assert got.dtype == dtype
    close(got, brute_conv_filter_grad(x, dy, 3, 3, padding), 2e-5 if f32 else 1e-9)


def test_winograd_filter_grad_rejects_what_it_cannot_do():
    x = np.ones((1, 6, 6, 2))
    with pytest.raises(ValueError, match="3x3 filters with stride 1"):
        cgf.conv2d_backprop_filter_winograd(x, np.ones((1, 3, 3, 2)), (3, 3, 2, 2), (2, 2), "SAME")
    with pytest.raises(ValueError, match="3x3 filters with stride 1"):
        cgf.conv2d_backprop_filter_winograd(x, np.ones((1, 6, 6, 2)), (5, 5, 2, 2), (1, 1), "SAME")
    with pytest.raises(ValueError, match="tile must be 2 .* or 4 .*, got 3"):
        cgf.conv2d_backprop_filter_winograd(x, np.ones((1, 6, 6, 2)), (3, 3, 2, 2), (1, 1), "SAME", tile=3)


@pytest.mark.parametrize("wshape,strides,algorithm", [
    ((3, 3, 64, 64), (1, 1), "auto"),        # the rule picks Winograd (deep, enough pixels)
    ((3, 3, 64, 64), (2, 2), "winograd"),    # forced Winograd on a strided conv -> GEMM
    ((1, 1, 64, 64), (1, 1), "winograd"),    # ... and on a 1x1 conv -> GEMM
    ((3, 3, 64, 64), (1, 1), "gemm"),
])
def test_filter_grad_dispatch_agrees_with_loops(wshape, strides, algorithm):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 20, 20, 64)).astype(np.float32)
    Ho, Wo, *_ = geometry(x.shape, wshape[0], wshape[1], strides, "SAME", (1, 1))
    dy = rng.standard_normal((1, Ho, Wo, 64)).astype(np.float32)
    got = cgf.conv2d_backprop_filter(x, dy, wshape, strides, "SAME", algorithm=algorithm)
    ref = reference_cgf.conv2d_backprop_filter_direct(x.astype(np.float64), dy.astype(np.float64),
                                                      wshape, strides, "SAME")
    assert got.dtype == np.float32
    close(got, ref, tol=1e-4)
