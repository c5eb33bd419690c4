"""Numerical gradient checking, as tf.test.compute_gradient (gradient_checker_v2).

``compute_gradient(f, [x])`` returns ``(theoretical, numerical)``: for each
argument, the Jacobian of f's output with respect to it as a 2-D array of
shape (y_size, x_size). The theoretical one comes from the registered
gradients (one GradientTape pass per output element); the numerical one from
central differences with the inputs in float64.
"""
import numpy as np

from ..framework import dtypes
from ..framework.eager import EagerTensor
from .backprop import GradientTape


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _to_eager(a, dtype):
    return EagerTensor(np.asarray(a, dtype=dtype.as_numpy_dtype), dtype)


def compute_gradient(f, x, delta=None):
    """(theoretical, numerical) Jacobians of ``f(*x)`` for each argument in ``x``."""
    xs = [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in _as_list(x)]
    in_dtypes = [dtypes.as_dtype(a.dtype) if a.dtype.kind == "f" else dtypes.float64 for a in xs]
    if delta is None:
        delta = 1e-6 if all(dt == dtypes.float64 for dt in in_dtypes) else 1e-3
    y0 = f(*[_to_eager(a, dt) for a, dt in zip(xs, in_dtypes)])
    y_shape = np.shape(y0.numpy())
    y_size = int(np.prod(y_shape))
    y_dtype = y0.dtype
    theoretical = [np.zeros((y_size, a.size), dtype=np.float64) for a in xs]
    for row in range(y_size):
        args = [_to_eager(a, dt) for a, dt in zip(xs, in_dtypes)]
        with GradientTape() as tape:
            for a in args:
                tape.watch(a)
            y = f(*args)
        dy = np.zeros(y_size, dtype=y_dtype.as_numpy_dtype)
        dy[row] = 1
        grads = tape.gradient(y, args, output_gradients=[dy.reshape(y_shape)])
        for j, g in enumerate(grads):
            if g is not None:
                theoretical[j][row, :] = np.asarray(g.numpy(), dtype=np.float64).reshape(-1)
    numerical = [np.zeros((y_size, a.size), dtype=np.float64) for a in xs]
    for j, a in enumerate(xs):
        base = np.asarray(a, dtype=np.float64)
        for col in range(a.size):
            plus, minus = base.copy().reshape(-1), base.copy().reshape(-1)
            plus[col] += delta
            minus[col] -= delta
            def run(v):
                args = [_to_eager(b, dt) for b, dt in zip(xs, in_dtypes)]
                args[j] = _to_eager(v.reshape(a.shape), in_dtypes[j])
                return np.asarray(f(*args).numpy(), dtype=np.float64).reshape(-1)
            numerical[j][:, col] = (run(plus) - run(minus)) / (2 * delta)
    return theoretical, numerical


def max_error(grad1, grad2):
    """Largest absolute difference between two lists of Jacobians."""
    err = 0.0
    for a, b in zip(_as_list(grad1), _as_list(grad2)):
        if np.shape(a) != np.shape(b):
            raise ValueError(f"Jacobian shapes differ: {np.shape(a)} vs {np.shape(b)}")
        if np.size(a):
            err = max(err, float(np.max(np.abs(np.asarray(a) - np.asarray(b)))))
    return err
