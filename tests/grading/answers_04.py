"""Plausible wrong answers for notebook 04 (mnist-mlp).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "loss_and_dlogits": {
        # the library's softmax
        "library_call": """
n = len(y)
p = aics.nn.softmax(logits).numpy()
loss = float(-np.mean(np.log(p[np.arange(n), y])))
p[np.arange(n), y] -= 1
return loss, p / n
""",
        # the batch mean's 1/B forgotten in the gradient
        "no_one_over_b": """
n = len(y)
z = logits - logits.max(axis=1, keepdims=True)
log_sum = np.log(np.exp(z).sum(axis=1, keepdims=True))
d = np.exp(z - log_sum)
d[np.arange(n), y] -= 1
return float(np.mean(log_sum[:, 0] - z[np.arange(n), y])), d
""",
        # the softmax alone: the one-hot never subtracted
        "onehot_not_subtracted": """
n = len(y)
z = logits - logits.max(axis=1, keepdims=True)
log_sum = np.log(np.exp(z).sum(axis=1, keepdims=True))
return float(np.mean(log_sum[:, 0] - z[np.arange(n), y])), np.exp(z - log_sum) / n
""",
        # exp of the raw logits: overflows at 1000
        "max_not_subtracted": """
n = len(y)
with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
    e = np.exp(logits)
    p = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(p[np.arange(n), y])))
p[np.arange(n), y] -= 1
return loss, p / n
""",
        # the max subtracted in place: the caller's logits change
        "changes_the_logits_in_place": """
n = len(y)
logits -= logits.max(axis=1, keepdims=True)
log_sum = np.log(np.exp(logits).sum(axis=1, keepdims=True))
d = np.exp(logits - log_sum)
d[np.arange(n), y] -= 1
return float(np.mean(log_sum[:, 0] - logits[np.arange(n), y])), d / n
""",
        "calls_the_package_reference": """
from workbook.references.mlp import loss_and_dlogits as reference
return reference(logits, y)
""",
        # the version this chapter used to print, copied: log(p + 1e-12) caps the loss of a confident mistake
        "copies_the_old_chapter_code": """
z = logits - logits.max(axis=1, keepdims=True)
p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
n = len(y)
loss = float(-np.mean(np.log(p[np.arange(n), y] + 1e-12)))
p[np.arange(n), y] -= 1.0
return loss, p / n
""",
        # stable, but one Python iteration per sample
        "loop_over_samples": """
n = len(y)
d = np.empty_like(logits)
total = 0.0
for i in range(n):
    z = logits[i] - logits[i].max()
    p = np.exp(z) / np.exp(z).sum()
    total += -np.log(p[y[i]])
    p[y[i]] -= 1
    d[i] = p / n
return float(total / n), d
""",
    },
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
        # 1/B applied again: dlogits from loss_and_dlogits already holds the batch mean's 1/B
        "divides_by_the_batch_twice": """
n = len(x)
grads["W3"] = h2.T @ dlogits / n
grads["b3"] = dlogits.sum(axis=0) / n
dh2 = (dlogits @ params["W3"].T) * (h2 > 0)
grads["W2"] = h1.T @ dh2 / n
grads["b2"] = dh2.sum(axis=0) / n
dh1 = (dh2 @ params["W2"].T) * (h1 > 0)
grads["W1"] = x.T @ dh1 / n
grads["b1"] = dh1.sum(axis=0) / n
""",
        # the ReLU after layer 2 is masked, the one after layer 1 forgotten
        "first_relu_mask_missing": """
grads["W3"] = h2.T @ dlogits
grads["b3"] = dlogits.sum(axis=0)
dh2 = (dlogits @ params["W3"].T) * (h2 > 0)
grads["W2"] = h1.T @ dh2
grads["b2"] = dh2.sum(axis=0)
dh1 = dh2 @ params["W2"].T
grads["W1"] = x.T @ dh1
grads["b1"] = dh1.sum(axis=0)
""",
        # the package's reference called instead of written
        "copies_the_package_reference": """
from workbook.references.mlp import mlp_backward
grads.update(mlp_backward(params, cache, dlogits))
""",
    },
}

CORRECT_ANSWERS = {
    "loss_and_dlogits": {
        # NumPy's log-sum-exp, an explicit one-hot
        "logaddexp_and_onehot": """
n = len(y)
lse = np.logaddexp.reduce(logits, axis=1, keepdims=True)
onehot = np.eye(logits.shape[1], dtype=logits.dtype)[y]
loss = float(np.mean(lse[:, 0] - logits[np.arange(n), y]))
return loss, ((np.exp(logits - lse) - onehot) / n).astype(logits.dtype)
""",
        # computed in float64, cast back at the end
        "float64_then_cast": """
z = np.asarray(logits, np.float64)
z = z - z.max(axis=1, keepdims=True)
total = np.exp(z).sum(axis=1, keepdims=True)
n = len(y)
loss = float(np.mean(np.log(total[:, 0]) - z[np.arange(n), y]))
p = np.exp(z) / total
p[np.arange(n), y] -= 1
return loss, (p / n).astype(logits.dtype)
""",
    },
    "mlp_backward": {
        # einsum for every product, the ReLU masks with np.where
        "einsum_and_where": """
grads["W3"] = np.einsum("bi,bj->ij", h2, dlogits)
grads["b3"] = np.einsum("bj->j", dlogits)
dh2 = np.where(h2 > 0, np.einsum("bj,ij->bi", dlogits, params["W3"]), 0)
grads["W2"] = np.einsum("bi,bj->ij", h1, dh2)
grads["b2"] = dh2.sum(axis=0)
dh1 = np.where(h1 > 0, np.einsum("bj,ij->bi", dh2, params["W2"]), 0)
grads["W1"] = np.einsum("bi,bj->ij", x, dh1)
grads["b1"] = dh1.sum(axis=0)
""",
        # everything in float64, each gradient cast back to its parameter's dtype at the end
        "float64_then_cast": """
d = dlogits.astype(np.float64)
a0, a1, a2 = (t.astype(np.float64) for t in (x, h1, h2))
layers = [(3, a2, None), (2, a1, a2), (1, a0, a1)]
for i, a, h in layers:
    if h is not None:
        d = (d @ params[f"W{i + 1}"].astype(np.float64).T) * (h > 0)
    grads[f"W{i}"] = (a.T @ d).astype(params[f"W{i}"].dtype)
    grads[f"b{i}"] = d.sum(axis=0).astype(params[f"b{i}"].dtype)
""",
    },
}
