"""Runs one Python function, given as source, on every rank of an MPI job: ``fn(comm, x_r)``.

Notebook 19's lab writes a ring-allreduce as a per-rank function in a notebook cell; a cell
cannot be imported by other processes, so ``run_on_ranks`` writes the function's source to a
file and starts ``p`` ranks of this script with the launcher (``launch.run``). Each rank
executes the source (with ``np`` and ``ring`` in its namespace, as the notebook has them), calls
the function on its own input with the real ``MPI.COMM_WORLD``, and rank 0 gathers every rank's
result and time into an ``.npz`` file.

    python -m mpi4py run_function.py SOURCE.py NAME INPUTS.npz OUT.npz
"""
import os
import sys
import tempfile
import time

import numpy as np


def main(argv):
    from aicslib.distribute import mpi, ring

    source_path, name, inputs_path, out_path = argv
    comm = mpi.init()
    r = comm.Get_rank()
    namespace = {"__name__": "rank_function", "np": np, "ring": ring}
    with open(source_path, encoding="utf-8") as f:
        exec(compile(f.read(), source_path, "exec"), namespace)
    with np.load(inputs_path, allow_pickle=False) as d:
        x = d[f"rank{r}"]
    comm.Barrier()
    t0 = time.perf_counter()
    out = np.asarray(namespace[name](comm, x))
    seconds = time.perf_counter() - t0
    gathered = comm.gather((out, seconds), root=0)
    if r == 0:
        tmp = out_path + ".tmp.npz"
        np.savez(tmp, seconds=np.array([s for _, s in gathered]),
                 **{f"rank{i}": o for i, (o, _) in enumerate(gathered)})
        os.replace(tmp, out_path)


def run_on_ranks(source, name, arrays, timeout=60):
    """Runs function ``name`` defined by ``source`` as ``fn(comm, arrays[r])`` on ``len(arrays)``
    MPI ranks; returns (per-rank results, per-rank seconds, the CompletedProcess). Raises
    ``launch.LaunchError`` without MPI, ``RuntimeError`` (with the ranks' output) when the job
    fails, ``subprocess.TimeoutExpired`` past ``timeout``."""
    from aicslib.distribute import launch

    with tempfile.TemporaryDirectory(prefix="aics-ranks-") as tmp:
        src, inputs, out = (os.path.join(tmp, f) for f in ("function.py", "inputs.npz", "out.npz"))
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        np.savez(inputs, **{f"rank{i}": np.asarray(a) for i, a in enumerate(arrays)})
        job = launch.run(os.path.abspath(__file__), len(arrays), [src, name, inputs, out], capture=True,
                         timeout=timeout)
        if job.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(f"the {len(arrays)}-rank job running {name} failed (exit status {job.returncode}):\n"
                               f"{job.stderr.strip()[-2000:]}")
        with np.load(out, allow_pickle=False) as d:
            return [d[f"rank{i}"] for i in range(len(arrays))], d["seconds"], job


if __name__ == "__main__":
    main(sys.argv[1:])
