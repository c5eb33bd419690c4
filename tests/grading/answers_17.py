"""Plausible wrong answers for notebook 17 (mixed precision): the loss-scaling lab, (a) the dynamic
loss-scale rule ``update_loss_scale``, (b) ``unscale_and_check``, (c) ``loss_scaled_step``.

Each replaces the solution of its exercise and must lose exactly that exercise's points.
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
        "calls_the_package_reference": """
from workbook.references.loss_scale import update_loss_scale as reference
return reference(scale, counter, grads_finite, growth_steps)
""",
    },
    "unscale_and_check": {
        # the library checks finiteness
        "library_call": """
grads = [np.asarray(g, np.float32) / np.float32(scale) for g in scaled_grads]
return grads, all(bool(aics.reduce_all(aics.math.is_finite(g)).numpy()) for g in grads)
""",
        # divided in float16: small gradients underflow again, large ones were never representable
        "unscales_in_float16": """
grads = [(np.asarray(g).astype(np.float16) / np.float16(scale)).astype(np.float32) for g in scaled_grads]
return grads, all(bool(np.isfinite(g).all()) for g in grads)
""",
        # np.isinf: a NaN gradient passes as finite
        "checks_only_inf": """
grads = [np.asarray(g, np.float32) / np.float32(scale) for g in scaled_grads]
return grads, not any(bool(np.isinf(g).any()) for g in grads)
""",
        # multiplied by the scale instead of divided
        "multiplies_by_the_scale": """
grads = [np.asarray(g, np.float32) * np.float32(scale) for g in scaled_grads]
return grads, all(bool(np.isfinite(g).all()) for g in grads)
""",
        # only the first gradient checked
        "checks_only_the_first_gradient": """
grads = [np.asarray(g, np.float32) / np.float32(scale) for g in scaled_grads]
return grads, bool(np.isfinite(grads[0]).all())
""",
        "calls_the_package_reference": """
from workbook.references.loss_scale import unscale_and_check as reference
return reference(scaled_grads, scale)
""",
        # the package reference's arithmetic copied in float64: right values, float64 arrays
        "copies_the_package_reference_in_float64": """
grads = [np.asarray(g, np.float64) / scale for g in scaled_grads]
return grads, all(bool(np.isfinite(g).all()) for g in grads)
""",
    },
    "loss_scaled_step": {
        # finiteness from aicslib
        "library_call": """
scale = state["scale"]
scaled = compute_scaled_grads(scale)
finite = all(bool(aics.reduce_all(aics.math.is_finite(g)).numpy()) for g in scaled)
grads, _ = unscale_and_check(scaled, scale)
if finite:
    apply_gradients(grads)
state["scale"], state["counter"], _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
return finite
""",
        # the scaled gradients applied (Adam barely notices, but the update is not the gradient's)
        "applies_scaled_gradients": """
scale = state["scale"]
scaled = compute_scaled_grads(scale)
_, finite = unscale_and_check(scaled, scale)
if finite:
    apply_gradients(scaled)
state["scale"], state["counter"], _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
return finite
""",
        # an overflowed step applied with its non-finite entries replaced by 0
        "zeros_instead_of_skipping": """
scale = state["scale"]
grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
apply_gradients([np.where(np.isfinite(g), g, np.float32(0)) for g in grads])
state["scale"], state["counter"], _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
return finite
""",
        # the scale updated first, and the gradients divided by the new one
        "unscales_with_the_new_scale": """
scale = state["scale"]
scaled = compute_scaled_grads(scale)
_, finite = unscale_and_check(scaled, scale)
state["scale"], state["counter"], _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
grads, _ = unscale_and_check(scaled, state["scale"])
if finite:
    apply_gradients(grads)
return finite
""",
        # the counter never stored: the scale never grows
        "counter_not_stored": """
scale = state["scale"]
grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
if finite:
    apply_gradients(grads)
state["scale"], _, _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
return finite
""",
        "calls_the_package_reference": """
from workbook.references.loss_scale import loss_scaled_step as reference
return reference(compute_scaled_grads, apply_gradients, state, growth_steps)
""",
        # the package reference's dynamic_scaling_step copied: it returns the new state instead of updating it
        "copies_the_package_reference": """
scale, counter = state["scale"], state["counter"]
grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
if finite:
    apply_gradients(grads)
new_scale, new_counter, _ = update_loss_scale(scale, counter, finite, growth_steps)
return new_scale, new_counter, finite
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
    "unscale_and_check": {
        # np.divide with a float32 result, finiteness of the scaled gradients (dividing keeps inf and NaN)
        "divide_with_dtype": """
finite = all(bool(np.isfinite(np.asarray(g)).all()) for g in scaled_grads)
return [np.divide(g, scale, dtype=np.float32) for g in scaled_grads], finite
""",
    },
    "loss_scaled_step": {
        # the state read and written through locals, the update rule first
        "rule_first": """
scale, counter = state["scale"], state["counter"]
grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
new_scale, new_counter, apply_step = update_loss_scale(scale, counter, finite, growth_steps)
if apply_step:
    apply_gradients(grads)
state.update(scale=new_scale, counter=new_counter)
return apply_step
""",
    },
}
