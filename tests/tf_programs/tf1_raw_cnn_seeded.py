"""TF1 raw-ops CNN (tf.nn.conv2d/max_pool, weights from seeded tf.random_normal) trained with Adam.

With op seeds, TF draws its initial weights from Philox: the same program gives the same
weights, hence the same losses, on TensorFlow. The first loss is recomputed with NumPy from
the weights the Session holds; the losses after each Adam step are TensorFlow 2.21's, printed
by this program run with ``import tensorflow.compat.v1 as tf``.
"""
import numpy as np

import aicslib.compat.v1 as tf
from aicslib.datasets import mnist

# TensorFlow 2.21 (CPU), this program: the minibatch loss before each of the 6 steps.
TF_LOSSES = [1923.6900634765625, 1807.6114501953125, 1695.3299560546875, 1588.44970703125, 1488.3623046875,
             1396.378173828125]


def np_loss(x, y, p):
    """The same network in NumPy, float64: SAME 5x5 convolutions, 2x2 max pools, dense."""
    def conv_same(a, k):
        kh, kw = k.shape[:2]
        a = np.pad(a, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
        h, w = a.shape[1] - kh + 1, a.shape[2] - kw + 1
        out = np.zeros((a.shape[0], h, w, k.shape[3]))
        for i in range(kh):
            for j in range(kw):
                out += np.tensordot(a[:, i:i + h, j:j + w, :], k[i, j], axes=([3], [0]))
        return out

    def pool(a):
        n, h, w, c = a.shape
        return a.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))

    h = pool(np.maximum(conv_same(x, p["wc1"]) + p["bc1"], 0))
    h = pool(np.maximum(conv_same(h, p["wc2"]) + p["bc2"], 0))
    h = np.maximum(h.reshape(len(x), -1) @ p["wd1"] + p["bd1"], 0)
    logits = h @ p["out"] + p["bo"]
    m = logits.max(1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(1, keepdims=True))
    return -np.mean((y * logp).sum(1))


def main(steps=6, batch=32):
    tf.disable_v2_behavior()
    (x_train, y_train), _ = mnist.load_data(verify=False)
    images = x_train[:batch].reshape(batch, 784).astype(np.float32) / 255.0
    labels = np.eye(10, dtype=np.float32)[y_train[:batch]]

    X = tf.placeholder(tf.float32, [None, 784])
    Y = tf.placeholder(tf.float32, [None, 10])
    shapes = {"wc1": [5, 5, 1, 8], "wc2": [5, 5, 8, 16], "wd1": [7 * 7 * 16, 64], "out": [64, 10],
              "bc1": [8], "bc2": [16], "bd1": [64], "bo": [10]}
    params = {name: tf.Variable(tf.random_normal(shape, seed=i + 1), name=name)
              for i, (name, shape) in enumerate(shapes.items())}

    def conv2d(x, w, b):
        return tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, strides=[1, 1, 1, 1], padding="SAME"), b))

    def maxpool2d(x):
        return tf.nn.max_pool(value=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    x = tf.reshape(X, shape=[-1, 28, 28, 1])
    h = maxpool2d(conv2d(x, params["wc1"], params["bc1"]))
    h = maxpool2d(conv2d(h, params["wc2"], params["bc2"]))
    h = tf.reshape(h, [-1, params["wd1"].get_shape()[0].value])
    h = tf.nn.relu(tf.add(tf.matmul(h, params["wd1"]), params["bd1"]))
    logits = tf.add(tf.matmul(h, params["out"]), params["bo"])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=Y))
    train = tf.train.AdamOptimizer(learning_rate=0.001).minimize(loss)

    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start = sess.run(params)
        for _ in range(steps):
            step_loss, _ = sess.run([loss, train], {X: images, Y: labels})
            losses.append(float(step_loss))
    p64 = {k: v.astype(np.float64) for k, v in start.items()}
    assert abs(losses[0] - np_loss(images.reshape(-1, 28, 28, 1).astype(np.float64), labels, p64)) \
        < 1e-4 * losses[0]
    np.testing.assert_allclose(losses, TF_LOSSES[:steps], rtol=1e-5)
    return {"losses": losses}


if __name__ == "__main__":
    print(main())
