"""TF2 API surface: aics.math, linspace, aics.config, aics.Module, Keras optimizers and
initializers, image.sample_distorted_bounding_box, keras.applications.*.preprocess_input.

References: NumPy re-implementations of the documented formulas (Keras optimizer update
rules, TF's rounding), and the examples in TensorFlow's docstrings.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import aicslib as tf


# ---------------------------------------------------------------- tf.math

_floats = hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                     elements=st.floats(-20, 20, width=32))


@given(_floats)
def test_math_reductions_match_numpy(x):
    x64 = x.astype(np.float64)
    m = x64.max()
    np.testing.assert_allclose(tf.math.reduce_logsumexp(x).numpy(), m + np.log(np.exp(x64 - m).sum()),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tf.math.reduce_variance(x, axis=0).numpy(), x64.var(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(tf.math.reduce_std(x).numpy(), x64.std(), rtol=1e-4, atol=1e-3)
    assert tf.math.count_nonzero(x).numpy() == np.count_nonzero(x)
    np.testing.assert_array_equal(tf.math.reduce_any(x > 0, axis=0).numpy(), (x > 0).any(0))
    np.testing.assert_array_equal(tf.math.reduce_all(x > 0).numpy(), (x > 0).all())


@given(_floats)
def test_rounding_functions_match_numpy(x):
    np.testing.assert_array_equal(tf.math.floor(x).numpy(), np.floor(x))
    np.testing.assert_array_equal(tf.math.ceil(x).numpy(), np.ceil(x))
    np.testing.assert_array_equal(tf.math.round(x).numpy(), np.round(x))  # both: half to even


def test_math_docstring_examples():
    # tf.math.round docstring: [0.9, 2.5, 2.3, 1.5, -4.5] -> [1.0, 2.0, 2.0, 2.0, -4.0]
    np.testing.assert_array_equal(tf.math.round(tf.constant([0.9, 2.5, 2.3, 1.5, -4.5])).numpy(),
                                  [1.0, 2.0, 2.0, 2.0, -4.0])
    # tf.math.count_nonzero docstring: [[0, 1, 0], [1, 1, 0]] -> 3, axis 0 -> [1, 2, 0]
    x = tf.constant([[0, 1, 0], [1, 1, 0]])
    assert tf.math.count_nonzero(x).numpy() == 3
    np.testing.assert_array_equal(tf.math.count_nonzero(x, 0).numpy(), [1, 2, 0])
    # tf.linspace docstring: tf.linspace(10.0, 12.0, 3) -> [10.0, 11.0, 12.0]
    np.testing.assert_array_equal(tf.linspace(10.0, 12.0, 3, name="linspace").numpy(), [10.0, 11.0, 12.0])
    np.testing.assert_allclose(tf.linspace(-1.0, 1.0, 5).numpy(), np.linspace(-1, 1, 5))
    np.testing.assert_allclose(tf.math.divide_no_nan(tf.constant([3.0, 1.0]), tf.constant([0.0, 2.0])).numpy(),
                               [0.0, 0.5])
    np.testing.assert_allclose(tf.math.softplus(tf.constant([-100.0, 0.0, 100.0])).numpy(),
                               [0.0, np.log(2.0), 100.0], atol=1e-6)
    np.testing.assert_array_equal(tf.math.in_top_k(tf.constant([0, 2]),
                                                   tf.constant([[0.9, 0.1, 0.5], [0.9, 0.1, 0.5]]), 1).numpy(),
                                  [True, False])
    assert tf.math.reduce_sum is tf.reduce_sum and tf.math.log is tf.log


def test_math_functions_differentiate():
    x = tf.Variable([0.3, -1.2, 2.0])
    with tf.GradientTape() as tape:
        y = tf.math.reduce_logsumexp(x)
    g = tape.gradient(y, x).numpy()
    e = np.exp([0.3, -1.2, 2.0])
    np.testing.assert_allclose(g, e / e.sum(), rtol=1e-5)


# ---------------------------------------------------------------- tf.config

def test_config_lists_the_cpu_and_no_gpu():
    cpus = tf.config.list_physical_devices("CPU")
    assert [d.name for d in cpus] == ["/physical_device:CPU:0"] and cpus[0].device_type == "CPU"
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.experimental.list_physical_devices("GPU") == []
    assert [d.name for d in tf.config.list_logical_devices()] == ["/device:CPU:0"]
    tf.config.set_visible_devices([], "GPU")  # the idiom for "CPU only"
    assert tf.config.get_visible_devices() == cpus
    with pytest.raises(ValueError, match="CPU device must be visible"):
        tf.config.set_visible_devices([], "CPU")
    tf.config.threading.set_intra_op_parallelism_threads(2)
    assert tf.config.threading.get_intra_op_parallelism_threads() == 2
    tf.config.threading.set_intra_op_parallelism_threads(0)


# ---------------------------------------------------------------- tf.Module

class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class Sequential(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.layers = [Dense(3, 2), Dense(2, 1)]
        self.table = {"scale": tf.Variable(2.0, trainable=False)}

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.table["scale"]


def test_tf2_namespaces_are_modules_and_losses_metrics_are_keras():
    import types
    for name in ("nn", "image", "io", "train", "data", "keras", "mixed_precision", "losses", "metrics"):
        assert isinstance(getattr(tf, name), types.ModuleType), name
    # TF2's tf.losses / tf.metrics are tf.keras.losses / tf.keras.metrics (TF 1.15's: compat.v1)
    assert tf.losses is tf.keras.losses and tf.metrics is tf.keras.metrics
    mse = tf.losses.MeanSquaredError()(np.zeros((2, 3), np.float32), np.full((2, 3), 2.0, np.float32))
    assert float(mse.numpy()) == 4.0
    assert tf.losses.mean_squared_error(np.zeros((2, 3)), np.ones((2, 3))).shape == (2,)   # per sample


def test_module_tracks_variables_and_submodules():
    m = Sequential()
    assert m.name == "sequential" and Dense(1, 1).name == "dense"
    assert len(m.submodules) == 2 and all(isinstance(s, Dense) for s in m.submodules)
    assert len(m.variables) == 5 and len(m.trainable_variables) == 4
    assert len(m.non_trainable_variables) == 1
    shared = Dense(1, 1)
    holder = tf.Module()
    holder.a, holder.b = shared, [shared, shared.w]
    assert len(holder.variables) == 2  # each variable once
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    np.testing.assert_allclose(m(x).numpy(), [[2.0 * 2 * 6.0]])
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="bad name")


def test_module_gradient_tape_over_trainable_variables():
    m = Dense(2, 1)
    x = np.array([[1.0, 2.0]], np.float32)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(m(x))
    grads = tape.gradient(y, m.trainable_variables)
    by_name = dict(zip([v.name for v in m.trainable_variables], grads))
    np.testing.assert_allclose(by_name["w:0"].numpy(), [[1.0], [2.0]])
    np.testing.assert_allclose(by_name["b:0"].numpy(), [1.0])


# ---------------------------------------------------------------- Keras optimizers

def _quadratic_run(opt, steps=5):
    w = tf.Variable([1.0, -2.0, 3.0])
    target = np.array([0.5, 0.5, 0.5], np.float32)
    for _ in range(steps):
        opt.minimize(lambda: tf.reduce_sum(tf.square(w - target)), var_list=[w])
    return w.numpy(), target


def _reference(update, steps=5):
    w = np.array([1.0, -2.0, 3.0])
    target = np.full(3, 0.5)
    state = {}
    for t in range(1, steps + 1):
        g = 2 * (w - target)
        w = update(w, g, t, state)
    return w


def test_sgd_plain_momentum_nesterov():
    def sgd(lr, m=0.0, nesterov=False):
        def upd(w, g, t, s):
            v = s.get("v", np.zeros_like(w))
            v = m * v - lr * g
            s["v"] = v
            return w + (m * v - lr * g if nesterov else v)
        return upd
    for kwargs in ({}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}):
        got, _ = _quadratic_run(tf.keras.optimizers.SGD(0.1, **kwargs))
        np.testing.assert_allclose(got, _reference(sgd(0.1, kwargs.get("momentum", 0.0),
                                                       kwargs.get("nesterov", False))), rtol=1e-5)


def test_adam_rmsprop_adagrad_keras_rules():
    def adam(lr=0.1, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
        def upd(w, g, t, s):
            m = s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
            v = s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
            vh = s["vh"] = np.maximum(s.get("vh", 0), v) if amsgrad else v
            return w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(vh) + eps)
        return upd

    def rmsprop(lr=0.1, rho=0.9, mom=0.0, eps=1e-7, centered=False):
        def upd(w, g, t, s):
            ms = s["ms"] = rho * s.get("ms", 0) + (1 - rho) * g * g
            denom = ms
            if centered:
                mg = s["mg"] = rho * s.get("mg", 0) + (1 - rho) * g
                denom = ms - mg * mg
            if mom:
                m = s["m"] = mom * s.get("m", 0) + lr * g / np.sqrt(denom + eps)
                return w - m
            return w - lr * g / (np.sqrt(denom) + eps)
        return upd

    def adagrad(lr=0.1, init=0.1, eps=1e-7):
        def upd(w, g, t, s):
            acc = s["acc"] = s.get("acc", init) + g * g
            return w - lr * g / (np.sqrt(acc) + eps)
        return upd

    cases = [(tf.keras.optimizers.Adam(0.1), adam()),
             (tf.keras.optimizers.Adam(0.1, amsgrad=True), adam(amsgrad=True)),
             (tf.keras.optimizers.RMSprop(0.1), rmsprop()),
             (tf.keras.optimizers.RMSprop(0.1, momentum=0.5, centered=True), rmsprop(mom=0.5, centered=True)),
             (tf.keras.optimizers.Adagrad(0.1), adagrad())]
    for opt, ref in cases:
        got, _ = _quadratic_run(opt)
        np.testing.assert_allclose(got, _reference(ref), rtol=2e-5, atol=1e-6, err_msg=repr(opt))
        assert opt.iterations.numpy() == 5


def test_optimizer_api_details():
    assert tf.optimizers.Adam is tf.keras.optimizers.Adam
    opt = tf.keras.optimizers.SGD()
    assert opt.learning_rate == 0.01 and tf.keras.optimizers.Adam().get_config()["epsilon"] == 1e-7
    opt.learning_rate = 0.5
    w, unused = tf.Variable(2.0), tf.Variable(1.0)
    with tf.GradientTape() as tape:
        loss = w * w
    opt.minimize(loss, [w, unused], tape=tape)  # unused has no gradient: skipped
    assert w.numpy() == pytest.approx(2.0 - 0.5 * 4.0) and unused.numpy() == 1.0
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(w * w, [w])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, w)])
    with pytest.raises(TypeError, match="Unexpected keyword argument"):
        tf.keras.optimizers.SGD(0.1, bogus=1)
    assert isinstance(tf.keras.optimizers.get("adam"), tf.keras.optimizers.Adam)


def test_learning_rate_schedule_sees_iterations():
    sched = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    opt = tf.keras.optimizers.SGD(sched)
    w = tf.Variable(0.0)
    for _ in range(3):
        opt.apply_gradients([(tf.constant(1.0), w)])
    assert w.numpy() == pytest.approx(-(0.1 + 0.05 + 0.025), rel=1e-6)


def test_optimizers_work_in_a_graph():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.Adam(0.1)
        loss = tf.reduce_sum(w * w)
        train = opt.minimize(loss, [w])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(train)
            s.run(train)
            got, it = s.run([w, opt.iterations])
    assert it == 2
    w_ref = np.array([1.0, 2.0])
    m = v = 0
    for t in (1, 2):
        g = 2 * w_ref
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w_ref = w_ref - 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(got, w_ref, rtol=1e-5)


# ---------------------------------------------------------------- initializers

def test_keras_initializer_defaults_and_statistics():
    tf.random.set_seed(0)
    n = tf.keras.initializers.RandomNormal()((200, 200)).numpy()
    assert abs(n.std() - 0.05) < 0.003 and abs(n.mean()) < 0.002
    u = tf.initializers.RandomUniform()((200, 200)).numpy()
    assert u.min() >= -0.05 and u.max() <= 0.05
    g = tf.initializers.GlorotUniform(seed=1)((300, 100)).numpy()
    limit = np.sqrt(6 / 400)
    assert np.abs(g).max() <= limit and abs(g.var() - limit ** 2 / 3) < 0.1 * limit ** 2 / 3
    he = tf.keras.initializers.he_normal()((400, 300)).numpy()
    assert abs(he.std() - np.sqrt(2 / 400)) < 0.1 * np.sqrt(2 / 400)
    np.testing.assert_array_equal(tf.initializers.Identity(2.0)((2, 3)).numpy(), 2 * np.eye(2, 3))
    assert isinstance(tf.keras.initializers.get("glorot_uniform"), tf.initializers.GlorotUniform)
    np.testing.assert_array_equal(tf.initializers.Constant(3.0)((2,)).numpy(), [3.0, 3.0])


# ---------------------------------------------------------------- image.sample_distorted_bounding_box

@given(st.integers(0, 10_000), st.floats(0.1, 0.9))
def test_sample_distorted_bounding_box_contract(seed, min_covered):
    box = np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32)
    begin, size, bbox = tf.image.sample_distorted_bounding_box(
        [60, 80, 3], box, seed=seed, min_object_covered=min_covered, area_range=(0.1, 1.0))
    (y, x, z), (h, w, c) = begin.numpy(), size.numpy()
    assert z == 0 and c == -1 and 0 <= y and 0 <= x and y + h <= 60 and x + w <= 80
    np.testing.assert_allclose(bbox.numpy(), [[[y / 60, x / 80, (y + h) / 60, (x + w) / 80]]], rtol=1e-6)
    whole = (y, x, h, w) == (0, 0, 60, 80)
    by0, bx0, by1, bx1 = 6, 16, 36, 56
    inter = max(0, min(y + h, by1) - max(y, by0)) * max(0, min(x + w, bx1) - max(x, bx0))
    assert whole or inter / ((by1 - by0) * (bx1 - bx0)) >= min_covered - 1e-6
    if not whole:
        assert 0.1 * 60 * 80 <= h * w and 0.75 * h - 1 <= w <= 1.33 * h + 1


def test_sample_distorted_bounding_box_is_repeatable_in_a_seeded_graph():
    def draw():
        with tf.Graph().as_default():
            tf.compat.v1.set_random_seed(7)
            b, s, _ = tf.compat.v1.image.sample_distorted_bounding_box(
                [60, 80, 3], np.array([[[0.1, 0.2, 0.6, 0.7]]], np.float32), min_object_covered=0.3)
            with tf.Session() as sess:
                return [sess.run([b, s]) for _ in range(3)]
    first, second = draw(), draw()
    np.testing.assert_array_equal(np.array(first), np.array(second))


def test_sample_distorted_bounding_box_errors_and_whole_image():
    no_boxes = np.zeros((1, 0, 4), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes provided"):
        tf.image.sample_distorted_bounding_box([10, 10, 3], no_boxes)
    b, s, _ = tf.image.sample_distorted_bounding_box([10, 10, 3], no_boxes, seed=1,
                                                     use_image_if_no_bounding_boxes=True,
                                                     area_range=(1.0, 1.0), aspect_ratio_range=(1.0, 1.0))
    np.testing.assert_array_equal(b.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(s.numpy(), [10, 10, -1])


# ---------------------------------------------------------------- keras.applications preprocess_input

def test_preprocess_input_aliases_per_model():
    x = np.array([[[[10.0, 20.0, 30.0]]]])
    apps = tf.keras.applications
    caffe = [30 - 103.939, 20 - 116.779, 10 - 123.68]  # BGR, ImageNet means subtracted
    for mod in (apps.vgg16, apps.vgg19, apps.resnet50, apps.resnet):
        np.testing.assert_allclose(mod.preprocess_input(x.copy())[0, 0, 0], caffe, rtol=1e-6)
    for mod in (apps.mobilenet, apps.mobilenet_v2, apps.inception_v3, apps.xception):
        np.testing.assert_allclose(mod.preprocess_input(x.copy())[0, 0, 0], x[0, 0, 0] / 127.5 - 1.0)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    np.testing.assert_allclose(apps.densenet.preprocess_input(x.copy())[0, 0, 0],
                               (x[0, 0, 0] / 255.0 - mean) / std, rtol=1e-6)


# ---------------------------------------------------------------- nn additions: lrn, embedding_lookup

def _lrn_reference(x, r, bias, alpha, beta):
    out = np.zeros_like(x)
    for c in range(x.shape[-1]):
        s = (x[..., max(0, c - r):c + r + 1] ** 2).sum(-1)
        out[..., c] = x[..., c] / (bias + alpha * s) ** beta
    return out


@given(hnp.arrays(np.float64, (1, 2, 2, 6), elements=st.floats(-2, 2)), st.integers(0, 3))
def test_lrn_matches_its_definition_and_differentiates(x, r):
    got = tf.nn.lrn(x, depth_radius=r, bias=1.0, alpha=0.3, beta=0.75).numpy()
    np.testing.assert_allclose(got, _lrn_reference(x, r, 1.0, 0.3, 0.75), rtol=1e-10, atol=1e-12)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.local_response_normalization(v, r, 1.0, 0.3, 0.75) * np.arange(6.0))
    g = tape.gradient(y, v).numpy()
    i = (0, 1, 0, 2)
    xp, xm = x.copy(), x.copy()
    xp[i] += 1e-6
    xm[i] -= 1e-6
    diff = _lrn_reference(xp, r, 1.0, 0.3, 0.75) - _lrn_reference(xm, r, 1.0, 0.3, 0.75)
    num = (diff * np.arange(6.0)).sum() / 2e-6
    assert abs(g[i] - num) < 1e-6


def test_embedding_lookup_and_its_gradient():
    table = tf.Variable(np.arange(12.0).reshape(4, 3))
    ids = np.array([[3, 0], [3, 1]])
    with tf.GradientTape() as tape:
        rows = tf.nn.embedding_lookup(table, ids)
        y = tf.reduce_sum(rows)
    np.testing.assert_array_equal(rows.numpy(), np.arange(12.0).reshape(4, 3)[ids])
    counts = np.bincount(ids.ravel(), minlength=4)[:, None] * np.ones((1, 3))
    np.testing.assert_array_equal(tf.convert_to_tensor(tape.gradient(y, table)).numpy(), counts)
    shards = [tf.constant([[0.0], [2.0]]), tf.constant([[1.0], [3.0]])]  # 'mod': id i in shard i % 2
    import aicslib.compat.v1 as v1
    np.testing.assert_array_equal(v1.nn.embedding_lookup(shards, [3, 0, 2]).numpy().ravel(), [3.0, 0.0, 2.0])
    np.testing.assert_array_equal(v1.nn.in_top_k(tf.constant([[0.1, 0.9], [0.8, 0.2]]), [1, 1], 1).numpy(),
                                  [True, False])
    mean, var = v1.nn.moments(tf.constant([[1.0, 3.0], [5.0, 7.0]]), [0], keep_dims=True)
    assert mean.shape.as_list() == [1, 2] and var.numpy().tolist() == [[4.0, 4.0]]


# ---------------------------------------------------------------- complex64 / complex128

def test_complex_docstring_examples():
    z = tf.complex(tf.constant([2.25, 3.25]), tf.constant([4.75, 5.75]))
    assert z.dtype == tf.complex64
    np.testing.assert_array_equal(z.numpy(), [2.25 + 4.75j, 3.25 + 5.75j])
    x = tf.constant([-2.25 + 4.75j, 3.25 + 5.75j])
    assert x.dtype == tf.complex128  # Python complex numbers, as TF
    np.testing.assert_allclose(tf.abs(x).numpy(), [5.25594902, 6.60492229], rtol=1e-7)
    assert tf.abs(x).dtype == tf.float64
    np.testing.assert_allclose(tf.math.angle(x).numpy(), [2.0131705, 1.056345], rtol=1e-6)
    np.testing.assert_array_equal(tf.math.real(x).numpy(), [-2.25, 3.25])
    np.testing.assert_array_equal(tf.math.imag(x).numpy(), [4.75, 5.75])
    np.testing.assert_array_equal(tf.math.conj(x).numpy(), [-2.25 - 4.75j, 3.25 - 5.75j])
    np.testing.assert_array_equal(tf.math.real(tf.constant([1.0])).numpy(), [1.0])


@given(hnp.arrays(np.complex128, (2, 3), elements=st.complex_numbers(max_magnitude=3)),
       hnp.arrays(np.complex128, (2, 3), elements=st.complex_numbers(min_magnitude=0.5, max_magnitude=3)))
def test_complex_arithmetic_matches_numpy(a, b):
    ta, tb = tf.constant(a), tf.constant(b)
    np.testing.assert_allclose((ta + tb).numpy(), a + b)
    np.testing.assert_allclose((ta * tb).numpy(), a * b)
    np.testing.assert_allclose((ta / tb).numpy(), a / b, rtol=1e-12)
    np.testing.assert_allclose(tf.exp(ta).numpy(), np.exp(a), rtol=1e-12)
    np.testing.assert_allclose(tf.reduce_sum(ta, axis=1).numpy(), a.sum(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.matmul(ta, tb, transpose_b=True).numpy(), a @ b.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.reduce_mean(tf.abs(ta - tb) ** 2).numpy(), np.mean(np.abs(a - b) ** 2),
                               rtol=1e-12)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.complex128, [2, 3])
        with tf.Session() as s:
            np.testing.assert_allclose(s.run(tf.square(p), {p: a}), a * a, rtol=1e-12)


def test_eye_matches_numpy_identity_with_batches_and_dtypes():
    np.testing.assert_array_equal(tf.eye(3).numpy(), np.eye(3, dtype=np.float32))
    m = tf.eye(2, num_columns=4, batch_shape=[3], dtype=tf.int32)
    assert m.dtype == tf.int32 and m.shape == (3, 2, 4)
    for b in range(3):   # brute force: one exactly where the row index equals the column index
        for i in range(2):
            for j in range(4):
                assert int(m.numpy()[b, i, j]) == (1 if i == j else 0)
    np.testing.assert_array_equal(tf.linalg.eye(2).numpy(), [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="eye: num_rows must be a non-negative Python integer, got -1"):
        tf.eye(-1)


def test_unconnected_gradients_none_or_zero_as_tf():
    # TF's autodiff guide: with UnconnectedGradients.ZERO the unconnected source gets zeros
    # shaped like it; the default (NONE) gives None; the strings work too; others are refused.
    x = tf.Variable([2.0, 2.0])
    y = tf.Variable(3.0)
    for mode, expected in [(tf.UnconnectedGradients.ZERO, [0.0, 0.0]), ("zero", [0.0, 0.0]),
                           (tf.UnconnectedGradients.NONE, None)]:
        with tf.GradientTape() as tape:
            z = y ** 2
        g = tape.gradient(z, x, unconnected_gradients=mode)
        assert (g is None) if expected is None else np.array_equal(g.numpy(), expected)
    with tf.GradientTape() as tape:
        z = y ** 2
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        tape.gradient(z, x, unconnected_gradients="zeros")
