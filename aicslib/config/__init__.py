"""``aics.config``: the devices this process has, and threading settings (TF2's ``tf.config``).

aicslib computes on the host CPU; the GPU and MLU device names of chapter 3 are
simulated placements running CPU kernels, so they are logical devices only and
``list_physical_devices('GPU')`` is empty, as TensorFlow reports on a machine
without a GPU.
"""
import collections

from ..framework.missing_api import module_getattr
from . import experimental, threading

__getattr__ = module_getattr(__name__)

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_PHYSICAL = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
_visible = list(_PHYSICAL)
_run_functions_eagerly = [False]


def _check_type(device_type):
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"device_type must be a string such as 'CPU' or 'GPU', got {device_type!r}")


def list_physical_devices(device_type=None):
    """The physical devices of the given type ('CPU', 'GPU'; all when None)."""
    _check_type(device_type)
    return [d for d in _PHYSICAL if device_type is None or d.device_type == device_type.upper()]


def list_logical_devices(device_type=None):
    """Logical devices of the visible physical ones: ``/device:CPU:0``."""
    _check_type(device_type)
    return [LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in _visible if device_type is None or d.device_type == device_type.upper()]


def get_visible_devices(device_type=None):
    _check_type(device_type)
    return [d for d in _visible if device_type is None or d.device_type == device_type.upper()]


def set_visible_devices(devices, device_type=None):
    """Which physical devices the runtime may use. The CPU cannot be hidden (as in TF)."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    devices = list(devices)
    for d in devices:
        if d not in _PHYSICAL:
            raise ValueError(f"Unrecognized device: {d!r}")
    kept = [d for d in _visible if device_type is not None and d.device_type != device_type.upper()]
    new = kept + [d for d in devices if d not in kept]
    if not any(d.device_type == "CPU" for d in new):
        raise ValueError("CPU device must be visible.")
    _visible[:] = new


def run_functions_eagerly(run_eagerly):
    """Records whether ``aics.function`` should run its Python body eagerly (for debugging)."""
    _run_functions_eagerly[0] = bool(run_eagerly)


def functions_run_eagerly():
    return _run_functions_eagerly[0]


experimental_run_functions_eagerly = run_functions_eagerly
