"""Every environment variable aicslib reads, read here and nowhere else.

| variable              | meaning                                                        |
|-----------------------|----------------------------------------------------------------|
| AICS_MIN_LOG_LEVEL    | 0 all, 1 hide INFO, 2 hide WARNING, 3 hide ERROR (as TF_CPP_MIN_LOG_LEVEL) |
| AICS_MIN_VLOG_LEVEL   | VLOG(n) messages print when n <= this (TF_CPP_MIN_VLOG_LEVEL, TF 1.x/2.x's name, and TF_CPP_MAX_VLOG_LEVEL, TF 2.21's, also accepted) |
| AICS_FAST             | 1: notebooks and benchmarks take their small, quick setting (CI)   |
| AICS_ACCEL            | 0: the speed layer (aicslib/accel: C kernels, Winograd, threads, fused output stages) is off and every op runs its NumPy reference kernel; default 1 |
| AICS_ACCEL_ISA        | the instruction set the C kernels run: baseline, avx2, avx512 (default auto: the widest this CPU has); every one gives the same bits |
| AICS_CONV_ALGO        | force a Conv2D algorithm: direct, im2col, winograd (default: auto) |
| AICS_GEMM             | float32 GEMMs of the speed layer's conv kernels: native (aicslib's C SGEMM), blas (NumPy's); default auto = native where it was built |
| AICS_DEPTHWISE_ALGO   | the speed layer's depthwise conv: native (C kernels), numpy (its NumPy path); default auto = native where it was built |
| AICS_VISIBLE_DEVICES  | '0,2': the logical CPU devices a process sees, renumbered 0,1 (as CUDA_VISIBLE_DEVICES); unset: all |
| AICS_MPI_TIMEOUT      | seconds a collective (aicslib.distribute) waits for a peer before failing (default 60) |
| AICS_NATIVE_CC, AICS_NATIVE_CXX | C / C++ compiler for aicslib.native's teaching bindings, built at run time (default: $CC / $CXX, sysconfig's, cc / c++) |
| AICS_NATIVE_CACHE     | folder for aicslib.native's compiled libraries (default: $XDG_CACHE_HOME or ~/.cache, then aicslib/native) |

Call ``reload()`` after changing ``os.environ`` in a running process.
"""
import os

MIN_LOG_LEVEL = 0
MIN_VLOG_LEVEL = 0
FAST = False
CONV_ALGO = "auto"
DEPTHWISE_ALGO = "auto"
GEMM = "auto"
VISIBLE_DEVICES = None   # None: every configured device; else a tuple of device indices
MPI_TIMEOUT = 60.0
ACCEL = True
ACCEL_ISA = "auto"
#: Called with no argument after each ``reload()``: whoever caches a decision taken on a
#: variable (the kernel registry's choice of kernel, on AICS_ACCEL) takes it again.
on_reload = []


def _int(name, default):
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw.strip() else default
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} must be an integer.") from None


def _index_list(name):
    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        return tuple(int(x) for x in raw.replace(" ", "").split(",") if x != "")
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} must be a comma-separated list of "
                         f"device indices, e.g. '0,2'.") from None


def _float(name, default):
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw.strip() else default
    except ValueError:
        raise ValueError(f"Environment variable {name}={raw!r} must be a number of seconds.") from None


def reload():
    """Re-reads the environment variables above."""
    global MIN_LOG_LEVEL, MIN_VLOG_LEVEL, FAST, CONV_ALGO
    # TensorFlow's names are accepted as aliases (the AICS_ name wins when both are set).
    MIN_LOG_LEVEL = _int("AICS_MIN_LOG_LEVEL", _int("TF_CPP_MIN_LOG_LEVEL", 0))
    MIN_VLOG_LEVEL = _int("AICS_MIN_VLOG_LEVEL",
                          _int("TF_CPP_MAX_VLOG_LEVEL", _int("TF_CPP_MIN_VLOG_LEVEL", 0)))
    FAST = os.environ.get("AICS_FAST", "").strip().lower() in ("1", "true", "yes", "on")
    CONV_ALGO = os.environ.get("AICS_CONV_ALGO", "auto").strip().lower() or "auto"
    reload_distribute()
    reload_depthwise()
    reload_accel()
    for callback in on_reload:
        callback()


def reload_distribute():
    """The device and MPI variables (kept apart so the lines above stay as they were)."""
    global VISIBLE_DEVICES, MPI_TIMEOUT
    VISIBLE_DEVICES = _index_list("AICS_VISIBLE_DEVICES")
    MPI_TIMEOUT = _float("AICS_MPI_TIMEOUT", 60.0)


def reload_depthwise():
    """AICS_DEPTHWISE_ALGO and AICS_GEMM (kept apart so the lines above stay as they were)."""
    global DEPTHWISE_ALGO, GEMM
    DEPTHWISE_ALGO = os.environ.get("AICS_DEPTHWISE_ALGO", "auto").strip().lower() or "auto"
    GEMM = os.environ.get("AICS_GEMM", "auto").strip().lower() or "auto"


def reload_accel():
    """AICS_ACCEL and AICS_ACCEL_ISA (kept apart so the lines above stay as they were)."""
    global ACCEL, ACCEL_ISA
    ACCEL = os.environ.get("AICS_ACCEL", "1").strip().lower() not in ("0", "false", "no", "off")
    ACCEL_ISA = os.environ.get("AICS_ACCEL_ISA", "auto").strip().lower() or "auto"


def native_build_settings():
    """The variables aicslib.native builds with, read at each call rather than by ``reload()``:
    a build runs once per cache key, so there is nothing to save, and a changed compiler must
    be seen at once."""
    return {name: os.environ.get(name, "").strip() for name in _NATIVE_BUILD_VARIABLES}


_NATIVE_BUILD_VARIABLES = ("AICS_NATIVE_CC", "AICS_NATIVE_CXX", "AICS_NATIVE_CACHE", "CC", "CXX",
                           "XDG_CACHE_HOME")

reload()
