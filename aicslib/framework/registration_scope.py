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
        self._ops = dict(op_def_registry._builders)
        self._kernels = {op: list(kds) for op, kds in kernel_registry._by_op.items()}
        self._grads = dict(gradient_registry._fns), dict(gradient_registry._where)
        self.restored = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()

    def _differences(self):
        """(op types whose definition, whose kernels, whose gradient differ from the snapshot)."""
        ops = {n for n in set(self._ops) | set(op_def_registry._builders)
               if self._ops.get(n) is not op_def_registry._builders.get(n)}
        kernels = {n for n in set(self._kernels) | set(kernel_registry._by_op)
                   if self._kernels.get(n, []) != kernel_registry._by_op.get(n, [])}
        grads = {n for n in set(self._grads[0]) | set(gradient_registry._fns)
                 if self._grads[0].get(n) is not gradient_registry._fns.get(n)}
        return ops, kernels, grads

    def changed(self):
        """The op types whose definition, kernels or gradient differ from the snapshot."""
        ops, kernels, grads = self._differences()
        return sorted(ops | kernels | grads)

    def restore(self):
        """Puts the registries back as they were when the scope began (again: harmless)."""
        ops, kernels, _ = self._differences()
        op_def_registry._builders.clear()
        op_def_registry._builders.update(self._ops)
        kernel_registry._by_op.clear()
        kernel_registry._by_op.update({op: list(kds) for op, kds in self._kernels.items()})
        gradient_registry._fns.clear()
        gradient_registry._fns.update(self._grads[0])
        gradient_registry._where.clear()
        gradient_registry._where.update(self._grads[1])
        for name in sorted(ops):           # the dispatch caches drop what they hold for these ops
            for cb in op_def_registry.on_change:
                cb(name)
        for name in sorted(kernels):
            kernel_registry._changed(name)
        self.restored = True
