"""ResourceApplyMomentum in C (aicslib/accel/src/aics_training.c, aicslib/accel/training.py) against
the NumPy reference kernel (aicslib/kernels/training_ops.py), bit for bit on every instruction set,
and both against TF's momentum rule applied element by element in float32 (training_ops.cc:
accum = accum * momentum + grad; var -= lr * accum, or var -= grad * lr + accum * momentum * lr with
use_nesterov)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aicslib as aics
from aicslib import flags
from aicslib.accel import c_training, native_loader, use_accel
from aicslib.accel.training import C_FROM_ELEMENTS, momentum_update_in_c
from aicslib.kernels.training_ops import momentum_update

from native_library import library_fixture


lib = library_fixture(c_training, "C training kernel")


def loop_momentum(w, a, g, lr, m, nesterov):
    """TF's rule, one float32 element at a time."""
    w, a = w.copy().reshape(-1), a.copy().reshape(-1)
    for i, gi in enumerate(g.reshape(-1)):
        a[i] = np.float32(a[i] * m) + gi
        step = np.float32(np.float32(gi * lr) + np.float32(a[i] * np.float32(m * lr))) if nesterov \
            else np.float32(a[i] * lr)
        w[i] = w[i] - step
    return w.reshape(g.shape), a.reshape(g.shape)


def bits(x):
    return np.asarray(x).view(np.uint32)


@settings(max_examples=40, deadline=None)
@given(shape=st.sampled_from([(), (1,), (7,), (33, 5), (4, 3, 17)]), nesterov=st.booleans(),
       specials=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_c_update_gives_the_numpy_kernels_bits_and_tfs_rule(lib, shape, nesterov, specials, seed):
    rng = np.random.default_rng(seed)
    w, a, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    if specials and g.size:
        g.reshape(-1)[0] = np.inf if g.size == 1 else np.nan
    lr, m = np.float32(rng.uniform(1e-3, 1)), np.float32(rng.uniform(0, 0.99))
    want_w, want_a = loop_momentum(w, a, g, lr, m, nesterov)
    results = []
    try:
        for isa in native_loader.supported_isas():
            native_loader.set_isa(isa)
            cw, ca = w.copy(), a.copy()
            c_training.apply_momentum(lib, cw, ca, g, lr, m, nesterov)
            results.append((cw, ca))
    finally:
        native_loader.set_isa(flags.ACCEL_ISA)
    nw, na = w.copy(), a.copy()
    momentum_update(nw, na, g, lr, m, nesterov)
    with np.errstate(invalid="ignore"):
        for cw, ca in results:
            assert np.array_equal(bits(cw), bits(nw)) and np.array_equal(bits(ca), bits(na))
        assert np.array_equal(bits(nw), bits(want_w)) and np.array_equal(bits(na), bits(want_a))


@pytest.mark.parametrize("size", [C_FROM_ELEMENTS - 1, C_FROM_ELEMENTS + 5])
def test_the_kernels_update_has_the_numpy_bits_on_either_side_of_the_c_threshold(lib, size):
    rng = np.random.default_rng(size)
    w, a, g = (rng.standard_normal(size).astype(np.float32) for _ in range(3))
    cw, ca, nw, na = w.copy(), a.copy(), w.copy(), a.copy()
    momentum_update_in_c(cw, ca, g, np.float32(0.05), np.float32(0.9), True)
    momentum_update(nw, na, g, np.float32(0.05), np.float32(0.9), True)
    assert np.array_equal(bits(cw), bits(nw)) and np.array_equal(bits(ca), bits(na))


def test_a_gradient_the_c_kernel_cannot_take_goes_through_numpy(lib):
    rng = np.random.default_rng(1)
    w, a = rng.standard_normal((2, 128, 160)).astype(np.float32), rng.standard_normal((128, 160)).astype(np.float32)
    g = rng.standard_normal((160, 128)).astype(np.float32).T          # not contiguous
    assert not c_training.handles(w[0], a, g)
    cw, ca, nw, na = w[0].copy(), a.copy(), w[0].copy(), a.copy()
    momentum_update_in_c(cw, ca, g, np.float32(0.1), np.float32(0.9), False)
    momentum_update(nw, na, g, np.float32(0.1), np.float32(0.9), False)
    assert np.array_equal(cw, nw) and np.array_equal(ca, na)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_optimizer_trains_the_same_with_and_without_the_speed_layer(lib, nesterov):
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((200, 100)).astype(np.float32)     # above C_FROM_ELEMENTS: in C
    x = rng.standard_normal((8, 200)).astype(np.float32)
    finals = []
    for on in (True, False):
        with use_accel(on):
            w = aics.Variable(w0)
            opt = aics.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov)
            for _ in range(3):
                with aics.GradientTape() as tape:
                    loss = aics.reduce_sum(aics.square(aics.matmul(x, w)))
                opt.apply_gradients([(tape.gradient(loss, w), w)])
            finals.append(w.numpy())
    assert np.array_equal(bits(finals[0]), bits(finals[1]))
