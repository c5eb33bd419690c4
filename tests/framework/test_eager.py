"""Eager execution (on by default) vs graph building; EagerTensor; Python operators in both modes."""
import operator

import numpy as np
import pytest

import aicslib as aics


def _run(t, feed=None):
    with aics.Session() as s:
        return s.run(t, feed)


class TestModes:
    def test_eager_by_default(self):
        assert aics.executing_eagerly()
        assert isinstance(aics.constant(1.0), aics.EagerTensor)

    def test_graph_as_default_is_symbolic(self):
        with aics.Graph().as_default() as g:
            assert not aics.executing_eagerly()
            t = aics.constant(1.0) + 1.0
            assert isinstance(t, aics.Tensor) and not isinstance(t, aics.EagerTensor)
            assert t.graph is g
        assert aics.executing_eagerly()

    def test_disable_and_enable(self):
        aics.disable_eager_execution()
        assert not aics.executing_eagerly()
        t = aics.constant(2.0) * 3.0
        assert isinstance(t, aics.Tensor)
        assert t.graph is aics.get_default_graph()
        with aics.Session() as s:
            assert s.run(t) == 6.0
        aics.enable_eager_execution()
        assert aics.executing_eagerly()
        assert float(aics.constant(2.0) * 3.0) == 6.0

    def test_placeholder_refused_eagerly(self):
        with pytest.raises(RuntimeError, match="eager"):
            aics.placeholder(aics.float32)

    def test_graph_tensor_in_eager_op_refused(self):
        with aics.Graph().as_default():
            t = aics.constant(1.0)
        with pytest.raises(TypeError, match="eager"):
            aics.add(t, 1.0)

    def test_eager_tensor_captured_as_constant_in_graph(self):
        e = aics.constant([1.0, 2.0])
        with aics.Graph().as_default():
            t = aics.multiply(e, 2.0)
            assert t.op.inputs[0].op.type == "Const"
            np.testing.assert_array_equal(_run(t), [2.0, 4.0])


class TestEagerTensor:
    def test_numpy_dtype_shape(self):
        t = aics.constant([[1, 2, 3], [4, 5, 6]])
        assert t.dtype == aics.int32
        assert t.shape.as_list() == [2, 3]
        assert t.ndim == 2 and len(t) == 2
        arr = t.numpy()
        assert isinstance(arr, np.ndarray) and arr.dtype == np.int32
        np.testing.assert_array_equal(arr, [[1, 2, 3], [4, 5, 6]])

    @pytest.mark.parametrize("value,dtype", [(1.5, aics.float32), (3, aics.int32), (True, aics.bool),
                                             (2 ** 40, aics.int64), ([1.0, 2], aics.float32),
                                             (np.float64(1.0), aics.float64), (np.int8(3), aics.int8)])
    def test_default_dtypes_as_tf(self, value, dtype):
        assert aics.constant(value).dtype == dtype

    def test_scalar_numpy_is_a_numpy_scalar_as_in_tf(self):
        # TF 2.21: tf.constant(1.0).numpy() is np.float32(1.0); np.asarray still gives a 0-d array
        t = aics.constant(1.0)
        assert type(t.numpy()) is np.float32 and t.numpy() == 1.0
        assert type(aics.Variable(2.0).numpy()) is np.float32
        a = np.asarray(t)
        assert type(a) is np.ndarray and a.shape == () and a.dtype == np.float32

    def test_python_conversions(self):
        assert float(aics.constant(2.5)) == 2.5
        assert int(aics.constant(7)) == 7
        assert bool(aics.constant(True))
        assert [1, 2, 3][aics.constant(1)] == 2
        with pytest.raises(TypeError):
            [1, 2][aics.constant(1.0)]

    def test_iteration_and_indexing(self):
        t = aics.constant([[1.0, 2.0], [3.0, 4.0]])
        rows = [r.numpy().tolist() for r in t]
        assert rows == [[1.0, 2.0], [3.0, 4.0]]
        assert float(t[1, 0]) == 3.0
        np.testing.assert_array_equal(t[:, 1].numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(t[::-1, None].numpy(), np.array([[1.0, 2.0], [3.0, 4.0]])[::-1, None])
        with pytest.raises(TypeError):
            len(aics.constant(1.0))

    def test_graph_only_attributes_raise(self):
        t = aics.constant(1.0)
        for attr in ("name", "op", "graph"):
            with pytest.raises(AttributeError):
                getattr(t, attr)
        with pytest.raises(NotImplementedError, match="numpy"):
            t.eval()

    def test_constant_copies_its_input(self):
        a = np.array([1.0, 2.0], np.float32)
        t = aics.constant(a)
        a[0] = 100.0
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])

    def test_np_array_and_repr(self):
        t = aics.constant([1.0, 2.0])
        np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])
        assert "shape=(2,)" in repr(t) and "float32" in repr(t)
        assert f"{aics.constant(1.25):.1f}" == "1.2"

    def test_device(self):
        assert aics.constant(1.0).device == "/device:CPU:0"


_BINARY = [operator.add, operator.sub, operator.mul, operator.truediv]
_CMP = [operator.lt, operator.le, operator.gt, operator.ge]


class TestOperators:
    @pytest.mark.parametrize("op", _BINARY + _CMP)
    def test_binary_eager(self, op):
        x = np.array([[1.0, -2.0, 3.0]], np.float32)
        y = np.array([[0.5], [2.0]], np.float32)
        got = op(aics.constant(x), aics.constant(y))
        np.testing.assert_allclose(got.numpy(), op(x, y), rtol=1e-6)
        # with Python scalars and arrays on either side
        np.testing.assert_allclose(op(aics.constant(x), 2.0).numpy(), op(x, np.float32(2.0)), rtol=1e-6)
        np.testing.assert_allclose(op(2.0, aics.constant(x)).numpy(), op(np.float32(2.0), x), rtol=1e-6)
        np.testing.assert_allclose(op(y, aics.constant(x)).numpy(), op(y, x), rtol=1e-6)

    @pytest.mark.parametrize("op", _BINARY + _CMP)
    def test_binary_graph(self, op):
        x = np.array([[1.0, -2.0, 3.0]], np.float32)
        y = np.array([[0.5], [2.0]], np.float32)
        with aics.Graph().as_default():
            px = aics.placeholder(aics.float32, [1, 3])
            t = op(px, aics.constant(y))
            t2 = op(2.0, px)
            assert isinstance(t, aics.Tensor)
            got, got2 = _run([t, t2], {px: x})
        np.testing.assert_allclose(got, op(x, y), rtol=1e-6)
        np.testing.assert_allclose(got2, op(np.float32(2.0), x), rtol=1e-6)

    def test_unary_and_matmul(self):
        a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
        b = np.array([[0.5], [-1.0]], np.float32)
        np.testing.assert_array_equal((-aics.constant(a)).numpy(), -a)
        np.testing.assert_array_equal(abs(aics.constant(a)).numpy(), np.abs(a))
        np.testing.assert_allclose((aics.constant(a) @ aics.constant(b)).numpy(), a @ b)
        np.testing.assert_allclose((a @ aics.constant(b)).numpy(), a @ b)
        np.testing.assert_allclose((aics.constant(a) ** 2).numpy(), a ** 2)
        with aics.Graph().as_default():
            pa = aics.placeholder(aics.float32, [2, 2])
            outs = _run([-pa, pa @ aics.constant(b), pa ** 2], {pa: a})
        np.testing.assert_array_equal(outs[0], -a)
        np.testing.assert_allclose(outs[1], a @ b)
        np.testing.assert_allclose(outs[2], a ** 2)

    def test_integer_operators(self):
        a, b = np.array([7, -7, 9], np.int32), np.array([2, 2, -4], np.int32)
        ta, tb = aics.constant(a), aics.constant(b)
        np.testing.assert_array_equal((ta // tb).numpy(), a // b)
        np.testing.assert_array_equal((ta % tb).numpy(), np.mod(a, b))
        q = ta / tb  # TF: int32 / int32 is float64 true division
        assert q.dtype == aics.float64
        np.testing.assert_allclose(q.numpy(), a / b)

    def test_logical_operators(self):
        p = aics.constant([True, True, False])
        q = aics.constant([True, False, False])
        np.testing.assert_array_equal((p & q).numpy(), [True, False, False])
        np.testing.assert_array_equal((p | q).numpy(), [True, True, False])
        np.testing.assert_array_equal((~p).numpy(), [False, False, True])


class TestDtypeErrors:
    def test_eager_mismatch_names_op(self):
        with pytest.raises(aics.errors.InvalidArgumentError) as ei:
            aics.constant([1.0]) + aics.constant([1])
        msg = str(ei.value)
        assert "AddV2" in msg and "float32" in msg and "int32" in msg

    def test_eager_matmul_mismatch(self):
        with pytest.raises(aics.errors.InvalidArgumentError, match="MatMul"):
            aics.matmul(aics.constant([[1.0]]), aics.constant([[1.0]], dtype=aics.float64))

    def test_graph_mismatch_names_op_and_args(self):
        with aics.Graph().as_default():
            with pytest.raises(TypeError) as ei:
                aics.constant([1.0]) * aics.constant([1])
        assert str(ei.value) == ("Input 'y' of 'Mul' Op has type int32 that does not match type "
                                 "float32 of argument 'x'.")

    def test_float_into_int_op_refused(self):
        with pytest.raises(TypeError):
            aics.add(aics.constant([1, 2]), 0.5)

    def test_shape_error_eager_names_op(self):
        with pytest.raises(aics.errors.InvalidArgumentError) as ei:
            aics.matmul(aics.constant(np.ones((2, 3), np.float32)), aics.constant(np.ones((2, 3), np.float32)))
        assert "MatMul" in str(ei.value)
