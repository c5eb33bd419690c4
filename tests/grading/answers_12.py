"""Wrong answers for notebook 12 (sparse training): the exercise ``magnitude_mask``."""

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

