"""``aics.function``: trace a Python function into a graph, then run the graph (TF's
python/eager/def_function.py).

The first call with a given input signature (each tensor argument's dtype and
shape, each Python argument's value) *traces*: the function runs once with
placeholders in a fresh FuncGraph, recording ops instead of computing. Later
calls with the same signature run the traced graph (a ConcreteFunction,
``function.py``) without running the Python code again, as ``tf.function``
does. ``aics.config.run_functions_eagerly(True)`` runs the Python function as
is; on a method, each object gets its own Function (the descriptor protocol).
"""
import functools
import inspect
import weakref

import numpy as np

from ..autograph.api import convert_or_keep
from ..config import functions_run_eagerly
from ..framework import context, dtypes
from ..framework.eager import EagerTensor
from ..framework.nest import flatten as _flatten, pack_sequence_as
from ..framework.ops import Tensor, convert_to_tensor
from ..ops.array_ops import placeholder
from .function import ConcreteFunction, FuncGraph, describe_value, is_array_argument, is_tensor_spec


def _positional_names(fn):
    """The names of ``fn``'s positional parameters ([] when it has no inspectable signature)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]



def _parameter_lines(fn, skip, args, kwargs):
    """``  name (KIND): spec`` for each argument of a call of ``fn`` (its first ``skip``
    parameters, a method's ``self``, left out), as TF's signatures list them."""
    try:
        params = list(inspect.signature(fn).parameters.values())[skip:]
    except (TypeError, ValueError):
        params = []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    named = [(positional[i] if i < len(positional) else None, a) for i, a in enumerate(args)]
    by_name = {p.name: p for p in params}
    named += [(by_name.get(k), kwargs[k]) for k in sorted(kwargs)]
    return [f"  {param.name if param is not None else f'arg{i}'} "
            f"({param.kind.name if param is not None else 'VAR_POSITIONAL'}): {describe_value(value)}"
            for i, (param, value) in enumerate(named)]



class Function:
    """A polymorphic function: one ConcreteFunction per input signature.

    Retracing follows TF: a call traces again when a tensor argument has a new
    dtype or shape, or a Python argument a new value; with ``input_signature``
    (a list of TensorSpecs) there is one trace, and calls must match it. With
    ``autograph=True`` (the default, as TF) Python ``if``/``while``/``for`` on
    tensors become ``cond``/``while_loop`` (``aics.autograph.to_code`` shows how).
    """

    def __init__(self, python_function, input_signature=None, autograph=True, jit_compile=None,
                 reduce_retracing=False):
        self.python_function = python_function
        if input_signature is not None:
            input_signature = list(input_signature)
            for spec in input_signature:
                if not is_tensor_spec(spec):
                    raise TypeError(f"input_signature must be a sequence of TensorSpec, got {spec!r}.")
        self._input_signature = input_signature
        self._autograph = autograph
        self._converted = None
        self._cache = {}
        self.tracing_count = 0
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._instance = None            # weakref to the object of a method's bound Function
        self._bound = weakref.WeakKeyDictionary()  # instance -> its own Function (one trace cache each)
        functools.update_wrapper(self, python_function)

    def _leading_args(self):
        """``(instance,)`` for a method bound to an object, else ``()``."""
        if self._instance is None:
            return ()
        instance = self._instance()
        if instance is None:
            raise ReferenceError(f"The object that method '{self.__name__}' was bound to no longer exists.")
        return (instance,)

    @property
    def input_signature(self):
        return None if self._input_signature is None else tuple(self._input_signature)

    def _python_fn(self):
        """The function traced: AutoGraph's conversion of it unless ``autograph=False``."""
        if not self._autograph:
            return self.python_function
        if self._converted is None:
            self._converted = convert_or_keep(self.python_function)
        return self._converted

    def _check_signature(self, args, kwargs):
        """The call's arguments as arrays matching ``input_signature`` (TF's error otherwise)."""
        flat = list(args) + [kwargs[k] for k in sorted(kwargs)]
        sig = self._input_signature

        def incompatible():
            return ValueError("Python inputs incompatible with input_signature:\n"
                              f"  inputs: ({', '.join(map(repr, flat))})\n"
                              f"  input_signature: ({', '.join(map(repr, sig))}).")
        if len(flat) != len(sig):
            raise incompatible()
        out = []
        for a, spec in zip(flat, sig):
            dt = dtypes.as_dtype(spec.dtype)
            if isinstance(a, EagerTensor):
                if a.dtype != dt:
                    raise incompatible()
                arr = a.array
            else:
                try:
                    arr = np.asarray(a)
                    if arr.dtype.kind == "f" and dt.is_integer:
                        raise TypeError
                    arr = arr.astype(dt.as_numpy_dtype, copy=False)
                except (TypeError, ValueError):
                    raise incompatible() from None
            if not spec.shape.is_compatible_with(arr.shape):
                raise incompatible()
            out.append(EagerTensor(arr, dt))
        return out

    def _signature(self, args, kwargs):
        key = []
        for a in list(args) + [kwargs[k] for k in sorted(kwargs)]:
            if is_tensor_spec(a):
                key.append(("T", dtypes.as_dtype(a.dtype), tuple(a.shape.as_list()) if a.shape.rank is not None
                            else None))
            elif isinstance(a, EagerTensor):
                key.append(("T", a.dtype, tuple(np.shape(a.array))))
            elif is_array_argument(a):
                key.append(("T", dtypes.as_dtype(a.dtype), np.shape(a)))
            elif isinstance(a, (list, tuple, dict)) or a is None or isinstance(a, (int, float, str, bool)):
                key.append(("py", repr(a)))
            else:
                key.append(("obj", id(a)))
        return tuple(sorted(kwargs)), tuple(key)

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (values or TensorSpecs), traced if new."""
        if self._input_signature is not None:
            if args or kwargs:
                if len(args) + len(kwargs) != len(self._input_signature) or not all(
                        is_tensor_spec(a) for a in list(args) + list(kwargs.values())):
                    self._check_signature(args, kwargs)
            args, kwargs = tuple(self._input_signature), {}
        key = self._signature(args, kwargs)
        cf = self._cache.get(key)
        if cf is None:
            cf = self._trace(args, kwargs)
            self._cache[key] = cf
        return cf

    def _trace(self, args, kwargs):
        self.tracing_count += 1
        g = FuncGraph(getattr(self.python_function, "__name__", "function"))
        inputs, names = [], []
        params = _positional_names(self.python_function)[len(self._leading_args()):]

        def symbolic(a, name):
            if is_tensor_spec(a):
                spec_name = getattr(a, "name", None) or f"arg{len(inputs)}"
                ph = placeholder(dtypes.as_dtype(a.dtype), a.shape, name=spec_name)
            elif isinstance(a, EagerTensor) or is_array_argument(a):
                dt = a.dtype if isinstance(a, EagerTensor) else dtypes.as_dtype(a.dtype)
                ph = placeholder(dt, np.shape(a.array if isinstance(a, EagerTensor) else a),
                                 name=f"arg{len(inputs)}")
            else:
                return a
            inputs.append(ph)
            names.append(name)
            return ph
        with g.as_default():
            sym_args = [symbolic(a, params[i] if i < len(params) else None) for i, a in enumerate(args)]
            sym_kwargs = {k: symbolic(kwargs[k], k) for k in sorted(kwargs)}
            result = self._python_fn()(*self._leading_args(), *sym_args, **sym_kwargs)
            # Every output becomes a tensor, Python numbers included (f(2.0) returning x * 2
            # gives a tensor in TF too); None and other objects pass through.
            flat = [convert_to_tensor(r) if not isinstance(r, Tensor) and (
                        hasattr(r, "dtype") or isinstance(r, (bool, int, float, complex)))
                    else r for r in _flatten(result)]
            result = pack_sequence_as(result, flat)
        g.inputs = inputs
        g.outputs = flat
        g.structured_outputs = result
        cf = ConcreteFunction(g, inputs, flat, result)
        cf.arg_names = names
        # Described now rather than kept: the arguments' arrays need not outlive the call.
        cf.parameter_lines = _parameter_lines(self.python_function, len(self._leading_args()),
                                              args, kwargs)
        return cf

    def __call__(self, *args, **kwargs):
        if functions_run_eagerly():  # aics.config.run_functions_eagerly(True): plain Python, as TF
            return self.python_function(*self._leading_args(), *args, **kwargs)
        if not context.executing_eagerly():  # inlined into the graph being built
            return self._python_fn()(*self._leading_args(), *args, **kwargs)
        if self._input_signature is not None:
            tensors = self._check_signature(args, kwargs)
            return self.get_concrete_function()(*tensors)
        cf = self.get_concrete_function(*args, **kwargs)
        tensor_args = [a for a in list(args) + [kwargs[k] for k in sorted(kwargs)]
                       if isinstance(a, EagerTensor) or is_array_argument(a)]
        return cf(*tensor_args)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Every traced signature, in TF's format (parameters, output type, captures)."""
        return "\n\n".join(cf.pretty_printed_signature(verbose) for cf in self._cache.values())

    def experimental_get_tracing_count(self):
        return self.tracing_count

    def experimental_get_concrete_function(self, *args, **kwargs):
        return self.get_concrete_function(*args, **kwargs)

    def __get__(self, instance, owner):
        """A method: each object gets its own Function, traced for it (TF's descriptor)."""
        if instance is None or self._instance is not None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # an object that cannot be weakly referenced: traced per call site's object
            return functools.partial(self.__call__, instance)
        if bound is None:
            bound = Function(self.python_function, self._input_signature, self._autograph,
                             self._jit_compile, self._reduce_retracing)
            bound._converted = self._converted
            bound._instance = weakref.ref(instance)
            self._bound[instance] = bound
        return bound


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_relax_shapes=None):
    """Decorator: ``@aics.function`` compiles a Python function into a graph on first call."""
    if func is None:
        return lambda f: Function(f, input_signature, autograph, jit_compile, reduce_retracing)
    return Function(func, input_signature, autograph, jit_compile, reduce_retracing)
