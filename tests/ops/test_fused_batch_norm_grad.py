"""FusedBatchNormV3's gradient (the FusedBatchNormGradV3 op), training and inference mode.

References: central-difference numerical gradients of the forward op (float64),
and TensorFlow 2.21's own values on a small float32 case (recorded below with
the script that produced them).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.framework.execute import apply_op
from aicslib.ops.batch_norm_ops import fused_batch_norm


def _forward(x, scale, offset, mean, variance, training, epsilon):
    if training:
        return fused_batch_norm(x, scale, offset, epsilon=epsilon, is_training=True)[0]
    return fused_batch_norm(x, scale, offset, mean, variance, epsilon=epsilon, is_training=False)[0]


def _tape_grads(x, scale, offset, mean, variance, w, training, epsilon):
    xs = [aics.constant(v) for v in (x, scale, offset)]
    with aics.GradientTape() as tape:
        for v in xs:
            tape.watch(v)
        loss = aics.reduce_sum(_forward(*xs, mean, variance, training, epsilon) * w)
    return [g.numpy() for g in tape.gradient(loss, xs)]


def _numerical_grads(x, scale, offset, mean, variance, w, training, epsilon, delta=1e-6):
    """d loss / d (x, scale, offset) by central differences, loss = sum(forward * w)."""
    args = [x.copy(), scale.copy(), offset.copy()]

    def loss():
        return float(np.sum(_forward(*args, mean, variance, training, epsilon).numpy() * w))

    grads = []
    for a in args:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            keep = flat[i]
            flat[i] = keep + delta
            up = loss()
            flat[i] = keep - delta
            down = loss()
            flat[i] = keep
            gflat[i] = (up - down) / (2 * delta)
        grads.append(g)
    return grads


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 3), h=st.integers(1, 3), w_=st.integers(1, 3), c=st.integers(1, 3),
       training=st.booleans(), seed=st.integers(0, 2**16))
def test_gradient_matches_central_differences(n, h, w_, c, training, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, h, w_, c)) * 2 + 0.5
    scale, offset = rng.standard_normal(c), rng.standard_normal(c)
    mean, variance = rng.standard_normal(c), rng.uniform(0.5, 2.0, c)
    w = rng.standard_normal((n, h, w_, c))
    theirs = _numerical_grads(x, scale, offset, mean, variance, w, training, 0.01)
    ours = _tape_grads(x, scale, offset, mean, variance, w, training, 0.01)
    for name, a, b in zip(("x", "scale", "offset"), ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("training", [True, False])
def test_full_jacobian_against_numerical(training):
    rng = np.random.default_rng(3)
    x, mean, variance = rng.standard_normal((2, 2, 3, 2)), rng.standard_normal(2), rng.uniform(0.5, 2, 2)
    def fn(x, s, o):
        return _forward(x, s, o, mean, variance, training, 0.001)
    theoretical, numerical = aics.test.compute_gradient(fn, [x, rng.standard_normal(2), rng.standard_normal(2)])
    assert aics.test.max_error(theoretical, numerical) < 1e-6
    assert all(np.any(t != 0) for t in theoretical)


def test_training_gradient_sums_to_zero_per_channel():
    # y is invariant to shifting x by a constant per channel, so dx sums to 0 over N, H, W.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 3, 4))
    dx, _, _ = _tape_grads(x, rng.standard_normal(4), rng.standard_normal(4), None, None,
                           rng.standard_normal((2, 3, 3, 4)), True, 0.001)
    np.testing.assert_allclose(dx.sum(axis=(0, 1, 2)), 0, atol=1e-12)


def test_graph_mode_gradients_equal_eager_ones():
    rng = np.random.default_rng(2)
    x, s, o, w = rng.standard_normal((2, 2, 2, 3)), rng.standard_normal(3), rng.standard_normal(3), \
        rng.standard_normal((2, 2, 2, 3))
    eager = _tape_grads(x, s, o, None, None, w, True, 0.001)
    g = aics.Graph()
    with g.as_default():
        xt, st_, ot = aics.constant(x), aics.constant(s), aics.constant(o)
        loss = aics.reduce_sum(fused_batch_norm(xt, st_, ot, epsilon=0.001, is_training=True)[0] * w)
        grads = aics.gradients(loss, [xt, st_, ot])
        assert {op.type for op in g.get_operations()} >= {"FusedBatchNormV3", "FusedBatchNormGradV3"}
    with aics.Session(graph=g) as sess:
        for a, b in zip(sess.run(grads), eager):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# TensorFlow 2.21.0 (tensorflow-cpu, oneDNN on, x86-64), recorded 2026-11-23 with:
#
#   import numpy as np, tensorflow as tf
#   rng = np.random.RandomState(0)
#   x = rng.randn(2, 2, 3, 2).astype(np.float32)
#   scale = np.array([1.5, -0.5], np.float32); offset = np.array([0.1, 0.2], np.float32)
#   mean = np.array([0.3, -0.2], np.float32); var = np.array([0.8, 1.7], np.float32)
#   dy = rng.randn(2, 2, 3, 2).astype(np.float32)
#   for training in (True, False):
#       xv, sv, ov = tf.constant(x), tf.constant(scale), tf.constant(offset)
#       with tf.GradientTape() as tape:
#           tape.watch([xv, sv, ov])
#           outs = tf.raw_ops.FusedBatchNormV3(
#               x=xv, scale=sv, offset=ov, epsilon=0.001, is_training=training,
#               mean=mean if not training else np.zeros(0, np.float32),
#               variance=var if not training else np.zeros(0, np.float32))
#           loss = tf.reduce_sum(outs[0] * dy)
#       gx, gs, go = tape.gradient(loss, [xv, sv, ov])
#       print(training, outs[1].numpy().tolist(), outs[2].numpy().tolist(),
#             gx.numpy().ravel().tolist(), gs.numpy().tolist(), go.numpy().tolist())
TF_RESULTS = {
    True: {
        "batch_mean": [0.5770630240440369, 0.22373636066913605],
        "batch_variance": [1.3515559434890747, 0.8834777474403381],
        "dx": [2.4602715969085693, 0.7611465454101562, -0.0731295719742775, -0.4999644160270691,
               1.4065489768981934, -0.4451136887073517, 0.09082932770252228, -0.08935444802045822,
               -0.6934861540794373, 1.050291657447815, -0.11185483634471893, -0.45247682929039,
               1.6507409811019897, -0.629703164100647, -0.3415237069129944, 0.1415841430425644,
               -1.8507566452026367, 0.9254025816917419, -2.041215658187866, -0.7497338056564331,
               1.2586450576782227, 0.12007352709770203, -1.7550688982009888, -0.13215209543704987],
        "dscale": [5.841885566711426, -5.893880844116211],
        "doffset": [-0.9067649841308594, 0.15177476406097412],
    },
    False: {
        "batch_mean": [0.30000001192092896, -0.20000000298023224],
        "batch_variance": [0.800000011920929, 1.7000000476837158],
        "dx": [3.8041176795959473, 0.5575598478317261, 0.07669144868850708, 0.0717606320977211,
               2.568943977355957, -0.5633077621459961, 0.2596924901008606, -0.14497607946395874,
               -1.4879323244094849, 0.7593774795532227, -0.5831021666526794, -0.05993947014212608,
               2.06197190284729, -0.46095606684684753, -0.6491612792015076, 0.11589373648166656,
               -1.7573789358139038, 0.5443919897079468, -2.859715700149536, -0.7478682994842529,
               -0.8541790843009949, 0.16794444620609283, -2.0996899604797363, -0.29806631803512573],
        "dscale": [6.9876227378845215, -4.019998550415039],
        "doffset": [-0.9067649841308594, 0.15177476406097412],
    },
}


@pytest.mark.parametrize("training", [True, False])
def test_matches_tensorflow_on_a_small_case(training):
    rng = np.random.RandomState(0)
    x = rng.randn(2, 2, 3, 2).astype(np.float32)
    scale, offset = np.array([1.5, -0.5], np.float32), np.array([0.1, 0.2], np.float32)
    mean, var = np.array([0.3, -0.2], np.float32), np.array([0.8, 1.7], np.float32)
    dy = rng.randn(2, 2, 3, 2).astype(np.float32)
    tf = TF_RESULTS[training]
    xs = [aics.constant(v) for v in (x, scale, offset)]
    with aics.GradientTape() as tape:
        for v in xs:
            tape.watch(v)
        y, batch_mean, batch_var = fused_batch_norm(*xs, None if training else mean, None if training else var,
                                                    epsilon=0.001, is_training=training)
        loss = aics.reduce_sum(y * dy)
    dx, dscale, doffset = tape.gradient(loss, xs)
    assert dx.dtype == aics.float32
    np.testing.assert_allclose(batch_mean.numpy(), tf["batch_mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(batch_var.numpy(), tf["batch_variance"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx.numpy().ravel(), tf["dx"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dscale.numpy(), tf["dscale"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(doffset.numpy(), tf["doffset"], rtol=1e-4, atol=1e-5)


def test_grad_op_outputs_and_bad_inputs():
    x = np.ones((1, 2, 2, 3), np.float32)
    outs = apply_op("FusedBatchNormGradV3", [x, x, np.ones(3, np.float32), np.zeros(3, np.float32),
                                             np.ones(3, np.float32), np.zeros(0, np.float32)],
                    {"epsilon": 0.001, "is_training": False})
    assert [tuple(o.shape) for o in outs] == [(1, 2, 2, 3), (3,), (3,), (0,), (0,)]
    np.testing.assert_allclose(outs[0].numpy(), 1 / np.sqrt(1.001), rtol=1e-6)
    with pytest.raises((ValueError, aics.errors.InvalidArgumentError),
                       match="scale must have the same number of elements as the channels of x, got 2 and 3"):
        apply_op("FusedBatchNormGradV3", [x, x, np.ones(2, np.float32), np.zeros(3, np.float32),
                                          np.ones(3, np.float32), np.zeros(0, np.float32)])
    with pytest.raises((ValueError, aics.errors.InvalidArgumentError), match="y_backprop must be 4-dimensional"):
        apply_op("FusedBatchNormGradV3", [x[0], x[0], np.ones(3, np.float32), np.zeros(3, np.float32),
                                          np.ones(3, np.float32), np.zeros(0, np.float32)])
