"""Resource-variable ops (TF's core/ops/resource_variable_ops.cc).

VarHandleOp yields a handle; ReadVariableOp reads through it; the Assign*
ops replace the value. Kernels: aicslib/kernels/variable_ops.py.
"""
from ..framework.common_shapes import scalar_shape
from ..framework.eager import EagerTensor
from ..framework.op_def import register_op
from ..framework.tensor_shape import TensorShape

_T = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool, complex64, complex128}"
_T_ANY = _T[:-1] + ", string}"   # TF's "dtype: type": string variables too (no AssignAdd)

register_op("VarHandleOp").output("resource: resource").attr("container: string = ''") \
    .attr("shared_name: string = ''").attr(f"dtype: {_T_ANY}").attr("shape: shape") \
    .set_is_stateful().set_shape_fn(scalar_shape)
register_op("ReadVariableOp").input("resource: resource").output("value: dtype").attr(f"dtype: {_T_ANY}") \
    .set_is_stateful().set_shape_fn(lambda ctx: _handle_shape(ctx))
register_op("AssignVariableOp").input("resource: resource").input("value: dtype").attr(f"dtype: {_T_ANY}") \
    .set_is_stateful()
register_op("AssignAddVariableOp").input("resource: resource").input("value: dtype").attr(f"dtype: {_T}") \
    .set_is_stateful()
register_op("AssignSubVariableOp").input("resource: resource").input("value: dtype").attr(f"dtype: {_T}") \
    .set_is_stateful()
register_op("VarIsInitializedOp").input("resource: resource").output("is_initialized: bool") \
    .set_is_stateful().set_shape_fn(scalar_shape)


def _handle_shape(ctx):
    """A read has the variable's shape, known from the VarHandleOp that made the handle."""
    t = ctx.input_tensor(0)
    if isinstance(t, EagerTensor):  # the handle holds the variable's storage
        return t.array.shape if hasattr(t.array, "shape") else None
    if t.op.type == "VarHandleOp":
        return TensorShape(t.op.get_attr("shape"))
    data = t.handle_data
    return data[1] if data else None
