"""Core math and array ops against NumPy references, in every execution mode.

Every op is computed in each mode of the ``run_op`` fixture (tests/op_modes.py:
eagerly, through a Session with placeholders fed the same arrays, and inside
``aics.function``); each must match an independent NumPy computation
(element-wise ufuncs in float64, explicit loops for matmul and reductions).
Hypothesis drives the broadcasting and shape cases.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import aicslib as aics


def check(run_op, fn, ref, *arrays, rtol=1e-6, atol=0.0, dtype=None):
    """``fn`` run on ``arrays`` in ``run_op``'s mode must match ``ref`` (NumPy on the arrays); in
    the graph modes the static shape inferred while building must be the one that ran."""
    got = run_op(fn, *arrays, static_shapes=True)
    expected = ref(*arrays)
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g_, e_ in zip(got, expected):
            _compare(g_, e_, rtol, atol, dtype)
    else:
        _compare(got, expected, rtol, atol, dtype)


def _compare(got, expected, rtol, atol, dtype):
    got = np.asarray(got)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    if dtype is not None:
        assert got.dtype == dtype
    if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def _w32(v):
    """The float32 nearest to ``v`` (hypothesis wants exactly representable bounds)."""
    return float(np.float32(v))


def f32(shape, lo=-5.0, hi=5.0):
    return hnp.arrays(np.float32, shape, elements=st.floats(_w32(lo), _w32(hi), width=32))


def pair_broadcast(lo=-5.0, hi=5.0, dtype=np.float32):
    elems = st.floats(_w32(lo), _w32(hi), width=32) if dtype == np.float32 else st.integers(-20, 20)

    @st.composite
    def strat(draw):
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
        a = draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=elems))
        b = draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=elems))
        return a, b
    return strat()


# ---------------------------------------------------------------------------
# Element-wise binary ops with broadcasting.

_BINARY = {
    "add": (aics.add, lambda a, b: a.astype(np.float64) + b),
    "subtract": (aics.subtract, lambda a, b: a.astype(np.float64) - b),
    "multiply": (aics.multiply, lambda a, b: a.astype(np.float64) * b),
    "maximum": (aics.maximum, np.maximum),
    "minimum": (aics.minimum, np.minimum),
    "squared_difference": (aics.squared_difference, lambda a, b: (a.astype(np.float64) - b) ** 2),
}
_CMP = {
    "greater": (aics.greater, np.greater), "less": (aics.less, np.less),
    "equal": (aics.equal, np.equal), "greater_equal": (aics.greater_equal, np.greater_equal),
    "less_equal": (aics.less_equal, np.less_equal), "not_equal": (aics.not_equal, np.not_equal),
}


class TestBinaryBroadcasting:
    @pytest.mark.parametrize("name", sorted(_BINARY))
    @given(ab=pair_broadcast())
    def test_float(self, run_op, name, ab):
        fn, ref = _BINARY[name]
        check(run_op, fn, ref, *ab, rtol=1e-6, atol=1e-5, dtype=np.float32)

    @pytest.mark.parametrize("name", sorted(_CMP))
    @given(ab=pair_broadcast(-2, 2))
    def test_comparisons(self, run_op, name, ab):
        fn, ref = _CMP[name]
        a, b = np.round(ab[0]), np.round(ab[1])  # make ties common
        check(run_op, fn, ref, a, b, dtype=np.bool_)

    @given(ab=pair_broadcast(dtype=np.int32))
    def test_int_add_mul(self, run_op, ab):
        a, b = ab
        check(run_op, aics.add, lambda x, y: x + y, a, b, dtype=np.int32)
        check(run_op, aics.multiply, lambda x, y: x * y, a, b, dtype=np.int32)

    @given(ab=pair_broadcast(0.5, 5.0))
    def test_divide(self, run_op, ab):
        check(run_op, aics.divide, lambda a, b: a.astype(np.float64) / b, *ab, rtol=1e-6, dtype=np.float32)

    def test_divide_ints_is_float64(self, run_op):
        a = np.array([7, -7, 1], np.int32)
        b = np.array([2, 2, 3], np.int32)
        check(run_op, aics.divide, lambda x, y: x / y, a, b, dtype=np.float64)

    @given(ab=pair_broadcast(0.1, 3.0))
    def test_pow(self, run_op, ab):
        check(run_op, aics.pow, lambda a, b: np.power(a.astype(np.float64), b), *ab, rtol=1e-5)

    def test_pow_ints(self, run_op):
        check(run_op, aics.pow, lambda a, b: a ** b, np.array([2, -3, 5], np.int32), np.array([3, 2, 0], np.int32),
              dtype=np.int32)

    def test_int_pow_negative_exponent_is_error(self):
        with pytest.raises(aics.errors.InvalidArgumentError, match="negative"):
            aics.pow(np.array([2], np.int32), np.array([-1], np.int32))

    def test_incompatible_shapes(self):
        with pytest.raises(aics.errors.InvalidArgumentError, match="Dimensions must be equal"):
            aics.add(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))

    @given(st.lists(st.booleans(), min_size=1, max_size=6).flatmap(
        lambda p: st.tuples(st.just(np.array(p)),
                            st.lists(st.booleans(), min_size=len(p), max_size=len(p)).map(np.array))))
    def test_logical_and(self, run_op, pq):
        p, q = pq
        check(run_op, aics.logical_and, np.logical_and, p, q, dtype=np.bool_)
        check(run_op, aics.logical_or, np.logical_or, p, q, dtype=np.bool_)
        check(run_op, aics.logical_not, np.logical_not, p, dtype=np.bool_)


# ---------------------------------------------------------------------------
# Unary ops.

_UNARY = {
    "negative": (aics.negative, np.negative, (-5, 5)),
    "abs": (aics.abs, np.abs, (-5, 5)),
    "sign": (aics.sign, np.sign, (-2, 2)),
    "square": (aics.square, lambda x: x.astype(np.float64) ** 2, (-5, 5)),
    "sqrt": (aics.sqrt, lambda x: np.sqrt(x.astype(np.float64)), (0, 10)),
    "exp": (aics.exp, lambda x: np.exp(x.astype(np.float64)), (-5, 5)),
    "log": (aics.log, lambda x: np.log(x.astype(np.float64)), (0.01, 10)),
    "log1p": (aics.log1p, lambda x: np.log1p(x.astype(np.float64)), (-0.5, 10)),
    "sin": (aics.sin, lambda x: np.sin(x.astype(np.float64)), (-5, 5)),
    "cos": (aics.cos, lambda x: np.cos(x.astype(np.float64)), (-5, 5)),
    "tan": (aics.tan, lambda x: np.tan(x.astype(np.float64)), (-1.2, 1.2)),
    "tanh": (aics.tanh, lambda x: np.tanh(x.astype(np.float64)), (-5, 5)),
    "sigmoid": (aics.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x.astype(np.float64))), (-20, 20)),
    "reciprocal": (aics.reciprocal, lambda x: 1.0 / x.astype(np.float64), (0.1, 5)),
    "rsqrt": (aics.rsqrt, lambda x: 1.0 / np.sqrt(x.astype(np.float64)), (0.1, 5)),
}


class TestUnary:
    @pytest.mark.parametrize("name", sorted(_UNARY))
    @given(data=st.data())
    def test_float32(self, run_op, name, data):
        fn, ref, (lo, hi) = _UNARY[name]
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        x = data.draw(f32(shape, lo, hi))
        check(run_op, fn, ref, x, rtol=2e-6, atol=1e-6, dtype=np.float32)

    @pytest.mark.parametrize("name", ["exp", "sin", "tanh", "sigmoid", "sqrt", "log"])
    def test_float64_precision(self, run_op, name):
        fn, ref, (lo, hi) = _UNARY[name]
        x = np.linspace(max(lo, 0.01), hi, 11)
        check(run_op, fn, ref, x, rtol=1e-14, dtype=np.float64)

    def test_sigmoid_extremes_stable(self):
        x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], np.float32)
        got = aics.sigmoid(x).numpy()
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, [0.0, 1.9287498e-22, 0.5, 1.0, 1.0], rtol=1e-6)

    def test_int_unary(self, run_op):
        x = np.array([-3, 0, 4], np.int32)
        check(run_op, aics.negative, np.negative, x, dtype=np.int32)
        check(run_op, aics.abs, np.abs, x, dtype=np.int32)
        check(run_op, aics.sign, np.sign, x, dtype=np.int32)
        check(run_op, aics.square, np.square, x, dtype=np.int32)

    def test_is_finite(self, run_op):
        x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
        check(run_op, aics.is_finite, np.isfinite, x, dtype=np.bool_)

    def test_float_only_ops_reject_ints(self):
        with pytest.raises(TypeError, match="int32"):
            aics.sqrt(np.array([4], np.int32))


# ---------------------------------------------------------------------------
# where, clip_by_value, add_n.

class TestSelectAndClip:
    @given(data=st.data())
    def test_where_broadcasts(self, run_op, data):
        shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
        c = data.draw(hnp.arrays(np.bool_, shapes.input_shapes[0]))
        x = data.draw(f32(shapes.input_shapes[1]))
        y = data.draw(f32(shapes.input_shapes[2]))

        def brute(c, x, y):
            out = np.empty(shapes.result_shape, np.float32)
            cb, xb, yb = (np.broadcast_to(v, shapes.result_shape) for v in (c, x, y))
            for idx in itertools.product(*[range(d) for d in shapes.result_shape]):
                out[idx] = xb[idx] if cb[idx] else yb[idx]
            return out
        check(run_op, aics.where, brute, c, x, y)

    @given(x=f32(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4), -10, 10),
           lo=st.floats(-5, 0, width=32), hi=st.floats(0, 5, width=32))
    def test_clip_by_value(self, run_op, x, lo, hi):
        def brute(x):
            flat = [min(max(v, lo), hi) for v in x.reshape(-1).tolist()]
            return np.array(flat, np.float32).reshape(x.shape)
        check(run_op, lambda t: aics.clip_by_value(t, lo, hi), brute, x, dtype=np.float32)

    def test_clip_min_above_max(self):
        with pytest.raises(aics.errors.InvalidArgumentError):
            aics.clip_by_value(np.ones(3, np.float32), 2.0, 1.0)

    def test_add_n(self, run_op):
        xs = [np.random.RandomState(i).randn(2, 3).astype(np.float32) for i in range(4)]
        check(run_op, lambda *t: aics.add_n(list(t)), lambda *a: np.sum(np.stack(a).astype(np.float64), 0), *xs,
              rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# MatMul.

def brute_matmul(a, b):
    n, k = a.shape
    k2, m = b.shape
    assert k == k2
    out = np.zeros((n, m), np.float64)
    for i in range(n):
        for j in range(m):
            out[i, j] = sum(float(a[i, p]) * float(b[p, j]) for p in range(k))
    return out


class TestMatMul:
    @given(data=st.data(), ta=st.booleans(), tb=st.booleans())
    def test_transpose_flags(self, run_op, data, ta, tb):
        n, k, m = (data.draw(st.integers(1, 4)) for _ in range(3))
        a = data.draw(f32((k, n) if ta else (n, k)))
        b = data.draw(f32((m, k) if tb else (k, m)))
        check(run_op, lambda x, y: aics.matmul(x, y, transpose_a=ta, transpose_b=tb),
              lambda x, y: brute_matmul(x.T if ta else x, y.T if tb else y), a, b, rtol=1e-5, atol=1e-4,
              dtype=np.float32)

    def test_int32_and_float64(self, run_op):
        a = np.arange(6, dtype=np.int32).reshape(2, 3)
        b = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
        check(run_op, aics.matmul, lambda x, y: brute_matmul(x, y).astype(np.int32), a, b, dtype=np.int32)
        check(run_op, aics.matmul, brute_matmul, a.astype(np.float64), b.astype(np.float64), rtol=1e-15,
              dtype=np.float64)

    @given(data=st.data())
    def test_batched(self, run_op, data):
        batch = data.draw(st.integers(1, 3))
        n, k, m = (data.draw(st.integers(1, 3)) for _ in range(3))
        a = data.draw(f32((batch, n, k)))
        b = data.draw(f32((batch, k, m)))
        check(run_op, aics.matmul, lambda x, y: np.stack([brute_matmul(x[i], y[i]) for i in range(batch)]),
              a, b, rtol=1e-5, atol=1e-4)

    def test_incompatible(self):
        with pytest.raises(aics.errors.InvalidArgumentError):
            aics.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))

    def test_mixed_tensor_and_numpy_arguments(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.arange(3, dtype=np.float32).reshape(3, 1)
        np.testing.assert_array_equal(aics.matmul(aics.constant(a), b).numpy(), brute_matmul(a, b))
        np.testing.assert_array_equal(aics.matmul(a, aics.constant(b)).numpy(), brute_matmul(a, b))
        np.testing.assert_array_equal(aics.matmul(a, [[1.0], [1.0], [1.0]]).numpy(), a.sum(1, keepdims=True))
        with pytest.raises(aics.errors.InvalidArgumentError, match="MatMul"):
            aics.matmul(aics.constant(a), b.astype(np.float64))

    def test_float16(self, run_op):
        rng = np.random.RandomState(0)
        a = rng.randn(3, 4).astype(np.float16)
        b = rng.randn(4, 2).astype(np.float16)
        check(run_op, aics.matmul, lambda x, y: brute_matmul(x, y), a, b, rtol=5e-3, atol=5e-3, dtype=np.float16)
        check(run_op, aics.add, lambda x, y: x + y, a, a, rtol=0, dtype=np.float16)  # exact in float16
        check(run_op, aics.multiply, lambda x, y: x * y, a, a, rtol=0, dtype=np.float16)


# ---------------------------------------------------------------------------
# Reductions.

def brute_reduce(x, axes, keepdims, combine, init):
    """Reduces by iterating over every output index and the reduced indices."""
    rank = x.ndim
    axes = sorted({a % rank for a in axes}) if rank else []
    kept = [d for d in range(rank) if d not in axes]
    out_shape = [x.shape[d] for d in kept]
    out = np.empty(out_shape, np.float64)
    for oidx in itertools.product(*[range(x.shape[d]) for d in kept]):
        acc = init
        for ridx in itertools.product(*[range(x.shape[d]) for d in axes]):
            full = [0] * rank
            for d, i in zip(kept, oidx):
                full[d] = i
            for d, i in zip(axes, ridx):
                full[d] = i
            acc = combine(acc, float(x[tuple(full)]))
        out[oidx] = acc
    if keepdims:
        out = out.reshape([1 if d in axes else x.shape[d] for d in range(rank)])
    return out


@st.composite
def array_and_axes(draw, allow_none=True):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    x = draw(f32(shape))
    rank = len(shape)
    choice = draw(st.sampled_from(["none", "int", "list"]) if allow_none else st.sampled_from(["int", "list"]))
    if choice == "none":
        axis = None
    elif choice == "int":
        axis = draw(st.integers(-rank, rank - 1))
    else:
        axis = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    return x, axis, draw(st.booleans())


def _axes_list(x, axis):
    if axis is None:
        return list(range(x.ndim))
    return [axis] if isinstance(axis, int) else list(axis)


class TestReductions:
    @given(case=array_and_axes())
    def test_reduce_sum(self, run_op, case):
        x, axis, keep = case
        check(run_op, lambda t: aics.reduce_sum(t, axis=axis, keepdims=keep),
              lambda a: brute_reduce(a, _axes_list(a, axis), keep, lambda s, v: s + v, 0.0), x,
              rtol=1e-5, atol=1e-4, dtype=np.float32)

    @given(case=array_and_axes())
    def test_reduce_mean(self, run_op, case):
        x, axis, keep = case
        axes = _axes_list(x, axis)
        n = int(np.prod([x.shape[a] for a in axes]))
        check(run_op, lambda t: aics.reduce_mean(t, axis=axis, keepdims=keep),
              lambda a: brute_reduce(a, axes, keep, lambda s, v: s + v, 0.0) / n, x, rtol=1e-5, atol=1e-5)

    @given(case=array_and_axes())
    def test_reduce_max_min(self, run_op, case):
        x, axis, keep = case
        axes = _axes_list(x, axis)
        check(run_op, lambda t: aics.reduce_max(t, axis=axis, keepdims=keep),
              lambda a: brute_reduce(a, axes, keep, max, -np.inf), x)
        check(run_op, lambda t: aics.reduce_min(t, axis=axis, keepdims=keep),
              lambda a: brute_reduce(a, axes, keep, min, np.inf), x)

    def test_int_mean_truncates_like_tf(self, run_op):
        x = np.array([[1, 2], [4, 4]], np.int32)
        check(run_op, lambda t: aics.reduce_mean(t, axis=1), lambda a: np.array([1, 4], np.int32), x, dtype=np.int32)

    def test_bad_axis(self):
        with pytest.raises(aics.errors.InvalidArgumentError):
            aics.reduce_sum(np.ones((2, 2), np.float32), axis=2)

    def test_static_shape(self):
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [None, 3, 4])
            assert aics.reduce_sum(p, axis=[0, 2]).shape.as_list() == [3]
            assert aics.reduce_max(p, axis=-1, keepdims=True).shape.as_list() == [None, 3, 1]
            assert aics.reduce_mean(p).shape.as_list() == []

    @given(data=st.data())
    def test_argmax(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
        x = np.round(data.draw(f32(shape, -3, 3)))  # ties: the first index wins, as TF
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))

        def brute(a):
            moved = np.moveaxis(a, axis, -1)
            out = np.empty(moved.shape[:-1], np.int64)
            for idx in itertools.product(*[range(d) for d in moved.shape[:-1]]):
                row = moved[idx].tolist()
                out[idx] = row.index(max(row))
            return out
        check(run_op, lambda t: aics.argmax(t, axis=axis), brute, x, dtype=np.int64)

    def test_argmax_output_type(self):
        got = aics.argmax(np.array([[1.0, 3.0], [5.0, 0.0]], np.float32), axis=1, output_type=aics.int32)
        assert got.dtype == aics.int32
        np.testing.assert_array_equal(got.numpy(), [1, 0])


# ---------------------------------------------------------------------------
# Array ops.

class TestArrayOps:
    @given(data=st.data())
    def test_reshape(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
        x = data.draw(f32(shape))
        n = x.size
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = data.draw(st.sampled_from(divisors))
        target = data.draw(st.sampled_from([[d, n // d], [-1, d], [n], [d, -1, 1]]))

        def brute(a):
            flat = a.reshape(-1).tolist()  # row-major order is the contract
            concrete = [n // (-np.prod([t for t in target if t != -1])) * -1 if t == -1 else t for t in target]
            return np.array(flat, np.float32).reshape(concrete)
        check(run_op, lambda t: aics.reshape(t, target), brute, x)

    def test_reshape_bad_size(self):
        with pytest.raises(aics.errors.InvalidArgumentError,
                           match="Input to reshape is a tensor with 6 values, but the requested shape has 8"):
            aics.reshape(np.zeros(6, np.float32), [4, 2])
        with aics.Graph().as_default():
            with pytest.raises(aics.errors.InvalidArgumentError, match="Cannot reshape a tensor with 6 elements"):
                aics.reshape(aics.zeros([6]), [4, 2])

    @given(data=st.data())
    def test_transpose(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=3))
        x = data.draw(f32(shape))
        perm = data.draw(st.permutations(range(len(shape))))

        def brute(a):
            out = np.empty([a.shape[p] for p in perm], a.dtype)
            for idx in itertools.product(*[range(d) for d in out.shape]):
                src = [0] * a.ndim
                for i, p in enumerate(perm):
                    src[p] = idx[i]
                out[idx] = a[tuple(src)]
            return out
        check(run_op, lambda t: aics.transpose(t, perm), brute, x)

    def test_transpose_default_reverses(self, run_op):
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        check(run_op, aics.transpose, lambda a: a.transpose(2, 1, 0), x)

    @given(data=st.data())
    def test_concat(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        parts = []
        for _ in range(data.draw(st.integers(1, 3))):
            s = list(shape)
            s[axis] = data.draw(st.integers(0, 3))
            parts.append(data.draw(f32(tuple(s))))
        check(run_op, lambda *ts: aics.concat(list(ts), axis), lambda *a: np.concatenate(a, axis), *parts)

    @given(data=st.data())
    def test_split_and_slice(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
        x = data.draw(f32(shape))
        axis = data.draw(st.integers(0, len(shape) - 1))
        n = data.draw(st.sampled_from([k for k in range(1, shape[axis] + 1) if shape[axis] % k == 0]))
        check(run_op, lambda t: aics.split(t, n, axis=axis), lambda a: list(np.split(a, n, axis=axis)), x)
        sizes = data.draw(st.lists(st.integers(0, 2), min_size=0, max_size=3))
        if sum(sizes) <= shape[axis]:
            sizes = sizes + [shape[axis] - sum(sizes)]       # size_splits must cover the dimension
            bounds = np.cumsum([0] + sizes)
            given_sizes = list(sizes)
            if data.draw(st.booleans()):
                given_sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1  # one -1 is inferred
            check(run_op, lambda t: aics.split(t, given_sizes, axis=axis),
                  lambda a: [np.take(a, range(bounds[i], bounds[i + 1]), axis=axis) for i in range(len(sizes))], x)
        begin = [data.draw(st.integers(0, d)) for d in shape]
        size = [data.draw(st.sampled_from([-1, data.draw(st.integers(0, d - b))])) for d, b in zip(shape, begin)]

        def brute(a):
            idx = tuple(slice(b, a.shape[i] if s == -1 else b + s) for i, (b, s) in enumerate(zip(begin, size)))
            return a[idx]
        check(run_op, lambda t: aics.slice(t, begin, size), brute, x)

    def test_split_uneven_is_error(self):
        with pytest.raises(aics.errors.InvalidArgumentError):
            aics.split(np.zeros(5, np.float32), 2)

    def test_size_splits(self):
        x = np.arange(12.0).reshape(2, 6)
        parts = aics.split(x, [2, -1, 1], axis=-1)  # TF infers the -1 as 3
        assert [p.shape.as_list() for p in parts] == [[2, 2], [2, 3], [2, 1]]
        np.testing.assert_array_equal(parts[1].numpy(), x[:, 2:5])
        with pytest.raises(ValueError, match="sum to"):
            aics.split(x, [2, 2], axis=1)
        with pytest.raises(ValueError, match="at most one"):
            aics.split(x, [-1, -1], axis=1)

    def test_slice_out_of_bounds(self):
        with pytest.raises(aics.errors.InvalidArgumentError):
            aics.slice(np.zeros((3, 3), np.float32), [2, 0], [2, 1])

    @given(data=st.data())
    def test_stack(self, run_op, data):
        shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3))
        k = data.draw(st.integers(1, 3))
        parts = [data.draw(f32(shape)) for _ in range(k)]
        axis = data.draw(st.integers(-(len(shape) + 1), len(shape)))

        def brute(*a):
            moved = np.array([p for p in a])  # new axis first
            return np.moveaxis(moved, 0, axis)
        check(run_op, lambda *ts: aics.stack(list(ts), axis=axis), brute, *parts)

    @given(shape=hnp.array_shapes(min_dims=0, max_dims=4, max_side=4))
    def test_shape(self, run_op, shape):
        x = np.zeros(shape, np.float32)
        check(run_op, aics.shape, lambda a: np.array(a.shape, np.int32), x, dtype=np.int32)

    def test_shape_of_partial_is_dynamic(self):
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [None, 3])
            s = aics.shape(p)
            assert s.shape.as_list() == [2]
            with aics.Session() as sess:
                np.testing.assert_array_equal(sess.run(s, {p: np.zeros((5, 3))}), [5, 3])

    def test_creation_ops(self):
        np.testing.assert_array_equal(aics.zeros([2, 3]).numpy(), np.zeros((2, 3)))
        assert aics.zeros([2], dtype=aics.int32).dtype == aics.int32
        np.testing.assert_array_equal(aics.ones([3]).numpy(), [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(aics.fill([2, 2], 7).numpy(), [[7, 7], [7, 7]])
        x = aics.constant([[1.5, 2.0]])
        assert aics.zeros_like(x).numpy().tolist() == [[0.0, 0.0]]
        assert aics.ones_like(x).numpy().tolist() == [[1.0, 1.0]]
        assert aics.identity(x).numpy().tolist() == [[1.5, 2.0]]
        assert aics.constant(3.0, shape=[2, 2]).numpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
        assert aics.constant([1, 2, 3, 4], shape=[2, 2]).numpy().tolist() == [[1, 2], [3, 4]]
        with aics.Graph().as_default():
            z = aics.zeros([2, 3])
            assert z.shape.as_list() == [2, 3]
            with aics.Session() as s:
                assert s.run(aics.fill([2], 1.5)).tolist() == [1.5, 1.5]
                assert s.run(aics.zeros_like(z)).shape == (2, 3)


# ---------------------------------------------------------------------------
# Cast.

def bf16_bits_reference(x):
    """bfloat16 rounding on the bit pattern, from the format's definition.

    Keep the top 16 bits of the float32; look at the 16 dropped bits: above
    half-way round up, below round down, exactly half-way round to the kept
    pattern that is even. NaNs stay NaN. Integer comparisons only.
    """
    bits = [int(b) for b in np.asarray(x, np.float32).reshape(-1).view(np.uint32)]
    out = []
    for b in bits:
        if (b & 0x7F800000) == 0x7F800000 and (b & 0x007FFFFF):
            out.append(0x7FC00000)  # NaN
            continue
        upper, lower = b >> 16, b & 0xFFFF
        if lower > 0x8000 or (lower == 0x8000 and upper & 1):
            upper += 1
        out.append((upper << 16) & 0xFFFFFFFF)
    return np.array(out, np.uint32).view(np.float32).reshape(np.shape(x))


class TestCastOp:
    @given(bits=hnp.arrays(np.uint32, st.integers(1, 16)))
    def test_bfloat16_against_bit_reference(self, run_op, bits):
        x = bits.view(np.float32)
        check(run_op, lambda t: aics.cast(aics.cast(t, aics.bfloat16), aics.float32), bf16_bits_reference, x,
              rtol=0, dtype=np.float32)

    def test_bfloat16_ops_both_modes(self, run_op):
        x = np.array([1.0, 1.5, 3.0, 100.0], np.float32)
        y = np.array([2 ** -8, 2 ** -7 + 2 ** -9, 3 * 2 ** -7, 0.3], np.float32)

        def fn(a, b):
            return aics.cast(a, aics.bfloat16) + aics.cast(b, aics.bfloat16)

        def ref(a, b):
            return bf16_bits_reference(bf16_bits_reference(a) + bf16_bits_reference(b))
        check(run_op, fn, ref, x, y, rtol=0)


    @given(x=f32(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), -100, 100))
    def test_float_to_int_truncates(self, run_op, x):
        def brute(a):
            return np.array([int(v) for v in a.reshape(-1).tolist()], np.int32).reshape(a.shape)
        check(run_op, lambda t: aics.cast(t, aics.int32), brute, x, dtype=np.int32)

    @given(x=f32(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), -1e4, 1e4))
    def test_to_float16_and_float64(self, run_op, x):
        check(run_op, lambda t: aics.cast(t, aics.float16), lambda a: a.astype(np.float16), x, rtol=0, dtype=np.float16)
        check(run_op, lambda t: aics.cast(t, aics.float64), lambda a: a.astype(np.float64), x, rtol=0, dtype=np.float64)

    def test_bool_and_uint8(self, run_op):
        x = np.array([0, 1, 255], np.uint8)
        check(run_op, lambda t: aics.cast(t, aics.bool), lambda a: a != 0, x, dtype=np.bool_)
        check(run_op, lambda t: aics.cast(t, aics.float32), lambda a: a.astype(np.float32), x, dtype=np.float32)

    def test_cast_to_same_dtype_is_identity(self):
        x = aics.constant([1.0])
        assert aics.cast(x, aics.float32) is x


def test_linalg_matmul_matvec_transpose():
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(aics.linalg.matmul(a, aics.linalg.matrix_transpose(a)).numpy(),
                               a @ a.transpose(0, 2, 1))
    np.testing.assert_allclose(aics.linalg.matvec(a[0], np.ones(3, np.float32)).numpy(), a[0].sum(1))
