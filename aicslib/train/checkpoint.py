"""Object-based checkpoints (TF2's ``tf.train.Checkpoint``), for eager code.

    ckpt = aics.train.Checkpoint(step=step, optimizer=opt, weights=[w1, b1, w2, b2])
    path = ckpt.save("ckpts/mlp")          # -> "ckpts/mlp-1", then -2, ...
    ckpt.restore(aics.train.latest_checkpoint("ckpts"))

Values are keyed by their *path* from the Checkpoint: ``weights/0``,
``optimizer/slots/0/momentum``... so a restore works in a fresh process as
long as the same structure is rebuilt. An optimizer's slots that do not exist
yet are restored when the optimizer creates them (deferred restoration, as
in TF2). Files are the same as ``Saver``'s (``.npz`` + ``.index.json`` +
``checkpoint``), written atomically.
"""
import os


from ..framework import dtypes, errors
from ..io import gfile
from ..ops.variables import Variable
from .optimizer import Optimizer
from .checkpoint_management import checkpoint_exists, get_checkpoint_state, update_checkpoint_state
from .checkpoint_reader import read_checkpoint
from .checkpoint_writer import write_checkpoint


def _collect(obj, path, out, optimizers):
    """Flattens ``obj`` into {path: Variable}; optimizers are handled separately."""
    if isinstance(obj, Variable):
        if path in out:
            raise ValueError(f"Two objects share the checkpoint path {path!r}.")
        out[path] = obj
    elif isinstance(obj, Optimizer):
        optimizers[path] = obj
    elif isinstance(obj, Checkpoint):
        for k, v in obj._objects.items():
            _collect(v, f"{path}/{k}", out, optimizers)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _collect(v, f"{path}/{k}", out, optimizers)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _collect(v, f"{path}/{i}", out, optimizers)
    elif hasattr(obj, "variables"):
        vs = obj.variables() if callable(obj.variables) else obj.variables
        _collect(list(vs), path, out, optimizers)
    elif hasattr(obj, "trainable_variables"):
        _collect(list(obj.trainable_variables), path, out, optimizers)
    else:
        raise TypeError(f"Checkpoint: cannot track {path!r} of type {type(obj).__name__}; "
                        f"use Variables, optimizers, lists/dicts of them, or objects with a "
                        f"'variables' attribute.")


class CheckpointLoadStatus:
    """What a restore matched: ``assert_consumed()`` checks everything was used."""

    def __init__(self, unused_in_checkpoint, missing_in_checkpoint, deferred):
        self.unused_in_checkpoint = sorted(unused_in_checkpoint)
        self.missing_in_checkpoint = sorted(missing_in_checkpoint)
        self.deferred = sorted(deferred)

    def assert_consumed(self):
        if self.missing_in_checkpoint:
            raise AssertionError(f"Objects not found in the checkpoint: "
                                 f"{self.missing_in_checkpoint}")
        if self.unused_in_checkpoint:
            raise AssertionError(f"Values in the checkpoint not matched to any object: "
                                 f"{self.unused_in_checkpoint}")
        return self

    def assert_existing_objects_matched(self):
        if self.missing_in_checkpoint:
            raise AssertionError(f"Objects not found in the checkpoint: "
                                 f"{self.missing_in_checkpoint}")
        return self

    def expect_partial(self):
        return self


class Checkpoint:
    """Groups trackable objects (keyword arguments) to save and restore them together."""

    def __init__(self, **objects):
        for k in objects:
            if k == "save_counter":
                raise ValueError("'save_counter' is reserved by Checkpoint.")
        self._objects = dict(objects)
        self._save_counter = None

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(name)

    @property
    def save_counter(self):
        """How many times ``save`` was called (a variable, saved with the checkpoint)."""
        if self._save_counter is None:
            self._save_counter = Variable(0, dtype=dtypes.int64, trainable=False,
                                          name="save_counter")
        return self._save_counter

    def _entries(self):
        out, optimizers = {}, {}
        for k, v in self._objects.items():
            _collect(v, k, out, optimizers)
        for path, opt in optimizers.items():
            out.update({f"{path}/{key}": var for key, var in opt.checkpoint_variables().items()})
        out["save_counter"] = self.save_counter
        return out, optimizers

    def write(self, file_prefix):
        """Writes a checkpoint at exactly ``file_prefix`` (no counter, no state file).

        Missing parent folders are created, as TF2's checkpoints do (TF1's ``Saver``
        refuses instead)."""
        folder = os.path.dirname(os.fspath(file_prefix))
        if folder:
            gfile.makedirs(folder)
        entries, _ = self._entries()
        values = {k: (v.numpy(), v.dtype.name) for k, v in entries.items()}
        return write_checkpoint(os.fspath(file_prefix), values)

    def save(self, file_prefix):
        """Saves to ``file_prefix-<n>`` (n = save_counter after incrementing); updates the
        ``checkpoint`` state file; returns the path."""
        counter = self.save_counter
        counter.assign(counter.numpy() + 1)
        prefix = f"{os.fspath(file_prefix)}-{int(counter.numpy())}"
        self.write(prefix)
        folder = os.path.dirname(os.path.abspath(prefix))
        state = get_checkpoint_state(folder)
        kept = [p for p in (state.all_model_checkpoint_paths if state else [])
                if checkpoint_exists(p) and os.path.abspath(p) != os.path.abspath(prefix)]
        update_checkpoint_state(folder, prefix, kept + [prefix])
        return prefix

    def read(self, save_path):
        return self.restore(save_path)

    def restore(self, save_path):
        """Restores the tracked objects from ``save_path``. Returns a status object.

        ``save_path=None`` (e.g. ``latest_checkpoint`` of an empty folder) restores
        nothing, as in TF2, so a training script can start fresh or resume."""
        if save_path is None:
            entries, _ = self._entries()
            return CheckpointLoadStatus([], [], [])
        values, index = read_checkpoint(save_path)
        saved_dtypes = {k: e["dtype"] for k, e in index["variables"].items()}
        entries, optimizers = self._entries()
        used, missing = set(), []
        for path, var in entries.items():
            if path not in values:
                missing.append(path)
                continue
            arr = values[path]
            if not var.shape.is_compatible_with(arr.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Checkpoint restore: shape mismatch for '{path}': the object "
                    f"has shape {var.shape}, the checkpoint holds {tuple(arr.shape)}.")
            if saved_dtypes[path] != var.dtype.name:
                raise errors.InvalidArgumentError(
                    None, None, f"Checkpoint restore: dtype mismatch for '{path}': "
                    f"{var.dtype.name} vs {saved_dtypes[path]} in the checkpoint.")
            used.add(path)
        for path in used:
            var = entries[path]
            var.assign(values[path].astype(var.dtype.as_numpy_dtype, copy=False))
        deferred = []
        for opt_path, opt in optimizers.items():
            pending = {}
            for key, arr in values.items():
                if key.startswith(opt_path + "/") and key not in used:
                    rest = key[len(opt_path) + 1:]
                    pending[rest] = arr
                    used.add(key)
                    deferred.append(key)
            opt.defer_restorations(pending)
        unused = [k for k in values if k not in used]
        if "save_counter" in missing:
            missing.remove("save_counter")
        return CheckpointLoadStatus(unused, missing, deferred)
