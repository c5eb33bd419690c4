"""Multi-device and MPI communication costs, beside their references.

1. In one process: a tower training step of a 2-layer MLP on 1, 2 and 4
   logical CPU devices (``ConfigProto(device_count=...)``), as time ratios
   against the 1-device step. On a machine with few cores, and BLAS already
   multithreaded, expect little or no speedup: the point is the measurement.
2. Over MPI (2 ranks through ``aicslib.distribute.launch``): the readable
   ring-allreduce against MPI's own Allreduce for several array sizes, and a
   ping-pong fit of the alpha-beta model.

    python benchmarks/bench_distribute.py [--fast]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

SIZES = (1_000, 100_000, 1_000_000)


def rank_job(out, repeats):
    """Runs inside each MPI rank: times ring vs MPI Allreduce; rank 0 writes the medians."""
    from aicslib.distribute import allreduce, init, ring_allreduce
    from aicslib.distribute.train_data_parallel import pingpong
    from aicslib.framework.file_io import atomic_write
    comm = init()
    rows = []
    for n in SIZES:
        x = np.random.default_rng(comm.Get_rank()).standard_normal(n)
        times = {"ring": [], "mpi": []}
        for _ in range(repeats):
            for name, fn in (("ring", ring_allreduce), ("mpi", allreduce)):
                comm.Barrier()
                t = time.perf_counter()
                fn(x)
                times[name].append(time.perf_counter() - t)
        rows.append((n, statistics.median(times["ring"]), statistics.median(times["mpi"])))
    sizes, secs = pingpong(comm)
    if comm.Get_rank() == 0:
        atomic_write(out, lambda f: np.savez(f, rows=np.array(rows), pp_bytes=sizes, pp_seconds=secs))


def towers(repeats, fast):
    import aicslib as aics
    from aicslib.distribute import average_gradients, split_batch
    rng = np.random.default_rng(0)
    B, IN, HID = (256, 128, 256) if fast else (1024, 512, 1024)
    X = rng.standard_normal((B, IN)).astype(np.float32)
    Y = rng.standard_normal((B, 10)).astype(np.float32)
    result = {}
    for n in (1, 2, 4):
        g = aics.Graph()
        with g.as_default():
            x = aics.placeholder(aics.float32, [B, IN])
            y = aics.placeholder(aics.float32, [B, 10])
            w1 = aics.Variable((rng.standard_normal((IN, HID)) * 0.05).astype(np.float32))
            w2 = aics.Variable((rng.standard_normal((HID, 10)) * 0.05).astype(np.float32))
            opt = aics.train.GradientDescentOptimizer(0.01)
            tg = []
            for i, (xi, yi) in enumerate(zip(split_batch(x, n), split_batch(y, n))):
                with aics.device(f"/CPU:{i}"):
                    loss = aics.reduce_mean(aics.square(aics.matmul(aics.tanh(aics.matmul(xi, w1)), w2) - yi))
                    tg.append(opt.compute_gradients(loss, [w1, w2]))
            step = opt.apply_gradients(average_gradients(tg))
            with aics.Session(config=aics.ConfigProto(device_count={"CPU": n})) as s:
                s.run(aics.global_variables_initializer())
                s.run(step, {x: X, y: Y})
                ts = []
                for _ in range(repeats):
                    t = time.perf_counter()
                    s.run(step, {x: X, y: Y})
                    ts.append(time.perf_counter() - t)
        result[n] = statistics.median(ts)
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fast", action="store_true")
    p.add_argument("--rank-job", help=argparse.SUPPRESS)
    a = p.parse_args()
    repeats = 5 if a.fast else 20
    if a.rank_job:
        rank_job(a.rank_job, repeats)
        return
    t = towers(repeats, a.fast)
    print(f"towers (one process, {os.cpu_count()} cores): step time per device count")
    for n, sec in t.items():
        print(f"  {n} device(s): {sec * 1e3:8.2f} ms   speedup vs 1 device: {t[1] / sec:5.2f}x")
    from aicslib.distribute import comm_model, launch
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.npz")
        args = ["--rank-job", out] + (["--fast"] if a.fast else [])
        try:
            r = launch.run(os.path.abspath(__file__), 2, args, capture=True, timeout=300)
        except launch.LaunchError as e:
            print("MPI part skipped:", e)
            return
        if r.returncode != 0:
            sys.exit(r.stderr)
        d = np.load(out, allow_pickle=False)
        print("allreduce over 2 MPI ranks (median):")
        for n, ring_s, mpi_s in d["rows"]:
            print(f"  {int(n):>9} float64: ring {ring_s * 1e3:8.3f} ms   MPI_Allreduce {mpi_s * 1e3:8.3f} ms   "
                  f"ring / MPI = {ring_s / mpi_s:5.2f}")
        alpha, beta = comm_model.fit_alpha_beta(d["pp_bytes"], d["pp_seconds"])
        print(f"ping-pong fit: alpha = {alpha * 1e6:.2f} us, beta = {beta * 1e9:.4f} ns/byte "
              f"(~{1 / max(beta, 1e-15) / 1e9:.2f} GB/s)")


if __name__ == "__main__":
    main()
