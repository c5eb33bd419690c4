"""aicslib.accel: the speed layer, apart from the reference kernels and behind one switch.

``aicslib/kernels`` holds one plain NumPy kernel per op: the reference, what
students read. This package holds what makes the same ops fast, registered as
preferred kernels for the same (op, device, dtype) (``registration.py``:
TF's kernel priority), so an op's result is the same computation either way,
within stated tolerances (bit for bit where said):

=============================  ===========================================================
``conv_forward.py``            Conv2D: im2col + GEMM by blocks, the dispatch
``conv_policy.py``             which Conv2D algorithm and Winograd tile: the measured rules
``conv_winograd.py``           Winograd F(2x2, 3x3) and F(4x4, 3x3), blocked and threaded
``winograd_transforms.py``     their transforms, NumPy's and C's
``conv_backprop_input.py``     Conv2DBackpropInput: GEMM + col2im by blocks, or a forward conv
``conv_strided.py``            Conv2DBackpropInput of a strided conv by phases
``conv_backprop_filter.py``    Conv2DBackpropFilter: GEMM by blocks, or Winograd backwards
``conv_kernels.py``            the three conv kernels' registrations
``depthwise.py``               DepthwiseConv2dNative and its backprops: C, or NumPy by blocks
``pooling.py``                 MaxPoolGrad in C
``training.py``                ResourceApplyMomentum in C
``matmul.py``                  MatMul with its BLAS threads chosen by size
``fused_output_stage.py``      _FusedConv2D / _FusedMatMul / _FusedDepthwiseConv2dNative
``fused_elementwise.py``       _FusedElementwise in cache-sized tiles
``work_sharder.py``            threads, blocks, scratch buffers, the GEMM (C SGEMM or BLAS)
``c_*.py``                     the Python side of each C library (``src/*.c``)
``native_libraries.py``        the table of C libraries: sources, functions, signatures
``native_loader.py``           loading them, choosing their instruction set
=============================  ===========================================================

The C libraries are compiled at install (``setup.py``), for the architecture's
baseline with AVX2 and AVX-512 versions chosen at run time; every version gives
the same bits. Where they were not built, the layer runs its NumPy paths and
``import aicslib`` says so once.

Switches (``aicslib.flags``): ``AICS_ACCEL=0`` turns the whole layer off (every op
runs its reference kernel; ``use_accel(False)`` does it in a running process);
``AICS_ACCEL_ISA`` picks the C kernels' instruction set (``set_isa``);
``AICS_CONV_ALGO``, ``AICS_GEMM`` and ``AICS_DEPTHWISE_ALGO`` choose within it.
"""
from .. import flags
from . import native_loader
from .native_loader import active_isa, set_isa, supported_isas
from .registration import enabled, set_enabled, use_accel
from . import conv_kernels, depthwise, fused_elementwise, fused_output_stage, matmul, pooling, training

if flags.ACCEL:
    native_loader.report_missing()
