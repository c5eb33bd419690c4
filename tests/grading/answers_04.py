"""Plausible wrong answers for notebook 04 (op-registration), and other correct ones.

Each replaces the release stub of ``_tan_grad(op, grad)`` (the gradient registered for ``Tan``);
a wrong one must lose the exercise's 2 points inside its locked test cell, a correct one must score
them.
"""

WRONG_ANSWERS = {
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
