"""Switches that put a student's (or anyone's) implementation in place of the library's.

Each replaces one function behind a documented seam, for the duration of a
``with`` block, and every caller uses the replacement:

* ``use_planner(fn)``: how a Session plans a step,
  ``fn(targets, feeds, keep) -> (order, free_after)``
  (the contract: ``aicslib/framework/planner.py``);
* ``use_gradients(fn)``: how gradients over a graph are built,
  ``fn(ys, xs, grad_ys, stop_gradients) -> [gradient or None per x]``
  (the contract: ``aicslib/ops/gradients_impl.py``).

    with aics.experimental.use_planner(my_planner):
        sess.run(y, {x: 1.0})
"""
from .framework.session import use_planner  # noqa: F401
from .ops.gradients_impl import use_gradients  # noqa: F401

__all__ = ["use_gradients", "use_planner"]
