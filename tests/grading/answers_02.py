"""Plausible wrong answers for notebook 02 (training-workflow), and different correct ones.

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
}
