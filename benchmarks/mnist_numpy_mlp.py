"""A 784-300-100-10 MLP for MNIST in plain NumPy, forward and backward by hand.

This is exercise 5.12's "no framework" baseline, used by the notebook
``04-mnist-mlp.ipynb`` and by ``benchmarks/bench_mnist.py``:

    logits = relu(relu(x W1 + b1) W2 + b2) W3 + b3
    loss   = mean over the batch of softmax cross-entropy(logits, labels)

Training: momentum SGD as TensorFlow's MomentumOptimizer (``v = m v + g``,
``w -= lr v``), batch 128, float32 throughout.

Performance notes (what makes it fast on a CPU):
* float32 everywhere (half the memory traffic of float64, twice the SIMD width);
* C-contiguous activations, so every product is a single BLAS GEMM call;
* softmax and cross-entropy fused: the gradient of the mean loss with respect
  to the logits is simply ``(softmax(logits) - onehot(y)) / batch``;
* in-place updates (``out=``), no gradient for the input images (not needed).

Run it as a script for a quick measurement::

    python benchmarks/mnist_numpy_mlp.py --epochs 3
"""
import argparse
import os
import sys
import time

import numpy as np

LAYER_SIZES = (784, 300, 100, 10)
PARAM_NAMES = ("W1", "b1", "W2", "b2", "W3", "b3")


def init_params(seed=0, sizes=LAYER_SIZES, dtype=np.float32):
    """Glorot-uniform weights (TensorFlow's default for dense layers), zero biases.

    Returns a dict ``{"W1", "b1", "W2", "b2", "W3", "b3"}`` of C-contiguous arrays.
    """
    rng = np.random.default_rng(seed)
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params[f"W{i}"] = rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(dtype)
        params[f"b{i}"] = np.zeros(fan_out, dtype=dtype)
    return params


def preprocess(images):
    """uint8 (n, 28, 28) -> float32 (n, 784) in [0, 1], C-contiguous."""
    x = np.asarray(images).reshape(len(images), -1).astype(np.float32)
    x *= np.float32(1.0 / 255.0)
    return np.ascontiguousarray(x)


def forward(params, x):
    """Forward pass. Returns ``(logits, cache)``; ``cache`` holds what backward needs."""
    h1 = x @ params["W1"]
    h1 += params["b1"]
    np.maximum(h1, 0, out=h1)
    h2 = h1 @ params["W2"]
    h2 += params["b2"]
    np.maximum(h2, 0, out=h2)
    logits = h2 @ params["W3"]
    logits += params["b3"]
    return logits, (x, h1, h2)


def softmax(logits):
    """Row-wise softmax, numerically stable (subtract the row maximum)."""
    z = logits - logits.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def softmax_cross_entropy(logits, labels):
    """Mean softmax cross-entropy and its gradient with respect to the logits (fused).

    ``labels`` are integer class ids. Returns ``(loss, dlogits)``.
    """
    n = logits.shape[0]
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    # log softmax at the true class: z_y - log(sum exp z)
    loss = float(np.mean(np.log(s[:, 0]) - z[rows, labels]))
    e /= s                      # softmax probabilities
    e[rows, labels] -= 1.0      # softmax - onehot
    e *= np.float32(1.0 / n)    # mean over the batch
    return loss, e


def backward(params, cache, dlogits):
    """Backward pass from ``dlogits`` (d loss / d logits). Returns a dict of gradients.

    ``cache`` is the one returned by ``forward`` for the same batch; it is
    overwritten (the ReLU masks are applied in place to save memory traffic).
    """
    x, h1, h2 = cache
    grads = {}
    grads["W3"] = h2.T @ dlogits
    grads["b3"] = dlogits.sum(axis=0)
    dh2 = dlogits @ params["W3"].T
    dh2 *= h2 > 0               # ReLU': pass the gradient where the unit was active
    grads["W2"] = h1.T @ dh2
    grads["b2"] = dh2.sum(axis=0)
    dh1 = dh2 @ params["W2"].T
    dh1 *= h1 > 0
    grads["W1"] = x.T @ dh1
    grads["b1"] = dh1.sum(axis=0)
    return grads


def loss_and_grads(params, x, labels):
    """Loss and gradients for one batch (forward + fused loss + backward)."""
    logits, cache = forward(params, x)
    loss, dlogits = softmax_cross_entropy(logits, labels)
    return loss, backward(params, cache, dlogits)


def init_velocity(params):
    """Zero momentum accumulators, one per parameter (TF's "Momentum" slots)."""
    return {k: np.zeros_like(v) for k, v in params.items()}


def sgd_momentum_step(params, grads, velocity, lr, momentum=0.9, use_nesterov=False):
    """One update, exactly TensorFlow 1.x's ApplyMomentum, in place:

        accum = momentum * accum + grad
        var  -= lr * accum                                  (use_nesterov=False)
        var  -= lr * (grad + momentum * accum)              (use_nesterov=True)
    """
    lr = np.float32(lr)
    m = np.float32(momentum)
    for k, p in params.items():
        v = velocity[k]
        g = grads[k]
        v *= m
        v += g
        if use_nesterov:
            p -= lr * (g + m * v)
        else:
            p -= lr * v


def iterate_minibatches(n, batch_size, rng=None):
    """Index arrays of the minibatches of one epoch (shuffled when ``rng`` is given).
    The last, smaller batch is kept."""
    order = rng.permutation(n) if rng is not None else np.arange(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


def train_epoch(params, velocity, x, y, lr, momentum=0.9, batch_size=128, rng=None,
                max_steps=None, progress=None):
    """One pass over ``(x, y)`` (float32 (n, 784), integer labels) with momentum SGD.

    ``lr`` may be a number or a function ``step -> lr`` (step within the epoch).
    ``progress``: optional callable ``(step, loss)`` called after each step (e.g.
    to update a tqdm bar). Returns the mean training loss of the epoch.
    """
    total, count = 0.0, 0
    for step, idx in enumerate(iterate_minibatches(len(x), batch_size, rng)):
        if max_steps is not None and step >= max_steps:
            break
        xb = x[idx]
        yb = y[idx]
        loss, grads = loss_and_grads(params, xb, yb)
        sgd_momentum_step(params, grads, velocity, lr(step) if callable(lr) else lr, momentum)
        total += loss * len(idx)
        count += len(idx)
        if progress is not None:
            progress(step, loss)
    return total / max(count, 1)


def predict(params, x, batch_size=2000):
    """Class probabilities for ``x`` (float32 (n, 784))."""
    out = []
    for start in range(0, len(x), batch_size):
        logits, _ = forward(params, x[start:start + batch_size])
        out.append(softmax(logits))
    return np.concatenate(out)


def accuracy(params, x, y):
    """Fraction of ``x`` classified correctly."""
    return float(np.mean(predict(params, x).argmax(axis=1) == y))


def lr_schedule(epoch, epochs, base_lr=0.1):
    """Cosine decay from ``base_lr`` to 0 over ``epochs``, evaluated per epoch."""
    return float(base_lr * 0.5 * (1.0 + np.cos(np.pi * epoch / max(epochs, 1))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from aicslib.datasets import mnist

    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    x_train, x_test = preprocess(x_train), preprocess(x_test)
    y_train, y_test = y_train.astype(np.int64), y_test.astype(np.int64)
    params = init_params(args.seed)
    velocity = init_velocity(params)
    rng = np.random.default_rng(args.seed)
    for epoch in range(args.epochs):
        lr = lr_schedule(epoch, args.epochs, args.lr)
        t0 = time.perf_counter()
        loss = train_epoch(params, velocity, x_train, y_train, lr, args.momentum,
                           args.batch_size, rng)
        dt = time.perf_counter() - t0
        acc = accuracy(params, x_test, y_test)
        print(f"epoch {epoch + 1:2d}  lr {lr:.4f}  loss {loss:.4f}  "
              f"test acc {acc * 100:.2f}%  {dt:.2f} s/epoch", flush=True)


if __name__ == "__main__":
    main()
