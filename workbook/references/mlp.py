"""Notebook 04 (MNIST MLP by hand): the softmax cross-entropy gradient and backpropagation through
the 784-300-100-10 network.

The network is ``h1 = relu(x W1 + b1)``, ``h2 = relu(h1 W2 + b2)``, ``z = h2 W3 + b3``; the
notebook's ``loss_and_dlogits`` gives ``dL/dz`` (the batch mean already divided in). Going back
layer by layer, a dense layer ``out = a W + b`` turns the upstream gradient ``d`` into

    dL/dW = a^T d,   dL/db = sum of d over the batch,   dL/da = d W^T,

and a ReLU passes the gradient only where its output was positive (``h > 0``).
"""
import numpy as np


def loss_and_dlogits(logits, y):
    """The fused softmax + cross-entropy of a batch: (mean loss as a Python float, dL/dlogits =
    (softmax(logits) - onehot(y)) / N in logits' dtype); the softmax with each row's max subtracted."""
    z = np.asarray(logits)
    n = len(y)
    shifted = z - z.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = float(np.mean(log_sum[:, 0] - shifted[np.arange(n), y]))
    d = np.exp(shifted - log_sum)
    d[np.arange(n), y] -= 1
    return loss, (d / n).astype(z.dtype, copy=False)


def mlp_backward(params, cache, dlogits):
    """The six gradients {W1, b1, W2, b2, W3, b3} of the loss, given the forward cache
    ``(x, h1, h2)`` and ``dlogits = dL/dz``; each has its parameter's shape and dtype."""
    x, h1, h2 = cache
    grads = {"W3": h2.T @ dlogits, "b3": dlogits.sum(axis=0)}
    dh2 = (dlogits @ params["W3"].T) * (h2 > 0)
    grads["W2"], grads["b2"] = h1.T @ dh2, dh2.sum(axis=0)
    dh1 = (dh2 @ params["W2"].T) * (h1 > 0)
    grads["W1"], grads["b1"] = x.T @ dh1, dh1.sum(axis=0)
    return {k: np.asarray(g, dtype=params[k].dtype) for k, g in grads.items()}
