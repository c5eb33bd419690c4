"""Plausible wrong answers for notebook 02 (training-workflow).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "stable_xent": {
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
    },
}
