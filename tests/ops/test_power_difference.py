"""The AICS lab's PowerDifference op, z = (x - y)^pow, added entirely from Python.

Op definition (register_op), CPU kernel (register_kernel) and gradient
(RegisterGradient) are written here, then used through aics.raw_ops in eager
mode, in graphs, inside aics.function and under both gradient APIs. All three
registrations are removed afterwards so the module can run again.
"""
import inspect

import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.common_shapes import broadcast_binary_op_shape
from aicslib.ops.math_grad import sum_to_shape

OP = "PowerDifference"


def register_power_difference():
    aics.register_op(OP).input("x: T").input("y: T").input("pow: T").output("z: T") \
        .attr("T: {half, float, double}").set_shape_fn(broadcast_binary_op_shape)

    @aics.register_kernel(OP, device="CPU", type_constraint={"T": [aics.float16, aics.float32, aics.float64]})
    def _power_difference(x, y, pow):
        return np.power(np.subtract(x, y), pow).astype(x.dtype, copy=False)

    @aics.RegisterGradient(OP)
    def _power_difference_grad(op, grad):
        x, y, p = op.inputs
        # d/dx (x - y)^p = p (x - y)^(p - 1); written with ops, so it is differentiable again.
        local = p * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1) * grad
        return [sum_to_shape(local, x), sum_to_shape(-local, y), None]

    return _power_difference, _power_difference_grad


def unregister_power_difference():
    aics.op_def_registry.unregister(OP)
    aics.kernel_registry.unregister(OP)
    aics.gradient_registry.unregister(OP)


@pytest.fixture(autouse=True, scope="module")
def power_difference():
    unregister_power_difference()  # in case an earlier aborted run left it behind
    fns = register_power_difference()
    yield fns
    unregister_power_difference()


def reference(x, y, p):
    """Brute force over the broadcast output, one element at a time, in float64."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    shape = np.broadcast_shapes(x.shape, y.shape)
    xb, yb = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
    out = np.empty(shape)
    for idx in np.ndindex(*shape):
        out[idx] = (xb[idx] - yb[idx]) ** p
    return out


X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
Y = np.array([0.5, 1.0, -2.0], np.float32)  # broadcast over rows, as in the lab


class TestDefinition:
    def test_op_def(self):
        od = aics.op_def_registry.get(OP)
        assert [a.name for a in od.input_arg] == ["x", "y", "pow"]
        assert od.output_arg[0].type_attr == "T"
        text = str(od)
        assert text.startswith('name: "PowerDifference"')
        assert "type: DT_HALF" in text and "type: DT_DOUBLE" in text

    def test_raw_ops_wrapper_doc(self):
        assert "raw_ops.PowerDifference(x, y, pow, name=None)" in aics.raw_ops.PowerDifference.__doc__
        assert OP in dir(aics.raw_ops)

    def test_introspection_points_here(self):
        w = aics.introspect.where(OP)
        for loc in [w["op"], w["kernels"][0]["location"], w["gradient"]]:
            path, line = loc.rsplit(":", 1)
            assert path.endswith("tests/ops/test_power_difference.py")
            src = open(__file__).read().splitlines()[int(line) - 1]
            assert "register" in src.lower()
        assert w["kernels"][0]["device"] == "CPU"

    def test_registering_again_is_rejected_while_present(self):
        with pytest.raises(KeyError):
            aics.register_op(OP)
        with pytest.raises(KeyError):
            aics.RegisterGradient(OP)(lambda op, g: None)


class TestForward:
    def test_eager(self):
        z = aics.raw_ops.PowerDifference(x=X, y=Y, pow=np.float32(3))
        assert z.dtype == aics.float32
        np.testing.assert_allclose(z.numpy(), reference(X, Y, 3), rtol=1e-6)

    @pytest.mark.parametrize("dtype,rtol", [(np.float16, 1e-3), (np.float64, 1e-15)])
    def test_other_dtypes(self, dtype, rtol):
        z = aics.raw_ops.PowerDifference(x=X.astype(dtype), y=Y.astype(dtype), pow=dtype(2))
        assert z.numpy().dtype == dtype
        np.testing.assert_allclose(z.numpy(), reference(X, Y, 2), rtol=rtol)

    def test_int_rejected_by_op_def(self):
        with pytest.raises(TypeError, match="int32"):
            aics.raw_ops.PowerDifference(x=np.int32(1), y=np.int32(1), pow=np.int32(2))

    def test_graph(self):
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float32, [None, 3], name="x")
            y = aics.placeholder(aics.float32, [3], name="y")
            z = aics.raw_ops.PowerDifference(x=x, y=y, pow=aics.constant(2.0), name="pd")
            assert z.op.type == OP and z.op.name == "pd"
            assert z.shape.as_list() == [None, 3]
            with aics.Session() as s:
                got = s.run(z, {x: X, y: Y})
        np.testing.assert_allclose(got, reference(X, Y, 2), rtol=1e-6)

    def test_graph_shape_error_at_construction(self):
        with aics.Graph().as_default():
            with pytest.raises(aics.errors.InvalidArgumentError, match="Dimensions must be equal"):
                aics.raw_ops.PowerDifference(x=aics.zeros([2, 3]), y=aics.zeros([4]), pow=aics.constant(2.0))

    def test_inside_function(self):
        @aics.function
        def f(x, y):
            return aics.raw_ops.PowerDifference(x=x, y=y, pow=np.float32(2)) + 1.0

        got = f(aics.constant(X), aics.constant(Y))
        np.testing.assert_allclose(got.numpy(), reference(X, Y, 2) + 1.0, rtol=1e-6)
        cf = f.get_concrete_function(aics.constant(X), aics.constant(Y))
        assert OP in [op.type for op in cf.graph.get_operations()]

    def test_graph_def_round_trip(self):
        with aics.Graph().as_default() as g:
            x = aics.placeholder(aics.float32, [3], name="x")
            aics.raw_ops.PowerDifference(x=x, y=aics.constant(1.0), pow=aics.constant(2.0), name="pd")
        with aics.Graph().as_default():
            aics.import_graph_def(g.as_graph_def(), name="")
            with aics.Session() as s:
                got = s.run("pd:0", {"x:0": [0.0, 1.0, 3.0]})
        np.testing.assert_allclose(got, [1.0, 0.0, 4.0])


class TestGradient:
    def _analytic(self, p):
        d = X.astype(np.float64) - Y
        gx = p * d ** (p - 1)
        return gx, -gx.sum(axis=0)

    def test_tape(self):
        x, y = aics.constant(X), aics.constant(Y)
        with aics.GradientTape() as tape:
            tape.watch([x, y])
            z = aics.raw_ops.PowerDifference(x=x, y=y, pow=np.float32(3))
        gx, gy = tape.gradient(z, [x, y])
        ax, ay = self._analytic(3)
        assert gy.shape.as_list() == [3]
        np.testing.assert_allclose(gx.numpy(), ax, rtol=1e-5)
        np.testing.assert_allclose(gy.numpy(), ay, rtol=1e-5)

    def test_graph_gradients(self):
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float32, [2, 3])
            y = aics.placeholder(aics.float32, [3])
            z = aics.raw_ops.PowerDifference(x=x, y=y, pow=aics.constant(3.0))
            gx, gy = aics.gradients(z, [x, y])
            assert gx.op.name.startswith("gradients/")
            with aics.Session() as s:
                rx, ry = s.run([gx, gy], {x: X, y: Y})
        ax, ay = self._analytic(3)
        np.testing.assert_allclose(rx, ax, rtol=1e-5)
        np.testing.assert_allclose(ry, ay, rtol=1e-5)

    def test_numerical_check(self):
        rng = np.random.RandomState(0)
        xv, yv = rng.randn(2, 3), rng.randn(3)

        def f(x, y):
            return aics.raw_ops.PowerDifference(x=x, y=y, pow=np.float64(3))
        theo, num = aics.test.compute_gradient(f, [xv, yv])
        assert theo[0].shape == (6, 6) and theo[1].shape == (6, 3)
        assert aics.test.max_error(theo, num) < 1e-6

    def test_second_order(self):
        x = aics.constant(np.array([2.0, -1.0]))
        y = aics.constant(np.array([0.5, 0.5]))
        with aics.GradientTape() as outer:
            outer.watch(x)
            with aics.GradientTape() as inner:
                inner.watch(x)
                z = aics.raw_ops.PowerDifference(x=x, y=y, pow=np.float64(4))
            d1 = inner.gradient(z, x)
        d2 = outer.gradient(d1, x)
        d = np.array([1.5, -1.5])
        np.testing.assert_allclose(d1.numpy(), 4 * d ** 3)
        np.testing.assert_allclose(d2.numpy(), 12 * d ** 2)

    def test_through_function_under_tape(self):
        @aics.function
        def f(x, y):
            return aics.reduce_sum(aics.raw_ops.PowerDifference(x=x, y=y, pow=np.float32(2)))

        x, y = aics.constant(X), aics.constant(Y)
        with aics.GradientTape() as tape:
            tape.watch([x, y])
            z = f(x, y)
        gx, gy = tape.gradient(z, [x, y])
        ax, ay = self._analytic(2)
        np.testing.assert_allclose(gx.numpy(), ax, rtol=1e-5)
        np.testing.assert_allclose(gy.numpy(), ay, rtol=1e-5)

    def test_pow_gets_no_gradient(self):
        p = aics.constant(2.0)
        with aics.GradientTape() as tape:
            tape.watch(p)
            z = aics.raw_ops.PowerDifference(x=np.float32(3.0), y=np.float32(1.0), pow=p)
        assert tape.gradient(z, p) is None


class TestCleanup:
    def test_unregister_and_register_again(self, power_difference):
        unregister_power_difference()
        try:
            assert aics.op_def_registry.get(OP) is None
            assert aics.kernel_registry.kernels_for(OP) == []
            assert not aics.gradient_registry.is_registered(OP)
            with pytest.raises(AttributeError):
                aics.raw_ops.PowerDifference
        finally:
            register_power_difference()
        z = aics.raw_ops.PowerDifference(x=np.float32(5.0), y=np.float32(3.0), pow=np.float32(2.0))
        assert float(z) == 4.0
        assert inspect.isfunction(aics.gradient_registry.function(OP))

    def test_replaced_kernel_takes_effect(self):
        args = dict(x=np.float32(5.0), y=np.float32(3.0), pow=np.float32(2.0))
        assert float(aics.raw_ops.PowerDifference(**args)) == 4.0  # warms the dispatch caches
        aics.kernel_registry.unregister(OP)
        try:
            aics.register_kernel(OP)(lambda x, y, pow: np.asarray(-1.0, x.dtype))
            assert float(aics.raw_ops.PowerDifference(**args)) == -1.0
        finally:
            aics.kernel_registry.unregister(OP)
            aics.register_kernel(OP, type_constraint={"T": [aics.float16, aics.float32, aics.float64]})(
                lambda x, y, pow: np.power(np.subtract(x, y), pow).astype(x.dtype, copy=False))
        assert float(aics.raw_ops.PowerDifference(**args)) == 4.0
