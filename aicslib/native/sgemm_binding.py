"""The speed layer's packed SGEMM, under the name notebook 05 imports it by.

It moved to ``aicslib.accel.c_sgemm`` (compiled at install, not at first use);
this module only keeps ``from aicslib.native import sgemm_binding`` working
until the notebook imports it from there.
"""
from ..accel.c_sgemm import fallback_reason, library, sgemm  # noqa: F401
