"""TF1 CNN with tf.layers (conv2d, max_pooling2d, flatten, dense) on a few MNIST images, Adam."""
import numpy as np

import aicslib.compat.v1 as tf
from aicslib.datasets import mnist


def np_forward(x, p):
    """The same network in NumPy (VALID 3x3 conv, 2x2 max pool, dense), float64."""
    k, cb, w, b = p["conv2d/kernel:0"], p["conv2d/bias:0"], p["dense/kernel:0"], p["dense/bias:0"]
    n, h, wd, _ = x.shape
    oh, ow = h - 2, wd - 2
    conv = np.zeros((n, oh, ow, k.shape[-1]))
    for i in range(3):
        for j in range(3):
            conv += np.tensordot(x[:, i:i + oh, j:j + ow, :], k[i, j], axes=([3], [0]))
    conv = np.maximum(conv + cb, 0)
    ph, pw = oh // 2, ow // 2
    pooled = conv[:, :ph * 2, :pw * 2].reshape(n, ph, 2, pw, 2, -1).max(axis=(2, 4))
    return pooled.reshape(n, -1) @ w + b


def np_loss(x, labels, p):
    logits = np_forward(x, p)
    m = logits.max(1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(1))
    return np.mean(lse - logits[np.arange(len(labels)), labels])


def main(n_images=32, steps=4, lr=0.01):
    tf.disable_v2_behavior()
    tf.set_random_seed(0)
    (x_train, y_train), _ = mnist.load_data(verify=False)
    images = x_train[:n_images, ::2, ::2, None].astype(np.float32) / 255.0  # 14x14 keeps it fast
    labels = y_train[:n_images].astype(np.int64)

    x = tf.placeholder(tf.float32, [None, 14, 14, 1])
    y = tf.placeholder(tf.int64, [None])
    conv = tf.layers.conv2d(x, filters=4, kernel_size=3, activation=tf.nn.relu)
    pool = tf.layers.max_pooling2d(conv, pool_size=2, strides=2)
    logits = tf.layers.dense(tf.layers.flatten(pool), 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    params = tf.trainable_variables()
    grads = tf.gradients(loss, params)
    train_op = tf.train.AdamOptimizer(lr).minimize(loss)
    assert [v.name for v in params] == ["conv2d/kernel:0", "conv2d/bias:0", "dense/kernel:0", "dense/bias:0"]
    feed = {x: images, y: labels}

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        p0 = dict(zip([v.name for v in params], sess.run(params)))
        l0, g0, logit0 = sess.run([loss, grads, logits], feed)
        sess.run(train_op, feed)
        p1 = dict(zip([v.name for v in params], sess.run(params)))
        for _ in range(steps - 1):
            sess.run(train_op, feed)
        l_end = sess.run(loss, feed)

    x64 = images.astype(np.float64)
    p64 = {k: v.astype(np.float64) for k, v in p0.items()}
    np.testing.assert_allclose(logit0, np_forward(x64, p64), rtol=1e-4, atol=1e-5)
    assert abs(l0 - np_loss(x64, labels, p64)) < 1e-5
    # Gradient of a few conv-kernel entries by central differences of the NumPy loss.
    k_grad = g0[0]
    for idx in [(0, 0, 0, 0), (1, 2, 0, 3), (2, 1, 0, 1)]:
        plus, minus = {**p64}, {**p64}
        plus["conv2d/kernel:0"] = p64["conv2d/kernel:0"].copy()
        minus["conv2d/kernel:0"] = p64["conv2d/kernel:0"].copy()
        # a small step in float64: a larger one may cross a ReLU or max-pool switch
        plus["conv2d/kernel:0"][idx] += 1e-7
        minus["conv2d/kernel:0"][idx] -= 1e-7
        num = (np_loss(x64, labels, plus) - np_loss(x64, labels, minus)) / 2e-7
        assert abs(num - k_grad[idx]) < 1e-4 + 1e-3 * abs(num), (idx, num, k_grad[idx])
    # Adam's first step moves each weight by lr * g / (|g| + eps'), i.e. about lr against the gradient.
    step = p1["dense/kernel:0"] - p0["dense/kernel:0"]
    g = g0[2]
    big = np.abs(g) > 1e-3
    np.testing.assert_allclose(step[big], -lr * np.sign(g[big]), rtol=2e-3)
    assert l_end < l0
    return {"loss_before": float(l0), "loss_after": float(l_end)}


if __name__ == "__main__":
    print(main())
