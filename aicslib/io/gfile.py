"""``tf.io.gfile``: file access with TensorFlow's names and errors (TF's lib/io/file_io.py).

TF routes these through its own file systems (local, GCS, HDFS); here they are
local files, with TF's error classes (a missing file raises ``NotFoundError``).
TF1's spellings (``Exists``, ``MakeDirs``, ``DeleteRecursively``...) are
``aics.compat.v1.gfile``, made of these functions.
"""
import glob as _glob
import os
import shutil

from ..framework import errors
from ..framework.missing_api import module_getattr

__getattr__ = module_getattr(__name__)


def _os_errors(path):
    class _Translate:
        def __enter__(self):
            return self

        def __exit__(self, et, ev, tb):
            if isinstance(ev, OSError):
                raise errors.from_os_error(ev, path) from None
            return False
    return _Translate()


class GFile:
    """A file object (``read``, ``write``, ``readline``, iteration, ``with``) over a local path."""

    def __init__(self, name, mode="r"):
        self.name, self.mode = os.fspath(name), mode
        with _os_errors(self.name):
            self._f = open(self.name, mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return iter(self._f)

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()

    def readlines(self):
        return self._f.readlines()

    def write(self, data):
        return self._f.write(data)

    def flush(self):
        self._f.flush()

    def seek(self, offset=None, whence=0, position=None):
        self._f.seek(position if offset is None else offset, whence)

    def tell(self):
        return self._f.tell()

    def size(self):
        return os.path.getsize(self.name)

    def close(self):
        self._f.close()


def exists(path):
    return os.path.exists(path)


def isdir(path):
    return os.path.isdir(path)


def listdir(path):
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    return sorted(os.listdir(path))


def makedirs(path):
    with _os_errors(path):
        os.makedirs(path, exist_ok=True)


def mkdir(path):
    with _os_errors(path):
        os.mkdir(path)


def glob(pattern):
    return sorted(_glob.glob(pattern))


def remove(path):
    with _os_errors(path):
        os.remove(path)


def rmtree(path):
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
    with _os_errors(path):
        shutil.rmtree(path)


def rename(oldname, newname, overwrite=False):
    if os.path.exists(newname) and not overwrite:
        raise errors.AlreadyExistsError(None, None, f"file already exists: {newname}")
    with _os_errors(oldname):
        os.replace(oldname, newname)


def copy(oldpath, newpath, overwrite=False):
    if os.path.exists(newpath) and not overwrite:
        raise errors.AlreadyExistsError(None, None, f"file already exists: {newpath}")
    with _os_errors(oldpath):
        shutil.copyfile(oldpath, newpath)


def walk(top, topdown=True, onerror=None):
    yield from os.walk(top, topdown=topdown, onerror=onerror)


def stat(path):
    with _os_errors(path):
        st = os.stat(path)

    class FileStatistics:
        length = st.st_size
        mtime_nsec = st.st_mtime_ns
        is_directory = os.path.isdir(path)
    return FileStatistics()


def join(path, *paths):
    """``os.path.join`` (TF's ``tf.io.gfile.join`` also joins URLs such as ``gs://``)."""
    return os.path.join(path, *paths)


def get_registered_schemes():
    """The file-system URL schemes understood: only local paths here (TF adds gs://, hdfs://...)."""
    return ["file"]


__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join", "listdir",
           "makedirs", "mkdir", "remove", "rename", "rmtree", "stat", "walk"]
