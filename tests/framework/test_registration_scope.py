"""aics.experimental.registration_scope: registrations made inside do not outlive it."""
import numpy as np
import pytest

import aicslib as aics


def _register_square_diff(name):
    aics.register_op(name).input("x: T").input("y: T").output("z: T").attr("T: {float, double}")

    @aics.register_kernel(name, type_constraint={"T": [aics.float32, aics.float64]})
    def _kernel(x, y):
        return (x - y) ** 2

    @aics.RegisterGradient(name)
    def _grad(op, grad):
        d = 2.0 * grad * (op.inputs[0] - op.inputs[1])
        return d, -d


def test_an_op_registered_inside_is_gone_after():
    before = aics.introspect.list_ops()
    with aics.experimental.registration_scope() as scope:
        _register_square_diff("ScopedSquareDiff")
        x = aics.constant([3.0, 1.0])
        assert np.allclose(aics.raw_ops.ScopedSquareDiff(x=x, y=aics.constant([1.0, 1.0])).numpy(), [4.0, 0.0])
        assert scope.changed() == ["ScopedSquareDiff"]
    assert aics.introspect.list_ops() == before
    assert "ScopedSquareDiff" not in aics.op_def_registry
    assert not aics.kernel_registry.kernels_for("ScopedSquareDiff")
    assert not aics.gradient_registry.is_registered("ScopedSquareDiff")
    with pytest.raises(AttributeError):
        aics.raw_ops.ScopedSquareDiff
    with aics.experimental.registration_scope():    # and it can be registered again, without KeyError
        _register_square_diff("ScopedSquareDiff")


def test_what_was_unregistered_inside_comes_back_and_cached_dispatch_follows():
    x = aics.constant([0.5, 1.0])
    assert np.allclose(aics.sin(x).numpy(), np.sin([0.5, 1.0]))        # the dispatch cache holds Sin's kernel
    sin_grad = aics.gradient_registry.function("Sin")
    with aics.experimental.registration_scope():
        aics.gradient_registry.unregister("Sin")
        aics.kernel_registry.unregister("Sin")
        with pytest.raises(aics.errors.NotFoundError):
            aics.sin(x)
    assert aics.gradient_registry.function("Sin") is sin_grad
    assert np.allclose(aics.sin(x).numpy(), np.sin([0.5, 1.0]))


def test_a_scope_across_cells_is_ended_by_restore_and_a_second_restore_is_harmless():
    scope = aics.experimental.registration_scope()
    aics.RegisterGradient("Tan")(lambda op, grad: grad)
    assert aics.gradient_registry.is_registered("Tan")
    scope.restore()
    assert not aics.gradient_registry.is_registered("Tan") and scope.restored
    scope.restore()
    assert not aics.gradient_registry.is_registered("Tan")


def test_a_session_after_the_scope_does_not_run_a_kernel_from_inside_it():
    g = aics.Graph()
    with g.as_default():
        y = aics.negative(aics.constant([1.0, 2.0]))
    with aics.Session(graph=g) as sess:
        assert np.allclose(sess.run(y), [-1.0, -2.0])
        with aics.experimental.registration_scope():
            aics.register_kernel("Neg", type_constraint={"T": [aics.float32]}, priority=9)(lambda x: x * 0.0)
            assert np.allclose(sess.run(y), [0.0, 0.0])
        assert np.allclose(sess.run(y), [-1.0, -2.0])
