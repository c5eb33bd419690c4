"""The reference behind 20-parallelism-models' synchronized-BatchNorm exercise, against NumPy's
mean and variance of the shards concatenated (the definition)."""
import numpy as np
import pytest

from workbook.references.sync_bn import combine_moments


@pytest.mark.parametrize("sizes", [[5], [3, 9], [0, 7, 3], [2, 3, 5, 7, 11], [1, 1, 30]])
def test_combine_moments_matches_the_whole_batch(sizes):
    g = np.random.default_rng(len(sizes))
    shards = [g.standard_normal((n, 4)) * g.uniform(0.5, 3.0, 4) + g.uniform(-4.0, 4.0, 4) for n in sizes]
    means = [s.mean(axis=0) if len(s) else np.zeros(4) for s in shards]
    variances = [s.var(axis=0) if len(s) else np.zeros(4) for s in shards]
    mean, var = combine_moments(sizes, means, variances)
    whole = np.concatenate(shards)
    np.testing.assert_allclose(mean, whole.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, whole.var(axis=0), rtol=1e-12, atol=1e-12)


def test_combine_moments_refuses_an_empty_batch():
    with pytest.raises(ValueError, match="every replica is empty"):
        combine_moments([0, 0], np.zeros((2, 3)), np.zeros((2, 3)))
