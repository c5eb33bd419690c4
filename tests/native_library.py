"""``library_fixture``: the fixture that hands a test module one C library of the speed layer
(aicslib/accel/c_*.py), skipping its tests, with the loader's reason, where it was not built
(a failure under CI=true: tests/conftest.py).

In a test module: ``lib = library_fixture(c_sgemm, "C SGEMM")``, then take ``lib`` as an argument.
"""
import pytest


def library_fixture(c_module, what, name="lib"):
    """A module-scoped fixture called ``name`` giving ``c_module.library()``."""
    @pytest.fixture(scope="module", name=name)
    def library():
        lib = c_module.library()
        if lib is None:
            pytest.skip(f"{what} unavailable: {c_module.fallback_reason()}")
        return lib
    return library
