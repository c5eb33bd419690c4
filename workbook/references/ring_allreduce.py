"""Reference states of ring-allreduce, for notebook 19's lab (section 6): the buffers of every
rank after every step of reduce-scatter and of allgather, and a reference per-rank program.

``p`` ranks on a ring split their arrays into ``p`` chunks (``np.array_split``).

- reduce-scatter, step ``s``: rank ``r`` receives chunk ``(r - s - 1) mod p`` from its left
  neighbour ``(r - 1) mod p`` and adds it into its own copy. Followed backwards, chunk ``c``
  leaves rank ``c`` at step 0 and reaches rank ``c + k`` (mod p) at step ``k - 1``, each rank adding
  its own input on the way. ``reduce_scatter_state(arrays, steps)`` gives every rank's buffer
  after the first ``steps`` steps straight from that description (no step is simulated): rank
  ``r``'s chunk ``c``, with ``k = (r - c) mod p``, is the sum of the inputs of ranks
  ``r, r-1, ..., r-k`` once ``k <= steps`` (it has arrived), else still rank ``r``'s own input.
  After ``p - 1`` steps rank ``r`` holds the complete sum of chunk ``(r + 1) mod p``.
- allgather, step ``s``: rank ``r`` overwrites chunk ``(r - s) mod p`` with its left neighbour's
  copy. ``allgather_state(arrays, steps)``: rank ``r``'s chunk ``c`` is complete once
  ``j = (r + 1 - c) mod p <= steps`` (``j = 0``: the chunk it completed itself), else as
  reduce-scatter left it.
"""
import numpy as np

PHASES = ("reduce-scatter", "allgather")


def chunk_bounds(n, p):
    """[(start, stop)] of the ``p`` chunks of an ``n``-element array, as ``np.array_split``."""
    sizes = [n // p + (1 if i < n % p else 0) for i in range(p)]
    stops = np.cumsum(sizes).tolist()
    return [(stop - size, stop) for stop, size in zip(stops, sizes)]


def _inputs(arrays):
    return [np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays]


def reduce_scatter_state(arrays, steps):
    """Every rank's buffer (float64 copies) after ``steps`` reduce-scatter steps on the per-rank
    1-D ``arrays``."""
    p = len(arrays)
    inputs = _inputs(arrays)
    out = [a.copy() for a in inputs]
    for r in range(p):
        for c, (lo, hi) in enumerate(chunk_bounds(inputs[0].size, p)):
            k = (r - c) % p
            if 1 <= k <= steps:
                out[r][lo:hi] = sum(inputs[(r - j) % p][lo:hi] for j in range(k + 1))
    return out


def allgather_state(arrays, steps):
    """Every rank's buffer after the whole reduce-scatter and ``steps`` allgather steps."""
    p = len(arrays)
    scattered = reduce_scatter_state(arrays, p - 1)
    out = [b.copy() for b in scattered]
    for r in range(p):
        for c, (lo, hi) in enumerate(chunk_bounds(out[0].size, p)):
            if (r + 1 - c) % p <= steps:
                out[r][lo:hi] = scattered[(c - 1) % p][lo:hi]    # rank c-1 completed chunk c
    return out


def state(phase, arrays, steps):
    """The buffers after ``steps`` steps of ``phase`` (allgather: after all of reduce-scatter)."""
    return reduce_scatter_state(arrays, steps) if phase == PHASES[0] else allgather_state(arrays, steps)


def received_chunk(phase, p, rank, step):
    """The chunk ``rank`` receives (from its left neighbour) at ``step`` of ``phase``."""
    return (rank - step - 1) % p if phase == PHASES[0] else (rank - step) % p


def sent_chunk(phase, p, rank, step):
    """The chunk ``rank`` sends (to its right neighbour) at ``step`` of ``phase``."""
    return received_chunk(phase, p, (rank + 1) % p, step)


def chunk_of(index, n, p):
    """The chunk that element ``index`` of an ``n``-element buffer belongs to."""
    return next(c for c, (lo, hi) in enumerate(chunk_bounds(n, p)) if lo <= index < hi)


def ring_allreduce_rank(comm, x):
    """One rank's ring-allreduce over ``comm`` with point-to-point ``Sendrecv`` only: the sum of
    every rank's ``x`` (same shape everywhere), as a new array of ``x``'s dtype."""
    p, r = comm.Get_size(), comm.Get_rank()
    buf = np.array(x, copy=True).reshape(-1)
    bounds = chunk_bounds(buf.size, p)
    incoming = np.empty(max([hi - lo for lo, hi in bounds] + [0]), dtype=buf.dtype)
    for phase in PHASES:
        for step in range(p - 1):
            slo, shi = bounds[sent_chunk(phase, p, r, step)]
            rlo, rhi = bounds[received_chunk(phase, p, r, step)]
            comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
            if phase == PHASES[0]:
                buf[rlo:rhi] += incoming[:rhi - rlo]
            else:
                buf[rlo:rhi] = incoming[:rhi - rlo]
    return buf.reshape(np.shape(x))
