"""Kernels for the simulated core: the references a lab's kernels are compared with."""
import numpy as np


def reference_add(core, x, y, out):
    """out = x + y for 1-D float32 arrays of any length: three buffers as large as the budget
    allows, one DMA per operand and chunk."""
    itemsize = np.dtype(np.float32).itemsize
    chunk = max(1, (core.nram_bytes - 3 * 64) // (2 * itemsize) // 64 * 64)   # two buffers; the sum overwrites a
    with core.scope():
        a, b = core.nram((chunk,), name="a"), core.nram((chunk,), name="b")
        for i in range(0, x.size, chunk):
            m = min(chunk, x.size - i)
            core.load(a[:m], x[i:i + m])
            core.load(b[:m], y[i:i + m])
            core.add(a[:m], a[:m], b[:m])
            core.store(out[i:i + m], a[:m])


def _blocks(n, size):
    return [(i, min(size, n - i)) for i in range(0, n, size)]


def reference_matmul(core, a, b, c, bm=128, bn=128, bk=128):
    """c = a @ b in bm x bn output tiles that stay on chip while the k loop streams bm x bk and
    bk x bn tiles of a and b through: each c tile is stored once."""
    with core.scope():
        a_t, b_t = core.nram((bm, bk), name="a_tile"), core.nram((bk, bn), name="b_tile")
        c_t = core.nram((bm, bn), name="c_tile")
        for i, m in _blocks(a.shape[0], bm):
            for j, n in _blocks(b.shape[1], bn):
                for step, (k0, k) in enumerate(_blocks(a.shape[1], bk)):
                    core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k])
                    core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                    core.matmul(c_t[:m, :n], a_t[:m, :k], b_t[:k, :n], accumulate=step > 0)
                core.store(c[i:i + m, j:j + n], c_t[:m, :n])


def naive_matmul(core, a, b, c, tile=32):
    """The first tiling one writes: small square tiles, and the c tile loaded, updated and stored
    again for every step of k. Correct, within any budget, and slow."""
    with core.scope():
        a_t, b_t = core.nram((tile, tile), name="a_tile"), core.nram((tile, tile), name="b_tile")
        c_t, p_t = core.nram((tile, tile), name="c_tile"), core.nram((tile, tile), name="partial")
        for i, m in _blocks(a.shape[0], tile):
            for j, n in _blocks(b.shape[1], tile):
                for k0, k in _blocks(a.shape[1], tile):
                    core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k])
                    core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                    core.load(c_t[:m, :n], c[i:i + m, j:j + n])
                    core.matmul(p_t[:m, :n], a_t[:m, :k], b_t[:k, :n])
                    core.add(c_t[:m, :n], c_t[:m, :n], p_t[:m, :n])
                    core.store(c[i:i + m, j:j + n], c_t[:m, :n])
