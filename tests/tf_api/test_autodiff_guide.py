"""Every example of TensorFlow's autodiff guide (https://www.tensorflow.org/guide/autodiff),
written again with ``import aicslib as tf``; the expected values are what TensorFlow 2.21 printed
for the guide's own code (quoted per example), or NumPy's where the guide draws random numbers.
Beyond the guide: which paths carry a gradient (integer casts, stop_gradient, comparisons,
rounding, sign) compared with TensorFlow 2.21's answers for the same expressions.
"""
import numpy as np
import pytest

import aicslib as tf


def test_gradient_tapes():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0  # TF: 6.0


def test_gradients_with_respect_to_a_model_and_a_dict_of_sources():
    w = tf.Variable(tf.random.normal((3, 2)), name="w")
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
    x = [[1.0, 2.0, 3.0]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y**2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    assert w.shape == dl_dw.shape == (3, 2)  # TF: (3, 2) twice
    yv = np.array(x) @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_dw.numpy(), np.array(x).T @ yv, rtol=1e-5)  # d mean(y^2) = y (2 / 2)
    grad = tape.gradient(loss, {"w": w, "b": b})
    np.testing.assert_allclose(grad["b"].numpy(), yv[0], rtol=1e-5)
    assert grad["b"].shape == (2,)


def test_gradients_of_a_keras_layer():
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.trainable_variables)
    assert [g.shape for g in grad] == [(3, 2), (2,)]  # TF: kernel (3, 2), bias (2,)
    kernel, bias = (v.numpy() for v in layer.trainable_variables)
    pre = np.array([[1.0, 2.0, 3.0]]) @ kernel + bias
    dy = np.where(pre > 0, pre, 0.0)  # d mean(relu(pre)^2) / d pre = relu(pre) (2 / 2) where pre > 0
    np.testing.assert_allclose(grad[0].numpy(), np.array([[1.0], [2.0], [3.0]]) @ dy, rtol=1e-5)


def test_what_the_tape_watches():
    x0 = tf.Variable(3.0, name="x0")
    x1 = tf.Variable(3.0, name="x1", trainable=False)
    x2 = tf.Variable(2.0, name="x2") + 1.0
    x3 = tf.constant(3.0, name="x3")
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0 and grad[1:] == [None, None, None]  # TF: 6.0, None, None, None
    assert [v.name for v in tape.watched_variables()] == ["x0:0"]


def test_watch_a_constant_and_watch_accessed_variables_false():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0
    x0, x1 = tf.Variable(0.0), tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        ys = tf.reduce_sum(y0 + y1)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    assert grad["x1"].numpy() == pytest.approx(0.9999546)  # TF: 0.9999546 = sigmoid(10)


def test_intermediate_results_and_persistent_tapes():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0  # TF: 18.0
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, x).numpy().tolist() == [4.0, 108.0]
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 6.0]
    del tape


def test_non_scalar_targets_are_summed():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient(y0, x).numpy() == 4.0 and tape.gradient(y1, x).numpy() == -0.25
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient({"y0": y0, "y1": y1}, x).numpy() == 3.75  # TF: 3.75
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * [3.0, 4.0]
    assert tape.gradient(y, x).numpy() == 7.0  # TF: 7.0
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), s * (1 - s), atol=1e-6)


def test_control_flow_and_a_variable_as_target():
    x = tf.constant(1.0)
    v0, v1 = tf.Variable(2.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1**2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0.numpy() == 1.0 and dv1 is None  # TF: tf.Tensor(1.0) and None
    assert tape.gradient(result, x) is None


@pytest.mark.parametrize("case", ["unconnected", "replaced_by_tensor", "numpy", "integer", "stateful"])
def test_cases_where_gradient_returns_none(case):
    if case == "unconnected":
        x, y = tf.Variable(2.0), tf.Variable(3.0)
        with tf.GradientTape() as tape:
            z = y * y
        assert tape.gradient(z, x) is None
    elif case == "replaced_by_tensor":
        x, seen = tf.Variable(2.0), []
        for _ in range(2):
            with tf.GradientTape() as tape:
                y = x + 1
            seen.append(tape.gradient(y, x))
            x = x + 1  # a tensor now, not watched
        assert seen[0].numpy() == 1.0 and seen[1] is None  # TF: 1.0, then None
    elif case == "numpy":
        x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
        with tf.GradientTape() as tape:
            x2 = x**2
            y = tf.reduce_mean(np.mean(x2, axis=0), axis=0)
        assert tape.gradient(y, x) is None
    elif case == "integer":
        x = tf.constant(10)
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        assert g.gradient(y, x) is None
    else:
        x0, x1 = tf.Variable(3.0), tf.Variable(0.0)
        with tf.GradientTape() as tape:
            x1.assign_add(x0)
            y = x1**2
        assert tape.gradient(y, x0) is None


def test_zeros_for_unconnected():
    # The guide's "no gradient registered" example (adjust_contrast) is in tests/framework/test_gradients.py.
    x, y = tf.Variable([2.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        z = y**2
    g = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert g.numpy().tolist() == [0.0, 0.0]  # TF: tf.Tensor([0. 0.])


# TensorFlow 2.21's tape.gradient(f(x), x) at x = Variable(2.5) for each f (None: no path).
GRADIENT_FLOW = [
    ("cast to int32 and back, times x", lambda x: tf.cast(tf.cast(x, tf.int32), tf.float32) * x, 2.0),
    ("cast to int32 and back", lambda x: tf.cast(tf.cast(x, tf.int32), tf.float32), None),
    ("cast to float64", lambda x: tf.cast(x, tf.float64) * 3.0, 3.0),
    ("cast to float16", lambda x: tf.cast(x, tf.float16) * 3.0, 3.0),
    ("stop_gradient(x) * x", lambda x: tf.stop_gradient(x) * x, 2.5),
    ("stop_gradient(2x)", lambda x: tf.stop_gradient(x * 2), None),
    ("round", lambda x: tf.round(x), None),
    ("floor", lambda x: tf.floor(x), None),
    ("ceil", lambda x: tf.math.ceil(x), None),
    ("sign", lambda x: tf.sign(x), 0.0),
    ("argmax", lambda x: tf.cast(tf.argmax(tf.stack([x, 2 * x])), tf.float32), None),
    ("comparison", lambda x: tf.cast(x > 1.0, tf.float32), None),
    ("where", lambda x: tf.where(x > 1.0, x * x, x), 5.0),
    ("the variable itself", lambda x: x, 1.0),
    ("identity", lambda x: tf.identity(x), 1.0),
    ("floordiv", lambda x: x // 2.0, None),
    ("one_hot of an int cast", lambda x: tf.one_hot(tf.cast(x, tf.int32), 4), None),
    ("gather from a stack", lambda x: tf.gather(tf.stack([x, 2 * x, 3 * x]), 1), 2.0),
    ("max of a tie", lambda x: tf.reduce_max(tf.stack([x, x])), 1.0),
    ("integer mean", lambda x: tf.reduce_mean(tf.cast(tf.stack([x, x]), tf.int64)), None),
    ("a list of targets", lambda x: [x * 2, x * 3], 5.0),
    ("maximum at a tie", lambda x: tf.maximum(x, 2.5), 1.0),
    ("relu at 0", lambda x: tf.nn.relu(x - 2.5), 0.0),
]


@pytest.mark.parametrize("name, f, want", GRADIENT_FLOW, ids=[c[0] for c in GRADIENT_FLOW])
def test_gradient_flow_matches_tensorflow(name, f, want):
    x = tf.Variable(2.5)
    with tf.GradientTape() as tape:
        y = f(x)
    g = tape.gradient(y, x)
    if want is None:
        assert g is None
    else:
        assert g is not None and g.shape == () and g.numpy() == pytest.approx(want)


def test_integer_variables_get_no_gradient():
    x = tf.Variable(3)
    with tf.GradientTape() as tape:
        y = x * 2
    assert tape.gradient(y, x) is None  # TF 2.21: None (sources must be floating)


def test_gradient_flow_inside_a_function():
    x = tf.Variable(2.5)

    @tf.function
    def grads():
        with tf.GradientTape() as tape:
            y = tf.cast(tf.cast(x, tf.int32), tf.float32) * x + tf.stop_gradient(x) * x
        return tape.gradient(y, x)
    assert grads().numpy() == pytest.approx(2.0 + 2.5)
