"""Fused ops that Grappler's remapper and elementwise fusion create (TF's internal ``_Fused*`` ops).

As in TensorFlow, these have no public Python wrapper: a user writes
``conv2d`` + ``bias_add`` + ``relu``, and ``aicslib/grappler`` replaces the
three nodes by one ``_FusedConv2D`` before the Session runs them. The
definitions follow TF's ``core/ops/nn_ops.cc`` (``_FusedConv2D``,
``_FusedDepthwiseConv2dNative``) and ``core/ops/math_ops.cc`` (``_FusedMatMul``):
the main inputs, then ``args`` (the bias; or scale, offset, mean, variance for
a fused batch norm), and ``fused_ops`` naming what follows the contraction.
``_FusedElementwise`` is aicslib's own (XLA's loop fusion, as an op).

Kernels: ``kernels/conv_ops_fused_impl.py``, ``kernels/matmul_op_fused.py``,
``kernels/cwise_ops_fused.py``.
"""
from ..framework import cwise_table
from ..framework.common_shapes import broadcast_shapes, matmul_shape
from ..framework.gradient_registry import no_gradient
from ..framework.op_def import op_def_registry, register_op

_FLOAT = "{float, double}"

#: What may follow the contraction in ``fused_ops``, as TF's CPU kernels accept it.
FUSED_OPS = (("BiasAdd",), ("BiasAdd", "Relu"), ("BiasAdd", "Relu6"), ("BiasAdd", "Elu"),
             ("FusedBatchNorm",), ("FusedBatchNorm", "Relu"), ("FusedBatchNorm", "Relu6"),
             ("FusedBatchNorm", "Elu"))
#: Ops a ``_FusedElementwise`` program may use: the fusable rows of framework/cwise_table.py.
ELEMENTWISE_PROGRAM_OPS = tuple(row.op for row in cwise_table.ROWS if row.fusable)


class _AsOp:
    """A shape-inference context seen as another op type (to reuse that op's shape function)."""

    def __init__(self, ctx, op_type):
        self._ctx = ctx
        self.op_type = op_type
        self.name = ctx.name

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def _check_fused_ops(ctx):
    fused = tuple(ctx.attr("fused_ops"))
    if fused not in FUSED_OPS:
        raise ValueError(f"Unsupported fused_ops {list(fused)}; supported: {[list(f) for f in FUSED_OPS]}")
    want = 1 if fused[0] == "BiasAdd" else 4
    if ctx.attr("num_args") != want:
        raise ValueError(f"fused_ops {list(fused)} takes {want} args, got num_args={ctx.attr('num_args')}")


def _like(op_type):
    def shape_fn(ctx):
        _check_fused_ops(ctx)
        return op_def_registry.lookup(op_type).shape_fn(_AsOp(ctx, op_type))
    return shape_fn


def _fused_conv_op(name):
    return (register_op(name).input("input: T").input("filter: T").input("args: num_args * T")
            .output("output: T").attr(f"T: {_FLOAT}").attr("num_args: int >= 0")
            .attr("strides: list(int)").attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
            .attr("explicit_paddings: list(int) = []").attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
            .attr("dilations: list(int) = [1, 1, 1, 1]").attr("use_cudnn_on_gpu: bool = true")
            .attr("fused_ops: list(string) = []").attr("epsilon: float = 0.0001")
            .attr("leakyrelu_alpha: float = 0.2"))


_fused_conv_op("_FusedConv2D").set_shape_fn(_like("Conv2D"))
_fused_conv_op("_FusedDepthwiseConv2dNative").set_shape_fn(_like("DepthwiseConv2dNative"))


def _fused_matmul_shape(ctx):
    _check_fused_ops(ctx)
    return matmul_shape(ctx)


register_op("_FusedMatMul").input("a: T").input("b: T").input("args: num_args * T").output("product: T") \
    .attr("transpose_a: bool = false").attr("transpose_b: bool = false").attr(f"T: {_FLOAT}") \
    .attr("num_args: int >= 0").attr("fused_ops: list(string) = []").attr("epsilon: float = 0.0001") \
    .attr("leakyrelu_alpha: float = 0.2").set_shape_fn(_fused_matmul_shape)


def _elementwise_shape(ctx):
    program = list(ctx.attr("ops"))
    if not program:
        raise ValueError("_FusedElementwise needs at least one instruction in 'ops'")
    for ins in program:
        if ins.split(" ")[0] not in ELEMENTWISE_PROGRAM_OPS:
            raise ValueError(f"_FusedElementwise: unknown instruction {ins!r}; ops allowed: "
                             f"{', '.join(ELEMENTWISE_PROGRAM_OPS)}")
    shape = ctx.input_shape(0)
    for i in range(1, ctx.num_inputs):
        shape = broadcast_shapes(shape, ctx.input_shape(i))
    return shape


register_op("_FusedElementwise").input("args: N * T").output("output: T").attr("N: int >= 1") \
    .attr(f"T: {_FLOAT}").attr("ops: list(string)").set_shape_fn(_elementwise_shape)

# As in TF, the fused ops have no gradient: Grappler creates them in the graph that runs,
# after ``gradients()`` has been built from the unfused ops.
no_gradient("_FusedConv2D")
no_gradient("_FusedDepthwiseConv2dNative")
no_gradient("_FusedMatMul")
no_gradient("_FusedElementwise")
