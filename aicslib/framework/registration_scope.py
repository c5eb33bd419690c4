"""``registration_scope()``: registrations that do not outlive a block (or a lab).

The three registries (op definitions, kernels, gradients) are process-wide, as TensorFlow's are.
A notebook lab or a test that registers a new op must not leave it behind for the code that runs
after it in the same process, and must not keep a half-right registration from an earlier try.
A scope remembers what the registries held when it began and puts exactly that back when it
ends: whatever was registered inside is gone, whatever was unregistered inside is back::

    with aics.experimental.registration_scope():
        aics.register_op("PowerDifference")...
        ...                       # the op exists here
    # and not here

A scope that must span notebook cells is made in one cell and ended in another with ``restore()``.
"""
from .gradient_registry import gradient_registry
from .kernel_registry import kernel_registry
from .op_def import op_def_registry


class registration_scope:
    """Snapshot of the op, kernel and gradient registries, put back by ``restore()`` (or at the end
    of a ``with`` block)."""

    def __init__(self):
        self._ops = op_def_registry.snapshot()
        self._kernels = kernel_registry.snapshot()
        self._grads = gradient_registry.snapshot()
        self.restored = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()

    def changed(self):
        """The op types whose definition, kernels or gradient differ from the snapshot."""
        ops, kernels, (grads, _) = op_def_registry.snapshot(), kernel_registry.snapshot(), gradient_registry.snapshot()
        return sorted({n for n in set(ops) | set(self._ops) if ops.get(n) is not self._ops.get(n)}
                      | {n for n in set(kernels) | set(self._kernels) if kernels.get(n, []) != self._kernels.get(n, [])}
                      | {n for n in set(grads) | set(self._grads[0]) if grads.get(n) is not self._grads[0].get(n)})

    def restore(self):
        """Puts the registries back as they were when the scope began (again: harmless)."""
        op_def_registry.restore(self._ops)
        kernel_registry.restore(self._kernels)
        gradient_registry.restore(self._grads)
        self.restored = True
