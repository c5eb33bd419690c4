"""A data-parallel training script: an MLP on synthetic data, one shard of each batch per rank.

Run it as N ranks with the launcher (rank 0 writes the results):

    python -m aicslib.distribute.launch -n 2 aicslib/distribute/train_data_parallel.py \\
        --batch 64 --steps 5 --out /tmp/dp.npz

``train(...)`` with ``comm=None`` is the single-process run on the whole batch,
the reference that N ranks on B/N examples each must reproduce.
"""
import argparse
import os
import signal
import time

import numpy as np

SIZES = (20, 32, 4)   # inputs, hidden units, classes


def make_batch(step, batch, seed=0):
    """The global batch of step ``step`` (the same on every rank: each takes its shard)."""
    rng = np.random.default_rng([seed, step])
    x = rng.normal(size=(batch, SIZES[0])).astype(np.float32)
    y = (np.abs(x[:, :SIZES[2]]).argmax(axis=1)).astype(np.int32)
    return x, y


def init_weights(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(scale=0.3, size=(SIZES[0], SIZES[1])).astype(np.float32),
            np.zeros(SIZES[1], np.float32),
            rng.normal(scale=0.3, size=(SIZES[1], SIZES[2])).astype(np.float32),
            np.zeros(SIZES[2], np.float32)]


def train(batch, steps, lr=0.5, comm=None, algorithm="mpi", seed=0, die_rank=None, die_step=None):
    """Trains; returns (final weights, losses, per-step (compute s, allreduce s)).

    With an MPI ``comm`` of N ranks, rank r uses rows [r B/N, (r+1) B/N) of each batch,
    starts from its own random weights (seed + r) and gets rank 0's by broadcast."""
    import aicslib as aics
    from aicslib.distribute import allreduce_gradients, broadcast_variables
    rank, size = (0, 1) if comm is None else (comm.Get_rank(), comm.Get_size())
    if batch % size:
        raise ValueError(f"--batch {batch} must divide by the number of ranks {size}.")
    params = [aics.Variable(w, name=f"w{i}") for i, w in enumerate(init_weights(seed + rank))]
    if comm is not None:
        broadcast_variables(params, root_rank=0, comm=comm)
    opt = aics.train.GradientDescentOptimizer(lr)
    shard = batch // size
    losses, timings = [], []
    for step in range(steps):
        if die_rank == rank and die_step == step:
            os.kill(os.getpid(), signal.SIGKILL)   # a crashed machine, for the tests
        x, y = make_batch(step, batch, seed)
        x, y = x[rank * shard:(rank + 1) * shard], y[rank * shard:(rank + 1) * shard]
        t0 = time.perf_counter()
        with aics.GradientTape() as tape:
            h = aics.nn.relu(aics.matmul(x, params[0]) + params[1])
            logits = aics.matmul(h, params[2]) + params[3]
            loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        t1 = time.perf_counter()
        if comm is not None:
            grads = allreduce_gradients(grads, algorithm, comm)
            loss_value = float(allreduce_gradients([loss.numpy()], "mpi", comm)[0])
        else:
            loss_value = float(loss.numpy())
        t2 = time.perf_counter()
        opt.apply_gradients(zip([aics.constant(g) if isinstance(g, np.ndarray) else g for g in grads], params))
        losses.append(loss_value)
        timings.append((t1 - t0, t2 - t1))
    return [p.numpy() for p in params], np.array(losses), np.array(timings)


def pingpong(comm, sizes=(8, 8192, 262144), repeats=20):
    """One-way message times between ranks 0 and 1 for each size (rank 0's measurement)."""
    out = []
    for n in sizes:
        buf = np.zeros(n // 8, np.float64)
        comm.Barrier()
        t = time.perf_counter()
        for _ in range(repeats):
            if comm.Get_rank() == 0:
                comm.Send(buf, dest=1)
                comm.Recv(buf, source=1)
            elif comm.Get_rank() == 1:
                comm.Recv(buf, source=0)
                comm.Send(buf, dest=0)
        out.append((time.perf_counter() - t) / (2 * repeats))
    return np.array(sizes, dtype=float), np.array(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--algorithm", choices=("mpi", "ring"), default="mpi")
    p.add_argument("--out", help="rank 0 writes weights, losses and timings here (.npz)")
    p.add_argument("--pingpong", action="store_true", help="also measure message times (alpha, beta)")
    p.add_argument("--die-rank", type=int, help="(tests) this rank kills itself ...")
    p.add_argument("--die-step", type=int, default=1, help="(tests) ... at this step")
    a = p.parse_args(argv)
    from aicslib.distribute import init
    comm = init()
    weights, losses, timings = train(a.batch, a.steps, a.lr, comm, a.algorithm,
                                     die_rank=a.die_rank, die_step=a.die_step)
    extra = {}
    if a.pingpong and comm.Get_size() > 1:
        extra["pingpong_bytes"], extra["pingpong_seconds"] = pingpong(comm)
    if comm.Get_rank() == 0:
        print(f"rank 0 of {comm.Get_size()}: losses {np.round(losses, 4).tolist()}", flush=True)
        if a.out:
            from aicslib.framework.file_io import atomic_write
            arrays = dict(losses=losses, timings=timings, size=comm.Get_size(),
                          **{f"w{i}": w for i, w in enumerate(weights)}, **extra)
            atomic_write(a.out, lambda f: np.savez(f, **arrays))


if __name__ == "__main__":
    main()
