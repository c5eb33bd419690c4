"""Plausible wrong answers for notebook 09 (registration-flow), and other correct ones.

``place_node(op_type, device, attrs, allow_soft_placement)`` (section 1.6: where a node runs, or
which error the Session gives) and ``_tan_grad(op, grad)`` (section 3: the gradient registered for
``Tan``); a wrong one must lose its exercise's points inside its locked test cell, a correct one
must score them.
"""

WRONG_ANSWERS = {
    "place_node": {
        # the requested device, whatever kernels exist
        "always_the_requested_device": """
return device
""",
        # soft placement always, even when it is switched off
        "ignores_allow_soft_placement": """
kind = device.split(":")[1].upper()
if aics.kernel_registry.find(op_type, kind, attrs) is not None:
    return device
if aics.kernel_registry.find(op_type, "CPU", attrs) is not None:
    return "/device:CPU:0"
raise aics.errors.NotFoundError(None, None, f"no kernel for {op_type}")
""",
        # only asks whether the op has a kernel on the device for float32, not for the node's dtype
        "ignores_the_dtype": """
kind = device.split(":")[1].upper()
if aics.kernel_registry.find(op_type, kind, dict(attrs, T=aics.float32)) is not None:
    return device
if kind != "CPU" and aics.kernel_registry.find(op_type, "CPU", attrs) is not None:
    if allow_soft_placement:
        return "/device:CPU:0"
    raise aics.errors.InvalidArgumentError(None, None, "soft placement is off")
raise aics.errors.NotFoundError(None, None, f"no kernel for {op_type}")
""",
        # no kernel anywhere: falls back to the CPU instead of failing
        "cpu_when_no_kernel_at_all": """
kind = device.split(":")[1].upper()
if aics.kernel_registry.find(op_type, kind, attrs) is not None:
    return device
if allow_soft_placement:
    return "/device:CPU:0"
raise aics.errors.InvalidArgumentError(None, None, "soft placement is off")
""",
        # the wrong error when soft placement is off: NotFoundError, though a CPU kernel exists
        "not_found_when_soft_placement_is_off": """
kind = device.split(":")[1].upper()
if aics.kernel_registry.find(op_type, kind, attrs) is not None:
    return device
if allow_soft_placement and aics.kernel_registry.find(op_type, "CPU", attrs) is not None:
    return "/device:CPU:0"
raise aics.errors.NotFoundError(None, None, f"no usable kernel for {op_type}")
""",
        # the framework's own kernel selection (which soft-places by itself)
        "calls_the_library": """
from aicslib.framework.execute import select_kernel
_, placed = select_kernel(aics.op_def_registry.get(op_type), device, attrs)
if placed != device and not allow_soft_placement:
    raise aics.errors.InvalidArgumentError(None, None, "soft placement is off")
return placed
""",
        "copies_the_package_reference": """
from workbook.references.placement import place_node as reference
return reference(op_type, device, attrs, allow_soft_placement)
""",
    },
    "tan_gradient": {
        # the chain rule: the upstream gradient is not multiplied in
        "forgot_upstream_grad": """
return 1.0 + aics.square(op.outputs[0])
""",
        "missing_one_plus": """
return grad * aics.square(op.outputs[0])
""",
        # NumPy on the eager value: right numbers eagerly, fails when a graph is built
        "numpy_not_ops": """
return grad * (1.0 + np.tan(op.inputs[0].numpy()) ** 2)
""",
        "cos_not_squared": """
return grad / aics.cos(op.inputs[0])
""",
        # sign errors
        "tanh_rule_one_minus": """
return grad * (1.0 - aics.square(op.outputs[0]))
""",
        "negated": """
return -grad * (1.0 + aics.square(op.outputs[0]))
""",
        "tan_squared_minus_one": """
return grad * (aics.square(op.outputs[0]) - 1.0)
""",
        # the library's registered gradient of the op with the nearest name
        "library_tanh_gradient": """
return aics.gradient_registry.function("Tanh")(op, grad)
""",
        # right numbers, but differentiates sin/cos with the library's registered gradients
        "library_gradients_of_sin_over_cos": """
x = op.inputs[0]
if aics.executing_eagerly():
    with aics.GradientTape() as t:
        t.watch(x)
        y = aics.sin(x) / aics.cos(x)
    return t.gradient(y, x, output_gradients=grad)
return aics.gradients(aics.sin(x) / aics.cos(x), [x], grad_ys=[grad])[0]
""",
        # a constant derivative: right at x = 0 only
        "derivative_at_zero": """
return grad * 1.0
""",
    },
}

CORRECT_ANSWERS = {
    "place_node": {
        # lookup's NotFoundError instead of find's None, the device type read with rsplit
        "lookup_and_catch": """
kind = device.rsplit(":", 2)[-2]
try:
    aics.kernel_registry.lookup(op_type, kind, attrs)
    return device
except aics.errors.NotFoundError:
    pass
aics.kernel_registry.lookup(op_type, "CPU", attrs)          # no kernel anywhere: NotFoundError
if not allow_soft_placement:
    raise aics.errors.InvalidArgumentError(None, None, f"{op_type}: no {kind} kernel, soft placement off")
return "/device:CPU:0"
""",
    },
    "tan_gradient": {
        # sec^2 written as 1/cos^2 from the input
        "one_over_cos_squared": """
return grad / aics.square(aics.cos(op.inputs[0]))
""",
        "reciprocal_of_cos_squared": """
c = aics.cos(op.inputs[0])
return aics.reciprocal(c * c) * grad
""",
        # 1 + tan^2 with tan recomputed from the input instead of the forward output
        "one_plus_tan_squared_recomputed": """
t = aics.tan(op.inputs[0])
return grad + grad * t * t
""",
    },
}
