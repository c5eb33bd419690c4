"""Autograd: aics.gradients (graph) and GradientTape (eager), registration rules, special cases.

References are analytic derivatives worked out by hand, brute-force loops for
broadcasting, and central finite differences computed here in float64 by
evaluating the forward function only (never the registered gradients).
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import aicslib as aics
import aicslib.compat.v1 as tf1
from aicslib.framework.execute import apply_op


def fd_grad(fn, xs, eps=1e-6):
    """Central differences of sum(fn(*xs)) w.r.t. each x, evaluated eagerly in float64."""
    xs = [np.asarray(x, np.float64) for x in xs]

    def total(vals):
        return float(np.sum(fn(*[aics.constant(v) for v in vals]).numpy()))
    grads = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        for idx in itertools.product(*[range(d) for d in x.shape]):
            plus = [v.copy() for v in xs]
            minus = [v.copy() for v in xs]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (total(plus) - total(minus)) / (2 * eps)
        grads.append(g)
    return grads


def run(fetches, feed=None):
    with aics.Session() as s:
        return s.run(fetches, feed)


@pytest.fixture
def registered():
    """Registers gradients for the test and removes them afterwards."""
    names = []

    def reg(name, fn):
        aics.RegisterGradient(name)(fn)
        names.append(name)
        return fn
    yield reg
    for n in names:
        aics.gradient_registry.unregister(n)


# ---------------------------------------------------------------------------
# aics.gradients (graph mode)

class TestGraphGradients:
    def test_analytic(self, g):
        x = aics.placeholder(aics.float64, [3], name="x")
        y = aics.sin(x) * x
        (gx,) = aics.gradients(y, x)
        xv = np.array([0.1, 1.0, -2.0])
        np.testing.assert_allclose(run(gx, {x: xv}), np.cos(xv) * xv + np.sin(xv), rtol=1e-12)

    def test_name_scope(self, g):
        x = aics.placeholder(aics.float32, [2], name="x")
        y = aics.square(x)
        (gx,) = aics.gradients(y, x)
        assert gx.op.name.startswith("gradients/")
        (gx2,) = aics.gradients(y, x)
        assert gx2.op.name.startswith("gradients_1/")
        assert any(op.name.startswith("gradients/Square_grad/") for op in g.get_operations())
        (gx3,) = aics.gradients(y, x, name="my_grads")
        assert gx3.op.name.startswith("my_grads/")

    def test_sums_over_paths(self, g):
        x = aics.placeholder(aics.float64, [], name="x")
        a = x * 3.0
        b = aics.exp(x)
        y = a * b + aics.square(x) + x  # y = 3x e^x + x^2 + x
        (gx,) = aics.gradients(y, x)
        xv = 0.7
        assert run(gx, {x: xv}) == pytest.approx(3 * np.exp(xv) * (1 + xv) + 2 * xv + 1, rel=1e-12)

    def test_diamond_reuse(self, g):
        x = aics.placeholder(aics.float64, [2])
        h = aics.tanh(x)
        y = aics.reduce_sum(h * h + h)
        (gx,) = aics.gradients(y, x)
        xv = np.array([0.3, -1.1])
        t = np.tanh(xv)
        np.testing.assert_allclose(run(gx, {x: xv}), (2 * t + 1) * (1 - t ** 2), rtol=1e-12)

    def test_none_for_unconnected(self, g):
        x = aics.placeholder(aics.float32, [])
        z = aics.placeholder(aics.float32, [])
        y = x * 2.0
        gx, gz = aics.gradients(y, [x, z])
        assert gz is None
        assert run(gx, {x: 1.0}) == 2.0

    def test_integer_path_not_differentiated(self, g):
        x = aics.placeholder(aics.float32, [3])
        idx = aics.argmax(x)
        y = aics.cast(idx, aics.float32) + aics.reduce_sum(x)
        (gx,) = aics.gradients(y, x)
        np.testing.assert_array_equal(run(gx, {x: [1.0, 5.0, 2.0]}), [1.0, 1.0, 1.0])

    def test_multiple_ys_are_summed(self, g):
        x = aics.placeholder(aics.float64, [])
        (gx,) = aics.gradients([x * 2.0, aics.square(x)], x)
        assert run(gx, {x: 3.0}) == 2.0 + 6.0

    def test_grad_ys(self, g):
        x = aics.placeholder(aics.float64, [2])
        y = aics.square(x)
        (gx,) = aics.gradients(y, x, grad_ys=aics.constant([10.0, -1.0], dtype=aics.float64))
        np.testing.assert_allclose(run(gx, {x: [1.0, 2.0]}), [20.0, -4.0])
        (gx2,) = aics.gradients([y], [x], grad_ys=[np.array([0.5, 0.5])])
        np.testing.assert_allclose(run(gx2, {x: [1.0, 2.0]}), [1.0, 2.0])

    def test_stop_gradients_argument(self, g):
        x = aics.placeholder(aics.float64, [])
        a = x * 2.0
        b = a + x
        y = b * b
        # with a treated as a constant: dy/dx = 2b * 1
        gx, ga = aics.gradients(y, [x, a], stop_gradients=[a])
        xv = 1.5
        bv = 3 * xv
        assert run(gx, {x: xv}) == pytest.approx(2 * bv)
        assert run(ga, {x: xv}) == pytest.approx(2 * bv)
        (full,) = aics.gradients(y, x)
        assert run(full, {x: xv}) == pytest.approx(2 * bv * 3)

    def test_variables(self, g):
        w = aics.Variable([1.0, 2.0], name="w")
        loss = aics.reduce_sum(aics.square(w) * 3.0)
        (gw,) = aics.gradients(loss, [w])
        with aics.Session() as s:
            s.run(w.initializer)
            np.testing.assert_allclose(s.run(gw), [6.0, 12.0])

    def test_gradient_shape_is_set(self, g):
        x = aics.placeholder(aics.float32, [None, 3])
        y = aics.reduce_sum(aics.matmul(x, aics.constant(np.ones((3, 2), np.float32))))
        (gx,) = aics.gradients(y, x)
        assert gx.shape.as_list() == [None, 3]

    def test_refused_eagerly(self):
        with pytest.raises(RuntimeError, match="GradientTape"):
            aics.gradients(aics.constant(1.0), aics.constant(1.0))


# ---------------------------------------------------------------------------
# GradientTape (eager)

class TestGradientTape:
    def test_watch_constant(self):
        x = aics.constant(3.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * x * x
        assert float(tape.gradient(y, x)) == 27.0

    def test_unwatched_constant_gives_none(self):
        x = aics.constant(3.0)
        with aics.GradientTape() as tape:
            y = x * x
        assert tape.gradient(y, x) is None

    def test_nested_sources(self):
        a, b, c = aics.constant(1.0), aics.constant(2.0), aics.constant([3.0, 4.0])
        with aics.GradientTape() as tape:
            tape.watch([a, b, c])
            y = a * b + aics.reduce_sum(c * c) * a
        out = tape.gradient(y, {"first": [a, (b,)], "second": {"c": c}})
        assert float(out["first"][0]) == 2.0 + 25.0
        assert isinstance(out["first"][1], tuple) and float(out["first"][1][0]) == 1.0
        np.testing.assert_array_equal(out["second"]["c"].numpy(), [6.0, 8.0])

    def test_stop_recording(self):
        x = aics.constant(2.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            with tape.stop_recording():
                z = x * 100.0
            total = y + z
        # z was not recorded: its path contributes nothing
        assert float(tape.gradient(total, x)) == 4.0

    def test_non_persistent_used_twice(self):
        x = aics.constant(1.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * 2.0
        tape.gradient(y, x)
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.gradient(y, x)

    def test_persistent(self):
        x = aics.constant(2.0)
        with aics.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        assert float(tape.gradient(y, x)) == 4.0
        assert float(tape.gradient(z, x)) == 32.0
        assert float(tape.gradient(z, y)) == 8.0

    def test_trainable_variables_watched_automatically(self):
        w = aics.Variable(3.0)
        frozen = aics.Variable(5.0, trainable=False)
        with aics.GradientTape() as tape:
            y = w * w * frozen
        gw, gf = tape.gradient(y, [w, frozen])
        assert float(gw) == 30.0
        assert gf is None
        assert tape.watched_variables() == [w]

    def test_watch_accessed_variables_false(self):
        w = aics.Variable(3.0)
        v = aics.Variable(4.0)
        with aics.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(v)
            y = w * v
        gw, gv = tape.gradient(y, [w, v])
        assert gw is None
        assert float(gv) == 3.0

    def test_output_gradients(self):
        x = aics.constant([1.0, 2.0])
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        g = tape.gradient(y, x, output_gradients=[np.array([1.0, 10.0], np.float32)])
        np.testing.assert_array_equal(g.numpy(), [2.0, 40.0])

    def test_unconnected_zero(self):
        x, z = aics.constant(1.0), aics.constant(2.0)
        with aics.GradientTape() as tape:
            tape.watch([x, z])
            y = x * 3.0
        gz = tape.gradient(y, z, unconnected_gradients="zero")
        assert float(gz) == 0.0

    def test_integer_tensors_not_watched(self):
        i = aics.constant(3)
        with aics.GradientTape() as tape:
            tape.watch(i)
            y = i * i
        assert tape.gradient(y, i) is None

    def test_watch_rejects_non_tensors(self):
        with aics.GradientTape() as tape:
            with pytest.raises(ValueError):
                tape.watch(3.0)

    def test_matches_finite_differences(self):
        rng = np.random.RandomState(1)
        xv, wv = rng.randn(2, 3), rng.randn(3, 4)

        def f(x, w):
            return aics.sigmoid(aics.matmul(x, w)) * aics.reduce_mean(aics.exp(x))
        x, w = aics.constant(xv), aics.constant(wv)
        with aics.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        gx, gw = tape.gradient(y, [x, w])
        nx, nw = fd_grad(f, [xv, wv])
        np.testing.assert_allclose(gx.numpy(), nx, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gw.numpy(), nw, rtol=1e-6, atol=1e-8)

    def test_graph_and_tape_agree(self):
        rng = np.random.RandomState(2)
        xv = rng.randn(3, 2)

        def f(x):
            return aics.reduce_sum(aics.tanh(x) * aics.square(x), axis=0)
        x = aics.constant(xv)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        eager = tape.gradient(y, x).numpy()
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float64, [3, 2])
            (gp,) = aics.gradients(f(p), p)
            graph = run(gp, {p: xv})
        np.testing.assert_allclose(eager, graph, rtol=1e-14)
        np.testing.assert_allclose(eager, fd_grad(f, [xv])[0], rtol=1e-6)


# ---------------------------------------------------------------------------
# Higher order

class TestHigherOrder:
    def test_tape_second_and_third_order(self):
        x = aics.constant(0.5, dtype=aics.float64)
        with aics.GradientTape() as t3:
            t3.watch(x)
            with aics.GradientTape() as t2:
                t2.watch(x)
                with aics.GradientTape() as t1:
                    t1.watch(x)
                    y = aics.sin(x) * x
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
        xv = 0.5
        assert float(d1) == pytest.approx(np.cos(xv) * xv + np.sin(xv), rel=1e-12)
        assert float(d2) == pytest.approx(2 * np.cos(xv) - xv * np.sin(xv), rel=1e-12)
        assert float(d3) == pytest.approx(-3 * np.sin(xv) - xv * np.cos(xv), rel=1e-12)

    def test_graph_gradients_of_gradients(self, g):
        x = aics.placeholder(aics.float64, [2])
        y = aics.reduce_sum(aics.exp(x) * x)
        (d1,) = aics.gradients(y, x)
        (d2,) = aics.gradients(d1, x)
        xv = np.array([0.2, -1.0])
        r1, r2 = run([d1, d2], {x: xv})
        np.testing.assert_allclose(r1, np.exp(xv) * (1 + xv), rtol=1e-12)
        np.testing.assert_allclose(r2, np.exp(xv) * (2 + xv), rtol=1e-12)

    def test_hessian_vector_mixed(self):
        w = aics.Variable([1.0, 2.0], dtype=aics.float64)
        with aics.GradientTape() as outer:
            with aics.GradientTape() as inner:
                loss = aics.reduce_sum(w * w * w)
            gw = inner.gradient(loss, w)          # 3 w^2
            s = aics.reduce_sum(gw * np.array([1.0, 1.0]))
        hv = outer.gradient(s, w)                 # 6 w
        np.testing.assert_allclose(hv.numpy(), [6.0, 12.0])


# ---------------------------------------------------------------------------
# Broadcasting reduces the gradient to each input's shape

def brute_sum_to(grad, out_shape, in_shape):
    """Accumulates an output-shaped gradient into an input that was broadcast to it."""
    res = np.zeros(in_shape, np.float64)
    pad = len(out_shape) - len(in_shape)
    for idx in itertools.product(*[range(d) for d in out_shape]):
        src = tuple(0 if in_shape[k] == 1 else idx[k + pad] for k in range(len(in_shape)))
        res[src] += grad[idx]
    return res


@st.composite
def broadcast_pair(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    el = st.floats(-3, 3)
    a = draw(hnp.arrays(np.float64, shapes.input_shapes[0], elements=el))
    b = draw(hnp.arrays(np.float64, shapes.input_shapes[1], elements=el))
    return a, b, shapes.result_shape


class TestBroadcastingGradients:
    @given(case=broadcast_pair())
    def test_mul_eager(self, case):
        a, b, out = case
        x, y = aics.constant(a), aics.constant(b)
        with aics.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y + x
        gx, gy = tape.gradient(z, [x, y])
        assert gx.shape.as_list() == list(a.shape) and gy.shape.as_list() == list(b.shape)
        ones = np.ones(out)
        np.testing.assert_allclose(gx.numpy(), brute_sum_to(np.broadcast_to(b, out) + ones, out, a.shape))
        np.testing.assert_allclose(gy.numpy(), brute_sum_to(np.broadcast_to(a, out) * ones, out, b.shape))

    @given(case=broadcast_pair())
    def test_sub_div_graph_dynamic_shapes(self, case):
        a, b, out = case
        b = np.where(np.abs(b) < 0.5, 1.0, b)
        with aics.Graph().as_default():
            # unknown dimensions force the dynamic (BroadcastGradientArgs) path
            px = aics.placeholder(aics.float64, [None] * a.ndim)
            py = aics.placeholder(aics.float64, [None] * b.ndim)
            z = px / py - py
            gx, gy = aics.gradients(z, [px, py])
            rx, ry = run([gx, gy], {px: a, py: b})
        ab, bb = np.broadcast_to(a, out), np.broadcast_to(b, out)
        np.testing.assert_allclose(rx, brute_sum_to(1.0 / bb, out, a.shape), rtol=1e-12)
        np.testing.assert_allclose(ry, brute_sum_to(-ab / bb ** 2 - 1.0, out, b.shape), rtol=1e-12)

    @pytest.mark.parametrize("dtype", [aics.int32, aics.int64])
    @given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
    def test_broadcast_gradient_args_in_the_shapes_type(self, dtype, shapes):
        # The axes each input was stretched along: those where its left-padded shape has a 1.
        s0, s1 = shapes.input_shapes
        r0, r1 = apply_op("BroadcastGradientArgs", [aics.constant(s0, dtype), aics.constant(s1, dtype)])
        for r, s in ((r0, s0), (r1, s1)):
            padded = (1,) * (len(shapes.result_shape) - len(s)) + tuple(s)
            assert r.dtype == dtype and r.numpy().tolist() == [i for i, d in enumerate(padded) if d == 1]

    def test_reduce_mean_dynamic_shape(self):
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float64, [None, None])
            y = aics.reduce_mean(aics.square(p), axis=1)
            (gp,) = aics.gradients(y, p)
            xv = np.arange(6.0).reshape(2, 3)
            np.testing.assert_allclose(run(gp, {p: xv}), 2 * xv / 3)

    def test_reductions_over_fed_axis(self):
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float64, [None, None])
            ax = aics.placeholder(aics.int32, [])
            (gs,) = aics.gradients(aics.reduce_sum(aics.square(x), axis=ax), x)
            (gm,) = aics.gradients(aics.reduce_max(x, axis=ax), x)
            xv = np.array([[1.0, 5.0], [3.0, 4.0]])
            with aics.Session() as s:
                for axis, mask in ((1, [[0, 1], [0, 1]]), (0, [[0, 1], [1, 0]]), (-1, [[0, 1], [0, 1]])):
                    rs, rm = s.run([gs, gm], {x: xv, ax: axis})
                    np.testing.assert_allclose(rs, 2 * xv)
                    np.testing.assert_array_equal(rm, mask)

    def test_bias_add_pattern(self):
        x = aics.constant(np.ones((4, 3)))
        b = aics.constant(np.zeros(3))
        with aics.GradientTape() as tape:
            tape.watch(b)
            y = aics.reduce_sum((x + b) * np.arange(3.0))
        np.testing.assert_array_equal(tape.gradient(y, b).numpy(), [0.0, 4.0, 8.0])


# ---------------------------------------------------------------------------
# stop_gradient, custom_gradient, gradient_override_map

class TestSpecialCases:
    def test_stop_gradient_both_modes(self):
        x = aics.constant(3.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = x * aics.stop_gradient(x * x)
        assert float(tape.gradient(y, x)) == 9.0
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [])
            (gp,) = aics.gradients(p * aics.stop_gradient(p * p), p)
            assert run(gp, {p: 3.0}) == 9.0
            assert aics.gradients(aics.stop_gradient(p), p) == [None]

    def test_reduce_max_ties_share_the_gradient(self):
        # TF's _MinOrMaxGrad divides the gradient equally between tied maxima.
        x = aics.constant([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = aics.reduce_max(x, axis=1) * np.array([1.0, 4.0], np.float32)
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0.0, 0.5, 0.5], [4.0, 0.0, 0.0]])

    def test_maximum_tie_goes_to_x(self):
        # TF's _MaximumGrad uses x >= y, so on a tie x receives the gradient.
        x, y = aics.constant([1.0, 2.0]), aics.constant([1.0, 3.0])
        with aics.GradientTape() as tape:
            tape.watch([x, y])
            z = aics.maximum(x, y)
        gx, gy = tape.gradient(z, [x, y])
        np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0])
        np.testing.assert_array_equal(gy.numpy(), [0.0, 1.0])

    def test_custom_gradient_eager(self):
        @aics.custom_gradient
        def clipped_identity(x):
            def grad(dy):
                return aics.clip_by_value(dy, -1.0, 1.0)
            return aics.identity(x), grad

        x = aics.constant([1.0, 2.0])
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = clipped_identity(x) * np.array([0.5, 10.0], np.float32)
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.5, 1.0])

    def test_custom_gradient_numerically_stable_log1pexp(self):
        # TF's documented example: log(1 + exp(x)) with gradient 1 - 1 / (1 + exp(x)).
        @aics.custom_gradient
        def log1pexp(x):
            e = aics.exp(x)

            def grad(dy):
                return dy * (1 - 1 / (1 + e))
            return aics.log(1 + e), grad

        x = aics.constant(100.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        assert float(tape.gradient(y, x)) == 1.0

    def test_custom_gradient_graph(self, g):
        @aics.custom_gradient
        def scaled(x, y):
            def grad(dy):
                return dy * 100.0, dy * -1.0
            return x * y, grad

        px = aics.placeholder(aics.float32, [])
        py = aics.placeholder(aics.float32, [])
        z = scaled(px, py)
        gx, gy = aics.gradients(z, [px, py])
        assert run([z, gx, gy], {px: 2.0, py: 3.0}) == [6.0, 100.0, -1.0]

    def test_custom_gradient_second_order(self):
        @aics.custom_gradient
        def cube(x):
            def grad(dy):
                return dy * 3.0 * x * x
            return x * x * x, grad

        x = aics.constant(2.0)
        with aics.GradientTape() as outer:
            outer.watch(x)
            with aics.GradientTape() as inner:
                inner.watch(x)
                y = cube(x)
            d1 = inner.gradient(y, x)
        assert float(d1) == 12.0
        assert float(outer.gradient(d1, x)) == 12.0

    def test_gradient_override_map(self, g, registered):
        registered("TestDoubleGrad", lambda op, grad: grad * 2.0)
        x = aics.placeholder(aics.float32, [2])
        with g.gradient_override_map({"Square": "TestDoubleGrad"}):
            inside = aics.square(x)
        outside = aics.square(x)
        assert inside.op.type == "Square" and outside.op.type == "Square"
        g_in, = aics.gradients(inside, x)
        g_out, = aics.gradients(outside, x)
        r_in, r_out = run([g_in, g_out], {x: [1.0, 3.0]})
        np.testing.assert_array_equal(r_in, [2.0, 2.0])
        np.testing.assert_array_equal(r_out, [2.0, 6.0])

    def test_gradient_override_map_is_restored(self, g, registered):
        registered("TestZeroGrad", lambda op, grad: aics.zeros_like(grad))
        x = aics.placeholder(aics.float32, [])
        with g.gradient_override_map({"Square": "TestZeroGrad"}):
            with g.gradient_override_map({"Sin": "TestZeroGrad"}):
                a = aics.sin(x)
            b = aics.sin(x)
            c = aics.square(x)
        ga, gb, gc = (aics.gradients(t, x)[0] for t in (a, b, c))
        assert run([ga, gb, gc], {x: 0.0}) == [0.0, 1.0, 0.0]


# ---------------------------------------------------------------------------
# The registry

class TestRegistry:
    def test_register_twice_names_earlier_registration(self, registered):
        registered("TestTwiceGrad", lambda op, g: g)
        with pytest.raises(KeyError) as ei:
            aics.RegisterGradient("TestTwiceGrad")(lambda op, g: g)
        assert "TestTwiceGrad" in str(ei.value) and __file__ in str(ei.value)

    def test_register_core_twice(self):
        with pytest.raises(KeyError, match=r"Sin.*math_grad\.py:\d+"):
            aics.RegisterGradient("Sin")(lambda op, g: g)

    def test_missing_gradient_graph(self, g):
        x = aics.placeholder(aics.float32, [])
        with pytest.raises(LookupError, match="'Tan'"):
            aics.gradients(aics.tan(x), x)

    def test_missing_gradient_tape(self):
        x = aics.constant(1.0)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = aics.tan(x) * 2.0
        with pytest.raises(LookupError, match="gradient registry has no entry for: Tan "
                                              ".no gradient defined for operation of type 'Tan'"):
            tape.gradient(y, x)

    def test_adjust_contrast_has_no_gradient_as_in_tf_autodiff_guide(self):
        # TF's autodiff guide ("Cases where gradient returns None"): TF 2.21 prints
        # "LookupError: gradient registry has no entry for: AdjustContrastv2".
        image = aics.Variable([[[0.5, 0.0, 0.0]]])
        delta = aics.Variable(0.1)
        with aics.GradientTape() as tape:
            new_image = aics.image.adjust_contrast(image, delta)
        with pytest.raises(LookupError, match="^gradient registry has no entry for: AdjustContrastv2"):
            tape.gradient(new_image, [image, delta])

    def test_missing_gradient_not_needed_is_fine(self, g):
        x = aics.placeholder(aics.float32, [])
        z = aics.placeholder(aics.float32, [])
        y = aics.tan(z) + x  # Tan is not between x and y
        (gx,) = aics.gradients(y, x)
        assert run(gx, {x: 1.0, z: 0.0}) == 1.0

    def test_tan_gradient_registered_then_removed(self, registered):
        registered("Tan", lambda op, grad: grad * (1.0 + aics.square(op.outputs[0])))
        theo, num = aics.test.compute_gradient(aics.tan, [np.array([0.1, -0.7, 1.2])])
        assert aics.test.max_error(theo, num) < 1e-6
        np.testing.assert_allclose(theo[0], np.diag(1 / np.cos([0.1, -0.7, 1.2]) ** 2), rtol=1e-10)

    def test_no_gradient_stops_silently(self, registered):
        n = "NoGradTestOp"
        aics.register_op(n).input("x: float").output("y: float")
        try:
            aics.register_kernel(n)(lambda x: x * np.float32(2))
            aics.no_gradient(n)
            assert not aics.gradient_registry.is_differentiable(n)
            x = aics.constant(1.0)
            with aics.GradientTape() as tape:
                tape.watch(x)
                y = aics.raw_ops.NoGradTestOp(x=x) + x
            assert float(tape.gradient(y, x)) == 1.0
            with aics.Graph().as_default():
                p = aics.placeholder(aics.float32, [])
                assert aics.gradients(aics.raw_ops.NoGradTestOp(x=p), p) == [None]
        finally:
            from aicslib.framework.execute import invalidate_caches
            aics.op_def_registry.unregister(n)
            aics.kernel_registry.unregister(n)
            aics.gradient_registry.unregister(n)
            invalidate_caches(n)

    def test_wrong_number_of_gradients(self, g, registered):
        registered("TestBadArity", lambda op, grad: [grad, grad])
        x = aics.placeholder(aics.float32, [])
        with g.gradient_override_map({"Neg": "TestBadArity"}):
            y = -x
        with pytest.raises(ValueError, match="Num gradients 2"):
            aics.gradients(y, x)

    def test_multi_output_gradient_signature(self, g):
        x = aics.placeholder(aics.float64, [4])
        a, b = aics.split(x, 2)
        y = aics.reduce_sum(a * 2.0) + aics.reduce_sum(b * b)
        (gx,) = aics.gradients(y, x)
        np.testing.assert_allclose(run(gx, {x: [1.0, 2.0, 3.0, 4.0]}), [2.0, 2.0, 6.0, 8.0])


def test_gather_gradient_with_unknown_params_shape(graph_mode):
    # TensorFlow-Examples' dynamic_rnn.py gathers rows of tf1.reshape(outputs, [-1, n]).
    p = tf1.placeholder(tf1.float32, [None, 4])
    idx = tf1.placeholder(tf1.int32, [None])
    rows = tf1.gather(tf1.reshape(p * 1.0, [-1, 2]), idx)
    g = tf1.gradients(tf1.reduce_sum(rows * rows), p)[0]
    pv = np.arange(12, dtype=np.float32).reshape(3, 4)
    with tf1.Session() as s:
        got = s.run(g, {p: pv, idx: [0, 5, 0]})
    flat = pv.reshape(-1, 2)
    ref = np.zeros_like(flat)
    for i in [0, 5, 0]:
        ref[i] += 2 * flat[i]
    np.testing.assert_allclose(got, ref.reshape(3, 4))
