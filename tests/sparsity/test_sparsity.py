"""aicslib.sparsity: schedules against tfmot's formulas, masks against brute force, masks kept
through optimizer updates (eager and Session), RigL / sparse-momentum regrowth counts."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib import sparsity


# ---- schedules: tfmot's pruning_schedule.py, re-derived independently -------------------
def _tfmot_should_prune(step, begin, end, freq):
    # tfmot: step >= begin and (step <= end or end < 0) and floormod(step - begin, freq) == 0
    return step >= begin and (step <= end or end < 0) and (step - begin) - freq * math.floor(
        (step - begin) / freq) == 0


@settings(max_examples=200, deadline=None)
@given(begin=st.integers(0, 500), span=st.integers(1, 1000), freq=st.integers(1, 150),
       init=st.floats(0, 0.99), final=st.floats(0, 0.99), power=st.integers(1, 5),
       step=st.integers(-50, 2000))
def test_polynomial_decay_matches_tfmot_formula(begin, span, freq, init, final, power, step):
    end = begin + span
    sched = sparsity.PolynomialDecay(init, final, begin, end, power=power, frequency=freq)
    should, s = sched(step)
    p = min(1.0, max(0.0, (step - begin) / (end - begin)))
    expected = final + (init - final) * (1 - p) ** power
    assert should == _tfmot_should_prune(step, begin, end, freq)
    assert isinstance(s, np.float32)
    assert abs(float(s) - expected) < 1e-5


@settings(max_examples=100, deadline=None)
@given(begin=st.integers(0, 300), end=st.one_of(st.just(-1), st.integers(300, 900)),
       freq=st.integers(1, 120), target=st.floats(0, 0.99), step=st.integers(0, 2000))
def test_constant_sparsity_matches_tfmot_formula(begin, end, freq, target, step):
    should, s = sparsity.ConstantSparsity(target, begin, end, freq)(step)
    assert should == _tfmot_should_prune(step, begin, end, freq)
    assert s == np.float32(target)


def test_schedule_documented_points():
    # tfmot's docs example: PolynomialDecay(0.5 -> 0.8, 0..end): half way, (1-0.5)^3 = 1/8 left.
    sched = sparsity.PolynomialDecay(0.5, 0.8, begin_step=0, end_step=1000)
    assert sched(0) == (True, np.float32(0.5))
    assert sched(500)[0] and abs(sched(500)[1] - (0.8 - 0.3 / 8)) < 1e-6
    assert sched(1000) == (True, np.float32(0.8))
    assert sched(1100) == (False, np.float32(0.8))    # past end_step: no more pruning
    assert sched(50)[0] is False                      # not a multiple of frequency=100
    assert sparsity.ConstantSparsity(0.5, 0)(10 ** 6)[0]   # end_step=-1: forever


@pytest.mark.parametrize("make, message", [
    (lambda: sparsity.PolynomialDecay(0, 0.5, -1, 10), "begin_step should be >= 0"),
    (lambda: sparsity.PolynomialDecay(0, 0.5, 0, -1), "end_step cannot be -1."),
    (lambda: sparsity.ConstantSparsity(0.5, 0, -2), "end_step can be -1 or >= 0"),
    (lambda: sparsity.ConstantSparsity(0.5, 10, 5), "begin_step should be <= end_step"),
    (lambda: sparsity.ConstantSparsity(0.5, 0, frequency=0), "frequency should be > 0"),
    (lambda: sparsity.ConstantSparsity(1.0, 0), "target_sparsity must be in range"),
    (lambda: sparsity.PolynomialDecay(-0.1, 0.5, 0, 10), "initial_sparsity must be in range"),
    (lambda: sparsity.PolynomialDecay(0, 1.0, 0, 10), "final_sparsity must be in range"),
])
def test_schedule_validation_errors_are_tfmots(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# ---- magnitude_mask against a brute-force count --------------------------------------
def _brute_mask(w, s):
    flat = np.abs(w).ravel()
    k = max(int(np.round(np.float32(1 - np.float32(s)) * np.float32(flat.size))), 1)
    # keep w iff fewer than k entries are strictly larger than it
    return np.array([(flat > a).sum() < k for a in flat]).reshape(w.shape), k


@settings(max_examples=150, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=3), s=st.floats(0, 0.999),
       seed=st.integers(0, 10 ** 6), ties=st.booleans())
def test_magnitude_mask_matches_brute_force(shape, s, seed, ties):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=shape).astype(np.float32)
    if ties:   # few distinct magnitudes, both signs: ties at the threshold keep extra weights
        w = (rng.integers(-3, 4, size=shape)).astype(np.float32)
    mask = sparsity.magnitude_mask(w, s)
    expected, k = _brute_mask(w, s)
    np.testing.assert_array_equal(mask.astype(bool), expected)
    assert mask.dtype == w.dtype and mask.sum() >= k >= 1
    if not ties:
        assert mask.sum() == k


def test_magnitude_mask_rounds_half_to_even_and_keeps_one():
    w = np.arange(1, 11, dtype=np.float32)
    assert sparsity.magnitude_mask(w, 0.25).sum() == 8      # round(7.5) = 8
    assert sparsity.magnitude_mask(w, 0.35).sum() == 6      # round(6.5) = 6 (half to even)
    assert sparsity.magnitude_mask(w, 0.999).tolist() == [0] * 9 + [1]
    with pytest.raises(ValueError, match=r"range \[0,1\)"):
        sparsity.magnitude_mask(w, 1.0)
    with pytest.raises(TypeError, match="floating"):
        sparsity.magnitude_mask(np.arange(4), 0.5)


# ---- masks survive optimizer updates --------------------------------------------------
def _loss(ws, x):
    h = aics.matmul(x, ws[0])
    return aics.reduce_sum(aics.square(aics.matmul(h, ws[1]) - 1.0))


def test_eager_masks_kept_after_every_update():
    rng = np.random.default_rng(0)
    ws = [aics.Variable(rng.normal(size=(12, 8)).astype(np.float32), name="W1"),
          aics.Variable(rng.normal(size=(8, 4)).astype(np.float32), name="W2")]
    x = aics.constant(0.3 * rng.normal(size=(5, 12)).astype(np.float32))
    pruned = sparsity.prune_low_magnitude(ws, sparsity.PolynomialDecay(0.0, 0.75, 0, 20, frequency=5))
    opt = aics.train.MomentumOptimizer(0.001, 0.9)
    for step in range(25):
        pruned.update(step)
        with aics.GradientTape() as tape:
            loss = _loss(ws, x)
        pruned.apply_gradients(opt, zip(tape.gradient(loss, ws), ws))
        for v, m in zip(ws, pruned.masks):   # momentum keeps pushing pruned weights: still zero
            assert np.all(v.numpy()[m.numpy() == 0] == 0)
    assert [s for s, _ in pruned.history] == [0, 5, 10, 15, 20]
    np.testing.assert_allclose(list(pruned.sparsities().values()),
                               [1 - round(0.25 * 96) / 96, 1 - round(0.25 * 32) / 32])
    stripped = sparsity.strip_pruning(pruned)
    assert stripped is ws


def test_session_masks_kept_after_every_update():
    rng = np.random.default_rng(1)
    with aics.Graph().as_default():
        ws = [aics.Variable(rng.normal(size=(12, 8)).astype(np.float32), name="W1"),
              aics.Variable(rng.normal(size=(8, 4)).astype(np.float32), name="W2")]
        x = aics.constant(0.3 * rng.normal(size=(5, 12)).astype(np.float32))
        loss = _loss(ws, x)
        pruned = sparsity.prune_low_magnitude(ws, sparsity.ConstantSparsity(0.5, 3, frequency=4))
        train_op = pruned.wrap_train_op(aics.train.MomentumOptimizer(0.001, 0.9).minimize(loss))
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            for step in range(12):
                pruned.update(step, session=sess)
                sess.run(train_op)
                w, m = sess.run(ws), sess.run(pruned.masks)
                for wi, mi in zip(w, m):
                    assert np.all(wi[mi == 0] == 0)
                    if step >= 3:
                        assert mi.sum() == wi.size // 2
            assert [s for s, _ in pruned.history] == [3, 7, 11]


# ---- dynamic sparse training ----------------------------------------------------------
def test_rigl_drop_and_grow_counts_follow_cosine_schedule():
    rng = np.random.default_rng(2)
    ws = [aics.Variable(rng.normal(size=(30, 20)).astype(np.float32), name="A"),
          aics.Variable(rng.normal(size=(20, 10)).astype(np.float32), name="B")]
    opt = aics.train.MomentumOptimizer(0.001, 0.9)
    rigl = sparsity.RigL(ws, sparsity=0.8, end_step=40, update_frequency=10, drop_fraction=0.3,
                         optimizer=opt)
    rigl.initialize()
    x = aics.constant(0.2 * rng.normal(size=(6, 30)).astype(np.float32))
    for step in range(45):
        with aics.GradientTape() as tape:
            loss = _loss(ws, x)
        grads = tape.gradient(loss, ws)
        before = [m.numpy().copy() for m in rigl.masks]
        moved = rigl.update(step, grads)
        if step in (10, 20, 30):
            f = 0.3 / 2 * (1 + math.cos(math.pi * step / 40))
            assert moved == [round(f * 120), round(f * 40)]
            for g, b, m, w in zip(grads, before, rigl.masks, ws):
                m = m.numpy()
                assert m.sum() == b.sum()                     # nonzero count preserved
                grown = (m == 1) & (b == 0)
                # grown connections are the largest-|gradient| entries among the inactive ones
                if grown.any():
                    g = np.abs(g.numpy())
                    assert g[grown].min() >= g[(m == 0)].max(initial=0)
                    assert np.all(w.numpy()[grown] == 0)
        else:
            assert moved is None
        rigl.apply_gradients(opt, zip(grads, ws))
    assert [h[0] for h in rigl.history] == [10, 20, 30]
    assert all(abs(s - 0.8) < 1e-9 for s in rigl.sparsities().values())


def test_drop_smallest_and_grow_largest_brute_force():
    rng = np.random.default_rng(3)
    w = rng.normal(size=50)
    mask = (rng.random(50) < 0.6).astype(np.float32)
    dropped = sparsity.drop_smallest(w, mask, 5)
    gone = (mask == 1) & (dropped == 0)
    assert gone.sum() == 5 and np.abs(w[gone]).max() <= np.abs(w[dropped == 1]).min()
    scores = rng.normal(size=50)
    grown_mask, grown = sparsity.grow_largest(scores, dropped, 7)
    assert grown.sum() == 7 and np.all(dropped[grown] == 0) and grown_mask.sum() == dropped.sum() + 7
    assert np.abs(scores[grown]).min() >= np.abs(scores[(grown_mask == 0)]).max()
    with pytest.raises(ValueError, match="cannot drop"):
        sparsity.drop_smallest(w, mask, 51)


def test_redistribute_is_proportional_and_capped():
    assert sparsity.redistribute(10, [1, 1], [100, 100]).tolist() == [5, 5]
    assert sparsity.redistribute(10, [3, 1], [100, 100]).tolist() == [8, 2]   # 7.5/2.5, ties
    assert sparsity.redistribute(10, [9, 1], [4, 100]).tolist() == [4, 6]      # capped
    assert sparsity.redistribute(0, [1, 2], [3, 3]).tolist() == [0, 0]


def test_sparse_momentum_keeps_total_and_regrows_by_momentum():
    rng = np.random.default_rng(4)
    ws = [aics.Variable(rng.normal(size=(30, 20)).astype(np.float32), name="A"),
          aics.Variable(rng.normal(size=(20, 10)).astype(np.float32), name="B")]
    opt = aics.train.MomentumOptimizer(0.001, 0.9)
    sm = sparsity.SparseMomentum(ws, sparsity=0.7, end_step=30, optimizer=opt, update_frequency=10)
    sm.initialize()
    x = aics.constant(0.2 * rng.normal(size=(6, 30)).astype(np.float32))
    total = sum(int(m.numpy().sum()) for m in sm.masks)
    for step in range(31):
        before = [m.numpy().copy() for m in sm.masks]
        mom = [opt.get_slot(v, "momentum") for v in ws]
        mom = None if mom[0] is None else [m.numpy().copy() for m in mom]
        result = sm.update(step)
        if step in (10, 20):
            removed, regrown = result
            rate = 0.5 / 2 * (1 + math.cos(math.pi * step / 30))
            assert removed == [round(rate * int(b.sum())) for b in before]
            assert sum(regrown) == sum(removed)
            c = [np.abs(mm[b != 0]).mean() for mm, b in zip(mom, before)]
            expected = sparsity.redistribute(sum(removed), c, [1000, 1000]).tolist()
            assert regrown == expected           # the layers have ample room here
            assert sum(int(m.numpy().sum()) for m in sm.masks) == total
        else:
            assert result is None
        with aics.GradientTape() as tape:
            loss = _loss(ws, x)
        sm.apply_gradients(opt, zip(tape.gradient(loss, ws), ws))


def test_training_reaches_target_sparsity_and_learns():
    # A linear regression y = X w*: gradual pruning to 90% keeps the loss small when w* is sparse.
    rng = np.random.default_rng(5)
    true = np.zeros((40, 1), np.float32)
    true[rng.choice(40, 4, replace=False)] = rng.normal(size=(4, 1)) * 3
    xs = rng.normal(size=(200, 40)).astype(np.float32)
    ys = xs @ true
    w = aics.Variable(np.zeros((40, 1), np.float32), name="w")
    pruned = sparsity.prune_low_magnitude([w], sparsity.PolynomialDecay(0.0, 0.9, 10, 110, frequency=10))
    opt = aics.train.GradientDescentOptimizer(0.05)
    for step in range(150):
        pruned.update(step)
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.square(aics.matmul(xs, w) - ys))
        pruned.apply_gradients(opt, zip(tape.gradient(loss, [w]), [w]))
    assert pruned.sparsities()["w"] == pytest.approx(0.9)
    assert set(np.flatnonzero(w.numpy())) == set(np.flatnonzero(true))
    assert float(loss) < 1e-3


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="pruning_schedule must be a PruningSchedule"):
        sparsity.prune_low_magnitude([aics.Variable(np.ones(3, np.float32))], 0.5)
    with pytest.raises(TypeError, match="must be an aics.Variable"):
        sparsity.prune_low_magnitude({"W": np.ones(3)}, sparsity.ConstantSparsity(0.5, 0))
    with pytest.raises(TypeError, match="floating point"):
        sparsity.prune_low_magnitude([aics.Variable(np.ones(3, np.int32))], sparsity.ConstantSparsity(0.5, 0))
