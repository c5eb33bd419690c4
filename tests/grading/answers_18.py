"""Wrong answers for notebook 18 (sparse training): the exercise ``magnitude_mask``."""

WRONG_ANSWERS = {
    "magnitude_mask": {
        # int() floors (1 - s) * n instead of rounding it: keeps one weight too few at s=0.22.
        "floor_instead_of_round": """
k = max(int(w.size * (1.0 - s)), 1)
threshold = np.sort(np.abs(w), axis=None)[w.size - k]
return (np.abs(w) >= threshold).astype(w.dtype)
""",
        # strict > against the (k+1)-th largest: exactly k kept without ties, but weights tied
        # at the threshold are dropped (and at s=0 the index wraps to the largest weight).
        "strict_threshold_drops_ties": """
k = max(int(round(w.size * (1.0 - s))), 1)
threshold = np.sort(np.abs(w), axis=None)[w.size - k - 1]
return (np.abs(w) > threshold).astype(w.dtype)
""",
        # ranks signed values: large negative weights are pruned first.
        "signed_not_magnitude": """
k = max(int(round(w.size * (1.0 - s))), 1)
threshold = np.sort(w, axis=None)[w.size - k]
return (w >= threshold).astype(w.dtype)
""",
        # forgets max(..., 1): at very high sparsity no weight survives (index error or all zeros).
        "no_weight_kept_at_high_sparsity": """
k = int(round(w.size * (1.0 - s)))
if k == 0:
    return np.zeros_like(w)
threshold = np.sort(np.abs(w), axis=None)[w.size - k]
return (np.abs(w) >= threshold).astype(w.dtype)
""",
        # the shortcut: the library's own implementation.
        "calls_the_library": """
return sparsity.magnitude_mask(w, s)
""",
        # the threshold as the s-quantile of |w|: interpolates, so n = 10, s = 0.25 keeps 7 where
        # tfmot keeps round(7.5) = 8
        "quantile_threshold": """
threshold = np.quantile(np.abs(w), s)
return (np.abs(w) >= threshold).astype(w.dtype)
""",
        # rounds halves up (int(x + 0.5)): n = 10, s = 0.75 keeps 3 where tf.round gives 2
        "rounds_halves_up": """
k = max(int(w.size * (1.0 - s) + 0.5), 1)
threshold = np.sort(np.abs(w), axis=None)[w.size - k]
return (np.abs(w) >= threshold).astype(w.dtype)
""",
        # right weights, but a boolean mask: not the weights' dtype
        "boolean_mask": """
k = max(int(round(w.size * (1.0 - s))), 1)
threshold = np.sort(np.abs(w), axis=None)[w.size - k]
return np.abs(w) >= threshold
""",
        # the package's brute-force reference called instead of written
        "copies_the_package_reference": """
from workbook.references.pruning import keep
return keep(w, s)[0].astype(w.dtype)
""",
    },
}

CORRECT_ANSWERS = {
    "magnitude_mask": {
        # np.partition (O(n)) and Python's round on the flattened magnitudes
        "partition_and_python_round": """
a = np.abs(w).ravel()
k = max(round(a.size * (1 - s)), 1)
threshold = np.partition(a, a.size - k)[a.size - k]
return (np.abs(w) >= threshold).astype(w.dtype)
""",
        # a descending sort, np.round, np.where
        "descending_sort_and_where": """
k = max(int(np.round(w.size * (1.0 - s))), 1)
threshold = np.sort(np.abs(w).reshape(-1))[::-1][k - 1]
return np.where(np.abs(w) >= threshold, 1, 0).astype(w.dtype)
""",
    },
}



# ---- the lab (exercise 5.12): schedule, one masked momentum-SGD step, the gradual-pruning loop ----

WRONG_ANSWERS["polynomial_decay"] = {
    # keeps pruning after end_step (the window has no end)
    "prunes_after_end_step": """
should_prune = step >= begin_step and (step - begin_step) % frequency == 0
p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
return should_prune, final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - p) ** power
""",
    # counts the frequency from step 0, not from begin_step: begin_step=3, frequency=7 prunes at 7, 14, ...
    "frequency_from_step_zero": """
should_prune = begin_step <= step <= end_step and step % frequency == 0
p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
return should_prune, final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - p) ** power
""",
    # the power on p instead of on (1 - p): slow at first, fast at the end (the opposite of Zhu & Gupta)
    "power_on_p": """
should_prune = begin_step <= step <= end_step and (step - begin_step) % frequency == 0
p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
return should_prune, initial_sparsity + (final_sparsity - initial_sparsity) * p ** power
""",
    # no clip: past end_step (1 - p) turns negative and the sparsity overshoots the target
    "no_clip": """
should_prune = begin_step <= step <= end_step and (step - begin_step) % frequency == 0
p = (step - begin_step) / (end_step - begin_step)
return should_prune, final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - p) ** power
""",
    # ignores power: a linear ramp
    "linear_ramp": """
should_prune = begin_step <= step <= end_step and (step - begin_step) % frequency == 0
p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
return should_prune, initial_sparsity + (final_sparsity - initial_sparsity) * p
""",
    # the shortcut: aicslib's PolynomialDecay
    "calls_the_library": """
should_prune, s = sparsity.PolynomialDecay(initial_sparsity, final_sparsity, begin_step, end_step,
                                           power=power, frequency=frequency)(step)
return should_prune, float(s)
""",
    # the package's reference called instead of written
    "copies_the_package_reference": """
from workbook.references.pruning import polynomial_decay
return polynomial_decay(step, initial_sparsity, final_sparsity, begin_step, end_step, frequency, power)
""",
}

CORRECT_ANSWERS["polynomial_decay"] = {
    # NumPy's clip in float64, and branches for the pruning steps
    "numpy_clip_and_branches": """
p = float(np.clip((step - begin_step) / (end_step - begin_step), 0.0, 1.0))
s = final_sparsity - (final_sparsity - initial_sparsity) * (1 - p) ** power
if step < begin_step or step > end_step:
    return False, s
return (step - begin_step) % frequency == 0, s
""",
    # float32 as tfmot computes it
    "float32_like_tfmot": """
p = np.float32(min(max(step - begin_step, 0), end_step - begin_step)) / np.float32(end_step - begin_step)
s = np.float32(final_sparsity) + np.float32(initial_sparsity - final_sparsity) * (np.float32(1) - p) ** power
return bool(begin_step <= step <= end_step and (step - begin_step) % frequency == 0), s
""",
}


def _step(backward=None, update=None, softmax="np.exp(log_p)", forward_extra=""):
    """A masked momentum-SGD step with one part replaced (the reference's parts by default)."""
    backward = backward or """grads = {"W3": h2.T @ d, "b3": d.sum(axis=0)}
d = (d @ params["W3"].T) * (h2 > 0)
grads["W2"], grads["b2"] = h1.T @ d, d.sum(axis=0)
d = (d @ params["W2"].T) * (h1 > 0)
grads["W1"], grads["b1"] = x.T @ d, d.sum(axis=0)"""
    update = update or """for k in params:
    velocity[k] = momentum * velocity[k] + grads[k]
    params[k] = params[k] - lr * velocity[k]
    if k in masks:
        params[k] = params[k] * masks[k]"""
    return f"""
h1 = np.maximum(x @ params["W1"] + params["b1"], 0)
h2 = np.maximum(h1 @ params["W2"] + params["b2"], 0)
z = h2 @ params["W3"] + params["b3"]
z = z - z.max(axis=1, keepdims=True)
log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
rows = np.arange(len(y))
loss = -log_p[rows, y].mean()
d = {softmax}
d[rows, y] -= 1
d /= len(y){forward_extra}
{backward}
{update}
return float(loss)
"""


WRONG_ANSWERS["masked_sgd_step"] = {
    # the mask is never re-applied: momentum (and the gradient) move the pruned weights off 0
    "mask_not_reapplied": _step(update="""for k in params:
    velocity[k] = momentum * velocity[k] + grads[k]
    params[k] = params[k] - lr * velocity[k]"""),
    # masks the gradient but not the weights: the velocity left at pruned positions still moves them
    "masks_the_gradient_only": _step(update="""for k in params:
    g = grads[k] * masks[k] if k in masks else grads[k]
    velocity[k] = momentum * velocity[k] + g
    params[k] = params[k] - lr * velocity[k]"""),
    # the gradient of the summed loss (no division by the batch size)
    "sum_not_mean": _step(forward_extra="\nd *= len(y)"),
    # backprop through the ReLUs without their derivative
    "no_relu_derivative": _step(backward="""grads = {"W3": h2.T @ d, "b3": d.sum(axis=0)}
d = d @ params["W3"].T
grads["W2"], grads["b2"] = h1.T @ d, d.sum(axis=0)
d = d @ params["W2"].T
grads["W1"], grads["b1"] = x.T @ d, d.sum(axis=0)"""),
    # the bias gradients averaged again over the batch (d already carries the 1/B)
    "bias_gradient_averaged_twice": _step(backward="""grads = {"W3": h2.T @ d, "b3": d.mean(axis=0)}
d = (d @ params["W3"].T) * (h2 > 0)
grads["W2"], grads["b2"] = h1.T @ d, d.mean(axis=0)
d = (d @ params["W2"].T) * (h1 > 0)
grads["W1"], grads["b1"] = x.T @ d, d.mean(axis=0)"""),
    # the weights move with the old velocity, updated afterwards
    "update_with_the_old_velocity": _step(update="""for k in params:
    params[k] = params[k] - lr * velocity[k]
    velocity[k] = momentum * velocity[k] + grads[k]
    if k in masks:
        params[k] = params[k] * masks[k]"""),
    # the shortcut: the library's softmax (the rest by hand)
    "calls_the_library": _step(softmax="aics.nn.softmax(z).numpy()"),
    # the package's reference called instead of written
    "copies_the_package_reference": """
from workbook.references.pruning import masked_sgd_step
return masked_sgd_step(params, velocity, masks, x, y, lr, momentum)
""",
}

CORRECT_ANSWERS["masked_sgd_step"] = {
    # float64 throughout, cast back to float32 when stored
    "float64_then_cast": """
p = {k: v.astype(np.float64) for k, v in params.items()}
x64 = x.astype(np.float64)
a1 = x64 @ p["W1"] + p["b1"]
h1 = np.where(a1 > 0, a1, 0.0)
a2 = h1 @ p["W2"] + p["b2"]
h2 = np.where(a2 > 0, a2, 0.0)
z = h2 @ p["W3"] + p["b3"]
e = np.exp(z - z.max(axis=1, keepdims=True))
prob = e / e.sum(axis=1, keepdims=True)
onehot = np.eye(z.shape[1])[y]
loss = -np.mean(np.log(prob[np.arange(len(y)), y]))
d = (prob - onehot) / len(y)
g = {"W3": h2.T @ d, "b3": d.sum(axis=0)}
d = (d @ p["W3"].T) * (a2 > 0)
g["W2"], g["b2"] = h1.T @ d, d.sum(axis=0)
d = (d @ p["W2"].T) * (a1 > 0)
g["W1"], g["b1"] = x64.T @ d, d.sum(axis=0)
for k in params:
    v = momentum * velocity[k].astype(np.float64) + g[k]
    w = p[k] - lr * v
    if k in masks:
        w = w * masks[k]
    velocity[k] = v.astype(np.float32)
    params[k] = w.astype(np.float32)
return loss
""",
    # the gradient masked too (pruned positions keep their velocity), in-place array updates
    "masked_gradient_in_place": _step(update="""for k in params:
    g = grads[k] * masks[k] if k in masks else grads[k]
    velocity[k] *= momentum
    velocity[k] += g
    params[k] -= lr * velocity[k]
    if k in masks:
        params[k] *= masks[k]"""),
}

WRONG_ANSWERS["gradual_pruning"] = {
    # recomputes the masks at every step, whatever the schedule says
    "prunes_every_step": """
for t, (x, y) in enumerate(batches):
    s = schedule(t)[1]
    for k in masks:
        masks[k] = mask_fn(params[k], s)
        params[k] = params[k] * masks[k]
    step_fn(params, velocity, masks, x, y, lr, momentum)
""",
    # trains first, then updates the masks: each mask comes one step late
    "masks_after_the_step": """
for t, (x, y) in enumerate(batches):
    step_fn(params, velocity, masks, x, y, lr, momentum)
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = mask_fn(params[k], s)
            params[k] = params[k] * masks[k]
""",
    # new masks, but the weights they prune still take part in this step's forward pass
    "weights_not_zeroed_at_the_update": """
for t, (x, y) in enumerate(batches):
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = mask_fn(params[k], s)
    step_fn(params, velocity, masks, x, y, lr, momentum)
""",
    # steps counted from 1: every mask update one step early
    "steps_counted_from_one": """
for t, (x, y) in enumerate(batches, start=1):
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = mask_fn(params[k], s)
            params[k] = params[k] * masks[k]
    step_fn(params, velocity, masks, x, y, lr, momentum)
""",
    # the masks ranked on the initial weights, not on the trained ones
    "masks_from_the_initial_weights": """
initial = {k: params[k].copy() for k in masks}
for t, (x, y) in enumerate(batches):
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = mask_fn(initial[k], s)
            params[k] = params[k] * masks[k]
    step_fn(params, velocity, masks, x, y, lr, momentum)
""",
    # a fresh velocity at every step: momentum never accumulates
    "velocity_reset_every_step": """
for t, (x, y) in enumerate(batches):
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = mask_fn(params[k], s)
            params[k] = params[k] * masks[k]
    step_fn(params, {k: np.zeros_like(v) for k, v in params.items()}, masks, x, y, lr, momentum)
""",
    # the shortcut: the library's magnitude_mask instead of the mask_fn it is given
    "calls_the_library": """
for t, (x, y) in enumerate(batches):
    should_prune, s = schedule(t)
    if should_prune:
        for k in masks:
            masks[k] = sparsity.magnitude_mask(params[k], s)
            params[k] = params[k] * masks[k]
    step_fn(params, velocity, masks, x, y, lr, momentum)
""",
    # the package's reference called instead of written
    "copies_the_package_reference": """
from workbook.references.pruning import gradual_pruning
masks = gradual_pruning(params, batches, schedule, mask_fn, step_fn, lr, momentum)
""",
}

CORRECT_ANSWERS["gradual_pruning"] = {
    # an explicit step counter, pruned weights zeroed by boolean indexing
    "counter_and_boolean_zeroing": """
t = 0
for x, y in batches:
    should_prune, s = schedule(t)
    if should_prune:
        for k in ("W1", "W2", "W3"):
            masks[k] = mask_fn(params[k], s)
            params[k][masks[k] == 0] = 0
    step_fn(params, velocity, masks, x, y, lr, momentum)
    t += 1
""",
}
