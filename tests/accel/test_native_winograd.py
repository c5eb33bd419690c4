"""Winograd's transforms in C (aicslib/accel/src/aics_winograd.c): each against the transform
matrices applied in float64 (``B^T d B``, ``A^T M A``), tile by tile, on random shapes with the
zero padding at every edge and strided tile arrays; the convolutions built on them against a
brute-force loop, with and without the C library; and the auto rule measured with them.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aicslib.accel import c_winograd, conv_policy, work_sharder
from aicslib.accel import conv_winograd as cw
from aicslib.accel import winograd_transforms as wt

from native_library import library_fixture


def brute_conv(x, w, strides, padding, dilations):
    """The 3x3, stride-1 convolution as a float64 sum over the 9 taps of shifted, zero-padded
    inputs (``padding``: "SAME", "VALID" or ``[(top, bottom), (left, right)]``)."""
    assert strides == dilations == (1, 1) and w.shape[:2] == (3, 3)
    if padding == "SAME":
        padding = [(1, 1), (1, 1)]
    elif padding == "VALID":
        padding = [(0, 0), (0, 0)]
    xp = np.pad(x.astype(np.float64), ((0, 0), padding[0], padding[1], (0, 0)))
    Ho, Wo = xp.shape[1] - 2, xp.shape[2] - 2
    return sum(xp[:, i:i + Ho, j:j + Wo] @ w[i, j].astype(np.float64) for i in range(3) for j in range(3))

BT = {2: wt.WINOGRAD_BT.astype(np.float64), 4: wt.WINOGRAD4_BT.astype(np.float64)}
AT = {2: wt.WINOGRAD_AT.astype(np.float64), 4: wt.WINOGRAD4_AT.astype(np.float64)}
EPS = np.finfo(np.float32).eps


lib = library_fixture(c_winograd, "C Winograd transforms")


def reference_input_tiles(x, m, row0, col0, n0, n1, nr, tw):
    """``B^T d B`` of every tile, in float64, from a zero-padded copy of ``x``."""
    a = m + 2
    pad = a + abs(row0) + abs(col0) + m * (nr + tw)
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    V = np.empty((a, a, n1 - n0, nr, tw, x.shape[3]))
    mag = np.empty_like(V)
    for n in range(n0, n1):
        for r in range(nr):
            for q in range(tw):
                h, w = pad + row0 + m * r, pad + col0 + m * q
                d = xp[n, h:h + a, w:w + a]
                V[:, :, n - n0, r, q] = np.einsum("ai,ijc,bj->abc", BT[m], d, BT[m])
                mag[:, :, n - n0, r, q] = np.einsum("ai,ijc,bj->abc", abs(BT[m]), abs(d), abs(BT[m]))
    return V, mag


@settings(max_examples=40, deadline=None)
@given(m=st.sampled_from([2, 4]), N=st.integers(1, 3), H=st.integers(1, 11), W=st.integers(1, 11),
       C=st.integers(1, 70), pt=st.integers(0, 2), pl=st.integers(0, 2), seed=st.integers(0, 2 ** 16))
def test_input_transform_is_bt_d_b_of_every_tile(lib, m, N, H, W, C, pt, pl, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, H, W, C), dtype=np.float32)
    n0, n1 = rng.integers(0, N), N
    th, tw = -(-H // m) + 1, -(-W // m) + 1           # one tile row and column past the input
    r0 = int(rng.integers(0, th))
    nr = th - r0
    # the tiles as a view into a bigger array: image and tile-row strides that are not the packed ones
    big = np.full((m + 2, m + 2, n1 - n0 + 1, nr + 2, tw, C), np.nan, np.float32)
    V = big[:, :, 1:, 1:nr + 1]
    c_winograd.input_transform(lib, m, x, m * r0 - pt, -pl, n0, n1, nr, tw, V)
    ref, mag = reference_input_tiles(x, m, m * r0 - pt, -pl, n0, n1, nr, tw)
    assert np.all(np.abs(V - ref) <= 4 * EPS * mag + 1e-30)
    assert np.isnan(big[:, :, 0]).all() and np.isnan(big[:, :, 1:, 0]).all()   # the rest untouched


@settings(max_examples=40, deadline=None)
@given(m=st.sampled_from([2, 4]), nb=st.integers(1, 3), nr=st.integers(1, 3), tw=st.integers(1, 4),
       K=st.integers(1, 70), seed=st.integers(0, 2 ** 16))
def test_output_transform_is_at_m_a_of_every_tile(lib, m, nb, nr, tw, K, seed):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((m + 2, m + 2, nb, nr, tw, K), dtype=np.float32)
    big = np.full((nb, m * nr, m * tw + 3, K), np.nan, np.float32)
    y = big[:, :, 1:m * tw + 1]                         # a strided output: pixels not packed
    c_winograd.output_transform(lib, m, M, y)
    ref = np.einsum("ia,abnrqk,jb->nriqjk", AT[m], M.astype(np.float64), AT[m])
    mag = np.einsum("ia,abnrqk,jb->nriqjk", abs(AT[m]), abs(M.astype(np.float64)), abs(AT[m]))
    shape = (nb, m * nr, m * tw, K)
    assert np.all(np.abs(y - ref.reshape(shape)) <= 4 * EPS * mag.reshape(shape) + 1e-30)
    assert np.isnan(big[:, :, 0]).all() and np.isnan(big[:, :, m * tw + 1:]).all()


def test_bad_tile_arrays_are_refused_with_their_shape(lib):
    x = np.zeros((1, 8, 8, 4), np.float32)
    with pytest.raises(ValueError, match=r"F\(4x4, 3x3\) input tiles V: expected a \(6, 6, "):
        c_winograd.input_transform(lib, 4, x, -1, -1, 0, 1, 2, 2, np.zeros((4, 4, 1, 2, 2, 4), np.float32))
    with pytest.raises(ValueError, match=r"F\(2x2, 3x3\) output: expected a float32 \(1, 4, 4, 4\)"):
        c_winograd.output_transform(lib, 2, np.zeros((4, 4, 1, 2, 2, 4), np.float32),
                                          np.zeros((1, 4, 5, 4), np.float32))


def test_handles_only_float32_with_contiguous_channels():
    x = np.zeros((2, 5, 5, 3), np.float32)
    assert c_winograd.handles(x)
    assert not c_winograd.handles(x.astype(np.float64))
    assert not c_winograd.handles(np.zeros((2, 3, 5, 5), np.float32).transpose(0, 2, 3, 1))


@pytest.mark.parametrize("conv", [cw.conv2d_winograd, cw.conv2d_winograd_f4])
@pytest.mark.parametrize("shape,padding", [((2, 9, 7, 5), "SAME"), ((3, 12, 12, 20), "VALID"),
                                            ((1, 4, 17, 33), [(2, 0), (1, 2)])])
def test_convolutions_agree_with_loops_with_and_without_the_c_transforms(lib, monkeypatch, conv, shape, padding):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape, dtype=np.float32)
    w = rng.standard_normal((3, 3, shape[3], 6), dtype=np.float32)
    ref = brute_conv(x, w, (1, 1), padding, (1, 1))
    calls = []
    real = c_winograd.input_transform
    monkeypatch.setattr(c_winograd, "input_transform", lambda *a: calls.append(1) or real(*a))
    with_c = conv(x, w, (1, 1), padding)
    assert calls, "the C transforms were not used"
    monkeypatch.setattr(c_winograd, "library", lambda: None)
    with_numpy = conv(x, w, (1, 1), padding)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(with_c, ref, rtol=0, atol=2e-5 * scale)
    np.testing.assert_allclose(with_numpy, ref, rtol=0, atol=2e-5 * scale)
    # NCHW data seen through a transposed view: the C code refuses it, the conv copies it first
    monkeypatch.undo()
    xt = np.ascontiguousarray(x.transpose(0, 3, 1, 2)).transpose(0, 2, 3, 1)
    assert not c_winograd.handles(xt)
    np.testing.assert_allclose(conv(xt, w, (1, 1), padding), ref, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("conv,N,H,C", [(cw.conv2d_winograd_f4, 4, 28, 64), (cw.conv2d_winograd, 2, 24, 48),
                                         (cw.conv2d_winograd_f4, 1, 40, 160)])
def test_thread_splits_give_the_same_result(lib, conv, N, H, C):
    """Own images per thread (thin blocks), phase by phase, and one thread: same numbers."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((N, H, H, C), dtype=np.float32)
    w = rng.standard_normal((3, 3, C, C), dtype=np.float32) / 10
    auto = conv(x, w, (1, 1), "SAME")
    one_block = conv(x, w, (1, 1), "SAME", block_bytes=1 << 40)
    ref = brute_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), "SAME", (1, 1))
    for y in (auto, one_block):
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-4 * np.abs(ref).max())


def test_thin_blocks_only_for_enough_work_and_few_channels(lib):
    rows = cw.winograd_min_gemm_rows
    assert rows(None, 36, 64, 64) is None                        # NumPy transforms: the default
    assert rows(lib, 36, 64, 64) == cw.NATIVE_WINOGRAD_MIN_GEMM_ROWS
    assert rows(lib, 36, 256, 256) is None                       # many channels: the default
    few = rows(lib, 36, 16, 16)                                  # little work per tile: more tiles
    assert few * 2 * 36 * 16 * 16 >= cw.NATIVE_WINOGRAD_MIN_BLOCK_FLOPS > (few - 1) * 2 * 36 * 16 * 16
    blocks = work_sharder.split_blocks(4, 7, 7 * 36 * 64 * 4, None, 7, rows(lib, 36, 64, 64))
    assert len(blocks) == 2 and all(b[1] - b[0] == 2 for b in blocks)       # 98 tiles each
    assert len(work_sharder.split_blocks(4, 7, 7 * 36 * 64 * 4, None, 7)) == 1   # default: 256 rows


def test_the_auto_rule_measured_with_the_c_transforms(monkeypatch):
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: True)
    rule = conv_policy.choose_conv2d_algorithm
    c, t = conv_policy.NATIVE_WINOGRAD_MIN_CHANNELS, conv_policy.NATIVE_WINOGRAD_MIN_TILES
    assert rule((3, 3, 64, 64), (1, 1), (1, 1), (4, 28, 28, 64)) == "winograd"       # the fusion benchmark's layer
    assert rule((3, 3, c, c), (1, 1), (1, 1), (1, 56, 56, c)) == "winograd"
    assert rule((3, 3, c - 1, 64), (1, 1), (1, 1), (1, 56, 56, c - 1)) == "im2col"   # e.g. RGB input
    assert rule((3, 3, 64, 64), (2, 2), (1, 1), (1, 56, 56, 64)) == "im2col"
    assert rule((1, 1, 64, 64), (1, 1), (1, 1), (1, 56, 56, 64)) == "im2col"
    # t tiles of 2x2: an image of 2 x 2t pixels; one fewer tile -> im2col
    assert rule((3, 3, 64, 64), (1, 1), (1, 1), (1, 2, 2 * t, 64)) == "winograd"
    assert rule((3, 3, 64, 64), (1, 1), (1, 1), (1, 2, 2 * t - 1, 64)) == "winograd"  # odd width: t tiles
    assert rule((3, 3, 64, 64), (1, 1), (1, 1), (1, 2, 2 * t - 2, 64)) == "im2col"
    assert rule((3, 3, 256, 256), (1, 1), (1, 1), (1, 14, 14, 256)) == "im2col"      # 49 tiles
    tile = conv_policy.winograd_tile_size
    t4 = conv_policy.NATIVE_WINOGRAD4_MIN_TILES
    assert tile((3, 3, 16, 16), (1, 4, 4 * t4)) == 4
    assert tile((3, 3, 16, 16), (1, 4, 4 * t4 - 4)) == 2
    assert tile((3, 3, 512, 512), (1, 28, 28)) == 2                                 # 49 tiles
    assert tile((3, 3, 256, 256), (8, 14, 14)) == 2                                 # 14 pads to 16
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: False)
    assert rule((3, 3, 32, 32), (1, 1), (1, 1), (4, 28, 28, 32)) == "im2col"         # the NumPy rule


@settings(max_examples=25, deadline=None)
@given(m=st.sampled_from([2, 4]), C=st.integers(1, 9), K=st.integers(1, 80), rotate=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_filter_transform_is_g_g_gt_of_every_filter(lib, m, C, K, rotate, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, 3, C, K), dtype=np.float32)
    G = (wt.WINOGRAD_G if m == 2 else wt.WINOGRAD4_G).astype(np.float64)
    g = w.astype(np.float64)[::-1, ::-1] if rotate else w.astype(np.float64)
    ref = np.einsum("ai,ijck,bj->abck", G, g, G).reshape((m + 2) ** 2, C, K)
    mag = np.einsum("ai,ijck,bj->abck", abs(G), abs(g), abs(G)).reshape((m + 2) ** 2, C, K)
    U = np.full(((m + 2) ** 2, C, K), np.nan, np.float32)
    c0 = int(rng.integers(0, C))
    c_winograd.filter_transform(lib, m, w, U, c0, C, rotate)       # only channels c0..C-1
    assert np.isnan(U[:, :c0]).all()
    assert np.all(np.abs(U[:, c0:] - ref[:, c0:]) <= 4 * EPS * mag[:, c0:] + 1e-30)
    transform = wt.winograd_filter_transform if m == 2 else wt.winograd4_filter_transform
    assert np.all(np.abs(transform(w, rotate180=rotate) - ref) <= 4 * EPS * mag + 1e-30)


def _fused_epilogue(stage):
    """An epilogue as the _FusedConv2D kernel builds it (conv_ops_fused_impl.py)."""
    def epilogue(blk):
        out = stage(blk)
        if out is not blk:
            np.copyto(blk, out.reshape(blk.shape))
    epilogue.c_output_stage = stage.c_arguments
    return epilogue


@pytest.mark.parametrize("conv", [cw.conv2d_winograd, cw.conv2d_winograd_f4])
@pytest.mark.parametrize("fused_ops", [["BiasAdd"], ["BiasAdd", "Relu"], ["FusedBatchNorm", "Relu6"],
                                       ["BiasAdd", "Elu"]])
def test_output_stage_in_the_output_transform_gives_the_unfused_bits(lib, monkeypatch, conv, fused_ops):
    from aicslib.accel.fused_output_stage import OutputStage
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 10, 9, 24), dtype=np.float32)
    w = rng.standard_normal((3, 3, 24, 40), dtype=np.float32)
    x[0, 3, 4, :] = np.nan                                   # NaN and -0.0 keep NumPy's answers
    w[1, 1, 0, :3] = -0.0
    K = w.shape[3]
    args = ([rng.standard_normal(K, dtype=np.float32)] if fused_ops[0] == "BiasAdd" else
            [rng.uniform(0.5, 2, K).astype(np.float32), rng.standard_normal(K, dtype=np.float32),
             rng.standard_normal(K, dtype=np.float32), rng.uniform(0.5, 2, K).astype(np.float32)])
    stage = OutputStage(fused_ops, args, 1e-3, K, np.float32)
    assert (stage.c_arguments is None) == (fused_ops[-1] == "Elu")
    calls = []
    real = c_winograd.output_transform
    monkeypatch.setattr(c_winograd, "output_transform",
                        lambda *a: calls.append(a[4] is not None) or real(*a))
    fused = conv(x, w, (1, 1), "SAME", epilogue=_fused_epilogue(stage))
    assert calls and all(calls) == (fused_ops[-1] != "Elu")      # the stage went to C, or not
    unfused = stage(conv(x, w, (1, 1), "SAME"))
    np.testing.assert_array_equal(fused.view(np.int32), unfused.view(np.int32))   # same bits, NaNs too


@settings(max_examples=30, deadline=None)
@given(m=st.sampled_from([2, 4]), N=st.integers(1, 3), Ho=st.integers(1, 11), Wo=st.integers(1, 11),
       K=st.integers(1, 70), seed=st.integers(0, 2 ** 16))
def test_output_gradient_transform_is_a_dy_at_of_every_tile(lib, m, N, Ho, Wo, K, seed):
    """The filter gradient's ``A dY A^T`` (A = (A^T)^T), zeros past the output's edges."""
    rng = np.random.default_rng(seed)
    dy = rng.standard_normal((N, Ho, Wo, K), dtype=np.float32)
    th, tw = -(-Ho // m), -(-Wo // m)
    n0, r0 = int(rng.integers(0, N)), int(rng.integers(0, th))
    nr = th - r0
    big = np.full((m + 2, m + 2, N - n0 + 1, nr + 1, tw, K), np.nan, np.float32)
    D = big[:, :, 1:, 1:]
    c_winograd.grad_output_transform(lib, m, dy, m * r0, n0, N, nr, tw, D)
    padded = np.zeros((N, m * th, m * tw, K))
    padded[:, :Ho, :Wo] = dy
    tiles = padded[n0:, m * r0:].reshape(N - n0, nr, m, tw, m, K)          # (n, r, i, q, j, k)
    ref = np.einsum("ai,nriqjk,bj->abnrqk", AT[m].T, tiles, AT[m].T)
    mag = np.einsum("ai,nriqjk,bj->abnrqk", abs(AT[m].T), abs(tiles), abs(AT[m].T))
    assert np.all(np.abs(D - ref) <= 4 * EPS * mag + 1e-30)
    assert np.isnan(big[:, :, 0]).all() and np.isnan(big[:, :, 1:, 0]).all()


@pytest.mark.parametrize("shape,expected", [((1, 40, 40, 16), ("winograd", 4)), ((1, 16, 40, 16), ("winograd", 2)),
                                            ((1, 14, 14, 16), ("gemm", None)), ((1, 40, 40, 8), ("gemm", None))])
def test_the_filter_gradient_follows_the_forward_rule_and_tile(monkeypatch, shape, expected):
    from aicslib.accel import conv_backprop_filter as cgf
    monkeypatch.setattr(conv_policy, "native_winograd_rule", lambda: True)
    monkeypatch.setattr(cgf, "native_winograd_rule", lambda: True)
    calls = []
    real_w, real_g = cgf.conv2d_backprop_filter_winograd, cgf.conv2d_backprop_filter_gemm
    monkeypatch.setattr(cgf, "conv2d_backprop_filter_winograd",
                        lambda *a, tile=2, **k: calls.append(("winograd", tile)) or real_w(*a, tile=tile, **k))
    monkeypatch.setattr(cgf, "conv2d_backprop_filter_gemm",
                        lambda *a, **k: calls.append(("gemm", None)) or real_g(*a, **k))
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape, dtype=np.float32)
    dy = rng.standard_normal(shape[:3] + (16,), dtype=np.float32)
    got = cgf.conv2d_backprop_filter(x, dy, (3, 3, shape[3], 16), (1, 1), "SAME")
    assert calls == [expected]
    ref = cgf.conv2d_backprop_filter_direct(x.astype(np.float64), dy.astype(np.float64), (3, 3, shape[3], 16),
                                            (1, 1), "SAME")
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-5 * np.abs(ref).max())
