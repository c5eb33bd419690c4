"""Session.run: fetch structures, feeds and their checks, pruning, plan cache, lifetime, tracing."""
import collections
import re

import numpy as np
import pytest

import aicslib as aics
from aicslib import flags

Pair = collections.namedtuple("Pair", ["first", "second"])


@pytest.fixture
def vlog(monkeypatch):
    """Sets AICS_MIN_VLOG_LEVEL for the test and restores the flags afterwards."""
    def set_level(n):
        monkeypatch.setenv("AICS_MIN_VLOG_LEVEL", str(n))
        monkeypatch.setenv("AICS_MIN_LOG_LEVEL", "0")
        flags.reload()
    yield set_level
    monkeypatch.delenv("AICS_MIN_VLOG_LEVEL", raising=False)
    monkeypatch.delenv("AICS_MIN_LOG_LEVEL", raising=False)
    flags.reload()


class TestFetches:
    def test_single_tensor(self, g):
        a = aics.constant([1.0, 2.0])
        with aics.Session() as s:
            out = s.run(a * 2.0)
        assert isinstance(out, np.ndarray)
        np.testing.assert_array_equal(out, [2.0, 4.0])

    def test_scalars_come_back_as_numpy_scalars_as_in_tf(self, g):
        # TF 2.21, compat.v1 Session: np.float32(1.0), np.int32(3), np.int64(0) from a
        # Dataset.range iterator; arrays stay arrays, string scalars are bytes
        it = aics.compat.v1.data.make_initializable_iterator(aics.data.Dataset.range(3))
        nxt = it.get_next()
        with aics.Session() as s:
            s.run(it.initializer)
            f, i, v, r, b = s.run([aics.constant(1.0), aics.constant(3), aics.constant([1.0]), nxt,
                                   aics.constant("xy")])
        assert type(f) is np.float32 and f == 1.0
        assert type(i) is np.int32 and i == 3
        assert type(v) is np.ndarray and v.shape == (1,)
        assert type(r) is np.int64 and r == 0
        assert b == b"xy"

    def test_nested_structures_are_mirrored(self, g):
        a = aics.constant(1.0, name="a")
        b = aics.constant(2.0, name="b")
        c = aics.add(a, b, name="c")
        fetches = {"x": [a, (b, c)], "y": Pair(c, {"z": a}), "w": (a,)}
        with aics.Session() as s:
            out = s.run(fetches)
        assert out == {"x": [1.0, (2.0, 3.0)], "y": Pair(3.0, {"z": 1.0}), "w": (1.0,)}
        assert type(out["x"]) is list and type(out["x"][1]) is tuple
        assert type(out["y"]) is Pair

    def test_ordered_dict_type_kept(self, g):
        a = aics.constant(1.0)
        od = collections.OrderedDict([("k2", a), ("k1", a * 2.0)])
        with aics.Session() as s:
            out = s.run(od)
        assert type(out) is collections.OrderedDict
        assert list(out.items()) == [("k2", 1.0), ("k1", 2.0)]

    def test_empty_structures(self, g):
        with aics.Session() as s:
            assert s.run([]) == []
            assert s.run({}) == {}

    def test_same_tensor_fetched_twice(self, g):
        a = aics.constant(3.0)
        with aics.Session() as s:
            assert s.run([a, a, {"k": a}]) == [3.0, 3.0, {"k": 3.0}]

    def test_fetch_by_name(self, g):
        a = aics.constant(4.0, name="a")
        aics.multiply(a, a, name="sq")
        with aics.Session() as s:
            assert s.run("sq:0") == 16.0
            assert s.run(["a:0", "sq:0"]) == [4.0, 16.0]
            assert s.run("sq") is None  # an op name fetches the op

    def test_fetching_an_op_gives_none(self, g):
        v = aics.Variable(1.0)
        with aics.Session() as s:
            assert s.run(v.initializer) is None
            assert s.run([v.initializer, v]) == [None, 1.0]

    def test_fetch_variable(self, g):
        v = aics.Variable([1.0, 2.0], name="v")
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            np.testing.assert_array_equal(s.run(v), [1.0, 2.0])

    @pytest.mark.parametrize("bad,exc", [(None, TypeError), (3, TypeError), ("nope:0", ValueError),
                                         ("nope", ValueError)])
    def test_bad_fetches(self, g, bad, exc):
        aics.constant(1.0)
        with aics.Session() as s:
            with pytest.raises(exc):
                s.run(bad)

    def test_fetch_from_other_graph(self, g):
        with aics.Graph().as_default():
            other = aics.constant(1.0)
        with aics.Session() as s:
            with pytest.raises(ValueError):
                s.run(other)

    def test_returned_arrays_do_not_alias_constants(self, g):
        a = aics.constant([1.0, 2.0])
        with aics.Session() as s:
            out = s.run(a)
            out[0] = 100.0
            np.testing.assert_array_equal(s.run(a), [1.0, 2.0])


class TestFeeds:
    def test_feed_placeholder(self, g):
        x = aics.placeholder(aics.float32, [None, 2], name="x")
        y = aics.reduce_sum(x * 2.0, axis=1)
        with aics.Session() as s:
            np.testing.assert_allclose(s.run(y, {x: [[1, 2], [3, 4]]}), [6.0, 14.0])
            np.testing.assert_allclose(s.run(y, feed_dict={"x:0": np.ones((3, 2))}), [4.0, 4.0, 4.0])

    def test_feed_any_tensor(self, g):
        a = aics.constant(2.0, name="a")
        b = aics.multiply(a, 3.0, name="b")
        c = aics.add(b, 1.0, name="c")
        with aics.Session() as s:
            assert s.run(c) == 7.0
            assert s.run(c, {a: 10.0}) == 31.0
            assert s.run(c, {b: 0.5}) == 1.5
            assert s.run([b, c], {b: 4.0}) == [4.0, 5.0]  # a fed fetch returns the fed value

    def test_feed_one_output_of_a_multi_output_op(self, g):
        x = aics.constant([1.0, 2.0, 3.0, 4.0])
        a, b = aics.split(x, 2)
        c = a * 10.0
        with aics.Session() as s:
            # Split still runs (b is needed) but the fed value of a wins, as in TF.
            ra, rb, rc = s.run([a, b, c], {a: [100.0, 200.0]})
        np.testing.assert_array_equal(ra, [100.0, 200.0])
        np.testing.assert_array_equal(rb, [3.0, 4.0])
        np.testing.assert_array_equal(rc, [1000.0, 2000.0])

    def test_feed_shape_error_message(self, g):
        x = aics.placeholder(aics.float32, [1, 2], name="x")
        with aics.Session() as s:
            with pytest.raises(ValueError) as ei:
                s.run(x * 1.0, {x: np.array([1.0, 2.0])})
        assert str(ei.value) == "Cannot feed value of shape (2,) for Tensor 'x:0', which has shape (1, 2)"

    def test_feed_shape_partial(self, g):
        x = aics.placeholder(aics.float32, [None, 3], name="x")
        with aics.Session() as s:
            assert s.run(x, {x: np.zeros((5, 3))}).shape == (5, 3)
            with pytest.raises(ValueError, match=r"shape \(5, 2\) for Tensor 'x:0', which has shape \(\?, 3\)"):
                s.run(x, {x: np.zeros((5, 2))})

    def test_feed_of_the_tensors_own_dtype_is_still_checked_and_never_written(self, g):
        # float32 arrays for a float32 placeholder take the Session's short way in: same checks.
        x = aics.placeholder(aics.float32, [None, 3], name="x")
        y = aics.nn.relu(x + 1.0) * 2.0    # elementwise kernels that may write into a free input
        with aics.Session() as s:
            fed = np.full((2, 3), -3.0, np.float32)
            np.testing.assert_array_equal(s.run(y, {x: fed}), np.zeros((2, 3), np.float32))
            np.testing.assert_array_equal(fed, np.full((2, 3), -3.0, np.float32))
            for bad in (np.zeros((2, 2), np.float32), np.zeros(3, np.float32), np.zeros((1, 2, 3), np.float32)):
                with pytest.raises(ValueError, match=rf"shape {re.escape(str(bad.shape))} for Tensor 'x:0'"):
                    s.run(y, {x: bad})

    def test_feed_dtype_errors(self, g):
        i = aics.placeholder(aics.int32, [2], name="i")
        b = aics.placeholder(aics.bool, [], name="b")
        f = aics.placeholder(aics.float32, [], name="f")
        with aics.Session() as s:
            with pytest.raises(TypeError, match="for Tensor 'i:0', which has dtype int32"):
                s.run(i, {i: [1.5, 2.5]})  # no silent truncation
            with pytest.raises(TypeError, match="Tensor 'b:0'"):
                s.run(b, {b: 1.0})
            with pytest.raises(TypeError, match="Tensor 'f:0'"):
                s.run(f, {f: "hello"})
            with pytest.raises((TypeError, ValueError), match="'i:0'"):
                s.run(i, {i: [2 ** 40, 1]})  # out of range for int32
            # lossless conversions are fine
            np.testing.assert_array_equal(s.run(i, {i: np.array([1, 2], np.int64)}), [1, 2])
            assert s.run(f, {f: 3}) == 3.0

    def test_fed_value_dtype_is_the_tensors(self, g):
        x = aics.placeholder(aics.float32, [2])
        with aics.Session() as s:
            assert s.run(x, {x: np.array([1.0, 2.0], np.float64)}).dtype == np.float32

    def test_missing_feed_names_placeholder(self, g):
        x = aics.placeholder(aics.float32, [None, 2], name="images")
        y = x * 2.0
        with aics.Session() as s:
            with pytest.raises(aics.errors.InvalidArgumentError) as ei:
                s.run(y)
        msg = str(ei.value)
        assert "You must feed a value for placeholder tensor 'images' with dtype float32 and shape [?,2]" in msg
        assert ei.value.op.name == "images"

    def test_feed_value_cannot_be_a_tensor(self, g):
        x = aics.placeholder(aics.float32, [])
        with aics.Session() as s:
            with pytest.raises(TypeError, match="cannot be a aics.Tensor"):
                s.run(x, {x: aics.constant(1.0)})

    def test_cannot_feed_an_operation(self, g):
        x = aics.placeholder(aics.float32, [])
        with aics.Session() as s:
            with pytest.raises(TypeError, match="Operation"):
                s.run(x, {x.op: 1.0})

    def test_feed_eager_tensor_value(self, g):
        x = aics.placeholder(aics.float32, [2])
        aics.enable_eager_execution()
        val = aics.EagerTensor(np.array([1.0, 2.0], np.float32), aics.float32)
        with aics.Session(graph=g) as s:
            np.testing.assert_array_equal(s.run(x, {x: val}), [1.0, 2.0])

    def test_unused_feed_does_not_need_placeholder_chain(self, g):
        x = aics.placeholder(aics.float32, [], name="x")
        y = x + 1.0
        z = y * 2.0
        with aics.Session() as s:
            assert s.run(z, {y: 3.0}) == 6.0  # x is cut off by the feed of y


class TestPruning:
    def test_unneeded_print_does_not_run(self, g, capfd):
        a = aics.constant(2.0, name="a")
        printed = aics.Print(a, [a], message="side effect: ", name="printer")
        c = aics.multiply(a, 3.0, name="c")
        with aics.Session() as s:
            assert s.run(c) == 6.0
            assert "side effect" not in capfd.readouterr().err
            assert s.run(printed) == 2.0
            assert "side effect: [2" in capfd.readouterr().err

    def test_unneeded_stateful_op_does_not_run(self, g):
        v = aics.Variable(0.0)
        inc = v.assign_add(1.0)
        other = aics.constant(1.0) + 1.0
        with aics.Session() as s:
            s.run(v.initializer)
            for _ in range(3):
                s.run(other)
            assert s.run(v) == 0.0
            s.run(inc)
            assert s.run(v) == 1.0

    def test_unfed_placeholder_not_needed_is_fine(self, g):
        aics.placeholder(aics.float32, [], name="unused")
        c = aics.constant(1.0) * 2.0
        with aics.Session() as s:
            assert s.run(c) == 2.0

    def test_pruning_vlog(self, g, vlog, capfd):
        vlog(1)
        a = aics.constant(2.0, name="a")
        aics.Print(a, [a], message="nope", name="printer")
        aics.placeholder(aics.float32, name="ph")
        c = aics.multiply(a, a, name="c")
        with aics.Session() as s:
            s.run(c)
        err = capfd.readouterr().err
        assert "Pruning graph for fetches [c:0] feeds []: keeping 2 of 4 nodes" in err
        assert "Pruned (not needed by the fetches): printer, ph" in err
        assert "nope" not in err
        assert "Placing node" not in err  # that is VLOG 2

    def test_vlog_levels_2_and_3(self, g, vlog, capfd):
        a = aics.constant(2.0, name="a")
        c = aics.multiply(a, a, name="c")
        vlog(2)
        with aics.Session() as s:
            s.run(c)
        err = capfd.readouterr().err
        assert "Placing node 'c' (Mul) on /device:CPU:0; kernel registered at aicslib/framework/cwise_table.py:" in err
        assert "Executing kernel" not in err
        vlog(3)
        with aics.Session() as s:
            s.run(c)
        err = capfd.readouterr().err
        assert "Executing kernel Mul for node 'c' on /device:CPU:0: inputs [float32[], float32[]] -> [float32[]]" in err
        # TF-like prefix: date, severity letter I, file:line]
        line = next(entry for entry in err.splitlines() if "Executing kernel Mul" in entry)
        assert " I aicslib/framework/executor.py:" in line and "] Executing" in line

    def test_vlog_silent_by_default(self, g, vlog, capfd):
        vlog(0)
        c = aics.constant(1.0) * 2.0
        with aics.Session() as s:
            s.run(c)
        assert capfd.readouterr().err == ""


class TestPlanCache:
    def test_plan_reused_per_signature(self, g, vlog, capfd):
        x = aics.placeholder(aics.float32, [], name="x")
        y = x * 2.0
        z = y + 1.0
        vlog(1)
        with aics.Session() as s:
            for v in range(3):
                assert s.run(y, {x: v}) == 2.0 * v
            assert len(s._plans) == 1
            assert capfd.readouterr().err.count("Pruning graph") == 1
            s.run([y, z], {x: 1.0})
            s.run(z, {y: 1.0})
            assert len(s._plans) == 3
            s.run(y, {x: 5.0})
            assert len(s._plans) == 3
            assert capfd.readouterr().err.count("Pruning graph") == 2

    def test_graph_change_gives_fresh_plan(self, g):
        a = aics.constant(1.0)
        b = a + 1.0
        with aics.Session() as s:
            assert s.run(b) == 2.0
            c = b * 10.0
            assert s.run(c) == 20.0
            assert s.run(b) == 2.0

    def test_fixed_value_nodes_come_from_the_plan_and_a_traced_run_lists_them(self, g):
        # A Const's array and a VarHandleOp's variable are the same objects on every run: an
        # untraced run takes them from the plan (run once), a traced one runs and lists every node.
        v = aics.Variable(1.0, name="v")
        c = aics.constant(2.0, name="c")
        x = aics.placeholder(aics.float32, [], name="x")
        y = v * c + x
        inc = v.assign_add(1.0)
        vec = aics.constant([1.0, 2.0], name="vec")
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            assert [float(s.run(y, {x: 1.0})) for _ in range(2)] == [3.0, 3.0]
            s.run(inc)
            assert float(s.run(y, {x: 0.5})) == 4.5          # the variable's update is seen
            got = s.run(vec)
            got[0] = 9.0                                     # a fetched value is the caller's copy
            assert s.run(vec).tolist() == [1.0, 2.0]
            plan = s._plans[next(k for k in s._plans if y in k[0])]
            fixed = {st.op.name for st in plan.fixed_steps}
            assert {"v", "c"} <= fixed
            assert not fixed & {entry[1].name for entry in plan.varying_loop}
            md = aics.RunMetadata()
            assert float(s.run(y, {x: 0.0}, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                               run_metadata=md)) == 4.0
            assert {"v", "c"} <= {n.node_name for n in md.node_stats()}


class TestLifetime:
    def test_closed_session_raises(self, g):
        c = aics.constant(1.0)
        s = aics.Session()
        assert s.run(c) == 1.0
        s.close()
        with pytest.raises(RuntimeError, match="closed Session"):
            s.run(c)
        s.close()  # closing twice is fine

    def test_context_manager_closes_and_sets_default(self, g):
        c = aics.constant(5.0)
        assert aics.get_default_session() is None
        with aics.Session() as s:
            assert aics.get_default_session() is s
            assert c.eval() == 5.0
            with aics.Session() as inner:
                assert aics.get_default_session() is inner
            assert aics.get_default_session() is s
        assert aics.get_default_session() is None
        with pytest.raises(RuntimeError):
            s.run(c)

    def test_as_default_does_not_close(self, g):
        c = aics.constant(5.0)
        s = aics.Session()
        with s.as_default():
            assert c.eval() == 5.0
        assert s.run(c) == 5.0
        s.close()

    def test_operation_run_with_default_session(self, g):
        v = aics.Variable(3.0)
        with aics.Session() as s:
            v.initializer.run()
            v.assign_add(1.0).op.run()
            assert s.run(v) == 4.0

    def test_eval_with_feed(self, g):
        x = aics.placeholder(aics.float32, [])
        with aics.Session():
            assert (x * 2.0).eval({x: 4.0}) == 8.0

    def test_interactive_session(self, g):
        c = aics.constant(7.0)
        s = aics.InteractiveSession()
        try:
            assert aics.get_default_session() is s
            assert c.eval() == 7.0
        finally:
            s.close()
        assert aics.get_default_session() is None

    def test_session_graph(self, g):
        other = aics.Graph()
        with other.as_default():
            k = aics.constant(9.0)
        s = aics.Session(graph=other)
        assert s.graph is other
        assert s.run(k) == 9.0
        assert aics.Session().graph is g

    def test_only_in_process_target(self, g):
        with pytest.raises(ValueError):
            aics.Session("grpc://localhost:2222")

    def test_make_callable(self, g):
        x = aics.placeholder(aics.float32, [])
        f = aics.Session().make_callable(x * 3.0, [x])
        assert f(2.0) == 6.0


class TestRunErrors:
    def test_kernel_error_names_the_node(self, g):
        x = aics.placeholder(aics.float32, [None], name="x")
        r = aics.reshape(x, [2, 2], name="to_square")
        out = r * 2.0
        with aics.Session() as s:
            with pytest.raises(aics.errors.InvalidArgumentError) as ei:
                s.run(out, {x: np.ones(3)})
        assert ei.value.op.name == "to_square"
        assert "to_square" in str(ei.value)

    def test_error_in_op_without_outputs_names_it(self, g):
        v = aics.Variable(np.zeros(2, np.float32), name="v")
        p = aics.placeholder(aics.float32, None, name="p")
        read_after = v.assign(p)  # AssignVariableOp, then a ReadVariableOp after it
        with aics.Session() as s:
            s.run(v.initializer)
            with pytest.raises(aics.errors.InvalidArgumentError) as ei:
                s.run(read_after, {p: np.ones(3, np.float32)})
        assert ei.value.op.type == "AssignVariableOp"

    def test_cycle_detected_at_run(self, g):
        # Build a cycle behind the checks' back, as a buggy graph rewrite could.
        a = aics.constant(1.0, name="a")
        b = aics.identity(a, name="b")
        c = aics.identity(b, name="c")
        b.op._control_inputs.append(c.op)
        with aics.Session() as s:
            with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
                s.run(c)


class TestTracing:
    def test_full_trace_fills_run_metadata(self, g):
        a = aics.constant(np.ones((4, 4), np.float32), name="a")
        with aics.device("/cpu:0"):
            b = aics.matmul(a, a, name="mm")
        c = aics.reduce_sum(b, name="total")
        aics.constant(0.0, name="unused")
        md = aics.RunMetadata()
        with aics.Session() as s:
            out = s.run(c, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                        run_metadata=md)
        assert out == 64.0
        stats = md.node_stats()
        names = [n.node_name for n in stats]
        assert "unused" not in names
        assert {"a", "mm", "total"} <= set(names)
        # topological: producers before consumers
        assert names.index("a") < names.index("mm") < names.index("total")
        by_name = {n.node_name: n for n in stats}
        assert by_name["mm"].op == "MatMul"
        assert by_name["mm"].device == "/device:CPU:0"
        assert by_name["mm"].output_shapes == [(4, 4)]
        assert by_name["total"].output_shapes == [()]
        for n in stats:
            assert n.all_start_micros >= 0 and n.all_end_rel_micros >= 1
        starts = [n.all_start_micros for n in stats]
        assert starts == sorted(starts)
        assert [d.device for d in md.step_stats.dev_stats] == ["/device:CPU:0"]

    def test_no_trace_without_options(self, g):
        c = aics.constant(1.0) + 1.0
        md = aics.RunMetadata()
        with aics.Session() as s:
            s.run(c, run_metadata=md)
        assert md.node_stats() == []

    def test_trace_separates_devices(self, g):
        n = "SessTraceMluOp"
        aics.register_op(n).input("x: float").output("y: float")
        try:
            aics.register_kernel(n, device="MLU")(lambda x: x)
            a = aics.constant(1.0, name="a")
            with aics.device("/mlu:0"):
                y = aics.raw_ops.SessTraceMluOp(x=a, name="on_mlu")
            md = aics.RunMetadata()
            with aics.Session() as s:
                s.run(y, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
            devs = {d.device: [n_.node_name for n_ in d.node_stats] for d in md.step_stats.dev_stats}
            assert devs == {"/device:CPU:0": ["a"], "/device:MLU:0": ["on_mlu"]}
        finally:
            from aicslib.framework.execute import invalidate_caches
            aics.op_def_registry.unregister(n)
            aics.kernel_registry.unregister(n)
            invalidate_caches(n)
