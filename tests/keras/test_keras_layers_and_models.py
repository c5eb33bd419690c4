"""Keras pieces the corpus's TF2 programs use (TensorFlow-Examples' tensorflow_v2 notebooks):
subclassed ``Model``, Conv2D/Conv2DTranspose, pooling, Flatten, Dropout, BatchNormalization,
LSTM/Bidirectional/Masking, ``keras.datasets.mnist``, ``save_weights``/``load_weights``.

TF numbers were computed in /tmp/tfvenv (TensorFlow 2.21, Keras 3) by::

    import numpy as np, tensorflow as tf
    x = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 12) / 10.0
    rng = np.random.RandomState(0)
    lstm = tf.keras.layers.LSTM(3); lstm(x)
    lstm.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in lstm.get_weights()])
    print(lstm(x))
    bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2, return_sequences=True)); bi(x)
    bi.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in bi.get_weights()])
    print(bi(x))
    img = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) - 9) / 10.0
    for pad in ["valid", "same"]:
        ct = tf.keras.layers.Conv2DTranspose(1, 3, strides=2, padding=pad); ct(img)
        ct.set_weights([np.arange(18, dtype=np.float32).reshape(3, 3, 1, 2) / 10.0,
                        np.array([0.5], np.float32)])
        print(ct(img)[0, :, :, 0])
"""
import numpy as np
import pytest

import aicslib as tf
import aicslib.compat.v1 as tf1
from aicslib.keras import Model, layers

X = (np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) - 12) / 10.0

TF_LSTM = [[-0.0909494, -0.0300356, -0.2551558], [-0.0041478, 0.1250173, 0.0986454]]
TF_BI = [[[-0.0013713, 0.0252939, -0.2890778, -0.2488751],
          [0.0173551, 0.0931797, -0.2356691, -0.2067731],
          [0.0470354, 0.1881606, -0.1483366, -0.1351262]],
         [[0.0551439, 0.1668456, -0.2121913, -0.1434625],
          [0.1177446, 0.2970908, -0.1648327, -0.1019862],
          [0.1894105, 0.3762298, -0.0984886, -0.0570258]]]
TF_CONVT_VALID = [[0.42, 0.08, -0.32, 0.18, -0.12, 0.28, 0.1],
                  [-0.6, -0.94, -2.12, -0.6, -1.44, -0.26, -0.44],
                  [-1.64, -2.08, -4.14, -1.4, -2.78, -0.72, -0.84],
                  [0.18, 0.08, -0.08, 0.42, 0.6, 0.76, 0.82],
                  [-0.08, -0.04, -0.06, 0.64, 1.3, 1.32, 1.68],
                  [0.96, 1.1, 1.96, 1.44, 2.64, 1.78, 2.08],
                  [1.38, 1.52, 3.04, 2.1, 4.2, 2.68, 2.98]]


def _set_uniform(layer, rng):
    for w in layer.weights:
        w.assign(rng.uniform(-0.5, 0.5, tuple(w.shape)).astype(np.float32))


def test_lstm_and_bidirectional_match_tensorflow():
    rng = np.random.RandomState(0)
    lstm = layers.LSTM(3)
    lstm(X)
    assert [tuple(w.shape) for w in lstm.weights] == [(4, 12), (3, 12), (12,)]
    np.testing.assert_allclose(lstm.weights[2].numpy()[3:6], 1.0)  # unit_forget_bias
    _set_uniform(lstm, rng)
    np.testing.assert_allclose(lstm(X).numpy(), TF_LSTM, atol=2e-6)
    bi = layers.Bidirectional(layers.LSTM(2, return_sequences=True))
    bi(X)
    _set_uniform(bi, rng)
    np.testing.assert_allclose(bi(X).numpy(), TF_BI, atol=2e-6)


def test_masking_skips_padded_steps_like_a_shorter_sequence():
    rng = np.random.RandomState(1)
    lstm = layers.LSTM(3)
    lstm(X)
    _set_uniform(lstm, rng)
    padded = X.copy()
    padded[:, 2, :] = -1.0  # the last step is padding
    masked = lstm(layers.Masking(mask_value=-1.0)(tf.constant(padded))).numpy()
    np.testing.assert_allclose(masked, lstm(tf.constant(X[:, :2])).numpy(), atol=1e-6)


def test_conv2d_transpose_matches_tensorflow_and_conv2d_matches_loops():
    img = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) - 9) / 10.0
    kernel = np.arange(18, dtype=np.float32).reshape(3, 3, 1, 2) / 10.0
    for pad, size in (("valid", 7), ("same", 6)):
        ct = layers.Conv2DTranspose(1, 3, strides=2, padding=pad)
        ct(img)
        ct.kernel.assign(kernel)
        ct.bias.assign(np.array([0.5], np.float32))
        out = ct(img).numpy()[0, :, :, 0]
        np.testing.assert_allclose(out, np.asarray(TF_CONVT_VALID)[:size, :size], atol=1e-5)
    conv = layers.Conv2D(2, 2, activation="relu")
    y = conv(img).numpy()
    k, b = conv.kernel.numpy(), conv.bias.numpy()
    ref = np.zeros((1, 2, 2, 2), np.float32)
    for i in range(2):
        for j in range(2):
            ref[0, i, j] = np.tensordot(img[0, i:i + 2, j:j + 2], k, axes=3) + b
    np.testing.assert_allclose(y, np.maximum(ref, 0), atol=1e-5)
    pooled = layers.MaxPool2D(2, strides=1)(tf.constant(img)).numpy()
    assert pooled.shape == (1, 2, 2, 2) and pooled[0, 0, 0, 0] == img[0, :2, :2, 0].max()
    assert layers.Flatten()(tf.constant(img)).shape.as_list() == [1, 18]


def test_dropout_and_batch_normalization_follow_training_flag():
    x = tf.constant(np.ones((200, 50), np.float32))
    drop = layers.Dropout(rate=0.5)
    np.testing.assert_array_equal(drop(x).numpy(), 1.0)
    y = drop(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    with pytest.raises(ValueError, match="between 0 and 1"):
        layers.Dropout(1.5)
    rng = np.random.RandomState(0)
    data = rng.normal(3.0, 2.0, (64, 4)).astype(np.float32)
    bn = layers.BatchNormalization(momentum=0.9)
    out = bn(data, training=True).numpy()
    ref = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-3)
    np.testing.assert_allclose(out, ref, atol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * data.var(0), rtol=1e-5)
    np.testing.assert_allclose(bn(data).numpy(),  # inference: the moving statistics
                               (data - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 1e-3),
                               atol=1e-4)
    assert [w.name.split("/")[-1] for w in bn.trainable_weights] == ["gamma:0", "beta:0"]


class _Net(Model):
    def __init__(self):
        super().__init__()
        self.fc1 = layers.Dense(8, activation=tf.nn.relu)
        self.blocks = [layers.Dense(4), layers.Dropout(0.5)]
        self.out = layers.Dense(3)

    def call(self, x, is_training=False, logits=False):
        x = self.blocks[1](self.blocks[0](self.fc1(x)), training=is_training)
        x = self.out(x)
        return x if logits else tf.nn.softmax(x)


def test_subclassed_model_tracks_weights_trains_and_saves(tmp_path):
    tf.random.set_seed(0)   # 30 steps left 1 initialisation in 30 short of halving the loss; 100 none
    net = _Net()
    x = np.random.RandomState(0).normal(size=(16, 5)).astype(np.float32)
    labels = np.arange(16) % 3
    probs = net(x)
    assert len(net.trainable_variables) == 6  # three Dense layers, found through attributes and lists
    np.testing.assert_allclose(probs.numpy().sum(1), 1.0, rtol=1e-5)
    opt = tf.optimizers.SGD(0.5)
    losses = []
    for _ in range(100):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=net(x, logits=True)))
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))
        losses.append(float(loss.numpy()))
    assert losses[-1] < 0.5 * losses[0]
    net.save_weights(str(tmp_path / "net.ckpt"))
    other = _Net()
    other(x)
    other.load_weights(str(tmp_path / "net.ckpt"))
    np.testing.assert_allclose(other(x).numpy(), net(x).numpy(), rtol=1e-6)


def test_custom_layer_add_weight_with_initializer_class_and_keras_mnist():
    class Custom(layers.Layer):
        def __init__(self, units, **kwargs):
            self.units = units
            super().__init__(**kwargs)

        def build(self, input_shape):
            self.w = self.add_weight(name="W", shape=tf.TensorShape((input_shape[1], self.units)),
                                     initializer=tf.initializers.RandomNormal, trainable=True)
            self.b = self.add_weight(name="b", shape=[self.units])
            super().build(input_shape)

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    layer = Custom(3)
    out = layer(np.ones((2, 4), np.float32))
    np.testing.assert_allclose(out.numpy(), np.ones((2, 4)) @ layer.w.numpy() + layer.b.numpy(), rtol=1e-6)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and y_test.shape == (10000,) and x_train.dtype == np.uint8


def test_losses_and_metrics_match_numpy():
    logits = np.array([[2.0, 1.0, 0.1], [0.2, 0.3, 3.0], [1.0, 1.0, 1.0]], np.float32)
    labels = np.array([0, 2, 1])
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    ref = -np.log(p[np.arange(3), labels])
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(loss(labels, logits).numpy(), ref.mean(), rtol=1e-6)
    np.testing.assert_allclose(tf.keras.losses.SparseCategoricalCrossentropy()(labels, p).numpy(),
                               ref.mean(), rtol=1e-5)
    np.testing.assert_allclose(tf.keras.losses.CategoricalCrossentropy(from_logits=True)(
        np.eye(3)[labels], logits).numpy(), ref.mean(), rtol=1e-6)
    acc = tf.keras.metrics.SparseCategoricalAccuracy()
    acc.update_state(labels, logits)          # argmax [0, 2, 0]: 2 of 3
    acc.update_state([1], [[0.0, 1.0, 0.0]])  # 1 of 1
    np.testing.assert_allclose(acc.result().numpy(), 0.75)
    mean = tf.keras.metrics.Mean()
    mean(2.0), mean(4.0)
    np.testing.assert_allclose(mean.result().numpy(), 3.0)
    mean.reset_state()
    assert mean.result().numpy() == 0.0


def test_sequential_compile_fit_evaluate_learns_a_linear_rule(capsys):
    rng = np.random.RandomState(0)
    x = rng.normal(size=(512, 2)).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
    model = tf.keras.Sequential([layers.Dense(8, activation="relu"), layers.Dropout(0.1),
                                 layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=3, batch_size=32)
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, acc = model.evaluate(x, y, verbose=2)
    assert acc > 0.9 and len(model.layers) == 3 and len(model.trainable_variables) == 4
    out = capsys.readouterr().out
    assert "Epoch 3/3" in out and "accuracy:" in out
    # predict agrees with calling the model (dropout off), and probabilities sum to 1.
    probs = tf.keras.Sequential([model, layers.Softmax()])(x[:4]).numpy()
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(model.predict(x[:4]), model(x[:4]).numpy(), rtol=1e-6)


def test_model_tracks_variables_assigned_as_attributes():
    class Linear(Model):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    m = Linear()
    assert [float(v.numpy()) for v in m.trainable_variables] == [5.0, 0.0]
    x = np.linspace(-1, 1, 64).astype(np.float32)
    m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    m.fit(x, 3.0 * x + 2.0, epochs=150, batch_size=64, verbose=0)
    np.testing.assert_allclose([m.w.numpy(), m.b.numpy()], [3.0, 2.0], atol=0.05)


def test_metrics_update_inside_a_traced_function():
    # TF's quickstart/advanced updates metrics inside @tf.function train_step.
    acc = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    mean = tf.keras.metrics.Mean(name="train_loss")

    @tf.function
    def step(labels, logits, loss):
        acc(labels, logits)
        mean(loss)

    step(np.array([0, 1]), np.array([[1.0, 0.0], [1.0, 0.0]], np.float32), tf.constant(2.0))
    step(np.array([1, 1]), np.array([[0.0, 1.0], [0.0, 1.0]], np.float32), tf.constant(4.0))
    np.testing.assert_allclose(acc.result().numpy(), 0.75)
    np.testing.assert_allclose(mean.result().numpy(), 3.0)
    acc.reset_state()
    assert float(acc.result().numpy()) == 0.0


def test_layers_conv2d_transpose_matches_tensorflow(graph_mode):
    # TF1's tf.layers (Keras layers underneath): the same numbers as Keras's Conv2DTranspose above.
    img = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) - 9) / 10.0
    x = tf1.placeholder(tf1.float32, [None, 3, 3, 2])
    y = tf1.layers.conv2d_transpose(x, 1, 3, strides=2,
                                   kernel_initializer=tf1.constant_initializer(
                                       np.arange(18, dtype=np.float32).reshape(3, 3, 1, 2) / 10.0),
                                   bias_initializer=tf1.constant_initializer(0.5))
    assert y.shape.as_list() == [None, 7, 7, 1]
    assert [v.name for v in tf1.global_variables()] == ["conv2d_transpose/kernel:0", "conv2d_transpose/bias:0"]
    with tf1.Session() as s:
        s.run(tf1.global_variables_initializer())
        np.testing.assert_allclose(s.run(y, {x: img})[0, :, :, 0], TF_CONVT_VALID, atol=1e-5)
