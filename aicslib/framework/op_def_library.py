"""From an op call's Python arguments to a checked node: inputs, attrs, outputs.

As TF's ``python/framework/op_def_library.py``, for ``("MatMul", [a, b],
{"transpose_b": True})``:

1. converts the inputs to tensors and infers type attrs (``T``) from them,
   and number attrs (``N``) from list lengths;
2. checks every attr against the OpDef (types, allowed values, minimums)
   and fills defaults;
3. in a graph, adds the node (``apply_op_helper`` -> ``Graph.create_op``).

Running an op eagerly uses steps 1-2 and then ``execute.py``, which keeps, per
call signature, the converters ``input_converters`` derives from how step 1
went, so later calls convert only what needs converting.
"""
import numpy as np

from . import dtypes
from .default_graph import get_default_graph
from .eager import EagerTensor
from .errors import InvalidArgumentError
from .graph import Tensor
from .op_def import validate_attr_value
from .python_sequences import MIXED_TYPES, NON_RECTANGULAR
from .tensor_conversion import conversion_function_for, convert_to_tensor
from .tensor_util import default_dtype_for, python_scalar_dtype

_TENSOR_TYPES = (Tensor, EagerTensor)


def dtype_of(value):
    """The dtype of a tensor-like input, or None for a plain Python/NumPy value."""
    if isinstance(value, _TENSOR_TYPES) or conversion_function_for(type(value)) is not None:
        return value.dtype
    return None


def _infer_types(op_def, inputs, attrs, eager):
    """Returns (type_attrs) mapping each type attr to a DType, raising TF-like errors."""
    type_attrs = {}
    for a in op_def.attr:
        if a.type == "type" and a.name in attrs:
            type_attrs[a.name] = validate_attr_value(a, attrs[a.name], op_def.name)
    for idx, (arg, value) in enumerate(zip(op_def.input_arg, inputs)):
        if arg.type_attr is None:
            continue
        values = value if arg.number_attr else (value,)
        for v in values:
            dt = dtype_of(v)
            if dt is None:
                continue
            have = type_attrs.get(arg.type_attr)
            if have is None:
                type_attrs[arg.type_attr] = dt
            elif have != dt:
                _raise_type_mismatch(op_def, arg, dt, have, idx, eager)
    return type_attrs


def _raise_type_mismatch(op_def, arg, got, want, idx, eager):
    if eager:
        raise InvalidArgumentError(None, None, f"cannot compute {op_def.name} as input #{idx}"
                                   f"(zero-based) was expected to be a {want.name} tensor but is "
                                   f"a {got.name} tensor")
    first = next(a.name for a in op_def.input_arg if a.type_attr == arg.type_attr)
    raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {got.name} that does "
                    f"not match type {want.name} of argument '{first}'.")


def convert_input(value, dtype, op_def, arg, eager):
    """Converts one input to a tensor of ``dtype`` for the current mode."""
    if isinstance(value, EagerTensor) and eager:
        if value.dtype != dtype:
            raise InvalidArgumentError(None, None, f"cannot compute {op_def.name}: input '{arg.name}' "
                                       f"was expected to be a {dtype.name} tensor but is a "
                                       f"{value.dtype.name} tensor")
        return value
    if dtype_of(value) is not None:
        t = convert_to_tensor(value)
        if t.dtype != dtype:
            if eager:
                raise InvalidArgumentError(None, None, f"cannot compute {op_def.name}: input "
                                           f"'{arg.name}' was expected to be a {dtype.name} tensor "
                                           f"but is a {t.dtype.name} tensor")
            raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {t.dtype.name} "
                            f"that does not match expected type of {dtype.name}.")
        if eager and not isinstance(t, EagerTensor):
            raise TypeError(f"Input '{arg.name}' of '{op_def.name}' is the graph tensor '{t.name}', "
                            f"which cannot be used in eager mode; build this op inside "
                            f"`with graph.as_default():` and run it in a Session.")
        return t
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        if str(e) in (NON_RECTANGULAR, MIXED_TYPES):
            raise                      # TF's own error for such a list, whatever the op
        raise TypeError(f"Expected {dtype.name} passed to parameter '{arg.name}' of op "
                        f"'{op_def.name}', got {value!r} of type '{type(value).__name__}' "
                        f"instead. Error: {e}") from None


def prepare_inputs(op_def, inputs, attrs, eager):
    """Converts inputs and completes attrs. Returns (flat_inputs, input_lengths, attrs)."""
    if len(inputs) != len(op_def.input_arg):
        raise TypeError(f"{op_def.name} takes {len(op_def.input_arg)} inputs "
                        f"({', '.join(a.name for a in op_def.input_arg)}), got {len(inputs)}.")
    type_attrs = _infer_types(op_def, inputs, attrs, eager)
    full = {}
    flat, lengths = [], []
    for arg, value in zip(op_def.input_arg, inputs):
        if arg.is_list:
            if isinstance(value, _TENSOR_TYPES) or not isinstance(value, (list, tuple)):
                raise TypeError(f"Expected list for '{arg.name}' argument to '{op_def.name}' Op, "
                                f"not {value!r}.")
            values = list(value)
        else:
            values = [value]
        if arg.type_list_attr:
            dts = []
            for v in values:
                dt = dtype_of(v) or default_dtype_for(v)
                flat.append(convert_input(v, dt, op_def, arg, eager))
                dts.append(dt)
            full[arg.type_list_attr] = dts
        else:
            if arg.type is not None:
                dt = arg.type
            else:
                dt = type_attrs.get(arg.type_attr)
                if dt is None:
                    a = op_def.get_attr_def(arg.type_attr)
                    dt = a.default_value if a.has_default else default_dtype_for(values[0]) if values else None
                    if dt is None:
                        raise TypeError(f"Cannot infer attr '{arg.type_attr}' of '{op_def.name}' "
                                        f"from an empty list; pass it explicitly.")
                    type_attrs[arg.type_attr] = dt
            for v in values:
                flat.append(convert_input(v, dt, op_def, arg, eager))
        if arg.number_attr:
            full[arg.number_attr] = len(values)
        lengths.append(len(values) if arg.is_list else None)
    full.update(type_attrs)
    for a in op_def.attr:
        if a.name in attrs:
            if a.name in full and a.type != "type":
                if full[a.name] != attrs[a.name]:
                    raise ValueError(f"Attr '{a.name}' of '{op_def.name}' was given as "
                                     f"{attrs[a.name]!r} but the inputs imply {full[a.name]!r}.")
            full[a.name] = validate_attr_value(a, attrs[a.name], op_def.name)
        elif a.name in full:
            full[a.name] = validate_attr_value(a, full[a.name], op_def.name)
        elif a.has_default:
            full[a.name] = a.default_value
        else:
            raise TypeError(f"Missing required attr '{a.name}' for op '{op_def.name}'.")
    for k in attrs:
        if op_def.get_attr_def(k) is None:
            raise TypeError(f"{op_def.name} got an unexpected attr '{k}'; it has "
                            f"{', '.join(a.name for a in op_def.attr) or 'no attrs'}.")
    return flat, lengths, full


def output_dtypes(op_def, attrs):
    out = []
    for arg in op_def.output_arg:
        if arg.type_list_attr:
            out.extend(attrs[arg.type_list_attr])
            continue
        dt = arg.type if arg.type is not None else attrs[arg.type_attr]
        n = attrs[arg.number_attr] if arg.number_attr else 1
        out.extend([dt] * n)
    return out


def group_outputs(op_def, attrs, flat):
    """Groups flat outputs: one output -> it; list output args -> lists; several -> tuple."""
    if not op_def.output_arg:
        return None
    grouped, i = [], 0
    for arg in op_def.output_arg:
        if arg.is_list:
            n = len(attrs[arg.type_list_attr]) if arg.type_list_attr else attrs[arg.number_attr]
            grouped.append(list(flat[i:i + n]))
            i += n
        else:
            grouped.append(flat[i])
            i += 1
    return grouped[0] if len(grouped) == 1 else tuple(grouped)


def apply_op_helper(op_def, inputs, attrs, name=None):
    """Adds one node for ``op_def`` to the default graph; returns its output tensor(s)."""
    flat, lengths, full = prepare_inputs(op_def, inputs, attrs, False)
    g = get_default_graph()
    op = g.create_op(op_def, flat, lengths, full, output_dtypes(op_def, full), name=name)
    if not op_def.output_arg:
        return op
    return group_outputs(op_def, full, op.outputs)

# ---------------------------------------------------------------------------
# Converting the inputs of a call whose signature was seen before. Eager dispatch
# (execute.py) caches, per signature, how prepare_inputs converted each input, and
# repeats only that on later calls.

_scalars = {}           # dtype -> {(value, Python type): read-only EagerTensor}
_MAX_SCALARS = 4096     # per dtype


def scalar_cache_size():
    """How many Python scalars are held converted (for tests and the curious)."""
    return sum(len(c) for c in _scalars.values())


class NotCacheable(Exception):
    """An input whose conversion a cached signature cannot repeat (it needs the full path)."""


_SCALAR_TYPES = frozenset((float, int, bool))


def input_kind(value):
    """What of an input decides the op's dtypes: a tensor's or array's dtype, a scalar's type."""
    tp = type(value)
    if tp is EagerTensor:
        return value.dtype
    if tp in _SCALAR_TYPES:
        return tp
    if tp is np.ndarray:
        return tp, value.dtype
    if conversion_function_for(tp) is None:
        raise NotCacheable
    return tp, value.dtype


def input_converters(op_def, inputs, attrs, flat, lengths):
    """How to turn the inputs of this signature into EagerTensors on later calls.

    A tuple of (input index, converter) for the inputs that are not EagerTensors
    already; False when this signature cannot be cached (list inputs)."""
    if any(n is not None for n in lengths):
        return False
    out = []
    for i, (v, t, arg) in enumerate(zip(inputs, flat, op_def.input_arg)):
        tp = type(v)
        if tp is EagerTensor:
            continue
        if tp in _SCALAR_TYPES:
            if type(t) is not EagerTensor:
                return False
            # Without a dtype from the op, an attr or a tensor input, the dtype was guessed
            # from the values, and an int's guess depends on its size (2**40 needs int64).
            guessed = not (arg.type is not None or arg.type_attr in attrs or any(
                a.type_attr == arg.type_attr and type(w) not in _SCALAR_TYPES
                for w, a in zip(inputs, op_def.input_arg)))
            out.append((i, _scalar_converter(t.dtype, op_def, arg, guessed)))
        elif type(t) is not EagerTensor:
            return False
        elif tp is np.ndarray:
            out.append((i, _array_converter(t.dtype, op_def, arg)))
        else:
            fn = conversion_function_for(tp)
            out.append((i, lambda value, fn=fn: fn(value, None, None)))
    return tuple(out)


def _array_converter(dtype, op_def, arg):
    """A NumPy array as an EagerTensor of ``dtype``: as is when its dtype already matches
    (as ``convert_to_tensor`` does), else through the full, checked conversion."""
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if dtype == dtypes.string:  # stored as bytes: always convert
        return lambda value: convert_input(value, dtype, op_def, arg, True)

    def convert(value):
        if value.dtype is np_dtype:
            return EagerTensor(value, dtype)
        return convert_input(value, dtype, op_def, arg, True)
    return convert


def _scalar_converter(dtype, op_def, arg, guessed):
    """A Python scalar as a read-only EagerTensor of ``dtype``, converted once per value."""
    cache = _scalars.setdefault(dtype, {})

    def convert(value):
        if guessed and python_scalar_dtype(value) is not dtype:
            raise NotCacheable
        key = (value, type(value))
        t = cache.get(key)
        if t is None:
            t = convert_input(value, dtype, op_def, arg, True)  # raises TF's error for a bad value
            if value == value:  # NaN never equals its key again: don't let it fill the cache
                if len(cache) >= _MAX_SCALARS:
                    cache.clear()
                t.array.flags.writeable = False  # shared by every call that uses this constant
                cache[key] = t
        return t
    return convert
