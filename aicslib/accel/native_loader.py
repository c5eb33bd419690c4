"""Loading the speed layer's C libraries, as ``native_libraries.LIBRARIES`` declares them.

The libraries are built at install (setup.py) into ``lib/`` beside this file. ``library(name)`` loads one
with ctypes on first use, declares its functions' argtypes and restype from the table and
selects the instruction set its calls run (``AICS_ACCEL_ISA``, else the widest this CPU
has); it returns None where the library was not built, and ``missing_reason(name)`` says
why. ``set_isa`` switches every loaded library at once (the tests run each version on the
same inputs); every version gives the same bits.
"""
import contextlib
import ctypes
import os
import threading
from importlib import machinery

from .. import flags
from ..framework import logging
from .native_libraries import ISAS, LIBRARIES, LIBRARY_DIR

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_DIR)
BY_NAME = {lib.name: lib for lib in LIBRARIES}

_lock = threading.Lock()
_told_isa = []      # the warning about an AICS_ACCEL_ISA this CPU cannot run, once
_loaded = {}        # name -> ctypes.CDLL, or None when it could not be loaded
_reasons = {}       # name -> why it could not be loaded


def library_path(name):
    """The built file of library ``name`` in ``FOLDER``, or None when it was not built."""
    for suffix in machinery.EXTENSION_SUFFIXES:
        path = os.path.join(FOLDER, name + suffix)
        if os.path.isfile(path):
            return path
    return None


def _load(spec):
    path = library_path(spec.name)
    if path is None:
        raise OSError(f"{spec.name} is not built (no {spec.name}{machinery.EXTENSION_SUFFIXES[0]} "
                      f"in {FOLDER})")
    lib = ctypes.CDLL(path)
    for fn_name, (restype, argtypes) in spec.functions.items():
        fn = getattr(lib, fn_name)
        fn.restype, fn.argtypes = restype, argtypes
    for suffix, argtypes in (("select_isa", [ctypes.c_int]), ("isa", [])):
        fn = getattr(lib, f"{spec.isa_prefix}_{suffix}")
        fn.restype, fn.argtypes = ctypes.c_int, argtypes
    try:
        _select(spec, lib, flags.ACCEL_ISA)
    except ValueError as e:
        raise ValueError(f"AICS_ACCEL_ISA={flags.ACCEL_ISA!r}: {e}") from None
    except RuntimeError as e:          # asked for more than this CPU has: the best it has, said once
        if not _told_isa:
            _told_isa.append(True)
            logging.warning(f"{e}; running the widest version it has instead (AICS_ACCEL_ISA).")
        _select(spec, lib, "auto")
    return lib


def library(name):
    """The loaded ``ctypes.CDLL`` of library ``name`` (``native_libraries``), or None."""
    try:
        return _loaded[name]
    except KeyError:
        pass
    with _lock:
        if name not in _loaded:
            try:
                _loaded[name] = _load(BY_NAME[name])
            except (OSError, AttributeError) as e:
                _loaded[name], _reasons[name] = None, str(e)
        return _loaded[name]


def missing_reason(name):
    """Why ``library(name)`` is None, or None when it loaded."""
    library(name)
    return _reasons.get(name)


@contextlib.contextmanager
def without_library(name, reason="left out on purpose"):
    """Inside the block, ``library(name)`` is None as where it was not built (``reason`` says
    why): the speed layer runs its NumPy paths (tests compare them with the C ones)."""
    library(name)
    with _lock:
        saved = _loaded[name], _reasons.get(name)
        _loaded[name], _reasons[name] = None, reason
    try:
        yield
    finally:
        with _lock:
            _loaded[name] = saved[0]
            if saved[1] is None:
                _reasons.pop(name, None)
            else:
                _reasons[name] = saved[1]


def missing_libraries():
    """The names of the libraries that cannot be loaded here."""
    return [lib.name for lib in LIBRARIES if library(lib.name) is None]


def _isa_code(isa):
    if isa in (None, "auto"):
        return -1
    if isa not in ISAS:
        raise ValueError(f"instruction set must be one of auto, {', '.join(ISAS)}; got {isa!r}")
    return ISAS.index(isa)


def _select(spec, lib, isa):
    got = getattr(lib, f"{spec.isa_prefix}_select_isa")(_isa_code(isa))
    if got < 0:
        raise RuntimeError(f"{spec.name}: this CPU cannot run the {isa} version of the C kernels")
    return ISAS[got]


def set_isa(isa="auto"):
    """Every C kernel runs ``isa`` ('baseline', 'avx2', 'avx512') from now on ('auto': the
    widest this CPU has). RuntimeError where this CPU cannot run it."""
    _isa_code(isa)                  # a bad name fails before any library changes
    for spec in LIBRARIES:
        lib = library(spec.name)
        if lib is not None:
            _select(spec, lib, isa)


def active_isa(name="libaics_sgemm"):
    """The instruction set library ``name``'s calls run, or None when it is not built."""
    lib = library(name)
    return None if lib is None else ISAS[getattr(lib, f"{BY_NAME[name].isa_prefix}_isa")()]


def supported_isas():
    """The instruction sets this CPU runs (empty when no C library is built)."""
    name = next((spec.name for spec in LIBRARIES if library(spec.name) is not None), None)
    if name is None:
        return []
    lib, prefix = library(name), BY_NAME[name].isa_prefix
    current = getattr(lib, f"{prefix}_isa")()
    select = getattr(lib, f"{prefix}_select_isa")
    runs = [isa for code, isa in enumerate(ISAS) if select(code) == code]
    select(current)
    return runs


_told = []


def report_missing():
    """Says once per process, through aicslib's log, that C kernels are missing and how to get them."""
    missing = missing_libraries()
    if not missing or _told:
        return
    _told.append(True)
    logging.warning(
        f"aicslib: the fast C kernels are not built ({', '.join(missing)} missing from {FOLDER}); "
        f"aicslib computes with NumPy instead, correctly but slower. To build them, install a C "
        f"compiler (gcc or clang) and reinstall aicslib (pip install -e .), or in a source tree run "
        f"'python setup.py build_ext --inplace'.")
