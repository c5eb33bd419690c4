"""TF1 input pipeline and monitored training: the batch size and the number of epochs are fed
placeholders read when the iterator is initialized (by a hook), MonitoredTrainingSession runs the
loop with StopAtStepHook, LoggingTensorHook and checkpoints, a second session resumes from the
checkpoint, and a variable added later is found by report_uninitialized_variables. The trained
weights are checked against the same mini-batch SGD in NumPy."""
import logging
import os
import tempfile

import numpy as np

import aicslib.compat.v1 as tf


class IteratorInitializerHook(tf.train.SessionRunHook):
    """Initializes the input iterator once the session exists (the usual TF1 recipe)."""

    def __init__(self, iterator, feed_dict):
        self.iterator, self.feed_dict = iterator, feed_dict

    def after_create_session(self, session, coord):
        session.run(self.iterator.initializer, feed_dict=self.feed_dict)


def numpy_sgd(x, y, steps, batch, lr):
    w, b, seen = np.zeros((x.shape[1], 1)), 0.0, 0
    for _ in range(steps):
        xb, yb = x[seen:seen + batch], y[seen:seen + batch]
        seen = (seen + batch) % len(x)
        err = xb @ w + b - yb
        w -= lr * 2 * xb.T @ err / len(xb)
        b -= lr * 2 * err.mean()
    return w, b


def build(features, targets):
    x_data = tf.placeholder(tf.float32, [None, 3], name="x_data")
    y_data = tf.placeholder(tf.float32, [None, 1], name="y_data")
    batch_size = tf.placeholder(tf.int64, [], name="batch_size")
    epochs = tf.placeholder(tf.int64, [], name="epochs")
    dataset = tf.data.Dataset.from_tensor_slices((x_data, y_data)).repeat(epochs).batch(batch_size)
    iterator = dataset.make_initializable_iterator()
    x, y = iterator.get_next()
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    feed = {x_data: features, y_data: targets, batch_size: 10, epochs: 100}
    return iterator, feed, w, b, loss, step, train_op


def main():
    tf.disable_v2_behavior()
    rng = np.random.RandomState(0)
    features = rng.rand(40, 3).astype(np.float32)
    targets = (features @ np.array([[1.5], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    ckpt_dir = os.path.join(tempfile.mkdtemp(), "train")

    tf.reset_default_graph()
    iterator, feed, w, b, loss, step, train_op = build(features, targets)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    tf.logging.set_verbosity(tf.logging.INFO)
    hooks = [IteratorInitializerHook(iterator, feed), tf.train.StopAtStepHook(last_step=30),
             tf.train.LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=10)]
    try:
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir, hooks=hooks,
                                               save_checkpoint_steps=10) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    finally:
        tf.get_logger().removeHandler(handler)
        tf.logging.set_verbosity(tf.logging.WARN)
    logged = [r.getMessage() for r in records if r.getMessage().startswith("loss =")]
    assert len(logged) == 3 and logged[0].endswith("step = 1")
    assert tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-30")

    # A new graph resumes from the checkpoint: the step and the weights continue.
    tf.reset_default_graph()
    iterator, feed, w, b, loss, step, train_op = build(features, targets)
    with tf.train.MonitoredTrainingSession(
            checkpoint_dir=ckpt_dir, save_checkpoint_steps=10,
            hooks=[IteratorInitializerHook(iterator, feed), tf.train.StopAtStepHook(num_steps=12)]) as sess:
        assert sess.run(step) == 30
        while not sess.should_stop():
            sess.run(train_op)
    reader_w = tf.train.load_variable(tf.train.latest_checkpoint(ckpt_dir), "w")
    # Rereading from the first batch after the restart: 30 steps, then 12 from the start again.
    want_w, want_b = numpy_sgd(features.astype(np.float64), targets.astype(np.float64), 30, 10, 0.1)
    tail_w, tail_b = want_w, want_b
    seen = 0
    for _ in range(12):
        xb, yb = features[seen:seen + 10].astype(np.float64), targets[seen:seen + 10].astype(np.float64)
        seen = (seen + 10) % 40
        err = xb @ tail_w + tail_b - yb
        tail_w, tail_b = tail_w - 0.1 * 2 * xb.T @ err / 10, tail_b - 0.1 * 2 * err.mean()
    np.testing.assert_allclose(reader_w, tail_w, rtol=1e-4, atol=1e-6)
    assert tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-42")

    # Variables made after global_variables_initializer() was built are not in it.
    with tf.Session() as sess:
        saver = tf.train.Saver()
        saver.restore(sess, tf.train.latest_checkpoint(ckpt_dir))
        scale = tf.get_variable("scale", [], initializer=tf.constant_initializer(2.0))
        missing = sess.run(tf.report_uninitialized_variables())
        assert missing.tolist() == [b"scale"], missing
        sess.run(tf.variables_initializer([scale]))
        assert sess.run(tf.report_uninitialized_variables()).size == 0
        path = saver.save(sess, os.path.join(ckpt_dir, "final.ckpt"), global_step=step)
        assert path.endswith("final.ckpt-42")
        np.testing.assert_allclose(sess.run(w * scale), 2 * tail_w, rtol=1e-4, atol=1e-6)
    return {"w": reader_w.ravel().tolist(), "b": float(tail_b)}


if __name__ == "__main__":
    print(main())
