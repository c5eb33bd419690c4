"""Switches that put a student's (or anyone's) implementation in place of the library's.

Each replaces one function behind a documented seam, for the duration of a
``with`` block, and every caller uses the replacement:

* ``use_planner(fn)``: how a Session plans a step,
  ``fn(targets, feeds, keep) -> (order, free_after)``
  (the contract: ``aicslib/framework/planner.py``);
* ``use_gradients(fn)``: how gradients over a graph are built,
  ``fn(ys, xs, grad_ys, stop_gradients) -> [gradient or None per x]``
  (the contract: ``aicslib/ops/gradients_impl.py``);
* ``use_kernel(op_type, fn, device="CPU")``: the kernel an op runs on a device, ``fn`` taking
  the op's inputs and attrs as the registered kernels do (``aics.introspect.kernel_source``
  shows one), above every registered kernel;
* ``registration_scope()``: op definitions, kernels and gradients registered inside the block
  (or until ``scope.restore()``) are gone after it, and the registries are as before.

    with aics.experimental.use_planner(my_planner):
        sess.run(y, {x: 1.0})
"""
from .framework.session import use_planner
from .ops.gradients_impl import use_gradients
from .framework.kernel_registry import kernel_registry as _kernel_registry
from .framework.registration_scope import registration_scope

use_kernel = _kernel_registry.use

__all__ = ["registration_scope", "use_gradients", "use_kernel", "use_planner"]
