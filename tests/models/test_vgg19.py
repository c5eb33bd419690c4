"""VGG19 (aicslib.models.vgg19) and style transfer (aicslib.models.style_transfer).

References: the published VGG19 architecture (Simonyan & Zisserman 2014,
configuration E: 16 3x3 conv layers, 5 pools, 3 fc layers; 143,667,240
parameters, 20,024,384 in the conv part -- the numbers Keras reports for
``VGG19(include_top=True/False).count_params()``), a NumPy re-implementation of
the forward pass, NumPy formulas of Gatys et al.'s losses, central finite
differences, and Adam's first step written out by hand.
"""
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.models import style_transfer, vgg19

# Channels of each block and convs per block, as in the paper's table 1, column E.
PAPER_BLOCKS = [(64, 2), (128, 2), (256, 4), (512, 4), (512, 4)]


@pytest.fixture(scope="module")
def weights():
    return vgg19.random_weights(seed=0)


def _with_zero_top(weights):
    """Conv weights plus fc6-fc8 as zeros (np.zeros maps lazily: no 500 MB to fill)."""
    top = dict(weights)
    for name, fan_in, fan_out in (("fc6", 25088, 4096), ("fc7", 4096, 4096), ("fc8", 4096, 1000)):
        top[name] = (np.zeros((fan_in, fan_out), np.float32), np.zeros(fan_out, np.float32))
    return top


# ---- architecture ---------------------------------------------------------------------------

def test_parameter_counts_match_the_published_architecture(weights):
    assert vgg19.count_params(include_top=False) == 20_024_384
    assert vgg19.count_params(include_top=True) == 143_667_240
    assert sum(a.size + b.size for a, b in weights.values()) == 20_024_384
    top = vgg19.check_weights(_with_zero_top(weights), include_top=True)
    assert sum(a.size + b.size for a, b in top.values()) == 143_667_240


def _expected_shapes(h, w):
    shapes, cin = {}, 3
    for block, (channels, convs) in enumerate(PAPER_BLOCKS, start=1):
        for i in range(1, convs + 1):
            shapes[f"conv{block}_{i}"] = (1, h, w, channels)
        h, w = (h + 1) // 2, (w + 1) // 2
        shapes[f"pool{block}"] = (1, h, w, channels)
        cin = channels
    assert cin == 512
    return shapes


def test_layer_names_and_shapes_eager(weights):
    x = np.random.default_rng(0).uniform(-100, 100, (1, 32, 48, 3)).astype(np.float32)
    net = vgg19.vgg19_features(aics.constant(x), weights)
    expected = _expected_shapes(32, 48)
    assert list(net) == list(expected)          # the lecture's order: conv1_1, conv1_2, pool1, ...
    assert {k: tuple(v.shape) for k, v in net.items()} == expected


def test_graph_with_top_has_published_shapes_at_224(weights):
    with aics.Graph().as_default():
        net = vgg19.build_vgg19(_with_zero_top(weights), include_top=True)
        shapes = {k: tuple(v.shape.as_list()) for k, v in net.items()}
    expected = _expected_shapes(224, 224)
    expected.update({"input": (1, 224, 224, 3), "fc6": (1, 4096), "fc7": (1, 4096),
                     "fc8": (1, 1000), "prob": (1, 1000)})
    assert shapes == expected
    assert expected["pool5"] == (1, 7, 7, 512)


def test_include_top_needs_224_input(weights):
    top = _with_zero_top(weights)
    with pytest.raises(ValueError, match="224x224"):
        vgg19.vgg19_features(aics.zeros([1, 32, 32, 3]), top, include_top=True)


def _numpy_vgg19(x, weights, pooling="max"):
    """Independent forward pass: 3x3 SAME conv as a sum over 9 shifted views, 2x2 pooling."""
    out, h = {}, x.astype(np.float64)
    for block, (_, convs) in enumerate(PAPER_BLOCKS, start=1):
        for i in range(1, convs + 1):
            name = f"conv{block}_{i}"
            w, b = weights[name]
            hp = np.pad(h, ((0, 0), (1, 1), (1, 1), (0, 0)))
            y = sum(hp[:, di:di + h.shape[1], dj:dj + h.shape[2], :] @ w[di, dj].astype(np.float64)
                    for di in range(3) for dj in range(3)) + b
            h = out[name] = np.maximum(y, 0)
        n, hh, ww, c = h.shape
        win = h.reshape(n, hh // 2, 2, ww // 2, 2, c)
        h = out[f"pool{block}"] = win.max(axis=(2, 4)) if pooling == "max" else win.mean(axis=(2, 4))
    return out


@pytest.mark.parametrize("pooling", ["max", "avg"])
def test_forward_matches_numpy_reference(weights, pooling):
    x = np.random.default_rng(2).uniform(-100, 100, (1, 32, 32, 3)).astype(np.float32)
    net = vgg19.vgg19_features(aics.constant(x), weights, pooling=pooling)
    ref = _numpy_vgg19(x, weights, pooling)
    for name in ("conv1_1", "pool2", "conv4_2", "pool5"):
        scale = np.abs(ref[name]).max()
        np.testing.assert_allclose(net[name].numpy(), ref[name], rtol=1e-3, atol=1e-4 * scale,
                                   err_msg=name)


def test_lecture_program_session_inference_equals_eager(weights):
    """The lecture's step 4: assign the image to net['input'], sess.run(net['pool5'])."""
    x = np.random.default_rng(3).uniform(-100, 100, (1, 32, 32, 3)).astype(np.float32)
    with aics.Graph().as_default():
        net = vgg19.build_vgg19(weights, image_shape=(32, 32))
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(net["input"].assign(x))
            res = sess.run(net["pool5"])
        assert aics.trainable_variables() == [net["input"]]   # weights are constants
    ref = _numpy_vgg19(x, weights)["pool5"]
    np.testing.assert_allclose(res, ref, rtol=1e-3, atol=1e-4 * np.abs(ref).max())


def test_random_init_is_he_normal_and_keeps_activations_on_the_input_scale():
    w = vgg19.random_weights(seed=5)
    for name, (k, b) in w.items():
        fan_in = k.shape[0] * k.shape[1] * k.shape[2]
        assert abs(k.std() / np.sqrt(2.0 / fan_in) - 1) < 0.05, name
        assert abs(k.mean()) < 0.05 * np.sqrt(2.0 / fan_in) and not b.any(), name
    x = np.random.default_rng(6).uniform(-120, 120, (1, 32, 32, 3)).astype(np.float32)
    rms_in = np.sqrt(np.mean(x ** 2))
    for name, v in vgg19.vgg19_features(aics.constant(x), w).items():
        ratio = np.sqrt(np.mean(v.numpy() ** 2)) / rms_in
        assert 0.2 < ratio < 10, f"{name}: RMS / input RMS = {ratio:.3g}"
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(w.values(), vgg19.random_weights(5).values()))
    assert not np.array_equal(w["conv1_1"][0], vgg19.random_weights(6)["conv1_1"][0])


def test_preprocess_input_is_caffe_mode_and_deprocess_inverts_it():
    rgb = np.random.default_rng(7).integers(0, 256, (1, 4, 5, 3)).astype(np.float32)
    out = vgg19.preprocess_input(rgb.copy())
    expected = rgb[..., ::-1] - np.array([103.939, 116.779, 123.68], np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(vgg19.deprocess_image(out), rgb[0].astype(np.uint8))


# ---- weight files ---------------------------------------------------------------------------

def test_npz_round_trip_and_lecture_npy_with_trust(tmp_path, weights):
    path = vgg19.save_weights(tmp_path / "vgg19.npz", weights)
    loaded = vgg19.load_weights(path)
    assert list(loaded) == list(vgg19.CONV_LAYERS)
    assert all(np.array_equal(loaded[n][0], weights[n][0]) for n in vgg19.CONV_LAYERS)
    # The lecture's vgg19.npy: a pickled dict name -> [W, b] (lists, as in the original file).
    npy = tmp_path / "vgg19.npy"
    np.save(npy, {n: [w, b] for n, (w, b) in weights.items()}, allow_pickle=True)
    with pytest.raises(vgg19.WeightsError, match=r"vgg19\.npy.*pickle.*allow_pickle=True"):
        vgg19.load_weights(npy)
    trusted = vgg19.load_weights(npy, allow_pickle=True)
    assert np.array_equal(trusted["conv5_4"][1], weights["conv5_4"][1])


def test_wrong_shape_names_file_and_layer(tmp_path, weights):
    bad = dict(weights)
    bad["conv3_2"] = (weights["conv3_2"][0][:, :, :128], weights["conv3_2"][1])
    path = vgg19.save_weights(tmp_path / "bad.npz", bad)
    with pytest.raises(vgg19.WeightsError, match=r"bad\.npz.*'conv3_2' W has shape "
                                                 r"\(3, 3, 128, 256\), expected \(3, 3, 256, 256\)"):
        vgg19.load_weights(path)
    with pytest.raises(vgg19.WeightsError, match=r"'conv3_2' W has shape"):
        vgg19.build_vgg19(bad)


def test_missing_layer_names_the_layer(tmp_path, weights):
    partial = {n: p for n, p in weights.items() if n != "conv4_3"}
    path = vgg19.save_weights(tmp_path / "partial.npz", partial)
    with pytest.raises(vgg19.WeightsError, match=r"partial\.npz: layer 'conv4_3' is missing"):
        vgg19.load_weights(path)
    with pytest.raises(vgg19.WeightsError, match=r"layer 'fc6' is missing.*include_top=False"):
        vgg19.load_weights(vgg19.save_weights(tmp_path / "conv.npz", weights), include_top=True)
    npy = tmp_path / "small.npy"
    np.save(npy, {"conv1_1": list(weights["conv1_1"])}, allow_pickle=True)
    with pytest.raises(vgg19.WeightsError, match=r"small\.npy: layer 'conv1_2' is missing"):
        vgg19.load_weights(npy, allow_pickle=True)


def test_other_bad_files(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="nowhere.npz"):
        vgg19.load_weights(tmp_path / "nowhere.npz")
    (tmp_path / "w.h5").write_bytes(b"\x89HDF")
    with pytest.raises(vgg19.WeightsError, match=r"w\.h5: unknown weights format '\.h5'"):
        vgg19.load_weights(tmp_path / "w.h5")
    (tmp_path / "w.npz").write_bytes(b"not a zip")
    with pytest.raises(vgg19.WeightsError, match=r"w\.npz: not a readable \.npz"):
        vgg19.load_weights(tmp_path / "w.npz")
    np.save(tmp_path / "arr.npy", np.zeros(3, np.float32))
    with pytest.raises(vgg19.WeightsError, match=r"arr\.npy: expected a dict"):
        vgg19.load_weights(tmp_path / "arr.npy")
    (tmp_path / "net.mat").write_bytes(b"MATLAB 5.0")
    monkeypatch.setitem(sys.modules, "scipy", None)      # as on a machine without SciPy
    monkeypatch.setitem(sys.modules, "scipy.io", None)
    with pytest.raises(vgg19.WeightsError, match=r"net\.mat: reading MatConvNet .mat files needs SciPy"):
        vgg19.load_weights(tmp_path / "net.mat")


def test_matconvnet_layout_is_converted(tmp_path, monkeypatch, weights):
    """A stand-in for scipy.io.loadmat returning MatConvNet's nesting: layers{i} is a struct
    (name, type, weights = {W, b}); W is (width, height, in, out), b is (1, out)."""
    import types
    rec_dtype = [("name", object), ("type", object), ("weights", object)]

    def struct(name, type_, cell):
        rec = np.zeros((1, 1), dtype=rec_dtype)
        rec[0, 0] = (np.array([name]), np.array([type_]), cell)
        return rec

    layers = np.empty((1, 2 * len(vgg19.CONV_LAYERS)), dtype=object)
    for i, name in enumerate(vgg19.CONV_LAYERS):
        w, b = weights[name]
        cell = np.empty((1, 2), dtype=object)
        cell[0, 0], cell[0, 1] = np.transpose(w, (1, 0, 2, 3)), b[None, :]
        layers[0, 2 * i] = struct(name, "conv", cell)
        layers[0, 2 * i + 1] = struct(name.replace("conv", "relu"), "relu", np.empty((1, 0), object))
    fake_io = types.SimpleNamespace(loadmat=lambda path: {"layers": layers})
    monkeypatch.setitem(sys.modules, "scipy", types.SimpleNamespace(io=fake_io))
    monkeypatch.setitem(sys.modules, "scipy.io", fake_io)
    (tmp_path / "imagenet-vgg-verydeep-19.mat").write_bytes(b"")
    loaded = vgg19.load_weights(tmp_path / "imagenet-vgg-verydeep-19.mat")
    for name in vgg19.CONV_LAYERS:
        np.testing.assert_array_equal(loaded[name][0], weights[name][0], err_msg=name)
        np.testing.assert_array_equal(loaded[name][1], weights[name][1], err_msg=name)


def test_real_matconvnet_file_written_by_scipy(tmp_path, weights):
    """A .mat file in MatConvNet's layout written by SciPy itself (MATLAB 5 format): ``layers``
    is a 1xN cell of 1x1 structs (name, type, weights = 1x2 cell {W, b}); W is stored
    (width, height, in, out) and b as (1, out), as imagenet-vgg-verydeep-19.mat holds them."""
    scipy_io = pytest.importorskip("scipy.io")   # in the test extra: installed by make venv
    rec_dtype = [("name", object), ("type", object), ("weights", object)]
    layers = np.empty((1, 2 * len(vgg19.CONV_LAYERS)), dtype=object)
    for i, name in enumerate(vgg19.CONV_LAYERS):
        w, b = weights[name]
        cell = np.empty((1, 2), dtype=object)
        cell[0, 0], cell[0, 1] = np.transpose(w, (1, 0, 2, 3)), b[None, :]
        conv = np.zeros((1, 1), dtype=rec_dtype)
        conv[0, 0] = (name, "conv", cell)
        relu = np.zeros((1, 1), dtype=rec_dtype)
        relu[0, 0] = (name.replace("conv", "relu"), "relu", np.empty((1, 0), object))
        layers[0, 2 * i], layers[0, 2 * i + 1] = conv, relu
    path = tmp_path / "imagenet-vgg-verydeep-19.mat"
    scipy_io.savemat(path, {"layers": layers, "meta": {"inputs": "input"}})
    assert path.read_bytes()[:10] == b"MATLAB 5.0"
    loaded = vgg19.load_weights(path)
    assert sorted(loaded) == sorted(vgg19.CONV_LAYERS)
    for name in vgg19.CONV_LAYERS:
        np.testing.assert_array_equal(loaded[name][0], weights[name][0], err_msg=name)
        np.testing.assert_array_equal(loaded[name][1], weights[name][1], err_msg=name)
    # One layer's filters transposed the wrong way round: the error names the file and layer.
    w, b = weights["conv3_1"]
    bad = np.empty((1, 2), dtype=object)
    bad[0, 0], bad[0, 1] = np.transpose(w, (1, 0, 3, 2)), b[None, :]
    layers[0, 2 * vgg19.CONV_LAYERS.index("conv3_1")][0, 0] = ("conv3_1", "conv", bad)
    scipy_io.savemat(path, {"layers": layers})
    with pytest.raises(vgg19.WeightsError, match=r"imagenet-vgg-verydeep-19\.mat.*'conv3_1' W has shape"):
        vgg19.load_weights(path)


# ---- losses -----------------------------------------------------------------------------------

def _np_gram(f):
    f = f.reshape(-1, f.shape[-1]).astype(np.float64)
    return f.T @ f


@settings(max_examples=20, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), c=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_gram_and_style_loss_match_numpy(h, w, c, seed):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((1, h, w, c)).astype(np.float32)
    a = _np_gram(rng.standard_normal((1, h, w, c)))
    gram = style_transfer.gram_matrix(aics.constant(f)).numpy()
    brute = np.array([[sum(float(f[0, i, j, p]) * float(f[0, i, j, q]) for i in range(h) for j in range(w))
                       for q in range(c)] for p in range(c)])
    np.testing.assert_allclose(gram, brute, rtol=1e-5, atol=1e-5)
    loss = style_transfer.style_layer_loss(aics.constant(f), aics.constant(a.astype(np.float32)))
    scale = 4.0 * c ** 2 * (h * w) ** 2
    expected = np.sum((brute - a) ** 2) / scale
    # float32 Gram entries carry rounding of about 1e-7 of |G| + |A|: when G is close to A the
    # difference cancels, so the tolerance is relative to those magnitudes, not to the loss.
    rounding = 1e-6 * np.sum((np.abs(brute) + np.abs(a)) * (np.abs(brute - a) + 1e-6)) / scale
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4, atol=rounding)


def test_total_loss_matches_numpy_formulas():
    rng = np.random.default_rng(8)
    feats = {n: rng.standard_normal((1, 4, 4, 3)).astype(np.float32)
             for n in ("conv1_1", "conv2_1", "conv3_1", "conv4_1", "conv4_2", "conv5_1")}
    targets = {"content": {"conv4_2": rng.standard_normal((1, 4, 4, 3)).astype(np.float32)},
               "gram": {n: _np_gram(rng.standard_normal((1, 4, 4, 3))).astype(np.float32)
                        for n, _ in style_transfer.STYLE_LAYERS}}
    img = rng.standard_normal((1, 5, 6, 3)).astype(np.float32)
    total, content, style = style_transfer.total_loss(
        {k: aics.constant(v) for k, v in feats.items()}, targets, alpha=0.3, beta=7.0,
        tv_weight=0.5, image=aics.constant(img))
    ref_content = 0.5 * np.sum((feats["conv4_2"].astype(np.float64) - targets["content"]["conv4_2"]) ** 2)
    ref_style = sum(0.2 * np.sum((_np_gram(feats[n]) - targets["gram"][n]) ** 2) / (4 * 9 * 16 ** 2)
                    for n, _ in style_transfer.STYLE_LAYERS)
    ref_tv = np.abs(np.diff(img, axis=1)).sum() + np.abs(np.diff(img, axis=2)).sum()
    np.testing.assert_allclose(float(content), ref_content, rtol=1e-5)
    np.testing.assert_allclose(float(style), ref_style, rtol=1e-5)
    np.testing.assert_allclose(float(total), 0.3 * ref_content + 7.0 * ref_style + 0.5 * ref_tv, rtol=1e-5)


# ---- training: graph and eager --------------------------------------------------------------

def _images(size=16, seed=9):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-100, 100, (1, size, size, 3)).astype(np.float32) for _ in range(2)]


def test_session_and_eager_steps_give_equal_updates(weights):
    content, style = _images()
    kw = dict(weights=weights, alpha=1.0, beta=100.0, tv_weight=0.1, seed=3)
    graph = style_transfer.SessionStyleTransfer(content, style, **kw)
    eager = style_transfer.EagerStyleTransfer(content, style, **kw)
    np.testing.assert_array_equal(graph.image(), eager.image())
    np.testing.assert_allclose(graph.losses(), eager.losses(), rtol=1e-6)
    for _ in range(3):
        before = graph.image()
        graph.step()
        eager.step()
        assert not np.array_equal(graph.image(), before)
        np.testing.assert_allclose(graph.image(), eager.image(), rtol=1e-5, atol=1e-3)
    assert graph.cost() < graph.losses()[0] * 1.0001 and graph.steps_done == eager.steps_done == 3
    graph.close()


def test_first_adam_step_moves_each_pixel_by_lr_against_the_gradient(weights):
    """Adam's first step is lr * m/(sqrt(v)+eps) with m = 0.1 g, v = 0.001 g^2 and TF1's bias
    correction, i.e. about -lr * sign(g); the gradient's sign is checked by finite differences."""
    content, style = _images(8, seed=10)
    layers = dict(content_layers=(("conv1_1", 1.0),), style_layers=(("conv1_1", 1.0),))
    st_ = style_transfer.SessionStyleTransfer(content, style, weights, alpha=1.0, beta=10.0,
                                              learning_rate=2.0, seed=4, **layers)
    x0 = st_.image().copy()
    with st_.graph.as_default():
        grad = st_.sess.run(aics.gradients(st_.total_loss, [st_.net["input"]])[0])
    st_.step()
    step = st_.image() - x0
    big = np.abs(grad) > 1e-3 * np.abs(grad).max()
    np.testing.assert_allclose(step[big], -2.0 * np.sign(grad[big]), rtol=1e-3)
    # finite differences on a few pixels (float64 NumPy reference of this one-layer loss)
    w, b = weights["conv1_1"]
    p = np.maximum(_numpy_conv(content, w, b), 0)
    a = _np_gram(np.maximum(_numpy_conv(style, w, b), 0))

    def loss(x):
        f = np.maximum(_numpy_conv(x, w, b), 0)
        return 0.5 * np.sum((f - p) ** 2) + 10.0 * np.sum((_np_gram(f) - a) ** 2) / (4 * 64 ** 2 * 64 ** 2)

    x64 = x0.astype(np.float64)
    for idx in [(0, 0, 0, 0), (0, 3, 4, 1), (0, 7, 2, 2)]:
        e = np.zeros_like(x64)
        e[idx] = 1e-3
        numeric = (loss(x64 + e) - loss(x64 - e)) / 2e-3
        np.testing.assert_allclose(grad[idx], numeric, rtol=2e-2, atol=1e-3 * np.abs(grad).max())


def _numpy_conv(x, w, b):
    x = x.astype(np.float64)
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return sum(xp[:, i:i + x.shape[1], j:j + x.shape[2], :] @ w[i, j].astype(np.float64)
               for i in range(3) for j in range(3)) + b


def test_training_lowers_the_loss_and_reports_every_n_steps(weights):
    content, style = _images(16, seed=11)
    st_ = style_transfer.SessionStyleTransfer(content, style, weights, alpha=1.0, beta=100.0)
    start = st_.cost()
    seen = []
    st_.run(6, report_every=2, callback=lambda i, cost, img: seen.append((i, cost, img.shape)))
    assert [s[0] for s in seen] == [0, 2, 4] and all(s[2] == (1, 16, 16, 3) for s in seen)
    assert seen[-1][1] < seen[0][1] < start


def test_bad_images_are_rejected(weights):
    with pytest.raises(ValueError, match=r"content image must have shape \(1, H, W, 3\)"):
        style_transfer.SessionStyleTransfer(np.zeros((16, 16, 3)), np.zeros((1, 16, 16, 3)), weights)


def test_reset_with_new_weights_equals_a_fresh_run(weights):
    content, style = _images(16, seed=12)
    reused = style_transfer.SessionStyleTransfer(content, style, weights, alpha=1.0, beta=100.0)
    reused.run(2)
    reused.reset(alpha=0.1, beta=5.0)
    assert reused.steps_done == 0 and np.array_equal(reused.image(), reused.init)
    fresh = style_transfer.SessionStyleTransfer(content, style, weights, alpha=0.1, beta=5.0)
    reused.run(2)
    fresh.run(2)
    np.testing.assert_array_equal(reused.image(), fresh.image())
    np.testing.assert_allclose(reused.losses(), fresh.losses(), rtol=1e-6)
