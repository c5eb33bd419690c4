"""TF2: tf.Module layers written without super().__init__(), a tf.function with an
input_signature called with Python lists, a ConcreteFunction called by keyword, tf.print
inside an AutoGraph loop, gradients that stop at integer casts and stop_gradient, and
checkpoints written into folders that do not exist yet. Checked against NumPy."""
import os
import tempfile

import numpy as np

import aicslib as tf


class Dense(tf.Module):
    def __init__(self, w, b):  # TF's Module works without super().__init__()
        self.w = tf.Variable(w, name="w")
        self.b = tf.Variable(b, name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class Net(tf.Module):
    def __init__(self, rng):
        self.hidden = Dense(rng.randn(2, 4).astype(np.float32), np.zeros(4, np.float32))
        self.out = Dense(rng.randn(4, 1).astype(np.float32), np.ones(1, np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        return self.out(self.hidden(x))


def main(steps=5, lr=0.05):
    rng = np.random.RandomState(3)
    net = Net(rng)
    x = [[0.0, 1.0], [1.0, 0.5], [2.0, -1.0]]  # a Python list, converted by the input_signature
    y = np.array([[1.0], [2.0], [0.5]], np.float32)
    assert len(net.trainable_variables) == 4 and len(net.submodules) == 2

    log = os.path.join(tempfile.mkdtemp(), "steps.txt")

    @tf.function
    def train(x, y, n):
        for i in tf.range(n):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(net(x) - y))
            grads = tape.gradient(loss, net.trainable_variables)
            for g, v in zip(grads, net.trainable_variables):
                v.assign_sub(lr * g)
            tf.print("step", i, "loss", loss, output_stream="file://" + log)
        return loss

    start = [v.numpy() for v in (net.hidden.w, net.hidden.b, net.out.w, net.out.b)]
    last = train(tf.constant(x), tf.constant(y), tf.constant(steps))
    with open(log) as f:
        lines = f.read().splitlines()
    assert [ln.split()[1] for ln in lines] == [str(i) for i in range(steps)], lines

    w1, b1, w2, b2 = [p.astype(np.float64) for p in start]
    xs = np.array(x)
    for _ in range(steps):
        pre1 = xs @ w1 + b1
        h = np.maximum(pre1, 0)
        pre2 = h @ w2 + b2
        out = np.maximum(pre2, 0)
        d = 2 * (out - y) / len(xs) * (pre2 > 0)
        gw2, gb2, dh = h.T @ d, d.sum(0), d @ w2.T * (pre1 > 0)
        w1, b1, w2, b2 = w1 - lr * xs.T @ dh, b1 - lr * dh.sum(0), w2 - lr * gw2, b2 - lr * gb2
    np.testing.assert_allclose(net.out.w.numpy(), w2, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(last), float(lines[-1].split()[-1]), rtol=1e-5)

    @tf.function
    def scaled(a, b=2.0):
        return a * b
    concrete = scaled.get_concrete_function(tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))
    assert float(concrete(b=tf.constant(3.0), a=tf.constant(2.0))) == 6.0

    v = tf.Variable(2.5)
    with tf.GradientTape(persistent=True) as tape:
        through_int = tf.cast(tf.cast(v, tf.int32), tf.float32) * v   # 2 * v
        stopped = tf.stop_gradient(v * v) + v                           # 6.25 + v
    assert float(tape.gradient(through_int, v)) == 2.0 and float(tape.gradient(stopped, v)) == 1.0
    assert tape.gradient(tf.cast(tf.cast(v, tf.int32), tf.float32), v) is None

    root = os.path.join(tempfile.mkdtemp(), "not", "yet")
    ckpt = tf.train.Checkpoint(net=net)
    first = ckpt.save(os.path.join(root, "ckpt"))
    manager = tf.train.CheckpointManager(ckpt, os.path.join(root, "managed"), max_to_keep=1)
    second = manager.save()
    saved_w = net.out.w.numpy()
    net.out.w.assign(tf.zeros_like(net.out.w))
    ckpt.restore(second)
    np.testing.assert_array_equal(net.out.w.numpy(), saved_w)
    assert first.endswith("ckpt-1") and second.endswith("ckpt-2")
    return {"loss": float(last), "w_out": saved_w.ravel().tolist()}


if __name__ == "__main__":
    print(main())
