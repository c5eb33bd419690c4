"""``_FusedElementwise`` in one pass over memory: the speed layer's kernel.

Unfused, each op of ``relu(x * a + b)`` is a kernel that reads whole arrays
from memory and writes a whole new one; for arrays bigger than the caches the
time is the memory traffic, not the arithmetic. This kernel cuts the output into
tiles of ``TILE_ELEMENTS`` (about a MiB: they stay in the caches), and for
each tile runs the whole program on the matching slices of the inputs, with
intermediates in a few reused tile-sized buffers (NumPy's ``out=``), writing
only the final result to memory. Every instruction is the same NumPy call as
the unfused op's kernel (the reference, ``aicslib/kernels/cwise_ops_fused.py``,
holds the program's parser and instructions), so results are bit-identical.

Tiling follows broadcasting: the output's leading axes are collapsed into rows
as long as every input either spans them fully or is broadcast along all of
them (a bias of shape ``(C,)``, a scalar); rows are then split into tiles. An
input mixing the two (shape ``(N, 1, W)`` against ``(N, H, W)``) makes the
kernel evaluate the program once on whole arrays, still with in-place buffers.
"""
import itertools
import math
import os

import numpy as np

from ..framework.allocator import forwarded
from ..framework.dtypes import float32, float64
from ..kernels import cwise_ops_fused as reference
from ..kernels.cwise_ops_fused import output_shape, run_small
from . import fused_output_stage, work_sharder
from .registration import register_fast_kernel

#: Elements per tile: 256K float32 = 1 MiB per buffer. Smaller tiles keep the buffers in L2,
#: but each tile costs a few NumPy calls, and two threads then spend their time handing the
#: GIL back and forth between those calls (benchmarks/README.md, "Fused elementwise chains").
TILE_ELEMENTS = 1 << 18
#: A thread gets at least this many tiles (fewer are not worth a hand-off to the pool).
MIN_TILES_PER_THREAD = 4
#: Largest tile Relu compares with a cached array of zeros (``fused_output_stage.relu``);
#: bigger arrays compare with a scalar.
MAX_ZEROS_ELEMENTS = 1 << 18


def _relu(x, out=None):
    return fused_output_stage.relu(x, out, MAX_ZEROS_ELEMENTS)


#: The reference's instructions, Relu through the faster ``relu`` (the same bits).
UNARY = {**reference.UNARY, "Relu": _relu}

_PROGRAMS = {}   # ops tuple -> parsed program (a graph node calls its kernel with the same ops every run)


def compiled(ops):
    key = tuple(ops)
    program = _PROGRAMS.get(key)
    if program is None:
        program = _PROGRAMS[key] = reference.parse_program(ops, UNARY)
    return program


def _last_uses(program):
    last = {}
    for k, (_, refs) in enumerate(program):
        for kind, idx in refs:
            if kind == "t":
                last[idx] = k
    return last


def schedule(program, inputs, out_shape, pool):
    """The instructions for inputs of these shapes, with each intermediate's buffer chosen once.

    Returns ``[(fn, operands, dest)]``: an operand is ``(True, k)`` for input k
    or ``(False, view)`` for an earlier result's buffer; ``dest`` is a view into
    ``pool`` (flat buffers, appended to as needed; an intermediate takes a free
    one and gives it back after its last use, so a chain of any length needs a
    couple of buffers), or None for the last instruction, which writes the
    output. Every full tile of a call has the same shapes, so the schedule is
    worked out once per call, not per tile.
    """
    last = _last_uses(program)
    size = math.prod(out_shape)
    values, free, used = {}, [], {}
    free.extend(range(len(pool)))
    steps = []
    n = len(program)
    for k, (fn, refs) in enumerate(program):
        operands = tuple((True, i) if kind == "i" else (False, values[i]) for kind, i in refs)
        if k == n - 1:
            dest = None
        else:
            shape = np.broadcast_shapes(*[inputs[i].shape if kind == "i" else values[i].shape
                                          for kind, i in refs])
            if not free:
                pool.append(np.empty(size, dtype=pool[0].dtype if pool else np.float32))
                free.append(len(pool) - 1)
            b = free.pop()
            dest = pool[b][:math.prod(shape)].reshape(shape)
            used[k] = b
            values[k] = dest
        steps.append((fn, operands, dest))
        for i in {i for kind, i in refs if kind == "t"}:  # an operand may appear twice (Mul t0 t0)
            if last.get(i) == k:
                values.pop(i)
                free.append(used.pop(i))
    return steps


def run_schedule(steps, inputs, out):
    for fn, operands, dest in steps:
        fn(*[inputs[x] if is_input else x for is_input, x in operands], out=out if dest is None else dest)
    return out


def run_program(program, inputs, out, pool):
    """Evaluates ``program`` on ``inputs`` (already sliced to one tile) into ``out``."""
    if not pool:
        pool.append(np.empty(out.size, dtype=out.dtype))
    return run_schedule(schedule(program, inputs, out.shape, pool), inputs, out)


def _cores_busy():
    """Whether other processes already keep every core busy (1-minute load average).

    Then a second thread does not add a core: it mostly waits, and the thread holding the
    GIL between two NumPy calls may be descheduled for a whole time slice while the other
    waits for it (benchmarks/README.md, "Fused elementwise chains")."""
    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        return False


def _row_split(shapes, out_shape):
    """How many leading output axes can be tiled as rows, and per input: sliced or whole."""
    r = len(out_shape)
    padded = [(1,) * (r - len(s)) + tuple(s) for s in shapes]
    best = 0
    for lead in range(1, r + 1):
        ok = all(all(p[a] == out_shape[a] for a in range(lead)) or all(p[a] == 1 for a in range(lead))
                 for p in padded)
        if not ok:
            break
        best = lead
    sliced = [all(p[a] == out_shape[a] for a in range(best)) and best > 0 and
              any(out_shape[a] != 1 for a in range(best)) for p in padded]
    return best, padded, sliced


@register_fast_kernel("_FusedElementwise", {"T": [float32, float64]}, forward_inputs=(0, 1))
def fused_elementwise_kernel(args, ops, T, out=None):
    dtype = np.dtype(T.as_numpy_dtype)
    args = [np.asarray(a) for a in args]
    out_shape = output_shape(args)
    program = compiled(ops)
    out = forwarded(out, out_shape, dtype)   # an input's buffer the executor forwarded, or None
    if math.prod(out_shape) <= TILE_ELEMENTS:
        writes = None if out is None else reference.writes_into(ops, program, reference.position(args, out))
        r = np.asarray(run_small(program, args, out, writes))
        return r if r.shape == out_shape else np.broadcast_to(r, out_shape).copy()
    # Tiles: every instruction but the last writes into scratch buffers, the last into the output,
    # so a forwarded input's tile is read before it is overwritten.
    if out is None:
        out = np.empty(out_shape, dtype=dtype)
    lead, padded, sliced = _row_split([a.shape for a in args], out_shape)
    rows = int(np.prod(out_shape[:lead])) if lead else 1
    row_size = int(np.prod(out_shape[lead:])) if out.ndim else 1
    if lead == 0 or rows == 1:
        return run_program(program, args, out, [])
    rest = out_shape[lead:]
    views = [a.reshape((rows,) + tuple(p[lead:])) if s else a.reshape((1,) + tuple(p[lead:]))
             for a, p, s in zip(args, padded, sliced)]
    out2 = out.reshape((rows,) + tuple(rest))
    step = max(1, TILE_ELEMENTS // max(row_size, 1))
    tiles = [(r0, min(rows, r0 + step)) for r0 in range(0, rows, step)]
    # Tiles are independent, so the calling thread and the work sharder's pool threads take
    # them one at a time from a shared counter (NumPy releases the GIL inside its loops), as
    # TF's Eigen kernels split an elementwise expression over the intra-op thread pool. Taking
    # tiles one by one, rather than a fixed half each, keeps a descheduled thread on a busy
    # machine from holding up the call: the others take its share.
    claim = itertools.count()

    def run_tiles(_=None):
        pool = [work_sharder.scratch(("fused_elementwise", b), (step * row_size,), dtype) for b in range(2)]
        steps = None
        for t in iter(claim.__next__, None):
            if t >= len(tiles):
                return
            r0, r1 = tiles[t]
            tile = [v[r0:r1] if s else v for v, s in zip(views, sliced)]
            if r1 - r0 == step:
                if steps is None:
                    steps = schedule(program, tile, out2[r0:r1].shape, pool)
                run_schedule(steps, tile, out2[r0:r1])
            else:  # the last, shorter tile
                run_schedule(schedule(program, tile, out2[r0:r1].shape, pool), tile, out2[r0:r1])

    helpers = min(work_sharder.NUM_THREADS - 1, len(tiles) // MIN_TILES_PER_THREAD - 1)
    if helpers <= 0 or work_sharder.in_worker() or _cores_busy():
        run_tiles()
        return out
    futures = [work_sharder.executor().submit(run_tiles) for _ in range(helpers)]
    run_tiles()
    for f in futures:
        f.result()
    return out
