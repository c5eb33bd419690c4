"""Optimizers against TensorFlow 1.x's update rules, in a graph and eagerly.

Each optimizer runs several steps on a fixed problem; the result is compared
with an independent NumPy transcription of TF's kernel (training_ops.cc), and
for some with the numbers TF's own unit tests assert.
"""
import numpy as np
import pytest

import aicslib as aics

# A fixed problem: loss = sum(0.5 * a * w**2 + b * w), so grad = a * w + b.
A = np.array([[1.0, 2.0], [0.5, 3.0]], np.float32)
B = np.array([[0.1, -0.2], [0.3, 0.05]], np.float32)
W0 = np.array([[1.0, -2.0], [0.5, 1.5]], np.float32)
STEPS = 5


def _grad(w):
    return A * w + B


# -- NumPy references (TF 1.x kernels) -------------------------------------------------------

def ref_sgd(steps, lr=0.1):
    w = W0.astype(np.float64)
    for _ in range(steps):
        w = w - lr * _grad(w)
    return w


def ref_momentum(steps, lr=0.1, momentum=0.9, nesterov=False):
    w = W0.astype(np.float64)
    acc = np.zeros_like(w)
    for _ in range(steps):
        g = _grad(w)
        acc = momentum * acc + g
        w = w - lr * (g + momentum * acc) if nesterov else w - lr * acc
    return w


def ref_adam(steps, lr=0.001, b1=0.9, b2=0.999, eps=1e-8):
    w = W0.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = _grad(w)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr_t * m / (np.sqrt(v) + eps)
    return w


def ref_adagrad(steps, lr=0.1, init=0.1):
    w = W0.astype(np.float64)
    acc = np.full_like(w, init)
    for _ in range(steps):
        g = _grad(w)
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc)
    return w


def ref_adadelta(steps, lr=0.001, rho=0.95, eps=1e-8):
    w = W0.astype(np.float64)
    acc = np.zeros_like(w)
    acc_up = np.zeros_like(w)
    for _ in range(steps):
        g = _grad(w)
        acc = rho * acc + (1 - rho) * g * g
        up = np.sqrt(acc_up + eps) / np.sqrt(acc + eps) * g
        acc_up = rho * acc_up + (1 - rho) * up * up
        w = w - lr * up
    return w


def ref_rmsprop(steps, lr=0.01, decay=0.9, momentum=0.0, eps=1e-10, centered=False):
    w = W0.astype(np.float64)
    ms = np.ones_like(w)          # TF 1.x starts the mean square at 1
    mg = np.zeros_like(w)
    mom = np.zeros_like(w)
    for _ in range(steps):
        g = _grad(w)
        ms = ms + (g * g - ms) * (1 - decay)
        if centered:
            mg = mg + (g - mg) * (1 - decay)
            denom = ms - mg * mg + eps
        else:
            denom = ms + eps
        mom = momentum * mom + lr * g / np.sqrt(denom)
        w = w - mom
    return w


CASES = [
    ("sgd", lambda: aics.train.GradientDescentOptimizer(0.1), lambda: ref_sgd(STEPS)),
    ("momentum", lambda: aics.train.MomentumOptimizer(0.1, 0.9), lambda: ref_momentum(STEPS)),
    ("nesterov", lambda: aics.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
     lambda: ref_momentum(STEPS, nesterov=True)),
    ("adam", lambda: aics.train.AdamOptimizer(), lambda: ref_adam(STEPS)),
    ("adam_lr", lambda: aics.train.AdamOptimizer(0.1, beta1=0.8, beta2=0.99, epsilon=1e-3),
     lambda: ref_adam(STEPS, 0.1, 0.8, 0.99, 1e-3)),
    ("adagrad", lambda: aics.train.AdagradOptimizer(0.1), lambda: ref_adagrad(STEPS)),
    ("adadelta", lambda: aics.train.AdadeltaOptimizer(), lambda: ref_adadelta(STEPS)),
    ("adadelta_lr1", lambda: aics.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
     lambda: ref_adadelta(STEPS, 1.0, 0.9, 1e-6)),
    ("rmsprop", lambda: aics.train.RMSPropOptimizer(0.01), lambda: ref_rmsprop(STEPS)),
    ("rmsprop_mom", lambda: aics.train.RMSPropOptimizer(0.01, momentum=0.5, epsilon=1e-6),
     lambda: ref_rmsprop(STEPS, momentum=0.5, eps=1e-6)),
    ("rmsprop_centered", lambda: aics.train.RMSPropOptimizer(0.01, momentum=0.3, centered=True),
     lambda: ref_rmsprop(STEPS, momentum=0.3, centered=True)),
]


def _loss(w):
    return aics.reduce_sum(0.5 * A * w * w + B * w)


@pytest.mark.parametrize("name, make, ref", CASES, ids=[c[0] for c in CASES])
def test_graph_mode_matches_tf_rule(name, make, ref):
    with aics.Graph().as_default():
        w = aics.Variable(W0, name="w")
        opt = make()
        gs = aics.train.get_or_create_global_step()
        train = opt.minimize(_loss(w), global_step=gs)
        assert isinstance(train, aics.Operation)
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            for _ in range(STEPS):
                sess.run(train)
            got, step = sess.run([w, gs])
    np.testing.assert_allclose(got, ref(), rtol=2e-5, atol=1e-6)
    assert got.dtype == np.float32
    assert step == STEPS


@pytest.mark.parametrize("name, make, ref", CASES, ids=[c[0] for c in CASES])
def test_eager_mode_matches_tf_rule(name, make, ref):
    w = aics.Variable(W0, name="w")
    opt = make()
    for _ in range(STEPS):
        assert opt.minimize(lambda: _loss(w)) is None
    np.testing.assert_allclose(w.numpy(), ref(), rtol=2e-5, atol=1e-6)


def test_tf_unit_test_numbers():
    """The values TensorFlow's own tests assert (python/training/*_test.py)."""
    # gradient_descent_test: lr 3.0, grads 0.1 / 0.01
    v0, v1 = aics.Variable([1.0, 2.0]), aics.Variable([3.0, 4.0])
    g0, g1 = np.array([0.1, 0.1], np.float32), np.array([0.01, 0.01], np.float32)
    aics.train.GradientDescentOptimizer(3.0).apply_gradients([(g0, v0), (g1, v1)])
    np.testing.assert_allclose(v0.numpy(), [1.0 - 3.0 * 0.1, 2.0 - 3.0 * 0.1], rtol=1e-6)
    np.testing.assert_allclose(v1.numpy(), [3.0 - 3.0 * 0.01, 4.0 - 3.0 * 0.01], rtol=1e-6)
    # adagrad_test: lr 3.0, initial accumulator 0.1, three steps
    v0, v1 = aics.Variable([1.0, 2.0]), aics.Variable([3.0, 4.0])
    opt = aics.train.AdagradOptimizer(3.0, initial_accumulator_value=0.1)
    for _ in range(3):
        opt.apply_gradients([(g0, v0), (g1, v1)])
    np.testing.assert_allclose(v0.numpy(), [-1.6026098728179932, -0.6026098728179932], rtol=1e-5)
    np.testing.assert_allclose(v1.numpy(), [2.715679168701172, 3.715679168701172], rtol=1e-5)
    # momentum_test: lr 2.0, momentum 0.9, two steps
    v0 = aics.Variable([1.0, 2.0])
    opt = aics.train.MomentumOptimizer(2.0, 0.9)
    opt.apply_gradients([(g0, v0)])
    np.testing.assert_allclose(v0.numpy(), [1.0 - 0.1 * 2.0, 2.0 - 0.1 * 2.0], rtol=1e-6)
    np.testing.assert_allclose(opt.get_slot(v0, "momentum").numpy(), [0.1, 0.1], rtol=1e-6)
    opt.apply_gradients([(g0, v0)])
    np.testing.assert_allclose(
        v0.numpy(), [1.0 - 0.1 * 2.0 - (0.9 * 0.1 + 0.1) * 2.0,
                     2.0 - 0.1 * 2.0 - (0.9 * 0.1 + 0.1) * 2.0], rtol=1e-6)


def test_minimize_is_compute_then_apply():
    with aics.Graph().as_default():
        w = aics.Variable(W0, name="w")
        opt = aics.train.MomentumOptimizer(0.1, 0.9)
        gv = opt.compute_gradients(_loss(w))
        assert len(gv) == 1 and gv[0][1] is w
        train = opt.apply_gradients(gv)
        names = [v.name for v in aics.global_variables()]
        assert names == ["w:0", "w/Momentum:0"]
        assert opt.get_slot_names() == ["momentum"]
        assert [v.name for v in aics.trainable_variables()] == ["w:0"]
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            gval = sess.run(gv[0][0])
            np.testing.assert_allclose(gval, _grad(W0), rtol=1e-6)
            for _ in range(STEPS):
                sess.run(train)
            np.testing.assert_allclose(sess.run(w), ref_momentum(STEPS), rtol=2e-5)


def test_slot_and_beta_names_follow_tf():
    with aics.Graph().as_default():
        w = aics.Variable(W0, name="dense/kernel")
        aics.train.AdamOptimizer().minimize(_loss(w))
        names = sorted(v.name for v in aics.global_variables())
        assert names == sorted(["dense/kernel:0", "beta1_power:0", "beta2_power:0",
                                "dense/kernel/Adam:0", "dense/kernel/Adam_1:0"])


def test_var_list_restricts_updates():
    with aics.Graph().as_default():
        w = aics.Variable(W0, name="w")
        u = aics.Variable(np.ones(2, np.float32), name="u")
        loss = _loss(w) + aics.reduce_sum(u * u)
        train = aics.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[w])
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(u), [1.0, 1.0])
            np.testing.assert_allclose(sess.run(w), ref_sgd(1), rtol=1e-6)


def test_no_gradient_errors():
    with aics.Graph().as_default():
        w = aics.Variable(W0, name="w")
        u = aics.Variable(np.ones(2, np.float32), name="u")
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            aics.train.GradientDescentOptimizer(0.1).minimize(aics.reduce_sum(u * u),
                                                              var_list=[w])
    with pytest.raises(ValueError, match="No variables provided"):
        aics.train.GradientDescentOptimizer(0.1).apply_gradients([])


def test_eager_requires_callable_loss():
    w = aics.Variable(W0)
    with pytest.raises(RuntimeError, match="should be a function"):
        aics.train.GradientDescentOptimizer(0.1).minimize(_loss(w))


def test_eager_global_step_and_tensor_learning_rate():
    w = aics.Variable(W0)
    gs = aics.Variable(0, dtype=aics.int64, trainable=False)
    lr = aics.Variable(0.1, trainable=False)
    opt = aics.train.GradientDescentOptimizer(lr)
    opt.minimize(lambda: _loss(w), global_step=gs)
    lr.assign(0.0)
    opt.minimize(lambda: _loss(w), global_step=gs)
    np.testing.assert_allclose(w.numpy(), ref_sgd(1), rtol=1e-6)
    assert int(gs.numpy()) == 2


def test_graph_learning_rate_placeholder_and_float64():
    with aics.Graph().as_default():
        w = aics.Variable(W0.astype(np.float64), name="w")
        lr = aics.placeholder(aics.float32, [], name="lr")   # cast to the variable's dtype
        train = aics.train.GradientDescentOptimizer(lr).minimize(_loss(w))
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            sess.run(train, {lr: 0.1})
            out = sess.run(w)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref_sgd(1), rtol=1e-6)


def test_apply_shape_mismatch_is_clear():
    w = aics.Variable(np.zeros((2, 2), np.float32), name="w")
    with pytest.raises(aics.errors.InvalidArgumentError, match="same shape"):
        aics.train.GradientDescentOptimizer(0.1).apply_gradients([(np.zeros(3, np.float32), w)])


def test_get_or_create_global_step():
    with aics.Graph().as_default() as g:
        assert aics.train.get_global_step() is None
        gs = aics.train.get_or_create_global_step()
        assert gs.name == "global_step:0" and gs.dtype == aics.int64 and not gs.trainable
        assert aics.train.get_or_create_global_step() is gs
        assert g.get_collection(aics.GraphKeys.GLOBAL_STEP) == [gs]
        with pytest.raises(ValueError, match="already exists"):
            aics.train.create_global_step()
        with aics.Session() as sess:
            sess.run(gs.initializer)
            assert aics.train.global_step(sess, gs) == 0


# -- initializers ------------------------------------------------------------------------------

def test_initializer_statistics():
    x = aics.train.glorot_uniform_initializer(seed=1)([784, 300]).numpy()
    limit = np.sqrt(6.0 / (784 + 300))
    assert x.dtype == np.float32 and x.shape == (784, 300)
    assert np.abs(x).max() <= limit and np.abs(x).max() > 0.99 * limit
    assert abs(x.std() - limit / np.sqrt(3)) < 0.002
    h = aics.train.he_normal(seed=2)([784, 300]).numpy()
    assert abs(h.std() - np.sqrt(2.0 / 784)) < 0.002
    assert np.abs(h).max() <= 2 * np.sqrt(2.0 / 784) / 0.87962566 + 1e-6   # truncated at 2 sd
    n = aics.train.random_normal_initializer(1.0, 0.5, seed=3)([1000]).numpy()
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    conv = aics.train.he_normal(seed=4)([5, 5, 16, 32]).numpy()
    assert abs(conv.std() - np.sqrt(2.0 / (5 * 5 * 16))) < 0.005
    assert aics.train.compute_fans([5, 5, 16, 32]) == (400, 800)


def test_initializer_seeds_are_deterministic():
    def run():
        with aics.Graph().as_default():
            v = aics.Variable(aics.train.glorot_uniform_initializer(seed=7)([3, 4]))
            with aics.Session() as sess:
                sess.run(v.initializer)
                return sess.run(v)
    np.testing.assert_array_equal(run(), run())


def test_constant_zeros_orthogonal():
    np.testing.assert_array_equal(aics.train.zeros_initializer()([2, 3]).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(aics.train.constant_initializer(0.5)([2]).numpy(), [0.5, 0.5])
    np.testing.assert_array_equal(aics.train.constant_initializer([1, 2, 3, 4])([2, 2]).numpy(),
                                  [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="3 values given"):
        aics.train.constant_initializer([1, 2, 3])([2, 2])
    for shape in ([6, 3], [3, 6], [2, 3, 4]):
        q = aics.train.orthogonal_initializer(gain=2.0, seed=0)(shape).numpy()
        m = q.reshape(-1, shape[-1])
        small = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
        np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-5)


def test_initializer_in_graph_variable():
    with aics.Graph().as_default():
        v = aics.Variable(aics.train.he_normal(seed=1)([10, 4]), name="v")
        with aics.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(v).shape == (10, 4)
