"""Plausible wrong answers for notebook 08 (op-registration), and other correct ones.

Each replaces the release stub of one exercise of the new-op lab (section 2):
``define_power_difference``, ``power_difference_kernel`` and ``power_difference_grad``; a wrong one
must lose its exercise's points inside its locked test cell, a correct one must score them. The
``Tan`` gradient moved with its section to notebook 09 (answers_09.py), the graph ``gradients``
lab is notebook 10 (answers_10.py).
"""

WRONG_ANSWERS = {
    "power_difference_opdef": {
        # the library's broadcasting shape function: not written by the student
        "calls_the_library_shape_fn": """
from aicslib.framework.common_shapes import broadcast_binary_op_shape
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: int = 2").set_shape_fn(broadcast_binary_op_shape))
""",
        "copies_the_reference": """
from workbook.references.power_difference import define_power_difference as reference
reference()
""",
        # the output has x's shape: no broadcasting
        "shape_of_x": """
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: int = 2").set_shape_fn(lambda ctx: ctx.input_shape(0)))
""",
        # an unknown dimension wins over a known one: [None, 3] and [3] give [None, None]
        "unknown_wins": """
def shape_fn(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    da, db = [1] * (n - a.rank) + list(a.dims), [1] * (n - b.rank) + list(b.dims)
    dims = []
    for p, q in zip(da, db):
        if p is None or q is None:
            dims.append(None)
        elif p != q and 1 not in (p, q):
            raise ValueError("dimensions do not broadcast")
        else:
            dims.append(max(p, q))
    return TensorShape(dims)
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: int = 2").set_shape_fn(shape_fn))
""",
        # aligned from the left instead of the right
        "aligned_from_the_left": """
def shape_fn(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    da, db = list(a.dims) + [1] * (n - a.rank), list(b.dims) + [1] * (n - b.rank)
    dims = []
    for p, q in zip(da, db):
        if p is not None and q is not None and p != q and 1 not in (p, q):
            raise ValueError("dimensions do not broadcast")
        known = [d for d in (p, q) if d is not None and d != 1]
        dims.append(known[0] if known else (1 if p == q == 1 else None))
    return TensorShape(dims)
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: int = 2").set_shape_fn(shape_fn))
""",
        # pow as a float attr without a default
        "pow_float_no_default": """
def shape_fn(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    da, db = [1] * (n - a.rank) + list(a.dims), [1] * (n - b.rank) + list(b.dims)
    dims = []
    for p, q in zip(da, db):
        known = [d for d in (p, q) if d is not None and d != 1]
        dims.append(known[0] if known else (1 if p == q == 1 else None))
    return TensorShape(dims)
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: float").set_shape_fn(shape_fn))
""",
        # incompatible shapes accepted: the larger dimension is taken
        "never_rejects": """
def shape_fn(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    da, db = [1] * (n - a.rank) + list(a.dims), [1] * (n - b.rank) + list(b.dims)
    dims = []
    for p, q in zip(da, db):
        known = [d for d in (p, q) if d is not None and d != 1]
        dims.append(max(known) if known else (1 if p == q == 1 else None))
    return TensorShape(dims)
(aics.register_op(OP).input("x: T").input("y: T").output("z: T")
    .attr("T: {half, float, double}").attr("pow: int = 2").set_shape_fn(shape_fn))
""",
    },
    "power_difference_kernel": {
        "y_minus_x": """
return np.power(y - x, pow)
""",
        "difference_of_powers": """
return np.power(x, pow) - np.power(y, pow)
""",
        "always_squared": """
return np.square(x - y)
""",
        # float64 out whatever came in
        "float64_out": """
return np.power(np.asarray(x, np.float64) - y, pow)
""",
        # an op inside the kernel: the library computes it
        "calls_the_library": """
return aics.pow(aics.constant(x) - aics.constant(y), float(pow)).numpy()
""",
        "copies_the_reference": """
from workbook.references.power_difference import power_difference_kernel as reference
return reference(x, y, pow)
""",
    },
    "power_difference_gradient": {
        # broadcasting not undone: the gradient of y has the broadcast shape
        "not_summed_to_shape": """
x, y = op.inputs
p = op.get_attr("pow")
dx = grad * float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1)
return dx, -dx
""",
        "dy_not_negated": """
x, y = op.inputs
p = op.get_attr("pow")
dx = grad * float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1)
return sum_to_shape(dx, x), sum_to_shape(dx, y)
""",
        "forgot_upstream_grad": """
x, y = op.inputs
p = op.get_attr("pow")
dx = float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1)
return sum_to_shape(dx, x), sum_to_shape(-dx, y)
""",
        "exponent_not_lowered": """
x, y = op.inputs
p = op.get_attr("pow")
dx = grad * float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p)
return sum_to_shape(dx, x), sum_to_shape(-dx, y)
""",
        # NumPy on eager values: fails when a graph is built
        "numpy_not_ops": """
x, y = op.inputs
p = op.get_attr("pow")
d = grad.numpy() * p * np.power(x.numpy() - y.numpy(), p - 1)
return sum_to_shape(aics.constant(d), x), sum_to_shape(aics.constant(-d), y)
""",
        # another op's registered gradient does the work (SquaredDifference is (x - y)^2)
        "library_gradient_of_another_op": """
x, y = op.inputs
p = op.get_attr("pow")
if aics.executing_eagerly():
    with aics.GradientTape() as t:
        t.watch([x, y])
        z = aics.pow(x - y, float(p))
    return t.gradient(z, [x, y], output_gradients=grad)
return aics.gradients(aics.pow(x - y, float(p)), [x, y], grad_ys=[grad])
""",
        "copies_the_reference": """
from workbook.references.power_difference import power_difference_grad as reference
return reference(op, grad)
""",
    },
}

CORRECT_ANSWERS = {
    "power_difference_opdef": {
        # the rule with TensorShape.dims padded by reversing, as TF's helper walks from the right
        "walks_from_the_right": """
def shape_fn(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    ra, rb = list(reversed(a.dims)), list(reversed(b.dims))
    out = []
    for i in range(max(len(ra), len(rb))):
        p = ra[i] if i < len(ra) else 1
        q = rb[i] if i < len(rb) else 1
        if p == 1:
            out.append(q)
        elif q == 1:
            out.append(p)
        elif p is None or q is None:
            out.append(q if p is None else p)
        elif p == q:
            out.append(p)
        else:
            raise ValueError(f"Dimensions must be equal, but are {p} and {q}")
    return TensorShape(list(reversed(out)))
b = aics.register_op(OP)
b.attr("pow: int = 2").attr("T: {float, half, double}")
b.input("x: T").input("y: T").output("z: T").set_shape_fn(shape_fn)
""",
    },
    "power_difference_kernel": {
        # float64 for the arithmetic, then cast back
        "float64_then_cast": """
d = np.asarray(x, np.float64) - np.asarray(y, np.float64)
return (d ** pow).astype(np.result_type(x, y))
""",
    },
    "power_difference_gradient": {
        # with Pow instead of the op itself, and dy from dx
        "with_pow_and_multiply": """
x, y = op.inputs
p = op.get_attr("pow")
diff = x - y
g = grad * (float(p) * aics.pow(diff, float(p - 1)) if p != 1 else aics.ones_like(diff))
return sum_to_shape(g, x), -sum_to_shape(g, y)
""",
    },
}
