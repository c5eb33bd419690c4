"""The fused output stage in C (``src/aics_output_stage.c``) through ctypes.

``aicslib/kernels/fused_eigen_output_kernels.py`` applies a fused Conv2D's or
MatMul's bias (or inference batch norm) and activation to each block of its
output; for float32 blocks it calls :func:`apply` when this library builds,
making one pass over the block instead of one NumPy call per step, and keeps
its NumPy steps otherwise. Both give bit-identical results (see the C file).
"""
import ctypes

import numpy as np

from .c_library import CLibrary

LIBRARY_NAME = "aics_output_stage_ctypes"
C_SOURCE = "aics_output_stage.c"
C_HEADER = "aics_output_stage.h"
LIBRARY_FILE = "libaics_output_stage.so"
# -ffp-contract=off: (y - mean) * scale + offset rounds after each step, as NumPy's three calls do
EXTRA_FLAGS = ("-std=c99", "-ffp-contract=off")

#: The fused op names the C code handles -> its codes.
STAGES = {"BiasAdd": 0, "FusedBatchNorm": 1}
ACTIVATIONS = {None: 0, "Relu": 1, "Relu6": 2}


def _declare(lib):
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    # int aics_output_stage_f32(y, rows, c, ldy, stage, a, s, b, activation)
    lib.aics_output_stage_f32.argtypes = [ptr, i64, i64, i64, ctypes.c_int, ptr, ptr, ptr, ctypes.c_int]
    lib.aics_output_stage_f32.restype = ctypes.c_int


_LIBRARY = CLibrary(LIBRARY_NAME, C_SOURCE, [C_HEADER], LIBRARY_FILE, EXTRA_FLAGS, _declare,
                    "fused output stages compute with NumPy instead")

library = _LIBRARY.get
fallback_reason = _LIBRARY.fallback_reason
reset = _LIBRARY.reset


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
