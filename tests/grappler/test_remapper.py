"""Remapper fusions (_FusedConv2D, _FusedMatMul, _FusedDepthwiseConv2dNative, batch norm folding):
the right patterns fuse, the wrong ones do not, and fused results equal unfused ones bit for bit."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.ops.batch_norm_ops import fused_batch_norm

from accel_switch import accel_on_off  # noqa: F401

RC = aics.RewriterConfig
OFF = aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(disable_meta_optimizer=True)))
ACTS = {"Relu": aics.nn.relu, "Relu6": aics.nn.relu6, "Elu": aics.nn.elu, None: None}


def ref_act(y, act):
    if act == "Relu":
        return np.maximum(y, 0)
    if act == "Relu6":
        return np.clip(y, 0, 6)
    if act == "Elu":
        return np.where(y > 0, y, np.expm1(np.minimum(y, 0)))
    return y


def conv_ref(x, w, stride=1):
    """SAME convolution by loops (NHWC, HWIO)."""
    n, h, wd, c = x.shape
    kh, kw, _, k = w.shape
    ho, wo = -(-h // stride), -(-wd // stride)
    ph = max((ho - 1) * stride + kh - h, 0)
    pw = max((wo - 1) * stride + kw - wd, 0)
    xp = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    out = np.zeros((n, ho, wo, k), np.float64)
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def run_both(g, fetch, feed=None):
    with aics.Session(graph=g) as s:
        on = s.run(fetch, feed)
    with aics.Session(graph=g, config=OFF) as s:
        off = s.run(fetch, feed)
    return on, off


def optimized_ops(g, fetch):
    return [n["op"] for n in aics.grappler.optimize(g, [fetch])["node"]]


def fused_node(g, fetch):
    return next(n for n in aics.grappler.optimize(g, [fetch])["node"] if n["op"].startswith("_Fused"))


@pytest.mark.usefixtures("accel_on_off")
@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["Relu", "Relu6", "Elu", None]), st.integers(1, 2), st.integers(1, 3),
       st.integers(0, 1000))
def test_conv_bias_act_fuses_and_matches_loops(act, stride, cin, seed):
    rng = np.random.default_rng(seed)
    xv = rng.standard_normal((2, 5, 6, cin)).astype(np.float32) * 3
    wv = rng.standard_normal((3, 3, cin, 4)).astype(np.float32)
    bv = rng.standard_normal(4).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [None, 5, 6, cin], name="x")
        y = aics.nn.bias_add(aics.nn.conv2d(x, aics.constant(wv), stride, "SAME"), aics.constant(bv))
        out = ACTS[act](y) if act else aics.identity(y)
    node = fused_node(g, out.name)
    assert node["op"] == "_FusedConv2D"
    assert node["attr"]["fused_ops"]["list"]["s"] == ["BiasAdd"] + ([act] if act else [])
    on, off = run_both(g, out, {x: xv})
    np.testing.assert_array_equal(on, off)
    np.testing.assert_allclose(on, ref_act(conv_ref(xv, wv, stride) + bv, act), rtol=1e-4, atol=1e-4)


@pytest.mark.usefixtures("accel_on_off")
@pytest.mark.parametrize("act", ["Relu", "Relu6", "Elu"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_matmul_bias_act_fuses(act, ta, tb):
    rng = np.random.default_rng(0)
    av = rng.standard_normal((4, 6) if ta else (6, 4)).astype(np.float32) * 2
    bv = rng.standard_normal((3, 4) if tb else (4, 3)).astype(np.float32)
    cv = rng.standard_normal(3).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        a = aics.placeholder(aics.float32, av.shape, name="a")
        out = ACTS[act](aics.nn.bias_add(aics.matmul(a, aics.constant(bv), transpose_a=ta, transpose_b=tb),
                                         aics.constant(cv)))
    node = fused_node(g, out.name)
    assert node["op"] == "_FusedMatMul" and node["name"] == out.op.name
    assert node["attr"]["transpose_a"]["b"] is ta
    on, off = run_both(g, out, {a: av})
    np.testing.assert_array_equal(on, off)
    ref = (av.T if ta else av).astype(np.float64) @ (bv.T if tb else bv) + cv
    np.testing.assert_allclose(on, ref_act(ref, act), rtol=1e-5, atol=1e-5)


@pytest.mark.usefixtures("accel_on_off")
def test_depthwise_bias_relu6_fuses():
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((1, 6, 6, 3)).astype(np.float32) * 4
    wv = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    bv = rng.standard_normal(6).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, xv.shape, name="x")
        out = aics.nn.relu6(aics.nn.bias_add(
            aics.nn.depthwise_conv2d(x, aics.constant(wv), [1, 1, 1, 1], "SAME"), aics.constant(bv)))
    assert fused_node(g, out.name)["op"] == "_FusedDepthwiseConv2dNative"
    on, off = run_both(g, out, {x: xv})
    np.testing.assert_array_equal(on, off)
    ref = np.concatenate([conv_ref(xv[..., c:c + 1], wv[:, :, c:c + 1, :]) for c in range(3)], axis=-1)
    np.testing.assert_allclose(on, np.clip(ref + bv, 0, 6), rtol=1e-4, atol=1e-4)


@pytest.mark.usefixtures("accel_on_off")
def test_inference_batch_norm_folds_into_the_convolution():
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((2, 4, 4, 3)).astype(np.float32)
    wv = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    scale, offset = rng.uniform(0.5, 2, 5).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    mean, var = rng.standard_normal(5).astype(np.float32), rng.uniform(0.1, 3, 5).astype(np.float32)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, xv.shape, name="x")
        y, _, _ = fused_batch_norm(aics.nn.conv2d(x, aics.constant(wv), 1, "SAME"), aics.constant(scale),
                                   aics.constant(offset), aics.constant(mean), aics.constant(var),
                                   epsilon=1e-3, is_training=False)
        out = aics.nn.relu(y)
    node = fused_node(g, out.name)
    assert node["op"] == "_FusedConv2D"
    assert node["attr"]["fused_ops"]["list"]["s"] == ["FusedBatchNorm", "Relu"]
    on, off = run_both(g, out, {x: xv})
    np.testing.assert_array_equal(on, off)
    ref = (conv_ref(xv, wv) - mean) / np.sqrt(var.astype(np.float64) + 1e-3) * scale + offset
    np.testing.assert_allclose(on, np.maximum(ref, 0), rtol=1e-4, atol=1e-4)


def test_training_batch_norm_is_not_folded():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [2, 4, 4, 3], name="x")
        y, _, _ = fused_batch_norm(aics.nn.conv2d(x, aics.ones([1, 1, 3, 2]), 1, "SAME"), aics.ones([2]),
                                   aics.zeros([2]), is_training=True)
        out = aics.nn.relu(y)
    assert "Conv2D" in optimized_ops(g, out.name)


def _conv_bias_relu(extra):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [1, 4, 4, 2], name="x")
        c = aics.nn.conv2d(x, aics.ones([3, 3, 2, 2]), 1, "SAME", name="conv")
        b = aics.nn.bias_add(c, aics.ones([2]), name="bias")
        r = aics.nn.relu(b, name="relu")
        fetch = extra(c, b, r)
    return g, x, fetch


@pytest.mark.usefixtures("accel_on_off")
@pytest.mark.parametrize("case", ["conv_read_twice", "bias_read_twice", "bias_fetched", "nchw"])
def test_no_fusion_when_an_intermediate_is_needed(case):
    if case == "conv_read_twice":
        g, x, fetch = _conv_bias_relu(lambda c, b, r: aics.add(r, c, name="out"))
        ops = optimized_ops(g, "out:0")
        assert "Conv2D" in ops and "_FusedConv2D" not in ops
    elif case == "bias_read_twice":
        g, x, fetch = _conv_bias_relu(lambda c, b, r: aics.add(r, b, name="out"))
        # Conv2D+BiasAdd still fuse (BiasAdd's output is the fused op's); the Relu stays apart.
        node = fused_node(g, "out:0")
        assert node["op"] == "_FusedConv2D" and node["attr"]["fused_ops"]["list"]["s"] == ["BiasAdd"]
    elif case == "bias_fetched":
        g, x, fetch = _conv_bias_relu(lambda c, b, r: [b, r])
        with aics.Session(graph=g) as s:
            got = s.run(["bias:0", "relu:0"], {x: np.ones((1, 4, 4, 2), np.float32)})
        ops = [n["op"] for n in aics.grappler.optimize(g, ["bias:0", "relu:0"])["node"]]
        assert "Relu" in ops
        np.testing.assert_array_equal(got[1], np.maximum(got[0], 0))
        return
    else:
        g = aics.Graph()
        with g.as_default():
            x = aics.placeholder(aics.float32, [1, 2, 4, 4], name="x")
            c = aics.nn.conv2d(x, aics.ones([3, 3, 2, 2]), 1, "SAME", data_format="NCHW")
            fetch = aics.nn.relu(aics.nn.bias_add(c, aics.ones([2]), data_format="NCHW"), name="out")
        assert "_FusedConv2D" not in optimized_ops(g, "out:0")
    xv = np.random.default_rng(0).standard_normal(x.shape.as_list()).astype(np.float32)
    on, off = run_both(g, fetch, {x: xv})
    np.testing.assert_array_equal(on, off)


@pytest.mark.usefixtures("accel_on_off")
def test_fused_op_rejects_bad_bias_with_the_node_name():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [2, 3], name="x")
        bias = aics.placeholder(aics.float32, [None], name="bias")
        out = aics.nn.relu(aics.nn.bias_add(aics.matmul(x, aics.ones([3, 4])), bias), name="act")
    with aics.Session(graph=g) as s:
        with pytest.raises(aics.errors.InvalidArgumentError, match="act"):
            s.run(out, {x: np.ones((2, 3), np.float32), bias: np.ones(5, np.float32)})


# ---------------------------------------------------------------- chapter-style networks

import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_fusion  # noqa: E402
import mnist_aicslib_mlp as amlp  # noqa: E402
import mnist_numpy_mlp as npmlp  # noqa: E402


@pytest.mark.parametrize("name", sorted(bench_fusion.NETWORKS))
def test_chapter_style_networks_identical_with_passes_on_and_off(name):
    g, out, feed = bench_fusion.NETWORKS[name](1, 16)
    on, off = run_both(g, out, feed)
    np.testing.assert_array_equal(on, off)
    ops = [n["op"] for n in aics.grappler.optimize(g, [out.name])["node"]]
    assert "_FusedConv2D" in ops


def test_mnist_mlp_training_identical_with_passes_on_and_off():
    init = npmlp.init_params(0)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((16, 784)).astype(np.float32), rng.integers(0, 10, 16).astype(np.int64))
               for _ in range(3)]
    results = []
    for config in (None, OFF):
        g = aics.Graph()
        with g.as_default():
            m = amlp.build_graph(init, 0.1, 0.9)
            init_op = aics.global_variables_initializer()
        with aics.Session(graph=g, config=config) as s:
            s.run(init_op)
            losses = [s.run([m["loss"], m["train_op"]], {m["x"]: xb, m["y"]: yb})[0] for xb, yb in batches]
            weights = s.run(list(m["params"].values()))
            assert len(weights) == 6
            results.append((losses, weights))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.usefixtures("accel_on_off")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the NaN input, on purpose
@pytest.mark.parametrize("stage", [("BiasAdd", "Relu"), ("FusedBatchNorm", "Relu6"), ("BiasAdd", "Elu")])
def test_blocked_output_stage_is_bit_identical_to_the_unfused_kernels(stage):
    # A 1x1 conv with 2*32*32*40 = 81920 outputs: the output stage runs in two blocks, with
    # per-channel vectors tiled to the block; NaN, -0.0 and infinities in the input included.
    rng = np.random.default_rng(7)
    xv = rng.standard_normal((2, 32, 32, 3)).astype(np.float32)
    xv.reshape(-1)[:8] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan, 1e-30, -1e-30]
    wv = rng.standard_normal((1, 1, 3, 40)).astype(np.float32)
    vecs = [aics.constant(v) for v in (rng.uniform(0.5, 2, 40), rng.standard_normal(40), rng.standard_normal(40),
                                        rng.uniform(0.1, 3, 40))]
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, xv.shape, name="x")
        conv = aics.nn.conv2d(x, aics.constant(wv), 1, "SAME")
        if stage[0] == "BiasAdd":
            y = aics.nn.bias_add(conv, aics.cast(vecs[1], aics.float32))
        else:
            y, _, _ = fused_batch_norm(conv, *[aics.cast(v, aics.float32) for v in vecs], epsilon=1e-3,
                                       is_training=False)
        out = {"Relu": aics.nn.relu, "Relu6": aics.nn.relu6, "Elu": aics.nn.elu}[stage[1]](y)
    node = fused_node(g, out.name)
    assert node["op"] == "_FusedConv2D" and node["attr"]["fused_ops"]["list"]["s"] == list(stage)
    on, off = run_both(g, out, {x: xv})
    assert on.size > 1 << 16 and np.isnan(on).any()
    assert np.array_equal(on.view(np.uint32), off.view(np.uint32))


@pytest.mark.usefixtures("accel_on_off")
@pytest.mark.parametrize("stage", [("BiasAdd", "Relu"), ("FusedBatchNorm", "Relu6")])
@pytest.mark.parametrize("hw", [28, 13])
def test_winograd_output_transform_with_the_stage_is_bit_identical_to_the_unfused_kernels(stage, hw):
    # A 3x3 conv with 64 channels takes Winograd (where its C transforms build, the fused stage is
    # applied inside the output transform); 13x13 crops tiles past the output.
    from aicslib.accel import conv_policy
    rng = np.random.default_rng(8)
    xv = rng.standard_normal((4, hw, hw, 64)).astype(np.float32)
    wv = (rng.standard_normal((3, 3, 64, 64)) / 10).astype(np.float32)
    assert conv_policy.choose_conv2d_algorithm(wv.shape, (1, 1), (1, 1), xv.shape) == "winograd" or \
        not conv_policy.native_winograd_rule()
    vecs = [rng.uniform(0.5, 2, 64), rng.standard_normal(64), rng.standard_normal(64), rng.uniform(0.1, 3, 64)]
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, xv.shape, name="x")
        conv = aics.nn.conv2d(x, aics.constant(wv), 1, "SAME")
        if stage[0] == "BiasAdd":
            y = aics.nn.bias_add(conv, aics.constant(vecs[1].astype(np.float32)))
        else:
            y, _, _ = fused_batch_norm(conv, *[aics.constant(v.astype(np.float32)) for v in vecs], epsilon=1e-3,
                                       is_training=False)
        out = {"Relu": aics.nn.relu, "Relu6": aics.nn.relu6}[stage[1]](y)
    assert fused_node(g, out.name)["op"] == "_FusedConv2D"
    on, off = run_both(g, out, {x: xv})
    assert np.array_equal(on.view(np.uint32), off.view(np.uint32))
    assert (on > 0).any() and (on == 0).any()


def test_output_stage_of_an_empty_output_is_empty():
    from aicslib.accel.fused_output_stage import apply_output_stage as fast
    from aicslib.kernels.fused_eigen_output_kernels import apply_output_stage as reference
    for apply_output_stage, shape in ((reference, (0, 4)), (reference, (2, 0, 3, 4)), (fast, (0, 4)),
                                      (fast, (2, 0, 3, 4))):
        y = apply_output_stage(np.zeros(shape, np.float32), ["FusedBatchNorm", "Relu6"],
                               [np.ones(4, np.float32)] * 4, 1e-3)
        assert y.shape == shape
