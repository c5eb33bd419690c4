"""Allocation checks (TF's core/framework/allocator.h, the CPU allocator's OOM report).

TensorFlow's allocator refuses a tensor it cannot hold with
``ResourceExhaustedError: OOM when allocating tensor with shape[...] and type
float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu``.
NumPy instead raises MemoryError, or OverflowError for sizes past 2^63, or, with
the kernel's overcommit, hands out memory that the process is later killed for
touching. Kernels that create a tensor of a size given as an *argument* (Fill,
random ops, Tile, BroadcastTo) call :func:`check_allocation` first, which
compares the tensor's bytes with the machine's memory before anything is
allocated.

A kernel that may write into a forwarded input (``forward_inputs`` in the kernel registry,
TF's ``forward_input_or_allocate_output``) asks :func:`forwarded` whether the buffer it was
handed fits its output; NumPy allocates the output otherwise.
"""
import os

from . import dtypes as _dtypes
from .errors import ResourceExhaustedError
from .tensor_shape import shape_debug_string

__all__ = ["check_allocation", "forwarded", "memory_limit_bytes", "oom_error"]

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


_physical_memory = None


def memory_limit_bytes():
    """The machine's physical memory: no single tensor can be larger (asked once: the eager
    BroadcastTo of every mean's gradient checks it)."""
    global _physical_memory
    if _physical_memory is None:
        try:
            _physical_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            _physical_memory = 1 << 40
    return _physical_memory


def oom_error(shape, dtype, detail=""):
    """TF's OOM error for a tensor of ``shape`` and ``dtype``."""
    try:
        tf_name = _dtypes.type_string(dtype)
    except TypeError:
        tf_name = str(dtype)
    return ResourceExhaustedError(None, None, f"OOM when allocating tensor with shape"
                                              f"{shape_debug_string(shape)} and "
                                              f"type {tf_name} on {CPU_DEVICE} by allocator cpu"
                                              + (f" ({detail})" if detail else ""))


def check_allocation(shape, dtype):
    """Raises TF's OOM error when a tensor of ``shape`` and ``dtype`` cannot fit in memory."""
    n = 1
    for d in shape:
        n *= int(d)      # Python ints: no overflow
    try:
        itemsize = _dtypes.as_dtype(dtype).size
    except (TypeError, AttributeError):
        itemsize = 8
    need = n * itemsize
    limit = memory_limit_bytes()
    if need > limit:
        raise oom_error(shape, dtype, f"{need} bytes, more than the machine's {limit}")


def forwarded(out, shape, dtype):
    """``out``, the input buffer an executor forwarded to a kernel, when an output of ``shape``
    and ``dtype`` can be written into it; else None (``out=None``: NumPy allocates)."""
    return out if out is not None and out.shape == shape and out.dtype == dtype else None
