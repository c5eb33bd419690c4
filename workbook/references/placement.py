"""Reference for notebook 09's placement exercise: on which device a node runs.

``place_node(op_type, device, attrs, allow_soft_placement)`` follows the rule aicslib's Session
and eager execution apply (``aicslib/framework/execute.py``'s ``select_kernel`` and the soft
placement check in ``session.py``), as TensorFlow's placer does:

1. a kernel registered for the requested device's type that matches the node's attrs: the node
   runs there;
2. else, a matching CPU kernel: with soft placement the node runs on ``/device:CPU:0``; without
   it, an ``InvalidArgumentError``;
3. else no kernel at all: a ``NotFoundError``.
"""
import aicslib as aics

CPU = "/device:CPU:0"


def device_type_of(device):
    """'MLU' for '/device:MLU:0'."""
    return device.split(":")[1].upper()


def place_node(op_type, device, attrs, allow_soft_placement=True):
    kind = device_type_of(device)
    if aics.kernel_registry.find(op_type, kind, attrs) is not None:
        return device
    if kind != "CPU" and aics.kernel_registry.find(op_type, "CPU", attrs) is not None:
        if allow_soft_placement:
            return CPU
        raise aics.errors.InvalidArgumentError(
            None, None, f"Cannot assign a device for {op_type}: no {kind} kernel and soft placement is disabled")
    raise aics.errors.NotFoundError(None, None, f"No kernel for {op_type} on {kind} or CPU with attrs {attrs}")
