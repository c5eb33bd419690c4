"""Reference states of ring-allreduce's reduce-scatter phase, for notebook 06's exercise
``my_reduce_scatter_step`` (section 8).

``p`` ranks on a ring split their arrays into ``p`` chunks (``np.array_split``). At step ``s``
rank ``r`` receives chunk ``(r - s - 1) mod p`` from its left neighbour ``(r - 1) mod p`` and
adds it into its own copy. Followed backwards, chunk ``c`` leaves rank ``c`` at step 0 and
reaches rank ``c + k`` (mod p) at step ``k - 1``, each rank adding its own input on the way.

``reduce_scatter_state(arrays, steps)`` gives every rank's buffer after the first ``steps``
steps straight from that description (no step is simulated): rank ``r``'s chunk ``c``, with
``k = (r - c) mod p``, is the sum of the inputs of ranks ``r, r-1, ..., r-k`` once ``k <= steps``
(it has arrived), else still rank ``r``'s own input. After ``p - 1`` steps rank ``r`` holds the
complete sum of chunk ``(r + 1) mod p``.
"""
import numpy as np


def chunk_bounds(n, p):
    """[(start, stop)] of the ``p`` chunks of an ``n``-element array, as ``np.array_split``."""
    sizes = [n // p + (1 if i < n % p else 0) for i in range(p)]
    stops = np.cumsum(sizes).tolist()
    return [(stop - size, stop) for stop, size in zip(stops, sizes)]


def reduce_scatter_state(arrays, steps):
    """Every rank's buffer (float64 copies) after ``steps`` reduce-scatter steps on the per-rank
    1-D ``arrays``."""
    p = len(arrays)
    inputs = [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]
    out = [a.copy() for a in inputs]
    for r in range(p):
        for c, (lo, hi) in enumerate(chunk_bounds(inputs[0].size, p)):
            k = (r - c) % p
            if 1 <= k <= steps:
                out[r][lo:hi] = sum(inputs[(r - j) % p][lo:hi] for j in range(k + 1))
    return out


def chunk_of(index, n, p):
    """The chunk that element ``index`` of an ``n``-element buffer belongs to."""
    return next(c for c, (lo, hi) in enumerate(chunk_bounds(n, p)) if lo <= index < hi)
