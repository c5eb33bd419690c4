"""Gradients of the complex-number ops (TF's python/ops/math_grad.py: _ComplexGrad, _RealGrad,
_ImagGrad, _ConjGrad, _ComplexAbsGrad, _AngleGrad).

TF's convention for a complex input ``z = x + iy`` of a *real* loss ``L``: the
gradient is ``dL/dx + i dL/dy``, which is twice the conjugate of the Wirtinger
derivative ``dL/dz = (dL/dx - i dL/dy) / 2``. It is the direction of steepest
ascent in the complex plane, so ``z -= lr * grad`` is gradient descent, as for
real variables. The chain rule then runs on conjugates: a holomorphic op
``w = f(z)`` passes back ``grad_w * conj(f'(z))`` (see the ``conj`` in the complex
branches of math_grad.py: Mul, RealDiv, Exp, MatMul...), and the ops below,
which are not holomorphic, pass back what that convention gives:

* ``Real``: ``L(x)``, so ``dL/dx + i 0``  ->  ``complex(grad, 0)``
* ``Imag``: ``L(y)``  ->  ``complex(0, grad)``
* ``Complex(x, y)``: the inverse split  ->  ``(real(grad), imag(grad))``
* ``Conj``: ``conj(grad)``
* ``ComplexAbs``: ``d|z|/dx + i d|z|/dy = (x + iy) / |z|``  ->  ``grad * z / |z|`` (0 at z = 0)
* ``Angle``: ``d atan2(y, x)/dx + i d/dy = (-y + ix) / |z|^2 = -1 / (y + ix)``  ->
  ``-grad / complex(imag(z), real(z))``
"""
import numpy as np

from ..framework.gradient_registry import RegisterGradient
from . import array_ops, complex_ops, math_ops
from .math_grad import sum_to_shape


def _as_complex(real_part, imag_part=None):
    """A complex tensor from real parts (``imag_part`` None: zeros)."""
    zero = array_ops.zeros_like(real_part)
    return complex_ops.complex(real_part, zero if imag_part is None else imag_part)


@RegisterGradient("Complex")
def _complex_grad(op, grad):
    x, y = op.inputs
    return [sum_to_shape(complex_ops.real(grad), x, y), sum_to_shape(complex_ops.imag(grad), y, x)]


@RegisterGradient("Real")
def _real_grad(op, grad):
    return _as_complex(grad)


@RegisterGradient("Imag")
def _imag_grad(op, grad):
    return complex_ops.complex(array_ops.zeros_like(grad), grad)


@RegisterGradient("Conj")
def _conj_grad(op, grad):
    return complex_ops.conj(grad)


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    z, r = op.inputs[0], op.outputs[0]
    # grad / |z| in real arithmetic, 0 where z = 0 (TF's div_no_nan), then times z
    at_zero = math_ops.equal(r, array_ops.zeros_like(r))
    safe_r = math_ops.where(at_zero, array_ops.ones_like(r), r)
    scale = math_ops.where(at_zero, array_ops.zeros_like(r), grad / safe_r)
    return _as_complex(scale) * z


@RegisterGradient("Angle")
def _angle_grad(op, grad):
    z = op.inputs[0]
    flipped = complex_ops.complex(complex_ops.imag(z), complex_ops.real(z))  # y + ix
    return -_as_complex(grad) / flipped


# ---------------------------------------------------------------------------
# Numerical checks (tests/ops/test_gradient_registry.py): real float64 inputs in, a real value out,
# through each complex op, so the convention above must hold for the Jacobian to match.

def _any(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _z(a, b):
    return complex_ops.complex(a, b)


GRADIENT_CHECK_RECIPES = {
    "Complex": lambda: (lambda a, b: complex_ops.real(_z(a, b) * _z(b, a)) + complex_ops.imag(_z(a, b) * _z(a, a)),
                        [_any(2, 3), _any(3, seed=1)]),
    "Real": lambda: (lambda a, b: complex_ops.real(_z(a, b) * _z(b, b)), [_any(2, 3), _any(2, 3, seed=1)]),
    "Imag": lambda: (lambda a, b: complex_ops.imag(_z(a, b) * _z(a, b)), [_any(2, 3), _any(2, 3, seed=1)]),
    "Conj": lambda: (lambda a, b: complex_ops.imag(complex_ops.conj(_z(a, b)) * _z(b, a)),
                     [_any(2, 3), _any(2, 3, seed=1)]),
    "ComplexAbs": lambda: (lambda a, b: complex_ops.complex_abs(_z(a, b) * _z(b, a)),
                           [_any(2, 3), _any(2, 3, seed=1)]),
    "Angle": lambda: (lambda a, b: complex_ops.angle(_z(a, b)), [_any(2, 3), _any(2, 3, seed=1)]),
}
