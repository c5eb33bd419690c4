"""CPU kernels on complex64/complex128 (TF's cwise_op_*.cc complex instantiations,
reduction and matmul kernels, and core/kernels/cwise_op_complex.cc etc.).

NumPy computes complex arithmetic natively; these registrations only add the
complex dtypes beside the real kernels, so a real program never reaches them. The
elementwise ones come from the rows of ``aicslib/framework/cwise_table.py``.
"""
import numpy as np

from ..framework.cwise_table import COMPLEX, ROWS
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import kernel_registry, register_kernel

_C = {"T": COMPLEX}

# The elementwise ops' complex kernels: their rows' complex_fn, or the real function,
# registered at the row's line.
for _row in ROWS:
    if _row.complex_types:
        kernel_registry.register(_row.op, type_constraint={"T": _row.complex_types},
                                 location=_row.location)(_row.complex_fn or _row.fn)


@register_kernel("AddN", type_constraint={"T": COMPLEX})
def _add_n_complex(inputs):
    return np.sum(np.stack(inputs), axis=0).astype(inputs[0].dtype)


def _reduction_axes(x, reduction_indices):
    axes = np.asarray(reduction_indices).reshape(-1)
    if any(not -x.ndim <= a < max(x.ndim, 1) for a in axes):
        raise InvalidArgumentError(None, None, f"Invalid reduction dimension for input with "
                                   f"{x.ndim} dimension(s)")
    return tuple(int(a) % x.ndim for a in axes) if x.ndim else ()


@register_kernel("Sum", type_constraint=_C)
def _sum_complex(input, reduction_indices, keep_dims=False):
    return np.sum(input, axis=_reduction_axes(input, reduction_indices), keepdims=keep_dims)


@register_kernel("Mean", type_constraint=_C)
def _mean_complex(input, reduction_indices, keep_dims=False):
    return np.mean(input, axis=_reduction_axes(input, reduction_indices), keepdims=keep_dims)


@register_kernel("Prod", type_constraint=_C)
def _prod_complex(input, reduction_indices, keep_dims=False):
    return np.prod(input, axis=_reduction_axes(input, reduction_indices), keepdims=keep_dims)


@register_kernel("MatMul", type_constraint={"T": COMPLEX})
def _matmul_complex(a, b, transpose_a=False, transpose_b=False):
    a = a.T if transpose_a else a
    b = b.T if transpose_b else b
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                                   f"In[1]: {list(b.shape)}")
    return a @ b


@register_kernel("BatchMatMulV2", type_constraint={"T": COMPLEX})
def _batch_matmul_complex(x, y, adj_x=False, adj_y=False):
    if adj_x:  # adjoint: conjugate transpose, as TF's adj_x
        x = np.conj(np.swapaxes(x, -1, -2))
    if adj_y:
        y = np.conj(np.swapaxes(y, -1, -2))
    return np.matmul(x, y)


@register_kernel("Complex")
def _complex(real, imag, Tout):
    return (real + 1j * imag).astype(Tout.as_numpy_dtype)


register_kernel("Real")(lambda input, Tout: np.real(input).astype(Tout.as_numpy_dtype))
register_kernel("Imag")(lambda input, Tout: np.imag(input).astype(Tout.as_numpy_dtype))
register_kernel("ComplexAbs")(lambda x, Tout: np.abs(x).astype(Tout.as_numpy_dtype))
register_kernel("Angle")(lambda input, Tout: np.angle(input).astype(Tout.as_numpy_dtype))
register_kernel("Conj")(lambda input: np.conj(input))
