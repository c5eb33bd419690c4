"""Random ops: TF's op-seed / graph-seed semantics, in graphs and eagerly, plus distribution checks.

The seed rules tested are those documented for tf.compat.v1.set_random_seed
and tf.random.set_seed: (graph seed, op seed) fixes an op's sequence; a graph
seed alone makes a whole program reproducible while different ops differ;
an op seed alone works with a default graph seed; neither is nondeterministic.
"""
import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf1


@pytest.fixture(autouse=True)
def _clear_eager_seed():
    """The eager global seed is process state: do not leak it into other tests."""
    yield
    aics.random.set_seed(None)


def _graph_values(build, runs=1, graph_seed=None):
    """Builds a fresh graph with ``build()``, runs its fetch ``runs`` times in a new Session."""
    with aics.Graph().as_default():
        if graph_seed is not None:
            aics.set_random_seed(graph_seed)
        fetch = build()
        with aics.Session() as s:
            return [s.run(fetch) for _ in range(runs)]


class TestGraphSeeds:
    def test_graph_seed_reproducible_across_graphs(self):
        def build():
            return [aics.random_normal([3]), aics.random_uniform([3]), aics.truncated_normal([3])]
        first = _graph_values(build, runs=2, graph_seed=42)
        second = _graph_values(build, runs=2, graph_seed=42)
        for r1, r2 in zip(first, second):
            for x, y in zip(r1, r2):
                np.testing.assert_array_equal(x, y)

    def test_different_ops_differ_under_graph_seed(self):
        a, b = _graph_values(lambda: [aics.random_normal([4]), aics.random_normal([4])], graph_seed=1)[0]
        assert not np.array_equal(a, b)

    def test_different_graph_seeds_differ(self):
        a = _graph_values(lambda: aics.random_normal([4]), graph_seed=1)[0]
        b = _graph_values(lambda: aics.random_normal([4]), graph_seed=2)[0]
        assert not np.array_equal(a, b)

    def test_op_seed_alone_is_reproducible(self):
        a = _graph_values(lambda: aics.random_uniform([4], seed=7))[0]
        b = _graph_values(lambda: [aics.constant(1.0), aics.random_uniform([4], seed=7)])[0][1]
        np.testing.assert_array_equal(a, b)  # independent of the other ops in the graph

    def test_same_op_seed_same_values_in_one_graph(self):
        a, b = _graph_values(lambda: [aics.random_uniform([4], seed=3), aics.random_uniform([4], seed=3)])[0]
        np.testing.assert_array_equal(a, b)

    def test_op_seed_with_graph_seed(self):
        a = _graph_values(lambda: aics.random_uniform([4], seed=3), graph_seed=10)[0]
        b = _graph_values(lambda: aics.random_uniform([4], seed=3), graph_seed=11)[0]
        c = _graph_values(lambda: aics.random_uniform([4], seed=3), graph_seed=10)[0]
        assert not np.array_equal(a, b)
        np.testing.assert_array_equal(a, c)

    def test_repeated_runs_continue_the_sequence(self):
        r = _graph_values(lambda: aics.random_uniform([4], seed=5), runs=3)
        assert not np.array_equal(r[0], r[1]) and not np.array_equal(r[1], r[2])

    def test_new_session_restarts_the_sequence(self):
        with aics.Graph().as_default():
            t = aics.random_normal([3], seed=9)
            with aics.Session() as s1:
                first = [s1.run(t), s1.run(t)]
            with aics.Session() as s2:
                second = [s2.run(t), s2.run(t)]
        np.testing.assert_array_equal(first[0], second[0])
        np.testing.assert_array_equal(first[1], second[1])

    def test_no_seed_is_nondeterministic(self):
        a = _graph_values(lambda: aics.random_uniform([8]))[0]
        b = _graph_values(lambda: aics.random_uniform([8]))[0]
        assert not np.array_equal(a, b)

    def test_seed_attrs_on_the_node(self):
        with aics.Graph().as_default():
            t = aics.random_uniform([2], seed=4)
            op = t.op.inputs[0].op.inputs[0].op  # rnd * range + lo: dig out the RandomUniform
            assert op.type == "RandomUniform"
            assert (op.get_attr("seed"), op.get_attr("seed2")) == (87654321, 4)


class TestEagerSeeds:
    def test_set_seed_replays_the_program(self):
        def program():
            return [aics.random_normal([3]).numpy(), aics.random_normal([3]).numpy(),
                    aics.random_uniform([2], seed=5).numpy(), aics.random_uniform([2], seed=5).numpy()]
        aics.random.set_seed(1234)
        first = program()
        aics.random.set_seed(1234)
        second = program()
        for x, y in zip(first, second):
            np.testing.assert_array_equal(x, y)
        # within one program, successive calls differ (even with the same op seed)
        assert not np.array_equal(first[0], first[1])
        assert not np.array_equal(first[2], first[3])

    def test_different_global_seeds_differ(self):
        aics.random.set_seed(1)
        a = aics.random_normal([4]).numpy()
        aics.random.set_seed(2)
        b = aics.random_normal([4]).numpy()
        assert not np.array_equal(a, b)

    def test_shuffle_is_a_permutation(self):
        aics.random.set_seed(0)
        x = np.arange(20, dtype=np.int32)
        y = aics.random_shuffle(x).numpy()
        assert sorted(y.tolist()) == list(range(20))
        assert not np.array_equal(x, y)


class TestDistributions:
    N = 20000

    def test_uniform_range_and_moments(self):
        x = aics.random_uniform([self.N], minval=-2.0, maxval=3.0, seed=1).numpy()
        assert x.dtype == np.float32 and x.shape == (self.N,)
        assert x.min() >= -2.0 and x.max() < 3.0
        # mean 0.5, variance 25/12; 6-sigma tolerances
        assert abs(x.mean() - 0.5) < 6 * np.sqrt(25 / 12 / self.N)
        assert abs(x.var() - 25 / 12) < 0.15

    def test_normal_moments(self):
        x = aics.random_normal([self.N], mean=1.0, stddev=2.0, dtype=aics.float64, seed=2).numpy()
        assert x.dtype == np.float64
        assert abs(x.mean() - 1.0) < 6 * 2.0 / np.sqrt(self.N)
        assert abs(x.std() - 2.0) < 0.1

    def test_truncated_normal_bounds(self):
        x = aics.truncated_normal([self.N], mean=0.0, stddev=1.5, seed=3).numpy()
        assert np.all(np.abs(x) <= 2 * 1.5 + 1e-6)
        # std of a unit normal truncated at +-2 is about 0.8796
        assert abs(x.std() / 1.5 - 0.8796) < 0.03

    def test_uniform_int(self):
        x = aics.random_uniform([self.N], minval=-3, maxval=4, dtype=aics.int32, seed=4).numpy()
        assert x.dtype == np.int32
        assert set(np.unique(x).tolist()) == set(range(-3, 4))
        with pytest.raises(ValueError, match="maxval"):
            aics.random_uniform([2], dtype=aics.int32)

    def test_static_shape_in_graph(self):
        with aics.Graph().as_default():
            assert aics.random_normal([2, 5]).shape.as_list() == [2, 5]
            assert aics.random_uniform([3], dtype=aics.float16).dtype == aics.float16


def test_random_normal_takes_a_tensor_stddev(graph_mode):
    # TensorFlow-Examples' gan.py: stddev=1. / tf1.sqrt(shape[0] / 2.)
    tf1.set_random_seed(1)
    r = tf1.random_normal([2000], stddev=1.0 / tf1.sqrt(200 / 2.0), mean=tf1.constant(3.0))
    with tf1.Session() as s:
        v = s.run(r)
    assert abs(v.std() - 0.1) < 0.01 and abs(v.mean() - 3.0) < 0.01
