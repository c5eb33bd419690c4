"""Gradient functions per op type: ``@RegisterGradient`` and ``no_gradient``.

As in tensorflow/python/framework/ops.py. A gradient function receives the
forward op (``op.inputs``, ``op.outputs``, ``op.get_attr``) and the gradient
of each of its outputs, and returns one gradient per input, built from ops,
so the same function serves graph-mode ``gradients`` and the eager tape.
"""
from .source_location import caller_location, definition_location

_NO_GRADIENT = object()


class GradientRegistry:
    def __init__(self):
        self._fns = {}
        self._where = {}

    def register(self, op_type, fn, location):
        if op_type in self._fns:
            w = self._where[op_type]
            raise KeyError(f"Registering two gradient with name '{op_type}'! "
                           f"(Previous registration was in {w[0]}:{w[1]})")
        self._fns[op_type] = fn
        self._where[op_type] = location

    def lookup(self, op_type):
        """The gradient function; None for ops marked not differentiable.

        Raises LookupError naming the op type when nothing is registered."""
        fn = self._fns.get(op_type)
        if fn is None:
            raise LookupError(f"gradient registry has no entry for: {op_type} (no gradient "
                              f"defined for operation of type '{op_type}'; register one with "
                              f"@aics.RegisterGradient('{op_type}') or mark it with "
                              f"aics.no_gradient('{op_type}'))")
        return None if fn is _NO_GRADIENT else fn

    def is_registered(self, op_type):
        return op_type in self._fns

    def is_differentiable(self, op_type):
        return self._fns.get(op_type, _NO_GRADIENT) is not _NO_GRADIENT

    def location(self, op_type):
        return self._where.get(op_type)

    def function(self, op_type):
        fn = self._fns.get(op_type)
        return None if fn is _NO_GRADIENT else fn

    def differentiable_ops(self):
        return sorted(k for k, v in self._fns.items() if v is not _NO_GRADIENT)

    def non_differentiable_ops(self):
        return sorted(k for k, v in self._fns.items() if v is _NO_GRADIENT)

    def unregister(self, op_type):
        self._fns.pop(op_type, None)
        self._where.pop(op_type, None)

    def snapshot(self):
        """The registered gradients now, for ``restore`` (``aics.experimental.registration_scope``)."""
        return dict(self._fns), dict(self._where)

    def restore(self, snapshot):
        """Puts back the gradients ``snapshot()`` returned."""
        fns, where = snapshot
        self._fns.clear()
        self._fns.update(fns)
        self._where.clear()
        self._where.update(where)


gradient_registry = GradientRegistry()


class RegisterGradient:
    """Decorator: ``@RegisterGradient("Sin") def _sin_grad(op, grad): ...``."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("RegisterGradient expects the op type as a string.")
        self._op_type = op_type
        # For a gradient function without findable source (rare: made by exec).
        self._fallback_location = caller_location()

    def __call__(self, fn):
        # Recorded: where the gradient's code is, not where the decorator was applied.
        location = definition_location(fn) or self._fallback_location
        gradient_registry.register(self._op_type, fn, location)
        return fn


def no_gradient(op_type):
    """Marks ``op_type`` as not differentiable: gradients stop there silently.

    The mark records the line that called ``no_gradient``, so that line should name the op."""
    gradient_registry.register(op_type, _NO_GRADIENT, caller_location())


NotDifferentiable = no_gradient
