"""The speed layer's ResourceApplyMomentum (aicslib/accel/training_ops.py) gives the reference
kernel's bits, and the update TF's momentum rule defines (computed here with NumPy)."""
import numpy as np
import pytest

import aicslib as aics
from aicslib.accel import training_ops
from aicslib.accel.registration import use_accel


def _train(shape, dtype, steps, nesterov=False):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(shape).astype(dtype)
    grads = [rng.standard_normal(shape).astype(dtype) for _ in range(steps)]
    v = aics.Variable(w0)
    opt = aics.train.MomentumOptimizer(0.1, 0.9, use_nesterov=nesterov)
    for g in grads:
        opt.apply_gradients([(aics.constant(g), v)])
    return w0, grads, v.numpy(), opt.get_slot(v, "momentum").numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(784, 300), (7,), (129, 127)])   # scratch path and small path
def test_momentum_matches_the_reference_bit_for_bit_and_the_rule(shape, dtype):
    assert np.prod((784, 300)) >= training_ops.SCRATCH_FROM > np.prod((7,))
    w0, grads, w_fast, a_fast = _train(shape, dtype, 3)
    with use_accel(False):
        _, _, w_ref, a_ref = _train(shape, dtype, 3)
    np.testing.assert_array_equal(w_fast, w_ref)
    np.testing.assert_array_equal(a_fast, a_ref)
    w, a = w0.copy(), np.zeros_like(w0)
    lr, m = dtype(0.1), dtype(0.9)
    for g in grads:
        a = a * m + g
        w = w - a * lr
    np.testing.assert_allclose(w_fast, w, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_a_read_taken_before_the_update_keeps_its_value():
    v = aics.Variable(np.ones((200, 100), np.float32))
    before = v.value()
    aics.train.MomentumOptimizer(0.5, 0.9).apply_gradients([(aics.constant(np.ones((200, 100), np.float32)), v)])
    np.testing.assert_array_equal(before.numpy(), 1.0)
    np.testing.assert_allclose(v.numpy(), 0.5)


def test_nesterov_and_shape_errors_go_through_the_reference():
    w0, grads, w_fast, _ = _train((300, 100), np.float32, 2, nesterov=True)
    with use_accel(False):
        _, _, w_ref, _ = _train((300, 100), np.float32, 2, nesterov=True)
    np.testing.assert_array_equal(w_fast, w_ref)
    v = aics.Variable(np.ones((200, 100), np.float32))
    with pytest.raises(aics.errors.InvalidArgumentError, match="same shape"):
        aics.train.MomentumOptimizer(0.5, 0.9).apply_gradients([(aics.constant(np.ones((100, 200), np.float32)), v)])
