"""Smaller API gaps found by running real programs (tools/tf_corpus.py, issue 10), each tested
against TensorFlow's documented behaviour or a brute-force reference."""
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aicslib as aics
import aicslib.compat.v1 as tf
from aicslib.grappler.graph_view import GraphView, NodeDef
from aicslib.grappler.grappler_item import GrapplerItem


@pytest.fixture
def graph_mode():
    tf.disable_v2_behavior()
    with tf.Graph().as_default() as g:
        yield g
    tf.enable_v2_behavior()


def test_reentering_a_named_scope_reuses_layer_names(graph_mode):
    # TF's _pure_variable_scope.__exit__ closes sub-scope counters: the second conv_net call
    # (reuse=True) names its layers conv2d, conv2d_1 again and finds their variables
    # (TensorFlow-Examples' tensorflow_dataset_api.py builds its test graph this way).
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])

    def conv_net(reuse):
        with tf.variable_scope("ConvNet", reuse=reuse):
            h = tf.layers.conv2d(x, 2, 3)
            return tf.layers.conv2d(h, 3, 3)

    a, b = conv_net(False), conv_net(True)
    assert sorted(v.name for v in tf.global_variables()) == [
        "ConvNet/conv2d/bias:0", "ConvNet/conv2d/kernel:0",
        "ConvNet/conv2d_1/bias:0", "ConvNet/conv2d_1/kernel:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        feed = {x: np.random.RandomState(0).rand(2, 8, 8, 1)}
        np.testing.assert_array_equal(*s.run([a, b], feed))
    with tf.variable_scope("ConvNet"):  # not reusing: a third call makes new layers... named again
        with pytest.raises(ValueError, match="already exists"):
            tf.layers.conv2d(x, 2, 3)


def test_random_normal_takes_a_tensor_stddev(graph_mode):
    # TensorFlow-Examples' gan.py: stddev=1. / tf.sqrt(shape[0] / 2.)
    tf.set_random_seed(1)
    r = tf.random_normal([2000], stddev=1.0 / tf.sqrt(200 / 2.0), mean=tf.constant(3.0))
    with tf.Session() as s:
        v = s.run(r)
    assert abs(v.std() - 0.1) < 0.01 and abs(v.mean() - 3.0) < 0.01


def test_arg_min_arg_max_are_tf1_spellings(graph_mode):
    m = np.array([[3, 1, 2], [0, 5, -1]], np.float32)
    with tf.Session() as s:
        lo, hi = s.run([tf.arg_min(m, 1), tf.arg_max(m, 0)])
    np.testing.assert_array_equal(lo, [1, 2])
    np.testing.assert_array_equal(hi, [0, 1, 0])
    assert lo.dtype == np.int64


def test_layers_conv2d_transpose_matches_tensorflow(graph_mode):
    # The same numbers as tests/test_corpus_gaps_keras.py's TF run (kernel arange/10, bias 0.5).
    from test_keras_layers_and_models import TF_CONVT_VALID
    img = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) - 9) / 10.0
    x = tf.placeholder(tf.float32, [None, 3, 3, 2])
    y = tf.layers.conv2d_transpose(x, 1, 3, strides=2,
                                   kernel_initializer=tf.constant_initializer(
                                       np.arange(18, dtype=np.float32).reshape(3, 3, 1, 2) / 10.0),
                                   bias_initializer=tf.constant_initializer(0.5))
    assert y.shape.as_list() == [None, 7, 7, 1]
    assert [v.name for v in tf.global_variables()] == ["conv2d_transpose/kernel:0", "conv2d_transpose/bias:0"]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(y, {x: img})[0, :, :, 0], TF_CONVT_VALID, atol=1e-5)


def test_softmax_cross_entropy_casts_float64_labels_like_tensorflow(graph_mode):
    # TF: "labels and logits must be of the same type" -> labels are cast to the logits' dtype.
    labels = tf.constant(np.eye(3)[[0, 2]])  # float64, as np.eye one-hot labels in tf.data
    logits = tf.constant([[2.0, 1.0, 0.0], [0.5, 0.5, 3.0]])
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf.Session() as s:
        got = s.run(loss)
    z = np.array([[2.0, 1.0, 0.0], [0.5, 0.5, 3.0]])
    ref = -np.log(np.exp(z[[0, 1], [0, 2]]) / np.exp(z).sum(1))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert got.dtype == np.float32


def test_summary_name_with_colon_is_cleaned_like_tensorflow(graph_mode, tmp_path):
    # tf.summary.histogram(var.name, var) in TensorFlow-Examples' tensorboard_advanced.py:
    # TF logs "Summary name W1:0 is illegal; using W1_0 instead." and goes on.
    w = tf.Variable(tf.ones([3]), name="W1")
    op = tf.summary.histogram(w.name, w)
    assert op.op.name.startswith("W1_0")


def test_gather_gradient_with_unknown_params_shape(graph_mode):
    # TensorFlow-Examples' dynamic_rnn.py gathers rows of tf.reshape(outputs, [-1, n]).
    p = tf.placeholder(tf.float32, [None, 4])
    idx = tf.placeholder(tf.int32, [None])
    rows = tf.gather(tf.reshape(p * 1.0, [-1, 2]), idx)
    g = tf.gradients(tf.reduce_sum(rows * rows), p)[0]
    pv = np.arange(12, dtype=np.float32).reshape(3, 4)
    with tf.Session() as s:
        got = s.run(g, {p: pv, idx: [0, 5, 0]})
    flat = pv.reshape(-1, 2)
    ref = np.zeros_like(flat)
    for i in [0, 5, 0]:
        ref[i] += 2 * flat[i]
    np.testing.assert_allclose(got, ref.reshape(3, 4))


def _random_item(rng, n):
    nodes = []
    for i in range(n):
        inputs = [f"n{j}" for j in rng.sample(range(i), min(i, rng.randint(0, 2)))]
        inputs += [f"^n{j}" for j in rng.sample(range(i), min(i, rng.randint(0, 1)))]
        nodes.append(NodeDef(f"n{i}", "Identity", inputs))
    return GrapplerItem(nodes, fetch=[f"n{n - 1}"])


def _index(view):
    cons = {k: sorted(c.name for c in v) for k, v in view._consumers.items() if v}
    ctrl = {k: sorted(c.name for c in v) for k, v in view._control_consumers.items() if v}
    counts = {n: view.num_output_consumers(n) for n in view.nodes}
    return cons, ctrl, counts, sorted(view.nodes)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 25))
def test_graph_view_incremental_edits_equal_a_full_rebuild(seed, n):
    # The consumer index is updated in place on every edit (a rebuild per edit was quadratic:
    # 113 s to plan a 3000-op LSTM graph); after any edits it must equal a fresh rebuild.
    rng = random.Random(seed)
    view = GraphView(_random_item(rng, n))
    for _ in range(6):
        names = [x.name for x in view.item.nodes]
        victim = rng.choice(names[:-1]) if len(names) > 1 else None
        what = rng.randint(0, 3)
        if victim is None:
            break
        if what == 0 and len(names) > 2:
            view.forward_output(victim, rng.choice([m for m in names if m != victim]))
        elif what == 1:
            node = view.node(rng.choice(names))
            node.input = [i for i in node.input if rng.random() < 0.5] + [f"^{victim}"]
        elif what == 2:
            old = view.node(victim)
            view.item.nodes[view.item.nodes.index(old)] = NodeDef(victim, "Identity", old.input[:1])
            view.remove([])
        else:
            for c in view.consumers(victim) + view.control_consumers(victim):
                c.input = [i for i in c.input if i.lstrip("^").split(":")[0] != victim]
            view.remove([victim])
        incremental = _index(view)
        view.rebuild()
        assert incremental == _index(view)


def test_checkpoint_manager_keeps_the_newest(tmp_path):
    v = aics.Variable([1.0, 2.0])
    ckpt = aics.train.Checkpoint(v=v)
    manager = aics.train.CheckpointManager(ckpt, directory=str(tmp_path / "ck"), max_to_keep=2)
    paths = []
    for k in range(3):
        v.assign([float(k), 0.0])
        paths.append(manager.save())
    assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert manager.checkpoints == paths[1:]
    assert aics.train.latest_checkpoint(str(tmp_path / "ck")) == paths[-1]
    assert not any(f.startswith("ckpt-1.") for f in os.listdir(tmp_path / "ck"))
    v.assign([9.0, 9.0])
    ckpt.restore(aics.train.latest_checkpoint(str(tmp_path / "ck")))
    np.testing.assert_array_equal(v.numpy(), [2.0, 0.0])
    with pytest.raises(ValueError, match="max_to_keep"):
        aics.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-80, 80, allow_nan=False), min_size=1, max_size=8))
def test_softplus_values_and_gradient(xs):
    x = aics.constant(np.array(xs, np.float32))
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.nn.softplus(x)
    g = tape.gradient(y, x).numpy()
    xv = np.array(xs, np.float64)
    np.testing.assert_allclose(y.numpy(), np.logaddexp(0.0, xv), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-xv)), rtol=1e-4, atol=1e-6)


def test_linalg_matmul_matvec_transpose():
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(aics.linalg.matmul(a, aics.linalg.matrix_transpose(a)).numpy(),
                               a @ a.transpose(0, 2, 1))
    np.testing.assert_allclose(aics.linalg.matvec(a[0], np.ones(3, np.float32)).numpy(), a[0].sum(1))
