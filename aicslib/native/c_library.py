"""A C source the kernels call through ctypes: compiled on first use, loaded once, or a reason why not.

aicslib's C kernels (``src/aics_depthwise.c``, ``src/aics_sgemm_packed.c``) are
optional: where no C compiler exists or the build fails, the kernels compute
with NumPy instead. ``CLibrary.get()`` returns the loaded ``ctypes.CDLL`` (its
functions' signatures declared) or None, and ``fallback_reason()`` then says why;
a failure is remembered, so the NumPy path is taken at once afterwards
(``reset()`` tries again, e.g. after installing a compiler).
"""
import ctypes
import os
import threading

from ..framework import logging
from . import build


class CLibrary:
    """One C source (plus headers) built into ``library_file`` with ``extra_flags``.

    ``declare(lib)`` sets the argtypes and restype of the functions callers use;
    ``purpose`` finishes the warning printed when a build fails ("depthwise
    convolution computes with NumPy instead").
    """

    def __init__(self, name, source, headers, library_file, extra_flags, declare, purpose):
        self.name, self.source, self.headers = name, source, tuple(headers)
        self.library_file, self.extra_flags = library_file, tuple(extra_flags)
        self.declare, self.purpose = declare, purpose
        self._lock = threading.Lock()
        self._lib, self._tried, self._reason = None, False, None

    def compile(self):
        """Path of the compiled library (built into the cache on first use).

        Raises ``build.CompilerNotFoundError`` without a compiler, ``build.BuildError`` when it fails.
        """
        compiler = build.find_compiler("c")
        sources = [build.source_path(self.source)] + [build.source_path(h) for h in self.headers]
        flags = list(build.BASE_FLAGS) + list(self.extra_flags)

        def steps(work):
            cmd = [compiler, *flags, *build.arch_flags(compiler, work), "-I", os.path.dirname(sources[0]),
                   sources[0], "-o", os.path.join(work, self.library_file)]
            build.run_compiler(cmd, work)

        folder = build.cached_build(self.name, (sources, [compiler], flags), steps)
        return os.path.join(folder, self.library_file)

    def load(self, path):
        """``ctypes.CDLL`` of the library at ``path`` with its functions declared."""
        lib = ctypes.CDLL(path)
        self.declare(lib)
        return lib

    def get(self):
        """The loaded library, or None when it cannot be built here (``fallback_reason()`` says why)."""
        if self._tried:
            return self._lib
        with self._lock:
            if not self._tried:
                try:
                    self._lib = self.load(self.compile())
                except build.CompilerNotFoundError as e:
                    self._reason = str(e)
                    logging.vlog(1, f"{self.purpose}: {e}")
                except (build.BuildError, OSError, AttributeError) as e:
                    self._reason = f"{type(e).__name__}: {e}"
                    logging.warning(f"aicslib.native: could not build {self.source} ({e}); "
                                    f"{self.purpose}.")
                self._tried = True
        return self._lib

    def fallback_reason(self):
        """Why ``get()`` is None (no compiler, a failed build), or None when it loaded."""
        return self._reason

    def reset(self):
        """Forget the library and the failure (after changing AICS_NATIVE_CC & co.)."""
        with self._lock:
            self._lib, self._tried, self._reason = None, False, None
