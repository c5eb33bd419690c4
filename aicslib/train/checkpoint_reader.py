"""Reading a checkpoint, trusting nothing in it (checkpoint_format.py says what the files are),
and TF's ``tf.train.list_variables`` / ``load_variable`` / ``load_checkpoint``
(python/training/checkpoint_utils.py).

Nothing in a checkpoint is trusted on reading: the index is checked against a
schema, its data file must lie in the checkpoint's folder, and only the
archive members the index names are read, after their declared sizes were
checked against the index; any violation is a ``DataLossError`` naming the file.
"""
import json
import os
import re
import zipfile

import numpy as np

from ..framework import dtypes as _dtypes, errors
from .checkpoint_format import (FORMAT, INDEX_SUFFIX, STATE_FILENAME, STRING_LENGTHS_SUFFIX, VERSION, sha256,
                                strip_suffix)
from .checkpoint_management import latest_checkpoint

MAX_INDEX_BYTES = 64 << 20        # an index lists names and shapes: far below this
MAX_NPY_HEADER_BYTES = 1 << 16    # NumPy's own limit for .npy headers it reads safely
MAX_DEFLATE_RATIO = 1032          # deflate cannot compress better than ~1032:1

DataLossError = errors.DataLossError


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
    prefix = strip_suffix(os.fspath(prefix))
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
    digest = sha256(data_path)
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
    except Exception as e:
        raise DataLossError(None, None, f"Checkpoint {prefix!r}: cannot read {data_path!r} "
                                        f"({type(e).__name__}: {str(e)[:200]}).") from None
    return values, index


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
