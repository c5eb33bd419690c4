"""TF1's MomentumOptimizer update, as TensorFlow documents it, in NumPy: the reference the lab in
notebook 03 ("a TF1 optimizer with slots") is graded against.

TensorFlow's documentation states the rule three times, and the three agree:

- ``tf.compat.v1.train.MomentumOptimizer``: "accumulation = momentum * accumulation + gradient;
  variable -= learning_rate * accumulation", the accumulator a slot starting at zero, and with
  ``use_nesterov=True`` the Nesterov form (Sutskever et al., 2013);
- ``tf.raw_ops.ApplyMomentum`` / ``ResourceApplyMomentum``: "accum = accum * momentum + grad,
  var -= lr * accum"; with use_nesterov the kernel (core/kernels/training_ops.cc) computes
  ``var -= grad * lr + accum * momentum * lr`` with the *new* accum;
- ``tf.raw_ops.SparseApplyMomentum``: "That is for rows we have grad for, we update var and
  accum as follows: accum = accum * momentum + grad; var -= lr * accum": rows without a gradient
  keep their accum and var (a lazy update). ``Optimizer.apply_gradients`` sums the values of
  duplicate indices first (``_apply_sparse_duplicate_indices``).

Computed in float64 from the float32 inputs: the student's float32 graph is compared within a few
float32 roundings.
"""
import numpy as np


def momentum_dense(var, accum, grad, lr, momentum, use_nesterov=False):
    """One dense step: (new var, new accum)."""
    var, accum, grad = (np.asarray(a, np.float64) for a in (var, accum, grad))
    accum = momentum * accum + grad
    step = lr * (grad + momentum * accum) if use_nesterov else lr * accum
    return var - step, accum


def momentum_sparse(var, accum, values, indices, lr, momentum, use_nesterov=False):
    """One sparse step on the rows ``indices`` (duplicates summed first): (new var, new accum)."""
    var, accum = np.array(var, np.float64), np.array(accum, np.float64)
    indices = np.asarray(indices, np.int64).reshape(-1)
    summed = np.zeros_like(var)
    np.add.at(summed, indices, np.asarray(values, np.float64))
    rows = np.unique(indices)
    var[rows], accum[rows] = momentum_dense(var[rows], accum[rows], summed[rows], lr, momentum, use_nesterov)
    return var, accum
