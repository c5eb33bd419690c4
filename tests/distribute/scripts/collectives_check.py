"""Run as N MPI ranks: ring-allreduce == MPI Allreduce == NumPy sum for many sizes.

Every rank can rebuild every rank's input (seeded by rank), so each checks its
own results against NumPy's sum of all inputs, computed locally."""
import sys

import numpy as np

from aicslib.distribute import allreduce, init, ring_allreduce

comm = init()
p, r = comm.Get_size(), comm.Get_rank()
failures = []
sizes = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [0, 1, 2, 3, 5, 7, 8, 13, 100, 1001]
for n in sizes:
    for dtype in (np.float64, np.float32, np.int64):
        inputs = [np.random.default_rng([n, k]).integers(-50, 50, size=n).astype(dtype) for k in range(p)]
        expected = np.sum(inputs, axis=0, dtype=dtype)
        ring = ring_allreduce(inputs[r])
        mpi = allreduce(inputs[r])
        # integer-valued inputs: every summation order is exact, so equality must be exact
        for name, got in (("ring", ring), ("mpi", mpi)):
            if got.dtype != dtype or got.shape != expected.shape or not np.array_equal(got, expected):
                failures.append(f"{name} n={n} {np.dtype(dtype).name}: {got} != {expected}")
x = np.random.default_rng(r).normal(size=(3, 4))
every = [np.random.default_rng(k).normal(size=(3, 4)) for k in range(p)]
if not np.allclose(ring_allreduce(x, average=True), np.mean(every, axis=0), rtol=1e-12, atol=1e-12):
    failures.append("ring average of a 3x4 float array")
# DistributedGradientTape: d/dv sum((r + 1) * v) = r + 1 on rank r; averaged over ranks: (p + 1) / 2
import aicslib as aics  # noqa: E402
from aicslib.distribute import DistributedGradientTape, broadcast_variables  # noqa: E402
v = aics.Variable(np.full(3, float(r)))
broadcast_variables([v], root_rank=0)
if not np.array_equal(v.numpy(), np.zeros(3)):
    failures.append(f"broadcast_variables: rank {r} has {v.numpy()}")
for algorithm in ("mpi", "ring"):
    with aics.GradientTape() as tape:
        loss = aics.reduce_sum(v * float(r + 1))
    grad = DistributedGradientTape(tape, algorithm).gradient(loss, v)
    if not np.allclose(grad, np.full(3, (p + 1) / 2)):
        failures.append(f"DistributedGradientTape ({algorithm}): {grad}")
print(f"rank {r}: {'OK' if not failures else failures}", flush=True)
sys.exit(1 if failures else 0)
