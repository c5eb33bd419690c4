"""The speed layer's work sharder, under the name notebook 05 imports it by.

Threads, blocks and BLAS thread control are the speed layer's
(``aicslib.accel.work_sharder``); the reference kernels here use none of them.
This module only keeps ``from aicslib.kernels import work_sharder`` working
until the notebook imports it from there. Nothing in aicslib imports it.
"""
from ..accel.work_sharder import NUM_THREADS, SingleThreadedBlas  # noqa: F401
