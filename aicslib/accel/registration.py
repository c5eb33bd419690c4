"""How the speed layer's kernels enter the kernel registry, and the one switch that takes them out.

Each is registered for the same op, device and dtypes as the NumPy reference
kernel of ``aicslib/kernels``, at ``PRIORITY`` (TF's ``KernelDefBuilder::Priority``:
the registry picks the matching kernel of highest priority), and only while
``enabled()``: ``AICS_ACCEL=0`` (read by ``aicslib.flags``) turns the whole layer
off, and every op then runs its reference kernel. ``use_accel(False)`` does the
same in a running process (tests run both sides on the same inputs).
"""
import contextlib

from .. import flags
from ..framework.kernel_registry import kernel_registry, register_kernel

#: Above the reference kernels' 0.
PRIORITY = 1


def enabled():
    """Whether the speed layer's kernels are used (``AICS_ACCEL``, default on)."""
    return flags.ACCEL


def register_fast_kernel(op_type, type_constraint, forward_inputs=()):
    """``register_kernel`` for a CPU kernel of the speed layer: preferred while enabled."""
    return register_kernel(op_type, type_constraint=type_constraint, priority=PRIORITY, enabled=enabled,
                           forward_inputs=forward_inputs)


def set_enabled(on):
    """Turns the speed layer on or off in this process (as ``AICS_ACCEL``), for calls made from now
    on: eager calls and new Sessions choose their kernels again; a Session already running keeps its."""
    flags.ACCEL = bool(on)
    kernel_registry.refresh()


@contextlib.contextmanager
def use_accel(on):
    """``with use_accel(False):`` runs the block on the reference kernels (``True``: the speed layer)."""
    saved = flags.ACCEL
    set_enabled(on)
    try:
        yield
    finally:
        set_enabled(saved)


flags.on_reload.append(kernel_registry.refresh)
