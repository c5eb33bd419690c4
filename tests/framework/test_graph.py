"""Graph, Operation and Tensor: names, scopes, control deps, devices, collections, attributes, cycles."""
import json

import numpy as np
import pytest

import aicslib as aics


class TestNames:
    def test_unique_op_names(self, g):
        a = aics.constant([[1.0, 2.0]])
        m0 = aics.matmul(a, a, transpose_b=True)
        m1 = aics.matmul(a, a, transpose_b=True)
        m2 = aics.matmul(a, a, transpose_b=True)
        assert [m.op.name for m in (m0, m1, m2)] == ["MatMul", "MatMul_1", "MatMul_2"]

    def test_explicit_names_uniquified(self, g):
        x = aics.constant(1.0, name="x")
        x1 = aics.constant(1.0, name="x")
        assert (x.op.name, x1.op.name) == ("x", "x_1")

    def test_tensor_names_are_op_colon_index(self, g):
        parts = aics.split(aics.constant(np.zeros((2, 3), np.float32)), 3, axis=1, name="parts")
        assert [t.name for t in parts] == ["parts:0", "parts:1", "parts:2"]
        assert [t.value_index for t in parts] == [0, 1, 2]
        assert all(t.op is parts[0].op for t in parts)

    def test_name_scope_and_reentry(self, g):
        with aics.name_scope("layer") as s:
            c = aics.constant(1.0)
        assert s == "layer/" and c.op.name == "layer/Const"
        with aics.name_scope("layer") as s1:
            c1 = aics.constant(1.0)
        assert s1 == "layer_1/" and c1.op.name == "layer_1/Const"
        with aics.name_scope("layer") as s2:
            pass
        assert s2 == "layer_2/"

    def test_absolute_scope_reenters(self, g):
        with aics.name_scope("blk") as s:
            aics.constant(1.0)
        with aics.name_scope(s):
            c = aics.constant(1.0)
        assert c.op.name == "blk/Const_1"

    def test_nested_scopes(self, g):
        with aics.name_scope("outer"):
            with aics.name_scope("inner") as s:
                c = aics.constant(1.0, name="c")
        assert s == "outer/inner/" and c.op.name == "outer/inner/c"

    def test_none_scope_goes_to_top_level(self, g):
        with aics.name_scope("outer"):
            with aics.name_scope(None):
                c = aics.constant(1.0, name="top")
            v = aics.Variable(1.0, name="w")
        assert c.op.name == "top"
        assert v.name == "outer/w:0"

    def test_scope_name_conflicting_with_op_name(self, g):
        aics.constant(1.0, name="foo")
        with aics.name_scope("foo") as s:
            pass
        assert s == "foo_1/"

    def test_invalid_scope_name(self, g):
        with pytest.raises(ValueError):
            with aics.name_scope("bad name!"):
                pass

    def test_name_scope_is_prefix_only_in_eager(self):
        with aics.name_scope("eager") as s:
            assert s == "eager/"
            assert aics.executing_eagerly()


class TestControlDependencies:
    def test_ops_inside_get_control_inputs(self, g):
        a = aics.constant(1.0, name="a")
        b = aics.constant(2.0, name="b")
        with aics.control_dependencies([a]):
            c = aics.add(b, b, name="c")
            with aics.control_dependencies([b.op]):
                d = aics.identity(c, name="d")
        e = aics.identity(c, name="e")
        assert c.op.control_inputs == [a.op]
        assert set(d.op.control_inputs) == {a.op, b.op}
        assert e.op.control_inputs == []

    def test_none_clears(self, g):
        a = aics.constant(1.0)
        with aics.control_dependencies([a]):
            with aics.control_dependencies(None):
                c = aics.constant(2.0)
        assert c.op.control_inputs == []

    def test_control_input_runs_first(self, g):
        v = aics.Variable(0.0, name="counter")
        inc = v.assign_add(1.0)
        with aics.control_dependencies([inc]):
            out = aics.identity(aics.constant(5.0))
        with aics.Session() as s:
            s.run(v.initializer)
            s.run(out)
            s.run(out)
            assert s.run(v) == 2.0  # the increment ran once per fetch of `out`

    def test_rejects_non_ops(self, g):
        with pytest.raises(TypeError):
            with aics.control_dependencies([3]):
                pass

    def test_rejects_other_graph(self, g):
        with aics.Graph().as_default():
            other = aics.constant(1.0)
        with pytest.raises(ValueError):
            with aics.control_dependencies([other]):
                pass


class TestDevices:
    def test_device_scope_nests(self, g):
        with aics.device("/cpu:0"):
            a = aics.constant(1.0)
            with aics.device("/mlu:0"):
                b = aics.constant(1.0)
            c = aics.constant(1.0)
        d = aics.constant(1.0)
        assert a.device == "/device:CPU:0" and a.op.device == "/device:CPU:0"
        assert b.device == "/device:MLU:0"
        assert c.device == "/device:CPU:0"
        assert d.device == ""

    def test_device_in_node_def(self, g):
        with aics.device("/gpu:0"):
            a = aics.constant(1.0, name="a")
        assert a.op.node_def["device"] == "/device:GPU:0"


class TestCollections:
    def test_add_and_get(self, g):
        aics.add_to_collection("my", 1)
        aics.add_to_collection("my", 2)
        assert aics.get_collection("my") == [1, 2]
        assert g.get_collection("nothing") == []
        assert "my" in g.get_all_collection_keys()

    def test_returned_list_is_a_copy(self, g):
        aics.add_to_collection("my", 1)
        aics.get_collection("my").append(99)
        assert aics.get_collection("my") == [1]
        g.get_collection_ref("my").append(2)
        assert aics.get_collection("my") == [1, 2]

    def test_variables_collections(self, g):
        w = aics.Variable(1.0, name="w")
        step = aics.Variable(0, trainable=False, name="step")
        assert aics.global_variables() == [w, step]
        assert aics.trainable_variables() == [w]
        assert g.get_collection(aics.GraphKeys.GLOBAL_VARIABLES) == [w, step]
        assert g.get_collection(aics.GraphKeys.TRAINABLE_VARIABLES) == [w]

    def test_scope_filter(self, g):
        with aics.name_scope("enc"):
            a = aics.Variable(1.0, name="a")
        with aics.name_scope("dec"):
            aics.Variable(1.0, name="b")
        assert aics.global_variables(scope="enc") == [a]


class TestOperationAttributes:
    def test_attributes(self, g):
        a = aics.constant([[1.0, 2.0]], name="a")
        b = aics.constant([[3.0], [4.0]], name="b")
        with aics.device("/cpu:0"):
            m = aics.matmul(a, b, transpose_a=False, name="mm")
        op = m.op
        assert op.name == "mm"
        assert op.type == "MatMul"
        assert op.inputs == (a, b)
        assert op.outputs == [m]
        assert op.control_inputs == []
        assert op.device == "/device:CPU:0"
        assert op.graph is g
        assert op.get_attr("transpose_a") is False
        assert op.get_attr("T") == aics.float32
        with pytest.raises(ValueError, match="no attr named 'nope'"):
            op.get_attr("nope")

    def test_traceback_points_at_user_code(self, g):
        import inspect
        line = inspect.currentframe().f_lineno + 1
        t = aics.constant(1.0)
        tb = t.op.traceback
        assert tb[-1].filename == __file__
        assert tb[-1].lineno == line
        assert all("/aicslib/" not in f.filename for f in tb)

    def test_node_def(self, g):
        a = aics.constant([1.0], name="a")
        with aics.control_dependencies([a]):
            s = aics.split(aics.constant(np.zeros(4, np.float32), name="z"), 2, name="sp")
            y = aics.add(s[1], s[0], name="y")
        nd = y.op.node_def
        assert nd == {"name": "y", "op": "AddV2", "input": ["sp:1", "sp", "^a"],
                      "attr": {"T": {"type": "DT_FLOAT"}}}
        json.dumps(nd)

    def test_consumers(self, g):
        a = aics.constant(1.0)
        b = aics.identity(a)
        c = aics.add(a, a)
        assert a.consumers() == [b.op, c.op, c.op]

    def test_op_run_needs_default_session(self, g):
        op = aics.no_op()
        with pytest.raises(ValueError, match="no default session"):
            op.run()


class TestTensorAttributes:
    def test_attributes(self, g):
        p = aics.placeholder(aics.float32, [None, 3], name="x")
        assert p.name == "x:0"
        assert p.dtype == aics.float32
        assert p.shape.as_list() == [None, 3]
        assert p.shape.rank == 2 and p.ndim == 2
        assert not p.shape.is_fully_defined()
        assert p.op.type == "Placeholder"
        assert p.graph is g
        assert p.device == ""

    def test_static_shape_inference_partial(self, g):
        p = aics.placeholder(aics.float32, [None, 3])
        w = aics.constant(np.ones((3, 4), np.float32))
        y = aics.matmul(p, w)
        assert y.shape.as_list() == [None, 4]
        assert aics.reduce_sum(y, axis=1).shape.as_list() == [None]
        assert aics.reduce_sum(y, axis=0, keepdims=True).shape.as_list() == [1, 4]
        assert (p + aics.constant(np.ones((1, 3), np.float32))).shape.as_list() == [None, 3]
        assert aics.transpose(y).shape.as_list() == [4, None]
        assert aics.reshape(p, [-1]).shape.as_list() == [None]

    def test_unknown_rank(self, g):
        p = aics.placeholder(aics.float32)
        assert p.shape.rank is None
        assert aics.square(p).shape.rank is None

    def test_set_shape_merges_and_rejects(self, g):
        p = aics.placeholder(aics.float32, [None, 3])
        p.set_shape([5, None])
        assert p.shape.as_list() == [5, 3]
        with pytest.raises(ValueError):
            p.set_shape([4, 3])

    def test_eval_with_default_session(self, g):
        t = aics.constant(2.0) * 3.0
        with pytest.raises(ValueError, match="no default session"):
            t.eval()
        with aics.Session():
            assert t.eval() == 6.0
        s = aics.Session()
        assert t.eval(session=s) == 6.0
        with s.as_default():
            assert t.eval() == 6.0
        s.close()

    def test_bool_of_graph_tensor_raises(self, g):
        with pytest.raises(TypeError, match="bool"):
            if aics.constant(True):
                pass

    def test_shape_errors_at_construction_name_the_node(self, g):
        a = aics.constant(np.ones((2, 3), np.float32), name="a")
        with pytest.raises(aics.errors.InvalidArgumentError) as ei:
            aics.matmul(a, a, name="bad_mm")
        msg = str(ei.value)
        assert "Dimensions must be equal, but are 3 and 2" in msg
        assert "bad_mm" in msg and "'a:0'" in msg
        assert [o.name for o in g.get_operations()] == ["a"]  # nothing was added
        # and the name is free again
        assert aics.matmul(a, a, transpose_b=True, name="bad_mm").op.name == "bad_mm"

    def test_broadcast_shape_error(self, g):
        with pytest.raises(aics.errors.InvalidArgumentError, match="Dimensions must be equal"):
            aics.add(aics.constant(np.ones(3, np.float32)), aics.constant(np.ones(4, np.float32)))

    def test_mixing_graphs_rejected(self, g):
        with aics.Graph().as_default():
            other = aics.constant(1.0)
        with pytest.raises(ValueError, match="same graph"):
            aics.add(other, aics.constant(1.0))


class TestLookup:
    def test_get_by_name(self, g):
        a = aics.constant(1.0, name="a")
        sp = aics.split(aics.constant(np.zeros(4, np.float32)), 2, name="sp")
        assert g.get_tensor_by_name("a:0") is a
        assert g.get_tensor_by_name("sp:1") is sp[1]
        assert g.get_operation_by_name("sp") is sp[0].op
        assert [o.name for o in g.get_operations()][0] == "a"
        assert [o.name for o in g.get_operations()][-1] == "sp"
        assert len(g.get_operations()) == 4  # a, the split value, the split axis, sp

    def test_lookup_errors(self, g):
        aics.constant(1.0, name="a")
        with pytest.raises(KeyError, match="does not exist"):
            g.get_tensor_by_name("zz:0")
        with pytest.raises(KeyError, match="only has 1 outputs"):
            g.get_tensor_by_name("a:3")
        with pytest.raises(ValueError, match="Tensor names must be"):
            g.get_tensor_by_name("a")
        with pytest.raises(ValueError):
            g.get_operation_by_name("a:0")
        with pytest.raises(KeyError, match="not in the graph"):
            g.get_operation_by_name("zz")

    def test_operations_in_creation_order(self, g):
        names = [aics.constant(float(i), name=f"c{i}").op.name for i in range(5)]
        assert [o.name for o in g.get_operations()] == names

    def test_finalized_graph_rejects_ops(self, g):
        aics.constant(1.0)
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            aics.constant(2.0)


class TestDefaultGraph:
    def test_as_default_nests(self):
        g1, g2 = aics.Graph(), aics.Graph()
        with g1.as_default():
            assert aics.get_default_graph() is g1
            with g2.as_default():
                assert aics.get_default_graph() is g2
            assert aics.get_default_graph() is g1

    def test_reset_default_graph(self):
        aics.disable_eager_execution()
        before = aics.get_default_graph()
        aics.constant(1.0)
        aics.reset_default_graph()
        after = aics.get_default_graph()
        assert after is not before and after.get_operations() == []

    def test_reset_inside_as_default_refused(self):
        with aics.Graph().as_default():
            with pytest.raises(AssertionError):
                aics.reset_default_graph()


class TestCycles:
    def test_control_input_closing_a_cycle_rejected(self, g):
        a = aics.constant(1.0, name="a")
        b = aics.identity(a, name="b")
        c = aics.identity(b, name="c")
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            a.op._add_control_input(c.op)
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            b.op._add_control_input(b.op)
        assert a.op.control_inputs == [] and b.op.control_inputs == []
        # A harmless edge is accepted.
        c.op._add_control_input(a.op)
        assert c.op.control_inputs == [a.op]

    def test_control_edge_cycle_through_control_edges(self, g):
        a = aics.no_op(name="a")
        b = aics.no_op(name="b")
        b._add_control_input(a)
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            a._add_control_input(b)

    def test_rewiring_input_into_a_cycle_rejected(self, g):
        a = aics.constant(1.0)
        b = aics.identity(a)
        c = aics.identity(b)
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            b.op._update_input(0, c)

    def test_graph_def_with_cycle_rejected_on_import(self, g):
        gd = {"node": [
            {"name": "x", "op": "Identity", "input": ["y"], "attr": {"T": {"type": "DT_FLOAT"}}},
            {"name": "y", "op": "Identity", "input": ["x"], "attr": {"T": {"type": "DT_FLOAT"}}}]}
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            aics.import_graph_def(gd)
        assert g.get_operations() == []

    def test_graph_def_with_control_cycle_rejected(self, g):
        gd = {"node": [
            {"name": "a", "op": "NoOp", "input": ["^b"], "attr": {}},
            {"name": "b", "op": "NoOp", "input": ["^a"], "attr": {}}]}
        with pytest.raises(aics.errors.InvalidArgumentError, match="cycle"):
            aics.import_graph_def(gd)
