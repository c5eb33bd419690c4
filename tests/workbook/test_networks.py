"""workbook/networks.py: the networks the operator-fusion and graph-rewrite chapters share build,
run, are decided by the random stream they are given, and the remapper fuses them without changing
a result (what both chapters rely on)."""
import numpy as np
import pytest

import aicslib as aics
from workbook import networks


@pytest.mark.parametrize("name", list(networks.NETWORKS))
def test_network_runs_the_same_with_passes_off_and_remapper_only(name):
    g, out, feed = networks.build_network(name, 1, 16, np.random.default_rng(0))
    assert out.shape.as_list()[0] == 1
    with aics.Session(graph=g, config=networks.ALL_OFF) as off, \
            aics.Session(graph=g, config=networks.REMAP_ONLY) as remap:
        a, b = off.run(out, feed), remap.run(out, feed)
    assert np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)
    optimized = aics.grappler.optimize(g, ["out:0"], networks.REMAP_ONLY.graph_options.rewrite_options)
    fused = [n["op"] for n in optimized["node"]]
    assert any(op.startswith("_Fused") for op in fused), fused


def test_same_seed_same_network_other_seed_other_weights():
    def value(seed, feed_seed=0):
        g, out, feed = networks.build_network("VGG-like", 1, 16, np.random.default_rng(seed))
        x = np.random.default_rng(feed_seed).standard_normal((1, 16, 16, 3)).astype(np.float32)
        with aics.Session(graph=g, config=networks.ALL_OFF) as sess:
            return sess.run(out, {next(iter(feed)): x})
    np.testing.assert_array_equal(value(0), value(0))
    assert not np.array_equal(value(0), value(1))
