"""The fused output stage in C (``src/aics_output_stage.c``) through ctypes.

``fused_output_stage.py`` applies a fused Conv2D's or MatMul's bias (or inference
batch norm) and activation to each block of its output; for float32 blocks it
calls :func:`apply` where this library is built, making one pass over the block
instead of one NumPy call per step, and keeps NumPy's steps otherwise. Both give
bit-identical results (see the C file).
"""
import functools

import numpy as np

from . import native_loader

LIBRARY = "libaics_output_stage"

#: The fused op names the C code handles -> its codes.
STAGES = {"BiasAdd": 0, "FusedBatchNorm": 1}
ACTIVATIONS = {None: 0, "Relu": 1, "Relu6": 2}


#: ``library()``: the loaded library, or None where it was not built (``fallback_reason()`` says why).
library = functools.partial(native_loader.library, LIBRARY)
fallback_reason = functools.partial(native_loader.missing_reason, LIBRARY)


def handles(rows, stage, activation):
    """Whether :func:`apply` can do this stage on ``rows``: a float32 (M, C) array with unit
    channel stride, a bias or batch norm, and no activation, Relu or Relu6 (Elu needs expm1)."""
    return (rows.dtype == np.float32 and rows.ndim == 2 and rows.flags.writeable
            and (rows.strides[1] == 4 or rows.shape[1] <= 1) and rows.strides[0] % 4 == 0
            and stage in STAGES and activation in ACTIVATIONS)


def apply(lib, rows, stage, activation, a, s=None, b=None):
    """The stage in place on ``rows`` (M, C): ``rows + a`` (bias) or ``(rows - a) * s + b``
    (batch norm, ``s`` the per-channel scaling), then the activation. Vectors: float32 (C,),
    contiguous. The GIL is released during the call."""
    m, c = rows.shape
    status = lib.aics_output_stage_f32(rows.ctypes.data, m, c, rows.strides[0] >> 2 if m > 1 else c,
                                       *c_arguments(stage, activation, a, s, b))
    if status != 0:
        raise RuntimeError(f"aics_output_stage_f32 failed (status {status}) on a {m}x{c} block")
    return rows


def c_arguments(stage, activation, a, s=None, b=None):
    """``(stage code, a, s, b, activation code)`` as the C functions take them (``a`` ``s`` ``b``
    as addresses: the caller keeps the float32 (C,) vectors alive, and contiguous)."""
    return (STAGES[stage], a.ctypes.data, None if s is None else s.ctypes.data,
            None if b is None else b.ctypes.data, ACTIVATIONS[activation])
