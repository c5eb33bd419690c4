"""Plausible wrong answers for notebook 03 (training-workflow), and different correct ones.

Each wrong answer replaces the release stub of its solution cell and must lose exactly that
exercise's points; each correct one must score full marks.
"""

WRONG_ANSWERS = {
    "stable_xent": {
        # the library's own implementation
        "library_call": """
return aics.nn.sparse_softmax_cross_entropy_with_logits(labels=np.asarray(labels), logits=logits).numpy()
""",
        "clipped_logits": """
z = np.clip(logits, -80.0, 80.0)
return np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(labels)), labels]
""",
        "naive_overflows": """
with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
    return np.log(np.exp(logits).sum(axis=1)) - logits[np.arange(len(labels)), labels]
""",
        "global_max_not_per_row": """
m = logits.max()
with np.errstate(divide="ignore"):
    return m + np.log(np.exp(logits - m).sum(axis=1)) - logits[np.arange(len(labels)), labels]
""",
        # the package's reference, called
        "calls_the_package_reference": """
from workbook.references.cross_entropy import softmax_xent_exact
return softmax_xent_exact(logits, labels)
""",
        # the package's reference, copied: exact, but one Python iteration per sample
        "copies_the_package_reference": """
import decimal
losses = []
with decimal.localcontext() as ctx:
    ctx.prec = 50
    for row, label in zip(logits, labels):
        total = sum(decimal.Decimal(float(v)).exp() for v in row)
        losses.append(float(total.ln() - decimal.Decimal(float(row[int(label)]))))
return np.array(losses, np.float64)
""",
        # stable, but a Python loop over the samples
        "loop_over_samples": """
out = np.empty(len(labels))
for i, (row, label) in enumerate(zip(logits, labels)):
    m = row.max()
    out[i] = m + np.log(np.exp(row - m).sum()) - row[label]
return out
""",
        # float32 arithmetic: stable, but 1e-7 relative, not 1e-9
        "float32_arithmetic": """
z = logits.astype(np.float32)
m = z.max(axis=1, keepdims=True)
return (m[:, 0] + np.log(np.exp(z - m).sum(axis=1)) - z[np.arange(len(labels)), labels]).astype(np.float64)
""",
    },
    "momentum_slots": {
        # the library's own MomentumOptimizer makes the slots
        "library_call": """
aics.train.MomentumOptimizer._create_slots(self, var_list)
""",
        # its own Variables, trainable by default: minimize() would train the accumulators
        "trainable_variables_as_slots": """
for v in var_list:
    self._slot_dict("momentum")[v] = aics.Variable(np.zeros(v.shape.as_list(), np.float32),
                                                   name=v.name.split(":")[0] + "/Momentum")
""",
        # named after the slot, not the optimizer: w/momentum, which a TF checkpoint does not have
        "slot_named_after_the_slot": """
for v in var_list:
    self._zeros_slot(v, "momentum", "momentum")
""",
        # the accumulator starts at one, not zero
        "starts_at_one": """
for v in var_list:
    self._slot_with_init(v, "momentum", self._name, 1.0)
""",
        # slots under another name: get_slot(var, "momentum") finds nothing
        "slot_called_accum": """
for v in var_list:
    self._zeros_slot(v, "accum", self._name)
""",
        # the package reference keeps accum as NumPy arrays: copied, they are no slots
        "copies_the_package_reference": """
self._accum = {v: np.zeros(v.shape.as_list()) for v in var_list}
""",
    },
    "momentum_dense": {
        # the library's own kernel (ResourceApplyMomentum)
        "library_call": """
return aics.train.MomentumOptimizer._apply_dense(opt, grad, var)
""",
        # an exponential moving average of the gradient (Adam's first moment), not TF's accumulator
        "moving_average_accum": """
new_accum = accum.assign(momentum * accum + (1 - momentum) * grad)
with aics.control_dependencies([new_accum]):
    step = lr * (grad + momentum * new_accum) if opt._use_nesterov else lr * new_accum
    return var.assign_sub(step)
""",
        # use_nesterov ignored: always the heavy ball
        "nesterov_ignored": """
new_accum = accum.assign(momentum * accum + grad)
with aics.control_dependencies([new_accum]):
    return var.assign_sub(lr * new_accum)
""",
        # Nesterov's look-ahead with the old accumulator
        "nesterov_with_old_accum": """
old = accum.value()
new_accum = accum.assign(momentum * old + grad)
with aics.control_dependencies([new_accum]):
    step = lr * (grad + momentum * old) if opt._use_nesterov else lr * new_accum
    return var.assign_sub(step)
""",
        # lr folded into the velocity (v = mu*v - lr*g): differs once lr changes, and the slot is not TF's
        "lr_inside_the_velocity": """
velocity = accum.assign(momentum * accum - lr * grad)
with aics.control_dependencies([velocity]):
    step = momentum * velocity - lr * grad if opt._use_nesterov else velocity
    return var.assign_add(step)
""",
        # the new accumulator is computed but never stored in the slot
        "accum_not_stored": """
new_accum = momentum * accum + grad
step = lr * (grad + momentum * new_accum) if opt._use_nesterov else lr * new_accum
return var.assign_sub(step)
""",
        # the package's NumPy reference, copied: NumPy cannot compute with graph tensors
        "copies_the_package_reference": """
v, a, g = (np.asarray(t, np.float64) for t in (var, accum, grad))
a = momentum * a + g
step = lr * (g + momentum * a) if opt._use_nesterov else lr * a
return aics.group(accum.assign(a), var.assign(v - step))
""",
    },
    "momentum_sparse": {
        # the gradient made dense and handed to the library's dense kernel: every row moves
        "library_call": """
dense = aics.unsorted_segment_sum(grad.values, grad.indices, rows)
return aics.train.MomentumOptimizer._apply_dense(opt, dense, var)
""",
        # made dense and updated with the dense rule: rows without a gradient keep moving
        "densified_not_lazy": """
summed = aics.unsorted_segment_sum(grad.values, grad.indices, rows)
new_accum = accum.assign(momentum * accum + summed)
with aics.control_dependencies([new_accum]):
    step = lr * (summed + momentum * new_accum) if opt._use_nesterov else lr * new_accum
    return var.assign_sub(step)
""",
        # duplicate rows averaged instead of added
        "duplicates_averaged": """
count = aics.unsorted_segment_sum(aics.ones_like(grad.values), grad.indices, rows)
summed = aics.unsorted_segment_sum(grad.values, grad.indices, rows) / aics.maximum(count, 1.0)
hit = aics.reshape(aics.unsorted_segment_sum(aics.ones_like(grad.indices), grad.indices, rows) > 0, [rows, 1])
new_accum = aics.where(hit, momentum * accum + summed, accum)
step = lr * (summed + momentum * new_accum) if opt._use_nesterov else lr * new_accum
a = accum.assign(new_accum)
with aics.control_dependencies([a]):
    return var.assign(aics.where(hit, var - step, var))
""",
        # "rows with a gradient" taken as rows whose summed gradient is non-zero
        "rows_with_nonzero_gradient": """
summed = aics.unsorted_segment_sum(grad.values, grad.indices, rows)
hit = aics.reduce_any(aics.not_equal(summed, 0.0), axis=1, keepdims=True)
new_accum = aics.where(hit, momentum * accum + summed, accum)
step = lr * (summed + momentum * new_accum) if opt._use_nesterov else lr * new_accum
a = accum.assign(new_accum)
with aics.control_dependencies([a]):
    return var.assign(aics.where(hit, var - step, var))
""",
        # the package's NumPy reference, copied: np.add.at on graph tensors
        "copies_the_package_reference": """
summed = np.zeros(var.shape.as_list())
np.add.at(summed, np.asarray(grad.indices), np.asarray(grad.values, np.float64))
return momentum_apply_dense(opt, aics.constant(summed, aics.float32), var)
""",
    },
}

CORRECT_ANSWERS = {
    "stable_xent": {
        # NumPy's own stable log-sum-exp
        "logaddexp_reduce": """
return np.logaddexp.reduce(logits, axis=1) - logits[np.arange(len(labels)), labels]
""",
        # log-softmax first, then the true class's entry
        "log_softmax_then_pick": """
z = logits - logits.max(axis=1, keepdims=True)
log_probs = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
return -log_probs[np.arange(len(labels)), np.asarray(labels)]
""",
        # a Python loop over the classes (a few), vectorised over the samples
        "loop_over_classes": """
m = logits.max(axis=1)
total = np.zeros(len(labels))
for k in range(logits.shape[1]):
    total += np.exp(logits[:, k] - m)
picked = np.take_along_axis(logits, np.asarray(labels)[:, None], axis=1)[:, 0]
return m + np.log(total) - picked
""",
    },
    "momentum_slots": {
        # the slot made with an explicit initial value of zero
        "slot_with_init_zero": """
for v in var_list:
    self._slot_with_init(v, "momentum", self._name, 0.0)
""",
    },
    "momentum_dense": {
        # TF's kernel's own order: var -= grad * lr + accum * momentum * lr
        "tf_kernel_order": """
new_accum = accum.assign(accum * momentum + grad)
with aics.control_dependencies([new_accum]):
    if opt._use_nesterov:
        return var.assign_sub(grad * lr + new_accum * momentum * lr)
    return var.assign_sub(new_accum * lr)
""",
        # the new variable value assigned (not assign_sub), both updates grouped
        "assign_then_group": """
new_accum = momentum * accum + grad
step = lr * (grad + momentum * new_accum) if opt._use_nesterov else lr * new_accum
with aics.control_dependencies([accum.value(), var.value()]):
    return aics.group(accum.assign(new_accum), var.assign(var - step))
""",
    },
    "momentum_sparse": {
        # a 0/1 row mask multiplied in instead of where
        "mask_arithmetic": """
summed = aics.unsorted_segment_sum(grad.values, grad.indices, rows)
count = aics.unsorted_segment_sum(aics.ones_like(grad.values[:, :1]), grad.indices, rows)
hit = aics.minimum(count, 1.0)
new_accum = accum + hit * (momentum * accum + summed - accum)
step = lr * (summed + momentum * new_accum) if opt._use_nesterov else lr * new_accum
a = accum.assign(new_accum)
with aics.control_dependencies([a]):
    return var.assign_sub(hit * step)
""",
    },
}
