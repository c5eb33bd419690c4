"""The simulated core: NRAM allocation within a budget, DMA between GDRAM and NRAM, on-chip
vector and matrix operations, and the cycles each costs (the cost model is this lab's, chosen so
that moving data costs more than computing on it, as on real accelerators; it models no
particular chip)."""
import contextlib

import numpy as np

NRAM_BYTES = 256 * 1024
ALIGN = 64
# cycles: a DMA transfer costs a fixed start-up plus its bytes at DMA_BYTES_PER_CYCLE; a vector
# operation a start-up plus its elements at VECTOR_LANES per cycle; a matrix product a start-up
# plus its multiply-adds at MACS_PER_CYCLE.
COST = {"dma_startup": 400, "dma_bytes_per_cycle": 16, "vector_startup": 20, "vector_lanes": 64,
        "matmul_startup": 40, "macs_per_cycle": 512}


class MLUError(RuntimeError):
    """A kernel broke a rule of the device (an operand off chip, a shape that does not match)."""


class NRAMOverflow(MLUError):
    """An allocation would exceed the core's on-chip memory."""


class Core:
    """One simulated MLU core: ``nram()`` allocates on chip, ``load``/``store`` are DMA transfers,
    ``add``/``mul``/``relu``/``matmul`` compute on NRAM buffers; ``cycles`` adds up their costs."""

    def __init__(self, nram_bytes=NRAM_BYTES, cost=None):
        self.nram_bytes = int(nram_bytes)
        self.cost = dict(COST, **(cost or {}))
        self._pool = np.zeros(self.nram_bytes, np.uint8)
        self._top = 0
        self.peak_bytes = 0
        self.cycles = 0.0
        self.dma_bytes = 0
        self.dma_transfers = 0
        self.compute_cycles = 0.0

    # -- on-chip memory ------------------------------------------------------------------------
    def nram(self, shape, dtype=np.float32, name="buffer"):
        """An uninitialised NRAM buffer (a NumPy view of the core's on-chip memory)."""
        shape = tuple(int(d) for d in np.atleast_1d(shape))
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        start = -(-self._top // ALIGN) * ALIGN
        if start + nbytes > self.nram_bytes:
            raise NRAMOverflow(f"nram({name!r}, shape {shape}, {dtype}): {nbytes} bytes requested, "
                               f"{self.nram_bytes - start} of the core's {self.nram_bytes} bytes of NRAM free "
                               f"(free buffers with `with core.scope():`, or use smaller tiles)")
        self._top = start + nbytes
        self.peak_bytes = max(self.peak_bytes, self._top)
        return self._pool[start:start + nbytes].view(dtype).reshape(shape)

    @contextlib.contextmanager
    def scope(self):
        """Buffers allocated inside the block are freed at its end (a stack, as BANG's __nram__
        arrays declared in a block)."""
        top = self._top
        try:
            yield self
        finally:
            self._top = top

    def on_chip(self, x):
        return isinstance(x, np.ndarray) and np.shares_memory(x, self._pool)

    def _need_on_chip(self, what, *arrays):
        for x in arrays:
            if not self.on_chip(x):
                raise MLUError(f"{what}: every operand must be an NRAM buffer (core.nram(...)); got a "
                               f"{type(x).__name__} {getattr(x, 'shape', '')} in GDRAM: load it first")

    # -- DMA -------------------------------------------------------------------------------------
    def _dma(self, what, dst, src):
        if np.shape(dst) != np.shape(src):
            raise MLUError(f"{what}: shapes differ, destination {np.shape(dst)} and source {np.shape(src)}")
        np.copyto(dst, src, casting="same_kind")
        nbytes = int(np.asarray(src).nbytes)
        self.dma_bytes += nbytes
        self.dma_transfers += 1
        self.cycles += self.cost["dma_startup"] + nbytes / self.cost["dma_bytes_per_cycle"]

    def load(self, dst, src):
        """GDRAM -> NRAM (``__memcpy(dst, src, GDRAM2NRAM)``)."""
        self._need_on_chip("load (destination)", dst)
        if self.on_chip(src):
            raise MLUError("load: the source is already on chip; load copies from GDRAM")
        self._dma("load", dst, src)

    def store(self, dst, src):
        """NRAM -> GDRAM (``__memcpy(dst, src, NRAM2GDRAM)``)."""
        self._need_on_chip("store (source)", src)
        if self.on_chip(dst):
            raise MLUError("store: the destination is on chip; store copies to GDRAM")
        self._dma("store", dst, src)

    # -- compute on chip -------------------------------------------------------------------------
    def _vector(self, what, out, *args):
        self._need_on_chip(what, out, *args)
        c = self.cost["vector_startup"] + out.size / self.cost["vector_lanes"]
        self.cycles += c
        self.compute_cycles += c

    def add(self, out, a, b):
        self._vector("add", out, a, b)
        np.add(a, b, out=out)

    def mul(self, out, a, b):
        self._vector("mul", out, a, b)
        np.multiply(a, b, out=out)

    def relu(self, out, a):
        self._vector("relu", out, a)
        np.maximum(a, 0, out=out)

    def matmul(self, out, a, b, accumulate=False):
        """out = a @ b (or out += a @ b with ``accumulate``), float32 multiply-adds on chip."""
        self._need_on_chip("matmul", out, a, b)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or out.shape != (a.shape[0], b.shape[1]):
            raise MLUError(f"matmul: shapes out {out.shape}, a {a.shape}, b {b.shape} do not make out = a @ b")
        c = self.cost["matmul_startup"] + a.shape[0] * a.shape[1] * b.shape[1] / self.cost["macs_per_cycle"]
        self.cycles += c
        self.compute_cycles += c
        if accumulate:
            out += a @ b
        else:
            np.matmul(a, b, out=out)

    def stats(self):
        return {"cycles": int(round(self.cycles)), "dma_bytes": self.dma_bytes, "dma_transfers": self.dma_transfers,
                "compute_cycles": int(round(self.compute_cycles)), "peak_nram_bytes": self.peak_bytes}


def matmul_kernel(fn, nram_bytes=NRAM_BYTES, record=None):
    """A MatMul kernel for the kernel registry that runs ``fn(core, a, b, c)`` (a: M x K, b: K x N,
    c: the M x N output, all float32 in GDRAM) on a fresh simulated core; ``record`` (a list) gets
    each run's ``core.stats()``."""
    def kernel(a, b, transpose_a=False, transpose_b=False):
        a = np.ascontiguousarray(a.T if transpose_a else a, np.float32)
        b = np.ascontiguousarray(b.T if transpose_b else b, np.float32)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
            raise MLUError(f"MatMul on the MLU: a {a.shape} and b {b.shape} are not an M x K and a K x N matrix")
        c = np.zeros((a.shape[0], b.shape[1]), np.float32)
        core = Core(nram_bytes)
        fn(core, a, b, c)
        if record is not None:
            record.append(core.stats())
        return c
    kernel.__name__ = getattr(fn, "__name__", "mlu_matmul")
    kernel.core_kernel = fn          # (not __wrapped__: the registry reads the signature for attrs)
    return kernel
