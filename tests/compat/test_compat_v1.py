"""``aicslib.compat.v1`` as TF1's namespace: names, signatures, defaults and errors as TF documents them.

Expected values come from TensorFlow's docstrings (variable_scope, get_variable,
nn.dropout, train.exponential_decay, Dimension) or are recomputed with NumPy.
"""
import os

import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf


@pytest.fixture(autouse=True)
def _tf2_behavior_after():
    yield
    tf.enable_v2_behavior()


# ---------------------------------------------------------------- namespace and behaviour switches

def test_disable_v2_behavior_gives_graphs_sessions_and_dimensions():
    tf.disable_v2_behavior()
    assert not tf.executing_eagerly()
    x = tf.placeholder(tf.float32, [None, 784])
    assert x.shape[1].value == 784 and x.get_shape()[1] == 784
    # TF1: the unknown batch size is Dimension(None), printed '?', not None
    assert x.shape[0].value is None and repr(x.shape[0]) == "Dimension(None)"
    assert str(x.shape) == "(?, 784)"
    assert repr(x.shape[1]) == "Dimension(784)"
    assert tf.dimension_value(x.shape[1]) == 784
    tf.enable_v2_behavior()
    assert tf.executing_eagerly()
    assert type(aics.zeros([2, 3]).shape[1]) is int


def test_top_level_names_fall_through_to_aicslib():
    assert tf.reduce_max is not aics.reduce_max  # the TF1 signature wraps it
    assert tf.matmul is aics.matmul and tf.float32 is aics.float32 and tf.Graph is aics.Graph
    assert tf.errors.OutOfRangeError is aics.errors.OutOfRangeError


def test_missing_name_says_not_implemented_with_hint():
    with pytest.raises(AttributeError, match="not implemented in aicslib.*tf.contrib was removed"):
        tf.contrib
    with pytest.raises(AttributeError) as ei:
        aics.reduce_summ
    assert "not implemented in aicslib" in str(ei.value) and "'reduce_sum'" in str(ei.value)
    with pytest.raises(AttributeError) as ei:
        aics._unsupportd
    assert "_unsupported" not in str(ei.value)
    with pytest.raises(AttributeError, match="not implemented in aicslib"):
        tf.nn.ctc_loss
    assert not hasattr(tf, "no_such_thing_at_all")


def test_summary_resolves_lazily_or_says_missing():
    try:
        import aicslib.summary.v1 as summary_v1
    except ModuleNotFoundError:
        with pytest.raises(AttributeError, match="compat.v1.summary is not implemented"):
            tf.summary
    else:
        assert tf.summary is summary_v1


# ---------------------------------------------------------------- variable_scope / get_variable

def test_variable_scope_names_from_tf_docstring(graph):
    with tf.variable_scope("foo"):
        with tf.variable_scope("bar"):
            v = tf.get_variable("v", [1])
    assert v.name == "foo/bar/v:0"
    with tf.variable_scope("foo"):
        x = 1.0 + tf.get_variable("w", [1])
    assert x.op.name == "foo_1/add"  # the name scope is unique, the variable scope is not


def test_name_scope_does_not_prefix_get_variable(graph):
    with tf.name_scope("a"):
        v = tf.get_variable("v", [1])
        x = 1.0 + v
    assert v.name == "v:0" and x.op.name == "a/add"


def test_reuse_true_shares_and_reuse_false_rejects(graph):
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [1])
    with tf.variable_scope("foo", reuse=True):
        v1 = tf.get_variable("v", [1])
    assert v1 is v
    with pytest.raises(ValueError, match="Variable foo/v already exists, disallowed"):
        with tf.variable_scope("foo"):
            tf.get_variable("v", [1])
    with pytest.raises(ValueError, match="Variable foo/u does not exist"):
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("u", [1])
    with pytest.raises(ValueError, match="Trying to share variable foo/v, but specified shape"):
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("v", [2])


def test_auto_reuse_and_reuse_variables_and_inheritance(graph):
    def foo():
        with tf.variable_scope("foo", reuse=tf.AUTO_REUSE):
            return tf.get_variable("v", [1])
    assert foo() is foo()
    with tf.variable_scope("s") as scope:
        a = tf.get_variable("a", [2])
        scope.reuse_variables()
        assert tf.get_variable("a", [2]) is a
        with tf.variable_scope("inner", reuse=False):
            assert tf.get_variable_scope().reuse is True  # reuse cannot be turned off inside
    with tf.variable_scope(scope, reuse=True):  # re-entering a captured scope object
        assert tf.get_variable("a") is a
    assert len(tf.global_variables()) == 2


def test_default_name_is_made_unique_and_initializers_apply(graph):
    with tf.variable_scope(None, default_name="layer"):
        a = tf.get_variable("w", [2], initializer=tf.constant_initializer(3.0))
    with tf.variable_scope(None, default_name="layer", initializer=tf.ones_initializer()):
        b = tf.get_variable("w", [2])
        n = tf.get_variable("n", [], dtype=tf.int32, initializer=tf.zeros_initializer())
    c = tf.get_variable("c", initializer=np.array([1.0, 2.0], np.float32))  # shape from the value
    assert a.name == "layer/w:0" and b.name == "layer_1/w:0" and c.shape == (2,)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(s.run([a, b, c, n])[0], [3.0, 3.0])
        np.testing.assert_array_equal(s.run(b), [1.0, 1.0])
        np.testing.assert_array_equal(s.run(c), [1.0, 2.0])
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("nope")


def test_default_initializer_is_glorot_uniform(graph):
    w = tf.get_variable("w", [300, 200])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        value = s.run(w)
    limit = np.sqrt(6.0 / (300 + 200))
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.95 * limit
    assert abs(value.var() - limit ** 2 / 3) < 0.05 * limit ** 2 / 3


def test_regularizer_adds_to_collection(graph):
    with tf.variable_scope("r", regularizer=lambda v: 0.5 * tf.reduce_sum(tf.square(v))):
        tf.get_variable("w", initializer=np.array([1.0, 2.0], np.float32))
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(reg) == 1
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(tf.losses.get_regularization_loss()) == pytest.approx(2.5)


# ---------------------------------------------------------------- TF1 keyword aliases

def test_reduction_indices_and_keep_dims(graph):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as s:
        got = s.run([tf.reduce_sum(x, reduction_indices=1, keep_dims=True),
                     tf.reduce_mean(x, reduction_indices=[0]), tf.reduce_max(x, 1),
                     tf.argmax(x, dimension=1), tf.expand_dims(x, dim=0),
                     tf.nn.softmax(x, dim=0), tf.squeeze(x[None], squeeze_dims=[0])])
    np.testing.assert_array_equal(got[0], x.sum(1, keepdims=True))
    np.testing.assert_array_equal(got[1], x.mean(0))
    np.testing.assert_array_equal(got[2], x.max(1))
    np.testing.assert_array_equal(got[3], [2, 2])
    assert got[4].shape == (1, 2, 3) and got[6].shape == (2, 3)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(got[5], e / e.sum(0), rtol=1e-6)
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'|"
                                         "Cannot specify both 'axis' and 'reduction_indices'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


def test_dropout_second_positional_argument_is_keep_prob(graph):
    x = np.ones((200, 100), np.float32)
    tf.set_random_seed(1)
    kept = tf.nn.dropout(x, 0.8)
    by_rate = tf.nn.dropout(x, rate=0.2)
    keep_ph = tf.placeholder(tf.float32)
    fed = tf.nn.dropout(x, keep_prob=keep_ph)
    with tf.Session() as s:
        a, b = s.run([kept, by_rate])
        c = s.run(fed, {keep_ph: 0.25})
        d = s.run(fed, {keep_ph: 1.0})
    for out, keep in ((a, 0.8), (b, 0.8), (c, 0.25)):
        nz = out[out != 0]
        np.testing.assert_allclose(nz, 1.0 / keep, rtol=1e-6)
        assert abs(nz.size / out.size - keep) < 0.02  # 20000 draws: 4 standard deviations
    np.testing.assert_array_equal(d, x)
    with pytest.raises(ValueError, match="Cannot specify both 'rate' and 'keep_prob'"):
        tf.nn.dropout(x, 0.5, rate=0.5)
    with pytest.raises(ValueError, match="keep_prob must be"):
        tf.nn.dropout(x, 0.0)


def test_to_float_and_div(graph):
    with tf.Session() as s:
        a, b, c = s.run([tf.to_float(tf.constant([1, 2])), tf.div(7, 2), tf.div(7.0, 2.0)])
    assert a.dtype == np.float32 and b == 3 and c == 3.5


def test_softmax_cross_entropy_v1_needs_named_arguments(graph):
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(np.zeros((1, 2), np.float32), np.zeros((1, 2), np.float32))
    logits = np.array([[1.0, 2.0, 0.5]], np.float32)
    labels = np.array([[0.0, 1.0, 0.0]], np.float32)
    with tf.Session() as s:
        v = s.run(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    ref = -np.log(np.exp(2.0) / np.exp(logits).sum())
    np.testing.assert_allclose(v, [ref], rtol=1e-6)


# ---------------------------------------------------------------- op names as TF gives them

def test_operator_op_names_follow_tf(graph):
    a = tf.placeholder(tf.float32, name="a")
    b = tf.placeholder(tf.float32, name="b")
    ops = [a + b, a * b, a - b, a / b, -a, a + b, 2.0 * a, a // b, a % b, a ** b, tf.add(a, b)]
    names = [(t.op.name, t.op.type) for t in ops]
    assert names == [("add", "AddV2"), ("mul", "Mul"), ("sub", "Sub"), ("truediv", "RealDiv"),
                     ("Neg", "Neg"), ("add_1", "AddV2"), ("mul_1", "Mul"), ("floordiv", "FloorDiv"),
                     ("mod", "FloorMod"), ("pow", "Pow"), ("Add_2", "AddV2")]  # names are unique ignoring case, as TF
    m = tf.placeholder(tf.float32, [2, 2])
    assert (m @ m).op.name == "matmul"


# ---------------------------------------------------------------- the FloorMod bug (issue 10)

def test_scalar_fed_into_unknown_shape_placeholder_differentiates(graph):
    """Linear regression feeding one sample at a time: reduce_sum over a rank-0 value."""
    X, Y = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    W, b = tf.Variable(0.5), tf.Variable(0.1)
    loss = tf.reduce_sum(tf.pow(X * W + b - Y, 2)) / 2
    mean_loss = tf.reduce_mean(tf.square(X * W + b - Y))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    g_mean = tf.gradients(mean_loss, [W])[0]
    w, bb = 0.5, 0.1
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(g_mean, {X: 2.0, Y: 1.0}) == pytest.approx(2 * (2 * 0.5 + 0.1 - 1.0) * 2.0)
        for x, y in [(1.0, 2.0), (2.0, 3.0), (3.0, 2.5)]:
            s.run(train, {X: x, Y: y})
            err = x * w + bb - y
            w, bb = w - 0.01 * err * x, bb - 0.01 * err
        got = s.run([W, b])
    np.testing.assert_allclose(got, [w, bb], rtol=1e-5)


# ---------------------------------------------------------------- layers

def test_dense_layer_variables_and_values(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu)
    y2 = tf.layers.dense(x, 2, name="out")
    y3 = tf.layers.dense(x, 2, name="out", reuse=True)
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "out/kernel:0", "out/bias:0"]
    assert y.op.name == "dense/Relu"
    data = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        k, out, o2, o3 = s.run([tf.trainable_variables()[0], y, y2, y3], {x: data})
    np.testing.assert_allclose(out, np.maximum(data @ k, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(o2, o3)


def _conv_valid_nhwc(x, k, stride):
    n, h, w, _ = x.shape
    kh, kw, _, co = k.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_conv_pool_flatten_layers_match_numpy(graph):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 7, 7, 2)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 7, 7, 2])
    c = tf.layers.conv2d(x, 3, 3, strides=2, activation=tf.nn.relu,
                         bias_initializer=tf.constant_initializer(0.1))
    p = tf.layers.max_pooling2d(c, 2, 1)
    f = tf.layers.flatten(p)
    assert c.shape.as_list() == [None, 3, 3, 3] and f.shape.as_list() == [None, 12]
    kernel = [v for v in tf.global_variables() if v.name == "conv2d/kernel:0"][0]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        k, cv, fv = s.run([kernel, c, f], {x: data})
    ref = np.maximum(_conv_valid_nhwc(data.astype(np.float64), k, 2) + 0.1, 0)
    np.testing.assert_allclose(cv, ref, rtol=1e-5, atol=1e-5)
    pooled = np.zeros((2, 2, 2, 3))
    for i in range(2):
        for j in range(2):
            pooled[:, i, j, :] = ref[:, i:i + 2, j:j + 2, :].max(axis=(1, 2))
    np.testing.assert_allclose(fv, pooled.reshape(2, -1), rtol=1e-5, atol=1e-5)


def test_layers_dropout_respects_training_flag(graph):
    x = np.ones((100, 100), np.float32)
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.dropout(x, rate=0.5, training=training)
    off = tf.layers.dropout(x, rate=0.5)  # TF1 layers default: training=False
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y, {training: False}), x)
        np.testing.assert_array_equal(s.run(off), x)
        on = s.run(y, {training: True})
    assert set(np.unique(on)) <= {0.0, 2.0} and 0.45 < (on != 0).mean() < 0.55


def test_batch_normalization_layer_updates_moving_averages(graph):
    rng = np.random.default_rng(2)
    data = (rng.standard_normal((8, 3)) * [1, 2, 3] + [1, -1, 5]).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, momentum=0.9, training=training)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    mm = [v for v in tf.global_variables() if v.name == "batch_normalization/moving_mean:0"][0]
    mv = [v for v in tf.global_variables() if v.name == "batch_normalization/moving_variance:0"][0]
    assert mm not in tf.trainable_variables()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        out, _ = s.run([y, updates], {x: data, training: True})
        got_m, got_v = s.run([mm, mv])
        infer = s.run(y, {x: data, training: False})
    mean, var = data.mean(0), data.var(0)
    np.testing.assert_allclose(out, (data - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_m, 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_v, 0.9 + 0.1 * var, rtol=1e-5)
    np.testing.assert_allclose(infer, (data - got_m) / np.sqrt(got_v + 1e-3), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- train, losses

def test_exponential_decay_formula_from_docstring(graph):
    step = tf.placeholder(tf.int64, [])
    lr = tf.train.exponential_decay(0.1, step, 100, 0.96)
    lr_stair = tf.train.exponential_decay(0.1, step, 100, 0.96, staircase=True)
    pw = tf.train.piecewise_constant(step, [100, 110], [1.0, 0.5, 0.1])
    poly = tf.train.polynomial_decay(0.1, step, 100, end_learning_rate=0.01, power=2.0)
    with tf.Session() as s:
        for n in (0, 50, 100, 105, 250):
            a, b, c, d = s.run([lr, lr_stair, pw, poly], {step: n})
            assert a == pytest.approx(0.1 * 0.96 ** (n / 100), rel=1e-6)
            assert b == pytest.approx(0.1 * 0.96 ** (n // 100), rel=1e-6)
            assert c == (1.0 if n <= 100 else 0.5 if n <= 110 else 0.1)
            assert d == pytest.approx((0.1 - 0.01) * (1 - min(n, 100) / 100) ** 2 + 0.01, rel=1e-5)


def test_minimize_with_global_step(graph):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=gs)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(3):
            s.run(train)
        assert s.run(gs) == 3 and s.run(w) == pytest.approx(0.8 ** 3)


def test_losses_weighted_reductions(graph):
    labels = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    pred = np.array([[1.5, 2.0], [2.0, 6.0]], np.float32)
    w = np.array([[1.0, 0.0], [2.0, 1.0]], np.float32)
    onehot = np.array([[0, 1, 0], [1, 0, 0]], np.float32)
    logits = np.array([[1.0, 2.0, 3.0], [0.5, 0.1, -1.0]], np.float32)
    with tf.Session() as s:
        mse, mse_w, ce, sce = s.run([
            tf.losses.mean_squared_error(labels, pred),
            tf.losses.mean_squared_error(labels, pred, weights=w),
            tf.losses.softmax_cross_entropy(onehot, logits),
            tf.losses.sparse_softmax_cross_entropy(np.array([1, 0]), logits)])
    sq = (pred - labels) ** 2
    assert mse == pytest.approx(sq.mean())
    assert mse_w == pytest.approx((sq * w).sum() / np.count_nonzero(w))
    lsm = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    assert ce == pytest.approx(-(onehot * lsm).sum(1).mean(), rel=1e-6)
    assert sce == pytest.approx(ce, rel=1e-6)
    assert len(tf.losses.get_losses()) == 4


# ---------------------------------------------------------------- app, flags, gfile, logging, config

def test_flags_parse_like_absl():
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("batch_size", 100, "Batch size.", flag_values=fv)
    tf.flags.DEFINE_float("lr", 0.5, "Learning rate.", flag_values=fv)
    tf.flags.DEFINE_boolean("fake", False, "Fake data.", flag_values=fv)
    tf.flags.DEFINE_string("data_dir", "/tmp/data", "Where.", flag_values=fv)
    rest = fv(["prog", "--batch_size=32", "--lr", "0.1", "--fake", "pos", "--unknown=1"], known_only=True)
    assert (fv.batch_size, fv.lr, fv.fake, fv.data_dir) == (32, 0.1, True, "/tmp/data")
    assert rest == ["prog", "pos", "--unknown=1"]
    fv(["prog", "--nofake"])
    assert fv.fake is False
    with pytest.raises(tf.flags.Error, match="defined twice"):
        tf.flags.DEFINE_integer("lr", 1, "again", flag_values=fv)
    with pytest.raises(tf.flags.Error, match="Illegal value"):
        fv(["prog", "--batch_size=many"])


def test_app_run_calls_main_and_exits_with_its_value():
    seen = []
    with pytest.raises(SystemExit) as ei:
        tf.app.run(main=lambda argv: seen.append(argv) or 3, argv=["prog", "x"])
    assert ei.value.code == 3 and seen == [["prog", "x"]]


def test_gfile_both_spellings(tmp_path):
    d = os.path.join(tmp_path, "a", "b")
    tf.gfile.MakeDirs(d)
    assert tf.gfile.Exists(d) and tf.gfile.IsDirectory(d)
    with tf.gfile.GFile(os.path.join(d, "f.txt"), "w") as f:
        f.write("hello\nworld\n")
    with tf.gfile.Open(os.path.join(d, "f.txt")) as f:
        assert f.read() == "hello\nworld\n"
    assert tf.gfile.ListDirectory(d) == ["f.txt"] and tf.gfile.Glob(os.path.join(d, "*.txt"))
    with pytest.raises(aics.errors.NotFoundError):
        tf.gfile.GFile(os.path.join(d, "missing"))
    tf.gfile.DeleteRecursively(os.path.join(tmp_path, "a"))
    assert not tf.gfile.exists(d)


def test_logging_verbosity(caplog):
    import logging
    tf.logging.set_verbosity(tf.logging.INFO)
    assert tf.logging.get_verbosity() == logging.INFO
    tf.logging.get_logger().propagate = True
    try:
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            tf.logging.info("step %d", 7)
            tf.logging.debug("hidden")
        assert "step 7" in caplog.text and "hidden" not in caplog.text
    finally:
        tf.logging.get_logger().propagate = False
        tf.logging.set_verbosity(tf.logging.WARN)


def test_config_proto_accepts_gpu_options(graph):
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as s:
        assert s.run(tf.constant(2.0) * 3.0) == 6.0


def test_initialize_all_variables_alias(graph):
    v = tf.Variable(4.0)
    with tf.Session() as s:
        s.run(tf.initialize_all_variables())
        assert s.run(v) == 4.0


def test_layer_objects_share_weights_across_calls(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(2, activation=tf.nn.relu)
    a, b = layer(x), layer(x * 2.0)
    other = tf.layers.dense(x, 2)
    names = [v.name for v in tf.trainable_variables()]
    assert names == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    assert [v.name for v in layer.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
    data = np.abs(np.random.default_rng(3).standard_normal((4, 3))).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        k, bias, av, bv, ov = s.run(layer.trainable_variables + [a, b, other], {x: data})
    np.testing.assert_allclose(av, np.maximum(data @ k + bias, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bv, np.maximum(2 * data @ k + bias, 0), rtol=1e-5, atol=1e-6)
    assert ov.shape == (4, 2)
    pooled = tf.layers.MaxPooling2D(2, 2)(tf.placeholder(tf.float32, [None, 4, 4, 1]))
    assert pooled.shape.as_list() == [None, 2, 2, 1]


def test_v1_shape_dims_are_dimensions():
    tf.disable_v2_behavior()
    x = tf.placeholder(tf.float32, [None, 5])
    assert x.shape.dims[1].value == 5 and x.shape.dims[0] is None and x.shape.as_list() == [None, 5]
    assert int(x.get_shape()[-1]) == 5 and x.get_shape()[-1] * 2 == 10


def test_streaming_accuracy_and_mean_over_batches(graph):
    labels = tf.placeholder(tf.int64, [None])
    preds = tf.placeholder(tf.int64, [None])
    acc, acc_update = tf.metrics.accuracy(labels, preds)
    values = tf.placeholder(tf.float32, [None])
    mean, mean_update = tf.metrics.mean(values)
    batches = [([1, 2, 3], [1, 0, 3]), ([4, 4], [4, 4]), ([0], [1])]
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        assert s.run(acc) == 0.0
        for lab, pr in batches:
            s.run(acc_update, {labels: lab, preds: pr})
        all_lab = np.concatenate([b[0] for b in batches])
        all_pr = np.concatenate([b[1] for b in batches])
        assert s.run(acc) == pytest.approx(np.mean(all_lab == all_pr))
        for chunk in ([1.0, 2.0], [6.0]):
            last = s.run(mean_update, {values: chunk})
        assert last == pytest.approx(3.0) and s.run(mean) == pytest.approx(3.0)
        s.run(tf.local_variables_initializer())  # resets the running totals
        assert s.run(acc) == 0.0
    assert len(tf.local_variables()) == 4


def test_metrics_refuse_eager_mode():
    with pytest.raises(RuntimeError, match="not supported when eager execution is enabled"):
        tf.metrics.accuracy([1], [1])


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
