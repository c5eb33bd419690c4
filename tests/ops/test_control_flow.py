"""Graph control flow: cond / case / while_loop built from Switch/Merge/Enter/Exit/NextIteration,
run by the Session's control-flow executor, and their gradients (vs NumPy and numerical gradients)."""
import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.ops.control_flow_ops import switch


def _numeric_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_cond_runs_only_the_taken_branch_and_uses_switch_merge():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [])
        y = aics.cond(x > 0, lambda: x * 2.0, lambda: x - 10.0)
        types = collections.Counter(op.type for op in g.get_operations())
        assert types["Switch"] >= 2 and types["Merge"] == 1
        assert y.op.type == "Merge" and y.op.name == "cond/Merge"
        with aics.Session() as sess:
            assert sess.run(y, {x: 3.0}) == 6.0
            assert sess.run(y, {x: -3.0}) == -13.0


def test_untaken_branch_does_not_run_its_side_effects(capfd):
    g = aics.Graph()
    with g.as_default():
        p = aics.placeholder(aics.bool, [])
        y = aics.cond(p, lambda: aics.Print(aics.constant(1.0), [aics.constant(1.0)], message="TRUE"),
                      lambda: aics.Print(aics.constant(2.0), [aics.constant(2.0)], message="FALSE"))
        with aics.Session() as sess:
            assert sess.run(y, {p: False}) == 2.0
    err = capfd.readouterr().err
    assert "FALSE" in err and "TRUE" not in err


def test_fetching_a_dead_tensor_is_an_error():
    g = aics.Graph()
    with g.as_default():
        x = aics.constant(1.0)
        f, t = switch(x, aics.constant(False))
        with aics.Session() as sess:
            assert sess.run(f) == 1.0
            with pytest.raises(aics.errors.InvalidArgumentError, match="does not have value"):
                sess.run(t)


def test_case_picks_first_true_predicate():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.int32, [])
        y = aics.case([(aics.less(x, 0), lambda: aics.constant(-1)), (aics.equal(x, 0), lambda: aics.constant(0))],
                      default=lambda: aics.constant(1))
        with aics.Session() as sess:
            assert [sess.run(y, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]
    assert aics.case([(aics.constant(False), lambda: 1)], default=lambda: 2) == 2  # eager: plain Python


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 12), a=st.floats(-2, 2))
def test_while_loop_matches_python_loop(n, a):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [])
        i, s = aics.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 0.5 + x), (0, aics.constant(1.0)))
        with aics.Session() as sess:
            iv, sv = sess.run([i, s], {x: a})
    ref = np.float32(1.0)
    for _ in range(n):
        ref = np.float32(ref * np.float32(0.5) + np.float32(a))
    assert iv == n and np.isclose(sv, ref, rtol=1e-6, atol=1e-6)


def test_while_loop_graph_structure_and_nest_shape_invariants():
    g = aics.Graph()
    with g.as_default():
        Pair = collections.namedtuple("Pair", "i acc")
        out = aics.while_loop(lambda p: p.i < 4,
                              lambda p: Pair(p.i + 1,
                                             aics.concat([p.acc, aics.reshape(aics.cast(p.i, aics.float32), [1])], 0)),
                              [Pair(aics.constant(0), aics.zeros([0]))],
                              shape_invariants=[Pair(aics.TensorShape([]), aics.TensorShape([None]))])
        types = collections.Counter(op.type for op in g.get_operations())
        for t in ("Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"):
            assert types[t] >= 1, t
        assert out.acc.shape.as_list() == [None]
        with aics.Session() as sess:
            p = sess.run(out)
        assert p.i == 4 and p.acc.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_shape_invariant_violation_names_the_variable():
    with aics.Graph().as_default():
        with pytest.raises(ValueError, match="shape_invariants"):
            aics.while_loop(lambda a: aics.size(a) < 3, lambda a: aics.concat([a, a], 0), [aics.zeros([1])])


def test_maximum_iterations_and_dict_loop_vars():
    g = aics.Graph()
    with g.as_default():
        r = aics.while_loop(lambda d: d["k"] < 100, lambda d: {"k": d["k"] * 2, "n": d["n"] + 1},
                            [{"k": aics.constant(1), "n": aics.constant(0)}], maximum_iterations=3,
                            parallel_iterations=4)
        with aics.Session() as sess:
            assert sess.run(r) == {"k": 8, "n": 3}


def test_nested_loops_and_loop_inside_cond():
    g = aics.Graph()
    with g.as_default():
        n = aics.placeholder(aics.int32, [])

        def outer_body(i, total):
            j, t = aics.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), (0, total))
            return i + 1, t
        _, total = aics.while_loop(lambda i, t: i < n, outer_body, (0, 0))
        y = aics.cond(n > 2, lambda: aics.while_loop(lambda k: k < n * 10, lambda k: k + 3, [0]),
                      lambda: aics.constant(-1))
        with aics.Session() as sess:
            for v in (0, 1, 4, 6):
                ref = sum(j for i in range(v) for j in range(i))
                assert sess.run(total, {n: v}) == ref
            ref = lambda v: next(k for k in range(0, 10 ** 6, 3) if k >= v * 10) if v > 2 else -1  # noqa: E731
            assert sess.run(y, {n: 5}) == ref(5) and sess.run(y, {n: 1}) == -1


def test_cond_gradient_matches_numerical():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [3])
        y = aics.cond(aics.reduce_sum(x) > 0, lambda: aics.reduce_sum(x * x * x), lambda: aics.reduce_sum(aics.sin(x)))
        dx = aics.gradients(y, x)[0]
        with aics.Session() as sess:
            for v in (np.array([0.5, 1.0, -0.2]), np.array([-1.0, 0.3, -0.4])):
                f = (lambda z: np.sum(z ** 3)) if v.sum() > 0 else (lambda z: np.sum(np.sin(z)))
                np.testing.assert_allclose(sess.run(dx, {x: v}), _numeric_grad(f, v), rtol=1e-3, atol=1e-4)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 6), seed=st.integers(0, 100))
def test_while_gradient_matches_numerical(n, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1, 1, size=(2,))
    w0 = rng.uniform(-1, 1, size=(2,))
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float64, [2])
        w = aics.placeholder(aics.float64, [2])
        _, s = aics.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, aics.tanh(s * w) + x), (0, x))
        loss = aics.reduce_sum(s * s)
        dx, dw = aics.gradients(loss, [x, w])
        with aics.Session() as sess:
            gx, gw = sess.run([dx, dw], {x: x0, w: w0})

    def f(xv, wv):
        s = xv
        for _ in range(n):
            s = np.tanh(s * wv) + xv
        return np.sum(s * s)
    np.testing.assert_allclose(gx, _numeric_grad(lambda v: f(v, w0), x0, 1e-6), rtol=1e-5, atol=1e-7)
    if n == 0:
        assert gw is None or np.allclose(gw, 0)
    else:
        np.testing.assert_allclose(gw, _numeric_grad(lambda v: f(x0, v), w0, 1e-6), rtol=1e-5, atol=1e-7)


def test_while_gradient_with_cond_in_body_and_variable():
    g = aics.Graph()
    with g.as_default():
        v = aics.Variable(0.8, dtype=aics.float32)
        x = aics.placeholder(aics.float32, [])

        def body(i, s):
            s = aics.cond(s > 1.0, lambda: s * 0.5, lambda: s * v + x)
            return i + 1, s
        _, s = aics.while_loop(lambda i, s: i < 6, body, (0, aics.constant(0.3)))
        dv, dx = aics.gradients(s, [v, x])
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            gv, gx = sess.run([dv, dx], {x: 0.9})

    def f(vv, xv):
        s = 0.3
        for _ in range(6):
            s = s * 0.5 if s > 1.0 else s * vv + xv
        return s
    np.testing.assert_allclose(gv, (f(0.8 + 1e-3, 0.9) - f(0.8 - 1e-3, 0.9)) / 2e-3, rtol=2e-3)
    np.testing.assert_allclose(gx, (f(0.8, 0.9 + 1e-3) - f(0.8, 0.9 - 1e-3)) / 2e-3, rtol=2e-3)


def test_eager_versions_run_python():
    assert aics.cond(aics.constant(True), lambda: 1, lambda: 2) == 1
    r = aics.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), [aics.constant(0), aics.constant(0)])
    assert [int(t.numpy()) for t in r] == [4, 6]
    with aics.GradientTape() as tape:
        x = aics.constant(2.0)
        tape.watch(x)
        y = aics.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * x), [0, aics.constant(1.0)])[1]
    assert float(tape.gradient(y, x).numpy()) == pytest.approx(12.0)


def test_graph_without_control_flow_keeps_the_plain_plan():
    from aicslib.framework import control_flow_executor
    g = aics.Graph()
    with g.as_default():
        y = aics.constant(2.0) * 3.0
        assert not control_flow_executor.has_control_flow(g)
        aics.cond(aics.constant(True), lambda: y, lambda: y)
        assert control_flow_executor.has_control_flow(g)


def test_endless_loop_stops_at_the_run_deadline():
    g = aics.Graph()
    with g.as_default():
        x = aics.while_loop(lambda i: i >= 0, lambda i: i + 1, [aics.constant(0)])  # never false
        with aics.Session() as sess:
            with pytest.raises(aics.errors.DeadlineExceededError, match="deadline"):
                sess.run(x, options=aics.RunOptions(timeout_in_ms=200))


# ---------------------------------------------------------------------------
# Gradients of nested control flow: while in while (stacks per outer iteration), cond in a
# nested while, while in a cond in a while, while in a cond, three levels; vs numerical gradients.

def _nested_cases():
    def inner_reads_outer_state(x, n):
        def outer_body(i, a):
            _, b = aics.while_loop(lambda j, b: j < 3, lambda j, b: (j + 1, b * aics.sin(a) + x), [0, a])
            return i + 1, b * 0.5
        return aics.while_loop(lambda i, a: i < n, outer_body, [0, x])[1]

    def py_inner_reads_outer_state(x, n):
        a = x
        for _ in range(n):
            b = a
            for _ in range(3):
                b = b * np.sin(a) + x
            a = b * 0.5
        return a

    # The inner loops of different outer iterations are independent of each other here (their
    # trip count is the outer counter), so they may run interleaved: per-iteration stacks matter.
    def inner_trip_count_is_outer_counter(x, n):
        def outer_body(i, acc):
            fi = aics.cast(i, aics.float64)
            _, t = aics.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t * x + fi), [0, x])
            return i + 1, acc + t
        return aics.while_loop(lambda i, a: i < n, outer_body, [0, aics.constant(0.0, aics.float64)])[1]

    def py_inner_trip_count_is_outer_counter(x, n):
        acc = 0.0
        for i in range(n):
            t = x
            for _ in range(i):
                t = t * x + i
            acc += t
        return acc

    def cond_in_inner_loop(x, n):
        def outer_body(i, a):
            def inner_body(j, b):
                return j + 1, aics.cond(b > 1.0, lambda: b * 0.5 + x, lambda: b * b + aics.sin(a))
            return i + 1, aics.while_loop(lambda j, b: j < 3, inner_body, [0, a])[1]
        return aics.while_loop(lambda i, a: i < n, outer_body, [0, x])[1]

    def py_cond_in_inner_loop(x, n):
        a = x
        for _ in range(n):
            b = a
            for _ in range(3):
                b = b * 0.5 + x if b > 1.0 else b * b + np.sin(a)
            a = b
        return a

    def loop_in_cond_in_loop(x, n):
        def outer_body(i, a):
            def loop():
                return aics.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b * x + 1.0), [0, a])[1]
            return i + 1, aics.cond(aics.equal(i % 2, 0), loop, lambda: a * a)
        return aics.while_loop(lambda i, a: i < n, outer_body, [0, x])[1]

    def py_loop_in_cond_in_loop(x, n):
        a = x
        for i in range(n):
            if i % 2 == 0:
                for _ in range(i):
                    a = a * x + 1.0
            else:
                a = a * a
        return a

    def loop_in_cond(x, n):
        return aics.cond(x > 0.5, lambda: aics.while_loop(lambda i, b: i < n, lambda i, b: (i + 1, b * aics.cos(b) + x),
                                                          [0, x])[1], lambda: x * 3.0)

    def py_loop_in_cond(x, n):
        if x > 0.5:
            b = x
            for _ in range(n):
                b = b * np.cos(b) + x
            return b
        return x * 3.0

    def three_levels(x, n):
        def outer_body(i, a):
            def middle_body(j, b):
                return j + 1, aics.while_loop(lambda k, c: k < 2, lambda k, c: (k + 1, aics.sin(c) * x + b), [0, b])[1]
            return i + 1, aics.while_loop(lambda j, b: j < 2, middle_body, [0, a])[1]
        return aics.while_loop(lambda i, a: i < n, outer_body, [0, x])[1]

    def py_three_levels(x, n):
        a = x
        for _ in range(n):
            for _ in range(2):
                c = a
                for _ in range(2):
                    c = np.sin(c) * x + a
                a = c
        return a
    return {"inner_reads_outer_state": (inner_reads_outer_state, py_inner_reads_outer_state),
            "inner_trip_count_is_outer_counter": (inner_trip_count_is_outer_counter,
                                                  py_inner_trip_count_is_outer_counter),
            "cond_in_inner_loop": (cond_in_inner_loop, py_cond_in_inner_loop),
            "loop_in_cond_in_loop": (loop_in_cond_in_loop, py_loop_in_cond_in_loop),
            "loop_in_cond": (loop_in_cond, py_loop_in_cond),
            "three_levels": (three_levels, py_three_levels)}


_NESTED = _nested_cases()


@pytest.mark.parametrize("case_name", sorted(_NESTED))
def test_nested_control_flow_gradient_matches_numerical(case_name):
    build, reference = _NESTED[case_name]
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float64, [])
        n = aics.placeholder(aics.int32, [])
        y = build(x, n)
        dx, = aics.gradients(y, [x])
        types = {op.type for op in g.get_operations()}
        assert {"StackPushV2", "StackPopV2"} <= types
        with aics.Session() as sess:
            for xv in (0.3, 0.9, 1.6):
                for nv in (0, 1, 2, 4):
                    yv, gv = sess.run([y, dx], {x: xv, n: nv})
                    np.testing.assert_allclose(yv, reference(xv, nv), rtol=1e-12)
                    num = (reference(xv + 1e-6, nv) - reference(xv - 1e-6, nv)) / 2e-6
                    np.testing.assert_allclose(gv, num, rtol=1e-5, atol=1e-6)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(0, 3), m=st.integers(0, 3))
def test_nested_while_gradient_of_variable_and_vector_input(seed, n, m):
    rng = np.random.default_rng(seed)
    w0, x0 = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2)
    g = aics.Graph()
    with g.as_default():
        w = aics.Variable(w0, dtype=aics.float64)
        x = aics.placeholder(aics.float64, [2])

        def outer_body(i, a):
            _, b = aics.while_loop(lambda j, b: j < m, lambda j, b: (j + 1, aics.tanh(b * w) + x), [0, a])
            return i + 1, b
        y = aics.reduce_sum(aics.while_loop(lambda i, a: i < n, outer_body, [0, x])[1] ** 2)
        dw, dx = aics.gradients(y, [w, x])
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            gw, gx = sess.run([dw, dx], {x: x0})

    def f(wv, xv):
        a = xv
        for _ in range(n):
            for _ in range(m):
                a = np.tanh(a * wv) + xv
        return np.sum(a ** 2)
    np.testing.assert_allclose(gx, _numeric_grad(lambda v: f(w0, v), x0, 1e-6), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gw if gw is not None else 0.0, _numeric_grad(lambda v: f(v, x0), w0, 1e-6),
                               rtol=1e-5, atol=1e-7)


def test_tf1_program_training_through_nested_loops_matches_tensorflow():
    import aicslib.compat.v1 as tf
    g = tf.Graph()
    with g.as_default():
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(0.5), dtype=tf.float64)
        x = tf.placeholder(tf.float64, [])

        def outer_body(i, a):
            _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, tf.tanh(b * w) + x), [0, a])
            return i + 1, b
        y = tf.while_loop(lambda i, a: i < 3, outer_body, [0, x])[1]
        loss = tf.square(y - 1.0)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            history = []
            for _ in range(5):
                history.append(sess.run([loss, step], {x: 0.2})[0])
            w_final = sess.run(w)
    # The same program under TensorFlow 2.21 (tensorflow.compat.v1, graph mode):
    np.testing.assert_allclose(history, [0.3691156911053834, 0.2933963845119687, 0.20449234216072945,
                                         0.12059999054089243, 0.06392766047425057], rtol=1e-7)
    np.testing.assert_allclose(w_final, 0.9120239373274637, rtol=1e-7)
