"""Saver and checkpoint files (TF's python/training/saver.py, checkpoint_management.py).

A checkpoint with prefix ``dir/model-60`` is two files, plus the graph when
there is one, and the directory keeps a small state file, as in TensorFlow:

* ``model-60.npz`` -- the values, a NumPy archive (loaded with ``allow_pickle=False``;
  no pickle anywhere);
* ``model-60.index.json`` -- the index: every variable's name, dtype, shape and
  key in the archive, the archive's file name and its SHA-256;
* ``model-60.meta`` -- for graph variables (``Saver.save(write_meta_graph=True)``,
  the default): the meta graph, TF's MetaGraphDef as JSON: the GraphDef (as
  ``Graph.as_graph_def()``, so ``aics.import_graph_def(meta["graph_def"])``
  rebuilds the graph), the saver's variables and the graph's collections by name;
* ``checkpoint`` -- which checkpoints exist, newest last (TF's text format)::

      model_checkpoint_path: "model-60"
      all_model_checkpoint_paths: "model-50"
      all_model_checkpoint_paths: "model-60"

Crash safety. The index is what makes a checkpoint: it names its data file and
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
point (tests/test_checkpoint_safety.py kills saves at every step and at random
times) therefore leaves the previous checkpoint or the new one, both loadable.

Nothing in a checkpoint is trusted on reading: the index is checked against a
schema, its data file must lie in the checkpoint's folder, and only the
archive members the index names are read, after their declared sizes were
checked against the index; any violation is a ``DataLossError`` naming the file.
"""
import hashlib
import json
import os
import re
import secrets
import shutil
import zipfile

import numpy as np

from ..framework import context, dtypes as _dtypes, errors, file_io, logging
from ..framework.string_values import to_bytes_array

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists",
           "list_variables", "load_variable", "load_checkpoint", "DataLossError",
           "CheckpointState"]

FORMAT = "aicslib-checkpoint"
META_GRAPH_FORMAT = "aicslib-meta-graph"
VERSION = 1
DATA_SUFFIX = ".npz"
INDEX_SUFFIX = ".index.json"
STATE_FILENAME = "checkpoint"
STRING_LENGTHS_SUFFIX = "_len"    # a string variable's byte lengths, beside its bytes
MAX_INDEX_BYTES = 64 << 20        # an index lists names and shapes: far below this
MAX_NPY_HEADER_BYTES = 1 << 16    # NumPy's own limit for .npy headers it reads safely
MAX_DEFLATE_RATIO = 1032          # deflate cannot compress better than ~1032:1


DataLossError = errors.DataLossError  # re-exported for aics.train users


def _crash_point(step):
    """Called after each step of a save; tests replace it to crash a save at that step."""


# -- atomic files (each written through file_io.atomic_write) ----------------------------------

def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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
        _crash_point("data_staged")
        index = {"format": FORMAT, "version": VERSION, "data_file": os.path.basename(staged),
                 "data_sha256": _sha256(staged), "global_step": global_step,
                 "variables": entries}
        if extra:
            index.update(extra)
        # 2. commit 1: the checkpoint now exists, reading the staged file
        _write_index(index_path, index)
        committed = True
        _crash_point("index_staged")
        # 3. the data under its final name (the index still reads the staged file)
        try:
            _link_or_copy(staged, data_path)
        except OSError as e:
            raise errors.from_os_error(e, data_path) from e
        _crash_point("data_linked")
        # 4. commit 2: the index names the final data file
        index["data_file"] = os.path.basename(data_path)
        _write_index(index_path, index)
        _crash_point("index_final")
    except BaseException:
        if not committed:
            _remove_quietly(staged)
        raise
    # 5. debris of this save and of earlier crashed ones
    for path in _staged_files(prefix):
        _remove_quietly(path)
    file_io.fsync_directory(folder)
    _crash_point("staged_removed")
    return prefix


def _strip_suffix(path):
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


# -- reading, trusting nothing ----------------------------------------------------------------

def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _index_problem(index):
    """What is wrong with a parsed index (a sentence), or None when it fits the schema."""
    if not isinstance(index, dict):
        return f"the index is a JSON {type(index).__name__}, not an object"
    if index.get("format") != FORMAT:
        return f"'format' is {index.get('format')!r}, expected {FORMAT!r}"
    if index.get("version") != VERSION or not _is_int(index.get("version")):
        return f"'version' is {index.get('version')!r}, expected {VERSION}"
    data_file = index.get("data_file")
    if not isinstance(data_file, str) or not data_file:
        return f"'data_file' is {data_file!r}, expected a file name"
    if (os.path.basename(data_file) != data_file or data_file in (".", "..")
            or "/" in data_file or "\\" in data_file or "\0" in data_file
            or os.path.isabs(data_file)):
        return (f"'data_file' {data_file!r} is not a plain file name in the checkpoint's "
                f"folder (paths outside the folder are refused)")
    sha = index.get("data_sha256")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        return f"'data_sha256' is {str(sha)[:80]!r}, expected 64 hexadecimal digits"
    step = index.get("global_step")
    if step is not None and not _is_int(step):
        return f"'global_step' is {str(step)[:80]!r}, expected an integer or null"
    variables = index.get("variables")
    if not isinstance(variables, dict):
        return f"'variables' is a {type(variables).__name__}, expected an object"
    keys = set()
    for name, entry in variables.items():
        if not isinstance(entry, dict):
            return f"the entry of variable {name!r} is a {type(entry).__name__}, expected an object"
        key, dtype, shape = entry.get("key"), entry.get("dtype"), entry.get("shape")
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_]{1,64}", key):
            return f"variable {name!r}: 'key' is {str(key)[:80]!r}, expected an archive member name"
        members = [key] + ([key + STRING_LENGTHS_SUFFIX] if dtype == "string" else [])
        for member in members:
            if member in keys:
                return f"variable {name!r}: key {member!r} is used by two variables"
            keys.add(member)
        try:
            dt = _dtypes.as_dtype(dtype) if isinstance(dtype, str) else None
        except TypeError:
            dt = None
        if dt is None or not (dt.is_numeric or dt.is_bool or dt == _dtypes.string) \
                or dt.name != dtype:
            return (f"variable {name!r}: 'dtype' is {str(dtype)[:80]!r}, expected a numeric, bool "
                    f"or string dtype name")
        if not isinstance(shape, list) or len(shape) > 64 \
                or not all(_is_int(d) and 0 <= d < 2 ** 62 for d in shape):
            return (f"variable {name!r}: 'shape' is {str(shape)[:80]}, expected a list of "
                    f"non-negative integers")
    return None


def read_index(prefix):
    prefix = _strip_suffix(os.fspath(prefix))
    index_path = prefix + INDEX_SUFFIX
    if not os.path.isfile(index_path):
        hint = ""
        folder = os.path.dirname(os.path.abspath(prefix))
        if os.path.isdir(folder) and os.path.isfile(os.path.join(folder, STATE_FILENAME)):
            hint = f" (the latest checkpoint in that folder is {latest_checkpoint(folder)!r})"
        raise errors.NotFoundError(
            None, None, f"Failed to find any matching files for {prefix}: no checkpoint index "
            f"{os.path.basename(index_path)!r}{hint}. Pass the checkpoint prefix returned by "
            f"save(), e.g. aics.train.latest_checkpoint(dir).")
    try:
        with open(index_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = f.read(min(size, MAX_INDEX_BYTES) + 1)  # sized: read(n) allocates n bytes
    except OSError as e:
        raise errors.from_os_error(e, index_path) from e
    if size > MAX_INDEX_BYTES or len(raw) > MAX_INDEX_BYTES:
        raise DataLossError(None, None, f"Checkpoint index {index_path!r} is corrupted: larger "
                                        f"than {MAX_INDEX_BYTES} bytes.")
    try:
        index = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:   # UnicodeDecodeError is a ValueError
        raise DataLossError(None, None, f"Checkpoint index {index_path!r} is corrupted "
                                        f"({type(e).__name__}: {str(e)[:200]}).") from None
    problem = _index_problem(index)
    if problem is not None:
        raise DataLossError(None, None, f"Checkpoint index {index_path!r} is not a valid aicslib "
                                        f"checkpoint index: {problem}.")
    return prefix, index


def _read_member(zf, data_path, name, entry):
    """Reads one archive member, checking its declared sizes before allocating anything."""
    member = entry["key"] + ".npy"
    expected_dtype = np.dtype(_dtypes.as_dtype(entry["dtype"]).as_numpy_dtype)
    shape = tuple(entry["shape"])
    nbytes = int(np.prod(shape, dtype=np.int64)) * expected_dtype.itemsize if shape else \
        expected_dtype.itemsize
    where = f"data file {data_path!r}, variable '{name}' (member {member!r})"
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise DataLossError(None, None, f"Checkpoint {where}: the member is missing.") from None
    if not nbytes <= info.file_size <= nbytes + MAX_NPY_HEADER_BYTES:
        raise DataLossError(None, None, f"Checkpoint {where}: the archive declares "
                                        f"{info.file_size} bytes, the index's shape {list(shape)} "
                                        f"of {entry['dtype']} needs {nbytes} plus a header.")
    if info.compress_type != zipfile.ZIP_STORED \
            and info.file_size > MAX_DEFLATE_RATIO * max(info.compress_size, 1):
        raise DataLossError(None, None, f"Checkpoint {where}: declares {info.file_size} bytes "
                                        f"from {info.compress_size} compressed bytes, more than "
                                        f"any real archive.")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            header = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_NPY_HEADER_BYTES)
        elif version in ((2, 0), (3, 0)):
            header = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_NPY_HEADER_BYTES)
        else:
            raise ValueError(f"unknown .npy format version {version}")
        got_shape, fortran, got_dtype = header
        if got_dtype.hasobject:
            raise DataLossError(None, None, f"Checkpoint {where}: holds Python objects "
                                            f"(pickle), which checkpoints never contain.")
        if tuple(got_shape) != shape or got_dtype.itemsize != expected_dtype.itemsize \
                or got_dtype.kind not in (expected_dtype.kind, "V"):
            raise DataLossError(None, None, f"Checkpoint {where}: holds {got_dtype} of shape "
                                            f"{list(got_shape)}, the index says {entry['dtype']} "
                                            f"of shape {list(shape)}.")
        arr = np.empty(shape[::-1] if fortran else shape, dtype=got_dtype)
        view = memoryview(arr.reshape(-1).view(np.uint8)) if arr.size else memoryview(b"")
        got = 0
        while got < len(view):
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
        if got != nbytes:
            raise DataLossError(None, None, f"Checkpoint {where}: truncated, {got} of {nbytes} "
                                            f"bytes.")
    if fortran:
        arr = arr.T
    if got_dtype != expected_dtype:
        arr = arr.view(expected_dtype)
    return arr


def _read_entry(zf, data_path, name, entry):
    """One variable's value; a string variable is rebuilt from its lengths and bytes."""
    if entry["dtype"] != "string":
        return _read_member(zf, data_path, name, entry)
    lengths = _read_member(zf, data_path, name, {"key": entry["key"] + STRING_LENGTHS_SUFFIX,
                                                 "dtype": "int64", "shape": entry["shape"]})
    if (lengths < 0).any():
        raise DataLossError(None, None, f"Checkpoint data file {data_path!r}, variable '{name}': "
                                        f"negative string lengths.")
    total = int(lengths.sum(dtype=np.int64))
    blob = _read_member(zf, data_path, name, {"key": entry["key"], "dtype": "uint8",
                                              "shape": [total]}).tobytes()
    out = np.empty(lengths.shape, dtype=object)
    offset = 0
    for i, n in enumerate(lengths.reshape(-1).tolist()):
        out.flat[i] = blob[offset:offset + n]
        offset += n
    return out


def read_checkpoint(prefix):
    """Returns ({name: ndarray}, index) for the checkpoint ``prefix``, verifying the data."""
    prefix, index = read_index(prefix)
    folder = os.path.dirname(os.path.abspath(prefix))
    data_path = os.path.join(folder, index["data_file"])
    # A symlink may not lead the data file out of the folder either.
    if os.path.dirname(os.path.realpath(data_path)) != os.path.realpath(folder):
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: data file {data_path!r} "
                                        f"resolves outside the checkpoint's folder; refused.")
    if not os.path.isfile(data_path):
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: data file {data_path!r} is "
                                        f"missing.")
    digest = _sha256(data_path)
    if digest != index["data_sha256"]:
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: data file {data_path!r} is "
                                        f"corrupted (SHA-256 {digest[:12]}..., the index says "
                                        f"{index['data_sha256'][:12]}...).")
    values = {}
    try:
        with zipfile.ZipFile(data_path) as zf:
            for name, entry in index["variables"].items():
                values[name] = _read_entry(zf, data_path, name, entry)
    except errors.OpError:
        raise
    except Exception as e:  # noqa: BLE001 - zipfile.BadZipFile, ValueError, OSError, zlib.error
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: cannot read {data_path!r} "
                                        f"({type(e).__name__}: {str(e)[:200]}).") from None
    return values, index


# -- the checkpoint state file --------------------------------------------------------------

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
    return os.path.isfile(_strip_suffix(os.fspath(prefix)) + INDEX_SUFFIX)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in ``checkpoint_dir``; None when the folder is
    missing, empty or its newest checkpoint is incomplete."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None


def list_variables(ckpt_dir_or_file):
    """``[(name, shape), ...]`` of a checkpoint (a prefix or a folder: its latest one)."""
    _, index = read_index(_resolve(ckpt_dir_or_file))
    return [(name, list(e["shape"])) for name, e in sorted(index["variables"].items())]


def load_variable(ckpt_dir_or_file, name):
    """The value of one variable in a checkpoint, as a NumPy array."""
    values, _ = read_checkpoint(_resolve(ckpt_dir_or_file))
    name = name[:-2] if name.endswith(":0") else name
    if name not in values:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                               f"{ckpt_dir_or_file}.")
    return values[name]


def load_checkpoint(ckpt_dir_or_file):
    """All values of a checkpoint as a dict {name: ndarray}."""
    return read_checkpoint(_resolve(ckpt_dir_or_file))[0]


def _resolve(ckpt_dir_or_file):
    p = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(p):
        latest = latest_checkpoint(p)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {p}")
        return latest
    return p


def _remove_checkpoint(prefix, meta_graph_suffix="meta"):
    # Index first: never an index without data. Then the data, and any staged data file
    # a crashed save left (the index may have named one).
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX, "." + meta_graph_suffix):
        _remove_quietly(prefix + suffix)
    for path in _staged_files(prefix):
        _remove_quietly(path)


# -- Saver ------------------------------------------------------------------------------------

def _var_name(v):
    name = v.name
    return name[:-2] if name.endswith(":0") else name


class Saver:
    """Saves and restores variables (TF 1.x ``tf.train.Saver``).

    ``var_list``: None (all global variables of the default graph), a list of
    variables (saved under their names) or a dict {name: variable}.
    ``max_to_keep``: how many recent checkpoints to keep (None or 0: all files are kept and,
    as in TF, none is recorded: ``last_checkpoints`` stays empty and the state file lists
    only the newest).
    ``sharded``: TF writes one shard per device the variables are placed on; when
    they all share one device that is a single shard, the same files as unsharded,
    so True is accepted then and raises NotImplementedError otherwise.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        from ..ops.variables import Variable, global_variables
        if var_list is None:
            if context.executing_eagerly():
                raise RuntimeError("When eager execution is enabled, `var_list` must specify a "
                                   "list or dict of variables to save")
            var_list = global_variables()
        if isinstance(var_list, dict):
            items = list(var_list.items())
        else:
            items = []
            for v in var_list:
                items.append((_var_name(v), v))
        self._vars = {}
        for name, v in items:
            if not isinstance(v, Variable):
                raise TypeError(f"Saver: {name!r} is not a aics.Variable but "
                                f"{type(v).__name__}.")
            if name in self._vars:
                raise ValueError(f"At least two variables have the same name: {name}")
            self._vars[name] = v
        if not self._vars and not allow_empty:
            raise ValueError("No variables to save")
        if sharded:
            devices = sorted({v.device for v in self._vars.values()})
            if len(devices) > 1:
                raise NotImplementedError(
                    f"Saver(sharded=True) would write one checkpoint shard per device, and "
                    f"these variables are on {len(devices)} devices "
                    f"({', '.join(repr(d) for d in devices)}); aicslib writes every checkpoint "
                    f"as one .npz data file with one index. Pass sharded=False: restoring "
                    f"works the same.")
        self._max_to_keep = max_to_keep
        self._pad_step_number = pad_step_number
        self._last_checkpoints = []

    @property
    def last_checkpoints(self):
        """Prefixes of the checkpoints this Saver keeps, oldest first."""
        return list(self._last_checkpoints)

    def set_last_checkpoints(self, last_checkpoints):
        self._last_checkpoints = list(last_checkpoints)

    def recover_last_checkpoints(self, checkpoint_paths):
        self._last_checkpoints = [p for p in checkpoint_paths if checkpoint_exists(p)]

    @property
    def var_list(self):
        return dict(self._vars)

    def _values(self, sess):
        names = list(self._vars)
        variables = [self._vars[n] for n in names]
        if sess is None:
            if any(v.graph is not None for v in variables):
                raise ValueError("Saver.save/restore need a session for graph variables.")
            arrays = [v.numpy() for v in variables]
        else:
            arrays = sess.run(variables)
        return {n: (a, v.dtype.name) for n, a, v in zip(names, arrays, variables)}

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables; returns the checkpoint prefix (``save_path-<step>``).

        With ``write_meta_graph`` (the default, as in TF) and graph variables, also
        writes ``<prefix>.<meta_graph_suffix>``, the graph as JSON (see the module
        docstring); eager variables have no graph to write, as in TF.
        ``strip_default_attrs`` leaves attrs at their default value out of it.
        """
        if save_debug_info:
            raise NotImplementedError(
                "Saver.save(save_debug_info=True) is not supported: aicslib records no "
                "stack traces of the ops it builds to save. Pass save_debug_info=False.")
        save_path = os.fspath(save_path)
        if not os.path.isdir(os.path.dirname(os.path.abspath(save_path))):
            # TF names the path it was given, before the step number is appended
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        step = None
        if global_step is not None:
            if isinstance(global_step, (int, np.integer)):
                step = int(global_step)
            elif sess is not None and getattr(global_step, "graph", None) is not None:
                step = int(sess.run(global_step))
            else:
                step = int(np.asarray(global_step))
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            prefix = save_path
        values = self._values(sess)
        write_checkpoint(prefix, values, global_step=step)
        if write_meta_graph:
            # TF writes <prefix>.meta by default (the graph, for import_meta_graph), so a student
            # expects the file next to the values: here JSON (no pickle), read back with
            # aics.import_graph_def(meta["graph_def"]).
            graph = sess.graph if sess is not None else None
            if graph is None:
                graph = next((v.graph for v in self._vars.values() if v.graph is not None), None)
            if graph is not None:
                self._write_meta_graph(graph, f"{prefix}.{meta_graph_suffix}",
                                       strip_default_attrs)
                _crash_point("meta_written")
        if write_state:
            removed = []
            if self._max_to_keep:
                if prefix in self._last_checkpoints:
                    self._last_checkpoints.remove(prefix)
                self._last_checkpoints.append(prefix)
                while len(self._last_checkpoints) > self._max_to_keep:
                    removed.append(self._last_checkpoints.pop(0))
                listed = self._last_checkpoints
            else:
                # TF (_RecordLastCheckpoint): with max_to_keep None or 0 the Saver records no
                # checkpoint, so none is deleted, last_checkpoints stays empty and the state
                # file lists only the newest one.
                listed = [prefix]
            folder = os.path.dirname(os.path.abspath(prefix))
            update_checkpoint_state(folder, prefix, listed, latest_filename)
            _crash_point("state_written")
            for old in removed:
                _remove_checkpoint(old, meta_graph_suffix)
        return prefix

    def _write_meta_graph(self, graph, path, strip_default_attrs):
        """Writes the meta graph as JSON; warns (and writes none) for a graph that
        cannot be written as JSON, so the checkpoint itself still counts."""
        try:
            graph_def = graph.as_graph_def()
            if strip_default_attrs:
                # as_graph_def lists nodes in graph.get_operations() order.
                for op, node in zip(graph.get_operations(), graph_def["node"]):
                    for a in op.op_def.attr:
                        if a.has_default and a.type != "tensor" \
                                and op.get_attr(a.name) == a.default_value:
                            node["attr"].pop(a.name, None)
            collections = {}
            for key in graph.get_all_collection_keys():
                names = [item.name for item in graph.get_collection(key)
                         if isinstance(getattr(item, "name", None), str)]
                if names:
                    collections[str(key)] = names
            meta = {"format": META_GRAPH_FORMAT, "version": VERSION,
                    "meta_info_def": {"stripped_default_attrs": bool(strip_default_attrs)},
                    "graph_def": graph_def, "saver_def": self.as_saver_def(),
                    "collection_def": collections}
            text = json.dumps(meta, indent=1)
        except (TypeError, ValueError) as e:
            logging.warning(f"Saver.save: the meta graph {path!r} was not written, the graph "
                            f"cannot be written as JSON ({e}). The checkpoint itself is "
                            f"complete; pass write_meta_graph=False to skip the meta graph.")
            return
        file_io.atomic_write(path, lambda f: f.write(text), binary=False)

    def restore(self, sess, save_path):
        """Restores every variable of this Saver from the checkpoint ``save_path``."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        values, index = read_checkpoint(save_path)
        prefix = _strip_suffix(os.fspath(save_path))
        entries = index["variables"]
        missing = [n for n in self._vars if n not in values]
        if missing:
            raise errors.NotFoundError(
                None, None, f"Restoring from checkpoint failed: key {missing[0]} not found in "
                f"checkpoint {prefix}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                         else "") +
                f". The checkpoint holds: {', '.join(sorted(values)) or 'nothing'}. The graph "
                f"may have changed since the checkpoint was written.")
        for name, var in self._vars.items():
            arr = values[name]
            want = var.shape
            if not want.is_compatible_with(arr.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: shape mismatch for "
                    f"variable '{name}': the variable has shape {want}, the checkpoint "
                    f"{prefix} holds shape {tuple(arr.shape)}.")
            saved_dtype = entries[name]["dtype"]
            if saved_dtype != var.dtype.name:
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring from checkpoint failed: dtype mismatch for variable "
                    f"'{name}': the variable is {var.dtype.name}, the checkpoint {prefix} "
                    f"holds {saved_dtype}.")
        for name, var in self._vars.items():
            arr = values[name].astype(var.dtype.as_numpy_dtype, copy=False)
            if var.graph is None:
                var.assign(arr)
            else:
                if sess is None:
                    raise ValueError("Saver.restore needs a session for graph variables.")
                var.load(arr, sess)

    def as_saver_def(self):
        return {"version": VERSION, "max_to_keep": self._max_to_keep,
                "variables": sorted(self._vars)}

    def __repr__(self):
        return f"<aics.train.Saver {len(self._vars)} variables, max_to_keep={self._max_to_keep}>"
