"""Milliseconds per training step of a small MNIST CNN, aicslib against PyTorch CPU.

The network of the chapter-3 style exercises: conv 3x3 1->32 + ReLU, 2x2 max pooling,
conv 3x3 32->64 + ReLU, 2x2 max pooling, dense 3136->10, softmax cross-entropy, plain SGD;
batch 64 of 28x28 images. Side by side: an aicslib graph run by a Session (Grappler on),
the same step as an ``aics.function`` (GradientTape inside), and PyTorch when it is
installed, all from the same weights and batch. The first step's losses are printed next to
each other (they must agree), then the median time of ``--steps`` steps.

With ``--per-op`` it also prints the Session step's slowest kernels (``RunOptions(FULL_TRACE)``).

    python benchmarks/bench_cnn.py
    AICS_FAST=1 python benchmarks/bench_cnn.py   # a few steps (CI)
"""
import argparse
import collections
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import aicslib as aics  # noqa: E402
from aicslib import flags  # noqa: E402

LR = 0.01


def initial_weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.standard_normal((3, 3, 1, 32)) * 0.3).astype(np.float32), "b1": np.zeros(32, np.float32),
            "w2": (rng.standard_normal((3, 3, 32, 64)) * 0.06).astype(np.float32), "b2": np.zeros(64, np.float32),
            "w3": (rng.standard_normal((7 * 7 * 64, 10)) * 0.01).astype(np.float32), "b3": np.zeros(10, np.float32)}


def forward(x, v):
    """Logits of the CNN (NHWC input), in aicslib ops: the same code builds the graph and runs eagerly."""
    h = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(x, v["w1"], 1, "SAME"), v["b1"]))
    h = aics.nn.max_pool2d(h, 2, 2, "VALID")
    h = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(h, v["w2"], 1, "SAME"), v["b2"]))
    h = aics.nn.max_pool2d(h, 2, 2, "VALID")
    return aics.matmul(aics.reshape(h, [-1, 7 * 7 * 64]), v["w3"]) + v["b3"]


def session_step(weights, x, y):
    """``(step, first_loss, per_op)``: the graph's training step as a thunk."""
    tf = aics.compat.v1
    g = aics.Graph()
    with g.as_default():
        X = tf.placeholder(aics.float32, x.shape)
        Y = tf.placeholder(aics.int64, y.shape)
        v = {k: tf.Variable(a, name=k) for k, a in weights.items()}
        loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=Y, logits=forward(X, v)))
        train = tf.train.GradientDescentOptimizer(LR).minimize(loss)
        init = tf.global_variables_initializer()
    sess = aics.Session(graph=g)
    sess.run(init)
    feed = {X: x, Y: y}
    first, _ = sess.run([loss, train], feed)

    def per_op(runs=5):
        total = collections.Counter()
        for _ in range(runs):
            md = aics.RunMetadata()
            sess.run(train, feed, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
            for n in md.node_stats():
                total[(n.op, n.node_name)] += n.all_end_rel_micros / runs / 1e3
        return total
    return (lambda: sess.run(train, feed)), float(first), per_op


def function_step(weights, x, y):
    v = {k: aics.Variable(a, name=k) for k, a in weights.items()}
    opt = aics.keras.optimizers.SGD(LR)
    xt, yt = aics.constant(x), aics.constant(y)
    variables = list(v.values())

    @aics.function
    def step():
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=yt, logits=forward(xt, v)))
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return step, float(step())


def torch_step(weights, x, y):
    try:
        import torch
    except ImportError:
        return None
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                              torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                              torch.nn.Flatten(), torch.nn.Linear(7 * 7 * 64, 10))
    with torch.no_grad():
        for conv, w, b in ((net[0], "w1", "b1"), (net[3], "w2", "b2")):
            conv.weight.copy_(torch.from_numpy(weights[w].transpose(3, 2, 0, 1).copy()))
            conv.bias.copy_(torch.from_numpy(weights[b]))
        # our flatten is NHWC: reorder the dense rows to PyTorch's NCHW flatten
        w3 = weights["w3"].reshape(7, 7, 64, 10).transpose(2, 0, 1, 3).reshape(-1, 10)
        net[7].weight.copy_(torch.from_numpy(w3.T.copy()))
        net[7].bias.copy_(torch.from_numpy(weights["b3"]))
    opt = torch.optim.SGD(net.parameters(), LR)
    X = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    Y = torch.from_numpy(y)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(X), Y)
        loss.backward()
        opt.step()
        return loss
    return step, float(step().detach()), torch.__version__


def timed(step, steps, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv=None):
    fast = flags.FAST
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5 if fast else 50)
    ap.add_argument("--warmup", type=int, default=2 if fast else 5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--per-op", action="store_true", help="also print the Session step's slowest kernels")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, (args.batch, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, args.batch).astype(np.int64)
    weights = initial_weights()
    sess, sess_loss, per_op = session_step(weights, x, y)
    fn, fn_loss = function_step(weights, x, y)
    runs = {"aicslib Session": sess, "aicslib aics.function": fn}
    losses = {"aicslib Session": sess_loss, "aicslib aics.function": fn_loss}
    ref = torch_step(weights, x, y)
    if ref is not None:
        runs[f"PyTorch {ref[2]} CPU"] = ref[0]
        losses[f"PyTorch {ref[2]} CPU"] = ref[1]
    print(f"MNIST CNN training step, batch {args.batch}, median of {args.steps} steps")
    results = {}
    for name, step in runs.items():
        results[name] = timed(step, args.steps, args.warmup)
    ref_ms = results.get(f"PyTorch {ref[2]} CPU") if ref is not None else None
    for name, ms in results.items():
        ratio = f"   {ms / ref_ms:.2f}x PyTorch's time" if ref_ms and not name.startswith("PyTorch") else ""
        print(f"  {name:28s} first loss {losses[name]:.6f}   {ms:7.2f} ms/step{ratio}")
    if args.per_op:
        print("slowest kernels of the Session step (ms):")
        for (op, node), ms in per_op().most_common(12):
            print(f"  {ms:7.3f}  {op:24s} {node}")
    return {"ms": results, "first_loss": losses}


if __name__ == "__main__":
    main()
