"""Writing a checkpoint, crash-safely (checkpoint_format.py says what the files are).

The index is what makes a checkpoint: it names its data file and
that file's SHA-256. Two files cannot be renamed at once, so saving (again) to a
prefix goes through a staged data file and two index commits, each an atomic
rename of an fsync'ed file (``framework/file_io.py``):

1. the values go to a new staged file ``.model-60.<random>.npz`` (fsync'ed);
2. commit 1: the index, naming the staged file, replaces ``model-60.index.json``;
3. ``model-60.npz`` is replaced by a hard link to (or copy of) the staged file;
4. commit 2: the index, naming ``model-60.npz``, replaces the index again;
5. the staged file is removed; then the meta graph and the state file are written.

Before commit 1 the old index still names the old, untouched data; after it,
the index names a complete file that nothing else writes to. A crash at any
point (tests/train/test_checkpoint_safety.py kills saves at every step and at random
times) therefore leaves the previous checkpoint or the new one, both loadable.
"""
import json
import os
import re
import secrets
import shutil

import numpy as np

from ..framework import dtypes as _dtypes, errors, file_io
from ..framework.string_values import to_bytes_array
from .checkpoint_format import DATA_SUFFIX, FORMAT, INDEX_SUFFIX, STRING_LENGTHS_SUFFIX, VERSION, sha256


def crash_point(step):
    """Called after each step of a save; tests replace it to crash a save at that step."""


def _index_text(index):
    return json.dumps(index, indent=1, sort_keys=True)


def _write_index(path, index):
    file_io.atomic_write(path, lambda f: f.write(_index_text(index)), binary=False)


def _staged_files(prefix):
    """Staged data files and temporary files a save to ``prefix`` may have left behind
    (one saver per prefix, as in TF: no other save to it can be under way)."""
    folder = os.path.dirname(os.path.abspath(prefix))
    base = re.escape(os.path.basename(prefix))
    pattern = re.compile(rf"(\.{base}\.[0-9a-f]{{16}}{re.escape(DATA_SUFFIX)}"
                         rf"|\.\.?{base}\.\S+\.tmp)$")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if pattern.match(n)]


def _remove_quietly(path):
    try:
        os.remove(path)
    except OSError:
        pass


def _link_or_copy(src, dst):
    """``dst`` becomes a file with ``src``'s bytes, atomically (through a temporary name)."""
    fd, tmp = file_io.temp_path_for(dst)
    os.close(fd)
    try:
        os.remove(tmp)
        try:
            os.link(src, tmp)
        except OSError:   # a filesystem without hard links: copy instead
            shutil.copyfile(src, tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
        os.replace(tmp, dst)
    except BaseException:
        _remove_quietly(tmp)
        raise


def write_checkpoint(prefix, values, global_step=None, extra=None):
    """Writes ``values`` ({name: ndarray or (ndarray, dtype name)}) under ``prefix``,
    crash-safely (see the module docstring). Returns the prefix."""
    prefix = os.fspath(prefix)
    folder = os.path.dirname(os.path.abspath(prefix))
    if not os.path.isdir(folder):
        raise ValueError(f"Parent directory of {prefix} doesn't exist, can't save.")
    arrays, entries = {}, {}
    for i, (name, value) in enumerate(sorted(values.items())):
        if isinstance(value, tuple):
            value, dtype_name = value
        else:
            dtype_name = None
        key = f"t{i}"
        if dtype_name == "string" or (dtype_name is None and isinstance(value, (bytes, str))):
            # Strings without pickle: all bytes in one uint8 member, their lengths in another.
            arr = to_bytes_array(value, f"variable '{name}'")
            arrays[key] = np.frombuffer(b"".join(arr.reshape(-1)), dtype=np.uint8)
            arrays[key + STRING_LENGTHS_SUFFIX] = np.array([len(b) for b in arr.reshape(-1)],
                                                           dtype=np.int64).reshape(arr.shape)
            entries[name] = {"key": key, "dtype": "string", "shape": list(arr.shape)}
            continue
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            raise TypeError(f"Cannot save variable '{name}' of dtype object: checkpoints hold "
                            f"numbers, bools and strings.")
        if dtype_name is None:
            dtype_name = _dtypes.as_dtype(arr.dtype).name
        arrays[key] = arr
        entries[name] = {"key": key, "dtype": dtype_name, "shape": list(arr.shape)}
    data_path = prefix + DATA_SUFFIX
    index_path = prefix + INDEX_SUFFIX
    staged = os.path.join(folder, f".{os.path.basename(prefix)}.{secrets.token_hex(8)}"
                                  f"{DATA_SUFFIX}")
    committed = False
    try:
        # 1. the values, under a name nothing else uses
        file_io.atomic_write(staged, lambda f: np.savez(f, **arrays))
        crash_point("data_staged")
        index = {"format": FORMAT, "version": VERSION, "data_file": os.path.basename(staged),
                 "data_sha256": sha256(staged), "global_step": global_step,
                 "variables": entries}
        if extra:
            index.update(extra)
        # 2. commit 1: the checkpoint now exists, reading the staged file
        _write_index(index_path, index)
        committed = True
        crash_point("index_staged")
        # 3. the data under its final name (the index still reads the staged file)
        try:
            _link_or_copy(staged, data_path)
        except OSError as e:
            raise errors.from_os_error(e, data_path) from e
        crash_point("data_linked")
        # 4. commit 2: the index names the final data file
        index["data_file"] = os.path.basename(data_path)
        _write_index(index_path, index)
        crash_point("index_final")
    except BaseException:
        if not committed:
            _remove_quietly(staged)
        raise
    # 5. debris of this save and of earlier crashed ones
    for path in _staged_files(prefix):
        _remove_quietly(path)
    file_io.fsync_directory(folder)
    crash_point("staged_removed")
    return prefix


def remove_checkpoint(prefix, meta_graph_suffix="meta"):
    # Index first: never an index without data. Then the data, and any staged data file
    # a crashed save left (the index may have named one).
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX, "." + meta_graph_suffix):
        _remove_quietly(prefix + suffix)
    for path in _staged_files(prefix):
        _remove_quietly(path)
