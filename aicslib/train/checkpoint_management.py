"""The ``checkpoint`` state file and ``tf.train.CheckpointManager`` (TF's
``python/checkpoint/checkpoint_management.py``).

The state file names the newest checkpoint of a folder and every one kept, in TF's text
format (``get_checkpoint_state``, ``latest_checkpoint``). ``CheckpointManager`` saves a
``Checkpoint`` as ``directory/ckpt-N`` (N: the checkpoint's save counter), keeps the state
file up to date and deletes the oldest checkpoints beyond ``max_to_keep``.
"""
import glob
import os
import re

from ..framework import file_io
from .checkpoint_format import INDEX_SUFFIX, STATE_FILENAME, strip_suffix

__all__ = ["CheckpointManager", "CheckpointState", "checkpoint_exists", "get_checkpoint_state",
           "latest_checkpoint", "update_checkpoint_state"]


class CheckpointState:
    """Contents of the ``checkpoint`` file: the newest checkpoint and all kept ones."""

    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)

    def __repr__(self):
        return (f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, "
                f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})")


def _state_path(checkpoint_dir, latest_filename=None):
    return os.path.join(checkpoint_dir, latest_filename or STATE_FILENAME)


def update_checkpoint_state(checkpoint_dir, model_checkpoint_path, all_model_checkpoint_paths,
                            latest_filename=None):
    def rel(p):
        p = os.path.abspath(p)
        d = os.path.abspath(checkpoint_dir)
        return os.path.relpath(p, d) if os.path.dirname(p) == d else p
    lines = [f'model_checkpoint_path: "{rel(model_checkpoint_path)}"']
    lines += [f'all_model_checkpoint_paths: "{rel(p)}"' for p in all_model_checkpoint_paths]
    file_io.atomic_write(_state_path(checkpoint_dir, latest_filename),
                  lambda f: f.write("\n".join(lines) + "\n"), binary=False)


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of ``checkpoint_dir``, or None when there is no state file."""
    if checkpoint_dir is None:
        return None
    path = _state_path(os.fspath(checkpoint_dir), latest_filename)
    if not os.path.isfile(path):
        return None
    model, all_paths = None, []
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$',
                         line)
            if not m:
                continue
            p = m.group(2)
            if not os.path.isabs(p):
                p = os.path.join(os.fspath(checkpoint_dir), p)
            if m.group(1) == "model_checkpoint_path":
                model = p
            else:
                all_paths.append(p)
    if model is None:
        return None
    return CheckpointState(model, all_paths)


def checkpoint_exists(prefix):
    """True when ``prefix`` names a complete checkpoint (its index exists)."""
    return os.path.isfile(strip_suffix(os.fspath(prefix)) + INDEX_SUFFIX)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in ``checkpoint_dir``; None when the folder is
    missing, empty or its newest checkpoint is incomplete."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None




class CheckpointManager:
    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if directory is None:
            raise ValueError("directory cannot be None.")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, "
                             f"got {max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        state = get_checkpoint_state(self._directory)
        self._kept = [p for p in (state.all_model_checkpoint_paths if state else [])
                      if checkpoint_exists(p)]

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """Paths of the checkpoints this manager keeps, oldest first."""
        return list(self._kept)

    @property
    def latest_checkpoint(self):
        return self._kept[-1] if self._kept else None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a new checkpoint; returns its path (``directory/ckpt-N``)."""
        os.makedirs(self._directory, exist_ok=True)
        counter = self._checkpoint.save_counter
        counter.assign(counter.numpy() + 1)
        number = int(counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._kept = [p for p in self._kept if os.path.abspath(p) != os.path.abspath(path)] + [path]
        if self._max_to_keep is not None:
            while len(self._kept) > self._max_to_keep:
                for f in glob.glob(glob.escape(self._kept.pop(0)) + ".*"):
                    os.remove(f)
        update_checkpoint_state(self._directory, path, self._kept)
        return path

    def restore_or_initialize(self):
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        return None
