"""Optimizer updates write variable buffers in place only when nobody else holds them.

TF updates a variable's buffer in place unless the buffer is shared, in which case it
copies first (copy-on-write). Whatever path is taken, a value someone obtained before
the update must keep its old contents: checked here against copies made up front.
"""
import numpy as np

import aicslib as aics


def _momentum_reference(w, g, lr, m, steps):
    w, acc = w.astype(np.float64), np.zeros_like(w, dtype=np.float64)
    for _ in range(steps):
        acc = acc * m + g
        w = w - lr * acc
    return w


def test_eager_snapshots_survive_in_place_updates():
    w0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = aics.Variable(w0)
    opt = aics.train.MomentumOptimizer(0.1, 0.9)
    grad = aics.constant(np.ones((2, 3), np.float32))
    held_numpy = v.numpy()            # the stored array itself, read-only
    held_read = v.value()             # an eager read (a snapshot tensor)
    for _ in range(3):
        opt.apply_gradients([(grad, v)])
    np.testing.assert_array_equal(held_numpy, w0)
    np.testing.assert_array_equal(held_read.numpy(), w0)
    np.testing.assert_allclose(v.numpy(), _momentum_reference(w0, 1.0, 0.1, 0.9, 3), rtol=1e-6)


def test_eager_updates_after_snapshot_released_stay_correct():
    w0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    v = aics.Variable(w0)
    opt = aics.train.GradientDescentOptimizer(0.5)
    g = np.full((3, 4), 0.25, np.float32)
    for _ in range(4):
        with aics.GradientTape() as tape:
            loss = aics.reduce_sum(v * g)
        opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    np.testing.assert_allclose(v.numpy(), w0 - 4 * 0.5 * g, rtol=1e-6)


def test_session_fetched_values_are_not_changed_by_later_steps():
    w0 = np.arange(4, dtype=np.float32)
    with aics.Graph().as_default():
        v = aics.Variable(w0)
        loss = aics.reduce_sum(v * np.float32(2.0))
        train = aics.train.AdamOptimizer(0.1).minimize(loss)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            before = sess.run(v)
            snapshot = before.copy()
            for _ in range(3):
                sess.run(train)
            after = sess.run(v)
    np.testing.assert_array_equal(before, snapshot)
    assert np.all(after < before)  # Adam moves against the positive gradient
