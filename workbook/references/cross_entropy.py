"""Reference for notebook 03's exercise ``stable_xent`` (section 3): softmax cross-entropy.

For one sample with logits ``z`` and true class ``y`` the loss is, by definition,

    L = -log(exp(z_y) / sum_j exp(z_j)) = log(sum_j exp(z_j)) - z_y.

``softmax_xent_exact`` evaluates exactly that formula, one sample at a time, in 50-digit
decimal arithmetic, where ``exp(1000)`` is an ordinary number (about 2e434) instead of an
overflow: no max-subtraction trick, nothing clipped. Slow and exact, it is what the locked test
compares a NumPy answer with; it is not an answer itself (the exercise asks for vectorised NumPy
in float64, and ``grading.no_library_calls`` rejects a call to it).
"""
import decimal

import numpy as np


def softmax_xent_exact(logits, labels, digits=50):
    """Per-sample softmax cross-entropy of ``logits`` [N, K] with integer ``labels`` [N], from the
    definition in ``digits``-digit decimal arithmetic; float64 array of shape [N]."""
    logits = np.asarray(logits, np.float64)
    labels = np.asarray(labels)
    losses = []
    with decimal.localcontext() as ctx:
        ctx.prec = digits
        for row, label in zip(logits, labels):
            total = sum(decimal.Decimal(float(v)).exp() for v in row)
            losses.append(float(total.ln() - decimal.Decimal(float(row[int(label)]))))
    return np.array(losses, np.float64)
