"""Notebook 18 (sparse training): references for the magnitude-mask exercise and the lab
"sparse training without a framework" (exercise 5.12), written independently of aicslib.

Masks. tfmot's rule (``pruning_impl.Pruning._update_mask``; aicslib's ``sparsity.magnitude_mask``):
to reach sparsity ``s`` on ``n`` weights, keep ``k = max(round(n (1 - s)), 1)`` of them, ``round``
computed in float32 and rounding halves to even as ``tf.round`` does (n = 10, s = 0.25: 7.5 -> 8;
s = 0.75: 2.5 -> 2). The threshold is the k-th largest ``|w|`` and every weight with
``|w| >= threshold`` is kept, so ties at the threshold keep more than k. ``keep`` decides each
weight on its own, without a sort: a weight survives exactly when fewer than k weights are
strictly larger in magnitude. O(n^2): for checking, not for training.

The lab. ``polynomial_decay`` is Zhu & Gupta's (2017) schedule with tfmot's step rules;
``masked_sgd_step`` one step of momentum SGD on the 784-300-100-10 MLP with the masks re-applied
after the update (tfmot: the optimizer sees dense gradients, then ``W = W * mask``);
``gradual_pruning`` the loop that recomputes the masks when the schedule says so. ``Recorder``
wraps the functions a student's loop is given, so the test sees when and how they were called
(its methods live in this package: a loop calling them is not "calling the library").
"""
import numpy as np

from workbook import mnist_mlp

LAYERS = ("W1", "W2", "W3")


def kept_count(n, sparsity):
    """k = max(round((1 - s) * n), 1), in float32, halves to even."""
    return max(int(np.round(np.float32(1.0 - np.float32(sparsity)) * np.float32(n))), 1)


def keep(weights, sparsity):
    """(boolean array of weights' shape: True where the weight survives, k)."""
    magnitudes = np.abs(np.asarray(weights, np.float64)).ravel()
    k = kept_count(magnitudes.size, sparsity)
    larger = (magnitudes[None, :] > magnitudes[:, None]).sum(axis=1)    # per weight: how many beat it
    return (larger < k).reshape(np.shape(weights)), k


def mask(weights, sparsity):
    """The 0/1 mask in the weights' dtype (the brute-force rule above; for small layers)."""
    return keep(weights, sparsity)[0].astype(np.asarray(weights).dtype)


def fast_mask(weights, sparsity):
    """The same mask by a sort: what the lab's training runs use on full-size layers."""
    w = np.asarray(weights)
    k = kept_count(w.size, sparsity)
    threshold = np.sort(np.abs(w), axis=None)[w.size - k]
    return (np.abs(w) >= threshold).astype(w.dtype)


def polynomial_decay(step, initial_sparsity, final_sparsity, begin_step, end_step, frequency=100, power=3):
    """(should_prune, sparsity) at ``step`` (end_step > begin_step): masks are recomputed at
    begin_step, begin_step + frequency, ... up to end_step included; the sparsity is
    final + (initial - final) (1 - p)^power with p = (step - begin) / (end - begin) clipped to [0, 1]."""
    should_prune = begin_step <= step <= end_step and (step - begin_step) % frequency == 0
    p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
    return bool(should_prune), final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - p) ** power


def polynomial_schedule(initial_sparsity, final_sparsity, begin_step, end_step, frequency=100, power=3):
    """``polynomial_decay`` with its settings bound: a ``schedule(step)`` for a training loop."""
    def schedule(step):
        return polynomial_decay(step, initial_sparsity, final_sparsity, begin_step, end_step, frequency, power)
    return schedule


def never_prune(step):
    """The schedule of a dense run."""
    return False, 0.0


def _forward(params, x):
    z1 = x @ params["W1"] + params["b1"]
    h1 = np.maximum(z1, 0)
    z2 = h1 @ params["W2"] + params["b2"]
    h2 = np.maximum(z2, 0)
    return h1, h2, h2 @ params["W3"] + params["b3"]


def logits(params, x):
    return _forward(params, x)[2]


def accuracy(params, x, y):
    return float(np.mean(logits(params, x).argmax(axis=1) == y))


def gradients(params, x, y):
    """(mean softmax cross-entropy, dense gradients of every parameter) for the MLP."""
    h1, h2, z = _forward(params, x)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n = x.shape[0]
    loss = -log_p[np.arange(n), y].mean()
    d = np.exp(log_p)
    d[np.arange(n), y] -= 1
    d /= n
    g = {"W3": h2.T @ d, "b3": d.sum(axis=0)}
    d = (d @ params["W3"].T) * (h2 > 0)        # ReLU passes the gradient where its output is > 0 (TF's ReluGrad)
    g["W2"], g["b2"] = h1.T @ d, d.sum(axis=0)
    d = (d @ params["W2"].T) * (h1 > 0)
    g["W1"], g["b1"] = x.T @ d, d.sum(axis=0)
    return loss, g


def masked_sgd_step(params, velocity, masks, x, y, lr, momentum):
    """One step, in place: v = momentum v + g (TF's MomentumOptimizer, dense g), p = p - lr v,
    then W = W * mask for the pruned layers. Returns the loss before the update."""
    loss, g = gradients(params, x, y)
    for k in params:
        velocity[k] = momentum * velocity[k] + g[k]
        params[k] = params[k] - lr * velocity[k]
        if k in masks:
            params[k] = params[k] * masks[k]
    return float(loss)


def gradual_pruning(params, batches, schedule, mask_fn, step_fn, lr=0.1, momentum=0.9):
    """Trains ``params`` in place on ``batches``; before step t, where schedule(t) says so, every
    W's mask becomes mask_fn(W, s) and the pruned weights are zeroed. Returns the masks."""
    masks = {k: np.ones_like(params[k]) for k in LAYERS}
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    for t, (x, y) in enumerate(batches):
        should_prune, s = schedule(t)
        if should_prune:
            for k in LAYERS:
                masks[k] = mask_fn(params[k], s)
                params[k] = params[k] * masks[k]
        step_fn(params, velocity, masks, x, y, lr, momentum)
    return masks


class Recorder:
    """The schedule, mask and step functions handed to a student's loop, with a record of the
    calls: ``masks`` holds (step index, layer shape, sparsity, mask) for every mask computed,
    the step index being the number of training steps run before it."""

    def __init__(self, schedule, mask_fn=fast_mask, step_fn=masked_sgd_step):
        self._schedule, self._mask, self._step = schedule, mask_fn, step_fn
        self.steps, self.masks, self.schedule_calls = 0, [], []

    def schedule(self, t):
        self.schedule_calls.append(t)
        return self._schedule(t)

    def mask(self, weights, s):
        m = self._mask(weights, s)
        self.masks.append((self.steps, np.shape(weights), float(s), np.array(m)))
        return m

    def step(self, params, velocity, masks, x, y, lr, momentum):
        self.steps += 1
        return self._step(params, velocity, masks, x, y, lr, momentum)


def init_params(seed, sizes=mnist_mlp.SIZES, dtype=np.float32):
    """The MLP chapters' Glorot-uniform weights and zero biases (``workbook.mnist_mlp.init_params``,
    one initialisation for chapters 04, 17 and 18), cast to ``dtype``."""
    return {k: v.astype(dtype) for k, v in mnist_mlp.init_params(seed, sizes).items()}


def batches(x, y, batch, epochs, seed):
    """Shuffled mini-batches, epoch after epoch (a generator: no copy of the whole run)."""
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for first in range(0, len(x), batch):
            idx = order[first:first + batch]
            yield x[idx], y[idx]
