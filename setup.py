"""Builds the speed layer's C kernels (aicslib/accel/src) with the package; the rest is pyproject.toml.

``pip install -e .`` and ``pip wheel .`` compile one shared library per entry of
``aicslib/accel/native_libraries.py`` for the architecture's baseline (each holds its own
AVX2 / AVX-512 versions, picked at run time), into aicslib/accel/lib.
They are loaded with ctypes, not imported: no Python C API, so one build serves every
Python 3 of the platform.

The build never fails the install: where there is no C compiler, or a library does not
compile, it is left out with a message, and aicslib runs on NumPy (``import aicslib`` says
so once, and how to get the fast kernels). After editing a .c or .h file, developers rebuild
in place with ``python setup.py build_ext --inplace`` (README, developer notes).
"""
import importlib.util
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

HERE = os.path.dirname(os.path.abspath(__file__))
ACCEL = os.path.join("aicslib", "accel")


def library_table():
    """aicslib/accel/native_libraries.py, read by path: importing aicslib needs numpy."""
    spec = importlib.util.spec_from_file_location("aicslib_native_libraries",
                                                  os.path.join(HERE, ACCEL, "native_libraries.py"))
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    return table


class OptionalBuildExt(build_ext):
    """build_ext that leaves out what does not compile instead of failing the install."""

    failures = (CCompilerError, ExecError, PlatformError, OSError)

    def run(self):
        try:
            super().run()
        except self.failures as e:          # no compiler at all: nothing could even start
            self.left_out("the C kernels", e)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except self.failures as e:
            self.left_out(ext.name, e)

    def copy_extensions_to_source(self):
        # an in-place build copies into aicslib/accel/lib, which git does not keep
        for ext in self.extensions:
            path = self.get_ext_fullpath(ext.name)
            package_dir = self.get_finalized_command("build_py").get_package_dir(".".join(ext.name.split(".")[:-1]))
            os.makedirs(package_dir or os.path.dirname(path), exist_ok=True)
        super().copy_extensions_to_source()

    def get_export_symbols(self, ext):
        # ctypes libraries, not CPython modules: no PyInit_<name> to export
        return ext.export_symbols

    @staticmethod
    def left_out(what, error):
        print(f"aicslib: {what} not built ({type(error).__name__}: {error}); aicslib will compute "
              f"with NumPy. Install a C compiler (gcc or clang) and reinstall to get them.",
              file=sys.stderr)


def extensions():
    table = library_table()
    src = os.path.join(ACCEL, table.SOURCE_DIR)
    # in a folder without __init__.py: not a package, so nothing walking aicslib's modules
    # (pkgutil) tries to import the libraries as Python extensions
    return [Extension(f"aicslib.accel.{table.LIBRARY_DIR}.{lib.name}",
                      sources=[os.path.join(src, s) for s in lib.sources],
                      depends=[os.path.join(src, h) for h in lib.headers],
                      include_dirs=[src],
                      extra_compile_args=list(table.COMPILE_ARGS),
                      extra_link_args=list(table.LINK_ARGS),
                      libraries=list(table.LIBRARIES_NEEDED),
                      optional=True)       # what did not build is left out of the copies and the wheel
            for lib in table.LIBRARIES]


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
