"""Kernels registered per (op type, device type, dtype), as ``REGISTER_KERNEL_BUILDER``.

A kernel is a plain function of NumPy arrays::

    @register_kernel("MatMul", device="CPU", type_constraint={"T": [float32, float64]})
    def _matmul(a, b, transpose_a=False, transpose_b=False):
        ...

It receives one positional argument per input argument of the op (a list
for list inputs such as ``N * T``) and, by keyword, those attrs its signature
names (all of them if it takes ``**attrs``). It returns an array for a
single output, a tuple for several.

Two forms exist for kernels that need more than their inputs:

* a function whose first parameter is named ``ctx`` gets an OpKernelContext
  (the session's resources, the node's name, a per-node random stream);
* a class with ``__init__(self, attrs)`` and ``compute(self, ctx, *inputs)``
  is instantiated once per node, like a TF OpKernel, for stateful kernels.

Several kernels may match one (op, device, dtype): the one with the highest
``priority`` wins, as with TF's ``KernelDefBuilder::Priority``. That is how the
speed layer (``aicslib/accel``) puts its kernels before the NumPy reference
kernels of ``aicslib/kernels`` without replacing them. A kernel registered with
``enabled=fn`` is passed over while ``fn()`` is false (the whole speed layer
behind one switch, ``AICS_ACCEL``); call ``kernel_registry.refresh()`` after
the switch changes, so that cached kernel choices are made again.

A kernel registered with ``forward_inputs=(0, ...)`` may write its output into one
of those inputs (TF's ``forward_input_or_allocate_output``): it takes ``out=None``
and, where an executor hands it the buffer of an input that nothing else holds
(``executor.py``), NumPy's ``out=``; it returns a fresh array when ``out``'s shape or
dtype is not the output's. Eagerly ``out`` is always None: the EagerTensor holds it.
"""
import contextlib
import inspect

from . import dtypes
from .errors import NotFoundError
from .source_location import caller_location, definition_location

# Device types this runtime knows. "MLU" is the course's accelerator
# (/mlu:0): kernels registered for it run on the CPU but are placed, logged and
# traced as MLU nodes, so placement and soft placement can be shown. "NATIVE" runs
# kernels compiled from C (aicslib/native): the Python -> C boundary of exercise 5.8.
DEVICE_TYPES = ("CPU", "GPU", "MLU", "NATIVE")


class KernelDef:
    """One registration: what it matches, where it was written, how to call it."""

    def __init__(self, op_type, device, type_constraint, impl, location, priority=0, enabled=None,
                 forward_inputs=()):
        self.op_type = op_type
        self.forward_inputs = tuple(forward_inputs)
        self.device = device
        self.priority = priority
        self.enabled = enabled
        self.type_constraint = {k: tuple(dtypes.as_dtype(t) for t in v)
                                for k, v in (type_constraint or {}).items()}
        self.impl = impl
        self.location = location
        self.is_class = inspect.isclass(impl)
        fn = impl.compute if self.is_class else impl
        params = list(inspect.signature(fn).parameters.values())
        if self.is_class:
            params = params[1:]  # self
        self.needs_context = self.is_class or (bool(params) and params[0].name == "ctx")
        if self.needs_context:
            params = params[1:]
        self.takes_all_attrs = any(p.kind == p.VAR_KEYWORD for p in params)
        self.attr_names = frozenset(p.name for p in params
                                    if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        if self.forward_inputs and "out" not in self.attr_names:
            raise TypeError(f"The kernel of '{op_type}' forwards inputs {list(self.forward_inputs)} "
                            f"but takes no 'out' parameter to receive one.")

    def matches(self, attrs):
        for name, allowed in self.type_constraint.items():
            if attrs.get(name) not in allowed:
                return False
        return True

    def is_enabled(self):
        return self.enabled is None or bool(self.enabled())

    def kernel_attrs(self, attrs):
        """The attrs this kernel wants, by keyword."""
        if self.takes_all_attrs:
            return dict(attrs)
        return {k: v for k, v in attrs.items() if k in self.attr_names}

    def __repr__(self):
        cons = ", ".join(f"{k}=[{', '.join(t.name for t in v)}]" for k, v in self.type_constraint.items())
        prio = f", priority={self.priority}" if self.priority else ""
        return f"KernelDef(op='{self.op_type}', device='{self.device}'" + (f", {cons}" if cons else "") + prio + ")"


class KernelRegistry:
    def __init__(self):
        self._by_op = {}
        self.on_change = []  # callbacks(op_type): dispatch caches drop what they hold for it
        self.version = 0     # counts changes: a Session's cached plans hold kernels of one version

    def register(self, op_type, device="CPU", type_constraint=None, location=None, priority=0, enabled=None,
                 forward_inputs=()):
        """Decorator registering ``impl`` for ``op_type`` on ``device``.

        ``priority``: among kernels matching a node, the highest wins; ``enabled``: a callable,
        the kernel is skipped while it returns False; ``forward_inputs``: the inputs whose
        buffer the kernel may write its output into (see the module docstring).

        The registration records where ``impl`` is defined (``location`` overrides
        it): the line that holds the kernel's code, however the registering call was
        written (a decorator, ``register_kernel(...)(fn)``, a loop).
        """
        device = device.upper()
        if device not in DEVICE_TYPES:
            raise ValueError(f"Unknown device type {device!r} for kernel of '{op_type}'; "
                             f"known: {', '.join(DEVICE_TYPES)}.")
        # For an impl without findable source (a class typed into a bare REPL).
        fallback = caller_location()

        def decorator(impl):
            where = location or definition_location(impl) or fallback
            kd = KernelDef(op_type, device, type_constraint, impl, where, priority, enabled, forward_inputs)
            for other in self._by_op.get(op_type, []):
                if (other.device == kd.device and other.type_constraint == kd.type_constraint
                        and other.priority == kd.priority):
                    raise KeyError(f"A kernel for '{op_type}' on {device} with constraint "
                                   f"{kd.type_constraint} is already registered at "
                                   f"{other.location[0]}:{other.location[1]}.")
            self._by_op.setdefault(op_type, []).append(kd)
            self._changed(op_type)     # eager calls may have cached a soft placement
            return impl
        return decorator

    def find(self, op_type, device, attrs):
        """The matching enabled KernelDef of highest priority for this device (the first
        registered among equals), or None."""
        best = None
        for kd in self._by_op.get(op_type, ()):
            if kd.device == device and kd.matches(attrs) and kd.is_enabled():
                if best is None or kd.priority > best.priority:
                    best = kd
        return best

    def lookup(self, op_type, device, attrs, node_name=None):
        kd = self.find(op_type, device, attrs)
        if kd is None:
            raise NotFoundError(None, None, self.no_kernel_message(op_type, device, attrs, node_name))
        return kd

    def no_kernel_message(self, op_type, device, attrs, node_name=None):
        shown = ", ".join(f"{k}={v.name if isinstance(v, dtypes.DType) else v}"
                          for k, v in sorted(attrs.items()) if isinstance(v, dtypes.DType))
        regs = self._by_op.get(op_type, [])
        listing = "\n".join(f"  device='{k.device}'; " + "; ".join(
            f"{n} in [{', '.join(t.name for t in ts)}]" for n, ts in k.type_constraint.items())
            for k in regs) or "  <no registered kernels>"
        who = f" (node '{node_name}')" if node_name else ""
        return (f"No registered '{op_type}' OpKernel for '{device}' devices compatible with node"
                f"{who} with attrs [{shown}]. Registered:\n{listing}")

    def kernels_for(self, op_type):
        return list(self._by_op.get(op_type, []))

    def devices_for(self, op_type):
        return sorted({k.device for k in self._by_op.get(op_type, [])})

    def all_kernels(self):
        return [k for ks in self._by_op.values() for k in ks]

    def refresh(self, op_type=None):
        """Tells the dispatch caches that which kernel is enabled may have changed (all ops by default)."""
        for op in [op_type] if op_type else list(self._by_op):
            self._changed(op)

    def unregister(self, op_type):
        self._by_op.pop(op_type, None)
        self._changed(op_type)

    def snapshot(self):
        """The registered kernels now, for ``restore`` (``aics.experimental.registration_scope``)."""
        return {op: list(kds) for op, kds in self._by_op.items()}

    def restore(self, snapshot):
        """Puts back the kernels ``snapshot()`` returned; the dispatch caches drop the changed ops'."""
        changed = {op for op in set(snapshot) | set(self._by_op) if snapshot.get(op, []) != self._by_op.get(op, [])}
        self._by_op.clear()
        self._by_op.update({op: list(kds) for op, kds in snapshot.items()})
        for op in sorted(changed):
            self._changed(op)

    def _changed(self, op_type):
        self.version += 1
        for cb in self.on_change:
            cb(op_type)

    @contextlib.contextmanager
    def use(self, op_type, impl, device="CPU", type_constraint=None):
        """Inside the block ``impl`` is the kernel of ``op_type`` on ``device`` (above every
        registered one, for the dtypes ``type_constraint`` allows: all by default); the
        registered kernels come back after. A lab puts a student's kernel in place this way."""
        device = device.upper()
        top = max((k.priority for k in self._by_op.get(op_type, ())), default=0) + 1
        kd = KernelDef(op_type, device, type_constraint, impl, definition_location(impl) or caller_location(), top)
        self._by_op.setdefault(op_type, []).append(kd)
        self.refresh(op_type)
        try:
            yield impl
        finally:
            self._by_op[op_type].remove(kd)
            self.refresh(op_type)


kernel_registry = KernelRegistry()


def register_kernel(op_type, device="CPU", type_constraint=None, priority=0, enabled=None, forward_inputs=()):
    """Decorator registering a kernel for ``op_type`` (TF's REGISTER_KERNEL_BUILDER)."""
    return kernel_registry.register(op_type, device, type_constraint, priority=priority, enabled=enabled,
                                    forward_inputs=forward_inputs)
