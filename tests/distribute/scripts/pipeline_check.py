"""Run as S MPI ranks: a GPipe step of an S-stage MLP (stage s on rank s) equals the unsplit
network's loss and gradients, which every rank computes by itself as the reference."""
import sys

import numpy as np

import aicslib as aics
from aicslib.distribute import init
from aicslib.distribute.pipeline_mpi import pipeline_step

comm = init()
s, S = comm.Get_rank(), comm.Get_size()
rng = np.random.default_rng(0)
sizes = [6] + [8] * (S - 1) + [3]
weights = [(rng.standard_normal((a, b)) * 0.5).astype(np.float32) for a, b in zip(sizes, sizes[1:])]
X = rng.standard_normal((12, 6)).astype(np.float32)
Y = rng.standard_normal((12, 3)).astype(np.float32)


def layer(i, v):
    return (lambda h: aics.matmul(h, v)) if i == S - 1 else (lambda h: aics.tanh(aics.matmul(h, v)))


def mse(pred, target):
    return aics.reduce_mean(aics.square(pred - target))


# reference: the whole network in this process
ref_vars = [aics.Variable(w) for w in weights]
with aics.GradientTape() as tape:
    h = aics.constant(X)
    for i, v in enumerate(ref_vars):
        h = layer(i, v)(h)
    ref_loss = mse(h, Y)
ref_grads = tape.gradient(ref_loss, ref_vars)

mine = aics.Variable(weights[s])
loss, grads, events = pipeline_step(layer(s, mine), [mine], X if s == 0 else None, Y if s == S - 1 else None,
                                    mse, num_micro_batches=4, comm=comm)
ok = np.isclose(loss, float(ref_loss.numpy()), rtol=1e-5) and \
    np.allclose(grads[0], ref_grads[s].numpy(), rtol=1e-4, atol=1e-6) and \
    [k for k, *_ in events] == ["F"] * 4 + ["B"] * 4
print(f"rank {s}: {'OK' if ok else ('FAIL', loss, float(ref_loss.numpy()))}", flush=True)
sys.exit(0 if ok else 1)
