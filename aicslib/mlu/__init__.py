"""A simulated MLU core for writing device kernels the way the course's BANG C examples do.

A kernel sees the device's large, slow global memory (GDRAM: the op's inputs and outputs, here
NumPy arrays) and a small on-chip memory (NRAM, a fixed budget). It computes only on NRAM
buffers, so it moves data in explicit DMA transfers, tile by tile. The simulator checks the
rules (operands on chip, the budget) and counts cycles with a simple cost model
(:data:`COST`), so two tilings of one kernel can be compared::

    from aicslib import mlu

    def add_kernel(core, x, y, out):           # x, y, out: 1-D float32 arrays in GDRAM
        n = 4096
        a, b = core.nram((n,)), core.nram((n,))
        for i in range(0, x.size, n):
            m = min(n, x.size - i)
            core.load(a[:m], x[i:i + m]); core.load(b[:m], y[i:i + m])
            core.add(a[:m], a[:m], b[:m])
            core.store(out[i:i + m], a[:m])

    core = mlu.Core()
    add_kernel(core, x, y, out); print(core.stats())

``mlu.matmul_kernel(fn)`` turns ``fn(core, a, b, c)`` into a MatMul kernel for the MLU device
(``aics.experimental.use_kernel("MatMul", ..., device="MLU")``).
"""
from .simulator import COST, NRAM_BYTES, Core, MLUError, NRAMOverflow, matmul_kernel
from .kernels import naive_matmul, reference_add, reference_matmul

__all__ = ["COST", "NRAM_BYTES", "Core", "MLUError", "NRAMOverflow", "matmul_kernel", "naive_matmul",
           "reference_add", "reference_matmul"]
