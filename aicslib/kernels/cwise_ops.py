"""Element-wise CPU kernels (TF's core/kernels/cwise_op_*.cc).

The elementwise ops' kernels are the NumPy functions of their rows in
``aicslib/framework/cwise_table.py``, registered here for the rows' real dtypes (the
complex ones: ``cwise_ops_complex.py``); below them the kernels of the other ops of
math_ops.cc that work element by element: SelectV2, ClipByValue, AddN, Cast.

bfloat16 runs on float32 storage; the dispatcher rounds bfloat16 outputs.
"""
import numpy as np

from ..framework.cwise_table import ALL, BY_OP, NUM, ROWS
from ..framework.dtypes import float16, float32
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import kernel_registry, register_kernel

# Registered at the row's line (where aics.introspect.where points), not this loop's.
for _row in ROWS:
    kernel_registry.register(_row.op, type_constraint=None if _row.types is None else {"T": _row.real_types},
                             location=_row.location)(_row.fn)


@register_kernel("SelectV2", type_constraint={"T": ALL})
def _select(condition, t, e):
    return np.where(condition, t, e)


@register_kernel("ClipByValue", type_constraint={"T": NUM})
def _clip(t, lo, hi):
    if np.any(np.asarray(lo) > np.asarray(hi)):
        raise InvalidArgumentError(None, None, "clip_value_min must be <= clip_value_max")
    return np.clip(t, lo, hi)


@register_kernel("AddN", type_constraint={"T": NUM})
def _add_n(inputs):
    out = np.array(inputs[0], copy=True)
    for x in inputs[1:]:
        if np.shape(x) != out.shape:
            raise InvalidArgumentError(None, None, f"Inputs to AddN must all have the same shape: "
                                       f"{list(out.shape)} vs {list(np.shape(x))}")
        out += x
    return out


@register_kernel("Cast")
def _cast(x, SrcT, DstT):
    if DstT.is_integer and SrcT.is_floating:
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(DstT.as_numpy_dtype)
    if SrcT.is_complex and not DstT.is_complex:
        x = np.real(x)  # TF keeps the real part (NumPy would warn that it drops the imaginary one)
    x = np.asarray(x)
    if x.dtype == np.float64 and DstT.is_floating and DstT.name not in ("float16", "float32", "float64"):
        # Eigen converts a double to bfloat16 and the float8 types through float: TF rounds twice
        # (ml_dtypes 0.7 rounds a double directly, which differs at float32 ties)
        x = x.astype(np.float32)
    return x.astype(DstT.as_numpy_dtype)


# Simulated MLU kernels (see matmul_op.py): element-wise arithmetic in half and single precision.
for _op in ("AddV2", "Sub", "Mul", "RealDiv"):
    kernel_registry.register(_op, device="MLU", type_constraint={"T": [float16, float32]},
                             location=BY_OP[_op].location)(BY_OP[_op].fn)
