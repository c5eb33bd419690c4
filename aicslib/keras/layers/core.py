"""Dense (Keras's ``layers/core/dense.py``): ``activation(inputs @ kernel + bias)``."""
from ...ops import math_ops, nn_ops
from ...framework.tensor_shape import as_shape, dimension_value
from .base_layer import Layer

__all__ = ["Dense"]

_ACTIVATIONS = {None: None, "linear": None, "relu": nn_ops.relu, "softmax": nn_ops.softmax,
                "sigmoid": nn_ops.sigmoid}


class Dense(Layer):
    """A fully connected layer; computes in the policy's compute dtype (see ``Layer``)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name=None, dtype=None, trainable=True, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        if int(units) != units or units < 1:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = int(units)
        if callable(activation):
            self.activation = activation
        elif activation in _ACTIVATIONS:
            self.activation = _ACTIVATIONS[activation]
        else:
            raise ValueError(f"Unknown activation function: {activation!r}")
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        last = dimension_value(as_shape(input_shape)[-1])
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             f"defined. Found None. Full input shape received: {input_shape}")
        last = int(last)
        self.kernel = self.add_weight("kernel", [last, self.units], self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], self.bias_initializer)
        self.built = True

    def call(self, inputs):
        y = math_ops.matmul(inputs, self.read_weight(self.kernel))
        if self.use_bias:
            y = nn_ops.bias_add(y, self.read_weight(self.bias))
        return self.activation(y) if self.activation is not None else y
