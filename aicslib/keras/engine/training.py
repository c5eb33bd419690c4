"""``tf.keras.Model`` for subclassing (Keras's ``engine/training.py``), eager use.

A subclass creates layers in ``__init__`` and defines ``call``; the model finds
their weights through its attributes (``trainable_variables``), so a custom
training loop with ``GradientTape`` works as in TF's guides. ``save_weights`` /
``load_weights`` store the weights in order in a NumPy ``.npz`` archive (no
pickle; TF writes a checkpoint instead), with each weight's name and shape checked
on load.
"""
import inspect
import os
import time

import numpy as np

from ...eager.backprop import GradientTape
from ...framework.file_io import atomic_write
from ...framework.ops import convert_to_tensor
from ... import optimizers as _optimizers_namespace
from .. import losses as losses_module
from .. import metrics as metrics_module
from ..layers.base_layer import Layer

__all__ = ["Model", "History"]


class History:
    """What ``fit`` returns: ``history[name]`` lists the value of each epoch."""

    def __init__(self):
        self.history = {}
        self.epoch = []


def _weights_path(filepath):
    filepath = os.fspath(filepath)
    return filepath if filepath.endswith(".npz") else filepath + ".npz"


class Model(Layer):
    """Groups layers into an object with ``call``, ``trainable_variables`` and weight saving."""

    def __init__(self, *args, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise NotImplementedError("The functional Model(inputs, outputs) API is not implemented "
                                      "in aicslib; subclass Model and define call().")
        super().__init__(**kwargs)

    def __call__(self, inputs, *args, **kwargs):
        if not self.built:
            self.built = True  # a subclassed model's layers build themselves on the first call
        return Layer.__call__(self, inputs, *args, **kwargs)

    # ---- compile / fit / evaluate / predict (Keras's loop, eager, one GradientTape step per batch)
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, **kwargs):
        self.optimizer = _optimizers_namespace.get(optimizer)
        self.loss = losses_module.get(loss) if loss is not None else None
        self.compiled_metrics = [metrics_module.get(m, self.loss) for m in (metrics or [])]

    def _call_training(self, x, training):
        params = inspect.signature(self.call).parameters
        if "training" in params:
            return self(x, training=training)
        return self(x)

    def _batches(self, x, y, batch_size, shuffle):
        x, y = np.asarray(x), (None if y is None else np.asarray(y))
        order = np.random.permutation(len(x)) if shuffle else np.arange(len(x))
        for start in range(0, len(x), batch_size):
            idx = order[start:start + batch_size]
            yield x[idx], (None if y is None else y[idx])

    def _log_line(self, steps, seconds, logs):
        parts = [f"{steps}/{steps}", f"{seconds:.0f}s", f"{1000 * seconds / max(steps, 1):.0f}ms/step"]
        parts += [f"{k}: {v:.4f}" for k, v in sorted(logs.items())]
        return " - ".join(parts)

    def _check_compiled(self, what):
        if getattr(self, "loss", None) is None or getattr(self, "optimizer", None) is None:
            raise RuntimeError(f"You must call `compile()` before using the model ({what}).")

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, **kwargs):
        """Trains for ``epochs`` passes over NumPy ``x``/``y`` in batches (default 32)."""
        self._check_compiled("fit")
        batch_size = batch_size or 32
        history = History()
        steps = -(-len(x) // batch_size)
        for epoch in range(epochs):
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}")
            t0 = time.time()
            loss_mean = metrics_module.Mean()
            for m in self.compiled_metrics:
                m.reset_state()
            for xb, yb in self._batches(x, y, batch_size, shuffle):
                with GradientTape() as tape:
                    pred = self._call_training(convert_to_tensor(xb), True)
                    loss = self.loss(yb, pred)
                variables = self.trainable_variables
                grads = tape.gradient(loss, variables)
                self.optimizer.apply_gradients(zip(grads, variables))
                loss_mean.update_state(loss)
                for m in self.compiled_metrics:
                    m.update_state(yb, pred)
            logs = {"loss": float(loss_mean.result().numpy())}
            logs.update({m.name: float(m.result().numpy()) for m in self.compiled_metrics})
            if validation_data is not None:
                val = self.evaluate(*validation_data[:2], batch_size=batch_size, verbose=0,
                                    return_dict=True)
                logs.update({"val_" + k: v for k, v in val.items()})
            for k, v in logs.items():
                history.history.setdefault(k, []).append(v)
            history.epoch.append(epoch)
            if verbose:
                print(self._log_line(steps, time.time() - t0, logs))
        return history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", return_dict=False, **kwargs):
        """Mean loss (and metrics) over ``x``/``y``; prints a Keras-style line when verbose."""
        self._check_compiled("evaluate")
        batch_size = batch_size or 32
        t0 = time.time()
        loss_mean = metrics_module.Mean()
        for m in self.compiled_metrics:
            m.reset_state()
        for xb, yb in self._batches(x, y, batch_size, shuffle=False):
            pred = self._call_training(convert_to_tensor(xb), False)
            loss_mean.update_state(self.loss(yb, pred), sample_weight=len(xb))
            for m in self.compiled_metrics:
                m.update_state(yb, pred)
        logs = {"loss": float(loss_mean.result().numpy())}
        logs.update({m.name: float(m.result().numpy()) for m in self.compiled_metrics})
        if verbose:
            print(self._log_line(-(-len(x) // batch_size), time.time() - t0, logs))
        if return_dict:
            return logs
        return logs["loss"] if not self.compiled_metrics else [logs["loss"]] + \
            [logs[m.name] for m in self.compiled_metrics]

    def predict(self, x, batch_size=None, verbose="auto", **kwargs):
        batch_size = batch_size or 32
        outs = [self._call_training(convert_to_tensor(xb), False).numpy()
                for xb, _ in self._batches(x, None, batch_size, shuffle=False)]
        return np.concatenate(outs, axis=0)

    @property
    def layers(self):
        """The layers held directly by this model (Sequential: in order)."""
        if "_layers" in vars(self):
            return list(self._layers)
        return [m for m in self._flatten_layers()[1:]
                if any(m is v or (isinstance(v, (list, tuple)) and any(m is x for x in v))
                       for v in vars(self).values())]

    def summary(self, print_fn=print):
        print_fn(f'Model: "{self.name}"')
        for w in self.weights:
            print_fn(f"  {w.name:40s} {list(w.shape)}")
        print_fn(f"Total params: {sum(int(np.prod(w.shape)) for w in self.weights)}")

    def get_weights(self):
        return [w.numpy() for w in self.weights]

    def set_weights(self, weights):
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(f"You called `set_weights(weights)` on layer \"{self.name}\" with a weight "
                             f"list of length {len(weights)}, but the layer was expecting "
                             f"{len(mine)} weights.")
        for var, value in zip(mine, weights):
            value = np.asarray(value)
            if tuple(var.shape) != value.shape:
                raise ValueError(f"Layer {self.name} weight shape {tuple(var.shape)} is not compatible "
                                 f"with provided weight shape {value.shape}.")
            var.assign(value)

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None):
        """Writes every weight (``self.weights`` order) to ``filepath`` (+ ``.npz``), atomically."""
        path = _weights_path(filepath)
        arrays = {f"w{i}": v for i, v in enumerate(self.get_weights())}
        names = np.array([w.name for w in self.weights])
        atomic_write(path, lambda f: np.savez(f, __names__=names, **arrays))

    def load_weights(self, filepath, by_name=False, skip_mismatch=False, options=None):
        """Restores weights written by ``save_weights``; the model must have been called once."""
        path = _weights_path(filepath)
        with np.load(path, allow_pickle=False) as f:
            n = len(f["__names__"])
            values = [f[f"w{i}"] for i in range(n)]
        if not self.weights:
            raise ValueError(f"Unable to load weights into model \"{self.name}\": it has no weights yet "
                             f"(call it on a batch first, so that its layers are built).")
        self.set_weights(values)
