"""aics.custom_gradient: calls leave the gradient registry as it was, gradients stay right.

Each call of a custom_gradient function makes its own grad_fn; the registry holds
one "CustomGradient" entry that finds the grad_fn of the op it differentiates.
References: the analytic derivative of f(x, y) = x * sin(y) written in NumPy.
"""
import gc
import weakref

import numpy as np
import pytest

import aicslib as aics


def registry_size():
    diff, nondiff = aics.introspect.list_gradients()
    return len(diff) + len(nondiff)


def make_x_sin_y(scale=1.0):
    """x * sin(y) whose grad_fn is the exact derivative times ``scale`` (so two
    functions made with different scales can be told apart by their gradients)."""
    @aics.custom_gradient
    def x_sin_y(x, y):
        def grad(dz):
            return dz * aics.sin(y) * scale, dz * x * aics.cos(y) * scale
        return x * aics.sin(y), grad
    return x_sin_y


X = np.array([0.5, -1.5, 2.0], np.float64)
Y = np.array([0.3, 1.1, -2.4], np.float64)
DX, DY = np.sin(Y), X * np.cos(Y)   # d(x sin y)/dx, d(x sin y)/dy


def test_eager_calls_do_not_grow_the_registry():
    f = make_x_sin_y()
    before = registry_size()
    x, y = aics.constant(X), aics.constant(Y)
    for _ in range(100):
        with aics.GradientTape() as tape:
            tape.watch([x, y])
            z = f(x, y)
        gx, gy = tape.gradient(z, [x, y])
    assert registry_size() == before
    np.testing.assert_allclose(gx.numpy(), DX, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), DY, rtol=1e-12)


def test_graph_calls_do_not_grow_the_registry():
    f = make_x_sin_y()
    before = registry_size()
    with aics.Graph().as_default():
        px = aics.placeholder(aics.float64, [3])
        py = aics.placeholder(aics.float64, [3])
        zs = [f(px, py) for _ in range(100)]
        gx, gy = aics.gradients(aics.add_n(zs), [px, py])
        with aics.Session() as sess:
            rx, ry = sess.run([gx, gy], {px: X, py: Y})
    assert registry_size() == before
    np.testing.assert_allclose(rx, 100 * DX, rtol=1e-12)
    np.testing.assert_allclose(ry, 100 * DY, rtol=1e-12)


def test_each_call_uses_its_own_grad_fn_in_both_modes():
    f1, f3 = make_x_sin_y(1.0), make_x_sin_y(3.0)
    x, y = aics.constant(X), aics.constant(Y)
    with aics.GradientTape() as tape:
        tape.watch([x, y])
        z = f1(x, y) + f3(x, y) + f1(y, x)
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_allclose(gx.numpy(), 4 * DX + Y * np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 4 * DY + np.sin(X), rtol=1e-12)
    with aics.Graph().as_default():
        px = aics.placeholder(aics.float64, [3])
        py = aics.placeholder(aics.float64, [3])
        gx, gy = aics.gradients(f1(px, py) + f3(px, py) + f1(py, px), [px, py])
        with aics.Session() as sess:
            rx, ry = sess.run([gx, gy], {px: X, py: Y})
    np.testing.assert_allclose(rx, 4 * DX + Y * np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(ry, 4 * DY + np.sin(X), rtol=1e-12)


def test_grad_fn_is_released_with_its_op():
    class Marker:
        pass

    def run_once():
        marker = Marker()

        @aics.custom_gradient
        def double(x):
            def grad(dy):
                assert marker is not None   # the closure holds the marker
                return dy * 2.0
            return x * 2.0, grad

        x = aics.constant(1.5)
        with aics.GradientTape() as tape:
            tape.watch(x)
            y = double(x)
        assert float(tape.gradient(y, x)) == 2.0
        return weakref.ref(marker)

    ref = run_once()
    gc.collect()
    assert ref() is None, "a finished custom_gradient call is still referenced"


def test_override_without_a_custom_gradient_call_names_the_op():
    with aics.Graph().as_default() as g:
        p = aics.placeholder(aics.float32, [2])
        with g.gradient_override_map({"IdentityN": "CustomGradient"}):
            out = aics.identity_n([p])[0]
        with pytest.raises(LookupError, match="no custom_gradient function is recorded"):
            aics.gradients(out, p)
