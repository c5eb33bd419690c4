"""The execution layer (framework/execute.py): one KernelCall for eager and Session (and
the same results in every mode, through the ``run_op`` fixture), the eager signature
cache, and Python scalars converted once per value."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import aicslib as aics
from aicslib.framework import execute
from aicslib.framework.execute import KernelCall, invalidate_caches



@pytest.fixture
def new_op(op_name):
    """Registers an op built by ``build(builder)`` under a fresh name (removed afterwards)."""
    def make(build):
        n = op_name("ExecTest")
        build(aics.register_op(n))
        return n
    return make


def _in_session(fn, feeds=None):
    g = aics.Graph()
    with g.as_default():
        fetch = fn()
        with aics.Session() as s:
            return s.run(fetch)


class TestKernelCall:
    def test_list_inputs_and_list_outputs_in_every_mode(self, run_op, new_op):
        # "SplitSum": N inputs -> (their sum, each input doubled as a list of N outputs)
        n = new_op(lambda b: b.input("xs: N * T").output("total: T").output("doubled: N * T")
                   .attr("N: int >= 1").attr("T: {float, double}"))
        seen = []

        @aics.register_kernel(n, type_constraint={"T": [aics.float32, aics.float64]})
        def _split_sum(xs):
            seen.append(len(xs))
            return sum(xs), [2 * x for x in xs]

        vals = [np.arange(3, dtype=np.float32) + i for i in range(3)]
        total, doubled = run_op(lambda *xs: aics.raw_ops.__getattr__(n)(xs=list(xs)), *vals)
        np.testing.assert_array_equal(total, vals[0] + vals[1] + vals[2])
        assert [d.tolist() for d in doubled] == [(2 * v).tolist() for v in vals]
        assert seen == [3]  # the kernel saw one grouped list argument

    def test_bfloat16_outputs_rounded_in_every_mode(self, run_op):
        x = np.array([1.0 + 2 ** -10, 3.0 + 2 ** -9], np.float32)   # not representable in bfloat16
        want = np.array([1.0, 3.0], np.float32)                      # 8 significant bits, round-to-even
        got = run_op(lambda x, z: aics.add(aics.cast(x, aics.bfloat16), aics.cast(z, aics.bfloat16)),
                     x, np.zeros(2, np.float32))
        assert got.dtype == aics.bfloat16.as_numpy_dtype
        np.testing.assert_array_equal(got, want)

    def test_session_and_eager_build_the_same_object(self, monkeypatch):
        made = []
        real_init = KernelCall.__init__

        def spy(self, op_def, attrs, device, lengths, node_name, resources, session=None):
            made.append((op_def.name, node_name, session is not None))
            real_init(self, op_def, attrs, device, lengths, node_name, resources, session)
        monkeypatch.setattr(KernelCall, "__init__", spy)
        invalidate_caches()
        aics.subtract(aics.constant([1.0]), aics.constant([2.0]))
        _in_session(lambda: aics.subtract(aics.constant([1.0]), aics.constant([2.0]), name="d"))
        assert ("Sub", "Sub", False) in made      # eager: one per (op, device, attrs)
        assert ("Sub", "d", True) in made         # Session: one per node

    def test_kernel_returning_wrong_dtype_is_an_internal_error(self, run_op, new_op):
        n = new_op(lambda b: b.input("x: float").output("y: float"))
        aics.register_kernel(n)(lambda x: x.astype(np.float64))
        with pytest.raises(aics.errors.InternalError, match="returned float64 where the op declares float32"):
            run_op(lambda x: aics.raw_ops.__getattr__(n)(x=x), np.array([1.0], np.float32))


class TestSignatureCache:
    def test_one_kernel_call_per_signature(self):
        invalidate_caches()
        x = aics.constant(np.ones(3, np.float32))
        for _ in range(50):
            x = x * 1.0 + x
        info = execute.cache_info()
        assert info["kernel_calls"] == 2 and info["signatures"] == 2

    def test_variables_read_their_current_value(self):
        v = aics.Variable(np.array([1.0, 2.0], np.float32))
        for step in range(3):
            np.testing.assert_array_equal((v + v).numpy(), 2 * np.array([1.0, 2.0]) + 2 * step)
            v.assign_add([1.0, 1.0])

    def test_arrays_are_converted_on_every_call(self):
        x = aics.constant(np.zeros(2, np.float32))
        for k in range(4):
            np.testing.assert_array_equal(aics.add(x, np.full(2, k, np.float32)).numpy(), [k, k])

    def test_reregistered_kernel_is_used(self, new_op):
        n = new_op(lambda b: b.input("x: float").output("y: float"))
        aics.register_kernel(n)(lambda x: x + 1)
        op = aics.raw_ops.__getattr__(n)
        assert op(x=aics.constant([1.0])).numpy().tolist() == [2.0]
        aics.kernel_registry.unregister(n)
        aics.register_kernel(n)(lambda x: x + 10)
        assert op(x=aics.constant([1.0])).numpy().tolist() == [11.0]


class TestScalars:
    @given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000))
    def test_tensor_op_scalar_matches_numpy(self, f, i):
        xf = np.array([0.5, -2.0, 3.25], np.float32)
        xi = np.array([1, -7, 40], np.int32)
        np.testing.assert_array_equal((aics.constant(xf) * f + 1.0).numpy(), xf * np.float32(f) + np.float32(1))
        np.testing.assert_array_equal((aics.constant(xi) + i).numpy(), xi + np.int32(i))
        np.testing.assert_array_equal((i - aics.constant(xi)).numpy(), np.int32(i) - xi)

    def test_scalar_dtype_follows_the_tensor(self):
        for dt in (aics.float16, aics.float32, aics.float64, aics.int32, aics.int64):
            y = aics.constant(np.array([2], dt.as_numpy_dtype)) * 3
            assert y.dtype == dt and y.numpy().tolist() == [6]

    def test_bad_scalar_raises_every_time(self):
        xi = aics.constant(np.array([1, 2], np.int32))
        xi + 1  # caches (int32, int)
        for _ in range(3):
            with pytest.raises(TypeError, match="Expected int32"):
                xi + 1.5
        with pytest.raises((TypeError, ValueError), match="int32"):
            xi + 2 ** 40          # same signature as xi + 1, but does not fit

    def test_scalar_only_calls_are_not_cached_by_type(self):
        # With no tensor input, the dtype comes from the values (2**40 needs int64), so the
        # signature (int, int) must not fix it.
        invalidate_caches()
        assert aics.add(2 ** 40, 1).dtype == aics.int64
        assert aics.add(1, 1).dtype == aics.int32
        big = aics.add(2 ** 40, 1)
        assert big.dtype == aics.int64 and big.numpy() == 2 ** 40 + 1

    def test_true_and_one_are_different_constants(self):
        x = aics.constant([1.0, 1.0])
        assert (x * 1).numpy().tolist() == [1.0, 1.0]
        b = aics.constant([True, False])
        assert aics.logical_and(b, True).numpy().tolist() == [True, False]
        assert aics.logical_and(b, False).numpy().tolist() == [False, False]

    def test_nan_does_not_grow_the_cache(self):
        x = aics.constant([1.0])
        x + 0.0
        before = execute.cache_info()["scalars"]
        for _ in range(100):
            assert math.isnan((x + float("nan")).numpy()[0])
        assert execute.cache_info()["scalars"] == before

    def test_cached_scalars_cannot_be_corrupted(self, new_op):
        # A kernel that (wrongly) writes into its input: the shared constant is read-only.
        n = new_op(lambda b: b.input("x: float").output("y: float"))

        @aics.register_kernel(n)
        def _increment_in_place(x):
            x += 1
            return x
        op = aics.raw_ops.__getattr__(n)
        for _ in range(3):
            try:
                assert op(x=5.0).numpy() == 6.0
            except aics.errors.InvalidArgumentError as e:
                assert "read-only" in str(e)
        assert (aics.constant(0.0) + 5.0).numpy() == 5.0

    def test_gradient_through_scalar_ops(self):
        x = aics.constant([1.0, 2.0, 3.0])
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = aics.reduce_sum((x * 3.0 - 1.0) ** 2)
        g = tape.gradient(y, x).numpy()
        np.testing.assert_allclose(g, 2 * (3 * np.array([1.0, 2.0, 3.0]) - 1) * 3, rtol=1e-6)


def _outcome(fn):
    try:
        r = fn()
        return ("ok", r.dtype, r.numpy().tolist())
    except Exception as e:  # the same error class must come back, cached or not
        return ("error", type(e))


_scalar = st.one_of(st.booleans(), st.integers(-2 ** 41, 2 ** 41), st.integers(-5, 5),
                    st.floats(-1e3, 1e3, allow_nan=False))


@given(st.lists(st.tuples(_scalar, _scalar), min_size=1, max_size=8))
def test_cached_calls_behave_as_uncached(pairs):
    """Whatever aics.add does with fresh caches, it does after any earlier calls."""
    x = aics.constant(np.array([3], np.int64))
    warm = []
    for a, b in pairs:
        warm.append((_outcome(lambda: aics.add(a, b)), _outcome(lambda: x - a)))
    for (a, b), got in zip(pairs, warm):
        invalidate_caches()
        assert got == (_outcome(lambda: aics.add(a, b)), _outcome(lambda: x - a)), (a, b)
