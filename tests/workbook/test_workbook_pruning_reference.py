"""workbook.references.pruning, the references chapter 18's lab is graded against, checked against
independent ones: aicslib's tfmot schedule and mask, central-difference gradients, aicslib's own
prune_low_magnitude training (the same rule in a graph and a Session)."""
import numpy as np
import pytest

import aicslib as aics
from aicslib import sparsity
from workbook.references import pruning as ref


@pytest.mark.parametrize("initial, final, begin, end, freq, power", [
    (0.0, 0.5, 10, 50, 10, 3), (0.0, 0.9, 3, 50, 7, 3), (0.2, 0.8, 0, 40, 5, 1), (0.1, 0.95, 4, 9, 1, 2)])
def test_schedule_matches_aicslib_polynomial_decay(initial, final, begin, end, freq, power):
    tfmot = sparsity.PolynomialDecay(initial, final, begin, end, power=power, frequency=freq)
    for step in range(end + 3 * freq):
        should, s = ref.polynomial_decay(step, initial, final, begin, end, freq, power)
        want_should, want_s = tfmot(step)
        assert should == want_should, step
        assert s == pytest.approx(float(want_s), abs=1e-6), step


@pytest.mark.parametrize("s", [0.0, 0.22, 0.25, 0.5, 0.75, 0.9, 0.99])
def test_masks_match_aicslib(s):
    rng = np.random.default_rng(0)
    for w in (rng.normal(size=(10,)).astype(np.float32), rng.normal(size=(7, 9)).astype(np.float32),
              rng.integers(-2, 3, size=(6, 5)).astype(np.float32)):
        want = sparsity.magnitude_mask(w, s)
        np.testing.assert_array_equal(ref.mask(w, s), want)
        np.testing.assert_array_equal(ref.fast_mask(w, s), want)


def test_gradients_match_central_differences():
    rng = np.random.default_rng(1)
    params = ref.init_params(1, (6, 5, 4, 3), dtype=np.float64)
    params.update({k: rng.normal(0, 0.3, v.shape) for k, v in params.items() if k.startswith("b")})
    x, y = rng.uniform(0, 1, (7, 6)), rng.integers(0, 3, 7)
    loss, g = ref.gradients(params, x, y)
    eps = 1e-6
    for k, v in params.items():
        num = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            old = v[i]
            v[i] = old + eps
            up = ref.gradients(params, x, y)[0]
            v[i] = old - eps
            down = ref.gradients(params, x, y)[0]
            v[i] = old
            num[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g[k], num, rtol=1e-5, atol=1e-8, err_msg=k)
    assert ref.gradients(params, x, y)[0] == pytest.approx(loss)


def test_masked_step_keeps_pruned_weights_at_zero_and_follows_tf_momentum():
    params = ref.init_params(2, (8, 6, 5, 4))
    masks = {k: ref.fast_mask(params[k], 0.5) for k in ref.LAYERS}
    for k in masks:
        params[k] = params[k] * masks[k]
    velocity = {k: np.full_like(v, 0.5) for k, v in params.items()}   # momentum alone would move every weight
    before = {k: v.copy() for k, v in params.items()}
    x, y = np.random.default_rng(2).uniform(0, 1, (5, 8)).astype(np.float32), np.array([0, 1, 2, 3, 0])
    _, g = ref.gradients(before, x, y)
    ref.masked_sgd_step(params, velocity, masks, x, y, 0.1, 0.9)
    for k in params:
        assert params[k].dtype == np.float32
        np.testing.assert_allclose(velocity[k], 0.45 + g[k], rtol=1e-6)
        want = before[k] - 0.1 * (0.45 + g[k])
        np.testing.assert_allclose(params[k], want * masks[k] if k in masks else want, rtol=1e-5, atol=1e-7)


def test_gradual_pruning_loop_equals_aicslib_prune_low_magnitude_in_a_session():
    """The NumPy loop and aicslib's pruning wrapper (tfmot's rule in a graph) give the same masks
    and, up to float32 summation order, the same weights."""
    sizes, lr, mom = (12, 10, 8, 4), 0.05, 0.9
    rng = np.random.default_rng(3)
    data = [(rng.uniform(0, 1, (6, 12)).astype(np.float32), rng.integers(0, 4, 6)) for _ in range(25)]
    init = ref.init_params(3, sizes)
    ours = {k: v.copy() for k, v in init.items()}
    masks = ref.gradual_pruning(ours, iter(data), ref.polynomial_schedule(0.0, 0.6, 2, 14, 3),
                                ref.fast_mask, ref.masked_sgd_step, lr, mom)

    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, [None, 12])
        y = aics.placeholder(aics.int64, [None])
        p = {k: aics.Variable(v, name=k) for k, v in init.items()}
        h = aics.nn.relu(aics.matmul(x, p["W1"]) + p["b1"])
        h = aics.nn.relu(aics.matmul(h, p["W2"]) + p["b2"])
        loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=aics.matmul(h, p["W3"]) + p["b3"]))
        opt = aics.train.MomentumOptimizer(lr, mom)
        pruned = sparsity.prune_low_magnitude({k: p[k] for k in ref.LAYERS},
                                              sparsity.PolynomialDecay(0.0, 0.6, 2, 14, power=3, frequency=3))
        train_op = pruned.apply_gradients(opt, opt.compute_gradients(loss, var_list=list(p.values())))
        init_op = aics.global_variables_initializer()
    sess = aics.Session(graph=graph)
    sess.run(init_op)
    for t, (xb, yb) in enumerate(data):
        pruned.update(t, session=sess)
        sess.run(train_op, {x: xb, y: yb})
    theirs = sess.run(p)
    for k in ref.LAYERS:
        np.testing.assert_array_equal(masks[k] != 0, theirs[k] != 0, err_msg=k)
    for k in ours:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-4, atol=1e-5, err_msg=k)
