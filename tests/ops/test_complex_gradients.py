"""Gradients of real-valued losses of complex tensors and Variables, in TF's convention: for
z = x + iy the gradient is dL/dx + i dL/dy (twice the conjugate of the Wirtinger derivative).
Checked against numerical gradients (perturbing the real and the imaginary parts) and against
values TensorFlow 2.21 gives for the same programs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics

W = np.array([[0.3 - 1j, 2 + 0.5j], [1j, -1.0 + 0j]])

LOSSES = {
    "abs_squared": lambda z: aics.reduce_sum(aics.abs(z) ** 2),
    "real_imag": lambda z: aics.reduce_sum(aics.math.real(z) * 3.0 + aics.math.imag(z) ** 2),
    "angle": lambda z: aics.reduce_sum(aics.math.angle(z)),
    "mul_conj": lambda z: aics.math.real(aics.reduce_sum(z * aics.math.conj(z) * z)),
    "matmul": lambda z: aics.reduce_sum(aics.abs(aics.matmul(aics.constant(W, aics.complex128),
                                                             aics.reshape(z, [2, 1])))),
    "exp_div": lambda z: aics.reduce_sum(aics.abs(aics.exp(z) / (z + 2.0))),
    "complex": lambda z: aics.reduce_sum(aics.abs(aics.complex(aics.math.real(z) ** 2, aics.math.imag(z)))),
    "log_sqrt_sigmoid": lambda z: aics.reduce_sum(aics.math.imag(aics.sigmoid(z) * aics.math.log(z) + aics.sqrt(z))),
    "tanh_square_reciprocal": lambda z: aics.reduce_sum(aics.abs(aics.tanh(z) + aics.square(z)
                                                                 - aics.math.reciprocal(z))),
}

# tf.GradientTape().gradient(loss, tf.Variable([1+2j, -0.5+0.3j], dtype=tf.complex128)) in TF 2.21
TF_RESULTS = {
    "abs_squared": [2 + 4j, -1 + 0.6j],
    "real_imag": [3 + 4j, 3 + 0.6j],
    "angle": [-0.4 + 0.2j, -0.88235294 - 1.47058824j],
    "mul_conj": [7 + 4j, 0.84 - 0.3j],
    "matmul": [0.76603954 + 1.89220813j, 2.88257684 - 1.00928799j],
    "exp_div": [0.57993518 - 0.11598704j, 0.14233387 - 0.05083353j],
    "complex": [0.89442719 + 0.89442719j, -0.6401844 + 0.76822128j],
}


def numerical_gradient(loss, z, eps=1e-6):
    """dL/dx + i dL/dy by central differences on each element's real and imaginary part."""
    def value(v):
        return float(loss(aics.constant(v, aics.complex128)).numpy())
    g = np.zeros_like(z)
    for k in np.ndindex(z.shape):
        for unit, part in ((1.0, 1.0), (1j, 1j)):
            d = np.zeros_like(z)
            d[k] = eps * unit
            g[k] += part * (value(z + d) - value(z - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", sorted(TF_RESULTS))
def test_tape_gradient_of_complex_variable_matches_tensorflow(name):
    z = aics.Variable(np.array([1 + 2j, -0.5 + 0.3j]), dtype=aics.complex128)
    with aics.GradientTape() as tape:
        loss = LOSSES[name](z)
    assert loss.dtype == aics.float64
    g = tape.gradient(loss, z)
    assert g.dtype == aics.complex128
    np.testing.assert_allclose(g.numpy(), TF_RESULTS[name], rtol=1e-7, atol=1e-8)


_complex_numbers = st.tuples(st.floats(-2, 2), st.floats(-2, 2)).map(lambda p: complex(*p)).filter(
    lambda c: abs(c) > 0.3 and abs(c + 2) > 0.3)  # away from the kinks of |z|, angle, log, 1/z


@pytest.mark.parametrize("name", sorted(LOSSES))
@settings(max_examples=4, deadline=None)
@given(values=st.lists(_complex_numbers, min_size=2, max_size=2))
def test_gradients_match_numerical_in_eager_and_graph(name, values):
    z0 = np.array(values, np.complex128)
    if name == "angle" or name == "log_sqrt_sigmoid":  # the branch cut of angle/log/sqrt: the negative reals
        z0 = np.where((np.abs(z0.imag) < 0.2) & (z0.real < 0), z0 + 0.5j, z0)
    expected = numerical_gradient(LOSSES[name], z0)
    z = aics.Variable(z0, dtype=aics.complex128)
    with aics.GradientTape() as tape:
        loss = LOSSES[name](z)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), expected, rtol=1e-5, atol=1e-6)
    g = aics.Graph()
    with g.as_default():
        ph = aics.placeholder(aics.complex128, [2])
        dz, = aics.gradients(LOSSES[name](ph), [ph])
        with aics.Session() as sess:
            np.testing.assert_allclose(sess.run(dz, {ph: z0}), expected, rtol=1e-5, atol=1e-6)


def test_complex64_gradient_and_gradient_descent_on_a_complex_variable():
    # Fit z so that z * a = b (complex least squares): descent along TF's gradient converges.
    a = aics.constant([1 + 1j, 2 - 1j, -0.5j], aics.complex64)
    target = np.complex64(0.7 - 1.3j)
    b = a * target
    z = aics.Variable(0j, dtype=aics.complex64)
    for _ in range(200):
        with aics.GradientTape() as tape:
            loss = aics.reduce_sum(aics.abs(z * a - b) ** 2)
        g = tape.gradient(loss, z)
        assert g.dtype == aics.complex64
        z.assign_sub(0.05 * g)
    np.testing.assert_allclose(z.numpy(), target, atol=1e-4)


def test_abs_of_zero_has_zero_gradient_and_real_to_complex_cast():
    z = aics.Variable([0j, 3 + 4j], dtype=aics.complex128)
    with aics.GradientTape() as tape:
        loss = aics.reduce_sum(aics.abs(z))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), [0, 0.6 + 0.8j])  # TF's div_no_nan
    x = aics.constant([1.5, -2.0], aics.float64)
    with aics.GradientTape() as tape:
        tape.watch(x)
        c = aics.cast(x, aics.complex128) * aics.constant([1j, 2 + 1j], aics.complex128)
        loss = aics.reduce_sum(aics.math.imag(c))
    # d/dx imag(x * w) = imag(w): the real part of the complex gradient flows back through Cast
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [1.0, 1.0])
