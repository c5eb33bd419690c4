"""Reference ``PowerDifference`` for notebook 08's lab (section 2): z = (x - y) ** pow, broadcasting
as NumPy (and TensorFlow's binary ops) do, ``pow`` an int attr (default 2), as in the AICS course lab.

- ``define_power_difference()`` registers the OpDef (inputs x, y: T; output z: T; T in {half, float, double};
  pow: int = 2) with ``power_difference_shape`` as its shape function;
- ``power_difference_shape(ctx)``: the broadcast of the two input shapes, dimension by dimension from the right,
  an unknown dimension staying unknown unless the other side fixes it (TF's
  ``BroadcastBinaryOpOutputShapeFn``), an unknown rank giving an unknown shape, and a ValueError
  naming both dimensions when they cannot broadcast;
- ``power_difference_kernel(x, y, pow)``: the CPU kernel, NumPy in and out, the inputs' dtype kept;
- ``power_difference_grad(op, grad)``: dz/dx = pow (x - y)^(pow - 1) = -dz/dy, written with the op itself, each
  summed over the dimensions its input was broadcast along;
- ``register(define, kernel, grad)``: all three in the registries (notebook 08 section 2.4, notebook 09's setup).

``broadcast_brute(a, b)`` is the shape rule spelled out for the checks: it asks NumPy for known
shapes and tries every value of an unknown dimension (1..4) for partial ones.
"""
import itertools

import numpy as np

import aicslib as aics
from aicslib.framework.tensor_shape import TensorShape
from aicslib.ops.math_grad import sum_to_shape

OP = "PowerDifference"


def power_difference_shape(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    da = [1] * (n - a.rank) + list(a.dims)
    db = [1] * (n - b.rank) + list(b.dims)
    out = []
    for p, q in zip(da, db):
        if p == 1 or p == q:
            out.append(q)
        elif q == 1 or q is None:
            out.append(p)
        elif p is None:
            out.append(q)
        else:
            raise ValueError(f"{OP}: dimensions must be equal or 1, but are {p} and {q}")
    return TensorShape(out)


def define_power_difference():
    (aics.register_op(OP)
        .input("x: T").input("y: T").output("z: T")
        .attr("T: {half, float, double}").attr("pow: int = 2")
        .set_shape_fn(power_difference_shape)
        .doc("Computes (x - y)^pow element-wise, with NumPy broadcasting."))


def power_difference_kernel(x, y, pow):
    return np.power(x - y, pow).astype(np.result_type(x, y), copy=False)


def power_difference_grad(op, grad):
    x, y = op.inputs
    p = op.get_attr("pow")
    dx = grad * float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1)
    return sum_to_shape(dx, x), sum_to_shape(-dx, y)


def register(define=define_power_difference, kernel=power_difference_kernel, grad=power_difference_grad):
    """Registers PowerDifference for the cells that use it (notebook 08's section 2.4 with the student's
    parts, notebook 09's setup with these references): ``define()`` for the OpDef, ``kernel`` as the
    float32 and float64 CPU kernel (half is allowed by the OpDef but gets no kernel) and ``grad`` as the
    gradient, after unregistering what was there, so the cell can run again. Returns (kernel, grad)."""
    for registry in (aics.op_def_registry, aics.kernel_registry, aics.gradient_registry):
        registry.unregister(OP)
    define()
    aics.register_kernel(OP, device="CPU", type_constraint={"T": [aics.float32, aics.float64]})(kernel)
    aics.RegisterGradient(OP)(grad)
    return kernel, grad


def broadcast_brute(a, b):
    """The static shape the broadcast of partial shapes ``a`` and ``b`` (lists with None, or None
    for an unknown rank) must have: a dimension is known when every way of filling the unknown
    ones (1..4) that NumPy accepts gives it one value. None for an unknown rank; raises ValueError
    when no filling broadcasts."""
    if a is None or b is None:
        return None
    holes = [i for i, d in enumerate(a + b) if d is None]
    results = []
    for fill in itertools.product(range(1, 5), repeat=len(holes)):
        dims = list(a + b)
        for i, v in zip(holes, fill):
            dims[i] = v
        try:
            results.append(np.broadcast_shapes(tuple(dims[:len(a)]), tuple(dims[len(a):])))
        except ValueError:
            pass
    if not results:
        raise ValueError(f"{a} and {b} do not broadcast")
    return [r[0] if len(set(r)) == 1 else None for r in zip(*results)]
