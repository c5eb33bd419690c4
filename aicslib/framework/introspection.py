"""Where is op X defined, computed and differentiated? (``aics.introspect``)

For the "find it in the source" exercises (5.5-5.7): every registration
records a file and line, so for any op type we can point at its definition
(the ``register_op`` line, the REGISTER_OP analogue), the code of each kernel
(REGISTER_KERNEL_BUILDER) and of its gradient (@RegisterGradient), and show
their source.
"""
import inspect
import os

from .gradient_registry import gradient_registry
from .kernel_registry import kernel_registry
from .op_def import op_def_registry

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Where TensorFlow keeps the same things (paths in the tensorflow/tensorflow repository).
TF_SOURCE_MAP = {
    "op definitions": "tensorflow/core/ops/*_ops.cc (REGISTER_OP)",
    "kernels": "tensorflow/core/kernels/*_op.cc (REGISTER_KERNEL_BUILDER)",
    "gradients": "tensorflow/python/ops/*_grad.py (@ops.RegisterGradient)",
}


def _rel(path):
    path = os.path.abspath(path)
    return os.path.relpath(path, _PKG_ROOT) if path.startswith(_PKG_ROOT) else path


def where(op_type):
    """{'op': 'aicslib/ops/math_ops.py:44', 'kernels': [...], 'gradient': '...:12' or None}."""
    od = op_def_registry.lookup(op_type)
    out = {"op": f"{_rel(od.registered_at[0])}:{od.registered_at[1]}", "kernels": [], "gradient": None}
    for kd in kernel_registry.kernels_for(op_type):
        out["kernels"].append({
            "device": kd.device,
            "type_constraint": {k: [t.name for t in v] for k, v in kd.type_constraint.items()},
            "priority": kd.priority,
            "location": f"{_rel(kd.location[0])}:{kd.location[1]}"})
    loc = gradient_registry.location(op_type)
    if loc is not None:
        marked = not gradient_registry.is_differentiable(op_type)  # registered, so: no_gradient
        out["gradient"] = ("not differentiable (no_gradient) at " if marked else "") + \
            f"{_rel(loc[0])}:{loc[1]}"
    return out


def list_ops():
    return op_def_registry.list_ops()


def list_kernels(op_type=None):
    """[(op, device, {attr: [dtypes]})] for every registered kernel (or one op's)."""
    kds = kernel_registry.kernels_for(op_type) if op_type else kernel_registry.all_kernels()
    return [(kd.op_type, kd.device, {k: [t.name for t in v] for k, v in kd.type_constraint.items()})
            for kd in sorted(kds, key=lambda k: (k.op_type, k.device))]


def list_gradients():
    """(differentiable op types, op types marked not differentiable)."""
    return gradient_registry.differentiable_ops(), gradient_registry.non_differentiable_ops()


def ops_without_gradient():
    """Registered op types with neither a gradient nor a no_gradient mark."""
    return [op for op in op_def_registry.list_ops() if not gradient_registry.is_registered(op)]


def gradient_source(op_type):
    fn = gradient_registry.function(op_type)
    if fn is None:
        raise LookupError(f"No gradient function registered for '{op_type}'.")
    return inspect.getsource(fn)


def kernel_source(op_type, device="CPU"):
    kds = [k for k in kernel_registry.kernels_for(op_type) if k.device == device]
    if not kds:
        raise LookupError(f"No {device} kernel registered for '{op_type}'.")
    return inspect.getsource(kds[0].impl)


def summary(op_type):
    """A printable report: OpDef text, kernels and gradient, with locations."""
    w = where(op_type)
    lines = [f"== {op_type} ==", f"defined at   {w['op']}", str(op_def_registry.get(op_type)), "kernels:"]
    for k in w["kernels"]:
        prio = f"  priority {k['priority']}" if k["priority"] else ""
        lines.append(f"  {k['device']:4s} {k['type_constraint']}{prio}  at {k['location']}")
    lines.append(f"gradient     {w['gradient'] or 'NONE REGISTERED'}")
    return "\n".join(lines)
