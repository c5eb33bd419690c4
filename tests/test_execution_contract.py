"""The execution contract (framework/execute.py ``run_kernel``): one step for every mode.

A kernel's failure and a kernel's wrong output are reported the same way eagerly, in a
Session (on one thread, on one thread per device, with TF1 control flow, traced or not) and
inside ``aics.function``; and the Session's planner and the graph gradients are replaceable
through their seams (``aics.experimental``).
"""
import numpy as np
import pytest

import aicslib as aics
from aicslib.framework import planner as planner_lib, session as session_lib
from aicslib.framework.execute import apply_op
from aicslib.ops import gradients_impl, gradients_util


@pytest.fixture
def faulty_op(op_name):
    """Registers ``Faulty<N>(x: float) -> y: float`` whose kernel is ``kernel(x)``; returns a
    builder ``op(x, name)``."""
    def register(kernel):
        n = op_name("Faulty")
        aics.register_op(n).input("x: float").output("y: float")
        aics.register_kernel(n)(kernel)
        return n, lambda x, name="faulty": apply_op(n, [x], name=name)
    return register


def _divides_by_zero(x):
    return x * np.float32(1 // int(x.size == 0))  # Python's int division raises; NumPy's would warn


def _node_named(message, run_op, op_type, node):
    """Graph modes name the node (``[[node ...]]``), eager mode the op type (``[Op:...]``)."""
    if run_op.mode == "eager":
        return f"[Op:{op_type}]" in message
    return f"[[node {node}" in message


class TestKernelErrorsAreTheSameInEveryMode:
    def test_zero_division_is_invalid_argument_naming_the_node(self, run_op, faulty_op):
        op_type, op = faulty_op(_divides_by_zero)
        with pytest.raises(aics.errors.InvalidArgumentError, match="by zero") as info:
            run_op(lambda x: op(x, name="divide_me") * 2.0, np.ones(3, np.float32))
        assert _node_named(info.value.message, run_op, op_type, "divide_me"), info.value.message

    def test_wrong_output_dtype_is_internal_error(self, run_op, faulty_op):
        op_type, op = faulty_op(lambda x: x.astype(np.float64))
        with pytest.raises(aics.errors.InternalError, match="returned float64 where the op declares float32") \
                as info:
            run_op(lambda x: op(x, name="widen"), np.ones(3, np.float32))
        assert _node_named(info.value.message, run_op, op_type, "widen"), info.value.message

    def test_python_scalar_result_is_checked_too(self, run_op, faulty_op):
        # a Python float is float64 to NumPy: as wrong for a float32 op as a float64 array
        op_type, op = faulty_op(lambda x: float(x.sum()))
        with pytest.raises(aics.errors.InternalError, match="returned float64"):
            run_op(lambda x: op(x), np.ones(3, np.float32))

    def test_wrong_number_of_outputs_is_internal_error(self, run_op, op_name):
        n = op_name("TwoOut")
        aics.register_op(n).input("x: float").output("a: float").output("b: float")
        aics.register_kernel(n)(lambda x: (x,))
        with pytest.raises(aics.errors.InternalError, match="returned 1 outputs, expected 2"):
            run_op(lambda x: apply_op(n, [x])[0], np.ones(2, np.float32))

    def test_right_results_pass_unchanged(self, run_op, faulty_op):
        _, op = faulty_op(lambda x: x * np.float32(3))
        np.testing.assert_array_equal(run_op(lambda x: op(x), np.arange(3, dtype=np.float32)), [0, 3, 6])

    def test_op_errors_keep_their_class(self, run_op, faulty_op):
        def out_of_range(x):
            raise aics.errors.OutOfRangeError(None, None, "no more")
        _, op = faulty_op(out_of_range)
        with pytest.raises(aics.errors.OutOfRangeError, match="no more"):
            run_op(lambda x: op(x, name="drained"), np.ones(1, np.float32))


class TestEveryExecutorKeepsTheContract:
    def test_traced_run(self, faulty_op):
        _, op = faulty_op(_divides_by_zero)
        with aics.Graph().as_default():
            y = op(aics.constant(np.ones(2, np.float32)), name="traced")
            with aics.Session() as s, pytest.raises(aics.errors.InvalidArgumentError, match=r"\[\[node traced"):
                s.run(y, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                      run_metadata=aics.RunMetadata())

    def test_one_thread_per_device(self, faulty_op):
        _, op = faulty_op(_divides_by_zero)
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float32, [2], name="x")
            with aics.device("/CPU:0"):
                a = aics.multiply(x, 2.0, name="a")
            with aics.device("/CPU:1"):
                b = op(x, name="on_cpu1")
            total = aics.add(a, b)
            with aics.Session(config=aics.ConfigProto(device_count={"CPU": 2})) as s:
                with pytest.raises(aics.errors.InvalidArgumentError, match=r"\[\[node on_cpu1"):
                    s.run(total, {x: np.ones(2, np.float32)})

    def test_control_flow_graph(self, faulty_op):
        _, op = faulty_op(lambda x: x.astype(np.float64))
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float32, [2])
            y = aics.cond(aics.reduce_sum(x) > 0, lambda: op(x, name="in_branch"), lambda: x)
            with aics.Session() as s:
                with pytest.raises(aics.errors.InternalError, match="in_branch"):
                    s.run(y, {x: np.ones(2, np.float32)})
                np.testing.assert_array_equal(s.run(y, {x: -np.ones(2, np.float32)}), [-1, -1])

    def test_control_flow_graph_is_traced(self):
        with aics.Graph().as_default():
            i = aics.constant(0)
            out = aics.while_loop(lambda i: i < 3, lambda i: i + 1, [i])
            md = aics.RunMetadata()
            with aics.Session() as s:
                assert s.run(out, options=aics.RunOptions(trace_level=3), run_metadata=md) == 3
        ran = [n.node_name for n in md.node_stats()]
        assert ran.count("while/add") == 3, ran  # the body's add, once per iteration


# ---------------------------------------------------------------------------
# The planner seam.

def _graph():
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [], name="x")
        y = aics.multiply(x, 2.0, name="y")
        aics.add(y, 1.0, name="unused")
        z = aics.add(y, x, name="z")
    return g, x, z


def student_planner(targets, feeds, keep):
    """A planner written from the contract alone: Kahn's algorithm over the needed ops."""
    needed, stack = set(), list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t not in feeds)
        stack.extend(op.control_inputs)

    def deps(op):
        return {t.op for t in op.inputs if t not in feeds} | set(op.control_inputs)
    order, done = [], set()
    while len(order) < len(needed):
        ready = sorted((op for op in needed - done if deps(op) <= done), key=lambda op: op.name)
        if not ready:
            raise aics.errors.InvalidArgumentError(None, None, "cycle")
        order.append(ready[0])
        done.add(ready[0])
    last = {t: i for i, op in enumerate(order) for t in op.inputs}
    free = [[] for _ in order]
    for t, i in last.items():
        if t not in keep:
            free[i].append(t)
    return order, free


class TestPlannerSeam:
    def test_default_planner_prunes_orders_and_frees(self):
        g, x, z = _graph()
        order, free = planner_lib.default_planner([z.op], {x}, {z})
        names = [op.name for op in order]
        assert "unused" not in names and "x" not in names  # pruned; the fed x needs no producer
        assert names.index("y") < names.index("z")
        y = g.get_tensor_by_name("y:0")
        assert y in free[names.index("z")] and z not in [t for f in free for t in f]

    def test_a_planner_in_place_is_used_and_restored(self):
        g, x, z = _graph()
        calls = []

        def recording(targets, feeds, keep):
            calls.append([op.name for op in targets])
            return student_planner(targets, feeds, keep)
        with aics.Session(graph=g) as s:
            assert s.run(z, {x: 3.0}) == 9.0
            with aics.experimental.use_planner(recording):
                assert session_lib.planner.current is recording
                assert s.run(z, {x: 3.0}) == 9.0     # a new plan: plans are cached per planner
                assert s.run(z, {x: 4.0}) == 12.0    # the cached one
            assert session_lib.planner.current is planner_lib.default_planner
        assert calls == [["z"]]

    def test_planner_errors_reach_the_caller(self):
        g, x, z = _graph()

        def broken(targets, feeds, keep):
            raise aics.errors.InvalidArgumentError(None, None, "planner says no")
        with aics.Session(graph=g) as s, aics.experimental.use_planner(broken):
            with pytest.raises(aics.errors.InvalidArgumentError, match="planner says no"):
                s.run(z, {x: 1.0})

    def test_use_planner_wants_a_function(self):
        with pytest.raises(TypeError, match="planner seam takes a function"):
            with aics.experimental.use_planner("depth-first"):
                pass


# ---------------------------------------------------------------------------
# The graph-gradients seam.

class TestGradientsSeam:
    def test_replacement_builds_every_graph_gradient(self):
        seen = []

        def recording(ys, xs, grad_ys, stop_gradients):
            seen.append(([y.name for y in ys], [x.name for x in xs]))
            return gradients_util.default_gradients(ys, xs, grad_ys, stop_gradients)
        with aics.experimental.use_gradients(recording):
            assert gradients_impl.implementation.current is recording
            with aics.Graph().as_default():
                x = aics.placeholder(aics.float32, [], name="x")
                (dx,) = aics.gradients(x * x, [x])
                with aics.Session() as s:
                    assert s.run(dx, {x: 3.0}) == 6.0

            @aics.function
            def tape_in_function(v):
                with aics.GradientTape() as tape:
                    tape.watch(v)
                    y = v * v * v
                return tape.gradient(y, v)
            assert tape_in_function(aics.constant(2.0)).numpy() == 12.0
        assert gradients_impl.implementation.current is gradients_util.default_gradients
        assert len(seen) == 2 and seen[0][1] == ["x:0"]

    def test_replacement_result_is_what_gradients_returns(self):
        def zero(ys, xs, grad_ys, stop_gradients):
            return [aics.zeros_like(x) for x in xs]
        with aics.Graph().as_default(), aics.experimental.use_gradients(zero):
            x = aics.placeholder(aics.float32, [], name="x")
            (dx,) = aics.gradients(x * x, x)
            with aics.Session() as s:
                assert s.run(dx, {x: 3.0}) == 0.0
