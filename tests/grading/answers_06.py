"""Plausible wrong answers for notebook 06 (distributed training), and other correct ones, keyed by grade_id.

Each replaces the body of ``my_reduce_scatter_step`` after the scaffold's ``p = ...`` and
``bounds = ...`` lines; a wrong one must lose the exercise's 3 points inside its locked test cell,
a correct one must score them."""

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
}
