"""Ring-allreduce, written out for reading: reduce-scatter, then allgather.

``p`` ranks sit on a ring; each splits its array into ``p`` chunks (``np.array_split``,
so sizes need not divide by ``p``). Every step, each rank sends one chunk to its
right neighbour and receives one from its left:

1. **reduce-scatter**, ``p - 1`` steps: at step ``s`` rank ``r`` sends chunk
   ``(r - s) mod p`` and adds the chunk ``(r - s - 1) mod p`` it receives into its
   own. Afterwards rank ``r`` holds the complete sum of chunk ``(r + 1) mod p``.
2. **allgather**, ``p - 1`` steps: at step ``s`` rank ``r`` sends chunk
   ``(r + 1 - s) mod p`` (complete) and overwrites chunk ``(r - s) mod p`` with
   the one it receives. Afterwards every rank holds every complete chunk.

Each rank sends ``2 (p - 1)`` messages of ``n / p`` elements: ``2 (p-1)/p * n`` in all,
almost independent of ``p``; that is why data-parallel training scales with
it (the alpha-beta model in ``comm_model.py``).

``ring_allreduce`` runs this over MPI point-to-point messages (Isend/Irecv);
``simulate_ring_allreduce`` runs the same steps on a list of arrays in one
process, step by step, for notebook 19 and its lab.
"""
import numpy as np

from .collective_ops import wait
from .mpi import world


def chunk_bounds(n, p):
    """[(start, stop)] of the ``p`` chunks of an ``n``-element array, as ``np.array_split``."""
    q, extra = divmod(n, p)
    bounds, start = [], 0
    for i in range(p):
        stop = start + q + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def reduce_scatter_step(buffers, step):
    """One reduce-scatter step on ``p`` flat buffers (one per simulated rank), in place.

    Every rank ``r`` receives chunk ``(r - step - 1) mod p`` from its left neighbour
    and adds it to its own copy of that chunk. All messages of a step are taken
    before any is added (they travel at the same time)."""
    p = len(buffers)
    bounds = chunk_bounds(buffers[0].size, p)
    messages = []
    for r in range(p):
        left = (r - 1) % p
        c = (r - step - 1) % p
        lo, hi = bounds[c]
        messages.append((r, lo, hi, buffers[left][lo:hi].copy()))
    for r, lo, hi, data in messages:
        buffers[r][lo:hi] += data


def allgather_step(buffers, step):
    """One allgather step: rank ``r`` overwrites chunk ``(r - step) mod p`` with its left
    neighbour's (complete) copy."""
    p = len(buffers)
    bounds = chunk_bounds(buffers[0].size, p)
    messages = []
    for r in range(p):
        left = (r - 1) % p
        c = (r - step) % p
        lo, hi = bounds[c]
        messages.append((r, lo, hi, buffers[left][lo:hi].copy()))
    for r, lo, hi, data in messages:
        buffers[r][lo:hi] = data


def simulate_ring_allreduce(arrays, reduce_scatter=None, history=None, allgather=None):
    """Ring-allreduce of one array per simulated rank; returns the per-rank results.

    ``reduce_scatter`` and ``allgather`` replace ``reduce_scatter_step`` and ``allgather_step``
    (the notebook's lab);
    ``history``, a list, receives ``(phase, step, [buffer copies])`` after every step."""
    reduce_scatter = reduce_scatter or reduce_scatter_step
    allgather = allgather or allgather_step
    shape = np.shape(arrays[0])
    buffers = [np.array(a, dtype=np.result_type(*arrays), copy=True).reshape(-1) for a in arrays]
    p = len(buffers)
    for step in range(p - 1):
        reduce_scatter(buffers, step)
        if history is not None:
            history.append(("reduce-scatter", step, [b.copy() for b in buffers]))
    for step in range(p - 1):
        allgather(buffers, step)
        if history is not None:
            history.append(("allgather", step, [b.copy() for b in buffers]))
    return [b.reshape(shape) for b in buffers]


def ring_allreduce(array, average=False, comm=None, timeout=None):
    """The sum (or mean) of ``array`` over all MPI ranks, by the ring algorithm above."""
    comm = comm or world()
    p, r = comm.Get_size(), comm.Get_rank()
    src = np.asarray(array)
    buf = np.array(src, copy=True).reshape(-1)
    if p > 1:
        bounds = chunk_bounds(buf.size, p)
        right, left = (r + 1) % p, (r - 1) % p
        recv = np.empty(max(hi - lo for lo, hi in bounds), dtype=buf.dtype)
        for phase in ("reduce-scatter", "allgather"):
            for step in range(p - 1):
                if phase == "reduce-scatter":
                    send_c, recv_c = (r - step) % p, (r - step - 1) % p
                else:
                    send_c, recv_c = (r + 1 - step) % p, (r - step) % p
                slo, shi = bounds[send_c]
                rlo, rhi = bounds[recv_c]
                incoming = recv[:rhi - rlo]
                rreq = comm.Irecv(incoming, source=left, tag=step)
                sreq = comm.Isend(np.ascontiguousarray(buf[slo:shi]), dest=right, tag=step)
                what = f"ring-allreduce {phase} step {step} (receiving from rank {left})"
                wait(rreq, what, timeout, comm)
                wait(sreq, what, timeout, comm)
                if phase == "reduce-scatter":
                    buf[rlo:rhi] += incoming
                else:
                    buf[rlo:rhi] = incoming
    if average:
        buf = buf / p
    return buf.reshape(src.shape)
