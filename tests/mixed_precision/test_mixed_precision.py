"""Mixed precision: real low-precision storage, float32 accumulation, dtype policies, loss scaling.

References are independent of the library: the float8 formats are decoded
from their bit layouts here and rounded by searching all 256 codes; matmul
results are compared with float64 products; the dynamic loss-scale rule is
re-simulated in plain Python from Keras's documentation.
"""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib import mixed_precision as mp


# ---------------------------------------------------------------------------
# Storage

@pytest.mark.parametrize("dt,np_type,size", [
    (aics.bfloat16, ml_dtypes.bfloat16, 2), (aics.float8_e4m3fn, ml_dtypes.float8_e4m3fn, 1),
    (aics.float8_e5m2, ml_dtypes.float8_e5m2, 1), (aics.float16, np.float16, 2)])
def test_storage_is_a_real_low_precision_dtype(dt, np_type, size):
    assert dt.as_numpy_dtype is np_type and dt.size == size and dt.is_floating
    assert aics.as_dtype(np.dtype(np_type)) is dt and aics.as_dtype(dt.name) is dt
    eager = aics.cast(np.ones((3, 5), np.float32), dt).numpy()
    with aics.Graph().as_default():
        p = aics.placeholder(aics.float32, [3, 5])
        with aics.Session() as s:
            graph = s.run(aics.cast(p, dt), {p: np.ones((3, 5))})
    for arr in (eager, graph):
        assert arr.dtype == np.dtype(np_type) and arr.nbytes == 15 * size
    # a NumPy array of the type keeps it through constant()
    assert aics.constant(np.zeros(2, np_type)).dtype is dt


def test_limits_from_the_formats():
    assert aics.bfloat16.max == (2 - 2 ** -7) * 2.0 ** 127
    assert aics.float8_e4m3fn.max == 448.0 and aics.float8_e4m3fn.min == -448.0
    assert aics.float8_e5m2.max == 57344.0
    assert aics.float16.max == 65504.0


# ---------------------------------------------------------------------------
# Rounding: float8 reference decoded from the bit layout

def float8_table(exp_bits, man_bits, bias, has_inf):
    """All finite values of a float8 format, as {code: value}, from its definition."""
    table = {}
    for code in range(128):  # positive half; the sign bit mirrors it
        e, m = code >> man_bits, code & ((1 << man_bits) - 1)
        if has_inf and e == (1 << exp_bits) - 1:
            continue                                   # IEEE-like: inf and NaNs
        if not has_inf and code == 127:
            continue                                   # e4m3fn: only S.1111.111 is NaN
        if e == 0:
            value = m * 2.0 ** (1 - bias - man_bits)   # subnormal
        else:
            value = (1 + m / 2 ** man_bits) * 2.0 ** (e - bias)
        table[code] = value
    return table


E4M3 = float8_table(4, 3, 7, has_inf=False)
E5M2 = float8_table(5, 2, 15, has_inf=True)


def round_float8_reference(x, table, has_inf):
    """Nearest code, ties to the even code; past the largest value's half-step: inf or NaN."""
    if math.isnan(x):
        return math.nan
    a = abs(x)
    codes = sorted(table)
    top = codes[-1]
    step = table[top] - table[top - 1]
    candidates = [(abs(a - table[c]), c, table[c]) for c in codes]
    overflow = math.inf if has_inf else math.nan
    candidates.append((abs(a - (table[top] + step)), top + 1, overflow))  # the first value past max
    best = min(candidates, key=lambda t: (t[0], t[1] & 1))
    return math.copysign(best[2], x) if not math.isnan(best[2]) else math.nan


def test_reference_tables_hand_checked():
    assert max(E4M3.values()) == 448 and min(v for v in E4M3.values() if v) == 2.0 ** -9
    assert max(E5M2.values()) == 57344 and min(v for v in E5M2.values() if v) == 2.0 ** -16


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-70000, 70000, width=32), min_size=1, max_size=20))
def test_float8_cast_rounds_like_the_format(values):
    x = np.array(values, np.float32)
    for dt, table, has_inf in ((aics.float8_e4m3fn, E4M3, False), (aics.float8_e5m2, E5M2, True)):
        got = aics.cast(aics.cast(x, dt), aics.float32).numpy().astype(np.float64)
        want = np.array([round_float8_reference(float(v), table, has_inf) for v in x])
        np.testing.assert_array_equal(got, want)


def test_float8_ties_and_overflow():
    x = np.array([464.0, 465.0, 1.0 + 2 ** -4, 1.0 + 3 * 2 ** -4], np.float32)
    got = aics.cast(aics.cast(x, aics.float8_e4m3fn), aics.float32).numpy()
    assert got[0] == 448 and np.isnan(got[1])          # tie with the NaN code keeps 448
    assert got[2] == 1.0 and got[3] == 1.25            # ties to even mantissa
    got = aics.cast(aics.cast(np.array([61440.0, 61439.0], np.float32), aics.float8_e5m2), aics.float32)
    assert got.numpy().tolist() == [np.inf, 57344.0]


def test_float64_to_bfloat16_rounds_through_float32_as_tf():
    # TF (Eigen's bfloat16) converts a double to float first: 1 + 2**-8 + 2**-30 becomes the
    # float32 tie 1 + 2**-8, which rounds to even (1.0), though the double is above the tie.
    x = np.array([1 + 2 ** -8 + 2 ** -30], np.float64)
    assert aics.cast(x, aics.bfloat16).numpy().astype(np.float64)[0] == 1.0
    assert aics.cast(x, aics.float16).numpy()[0] == np.float16(1 + 2 ** -8)  # nearest float16


@pytest.mark.parametrize("src", [aics.bfloat16, aics.float16, aics.float8_e5m2, aics.float8_e4m3fn])
@pytest.mark.parametrize("dst", [aics.float32, aics.float64, aics.int32, aics.bool, aics.bfloat16])
def test_cast_between_low_precision_and_others(src, dst):
    v = np.array([-3.5, -1.0, 0.0, 0.75, 2.0, 12.0], np.float64)   # exact in every source format
    t = aics.cast(v, src)
    got = aics.cast(t, dst).numpy()
    if dst.is_integer:
        want = np.trunc(v).astype(np.int64)
    elif dst == aics.bool:
        want = v != 0
    else:
        want = v
    np.testing.assert_array_equal(got.astype(np.float64) if dst.is_floating else got, want)


def test_cast_gradient_returns_to_float32():
    w = aics.Variable(np.array([1.0, 2.0], np.float32))
    with aics.GradientTape() as tape:
        y = aics.reduce_sum(aics.cast(aics.cast(w, aics.bfloat16) * 3.0, aics.float32))
    g = tape.gradient(y, w)
    assert g.dtype == aics.float32 and g.numpy().tolist() == [3.0, 3.0]


# ---------------------------------------------------------------------------
# Accumulation in float32

@pytest.mark.parametrize("dt,stuck_at", [(aics.float16, 2048), (aics.bfloat16, 256)])
def test_matmul_accumulates_in_float32(dt, stuck_at):
    # Adding 1 to a low-precision running sum stops at 2**11 (float16) / 2**8 (bfloat16);
    # a float32 accumulator reaches 4096, which both formats store exactly.
    a = aics.cast(np.ones((1, 4096), np.float32), dt)
    b = aics.cast(np.ones((4096, 1), np.float32), dt)
    naive = np.zeros((), dt.as_numpy_dtype)
    for _ in range(4096):
        naive = (naive + np.ones((), dt.as_numpy_dtype)).astype(dt.as_numpy_dtype)
    assert float(naive) == stuck_at                  # what per-step rounding would give
    got = aics.matmul(a, b).numpy()
    assert got.dtype == dt.as_numpy_dtype and float(got[0, 0]) == 4096.0


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5), st.integers(1, 300), st.integers(1, 5), st.integers(0, 2 ** 31 - 1))
def test_half_matmul_rounds_once_from_a_float64_reference(m, k, n, seed):
    rng = np.random.default_rng(seed)
    for dt in (aics.float16, aics.bfloat16):
        a = rng.standard_normal((m, k)).astype(dt.as_numpy_dtype)
        b = rng.standard_normal((k, n)).astype(dt.as_numpy_dtype)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        got = aics.matmul(a, b).numpy().astype(np.float64)
        # float32 accumulation error is ~k * 2**-24 * sum|a||b|; one final rounding to the
        # format is half its spacing at the result.
        spacing = np.abs(exact).clip(2.0 ** -14) * 2.0 ** -(10 if dt == aics.float16 else 7)
        bound = 0.5 * spacing + k * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
        assert np.all(np.abs(got - exact) <= bound + 1e-30)


def _half_spacing(value, dt):
    """The distance between neighbouring ``dt`` numbers around ``value`` (normal range)."""
    mantissa_bits = 10 if dt == aics.float16 else 7
    return 2.0 ** (np.floor(np.log2(np.abs(value).clip(2.0 ** -14))) - mantissa_bits)


@pytest.mark.parametrize("dt", [aics.bfloat16, aics.float16], ids=["bfloat16", "float16"])
def test_half_sum_and_mean_of_many_values_round_once(dt):
    # 40000 values in [0, 1): the true sum (~20000) is far above where a half-precision running
    # sum stops growing (256 for bfloat16, 2048 for float16 when adding numbers near 1).
    x = np.random.default_rng(3).uniform(0, 1, 40000).astype(dt.as_numpy_dtype)
    exact = x.astype(np.float64)
    for reduce, true in ((aics.reduce_sum, exact.sum()), (aics.reduce_mean, exact.mean())):
        got = reduce(aics.constant(x)).numpy()
        assert got.dtype == dt.as_numpy_dtype
        # one rounding to the format (half a spacing) plus float32 accumulation (tiny)
        assert abs(float(got) - true) <= 0.5 * _half_spacing(true, dt) + 1e-5 * abs(true)
    # the same bound rejects accumulation in the format itself (the reference can fail)
    running = np.zeros((), dt.as_numpy_dtype)
    for chunk in x.reshape(-1, 8):      # 8 lanes, as a vectorised half sum would
        running = (running + chunk.astype(np.float64).sum()).astype(dt.as_numpy_dtype)
    assert abs(float(running) - exact.sum()) > 0.5 * _half_spacing(exact.sum(), dt) + 1e-5 * exact.sum()


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3), data=st.data(),
       seed=st.integers(0, 2 ** 31 - 1), keep=st.booleans())
def test_half_reductions_along_axes_round_once(shape, data, seed, keep):
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), max_size=len(shape), unique=True))
    rng = np.random.default_rng(seed)
    for dt in (aics.bfloat16, aics.float16):
        x = rng.standard_normal(shape).astype(dt.as_numpy_dtype)
        exact = x.astype(np.float64)
        scale = np.abs(exact).sum(axis=tuple(axes), keepdims=keep)
        n = int(np.prod([shape[a] for a in axes])) if axes else 1
        for reduce, true, size in ((aics.reduce_sum, exact.sum(axis=tuple(axes), keepdims=keep), 1),
                                   (aics.reduce_mean, exact.mean(axis=tuple(axes), keepdims=keep), n)):
            got = reduce(x, axis=axes, keepdims=keep).numpy()
            assert got.dtype == dt.as_numpy_dtype and got.shape == true.shape
            bound = 0.5 * _half_spacing(true, dt) + 2.0 ** -20 * scale / size
            assert np.all(np.abs(got.astype(np.float64) - true) <= bound)


def test_half_conv2d_accumulates_in_float32():
    x = np.ones((1, 3, 3, 512), np.float32)
    w = np.ones((3, 3, 512, 1), np.float32)       # 4608 products of 1: float16 alone stops at 2048
    for dt in (aics.float16, aics.bfloat16):
        y = aics.nn.conv2d(aics.cast(x, dt), aics.cast(w, dt), strides=1, padding="VALID")
        assert y.dtype == dt and float(y.numpy()[0, 0, 0, 0]) == float(np.float64(4608).astype(dt.as_numpy_dtype))


# ---------------------------------------------------------------------------
# Policies

def test_policy_names_and_errors():
    p = mp.Policy("mixed_float16")
    assert (p.compute_dtype, p.variable_dtype, p.name) == ("float16", "float32", "mixed_float16")
    assert (mp.Policy("mixed_bfloat16").compute_dtype, mp.Policy("float16").variable_dtype) == \
        ("bfloat16", "float16")
    with pytest.raises(ValueError, match="mixed_float16"):
        mp.Policy("mixed_float8")
    with pytest.raises(TypeError):
        mp.Policy(aics.float16)
    assert mp.global_policy().name == "float32"
    try:
        mp.set_global_policy("mixed_bfloat16")
        assert aics.keras.mixed_precision.global_policy() == mp.Policy("mixed_bfloat16")
        assert aics.keras.layers.Dense(2).compute_dtype == "bfloat16"
        with pytest.raises(ValueError, match="floating-point"):
            mp.set_global_policy("int32")
    finally:
        mp.set_global_policy(None)
    assert mp.global_policy().name == "float32"


def test_mixed_dense_in_a_graph_casts_and_keeps_float32_masters():
    with aics.Graph().as_default() as g:
        x = aics.placeholder(aics.float32, [None, 4])
        layer = aics.keras.layers.Dense(3, activation="relu", dtype=mp.Policy("mixed_float16"))
        y = layer(x)
        casts = [op for op in g.get_operations() if op.type == "Cast"]
        # input, kernel and bias are cast to float16: three Cast nodes in the layer's scope
        assert len(casts) == 3 and all(op.name.startswith("dense/") for op in casts)
        assert {op.get_attr("DstT") for op in casts} == {aics.float16}
        assert y.dtype == aics.float16
        assert [w.dtype for w in layer.weights] == [aics.float32, aics.float32]
        loss = aics.reduce_sum(aics.cast(y, aics.float32))
        grads = aics.gradients(loss, layer.trainable_weights)
        assert [gr.dtype for gr in grads] == [aics.float32, aics.float32]
        xv = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            got, k, b = s.run([y, layer.kernel, layer.bias], {x: xv})
    want = np.maximum(xv.astype(np.float16).astype(np.float64) @ k.astype(np.float16).astype(np.float64)
                      + b.astype(np.float16), 0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=1e-3)


# ---------------------------------------------------------------------------
# Loss scaling: step-by-step against a plain-Python simulation of Keras's rule

def simulate(pattern, initial_scale, growth_steps, dynamic=True):
    """(scale, counter, applied) after each step; ``pattern[i]`` says whether step i's
    gradients are finite."""
    scale, counter, out = float(initial_scale), 0, []
    for finite in pattern:
        if dynamic:
            if finite:
                if counter + 1 >= growth_steps:
                    if math.isfinite(np.float32(scale) * np.float32(2)):  # the scale is a float32
                        scale *= 2
                    counter = 0
                else:
                    counter += 1
            else:
                scale, counter = max(scale / 2, 1.0), 0
        out.append((scale, counter, finite))
    return out


PATTERN = [True, True, False, True, True, True, False, False, True, True, True, True]
X_FINITE = np.array([1.0, -2.0, 0.5], np.float32)


def _feed(finite):
    return X_FINITE if finite else np.array([1.0, np.inf, 0.5], np.float32)


def _run_eager(pattern, **kw):
    w = aics.Variable(np.array([0.5, 0.25, -1.0], np.float32), name="w")
    opt = mp.LossScaleOptimizer(aics.train.MomentumOptimizer(0.1, 0.9), **kw)
    out = []
    for finite in pattern:
        x = _feed(finite)
        with aics.GradientTape() as tape:
            loss = aics.reduce_sum(w * x * w)
            scaled = opt.get_scaled_loss(loss)
        (g,) = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
        opt.apply_gradients([(g, w)])
        counter = opt.dynamic_counter
        slot = opt.inner_optimizer.get_slot(w, "momentum")  # made by the first applied step
        out.append((float(opt.loss_scale.numpy()), None if counter is None else int(counter.numpy()),
                    w.numpy().copy(), np.zeros(3) if slot is None else slot.numpy().copy()))
    return out


def _run_graph(pattern, **kw):
    with aics.Graph().as_default():
        w = aics.Variable(np.array([0.5, 0.25, -1.0], np.float32), name="w")
        x = aics.placeholder(aics.float32, [3])
        step = aics.Variable(0, dtype=aics.int64, trainable=False, name="global_step")
        opt = mp.LossScaleOptimizer(aics.train.MomentumOptimizer(0.1, 0.9), **kw)
        train = opt.minimize(aics.reduce_sum(w * x * w), global_step=step, var_list=[w])
        slot = opt.inner_optimizer.get_slot(w, "momentum")
        counter = opt.dynamic_counter
        out = []
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            for finite in pattern:
                s.run(train, {x: _feed(finite)})
                sc, wv, sv, st_ = s.run([opt.loss_scale, w, slot, step])
                out.append((float(sc), None if counter is None else int(s.run(counter)), wv, sv, int(st_)))
    return out


def _momentum_reference(pattern):
    """Plain NumPy momentum on the true gradient 2*w*x, skipping the non-finite steps."""
    w, acc, out = np.array([0.5, 0.25, -1.0]), np.zeros(3), []
    for finite in pattern:
        if finite:
            acc = 0.9 * acc + 2 * w * X_FINITE
            w = w - 0.1 * acc
        out.append((w.copy(), acc.copy()))
    return out


@pytest.mark.parametrize("runner", [_run_eager, _run_graph], ids=["eager", "graph"])
def test_dynamic_loss_scale_step_by_step(runner):
    got = runner(PATTERN, initial_scale=8.0, dynamic_growth_steps=3)
    want = simulate(PATTERN, 8.0, 3)
    ref = _momentum_reference(PATTERN)
    applied = 0
    for i, ((scale, counter, w, slot, *rest), (ws, wc, finite), (rw, racc)) in enumerate(zip(got, want, ref)):
        assert (scale, counter) == (ws, wc), f"step {i}"
        np.testing.assert_allclose(w, rw, rtol=1e-6, err_msg=f"step {i}")
        np.testing.assert_allclose(slot, racc, rtol=1e-6, err_msg=f"step {i}")
        applied += finite
        if rest:
            assert rest[0] == applied, f"global_step at step {i}: skipped steps do not count"


def test_graph_and_eager_agree_and_scale_never_below_one():
    pattern = [False] * 6 + [True] * 5
    e, g = _run_eager(pattern, initial_scale=4.0, dynamic_growth_steps=2), \
        _run_graph(pattern, initial_scale=4.0, dynamic_growth_steps=2)
    assert [r[:2] for r in e] == [r[:2] for r in g] == [s[:2] for s in simulate(pattern, 4.0, 2)]
    assert min(r[0] for r in e) == 1.0
    for a, b in zip(e, g):
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6)


def test_fixed_scale_never_changes_and_never_skips_finite_steps():
    got = _run_eager([True, False, True], dynamic=False, initial_scale=128)
    assert [r[0] for r in got] == [128.0] * 3 and got[0][1] is None
    ref = _momentum_reference([True, False, True])
    np.testing.assert_allclose(got[2][2], ref[2][0], rtol=1e-6)


def test_scale_stops_doubling_before_infinity():
    assert simulate([True] * 3, 2.0 ** 127, 1)[-1][0] == 2.0 ** 127
    w = aics.Variable(np.ones(2, np.float32))
    opt = mp.LossScaleOptimizer(aics.train.GradientDescentOptimizer(0.0), initial_scale=2.0 ** 127,
                                dynamic_growth_steps=1)
    opt.apply_gradients([(aics.constant([1.0, 1.0]), w)])
    assert opt.loss_scale.numpy() == 2.0 ** 127 and opt.dynamic_counter.numpy() == 0


def test_scaling_keeps_float16_gradients_from_underflowing():
    # loss = sum(y * 2**-13) * 2**-13: the gradient reaching y is 2**-26, below float16's
    # smallest subnormal (2**-24), so it underflows to 0 unless the loss is scaled first.
    x = np.full((1, 4), 1.0, np.float32)

    def grad_of(scale):
        w = aics.Variable(np.ones((4, 1), np.float32))
        opt = mp.LossScaleOptimizer(aics.train.GradientDescentOptimizer(1.0), dynamic=False,
                                    initial_scale=scale)
        with aics.GradientTape() as tape:
            y = aics.matmul(aics.cast(x, aics.float16), aics.cast(w, aics.float16))
            loss = aics.reduce_sum(y * np.float16(2.0 ** -13)) * np.float16(2.0 ** -13)
            scaled = opt.get_scaled_loss(loss)
        (g,) = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
        return g.numpy()
    assert np.all(grad_of(1) == 0)
    np.testing.assert_array_equal(grad_of(2 ** 15), np.full((4, 1), 2.0 ** -26, np.float32))


def test_scaled_loss_and_unscaled_gradients_values():
    opt = mp.LossScaleOptimizer(aics.train.GradientDescentOptimizer(0.1), initial_scale=64)
    assert opt.get_scaled_loss(aics.constant(1.5)).numpy() == 96.0
    assert opt.get_scaled_loss(lambda: aics.constant(2.0))().numpy() == 128.0
    g = opt.get_unscaled_gradients([aics.constant([64.0, 128.0]), None])
    assert g[1] is None and g[0].numpy().tolist() == [1.0, 2.0]
    assert (opt.initial_scale, opt.dynamic_growth_steps, opt.dynamic) == (64.0, 2000, True)
    assert mp.LossScaleOptimizer(aics.train.GradientDescentOptimizer(0.1)).initial_scale == 2.0 ** 15


def test_constructor_errors_as_keras():
    sgd = aics.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="initial_scale"):
        mp.LossScaleOptimizer(sgd, dynamic=False)
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        mp.LossScaleOptimizer(sgd, dynamic=False, initial_scale=2, dynamic_growth_steps=10)
    with pytest.raises(TypeError, match="bool"):
        mp.LossScaleOptimizer(sgd, "dynamic")
    with pytest.raises(TypeError, match="inner_optimizer"):
        mp.LossScaleOptimizer("sgd")


class _AnnouncingAdam(aics.train.AdamOptimizer):
    """Adam whose every per-variable update also prints a line when it runs: a side effect
    outside the variables, so the test sees whether an update op ran, not only its result."""

    def _apply_dense(self, grad, var):
        update = super()._apply_dense(grad, var)
        with aics.control_dependencies([update]):
            return aics.Print(aics.constant(0), [], message=f"UPDATE RAN {var.op.name}").op


def test_graph_skip_is_a_real_conditional_with_tf1_semantics(capsys):
    # TF1's MixedPrecisionLossScaleOptimizer (TF 2.21) around AdamOptimizer: on a non-finite
    # step the weights, m, v, beta1_power, beta2_power and global_step keep their values and
    # the scale halves; no update op runs (a cond, not a select that undoes the update).
    with aics.Graph().as_default() as g:
        w = aics.Variable(np.array([0.5, 0.25, -1.0], np.float32), name="w")
        x = aics.placeholder(aics.float32, [3])
        step = aics.Variable(0, dtype=aics.int64, trainable=False, name="global_step")
        opt = mp.LossScaleOptimizer(_AnnouncingAdam(0.1), initial_scale=1024.0, dynamic_growth_steps=100)
        train = opt.minimize(aics.reduce_sum(w * x * w), global_step=step, var_list=[w])
        types = {op.type for op in g.get_operations()}
        assert "Switch" in types
        state = [w, opt.inner_optimizer.get_slot(w, "m"), opt.inner_optimizer.get_slot(w, "v"),
                 *opt.inner_optimizer.variables()[-2:], step]
        assert [v.op.name for v in state[3:5]] == ["beta1_power", "beta2_power"]
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            history = []
            for finite in [True, False, False, True]:
                capsys.readouterr()
                s.run(train, {x: _feed(finite)})
                ran = "UPDATE RAN w" in capsys.readouterr().err
                assert ran == finite
                history.append((s.run(state), float(s.run(opt.loss_scale))))
    # independent reference: TF1 Adam (bias correction through the beta powers) on 2*w*x
    wr, m, v, b1p, b2p = np.array([0.5, 0.25, -1.0]), np.zeros(3), np.zeros(3), 0.9, 0.999
    want_scales = [1024.0, 512.0, 256.0, 256.0]
    applied = 0
    for i, (finite, ((wv, mv, vv, b1v, b2v, sv), scale)) in enumerate(
            zip([True, False, False, True], history)):
        if finite:
            gr = 2 * wr * X_FINITE
            m, v = 0.9 * m + 0.1 * gr, 0.999 * v + 0.001 * gr * gr
            lr = 0.1 * np.sqrt(1 - b2p) / (1 - b1p)
            wr = wr - lr * m / (np.sqrt(v) + 1e-8)
            b1p, b2p, applied = b1p * 0.9, b2p * 0.999, applied + 1
        np.testing.assert_allclose(wv, wr, rtol=1e-5, err_msg=f"step {i}")
        np.testing.assert_allclose(mv, m, rtol=1e-5, err_msg=f"step {i}")
        np.testing.assert_allclose(vv, v, rtol=5e-5, err_msg=f"step {i}")  # float32 (1 - beta2)
        np.testing.assert_allclose([b1v, b2v], [b1p, b2p], rtol=1e-6, err_msg=f"step {i}")
        assert (int(sv), scale) == (applied, want_scales[i]), f"step {i}"
    # the skipped steps left the state bit-identical, not merely close
    for a, b in zip(history[0][0], history[2][0]):
        np.testing.assert_array_equal(a, b)


def test_inner_optimizer_reusable_outside_the_cond():
    # The branch's hyperparameter constants are dead on a skipped step; a plain train op
    # built afterwards with the same inner optimizer must not pick them up.
    with aics.Graph().as_default():
        w = aics.Variable(np.array([1.0, 2.0], np.float32))
        x = aics.placeholder(aics.float32, [2])
        inner = aics.train.GradientDescentOptimizer(0.5)
        scaled = mp.LossScaleOptimizer(inner).minimize(aics.reduce_sum(w * x), var_list=[w])
        y = aics.placeholder(aics.float32, [2])
        plain = inner.minimize(aics.reduce_sum(w * y), var_list=[w])
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            s.run(scaled, {x: [np.inf, 1.0]})      # skipped
            s.run(plain, {y: [1.0, 1.0]})          # independent of the cond: w -= 0.5
            np.testing.assert_array_equal(s.run(w), [0.5, 1.5])


def test_loss_scaling_inside_aics_function_matches_eager():
    # The loss-scale variables are made once outside the trace (init_scope); the skip is the
    # traced cond. Same pattern and same numbers as the eager run.
    pattern = [True, False, True, True, False, True]

    def run(wrap):
        w = aics.Variable(np.array([0.5, 0.25, -1.0], np.float32))
        opt = mp.LossScaleOptimizer(aics.train.AdamOptimizer(0.1), initial_scale=8.0,
                                    dynamic_growth_steps=2)

        def step(x):
            with aics.GradientTape() as tape:
                scaled = opt.get_scaled_loss(aics.reduce_sum(w * x * w))
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
            opt.apply_gradients(zip(grads, [w]))
        step = wrap(step)
        out = []
        for finite in pattern:
            step(aics.constant(_feed(finite)))
            out.append((float(opt.loss_scale.numpy()), w.numpy().copy()))
        return out
    eager, traced = run(lambda f: f), run(aics.function)
    assert [s for s, _ in traced] == [s for s, _ in eager] == [s for s, _, _ in simulate(pattern, 8.0, 2)]
    for (_, a), (_, b) in zip(eager, traced):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    np.testing.assert_array_equal(traced[0][1], traced[1][1])      # the skipped step changed nothing
