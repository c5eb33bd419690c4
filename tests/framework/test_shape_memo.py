"""Nodes decided by shapes alone (aicslib/framework/shape_memo.py) run once per shape in an
untraced Session run. References: NumPy's values for the same maths, a traced run (which runs
every node), and runs with other shapes and values in between."""
import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.execute import apply_op
from aicslib.framework.planner import default_planner
from aicslib.framework.shape_memo import MAX_BYTES, MAX_SHAPES, ShapeMemo

TRACE = aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE)


def plan_of(sess, fetch):
    return sess._plans[next(k for k in sess._plans if fetch in k[0])]


def memos(plan):
    return [entry[0] for entry in plan.varying_loop if isinstance(entry[0], ShapeMemo)]


def loop_types(plan):
    return [entry[1].type for entry in plan.varying_loop if not isinstance(entry[0], ShapeMemo)]


def test_mean_gradient_over_batches_of_every_size(g):
    # d/dw mean_i(x_i . w) = the mean of the rows of x: the 1/n comes from the batch's shape.
    x = aics.placeholder(aics.float64, [None, 3], name="x")
    w = aics.constant([1.0, -2.0, 0.5], aics.float64)
    loss = aics.reduce_mean(aics.reduce_sum(x * w, axis=1))
    (grad,) = aics.gradients(loss, [w])
    rng = np.random.default_rng(0)
    with aics.Session() as s:
        for n in (4, 7, 4, 1, 7, 4):
            xv = rng.standard_normal((n, 3))
            np.testing.assert_allclose(s.run(grad, {x: xv}), xv.mean(axis=0), rtol=1e-14)
        plan = plan_of(s, grad)
        (memo,) = memos(plan)
        assert len(memo.values) == 3                          # one per batch size: 4, 7, 1
        assert not {"Shape", "Size", "OnesLike", "BroadcastTo"} & set(loop_types(plan))
        md = aics.RunMetadata()
        xv = rng.standard_normal((5, 3))
        np.testing.assert_allclose(s.run(grad, {x: xv}, options=TRACE, run_metadata=md), xv.mean(axis=0),
                                   rtol=1e-14)
        assert {"OnesLike", "Shape", "BroadcastTo"} <= {st.op.type for st in memo.steps}
        traced = {n.node_name for n in md.node_stats()}
        assert {st.op.name for st in memo.steps} <= traced    # a traced run runs every node


def test_values_that_depend_on_data_or_state_are_computed_every_run(g):
    x = aics.placeholder(aics.float32, [None], name="x")
    scaled = x * aics.ones_like(x)                           # reads x's values
    noise = aics.random.uniform(aics.shape(x), seed=1)       # stateful: new numbers each run
    with aics.Session() as s:
        a, b = np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32)[::-1].copy()
        np.testing.assert_array_equal(s.run(scaled, {x: a}), a)
        np.testing.assert_array_equal(s.run(scaled, {x: b}), b)
        first, second = s.run(noise, {x: a}), s.run(noise, {x: a})
        assert first.shape == (3,) and not np.array_equal(first, second)
        assert "RandomUniform" in loop_types(plan_of(s, noise))


def test_a_kept_value_is_never_written_into(g):
    # ReluGrad may write its output into its gradient input when nothing else holds it; the
    # memo's value is held by the memo (and read-only), so it stays 3 on every run.
    x = aics.placeholder(aics.float32, [None], name="x")
    threes = aics.ones_like(x) * 3.0
    masked = aics.raw_ops.ReluGrad(gradients=threes, features=x)
    xv = np.array([-1.0, 2.0, 0.5, -3.0], np.float32)
    want = np.where(xv > 0, 3.0, 0.0).astype(np.float32)
    with aics.Session() as s:
        for _ in range(3):
            np.testing.assert_array_equal(s.run(masked, {x: xv}), want)
        got = s.run(threes, {x: xv})                         # fetched: the caller's own copy
        got[:] = 7.0
        np.testing.assert_array_equal(s.run(threes, {x: xv}), np.full(4, 3.0, np.float32))
        assert memos(plan_of(s, masked))


def test_an_error_is_raised_on_every_run_with_that_shape(g):
    x = aics.placeholder(aics.float32, [None], name="x")
    grid = aics.reshape(aics.ones_like(x), [3, -1], name="grid")
    with aics.Session() as s:
        for _ in range(2):
            with pytest.raises(aics.errors.InvalidArgumentError, match="grid"):
                s.run(grid, {x: np.zeros(4, np.float32)})
        np.testing.assert_array_equal(s.run(grid, {x: np.zeros(6, np.float32)}), np.ones((3, 2), np.float32))


def test_large_values_and_many_shapes_are_not_all_kept(g):
    x = aics.placeholder(aics.float32, [None, None], name="x")
    y = aics.ones_like(x) * 2.0 + x
    with aics.Session() as s:
        big = np.zeros((MAX_BYTES // 4 + 1, 1), np.float32)    # one float32 past MAX_BYTES
        np.testing.assert_array_equal(s.run(y, {x: big}), np.full(big.shape, 2.0, np.float32))
        (memo,) = memos(plan_of(s, y))
        assert memo.values == {}
        for n in range(1, MAX_SHAPES + 4):
            xv = np.full((n, 2), n, np.float32)
            np.testing.assert_array_equal(s.run(y, {x: xv}), xv + 2.0)
        assert len(memo.values) == MAX_SHAPES


def test_another_planner_runs_its_plan_as_made(g):
    x = aics.placeholder(aics.float32, [None], name="x")
    y = aics.reduce_mean(x * x)
    (grad,) = aics.gradients(y, [x])
    xv = np.array([1.0, -2.0, 4.0], np.float32)
    with aics.Session() as s, aics.experimental.use_planner(lambda *args: default_planner(*args)):
        np.testing.assert_allclose(s.run(grad, {x: xv}), 2 * xv / 3, rtol=1e-6)
        assert not memos(plan_of(s, grad)) and "Shape" in loop_types(plan_of(s, grad))


def test_values_are_still_freed_after_their_last_reader(g, op_name):
    # Dropping the memoized nodes changes which step reads a value last; the loop frees each one
    # after its new last reader, so a kernel offering to forward still gets its input's buffer.
    n = op_name("Negate")
    given = []
    aics.register_op(n).input("x: float").output("y: float")

    def negate(x, out=None):
        given.append(out is not None)
        return np.negative(x, out=out)
    aics.register_kernel(n, forward_inputs=(0,))(negate)
    x = aics.placeholder(aics.float32, [None], name="x")
    y = apply_op(n, [aics.square(x)]) / aics.cast(aics.size(x), aics.float32)
    xv = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    with aics.Session() as s:
        for _ in range(2):
            np.testing.assert_allclose(s.run(y, {x: xv}), -xv * xv / 4, rtol=1e-6)
        assert memos(plan_of(s, y)) and given == [True, True]
