"""The 784-300-100-10 MNIST MLP that several chapters train (04 by hand and in aicslib, 17 mixed
precision, 18 sparse training): one data preparation, one initialisation and one NumPy forward pass,
so that the chapters start from the same weights and compare like with like.

The loss gradient and the backward pass are not here: writing them is chapter 04's exercise.
"""
import numpy as np

SIZES = (784, 300, 100, 10)


def preprocess(images):
    """uint8 images [N, 28, 28] -> float32 [N, 784] in [0, 1]."""
    images = np.asarray(images)
    return images.reshape(len(images), -1).astype(np.float32) / np.float32(255.0)


def load(train_n=None, test_n=None):
    """MNIST, flattened and scaled: (x_train, y_train, x_test, y_test), labels int64; the first
    ``train_n`` training and ``test_n`` test images when given."""
    from aicslib.datasets import mnist

    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    return (preprocess(x_train[:train_n]), y_train[:train_n].astype(np.int64),
            preprocess(x_test[:test_n]), y_test[:test_n].astype(np.int64))


def init_params(seed=0, sizes=SIZES):
    """Glorot-uniform weights (TensorFlow's default for dense layers) and zero biases, float32:
    {"W1", "b1", "W2", "b2", ...} for the layers ``sizes[0] -> sizes[1] -> ...``."""
    if len(sizes) < 2:
        raise ValueError(f"init_params needs at least an input and an output size, got sizes={sizes!r}")
    rng = np.random.default_rng(seed)
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params[f"W{i}"] = rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)
        params[f"b{i}"] = np.zeros(fan_out, np.float32)
    return params


def n_layers(params):
    return sum(1 for k in params if k.startswith("W"))


def forward(params, x):
    """(logits, cache): ReLU after every layer but the last; cache holds each layer's input
    (x, h1, h2, ...), what a backward pass needs."""
    cache, h = [], x
    n = n_layers(params)
    for i in range(1, n + 1):
        cache.append(h)
        h = h @ params[f"W{i}"] + params[f"b{i}"]
        if i < n:
            h = np.maximum(h, 0)
    return h, tuple(cache)


def accuracy(params, x, y):
    return float(np.mean(forward(params, x)[0].argmax(axis=1) == y))
