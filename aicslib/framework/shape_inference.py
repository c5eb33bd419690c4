"""What a shape function sees (TF's core/framework/shape_inference.h, in miniature), and the
values of graph tensors known before anything runs."""
import numpy as np

from .eager import EagerTensor


class InferenceContext:
    """What a shape function sees: input shapes, constant input values, attrs."""

    def __init__(self, op_type, name, inputs, attrs):
        self.op_type = op_type
        self.name = name
        self._inputs = inputs
        self._attrs = attrs

    @property
    def num_inputs(self):
        return len(self._inputs)

    def input_tensor(self, i):
        """The input itself: a graph Tensor, or an EagerTensor when the op runs eagerly."""
        return self._inputs[i]

    def input_shape(self, i):
        return self._inputs[i].shape

    def input_dtype(self, i):
        return self._inputs[i].dtype

    def input_constant(self, i):
        """The input's value when it is known at graph-build time (a Const), else None."""
        t = self._inputs[i]
        if isinstance(t, EagerTensor):
            return t.array
        return constant_value(t)

    def attr(self, name):
        return self._attrs[name]

    def has_attr(self, name):
        return name in self._attrs


def constant_value(tensor):
    """Value of a tensor computable without running the graph (Const, Shape of a known shape)."""
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.get_attr("out_type").as_numpy_dtype)
    if op.type == "Identity":
        return constant_value(op.inputs[0])
    return None


