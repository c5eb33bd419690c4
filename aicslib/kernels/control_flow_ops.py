"""Kernels of the control-flow primitives (TF's core/kernels/control_flow_ops.cc).

They only route values: the meaning (dead tensors, frames, iterations) comes
from the executor, ``framework/control_flow_executor.py``, which calls them
only on live inputs (a Merge sees ``DEAD`` for its inputs that are not alive).
"""
import numpy as np

from ..framework.control_flow_executor import DEAD
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel


@register_kernel("Switch")
def _switch(data, pred):
    if np.ndim(pred) != 0:
        raise InvalidArgumentError(None, None, f"The second input must be a scalar, but it has shape "
                                   f"{list(np.shape(pred))}")
    return (DEAD, data) if bool(pred) else (data, DEAD)


@register_kernel("Merge")
def _merge(inputs):
    for i, v in enumerate(inputs):
        if v is not DEAD:
            return v, np.int32(i)
    raise InvalidArgumentError(None, None, "Merge ran with no live input.")


@register_kernel("Enter")
def _enter(data):
    return data  # the executor moves the value into the child frame


@register_kernel("Exit")
def _exit(data):
    return data  # the executor moves the value out when the frame has finished


@register_kernel("NextIteration")
def _next_iteration(data):
    return data  # the executor moves the value to the next iteration


@register_kernel("LoopCond")
def _loop_cond(input):
    return input
