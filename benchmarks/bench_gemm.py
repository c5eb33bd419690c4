"""The convolution kernels' GEMM: aicslib's C SGEMM (aicslib/accel/src/aics_sgemm_packed.c)
against NumPy's BLAS and PyTorch, in the same process.

For the GEMM shapes of bench_conv.py's layers (batch 8: im2col forward, input and filter
gradients) and a square one it prints GFLOP/s of

* ``numpy 1t``: ``np.matmul`` with BLAS on one thread (what a kernel thread gets);
* ``numpy``: ``np.matmul`` with BLAS's own threads;
* ``C 1t``: the C SGEMM on one thread (``c_sgemm.sgemm``);
* ``C``: ``work_sharder.matmul``, the C SGEMM split over the kernel threads (as the conv
  kernels run it);
* ``torch``: ``torch.mm`` on ``torch.set_num_threads(<cores, at most 2>)``, when installed;

and the ratios ``C / numpy`` and ``C / torch``. NumPy's OpenBLAS picks its kernels at load
time, and ``OPENBLAS_CORETYPE`` (printed) may pin it to an older CPU's; the C file is
compiled with ``-march=native`` here. Times are the best of interleaved rounds, each
implementation timed after a pause that lets the others' spinning threads go to sleep
(``SETTLE_S``).

    python benchmarks/bench_gemm.py
    python benchmarks/bench_gemm.py --fast
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from aicslib import flags
from aicslib.accel import c_sgemm
from aicslib.accel import work_sharder

# (name, m, k, n): the GEMMs of Y = cols @ W (forward), dcols = dY @ W^T (input gradient),
# dW = cols^T @ dY (filter gradient) of bench_conv.py's layers at batch 8
SHAPES = [
    ("56x56x64 3x3 fwd", 25088, 576, 64),
    ("56x56x64 3x3 dW", 576, 25088, 64),
    ("28x28x128 3x3 fwd", 6272, 1152, 128),
    ("28x28x128 3x3 dX", 6272, 128, 1152),
    ("14x14x256 3x3 fwd", 1568, 2304, 256),
    ("7x7x512 3x3 fwd", 392, 4608, 512),
    ("7x7x512 3x3 dX", 392, 512, 4608),
    ("28x28x256 1x1 fwd", 6272, 256, 128),
    ("square 1024", 1024, 1024, 1024),
]
FAST_SHAPES = [SHAPES[2], SHAPES[5], SHAPES[8]]


#: Seconds to wait before each implementation's turn. OpenBLAS's and PyTorch's (OpenMP)
#: worker threads keep spinning on the cores for a while after a call returns (OpenBLAS:
#: OPENBLAS_THREAD_TIMEOUT), so whatever runs next in the process competes with them: measured
#: here, the C SGEMM split over two threads ran at 170-200 GFLOP/s right after NumPy's
#: threaded matmul and at 410 on its own. Each implementation gets quiet cores instead.
SETTLE_S = 0.3


def best_times(thunks, rounds, settle=SETTLE_S, calls=3):
    """Best seconds of each thunk: per round, each in turn after ``settle`` seconds of quiet,
    ``calls`` times in a row."""
    best = {k: float("inf") for k in thunks}
    for f in thunks.values():
        f()
    for _ in range(rounds):
        for k, f in thunks.items():
            time.sleep(settle)
            for _ in range(calls):
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fast", action="store_true", help="three shapes, fewer rounds (also AICS_FAST=1)")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    fast = args.fast or flags.FAST
    rounds = args.rounds or (2 if fast else 4)
    lib = c_sgemm.library()
    if lib is None:
        print(f"The C SGEMM was not built ({c_sgemm.fallback_reason()}): nothing to compare.")
        return 1
    try:
        import torch
        torch.set_num_threads(min(2, os.cpu_count() or 1))
    except ImportError:
        torch = None
    mr, nr = c_sgemm.micro_tile()
    print(f"C SGEMM micro-tile {mr}x{nr}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"{work_sharder.NUM_THREADS} kernel threads; reference: "
          f"{'torch ' + torch.__version__ if torch else 'PyTorch not installed'}; best of {rounds} rounds")
    cols = ["numpy 1t", "numpy", "C 1t", "C"] + (["torch"] if torch else [])
    ratios = "   C/numpy" + ("   C/torch" if torch else "")
    print(f"{'GEMM (m x k x n)':34s}" + "".join(f"{c:>10s}" for c in cols) + ratios)
    print(f"{'':34s}" + "".join(f"{'GFLOP/s':>10s}" for _ in cols))
    ratios_np, ratios_torch = [], []
    rng = np.random.default_rng(0)
    for name, m, k, n in (FAST_SHAPES if fast else SHAPES):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        out = np.empty((m, n), np.float32)

        def numpy_1t():
            with work_sharder.SingleThreadedBlas():
                np.matmul(a, b, out=out)
        thunks = {"numpy 1t": numpy_1t, "numpy": lambda: np.matmul(a, b, out=out),
                  "C 1t": lambda: c_sgemm.sgemm(lib, a, b, out),
                  "C": lambda: work_sharder.sharded_matmul(a, b, out)}
        if torch:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            thunks["torch"] = lambda: torch.mm(ta, tb)
        t = best_times(thunks, rounds)
        gf = {name_: 2.0 * m * k * n / v / 1e9 for name_, v in t.items()}
        r_np = gf["C"] / gf["numpy"]
        ratios_np.append(r_np)
        line = f"{name + f' ({m}x{k}x{n})':34s}" + "".join(f"{gf[c]:10.0f}" for c in cols) + f"{r_np:9.2f}x"
        if torch:
            ratios_torch.append(gf["C"] / gf["torch"])
            line += f"{ratios_torch[-1]:9.2f}x"
        print(line, flush=True)
    geo = lambda r: float(np.exp(np.mean(np.log(r))))  # noqa: E731
    print(f"geometric mean: C / numpy {geo(ratios_np):.2f}x" +
          (f", C / torch {geo(ratios_torch):.2f}x" if ratios_torch else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
