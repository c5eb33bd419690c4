"""Complex numbers: ``complex``, ``real``, ``imag``, ``conj``, ``abs`` and ``angle``
(TF registers these in core/ops/math_ops.cc; Python API in python/ops/math_ops.py).

``complex64`` pairs two float32s, ``complex128`` two float64s. The element-wise
arithmetic ops (``+ - * /``, ``exp``, ``log``, ``sqrt``...), ``reduce_sum`` /
``reduce_mean`` / ``reduce_prod`` and ``matmul`` also accept them (kernels:
aicslib/kernels/cwise_ops_complex.py). Their gradients follow TF's convention
for complex inputs (ops/complex_grad.py).
"""
import numpy as np

from ..framework import dtypes
from ..framework.common_shapes import broadcast_binary_op_shape, unchanged_shape
from ..framework.execute import apply_op
from ..framework.op_def import register_op
from ..framework.ops import convert_to_tensor, name_scope

_COMPLEX = "{complex64, complex128}"

register_op("Complex").input("real: T").input("imag: T").output("out: Tout") \
    .attr("T: {float, double} = DT_FLOAT").attr(f"Tout: {_COMPLEX} = DT_COMPLEX64") \
    .set_shape_fn(broadcast_binary_op_shape)
register_op("Real").input("input: T").output("output: Tout").attr(f"T: {_COMPLEX} = DT_COMPLEX64") \
    .attr("Tout: {float, double} = DT_FLOAT").set_shape_fn(unchanged_shape)
register_op("Imag").input("input: T").output("output: Tout").attr(f"T: {_COMPLEX} = DT_COMPLEX64") \
    .attr("Tout: {float, double} = DT_FLOAT").set_shape_fn(unchanged_shape)
register_op("ComplexAbs").input("x: T").output("y: Tout").attr(f"T: {_COMPLEX} = DT_COMPLEX64") \
    .attr("Tout: {float, double} = DT_FLOAT").set_shape_fn(unchanged_shape)
register_op("Angle").input("input: T").output("output: Tout").attr(f"T: {_COMPLEX} = DT_COMPLEX64") \
    .attr("Tout: {float, double} = DT_FLOAT").set_shape_fn(unchanged_shape)
register_op("Conj").input("input: T").output("output: T").attr(f"T: {_COMPLEX} = DT_COMPLEX64") \
    .set_shape_fn(unchanged_shape)

_COMPLEX_FOR = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def complex(real, imag, name=None):
    """``real + 1j * imag`` element-wise: float32 parts give complex64, float64 complex128."""
    with name_scope(name, "Complex"):
        real = convert_to_tensor(real)
        imag = convert_to_tensor(imag, dtype=real.dtype)
        if real.dtype not in _COMPLEX_FOR:
            raise TypeError(f"real and imag must be float32 or float64, got {real.dtype.name}")
        return apply_op("Complex", [real, imag], {"Tout": _COMPLEX_FOR[real.dtype]})


def _part(op_type, x, name):
    x = convert_to_tensor(x)
    if not x.dtype.is_complex:
        raise TypeError(f"{op_type} expects a complex tensor, got {x.dtype.name}")
    return apply_op(op_type, [x], {"Tout": x.dtype.real_dtype}, name=name)


def real(input, name=None):
    """The real part; a real tensor is returned unchanged, as TF does."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        return x
    return _part("Real", x, name)


def imag(input, name=None):
    """The imaginary part; zeros for a real tensor, as TF does."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        from .array_ops import zeros_like
        return zeros_like(x)
    return _part("Imag", x, name)


def conj(x, name=None):
    """The complex conjugate; a real tensor is returned unchanged."""
    x = convert_to_tensor(x)
    if not x.dtype.is_complex:
        return x
    return apply_op("Conj", [x], name=name)


def complex_abs(x, name=None):
    """``|x| = sqrt(re**2 + im**2)`` as a real tensor."""
    return _part("ComplexAbs", x, name)


def angle(input, name=None):
    """The argument ``atan2(im, re)``; 0 (or pi for negative numbers) for a real tensor."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        from . import math_ops
        return math_ops.cast(math_ops.less(x, np.zeros((), x.dtype.as_numpy_dtype)), x.dtype) * np.pi
    return _part("Angle", x, name)
