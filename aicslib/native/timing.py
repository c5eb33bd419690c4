"""Timing one call across the Python/C boundary, binding by binding (benchmarks and notebook 11).

``raw_call(binding, a, b, c)`` returns a no-argument function making the bare call
``aics_sgemm(0, 0, n, n, n, a, b, c)`` into a caller-allocated ``c``, with nothing
aicslib adds (no argument checks, no allocation): for tiny matrices its time is
the binding's own overhead (argument conversion, the foreign call, the result),
for large ones it is the C loop. 'numpy' is ``np.matmul(a, b, out=c)`` (BLAS).
"""
import time

import numpy as np

from .gemm import load


def raw_call(binding, a, b, c):
    """A zero-argument callable running one square GEMM c = a @ b through ``binding``."""
    n = a.shape[0]
    if binding == "numpy":
        return lambda: np.matmul(a, b, out=c)
    if binding == "ctypes":
        fn = load("ctypes").aics_sgemm
        pa, pb, pc = a.ctypes.data, b.ctypes.data, c.ctypes.data
        return lambda: fn(0, 0, n, n, n, pa, pb, pc)
    fn = load(binding).aics_sgemm    # swig and pybind11 take the arrays themselves
    return lambda: fn(0, 0, n, n, n, a, b, c)


def seconds_per_call(fn, min_time=0.05, repeats=5):
    """Median over ``repeats`` of the mean time of one ``fn()``, each sample lasting >= min_time."""
    fn()                                           # warm up: first-call costs are not overhead
    number, elapsed = 1, 0.0
    while True:                                    # calls per sample so that one lasts min_time
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2 if elapsed <= 0 else max(2, min(10, int(min_time / elapsed) + 1))
    samples = [elapsed / number]
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return float(np.median(samples))


def time_bindings(size, bindings, min_time=0.05, repeats=5, seed=0):
    """{binding: seconds per size x size GEMM} for each binding, on the same float32 matrices."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    out = {}
    for binding in bindings:
        c = np.empty((size, size), np.float32)
        out[binding] = seconds_per_call(raw_call(binding, a, b, c), min_time, repeats)
    return out
