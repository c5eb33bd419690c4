"""Plausible wrong answers for notebook 04 (op-registration).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "tan_gradient": {
        "forgot_upstream_grad": """
return 1.0 + aics.square(op.outputs[0])
""",
        "missing_one_plus": """
return grad * aics.square(op.outputs[0])
""",
        "numpy_not_ops": """
return grad * (1.0 + np.tan(op.inputs[0].numpy()) ** 2)
""",
        "cos_not_squared": """
return grad / aics.cos(op.inputs[0])
""",
    },
}
