"""Plausible wrong answers for notebook 20 (parallelism models: synchronized BatchNorm, parameter
server, the alpha-beta model, GPipe), and different correct ones.

Each wrong answer replaces the release stub of its solution cell and must lose exactly that
exercise's points; each correct one must score full marks.
"""

WRONG_ANSWERS = {
    "sync_bn_moments": {
        # the equal-shard formula of the graph in section 1: every replica weighted the same
        "equal_weights": """
mean = means.mean(axis=0)
variance = (variances + (means - mean) ** 2).mean(axis=0)
return mean, variance
""",
        # the replicas' variances averaged: the spread between their means is lost
        "averages_the_variances": """
weights = (counts / counts.sum())[:, None]
return (weights * means).sum(axis=0), (weights * variances).sum(axis=0)
""",
        # the unbiased (n - 1) variance of the whole batch instead of BatchNorm's biased one
        "unbiased_variance": """
n = counts.sum()
weights = (counts / n)[:, None]
mean = (weights * means).sum(axis=0)
return mean, (weights * (variances + (means - mean) ** 2)).sum(axis=0) * n / (n - 1)
""",
        # the mean of squares minus the square of the *unweighted* mean
        "square_of_unweighted_mean": """
n = counts.sum()
mean = (counts[:, None] * means).sum(axis=0) / n
mean_sq = (counts[:, None] * (variances + means ** 2)).sum(axis=0) / n
return mean, mean_sq - means.mean(axis=0) ** 2
""",
        # the library's moments over the replicas' means (equal weights, no within-replica variance)
        "calls_the_library": """
m, v = aics.nn.moments(aics.constant(means), axes=[0])
return m.numpy(), v.numpy()
""",
        # the package's reference, called
        "calls_the_package_reference": """
from workbook.references.sync_bn import combine_moments
return combine_moments(counts, means, variances)
""",
    },
}

CORRECT_ANSWERS = {
    "sync_bn_moments": {
        # what an allreduce would carry: n, the sum of x and the sum of x**2
        "sums_and_sums_of_squares": """
n = counts.sum()
sum_x = (counts[:, None] * means).sum(axis=0)
sum_x2 = (counts[:, None] * (variances + means ** 2)).sum(axis=0)
mean = sum_x / n
return mean, sum_x2 / n - mean ** 2
""",
        # replicas merged one at a time (Chan et al.'s pairwise update), skipping empty ones
        "pairwise_merge": """
n, mean, m2 = 0.0, np.zeros(means.shape[1]), np.zeros(means.shape[1])
for n_b, mean_b, var_b in zip(counts, means, variances):
    if n_b:
        delta = mean_b - mean
        mean = mean + delta * n_b / (n + n_b)
        m2 = m2 + var_b * n_b + delta ** 2 * n * n_b / (n + n_b)
        n += n_b
return mean, m2 / n
""",
        # float32 arithmetic throughout, float64 at the end
        "float32_then_cast": """
c, m, v = counts.astype(np.float32), means.astype(np.float32), variances.astype(np.float32)
w = (c / c.sum())[:, None]
mean = (w * m).sum(axis=0)
return mean.astype(np.float64), (w * (v + (m - mean) ** 2)).sum(axis=0).astype(np.float64)
""",
    },
}

WRONG_ANSWERS["step_speedup"] = {
    # one pass around the ring instead of two (reduce-scatter and all-gather)
    "half_the_messages": """
allreduce = (p - 1) * alpha + (p - 1) / p * nbytes * beta
return t_compute / (t_compute / p + allreduce)
""",
    # every message carries the whole gradient
    "whole_gradient_per_message": """
allreduce = 2 * (p - 1) * alpha + 2 * (p - 1) * nbytes * beta
return t_compute / (t_compute / p + allreduce)
""",
    # the compute not split across ranks
    "compute_not_divided": """
allreduce = 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes * beta
return t_compute / (t_compute + allreduce)
""",
    # T(p) / T(1): a slowdown
    "upside_down": """
allreduce = 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes * beta
return (t_compute / p + allreduce) / t_compute
""",
    # the shortcut: the library's model
    "calls_the_library": """
return float(comm_model.speedup(t_compute, nbytes, p, alpha, beta))
""",
    # the package's reference
    "copies_the_package_reference": """
from workbook.references.comm import step_speedup
return step_speedup(t_compute, nbytes, p, alpha, beta)
""",
}
CORRECT_ANSWERS["step_speedup"] = {
    # T(1) and T(p) written out, T(1) without communication
    "both_step_times": """
def step_time(ranks):
    return t_compute / ranks + (2 * (ranks - 1) * (alpha + nbytes / ranks * beta) if ranks > 1 else 0.0)
return step_time(1) / step_time(p)
""",
}
