"""``tf.compat.v1.layers``: TF1's functional layers, built on ``get_variable``.

Each call opens a variable scope named after the layer (``dense``, ``dense_1``,
... or ``name=``), creates its weights there with ``get_variable``
(``dense/kernel``, ``dense/bias``) and its ops in the name scope of the same
name, as TF1's ``tf.layers`` does. ``reuse=True`` with the same ``name``
shares the weights. Defaults follow TF1: kernels ``glorot_uniform``, biases
zeros, ``padding='valid'``, ``data_format='channels_last'``.
"""
import numpy as np

from ...framework import dtypes
from ...framework.missing_api import module_getattr
from ...framework.ops import GraphKeys, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import dimension_value
from ...framework import context
from ...ops import array_ops, init_ops, math_ops, nn_ops
from ...ops.variable_scope import (get_variable, get_variable_scope, unique_default_scope_name,
                                   variable_scope)

__getattr__ = module_getattr(__name__)


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {value}")
    return value


def _padding(padding):
    p = str(padding).upper()
    if p not in ("SAME", "VALID"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: {padding}")
    return p


def _data_format(data_format):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                         f"'channels_last'. Received: {data_format}")
    return "NHWC" if data_format == "channels_last" else "NCHW"


def _apply_activation(x, activation):
    return x if activation is None else activation(x)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """``activation(inputs @ kernel + bias)``; kernel ``[in, units]``; inputs of rank > 2 act on the last axis."""
    with variable_scope(name, default_name="dense", reuse=reuse):
        x = convert_to_tensor(inputs)
        in_dim = dimension_value(x.shape[-1]) if x.shape.rank else None
        if in_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        in_dim = int(in_dim)
        kernel = get_variable("kernel", [in_dim, units], dtype=x.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        if x.shape.rank > 2:
            flat = array_ops.reshape(x, [-1, in_dim])
            out_shape = array_ops.concat([array_ops.shape(x)[:-1], [units]], 0)
            y = array_ops.reshape(math_ops.matmul(flat, kernel), out_shape)
        else:
            y = math_ops.matmul(x, kernel)
        if use_bias:
            bias = get_variable("bias", [units], dtype=x.dtype, initializer=bias_initializer,
                                regularizer=bias_regularizer, trainable=trainable)
            y = nn_ops.bias_add(y, bias)
        return _apply_activation(y, activation)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """2-D convolution layer: kernel ``[kh, kw, in_channels, filters]``, then bias and activation."""
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation_rate, "dilation_rate")
    fmt = _data_format(data_format)
    with variable_scope(name, default_name="conv2d", reuse=reuse):
        x = convert_to_tensor(inputs)
        if x.shape.rank != 4:
            raise ValueError(f"Input 0 of layer conv2d is incompatible with the layer: expected "
                             f"ndim=4, found ndim={x.shape.rank}. Full shape received: {x.shape}")
        c = dimension_value(x.shape[-1] if fmt == "NHWC" else x.shape[1])
        if c is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        kernel = get_variable("kernel", [kh, kw, int(c), filters], dtype=x.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        st = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
        dil = [1, dh, dw, 1] if fmt == "NHWC" else [1, 1, dh, dw]
        y = nn_ops.conv2d(x, kernel, strides=st, padding=_padding(padding), data_format=fmt,
                          dilations=dil)
        if use_bias:
            bias = get_variable("bias", [filters], dtype=x.dtype, initializer=bias_initializer,
                                regularizer=bias_regularizer, trainable=trainable)
            y = nn_ops.bias_add(y, bias, data_format=fmt)
        return _apply_activation(y, activation)


def _deconv_length(size, kernel, stride, padding):
    """Keras's deconv_output_length without output_padding: how far a transposed conv reaches."""
    if size is None:
        return None
    return size * stride if padding.lower() == "same" else size * stride + max(kernel - stride, 0)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """Transposed 2-D convolution ("deconvolution"): the gradient of conv2d with respect to its
    input, kernel ``[kh, kw, filters, in_channels]``, then bias and activation."""
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    fmt = _data_format(data_format)
    with variable_scope(name, default_name="conv2d_transpose", reuse=reuse):
        x = convert_to_tensor(inputs)
        if x.shape.rank != 4:
            raise ValueError(f"Input 0 of layer conv2d_transpose is incompatible with the layer: "
                             f"expected ndim=4, found ndim={x.shape.rank}. Full shape received: {x.shape}")
        dims = x.shape.as_list()
        h, w, c = (dims[1], dims[2], dims[3]) if fmt == "NHWC" else (dims[2], dims[3], dims[1])
        if c is None:
            raise ValueError("The channel dimension of the inputs to `Conv2DTranspose` should be "
                             "defined. Found `None`.")
        oh, ow = _deconv_length(h, kh, sh, padding), _deconv_length(w, kw, sw, padding)
        if oh is None or ow is None:
            raise NotImplementedError("conv2d_transpose: aicslib needs the input's height and width "
                                      f"known when the graph is built; got {x.shape}.")
        kernel = get_variable("kernel", [kh, kw, filters, int(c)], dtype=x.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        batch = dims[0] if dims[0] is not None else array_ops.shape(x)[0]
        out_shape = [batch, oh, ow, filters] if fmt == "NHWC" else [batch, filters, oh, ow]
        static_out = [dims[0]] + out_shape[1:]
        if dims[0] is None:
            out_shape = array_ops.stack(out_shape)
        st = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
        y = nn_ops.conv2d_backprop_input(out_shape, kernel, x, strides=st, padding=_padding(padding),
                                         data_format=fmt)
        if hasattr(y, "set_shape"):
            y.set_shape(static_out)  # as TF's layer: the batch is dynamic, the rest is known
        if use_bias:
            bias = get_variable("bias", [filters], dtype=x.dtype, initializer=bias_initializer,
                                regularizer=bias_regularizer, trainable=trainable)
            y = nn_ops.bias_add(y, bias, data_format=fmt)
        return _apply_activation(y, activation)


def _pooling(op, default_name):
    def pool(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
        ph, pw = _pair(pool_size, "pool_size")
        sh, sw = _pair(strides, "strides")
        fmt = _data_format(data_format)
        ksize = [1, ph, pw, 1] if fmt == "NHWC" else [1, 1, ph, pw]
        st = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
        with variable_scope(name, default_name=default_name):
            return op(inputs, ksize, st, _padding(padding), data_format=fmt)
    pool.__name__ = default_name
    pool.__doc__ = f"{default_name}: window ``pool_size``, step ``strides``; padding 'valid' by default."
    return pool


max_pooling2d = _pooling(nn_ops.max_pool, "max_pooling2d")
average_pooling2d = _pooling(nn_ops.avg_pool, "average_pooling2d")


def flatten(inputs, name=None, data_format="channels_last"):
    """Reshapes ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]``."""
    with variable_scope(name, default_name="flatten"):
        x = convert_to_tensor(inputs)
        if data_format == "channels_first" and x.shape.rank and x.shape.rank > 2:
            x = array_ops.transpose(x, [0] + list(range(2, x.shape.rank)) + [1])
        rest = x.shape.dims[1:] if x.shape.rank is not None else None
        if rest is not None and None not in rest:
            return array_ops.reshape(x, [-1, int(np.prod(rest, dtype=np.int64))])
        return array_ops.reshape(x, array_ops.stack([array_ops.shape(x)[0], -1]))


def _as_training_tensor(training):
    """``training`` as given: a Python bool, or a bool tensor (placeholder) chosen at run time."""
    if isinstance(training, (bool, np.bool_)):
        return bool(training)
    return convert_to_tensor(training, dtype=dtypes.bool)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Zeroes a fraction ``rate`` of the inputs while ``training`` (scaling the rest by 1/(1-rate)).

    ``training`` is False by default (TF1 layers' default): then it is the identity.
    """
    with variable_scope(name, default_name="dropout"):
        x = convert_to_tensor(inputs)
        training = _as_training_tensor(training)
        if training is False:
            return array_ops.identity(x)
        dropped = nn_ops.dropout(x, rate, noise_shape=noise_shape, seed=seed)
        if training is True:
            return dropped
        return math_ops.where(training, dropped, x)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, training=False,
                        trainable=True, name=None, reuse=None, **unused):
    """Batch normalization (Ioffe & Szegedy) over every axis except ``axis``.

    While ``training`` it normalizes with the batch's mean and variance and adds
    the moving-average updates (``moving = moving * momentum + batch * (1 -
    momentum)``) to ``GraphKeys.UPDATE_OPS``: run them with the train op, e.g.
    ``with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))``.
    Otherwise it uses the moving averages.
    """
    with variable_scope(name, default_name="batch_normalization", reuse=reuse):
        x = convert_to_tensor(inputs)
        rank = x.shape.rank
        if rank is None:
            raise ValueError("Input has undefined rank.")
        ax = axis % rank
        c = dimension_value(x.shape[ax])
        if c is None:
            raise ValueError(f"Input has undefined `axis` dimension. Input shape: {x.shape}")
        c = int(c)
        param_shape = [c]
        beta = get_variable("beta", param_shape, x.dtype, beta_initializer, beta_regularizer,
                            trainable=trainable) if center else None
        gamma = get_variable("gamma", param_shape, x.dtype, gamma_initializer, gamma_regularizer,
                             trainable=trainable) if scale else None
        moving_mean = get_variable("moving_mean", param_shape, x.dtype, moving_mean_initializer,
                                   trainable=False)
        moving_var = get_variable("moving_variance", param_shape, x.dtype,
                                  moving_variance_initializer, trainable=False)
        reduce_axes = [i for i in range(rank) if i != ax]
        bshape = [1] * rank
        bshape[ax] = c

        def bcast(t):
            return None if t is None else array_ops.reshape(t, bshape)

        training = _as_training_tensor(training)
        if training is False:
            mean, var = moving_mean, moving_var
        else:
            batch_mean, batch_var = nn_ops.moments(x, reduce_axes)
            if training is True:
                mean, var, decay = batch_mean, batch_var, 1.0 - momentum
            else:
                mean = math_ops.where(training, batch_mean, moving_mean.value())
                var = math_ops.where(training, batch_var, moving_var.value())
                decay = math_ops.where(training, np.asarray(1.0 - momentum, x.dtype.as_numpy_dtype),
                                       np.asarray(0.0, x.dtype.as_numpy_dtype))
            upd_mean = moving_mean.assign_sub((moving_mean.value() - batch_mean) * decay)
            upd_var = moving_var.assign_sub((moving_var.value() - batch_var) * decay)
            if not context.executing_eagerly():
                g = get_default_graph()
                g.add_to_collection(GraphKeys.UPDATE_OPS, upd_mean)
                g.add_to_collection(GraphKeys.UPDATE_OPS, upd_var)
        return nn_ops.batch_normalization(x, bcast(mean), bcast(var), bcast(beta), bcast(gamma),
                                          epsilon)


# ---------------------------------------------------------------- layer objects (tf.layers.Dense, ...)

class Layer:
    """A layer object: configured once, called on inputs; the first call creates the weights in
    a variable scope named after the layer (``dense``, ``dense_1``, or ``name``), later calls
    re-enter that scope with ``reuse=True`` and share them, as TF1's ``tf.layers`` classes do."""

    _function = None
    _base_name = "layer"
    _has_weights = True

    def __init__(self, *args, name=None, **kwargs):
        self._args, self._kwargs, self._name = args, kwargs, name
        self._scope_name = None
        self._outer_scope = None

    @property
    def name(self):
        return self._scope_name or self._name

    def __call__(self, inputs, training=None):
        kwargs = dict(self._kwargs)
        if training is not None:
            kwargs["training"] = training
        fn = type(self)._function
        if self._scope_name is None:
            self._scope_name = self._name or unique_default_scope_name(self._base_name)
            self._outer_scope = get_variable_scope().name
            reuse = None
        else:
            reuse = True
        if self._has_weights:
            return fn(inputs, *self._args, name=self._scope_name, reuse=reuse, **kwargs)
        return fn(inputs, *self._args, name=self._scope_name, **kwargs)

    apply = __call__

    @property
    def trainable_variables(self):
        from ...ops.variables import trainable_variables
        return [] if self._scope_name is None else trainable_variables(self._prefix())

    trainable_weights = trainable_variables

    @property
    def variables(self):
        from ...ops.variables import global_variables
        return [] if self._scope_name is None else global_variables(self._prefix())

    def _prefix(self):
        import re
        outer = self._outer_scope
        return re.escape(f"{outer}/{self._scope_name}/" if outer else f"{self._scope_name}/")


class Dense(Layer):
    _function = staticmethod(dense)
    _base_name = "dense"


class Conv2D(Layer):
    _function = staticmethod(conv2d)
    _base_name = "conv2d"


class BatchNormalization(Layer):
    _function = staticmethod(batch_normalization)
    _base_name = "batch_normalization"


class MaxPooling2D(Layer):
    _function = staticmethod(max_pooling2d)
    _base_name = "max_pooling2d"
    _has_weights = False


class AveragePooling2D(Layer):
    _function = staticmethod(average_pooling2d)
    _base_name = "average_pooling2d"
    _has_weights = False


class Flatten(Layer):
    _function = staticmethod(flatten)
    _base_name = "flatten"
    _has_weights = False


class Dropout(Layer):
    _function = staticmethod(dropout)
    _base_name = "dropout"
    _has_weights = False
