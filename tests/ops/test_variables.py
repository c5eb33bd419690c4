"""Variables in graphs and eagerly: initializers, assignment, collections, per-session state."""
import numpy as np
import pytest

import aicslib as aics


class TestGraphVariables:
    def test_properties(self, g):
        v = aics.Variable([[1.0, 2.0]], name="w")
        assert v.name == "w:0"
        assert v.dtype == aics.float32
        assert v.shape.as_list() == [1, 2]
        assert v.op.name == "w" and v.op.type == "VarHandleOp"
        assert v.initializer.name == "w/Assign"
        assert v.graph is g
        assert v.trainable

    def test_dtype_argument(self, g):
        v = aics.Variable([1, 2], dtype=aics.float64)
        assert v.dtype == aics.float64
        with aics.Session() as s:
            s.run(v.initializer)
            assert s.run(v).dtype == np.float64

    def test_callable_initial_value(self, g):
        v = aics.Variable(lambda: np.arange(3, dtype=np.float32))
        with aics.Session() as s:
            s.run(v.initializer)
            np.testing.assert_array_equal(s.run(v), [0.0, 1.0, 2.0])

    def test_uninitialized_read_names_variable(self, g):
        v = aics.Variable(1.0, name="weights")
        y = v * 2.0
        with aics.Session() as s:
            with pytest.raises(aics.errors.FailedPreconditionError) as ei:
                s.run(y)
        assert "uninitialized value weights" in str(ei.value)

    def test_global_variables_initializer(self, g):
        a = aics.Variable(1.0, name="a")
        b = aics.Variable([2.0, 3.0], name="b")
        with aics.Session() as s:
            s.run(aics.global_variables_initializer())
            assert s.run(a) == 1.0
            np.testing.assert_array_equal(s.run(b), [2.0, 3.0])

    def test_variables_initializer_subset(self, g):
        a = aics.Variable(1.0, name="a")
        b = aics.Variable(2.0, name="b")
        init_a = aics.variables_initializer([a])
        with aics.Session() as s:
            s.run(init_a)
            assert s.run(a) == 1.0
            assert not s.run(aics.is_variable_initialized(b))
            with pytest.raises(aics.errors.FailedPreconditionError, match="'b:0'"):
                s.run(b)

    def test_initialized_value_runs_initializer_first(self, g):
        a = aics.Variable([1.0, 2.0], name="a")
        b = aics.Variable(a.initialized_value() * 2.0, name="b")
        with aics.Session() as s:
            s.run(b.initializer)  # only b's initializer: a's runs through the dependency
            np.testing.assert_array_equal(s.run(b), [2.0, 4.0])
            np.testing.assert_array_equal(s.run(a), [1.0, 2.0])

    def test_assign_methods(self, g):
        v = aics.Variable(10.0)
        with aics.Session() as s:
            s.run(v.initializer)
            assert s.run(v.assign(3.0)) == 3.0
            assert s.run(v.assign_add(2.0)) == 5.0
            assert s.run(v.assign_sub(1.5)) == 3.5
            assert s.run(v) == 3.5

    def test_assign_functions(self, g):
        v = aics.Variable([1.0, 1.0])
        with aics.Session() as s:
            s.run(v.initializer)
            np.testing.assert_array_equal(s.run(aics.assign(v, [4.0, 5.0])), [4.0, 5.0])
            np.testing.assert_array_equal(s.run(aics.assign_add(v, [1.0, 1.0])), [5.0, 6.0])
            np.testing.assert_array_equal(s.run(aics.assign_sub(v, [5.0, 5.0])), [0.0, 1.0])

    def test_assign_op_runs_each_time(self, g):
        v = aics.Variable(0)
        inc = v.assign_add(1)
        with aics.Session() as s:
            s.run(v.initializer)
            for _ in range(5):
                s.run(inc)
            assert s.run(v) == 5

    def test_assign_without_read_value_returns_op(self, g):
        v = aics.Variable(0.0)
        op = v.assign(2.0, read_value=False)
        assert isinstance(op, aics.Operation)
        with aics.Session() as s:
            s.run(v.initializer)
            assert s.run(op) is None
            assert s.run(v) == 2.0

    def test_assign_shape_mismatch(self, g):
        v = aics.Variable(np.zeros(2, np.float32), name="v")
        with pytest.raises(ValueError, match=r"variable 'v:0'.*\(2,\).*\(3,\)"):
            v.assign(np.zeros(3, np.float32))
        with pytest.raises(ValueError):
            v.assign_add(np.zeros((2, 2), np.float32))

    def test_assign_dtype_mismatch(self, g):
        v = aics.Variable(np.zeros(2, np.int32), name="v")
        with pytest.raises((TypeError, ValueError)):
            v.assign([0.5, 1.5])

    def test_two_sessions_have_separate_state(self, g):
        v = aics.Variable(0.0, name="v")
        inc = v.assign_add(1.0)
        s1, s2 = aics.Session(), aics.Session()
        s1.run(v.initializer)
        s1.run(inc)
        s1.run(inc)
        with pytest.raises(aics.errors.FailedPreconditionError):
            s2.run(v)
        s2.run(v.initializer)
        s2.run(inc)
        assert (s1.run(v), s2.run(v)) == (2.0, 1.0)
        s1.close()
        s2.close()

    def test_state_lost_with_closed_session(self, g):
        v = aics.Variable(1.0)
        with aics.Session() as s:
            s.run(v.initializer)
            s.run(v.assign(7.0))
        with aics.Session() as s:
            with pytest.raises(aics.errors.FailedPreconditionError):
                s.run(v)

    def test_reads_are_ordered_by_control_dependencies(self, g):
        v = aics.Variable(1.0)
        before = v.value()
        with aics.control_dependencies([v.assign(5.0)]):
            after = v.value()
        with aics.Session() as s:
            s.run(v.initializer)
            assert s.run(after) == 5.0
            assert s.run(before) == 5.0  # the variable kept the value

    def test_collections(self, g):
        w = aics.Variable(1.0, name="w")
        b = aics.Variable(1.0, name="b")
        step = aics.Variable(0, trainable=False, name="step")
        assert aics.global_variables() == [w, b, step]
        assert aics.trainable_variables() == [w, b]
        assert not step.trainable

    def test_operators_on_variables(self, g):
        v = aics.Variable([1.0, 2.0])
        y = v * 3.0 + v
        z = aics.matmul(aics.reshape(v, [1, 2]), aics.reshape(v, [2, 1]))
        with aics.Session() as s:
            s.run(v.initializer)
            np.testing.assert_array_equal(s.run(y), [4.0, 8.0])
            assert s.run(z)[0, 0] == 5.0

    def test_eval_and_load(self, g):
        v = aics.Variable(1.0)
        with aics.Session():
            v.initializer.run()
            assert v.eval() == 1.0
            v.load(8.0)
            assert v.eval() == 8.0

    def test_cannot_create_variable_inside_function(self):
        @aics.function
        def f(x):
            v = aics.Variable(1.0)
            return x * v
        with pytest.raises(ValueError, match="create a variable"):
            f(aics.constant(1.0))


class TestEagerVariables:
    def test_holds_value_and_assigns(self):
        v = aics.Variable([1.0, 2.0], name="e")
        np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
        v.assign([3.0, 4.0])
        np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
        v.assign_add([1.0, 1.0])
        v.assign_sub([0.5, 0.5])
        np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
        aics.assign(v, [0.0, 0.0])
        aics.assign_add(v, [2.0, 2.0])
        aics.assign_sub(v, [1.0, 0.0])
        np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])

    def test_no_initializer_needed(self):
        v = aics.Variable(2.0)
        assert v.initializer is None
        assert aics.global_variables_initializer() is None
        assert float(v * 2.0) == 4.0
        assert float(v.initialized_value()) == 2.0

    def test_reads_are_snapshots(self):
        v = aics.Variable([1.0])
        snap = v.value()
        v.assign([5.0])
        np.testing.assert_array_equal(snap.numpy(), [1.0])
        np.testing.assert_array_equal(v.value().numpy(), [5.0])

    def test_assign_returns_variable_and_ops_see_new_value(self):
        v = aics.Variable(1.0)
        r = v.assign_add(2.0)
        assert r is v
        assert float(aics.multiply(v, 2.0)) == 6.0

    def test_numpy_array_conversion(self):
        v = aics.Variable(np.eye(2, dtype=np.float32))
        np.testing.assert_array_equal(np.asarray(v), np.eye(2))
        assert v.shape.as_list() == [2, 2]
        assert v.dtype == aics.float32

    def test_assign_wrong_shape(self):
        v = aics.Variable(np.zeros(2, np.float32), name="shaped")
        with pytest.raises(ValueError, match="'shaped:0'"):
            v.assign(np.zeros(3, np.float32))
        np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])
