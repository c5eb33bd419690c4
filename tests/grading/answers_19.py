"""Plausible wrong answers for notebook 19 (distributed training), and other correct ones, keyed by grade_id.

Each replaces the body of an exercise of the ring-allreduce lab after the scaffold's lines
(``my_reduce_scatter_step`` and ``my_allgather_step``: ``p``, ``bounds``; ``my_ring_allreduce``:
``p``, ``r``, ``buf`` (a copy of x), ``bounds``, and a final ``return buf.reshape(...)``); a wrong
one must lose the exercise's points inside its locked test cell, a correct one must score them."""

WRONG_ANSWERS = {
    "my_reduce_scatter_step": {
        # the chunk the rank *sends* at this step, not the one it receives
        "chunk_index_off_by_one": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step) % p]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] += data
""",
        # the ring turned the wrong way: data taken from the right-hand neighbour
        "from_right_neighbour": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    messages.append((r, lo, hi, buffers[(r + 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] += data
""",
        # equal chunks of n // p: the remainder of a size not divisible by p is never reduced
        "equal_chunks_drop_remainder": """
size = buffers[0].size // p
for r in range(p):
    c = (r - step - 1) % p
    lo, hi = c * size, (c + 1) * size
    buffers[r][lo:hi] += buffers[(r - 1) % p][lo:hi]
""",
        # overwrite instead of add: that is the allgather step
        "overwrite_instead_of_add": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] = data
""",
        # new arrays instead of updating the rank's buffer in place
        "not_in_place": """
new = [b.copy() for b in buffers]
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    new[r][lo:hi] += buffers[(r - 1) % p][lo:hi]
buffers = new
""",
        # the list's items replaced by new arrays: the caller's list changes, the ranks' arrays do not
        "replaces_the_arrays": """
new = [b.copy() for b in buffers]
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    new[r][lo:hi] += buffers[(r - 1) % p][lo:hi]
buffers[:] = new
""",
        # the library's own implementation
        "calls_library": """
ring.reduce_scatter_step(buffers, step)
""",
        # the whole phase at step 0, from the definition, and nothing later: the end state is right
        "whole_phase_at_step_0": """
if step == 0:
    inputs = [b.copy() for b in buffers]
    for r in range(p):
        for c, (lo, hi) in enumerate(bounds):
            hops = (r - c) % p
            buffers[r][lo:hi] = sum(inputs[(r - j) % p][lo:hi] for j in range(hops + 1))
""",
        # the package's reference states, called (and the whole phase at step 0)
        "package_reference": """
from workbook.references.ring_allreduce import reduce_scatter_state
if step == 0:
    for b, done in zip(buffers, reduce_scatter_state(buffers, p - 1)):
        b[:] = done
""",
        # a full allreduce at every step: every chunk summed over all ranks
        "allreduce_each_step": """
total = np.sum(buffers, axis=0)
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    buffers[r][lo:hi] = total[lo:hi]
""",
        # the chunk index counted the other way round the ring: right for p = 2 only
        "chunk_index_wrong_direction": """
messages = []
for r in range(p):
    lo, hi = bounds[(r + step + 1) % p]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] += data
""",
    },
    "my_allgather_step": {
        # adds the complete chunk instead of overwriting: ranks counted twice
        "adds_instead_of_overwrite": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step) % p]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] += data
""",
        # reduce-scatter's chunk index: overwrites a chunk the left neighbour has not completed
        "reduce_scatter_index": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] = data
""",
        # the ring turned the wrong way: data taken from the right-hand neighbour
        "from_right_neighbour": """
messages = []
for r in range(p):
    lo, hi = bounds[(r - step) % p]
    messages.append((r, lo, hi, buffers[(r + 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] = data
""",
        # every complete chunk copied to every rank at step 0, nothing later: the end state is right
        "whole_phase_at_step_0": """
if step == 0:
    complete = [buffers[(c - 1) % p][lo:hi].copy() for c, (lo, hi) in enumerate(bounds)]
    for r in range(p):
        for c, (lo, hi) in enumerate(bounds):
            buffers[r][lo:hi] = complete[c]
""",
        # equal chunks of n // p: the remainder is never gathered
        "equal_chunks_drop_remainder": """
size = buffers[0].size // p
messages = []
for r in range(p):
    c = (r - step) % p
    messages.append((r, c * size, (c + 1) * size, buffers[(r - 1) % p][c * size:(c + 1) * size].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] = data
""",
        # new arrays instead of updating the ranks' buffers
        "not_in_place": """
new = [b.copy() for b in buffers]
for r in range(p):
    lo, hi = bounds[(r - step) % p]
    new[r][lo:hi] = buffers[(r - 1) % p][lo:hi]
buffers = new
""",
        # the library's own implementation
        "calls_library": """
ring.allgather_step(buffers, step)
""",
        # the package reference's chunk rule instead of one's own
        "package_reference": """
from workbook.references.ring_allreduce import received_chunk
messages = []
for r in range(p):
    lo, hi = bounds[received_chunk("allgather", p, r, step)]
    messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
for r, lo, hi, data in messages:
    buffers[r][lo:hi] = data
""",
    },
    "my_ring_allreduce": {
        # the library's own ring (aicslib.distribute.ring_allreduce)
        "calls_library": """
return ring.ring_allreduce(x, comm=comm)
""",
        # the package's reference program
        "package_reference": """
from workbook.references.ring_allreduce import ring_allreduce_rank
return ring_allreduce_rank(comm, x)
""",
        # MPI's own collective: not a ring written with messages
        "mpi_allreduce": """
comm.Allreduce(np.array(x, copy=True), buf)
""",
        # the whole array passed round the ring p-1 times: the right sum, p times the traffic
        "whole_array_round_the_ring": """
passing = buf.copy()
incoming = np.empty_like(buf)
for step in range(p - 1):
    comm.Sendrecv(passing, dest=(r + 1) % p, recvbuf=incoming, source=(r - 1) % p)
    buf += incoming
    passing = incoming.copy()
""",
        # reduce-scatter only: each rank holds one complete chunk and stops
        "reduce_scatter_only": """
incoming = np.empty_like(buf)
for step in range(p - 1):
    slo, shi = bounds[(r - step) % p]
    rlo, rhi = bounds[(r - step - 1) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
    buf[rlo:rhi] += incoming[:rhi - rlo]
""",
        # reduce-scatter receives straight into the buffer: that overwrites, it does not add
        "receives_into_buffer": """
for step in range(p - 1):
    slo, shi = bounds[(r - step) % p]
    rlo, rhi = bounds[(r - step - 1) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=buf[rlo:rhi], source=(r - 1) % p)
for step in range(p - 1):
    slo, shi = bounds[(r + 1 - step) % p]
    rlo, rhi = bounds[(r - step) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=buf[rlo:rhi], source=(r - 1) % p)
""",
        # allgather sends the chunk it is about to receive, not the complete one it holds
        "allgather_sends_wrong_chunk": """
incoming = np.empty_like(buf)
for step in range(p - 1):
    slo, shi = bounds[(r - step) % p]
    rlo, rhi = bounds[(r - step - 1) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
    buf[rlo:rhi] += incoming[:rhi - rlo]
for step in range(p - 1):
    slo, shi = bounds[(r - step) % p]
    rlo, rhi = bounds[(r - step) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
    buf[rlo:rhi] = incoming[:rhi - rlo]
""",
        # no copy of x: the caller's array becomes the sum
        "sums_into_the_callers_x": """
buf = x.reshape(-1)
incoming = np.empty_like(buf)
for step in range(p - 1):
    slo, shi = bounds[(r - step) % p]
    rlo, rhi = bounds[(r - step - 1) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
    buf[rlo:rhi] += incoming[:rhi - rlo]
for step in range(p - 1):
    slo, shi = bounds[(r + 1 - step) % p]
    rlo, rhi = bounds[(r - step) % p]
    comm.Sendrecv(buf[slo:shi].copy(), dest=(r + 1) % p, recvbuf=incoming[:rhi - rlo], source=(r - 1) % p)
    buf[rlo:rhi] = incoming[:rhi - rlo]
""",
    },
}

CORRECT_ANSWERS = {
    "my_reduce_scatter_step": {
        # no copies: at a step, rank r changes chunk (r-step-1) and its right neighbour reads chunk (r-step),
        # so updating in ring order reads nothing written in the same step
        "no_copies_needed": """
for r in range(p):
    lo, hi = bounds[(r - step - 1) % p]
    buffers[r][lo:hi] += buffers[(r - 1) % p][lo:hi]
""",
        # np.array_split gives views into each buffer: add chunk views
        "array_split_views": """
parts = [np.array_split(b, p) for b in buffers]
incoming = [parts[(r - 1) % p][(r - step - 1) % p].copy() for r in range(p)]
for r in range(p):
    parts[r][(r - step - 1) % p] += incoming[r]
""",
        # a snapshot of every buffer first, then the additions from the snapshot, ranks in reverse order
        "snapshot_then_add": """
snapshot = [b.copy() for b in buffers]
for r in reversed(range(p)):
    lo, hi = bounds[(r - step - 1) % p]
    np.add(buffers[r][lo:hi], snapshot[(r - 1) % p][lo:hi], out=buffers[r][lo:hi])
""",
    },
    "my_allgather_step": {
        # no copies: rank r writes chunk (r-step), its right neighbour reads chunk (r+1-step)
        "no_copies_needed": """
for r in range(p):
    lo, hi = bounds[(r - step) % p]
    buffers[r][lo:hi] = buffers[(r - 1) % p][lo:hi]
""",
        # np.array_split views
        "array_split_views": """
parts = [np.array_split(b, p) for b in buffers]
incoming = [parts[(r - 1) % p][(r - step) % p].copy() for r in range(p)]
for r in range(p):
    parts[r][(r - step) % p][...] = incoming[r]
""",
    },
    "my_ring_allreduce": {
        # chunks as np.array_split views, Send then Recv, float64 accumulation cast back
        "array_split_send_recv": """
acc = buf.astype(np.float64)
parts = np.array_split(acc, p)
for phase in ("reduce-scatter", "allgather"):
    for step in range(p - 1):
        send = (r - step) % p if phase == "reduce-scatter" else (r + 1 - step) % p
        got = (r - step - 1) % p if phase == "reduce-scatter" else (r - step) % p
        incoming = np.empty_like(parts[got])
        comm.Send(parts[send].copy(), dest=(r + 1) % p)
        comm.Recv(incoming, source=(r - 1) % p)
        if phase == "reduce-scatter":
            parts[got] += incoming
        else:
            parts[got][...] = incoming
buf = acc.astype(buf.dtype)
""",
    },
}
