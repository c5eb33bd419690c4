"""``accel_on_off``: a fixture running a test twice, on the reference kernels and on the speed layer's.

Import it into a test module (``from accel_switch import accel_on_off  # noqa: F401``) and use it
by name, or for the whole module with ``pytestmark = pytest.mark.usefixtures("accel_on_off")``.
The test then sees every op run by the NumPy reference kernels of aicslib/kernels (``AICS_ACCEL=0``)
and by aicslib/accel's preferred kernels (its C kernels where they are built).
"""
import pytest

from aicslib import accel


@pytest.fixture(params=["reference", "accel"])
def accel_on_off(request):
    with accel.use_accel(request.param == "accel"):
        yield request.param
