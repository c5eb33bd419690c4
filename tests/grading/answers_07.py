"""Plausible wrong answers for notebook 07 (mixed precision): the dynamic loss-scale rule.

Each replaces the solution of ``update_loss_scale(scale, counter, grads_finite, growth_steps)``
and must lose exactly the exercise's 3 points.
"""

WRONG_ANSWERS = {
    "loss_scale_rule": {
        "no_floor_at_one": """
if not grads_finite:
    return scale / 2.0, 0, False
if counter + 1 >= growth_steps:
    return scale * 2.0, 0, True
return scale, counter + 1, True
""",
        "counter_kept_on_overflow": """
if not grads_finite:
    return max(scale / 2.0, 1.0), counter, False
if counter + 1 >= growth_steps:
    return scale * 2.0, 0, True
return scale, counter + 1, True
""",
        "grows_one_step_late": """
if not grads_finite:
    return max(scale / 2.0, 1.0), 0, False
if counter >= growth_steps:
    return scale * 2.0, 0, True
return scale, counter + 1, True
""",
        "applies_the_overflowed_step": """
if not grads_finite:
    return max(scale / 2.0, 1.0), 0, True
if counter + 1 >= growth_steps:
    return scale * 2.0, 0, True
return scale, counter + 1, True
""",
        "doubles_past_float32": """
if not grads_finite:
    return max(scale / 2.0, 1.0), 0, False
if counter + 1 >= growth_steps:
    return scale * 2.0, 0, True
return scale, counter + 1, True
""",
        # floor division: gives 1 for scale 3 where Keras gives 1.5
        "floor_divides_the_scale": """
if not grads_finite:
    return max(scale // 2, 1.0), 0, False
if counter + 1 >= growth_steps:
    doubled = scale * 2.0
    return (doubled if doubled <= float(np.finfo(np.float32).max) else scale), 0, True
return scale, counter + 1, True
""",
        "library_loss_scale_optimizer": """
opt = aics.mixed_precision.LossScaleOptimizer(aics.train.GradientDescentOptimizer(0.0),
                                              initial_scale=max(scale, 1.0),
                                              dynamic_growth_steps=growth_steps)
opt.dynamic_counter.assign(counter)
w = aics.Variable([0.0])
g = aics.constant([0.0 if grads_finite else np.inf])
opt.apply_gradients([(g, w)])
return float(opt.loss_scale.numpy()), int(opt.dynamic_counter.numpy()), bool(grads_finite)
""",
    },
}

CORRECT_ANSWERS = {
    "loss_scale_rule": {
        # the float32 bound checked with np.isfinite on a float32 product instead of a comparison
        "float32_product": """
if not grads_finite:
    return max(scale * 0.5, 1.0), 0, False
if counter + 1 < growth_steps:
    return scale, counter + 1, True
with np.errstate(over="ignore"):
    doubled = np.float32(scale) * np.float32(2)
return (float(doubled) if np.isfinite(doubled) else scale), 0, True
""",
    },
}
