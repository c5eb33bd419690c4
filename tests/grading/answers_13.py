"""Wrong and different correct answers for notebook 13 (kernels for the simulated MLU):
``mlu_add`` and ``mlu_matmul``."""

WRONG_ANSWERS = {
    "mlu_add": {
        # small chunks: correct, but every DMA's start-up is paid hundreds of times
        "small_chunks": """
chunk = 1024
with core.scope():
    a, b = core.nram((chunk,)), core.nram((chunk,))
    for i in range(0, x.size, chunk):
        m = min(chunk, x.size - i)
        core.load(a[:m], x[i:i + m]); core.load(b[:m], y[i:i + m])
        core.add(a[:m], a[:m], b[:m])
        core.store(out[i:i + m], a[:m])
""",
        # new buffers every chunk and never freed: the budget runs out
        "allocates_in_the_loop": """
chunk = 16384
for i in range(0, x.size, chunk):
    m = min(chunk, x.size - i)
    a, b = core.nram((m,)), core.nram((m,))
    core.load(a, x[i:i + m]); core.load(b, y[i:i + m])
    core.add(a, a, b)
    core.store(out[i:i + m], a)
""",
        # computes on GDRAM directly: the device refuses
        "adds_in_gdram": """
core.add(out, x, y)
""",
        # the last, shorter chunk is never stored
        "drops_the_tail": """
chunk = (core.nram_bytes - 256) // 8
with core.scope():
    a, b = core.nram((chunk,)), core.nram((chunk,))
    for i in range(0, x.size - x.size % chunk, chunk):
        core.load(a, x[i:i + chunk]); core.load(b, y[i:i + chunk])
        core.add(a, a, b)
        core.store(out[i:i + chunk], a)
    if x.size < chunk:
        core.load(a[:x.size], x); core.load(b[:x.size], y)
        core.add(a[:x.size], a[:x.size], b[:x.size]); core.store(out, a[:x.size])
""",
        # the shortcut: the library's kernel
        "calls_the_library": """
mlu.reference_add(core, x, y, out)
""",
    },
    "mlu_matmul": {
        # the first tiling one writes: correct and within budget, but mostly DMA
        "naive_tiling": """
t = 32
with core.scope():
    a_t, b_t, c_t, p_t = core.nram((t, t)), core.nram((t, t)), core.nram((t, t)), core.nram((t, t))
    for i in range(0, a.shape[0], t):
        m = min(t, a.shape[0] - i)
        for j in range(0, b.shape[1], t):
            n = min(t, b.shape[1] - j)
            for k0 in range(0, a.shape[1], t):
                k = min(t, a.shape[1] - k0)
                core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k]); core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                core.load(c_t[:m, :n], c[i:i + m, j:j + n])
                core.matmul(p_t[:m, :n], a_t[:m, :k], b_t[:k, :n])
                core.add(c_t[:m, :n], c_t[:m, :n], p_t[:m, :n])
                core.store(c[i:i + m, j:j + n], c_t[:m, :n])
""",
        # tiles of 256: 3 x 256 KiB do not fit in the budget
        "tiles_too_big": """
t = 256
with core.scope():
    a_t, b_t, c_t = core.nram((t, t)), core.nram((t, t)), core.nram((t, t))
    for i in range(0, a.shape[0], t):
        m = min(t, a.shape[0] - i)
        for j in range(0, b.shape[1], t):
            n = min(t, b.shape[1] - j)
            for k0 in range(0, a.shape[1], t):
                k = min(t, a.shape[1] - k0)
                core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k]); core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                core.matmul(c_t[:m, :n], a_t[:m, :k], b_t[:k, :n], accumulate=k0 > 0)
            core.store(c[i:i + m, j:j + n], c_t[:m, :n])
""",
        # every k tile overwrites the c tile: only the last k block's product survives
        "forgets_to_accumulate": """
t = 128
with core.scope():
    a_t, b_t, c_t = core.nram((t, t)), core.nram((t, t)), core.nram((t, t))
    for i in range(0, a.shape[0], t):
        m = min(t, a.shape[0] - i)
        for j in range(0, b.shape[1], t):
            n = min(t, b.shape[1] - j)
            for k0 in range(0, a.shape[1], t):
                k = min(t, a.shape[1] - k0)
                core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k]); core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                core.matmul(c_t[:m, :n], a_t[:m, :k], b_t[:k, :n])
            core.store(c[i:i + m, j:j + n], c_t[:m, :n])
""",
        # whole tiles only: the remainders of m, k and n are skipped
        "ignores_partial_tiles": """
t = 64
with core.scope():
    a_t, b_t, c_t = core.nram((t, t)), core.nram((t, t)), core.nram((t, t))
    for i in range(0, a.shape[0] - t + 1, t):
        for j in range(0, b.shape[1] - t + 1, t):
            for k0 in range(0, a.shape[1] - t + 1, t):
                core.load(a_t, a[i:i + t, k0:k0 + t]); core.load(b_t, b[k0:k0 + t, j:j + t])
                core.matmul(c_t, a_t, b_t, accumulate=k0 > 0)
            core.store(c[i:i + t, j:j + t], c_t)
""",
        # NumPy on GDRAM, then one token DMA: the work was not done on the device
        "numpy_in_gdram": """
c[...] = a @ b
with core.scope():
    t = core.nram((1,))
    core.load(t, a[:1, 0])
""",
        # the shortcut: the library's kernel
        "calls_the_library": """
mlu.reference_matmul(core, a, b, c)
""",
    },
}

CORRECT_ANSWERS = {
    "mlu_add": {
        # chunks a little smaller than the largest, the sum written to a third buffer
        "three_buffers": """
chunk = (core.nram_bytes - 512) // 12
with core.scope():
    a, b, s = core.nram((chunk,)), core.nram((chunk,)), core.nram((chunk,))
    for i in range(0, x.size, chunk):
        m = min(chunk, x.size - i)
        core.load(a[:m], x[i:i + m]); core.load(b[:m], y[i:i + m])
        core.add(s[:m], a[:m], b[:m])
        core.store(out[i:i + m], s[:m])
""",
    },
    "mlu_matmul": {
        # tall-and-thin tiles: 64 x 256 of a, 256 x 128 of b, a 64 x 128 c tile kept on chip
        "other_tile_shapes": """
bm, bk, bn = 64, 256, 128
with core.scope():
    a_t, b_t, c_t = core.nram((bm, bk)), core.nram((bk, bn)), core.nram((bm, bn))
    for j in range(0, b.shape[1], bn):
        n = min(bn, b.shape[1] - j)
        for i in range(0, a.shape[0], bm):
            m = min(bm, a.shape[0] - i)
            first = True
            for k0 in range(0, a.shape[1], bk):
                k = min(bk, a.shape[1] - k0)
                core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k]); core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                core.matmul(c_t[:m, :n], a_t[:m, :k], b_t[:k, :n], accumulate=not first)
                first = False
            core.store(c[i:i + m, j:j + n], c_t[:m, :n])
""",
    },
}
