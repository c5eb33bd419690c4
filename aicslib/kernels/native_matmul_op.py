"""MatMul on the NATIVE device: the float32 product computed by C code (aicslib/native).

In TensorFlow every kernel is C++ and the Python/C++ boundary sits between the op
wrapper and the runtime. aicslib's kernels are NumPy, except this one: with
``aics.device('/device:NATIVE:0')`` MatMul dispatches here as on any device, and
the call crosses into ``aics_sgemm`` (src/aics_gemm.c) through ctypes.
``aics.introspect.native_call_path`` shows that path, Python frames then the C function.
Without a C compiler the binding warns once and computes with NumPy.
"""
import numpy as np

from .. import native
from ..framework.dtypes import float32
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel
from .matmul_op import check_matmul_ranks


@register_kernel("MatMul", device="NATIVE", type_constraint={"T": [float32]})
def _native_matmul(a, b, transpose_a=False, transpose_b=False):
    check_matmul_ranks(a, b, batched=False)
    k_a = a.shape[0] if transpose_a else a.shape[1]
    k_b = b.shape[1] if transpose_b else b.shape[0]
    if k_a != k_b:
        shown_a = list(a.shape[::-1]) if transpose_a else list(a.shape)
        shown_b = list(b.shape[::-1]) if transpose_b else list(b.shape)
        raise InvalidArgumentError(None, None, f"Matrix size-incompatible: In[0]: {shown_a}, "
                                   f"In[1]: {shown_b}")
    # The C function takes dense row-major buffers, as TF kernels get dense tensors.
    return native.sgemm(np.ascontiguousarray(a), np.ascontiguousarray(b), transpose_a, transpose_b)
