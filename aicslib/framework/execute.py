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
4. :meth:`KernelCall.run_eager` runs ``compute`` on the input arrays through
   :func:`run_kernel` (the contract below), wraps the results in EagerTensors
   and offers the op to any recording ``GradientTape``;
5. ``compute`` is the registered kernel (``kernels/cwise_ops.py``) with its
   attrs bound.

In a Session the same KernelCall is made once per graph node when the plan
is built (``session.py``) and every executor runs it with :func:`run_kernel`.

The execution contract, the same eagerly, in a Session (every executor) and
inside ``aics.function``, is :func:`run_kernel`, the one step every mode takes:

* a kernel's result is checked against the op: one array per declared output,
  of the declared dtype; anything else is an ``InternalError``;
* an exception in a kernel becomes TF's error class (:func:`kernel_error`):
  an ``OpError`` keeps its class; ``ValueError``, ``IndexError``,
  ``TypeError``, ``ArithmeticError`` (``ZeroDivisionError``...) and
  ``LinAlgError`` become ``InvalidArgumentError``, ``MemoryError``
  ``ResourceExhaustedError``; the message names the node (``[[node y]]``
  in a graph, ``[Op:Mul]`` eagerly, where the op has no node name).

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
from .dead_tensor import DEAD
from .device import device_type
from .eager import EagerOperation, EagerTensor
from .errors import InternalError, InvalidArgumentError, OpError, ResourceExhaustedError
from .kernel_registry import kernel_registry
from .op_def import op_def_registry
from .op_def_library import (NotCacheable, apply_op_helper, group_outputs, input_converters, input_kind,
                             output_dtypes, prepare_inputs, scalar_cache_size)
from .shape_inference import InferenceContext
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
    def grouped(*flat, **out):
        args, i = [], 0
        for n in lengths:
            if n is None:
                args.append(flat[i])
                i += 1
            else:
                args.append(list(flat[i:i + n]))
                i += n
        return fn(*args, **out)
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

    __slots__ = ("op_def", "attrs", "kernel", "device", "out_dtypes", "np_dtypes", "np_dtype", "single",
                 "bare", "input_lengths", "compute", "forward_inputs")

    def __init__(self, op_def, attrs, device, input_lengths, node_name, resources, session=None):
        self.kernel, self.device = select_kernel(op_def, device, attrs, node_name)
        self.op_def = op_def
        self.attrs = attrs
        self.input_lengths = input_lengths
        self.out_dtypes = output_dtypes(op_def, attrs)
        self.np_dtypes = [None if dt in (dtypes.resource, dtypes.variant, dtypes.string)
                          else np.dtype(dt.as_numpy_dtype) for dt in self.out_dtypes]
        self.single = len(self.out_dtypes) == 1
        self.np_dtype = self.np_dtypes[0] if self.single else None  # what run_kernel checks inline
        self.bare = self.single and not op_def.output_arg[0].is_list  # returned as is, not in a list
        # The inputs an executor may offer the kernel as its output buffer: one output, of a dtype
        # NumPy computes in (a bfloat16 output is rounded from float32 after the kernel).
        self.forward_inputs = self.kernel.forward_inputs if self.bare and self.np_dtype is not None \
            and self.out_dtypes[0] not in _STORED_BY_ADAPTER else ()
        ctx = OpKernelContext(node_name, op_def.name, self.device, resources, attrs, session) \
            if self.kernel.needs_context else None
        self.compute = bind_kernel(self.kernel, op_def, attrs, input_lengths, self.out_dtypes, ctx)

    def run_eager(self, inputs):
        """Runs on EagerTensors; returns the op's outputs grouped as its wrapper returns them."""
        n = len(inputs)  # one and two inputs spelled out: a comprehension costs a frame per op
        result = run_kernel(self, (inputs[0].array, inputs[1].array) if n == 2 else (inputs[0].array,) if n == 1
                            else [t.array for t in inputs])
        if self.single:
            out = EagerTensor(result, self.out_dtypes[0], self.device)
            if tape.active:
                tape.record_operation(EagerOperation(self.op_def.name, list(inputs), [out], self.attrs,
                                                     self.input_lengths))
            return out if self.bare else [out]
        outs = [EagerTensor(r, dt, self.device) for r, dt in zip(result, self.out_dtypes)]
        if tape.active:
            tape.record_operation(EagerOperation(self.op_def.name, list(inputs), outs, self.attrs,
                                                 self.input_lengths))
        return group_outputs(self.op_def, self.attrs, outs)

    def conform(self, value, i):
        """Output ``i`` as an array of the op's declared dtype (dead values pass), else InternalError."""
        npdt = self.np_dtypes[i]
        if npdt is None or value is DEAD:
            return value
        if type(value) is not np.ndarray:
            value = np.asarray(value)
        if value.dtype != npdt:
            raise InternalError(None, None, f"Kernel for {self.op_def.name} returned {value.dtype} "
                                f"where the op declares {self.out_dtypes[i].name}.")
        return value

    def conform_all(self, result):
        """A multi-output (or no-output) kernel's result as a tuple, each output conformed."""
        n = len(self.out_dtypes)
        if n == 0:
            return ()
        if not isinstance(result, (tuple, list)) or len(result) != n:
            got = f"{len(result)} outputs" if isinstance(result, (tuple, list)) else type(result).__name__
            raise InternalError(None, None, f"Kernel for {self.op_def.name} returned {got}, expected "
                                f"{n} outputs.")
        return tuple(v if t is not None and type(v) is np.ndarray and v.dtype is t else self.conform(v, i)
                     for i, (v, t) in enumerate(zip(result, self.np_dtypes)))


def run_kernel(call, args, node=None, out=None):
    """Runs ``call``'s kernel on ``args`` (the op's inputs, one flat sequence of arrays) under
    the execution contract; the one step of every executor and of eager execution.

    Returns one array for an op with one output, else a tuple of arrays, each of
    the op's declared dtype. ``node`` is the graph Operation being run, named in
    errors (None eagerly). ``out``: one of ``args`` that nothing else holds, which the
    kernel may write its output into (an executor's forwarding, ``call.forward_inputs``).
    """
    try:
        r = call.compute(*args) if out is None else call.compute(*args, out=out)
        if call.single:
            npdt = call.np_dtype
            if npdt is not None and (type(r) is not np.ndarray or r.dtype is not npdt):
                r = call.conform(r, 0)
            return r
        return call.conform_all(r) if call.out_dtypes else ()
    except Exception as e:
        raise kernel_error(call, e, args, node) from None


_BAD_ARGUMENT = (ValueError, IndexError, TypeError, ArithmeticError, np.linalg.LinAlgError)


def kernel_error(call, err, args, node=None):
    """The error to raise for ``err``, raised by ``call``'s kernel on ``args``: TF's class for
    it, with the node (or, eagerly, the op type) named; ``err`` itself when it has no TF class."""
    op_type = call.op_def.name
    if isinstance(err, OpError):
        if err.op is None:
            if node is not None:
                err.op = node
                err.message = f"{err.message}\n\t [[node {node.name}{_defined_at(node)}]]"
            elif f"[Op:{op_type}]" not in err.message:
                err.message = f"{err.message} [Op:{op_type}]"  # as TF's eager errors name the op
            err.args = (err.message,)
        return err
    if isinstance(err, MemoryError):  # TF's allocator reports OOM as ResourceExhaustedError
        if node is None:
            return ResourceExhaustedError(None, None, f"OOM when allocating tensor: {err} [Op:{op_type}]")
        return ResourceExhaustedError(None, node, f"OOM when allocating tensor in node '{node.name}'"
                                      f"{_defined_at(node)}: {err}\n\t [[node {node.name}]]")
    if isinstance(err, _BAD_ARGUMENT):
        if node is None:
            return InvalidArgumentError(None, None, _eager_error_message(call, args, err))
        shapes = ", ".join(describe_value(a) for a in args)
        return InvalidArgumentError(None, node, f"{node.type} node '{node.name}'{_defined_at(node)} failed "
                                    f"on inputs [{shapes}]: {err}\n\t [[node {node.name}]]")
    return err


def _defined_at(node):
    where = node.traceback[-1] if node.traceback else None
    return f" (defined at {short_path(where.filename)}:{where.lineno})" if where else ""


def short_path(path):
    """``path`` from its ``aicslib/`` part on, as error messages and logs show source files."""
    i = path.replace("\\", "/").rfind("/aicslib/")
    return path[i + 1:] if i >= 0 else path


def describe_value(v):
    """A value as error messages and logs show it: ``float32[2, 3]``, else its type's name."""
    if isinstance(v, (np.ndarray, np.generic)):
        return f"{v.dtype}{list(np.shape(v))}"
    return type(v).__name__


def _eager_error_message(call, args, err):
    """Prefers the op's own shape-function message; falls back to the kernel's."""
    name = call.op_def.name
    shapes = ", ".join(str(list(np.shape(a))) for a in args)
    fn = call.op_def.shape_fn
    if fn is not None:
        try:
            with v2_shapes_inside():
                fn(InferenceContext(name, name, [_as_input(a) for a in args], call.attrs))
        except (ValueError, IndexError) as e:
            return f"{e} [Op:{name}] with input shapes: {shapes}"
        except Exception:
            pass
    return f"{name}: {err} [Op:{name}] with input shapes: {shapes}"


def _as_input(array):
    """An input array as the EagerTensor a shape function reads (its shape, dtype and value)."""
    try:
        dtype = dtypes.as_dtype(array.dtype)
    except (AttributeError, TypeError):
        dtype = None
    return EagerTensor(array, dtype)


# ---------------------------------------------------------------------------
# Eager execution.

_op_defs = {}           # op type -> OpDef, checked complete once
_eager_resources = {}   # random streams of eager ops: one process-wide dict, as TF2's kernel cache
_calls = {}             # (op, device, frozen full attrs) -> KernelCall
_signatures = {}        # (op, device, given attrs, input kinds) -> (KernelCall, input converters)


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
        kinds = [v.dtype if type(v) is EagerTensor else input_kind(v) for v in inputs]
        try:
            key = (op_def.name, device, tuple(attrs.items()) if attrs else (), *kinds)
            hit = _signatures.get(key)
        except TypeError:  # list-valued attrs (strides, ksize...): as tuples
            key = (op_def.name, device, tuple((k, _freeze(v)) for k, v in attrs.items()), *kinds)
            hit = _signatures.get(key)
    except (TypeError, NotCacheable):  # an unhashable attr value, or an input needing full conversion
        key = hit = None
    if hit is not None:
        call, converters = hit
        if not converters:
            return call.run_eager(inputs)
        try:
            tensors = list(inputs)
            for i, convert in converters:
                tensors[i] = convert(tensors[i])
        except NotCacheable:  # a value this signature's cached conversion does not cover
            pass
        else:
            return call.run_eager(tensors)
    flat, lengths, full = prepare_inputs(op_def, inputs, attrs, True)
    call = _eager_call(op_def, full, device, lengths)
    if key is not None and not call.kernel.is_class:
        converters = input_converters(op_def, inputs, attrs, flat, lengths)
        if converters is not False:
            _signatures[key] = (call, converters)
    return call.run_eager(flat)


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
            "scalars": scalar_cache_size()}


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
