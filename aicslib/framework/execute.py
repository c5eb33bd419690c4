"""Executing ops: the one path from a Python op wrapper to a NumPy kernel.

Both execution modes end in the same object, a :class:`KernelCall`: one
kernel bound to one use of an op (its device, dtypes and attrs), made once
and called many times with NumPy arrays.

From ``aics.add(x, 1.0)`` to the kernel, eagerly:

1. ``math_ops.add`` calls :func:`apply_op` ``("AddV2", [x, 1.0])``;
2. :func:`apply_op` finds the OpDef and, executing eagerly, calls
   :func:`execute` (in a graph it adds a node instead:
   ``op_def_library.apply_op_helper``);
3. :func:`execute` turns the inputs into EagerTensors (a Python scalar gets
   the dtype of the input it pairs with and is cached by value and dtype) and
   looks up the KernelCall cached for (op, device, input dtypes, attrs); on the
   first call ``op_def_library.prepare_inputs`` converts the inputs and
   infers and checks the attrs, and a KernelCall is made;
4. :meth:`KernelCall.run_eager` calls ``compute`` on the input arrays, wraps
   the results in EagerTensors and offers the op to any recording
   ``GradientTape``;
5. ``compute`` is the registered kernel (``kernels/cwise_ops.py``) with its
   attrs bound.

In a Session the same KernelCall is made once per graph node when the plan
is built (``session.py``, steps 2-3) and its ``compute`` is called by the
plan's loop.

``compute`` always takes the op's inputs as one flat list of arrays and
returns one array (an op with one output tensor) or a tuple of arrays (zero
or several); the adapters between that calling convention and the kernel's
(attrs by keyword, an ``OpKernelContext`` first, list inputs grouped, list
outputs flattened, float32 results of low-precision ops stored in their dtype) are
added by :func:`bind_kernel`
only where the op needs them.
"""
import functools

import numpy as np

from . import context, dtypes, logging as _log, tape
from .device import device_type
from .eager import EagerOperation, EagerTensor
from .errors import InternalError, InvalidArgumentError, OpError, ResourceExhaustedError
from .kernel_registry import kernel_registry
from .op_def import op_def_registry
from .op_def_library import apply_op_helper, convert_input, group_outputs, output_dtypes, prepare_inputs
from .ops import InferenceContext, conversion_function_for
from .tensor_shape import v2_shapes_inside

CPU = "/device:CPU:0"


class OpKernelContext:
    """What a ``ctx`` kernel sees: the node, its device and the runtime's resources."""

    __slots__ = ("node_name", "op_type", "device", "resources", "attrs", "session")

    def __init__(self, node_name, op_type, device, resources, attrs, session=None):
        self.node_name = node_name
        self.op_type = op_type
        self.device = device
        self.resources = resources
        self.attrs = attrs
        self.session = session

    def random_generator(self, seed, seed2):
        """A NumPy Generator per (node, seeds), so repeated runs continue one stream."""
        key = ("rng", self.node_name, seed, seed2)
        gen = self.resources.get(key)
        if gen is None:
            if seed == 0 and seed2 == 0:
                gen = np.random.default_rng()  # unseeded: nondeterministic, as TF
            else:
                gen = np.random.default_rng([seed, seed2])
            self.resources[key] = gen
        return gen


def select_kernel(op_def, device, attrs, node_name=None):
    """The kernel for ``device``, or the CPU's with a log line (soft placement).

    Returns (KernelDef, placed device)."""
    dev_type = device_type(device)
    kd = kernel_registry.find(op_def.name, dev_type, attrs)
    if kd is None and dev_type != "CPU":
        kd = kernel_registry.find(op_def.name, "CPU", attrs)
        if kd is not None:
            _log.vlog(1, f"Soft placement: no {dev_type} kernel for '{node_name or op_def.name}' "
                         f"({op_def.name}); placing it on {CPU}")
            return kd, CPU
    if kd is None:
        kernel_registry.lookup(op_def.name, dev_type, attrs, node_name)  # raises NotFoundError
    return kd, device or CPU


def bind_kernel(kd, op_def, attrs, input_lengths, out_dtypes, ctx):
    """The kernel as ``compute(*flat_arrays)``, adapted only where this op needs it.

    1. attrs the kernel's signature names are passed by keyword, an
       ``OpKernelContext`` first when it asks for ``ctx``; a class kernel is
       instantiated here, once per KernelCall, as TF makes an OpKernel per node;
    2. list inputs (``N * T``) are regrouped from the flat arguments;
    3. list outputs are flattened, and a single output tensor returned bare;
    4. outputs of a low-precision float dtype (bfloat16, float8) that a kernel
       computed in float32 are rounded once into that dtype, so kernels may
       accumulate in float32 (as TF's do for bfloat16) and NumPy type promotion
       (``bfloat16 * float32 -> float32``) never leaks into the op's output.
    """
    kattrs = kd.kernel_attrs(attrs)
    fn = kd.impl(attrs).compute if kd.is_class else kd.impl
    # functools.partial binds in C: cheaper per call than a Python closure doing the same
    if kd.needs_context:
        fn = functools.partial(fn, ctx, **kattrs)
    elif kattrs:
        fn = functools.partial(fn, **kattrs)

    if any(n is not None for n in input_lengths):
        fn = _regrouping(fn, input_lengths)
    if any(a.is_list for a in op_def.output_arg):
        fn = _flattening(fn, op_def, len(out_dtypes))
    if any(dt in _STORED_BY_ADAPTER for dt in out_dtypes):
        fn = _storing_low_precision(fn, out_dtypes)
    return fn


def _regrouping(fn, lengths):
    def grouped(*flat):
        args, i = [], 0
        for n in lengths:
            if n is None:
                args.append(flat[i])
                i += 1
            else:
                args.append(list(flat[i:i + n]))
                i += n
        return fn(*args)
    return grouped


def _flattening(fn, op_def, num_outputs):
    def flat(*args):
        r = fn(*args)
        if len(op_def.output_arg) == 1:
            out = tuple(r)
        else:
            if not isinstance(r, (tuple, list)):
                raise InternalError(None, None, f"Kernel for {op_def.name} must return a tuple of "
                                    f"{len(op_def.output_arg)} outputs.")
            out = []
            for arg, v in zip(op_def.output_arg, r):
                out.extend(v) if arg.is_list else out.append(v)
            out = tuple(out)
        return out[0] if num_outputs == 1 and len(out) == 1 else out
    return flat


_STORED_BY_ADAPTER = (dtypes.bfloat16, dtypes.float8_e4m3fn, dtypes.float8_e5m2)


def _storing_low_precision(fn, out_dtypes):
    """Rounds each low-precision output once into its ml_dtypes storage (a no-op copy-free
    view when the kernel already returned that dtype)."""
    np_types = [np.dtype(dt.as_numpy_dtype) if dt in _STORED_BY_ADAPTER else None for dt in out_dtypes]
    if len(out_dtypes) == 1:
        npdt = np_types[0]
        return lambda *args: np.asarray(fn(*args)).astype(npdt, copy=False)

    def stored(*args):
        return tuple(v if t is None else np.asarray(v).astype(t, copy=False)
                     for v, t in zip(fn(*args), np_types))
    return stored


class KernelCall:
    """One kernel bound to one use of an op: made once, called many times.

    ``compute(*arrays)`` runs it on the op's inputs (one flat list of arrays)
    and returns one array, or a tuple when the op has zero or several outputs.
    """

    __slots__ = ("op_def", "attrs", "kernel", "device", "out_dtypes", "np_dtypes", "single", "bare",
                 "input_lengths", "compute")

    def __init__(self, op_def, attrs, device, input_lengths, node_name, resources, session=None):
        self.kernel, self.device = select_kernel(op_def, device, attrs, node_name)
        self.op_def = op_def
        self.attrs = attrs
        self.input_lengths = input_lengths
        self.out_dtypes = output_dtypes(op_def, attrs)
        self.np_dtypes = [None if dt in (dtypes.resource, dtypes.variant, dtypes.string)
                          else np.dtype(dt.as_numpy_dtype) for dt in self.out_dtypes]
        self.single = len(self.out_dtypes) == 1
        self.bare = self.single and not op_def.output_arg[0].is_list  # returned as is, not in a list
        ctx = OpKernelContext(node_name, op_def.name, self.device, resources, attrs, session) \
            if self.kernel.needs_context else None
        self.compute = bind_kernel(self.kernel, op_def, attrs, input_lengths, self.out_dtypes, ctx)

    def run_eager(self, inputs):
        """Runs on EagerTensors; returns the op's outputs grouped as its wrapper returns them."""
        try:
            result = self.compute(*[t._array for t in inputs])
        except OpError as e:
            if e.op is None and f"[Op:{self.op_def.name}]" not in e.message:
                e.message = f"{e.message} [Op:{self.op_def.name}]"  # as TF's eager errors name the op
                e.args = (e.message,)
            raise
        except (ValueError, IndexError, TypeError, np.linalg.LinAlgError) as e:
            raise InvalidArgumentError(None, None, self._error_message(inputs, e)) from None
        except MemoryError as e:   # TF's allocator reports OOM as ResourceExhaustedError
            raise ResourceExhaustedError(None, None, f"OOM when allocating tensor: {e} "
                                                     f"[Op:{self.op_def.name}]") from None
        if self.single:
            npdt = self.np_dtypes[0]
            if npdt is not None:
                if type(result) is not np.ndarray:
                    result = np.asarray(result)
                if result.dtype is not npdt and result.dtype != npdt:
                    raise InternalError(None, None, f"Kernel for {self.op_def.name} returned {result.dtype} "
                                        f"where the op declares {self.out_dtypes[0].name}.")
            out = EagerTensor(result, self.out_dtypes[0], self.device)
            if tape.active:
                tape.record_operation(EagerOperation(self.op_def.name, list(inputs), [out], self.attrs,
                                                     self.input_lengths))
            return out if self.bare else [out]
        if not self.out_dtypes:
            outs = []
        else:
            if len(result) != len(self.out_dtypes):
                raise InternalError(None, None, f"Kernel for {self.op_def.name} returned {len(result)} "
                                    f"outputs, expected {len(self.out_dtypes)}.")
            outs = [self._wrap(r, i) for i, r in enumerate(result)]
        if tape.active:
            tape.record_operation(EagerOperation(self.op_def.name, list(inputs), outs, self.attrs,
                                                 self.input_lengths))
        return group_outputs(self.op_def, self.attrs, outs)

    def _wrap(self, r, i):
        """Checks one kernel result against the op's declared dtype; an EagerTensor of it."""
        npdt = self.np_dtypes[i]
        if npdt is not None:
            if type(r) is not np.ndarray:
                r = np.asarray(r)
            if r.dtype != npdt:
                raise InternalError(None, None, f"Kernel for {self.op_def.name} returned {r.dtype} "
                                    f"where the op declares {self.out_dtypes[i].name}.")
        return EagerTensor(r, self.out_dtypes[i], self.device)

    def _error_message(self, inputs, err):
        """Prefers the op's own shape-function message; falls back to the kernel's."""
        name = self.op_def.name
        shapes = ", ".join(str(list(np.shape(t._array))) for t in inputs)
        fn = self.op_def.shape_fn
        if fn is not None:
            try:
                with v2_shapes_inside():
                    fn(InferenceContext(name, name, inputs, self.attrs))
            except (ValueError, IndexError) as e:
                return f"{e} [Op:{name}] with input shapes: {shapes}"
            except Exception:
                pass
        return f"{name}: {err} [Op:{name}] with input shapes: {shapes}"


# ---------------------------------------------------------------------------
# Eager execution.

_op_defs = {}           # op type -> OpDef, checked complete once
_eager_resources = {}   # random streams of eager ops: one process-wide dict, as TF2's kernel cache
_calls = {}             # (op, device, frozen full attrs) -> KernelCall
_signatures = {}        # (op, device, given attrs, input kinds) -> (KernelCall, input converters)
_scalars = {}           # dtype -> {(value, Python type): read-only EagerTensor}
_MAX_SCALARS = 4096     # per dtype


def reset_random_streams():
    """Forgets eager ops' random streams (``aics.random.set_seed`` starts them anew)."""
    for k in [k for k in _eager_resources if isinstance(k, tuple) and k and k[0] == "rng"]:
        del _eager_resources[k]


def apply_op(op_type, inputs, attrs=None, name=None):
    """Runs (eager) or adds (graph) one op; ``inputs`` is a list, one entry per input arg.

    The entry point of every op wrapper in ``aicslib/ops``."""
    op_def = _op_defs.get(op_type)
    if op_def is None:
        op_def = _op_defs[op_type] = op_def_registry.lookup(op_type)
    if context.executing_eagerly():
        return execute(op_def, inputs, attrs or {})
    return apply_op_helper(op_def, inputs, attrs or {}, name)


def execute(op_def, inputs, attrs):
    """Runs one op now and returns its EagerTensor output(s)."""
    device = context.eager_device()
    try:
        kinds = [v._dtype if type(v) is EagerTensor else _kind(v) for v in inputs]
        try:
            key = (op_def.name, device, tuple(attrs.items()) if attrs else (), *kinds)
            hit = _signatures.get(key)
        except TypeError:  # list-valued attrs (strides, ksize...): as tuples
            key = (op_def.name, device, tuple((k, _freeze(v)) for k, v in attrs.items()), *kinds)
            hit = _signatures.get(key)
    except (TypeError, _NotCacheable):  # an unhashable attr value, or an input needing full conversion
        key = hit = None
    if hit is not None:
        call, converters = hit
        if not converters:
            return call.run_eager(inputs)
        try:
            tensors = list(inputs)
            for i, convert in converters:
                tensors[i] = convert(tensors[i])
        except _NotCacheable:  # a value this signature's cached conversion does not cover
            pass
        else:
            return call.run_eager(tensors)
    flat, lengths, full = prepare_inputs(op_def, inputs, attrs, True)
    call = _eager_call(op_def, full, device, lengths)
    if key is not None and not call.kernel.is_class:
        converters = _converters(op_def, inputs, attrs, flat, lengths)
        if converters is not False:
            _signatures[key] = (call, converters)
    return call.run_eager(flat)


class _NotCacheable(Exception):
    pass


_SCALAR_TYPES = frozenset((float, int, bool))


def _kind(value):
    """What of an input decides the op's dtypes: a tensor's or array's dtype, a scalar's type."""
    tp = type(value)
    if tp is EagerTensor:
        return value._dtype
    if tp in _SCALAR_TYPES:
        return tp
    if tp is np.ndarray:
        return tp, value.dtype
    if conversion_function_for(tp) is None:
        raise _NotCacheable
    return tp, value.dtype


def _converters(op_def, inputs, attrs, flat, lengths):
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
            out.append((i, _scalar_converter(t._dtype, op_def, arg, guessed)))
        elif type(t) is not EagerTensor:
            return False
        elif tp is np.ndarray:
            out.append((i, _array_converter(t._dtype, op_def, arg)))
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


def _guessed_dtype(value):
    """The dtype TF gives a Python scalar on its own (``default_dtype_for``), cheaply."""
    tp = type(value)
    if tp is float:
        return dtypes.float32
    if tp is bool:
        return dtypes.bool
    return dtypes.int32 if -2 ** 31 <= value < 2 ** 31 else dtypes.int64


def _scalar_converter(dtype, op_def, arg, guessed):
    """A Python scalar as a read-only EagerTensor of ``dtype``, converted once per value."""
    cache = _scalars.setdefault(dtype, {})

    def convert(value):
        if guessed and _guessed_dtype(value) is not dtype:
            raise _NotCacheable
        key = (value, type(value))
        t = cache.get(key)
        if t is None:
            t = convert_input(value, dtype, op_def, arg, True)  # raises TF's error for a bad value
            if value == value:  # NaN never equals its key again: don't let it fill the cache
                if len(cache) >= _MAX_SCALARS:
                    cache.clear()
                t._array.flags.writeable = False  # shared by every call that uses this constant
                cache[key] = t
        return t
    return convert


def _eager_call(op_def, attrs, device, lengths):
    """The KernelCall for these complete attrs, made on first use."""
    try:
        key = (op_def.name, device, tuple(lengths), tuple(sorted((k, _freeze(v)) for k, v in attrs.items())))
        call = _calls.get(key)
    except TypeError:  # an attr value that cannot be a dict key
        key = call = None
    if call is None:
        call = KernelCall(op_def, attrs, device, lengths, op_def.name, _eager_resources)
        # A class kernel holds per-node state (a TF OpKernel): a fresh one per eager call.
        if key is not None and not call.kernel.is_class:
            _calls[key] = call
    return call


def cache_info():
    """Sizes of the eager dispatch caches (for tests and the curious)."""
    return {"kernel_calls": len(_calls), "signatures": len(_signatures),
            "scalars": sum(len(c) for c in _scalars.values())}


def _freeze(v):
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def invalidate_caches(op_type=None):
    """Forgets cached KernelCalls (after an op or kernel is (un)registered)."""
    if op_type is None:
        _op_defs.clear()
        _calls.clear()
        _signatures.clear()
        return
    _op_defs.pop(op_type, None)
    for cache in (_calls, _signatures):
        for k in [k for k in cache if k[0] == op_type]:
            del cache[k]


kernel_registry.on_change.append(invalidate_caches)
op_def_registry.on_change.append(invalidate_caches)
