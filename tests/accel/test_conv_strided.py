"""The strided convolution's own paths against independent references: the input gradient by
phases (aicslib/accel/conv_strided.py) against brute-force loops written here, the reference
kernel's direct loops and central differences of the forward, for odd sizes, SAME/VALID/explicit
padding, strides 1-3, float32 and float64, on one thread and on the work sharder's threads; and
the strided forward's implicit GEMM (aics_conv2d_implicit) against brute-force loops, on every
instruction set and on the threads, and its fallbacks."""
import itertools

import numpy as np
import pytest

import aicslib as aics
from aicslib import flags
from aicslib.accel import c_sgemm, native_loader
from aicslib.accel import conv_backprop_input as fcgi
from aicslib.accel import conv_forward as fco
from aicslib.accel import work_sharder
from aicslib.accel.conv_strided import conv2d_backprop_input_phases
from aicslib.kernels.conv_2d import conv_geometry
from aicslib.kernels.conv_grad_input_ops import conv2d_backprop_input_direct


def brute_force_input_grad(dy, w, x_shape, strides, padding):
    """dx by its definition: every output pixel's gradient spread over its receptive field."""
    g = conv_geometry(x_shape, w.shape, strides, padding)
    N, H, W, C = x_shape
    dxp = np.zeros((N, H + g["pt"] + g["pb"], W + g["pl"] + g["pr"], C))
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(w.shape[0]):
                for j in range(w.shape[1]):
                    h, v = oh * g["sh"] + i, ow * g["sw"] + j
                    dxp[:, h, v, :] += dy[:, oh, ow, :].astype(np.float64) @ w[i, j].T.astype(np.float64)
    return dxp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W]


CASES = [  # (N, H, W, C), (kh, kw, K), strides, padding
    ((2, 7, 9, 3), (3, 3, 4), (2, 2), "SAME"),
    ((2, 7, 9, 3), (3, 3, 4), (2, 2), "VALID"),
    ((1, 8, 8, 2), (3, 3, 5), (3, 3), "SAME"),
    ((1, 11, 10, 3), (3, 2, 2), (3, 2), "VALID"),
    ((2, 6, 5, 3), (1, 1, 4), (2, 2), "SAME"),        # a 1x1 strided conv: three phases get no tap
    ((2, 9, 9, 2), (4, 4, 3), (2, 3), "SAME"),
    ((1, 5, 6, 3), (3, 3, 2), (1, 1), "SAME"),        # stride 1: one phase, the full correlation
    ((1, 5, 5, 2), (5, 5, 3), (3, 3), "VALID"),       # filter wider than the stride, few outputs
    ((2, 10, 7, 3), (3, 3, 2), (2, 2), [(1, 2), (0, 3)]),   # explicit padding
    ((1, 9, 9, 2), (2, 2, 3), (3, 3), "VALID"),       # input rows no window reaches get zero
]


@pytest.mark.parametrize("x_shape,f,strides,padding", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_phases_match_brute_force(x_shape, f, strides, padding, dtype):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((f[0], f[1], x_shape[3], f[2])).astype(dtype)
    g = conv_geometry(x_shape, w.shape, strides, padding)
    dy = rng.standard_normal((x_shape[0], g["Ho"], g["Wo"], f[2])).astype(dtype)
    got = conv2d_backprop_input_phases(dy, w, x_shape, strides, padding)
    assert got.dtype == dtype and got.shape == x_shape
    want = brute_force_input_grad(dy, w, x_shape, strides, padding)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_phases_agree_with_the_reference_loops_over_a_grid():
    rng = np.random.default_rng(5)
    for H, W, kh, kw, s, pad in itertools.product([5, 8], [6, 9], [1, 2, 3], [1, 3], [1, 2, 3], ["SAME", "VALID"]):
        x_shape, w = (2, H, W, 3), rng.standard_normal((kh, kw, 3, 2))
        g = conv_geometry(x_shape, w.shape, (s, s), pad)
        dy = rng.standard_normal((2, g["Ho"], g["Wo"], 2))
        np.testing.assert_allclose(conv2d_backprop_input_phases(dy, w, x_shape, (s, s), pad),
                                   conv2d_backprop_input_direct(dy, w, x_shape, (s, s), pad),
                                   rtol=1e-12, atol=1e-12, err_msg=f"{H}x{W} {kh}x{kw} /{s} {pad}")


def test_phases_match_central_differences_of_the_forward():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 7, 6, 2))
    w = rng.standard_normal((3, 3, 2, 3))
    dy = rng.standard_normal(aics.nn.conv2d(x, w, 2, "SAME").shape)
    got = conv2d_backprop_input_phases(dy, w, x.shape, (2, 2), "SAME")
    eps, num = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = np.sum(dy * (aics.nn.conv2d(xp, w, 2, "SAME").numpy()
                                - aics.nn.conv2d(xm, w, 2, "SAME").numpy())) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-7)


def test_big_layer_on_the_threads_matches_one_thread(monkeypatch):
    rng = np.random.default_rng(9)
    x_shape, w = (4, 23, 21, 24), rng.standard_normal((3, 3, 24, 40)).astype(np.float32)
    g = conv_geometry(x_shape, w.shape, (2, 2), "SAME")
    dy = rng.standard_normal((4, g["Ho"], g["Wo"], 40)).astype(np.float32)
    threaded = conv2d_backprop_input_phases(dy, w, x_shape, (2, 2), "SAME")
    monkeypatch.setattr(work_sharder, "NUM_THREADS", 1)
    single = conv2d_backprop_input_phases(dy, w, x_shape, (2, 2), "SAME")
    np.testing.assert_allclose(threaded, single, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(single, brute_force_input_grad(dy, w, x_shape, (2, 2), "SAME"), rtol=1e-4, atol=1e-4)


def test_dispatch_runs_phases_for_big_strided_gradients_and_refuses_dilation(monkeypatch):
    calls = []
    monkeypatch.setattr(fcgi, "conv2d_backprop_input_phases",
                        lambda *a, **k: calls.append(tuple(a[2])) or conv2d_backprop_input_phases(*a, **k))
    rng = np.random.default_rng(1)
    big = (1, 64, 64, 32)                       # 128K elements: the threshold
    assert np.prod(big) >= fcgi.PHASES_MIN_ELEMENTS
    wide = rng.standard_normal((3, 3, 32, 64)).astype(np.float32)   # K > C: GEMM + col2im
    gw = conv_geometry(big, wide.shape, (2, 2), "SAME")
    fcgi.conv2d_backprop_input(np.ones((1, gw["Ho"], gw["Wo"], 64), np.float32), wide, big, (2, 2), "SAME")
    assert calls == []
    w = rng.standard_normal((3, 3, 32, 8)).astype(np.float32)
    g = conv_geometry(big, w.shape, (2, 2), "SAME")
    dy = rng.standard_normal((1, g["Ho"], g["Wo"], 8)).astype(np.float32)
    fcgi.conv2d_backprop_input(dy, w, big, (2, 2), "SAME")
    assert calls == [big]
    small = (1, 9, 9, 2)
    ws = rng.standard_normal((3, 3, 2, 2))
    gs = conv_geometry(small, ws.shape, (2, 2), "SAME")
    dys = rng.standard_normal((1, gs["Ho"], gs["Wo"], 2))
    fcgi.conv2d_backprop_input(dys, ws, small, (2, 2), "SAME")
    assert calls == [big]                       # below the threshold: GEMM + col2im
    np.testing.assert_allclose(fcgi.conv2d_backprop_input(dys, ws, small, (2, 2), "SAME", algorithm="phases"),
                               brute_force_input_grad(dys, ws, small, (2, 2), "SAME"), atol=1e-12)
    with pytest.raises(ValueError, match="dilation 1"):
        fcgi.conv2d_backprop_input(dys, ws, small, (1, 1), "SAME", (2, 2), algorithm="phases")


def test_gradient_tape_through_a_strided_conv_runs_phases_and_matches_the_loops(monkeypatch):
    """A user's GradientTape over a strided conv reaches the phases through the kernel registry."""
    calls = []
    monkeypatch.setattr(fcgi, "conv2d_backprop_input_phases",
                        lambda *a, **k: calls.append(1) or conv2d_backprop_input_phases(*a, **k))
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((2, 45, 47, 32)), rng.standard_normal((3, 3, 32, 16))
    g = conv_geometry(x.shape, w.shape, (2, 2), "SAME")
    dy = rng.standard_normal((2, g["Ho"], g["Wo"], 16))
    xv, wv = aics.Variable(x), aics.Variable(w)
    with aics.GradientTape() as tape:
        y = aics.nn.conv2d(xv, wv, 2, "SAME")
    dx, _ = tape.gradient(y, [xv, wv], output_gradients=dy)
    assert calls == [1]
    np.testing.assert_allclose(dx.numpy(), conv2d_backprop_input_direct(dy, w, x.shape, (2, 2), "SAME"),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kernel,strides", [((3, 3), (1, 1)), ((1, 1), (1, 1)), ((3, 3), (2, 2))])
def test_im2col_writes_into_a_given_output_even_a_strided_view(kernel, strides):
    from aicslib.accel.conv_forward import conv2d_im2col
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 9, 8, 5)).astype(np.float32)
    w = rng.standard_normal((*kernel, 5, 4)).astype(np.float32)
    want = conv2d_im2col(x, w, strides, "SAME")
    big = np.full((3, 2 * want.shape[1], 2 * want.shape[2], 4), np.nan, np.float32)
    view = big[:, ::2, ::2]                     # every other pixel: not contiguous
    assert conv2d_im2col(x, w, strides, "SAME", out=view) is view
    np.testing.assert_array_equal(view, want)
    assert np.isnan(big[:, 1::2]).all()         # the pixels between are untouched
    out = np.empty_like(want)
    assert conv2d_im2col(x, w, strides, "SAME", out=out) is out
    np.testing.assert_array_equal(out, want)
    with pytest.raises(ValueError, match="out must be"):
        conv2d_im2col(x, w, strides, "SAME", out=np.empty((3, 1, 1, 4), np.float32))


# -- the strided forward: implicit GEMM ---------------------------------------------------------

def brute_force_forward(x, w, strides, padding, dilations=(1, 1)):
    """y by its definition, in float64: each output pixel the sum over the taps of its input pixel
    (zero in the padding) times the tap's C x K matrix."""
    g = conv_geometry(x.shape, w.shape, strides, padding, dilations)
    N, H, W, C = x.shape
    xp = np.zeros((N, H + g["pt"] + g["pb"], W + g["pl"] + g["pr"], C))
    xp[:, g["pt"]:g["pt"] + H, g["pl"]:g["pl"] + W] = x
    y = np.zeros((N, g["Ho"], g["Wo"], w.shape[3]))
    for oh in range(g["Ho"]):
        for ow in range(g["Wo"]):
            for i in range(w.shape[0]):
                for j in range(w.shape[1]):
                    y[:, oh, ow] += xp[:, oh * g["sh"] + i * g["dh"], ow * g["sw"] + j * g["dw"]] @ w[i, j]
    return y


needs_sgemm = pytest.mark.skipif(c_sgemm.library() is None, reason="the C SGEMM is not built")

IMPLICIT_CASES = [  # (N, H, W, C), (kh, kw, K), strides, padding, dilations
    ((2, 7, 9, 3), (3, 3, 4), (2, 2), "SAME", (1, 1)),
    ((3, 11, 10, 5), (3, 2, 70), (3, 2), "VALID", (1, 1)),       # K = 70: past two 32-wide tiles
    ((2, 6, 5, 1), (1, 1, 33), (2, 2), "SAME", (1, 1)),          # 1x1, one input channel
    ((1, 9, 9, 2), (4, 4, 3), (2, 3), "SAME", (1, 1)),
    ((2, 10, 7, 3), (3, 3, 2), (2, 2), [(1, 2), (0, 3)], (1, 1)),  # explicit padding
    ((2, 13, 12, 4), (3, 3, 6), (2, 2), "SAME", (2, 2)),         # dilated and strided
    ((1, 3, 3, 2), (5, 5, 3), (2, 2), "SAME", (1, 1)),           # filter wider than the input
    ((2, 17, 19, 40), (3, 3, 64), (2, 2), "SAME", (1, 1)),       # > 12 pixels per row: tiles cross rows
]


def strided_forward_calls(monkeypatch):
    calls = []
    real = c_sgemm.conv2d_implicit
    monkeypatch.setattr(c_sgemm, "conv2d_implicit", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@needs_sgemm
@pytest.mark.parametrize("x_shape,f,strides,padding,dilations", IMPLICIT_CASES)
def test_implicit_gemm_matches_brute_force(monkeypatch, x_shape, f, strides, padding, dilations):
    monkeypatch.setattr(flags, "GEMM", "auto")
    calls = strided_forward_calls(monkeypatch)
    rng = np.random.default_rng(17)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal((f[0], f[1], x_shape[3], f[2]), dtype=np.float32)
    got = fco.conv2d(x, w, strides, padding, dilations, algorithm="im2col")
    assert calls and got.dtype == np.float32
    want = brute_force_forward(x, w, strides, padding, dilations)
    # float32 sums of kh*kw*C products: error about sqrt(k) * eps * sum |x||w|
    scale = brute_force_forward(np.abs(x), np.abs(w), strides, padding, dilations) + 1
    k = f[0] * f[1] * x_shape[3]
    assert np.all(np.abs(got - want) <= 4 * np.sqrt(k) * np.finfo(np.float32).eps * scale)


@needs_sgemm
def test_implicit_gemm_is_the_same_bits_on_every_isa_and_on_the_threads(monkeypatch):
    rng = np.random.default_rng(19)
    x = rng.standard_normal((4, 23, 21, 24), dtype=np.float32)
    w = rng.standard_normal((3, 3, 24, 40), dtype=np.float32)
    results = []
    try:
        for isa in native_loader.supported_isas():
            native_loader.set_isa(isa)
            results.append(fco.conv2d_im2col(x, w, (2, 2), "SAME"))
            monkeypatch.setattr(work_sharder, "NUM_THREADS", 1)
            results.append(fco.conv2d_im2col(x, w, (2, 2), "SAME"))
            monkeypatch.undo()
    finally:
        native_loader.set_isa(flags.ACCEL_ISA)
    for got in results[1:]:
        assert np.array_equal(got.view(np.uint32), results[0].view(np.uint32))
    np.testing.assert_allclose(results[0], brute_force_forward(x, w, (2, 2), "SAME"), rtol=1e-4, atol=1e-4)


@needs_sgemm
def test_strided_forward_falls_back_where_the_implicit_gemm_does_not_apply(monkeypatch):
    calls = strided_forward_calls(monkeypatch)
    rng = np.random.default_rng(23)
    x = rng.standard_normal((2, 9, 8, 3))
    w = rng.standard_normal((3, 3, 3, 4))
    want = brute_force_forward(x, w, (2, 2), "SAME")
    np.testing.assert_allclose(fco.conv2d_im2col(x, w, (2, 2), "SAME"), want, rtol=1e-12)    # float64
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    fco.conv2d_im2col(x32, w32, (1, 1), "SAME")                # stride 1: the im2col copy
    monkeypatch.setattr(flags, "GEMM", "blas")                  # AICS_GEMM=blas: BLAS's GEMM
    np.testing.assert_allclose(fco.conv2d_im2col(x32, w32, (2, 2), "SAME"), want, rtol=1e-4, atol=1e-4)
    assert calls == []
    monkeypatch.setattr(flags, "GEMM", "auto")
    np.testing.assert_allclose(fco.conv2d_im2col(x32[:, ::-1], w32, (2, 2), "SAME"),   # a strided view of x
                               brute_force_forward(x[:, ::-1], w, (2, 2), "SAME"), rtol=1e-4, atol=1e-4)
    assert calls


@needs_sgemm
def test_implicit_gemm_refuses_a_bad_geometry_by_name():
    x = np.zeros((1, 4, 4, 2), np.float32)
    w2 = np.zeros((18, 3), np.float32)
    g = conv_geometry(x.shape, (3, 3, 2, 3), (2, 2), "SAME")
    y = np.zeros((1, g["Ho"], g["Wo"], 3), np.float32)
    with pytest.raises(ValueError, match=r"aics_conv2d_implicit failed \(status -1\) for output rows 0:9"):
        c_sgemm.conv2d_implicit(c_sgemm.library(), x, w2, y, g, 0, 1, 0, 9)
