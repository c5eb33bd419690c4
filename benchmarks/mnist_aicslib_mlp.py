"""The 784-300-100-10 MLP of exercise 5.12 in aicslib: graph + Session, and eager.

Used by ``benchmarks/bench_mnist.py`` and the tests; the notebook
``04-mnist-mlp.ipynb`` builds the same model inline for teaching. Both
versions start from the same initial weights as the hand-written NumPy MLP
(``mnist_numpy_mlp.init_params``), so their curves can be compared step by step.
"""
import numpy as np

import aicslib as aics


def relu(x):
    nn = getattr(aics, "nn", None)
    if nn is not None and hasattr(nn, "relu"):
        return nn.relu(x)
    return aics.maximum(x, 0.0)


def sparse_xent(labels, logits):
    """Mean softmax cross-entropy for integer labels (the fused nn op when available)."""
    nn = getattr(aics, "nn", None)
    if nn is not None and hasattr(nn, "sparse_softmax_cross_entropy_with_logits"):
        return aics.reduce_mean(nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
    # Composite fallback: log-sum-exp minus the true logit.
    m = aics.stop_gradient(aics.reduce_max(logits, axis=1, keepdims=True))
    z = logits - m
    lse = aics.log(aics.reduce_sum(aics.exp(z), axis=1))
    onehot = aics.one_hot(labels, 10, dtype=logits.dtype)
    return aics.reduce_mean(lse - aics.reduce_sum(onehot * z, axis=1))


def forward(params, x):
    """Logits of the MLP; ``params`` maps W1, b1, ... to Variables (or tensors)."""
    h1 = relu(aics.matmul(x, params["W1"]) + params["b1"])
    h2 = relu(aics.matmul(h1, params["W2"]) + params["b2"])
    return aics.matmul(h2, params["W3"]) + params["b3"]


def make_variables(init):
    """Variables named like the NumPy parameters, initialized from ``init`` (a dict)."""
    return {k: aics.Variable(v, name=k) for k, v in init.items()}


def build_graph(init, learning_rate=0.1, momentum=0.9):
    """Builds the training graph in the current default graph.

    Returns a dict: x, y (placeholders), lr (a placeholder with a default),
    params, logits, loss, accuracy, train_op, global_step.
    """
    x = aics.placeholder(aics.float32, [None, 784], name="x")
    y = aics.placeholder(aics.int64, [None], name="y")
    lr = aics.placeholder_with_default(np.float32(learning_rate), [], name="lr")
    params = make_variables(init)
    logits = forward(params, x)
    loss = sparse_xent(y, logits)
    correct = aics.equal(aics.argmax(logits, axis=1), y)
    accuracy = aics.reduce_mean(aics.cast(correct, aics.float32))
    global_step = aics.train.get_or_create_global_step()
    opt = aics.train.MomentumOptimizer(lr, momentum)
    train_op = opt.minimize(loss, global_step=global_step)
    return {"x": x, "y": y, "lr": lr, "params": params, "logits": logits, "loss": loss,
            "accuracy": accuracy, "train_op": train_op, "global_step": global_step,
            "optimizer": opt}


class EagerMLP:
    """The same model, eagerly: one ``train_step`` = tape, gradients, momentum update."""

    def __init__(self, init, learning_rate=0.1, momentum=0.9):
        self.params = make_variables(init)
        self.variables = [self.params[k] for k in ("W1", "b1", "W2", "b2", "W3", "b3")]
        self.lr = aics.Variable(np.float32(learning_rate), trainable=False, name="lr")
        self.optimizer = aics.train.MomentumOptimizer(self.lr, momentum)

    def __call__(self, x):
        return forward(self.params, x)

    def train_step(self, x, y):
        with aics.GradientTape() as tape:
            loss = sparse_xent(y, self(x))
        grads = tape.gradient(loss, self.variables)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return loss
