"""Dynamic loss scaling, as Keras's ``LossScaleOptimizer`` does it: the reference the loss-scaling
lab of notebook 17 is graded against (and falls back on while it is unanswered).

Keras (``keras/mixed_precision/loss_scale_optimizer.py``, ``_DynamicLossScaleState.update``):
when any gradient is not finite the step is skipped, the scale becomes ``max(scale / 2, 1)``
(a float division: 3 -> 1.5) and the counter 0; otherwise the counter counts up, and when it
reaches ``dynamic_growth_steps`` the scale doubles (kept if the doubling is not finite in float32)
and the counter goes back to 0. Gradients are unscaled in float32, never in float16.
"""
import numpy as np

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def update_loss_scale(scale, counter, grads_finite, growth_steps=2000):
    """(new_scale, new_counter, apply_step)."""
    if not grads_finite:
        return max(scale / 2.0, 1.0), 0, False
    if counter + 1 >= growth_steps:
        return (scale * 2.0 if scale * 2.0 <= _FLOAT32_MAX else scale), 0, True
    return scale, counter + 1, True


def unscale_and_check(scaled_grads, scale):
    """(gradients divided by ``scale`` in float32, whether every entry of every gradient is finite)."""
    grads = [np.asarray(g, np.float32) / np.float32(scale) for g in scaled_grads]
    return grads, all(bool(np.isfinite(g).all()) for g in grads)


def dynamic_scaling_step(compute_scaled_grads, apply_gradients, scale, counter, growth_steps):
    """One training step with dynamic loss scaling: (new_scale, new_counter, applied)."""
    grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
    if finite:
        apply_gradients(grads)
    new_scale, new_counter, _ = update_loss_scale(scale, counter, finite, growth_steps)
    return new_scale, new_counter, finite


def loss_scaled_step(compute_scaled_grads, apply_gradients, state, growth_steps):
    """The notebook's interface: ``state`` ({"scale", "counter"}) updated in place; returns
    whether the step was applied."""
    state["scale"], state["counter"], applied = dynamic_scaling_step(
        compute_scaled_grads, apply_gradients, state["scale"], state["counter"], growth_steps)
    return applied
