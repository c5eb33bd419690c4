"""Plausible wrong answers for notebook 10 (mnist-mlp).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "mlp_backward": {
        "relu_masks_missing": """
grads["W3"] = h2.T @ dlogits
grads["b3"] = dlogits.sum(axis=0)
dh2 = dlogits @ params["W3"].T
grads["W2"] = h1.T @ dh2
grads["b2"] = dh2.sum(axis=0)
dh1 = dh2 @ params["W2"].T
grads["W1"] = x.T @ dh1
grads["b1"] = dh1.sum(axis=0)
""",
        "bias_mean_not_sum": """
grads["W3"] = h2.T @ dlogits
grads["b3"] = dlogits.mean(axis=0)
dh2 = (dlogits @ params["W3"].T) * (h2 > 0)
grads["W2"] = h1.T @ dh2
grads["b2"] = dh2.mean(axis=0)
dh1 = (dh2 @ params["W2"].T) * (h1 > 0)
grads["W1"] = x.T @ dh1
grads["b1"] = dh1.mean(axis=0)
""",
        "transposed_weight_grads": """
grads["W3"] = dlogits.T @ h2
grads["b3"] = dlogits.sum(axis=0)
dh2 = (dlogits @ params["W3"].T) * (h2 > 0)
grads["W2"] = dh2.T @ h1
grads["b2"] = dh2.sum(axis=0)
dh1 = (dh2 @ params["W2"].T) * (h1 > 0)
grads["W1"] = dh1.T @ x
grads["b1"] = dh1.sum(axis=0)
""",
        "framework_autodiff": """
ps = {k: aics.constant(v) for k, v in params.items()}
with aics.GradientTape() as tape:
    for v in ps.values():
        tape.watch(v)
    a = aics.nn.relu(aics.matmul(aics.constant(x), ps["W1"]) + ps["b1"])
    a = aics.nn.relu(aics.matmul(a, ps["W2"]) + ps["b2"])
    z = aics.matmul(a, ps["W3"]) + ps["b3"]
    s = aics.reduce_sum(z * aics.constant(dlogits))
grads.update({k: g.numpy() for k, g in zip(ps, tape.gradient(s, list(ps.values())))})
""",
    },
}
