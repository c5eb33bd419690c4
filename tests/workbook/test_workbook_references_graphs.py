"""The graph references of notebooks 14 and 15 agree with the library's own passes: the pruning
with the Session's (aicslib.visualize.needed_ops), the Conv2D+BiasAdd+Relu rewrite with grappler's
remapper (same fused nodes, and a Session gives identical results on both graphs)."""
import numpy as np
import pytest

import aicslib as aics
from aicslib.visualize import needed_ops
from workbook.references import graph_prune, remap

RC = aics.RewriterConfig
OFF = aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(disable_meta_optimizer=True)))
REMAP_ONLY = RC(constant_folding=RC.OFF, arithmetic_optimization=RC.OFF, elementwise_fusion=RC.OFF,
                dependency_optimization=RC.OFF, common_subgraph_elimination=RC.OFF)


def _net(extra_reader=False, fetch_bias=False):
    r = np.random.default_rng(0)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [2, 6, 6, 3], name="x")
        h, extra = x, []
        for k, c in enumerate((4, 5)):
            w = aics.constant(r.standard_normal((3, 3, h.shape.as_list()[-1], c)).astype(np.float32))
            conv = aics.nn.conv2d(h, w, 1, "SAME", name=f"conv{k}")
            bias = aics.nn.bias_add(conv, aics.constant(r.standard_normal(c).astype(np.float32)), name=f"bias{k}")
            h = aics.nn.relu(bias, name=f"relu{k}")
            if extra_reader and k == 1:
                extra.append(aics.reduce_max(conv, name="peek"))
        aics.add_n([aics.reduce_sum(h)] + extra, name="y")
    fetches = ["y:0"] + (["bias0:0"] if fetch_bias else [])
    return g, fetches, {"x:0": r.standard_normal((2, 6, 6, 3)).astype(np.float32)}


def _run(graph_def, fetches, feed):
    g = aics.Graph()
    with g.as_default():
        aics.import_graph_def(graph_def, name="")
    with aics.Session(graph=g, config=OFF) as sess:
        return sess.run(fetches, feed)


@pytest.mark.parametrize("extra_reader,fetch_bias", [(False, False), (True, False), (False, True)])
def test_remap_reference_fuses_what_grappler_fuses(extra_reader, fetch_bias):
    g, fetches, feed = _net(extra_reader, fetch_bias)
    gd = g.as_graph_def()
    mine = remap.rewrite_conv_bias_relu(gd, remap.match_conv_bias_relu(gd, fetches))
    library = aics.grappler.optimize(g, fetches, REMAP_ONLY)
    fused = sorted(n["name"] for n in mine["node"] if n["op"] == "_FusedConv2D")
    # (grappler also fuses a Conv2D + BiasAdd whose BiasAdd is fetched, without the Relu: not this pattern)
    assert fused == sorted(n["name"] for n in library["node"] if n["op"] == "_FusedConv2D"
                           and n["attr"]["fused_ops"]["list"]["s"] == ["BiasAdd", "Relu"])
    assert len(fused) == 2 - extra_reader - fetch_bias
    for a, b in zip(_run(gd, fetches, feed), _run(mine, fetches, feed)):
        np.testing.assert_array_equal(a, b)


def test_prune_reference_agrees_with_the_runtime():
    g, _, _ = _net(extra_reader=True)
    gd = g.as_graph_def()
    for fetches, feeds in ((["y:0"], []), (["relu0:0"], ["x:0"]), (["y:0"], ["relu0:0"]), (["peek"], ["conv1:0"]),
                           (["relu1:0"], ["relu1:0"])):
        needed = needed_ops(g, fetches, feeds={g.get_tensor_by_name(t): 0.0 for t in feeds})
        assert graph_prune.prune_graph_def(gd, fetches, feeds) == [n["name"] for n in gd["node"] if n["name"] in needed]
