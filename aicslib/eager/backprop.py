"""The eager gradient tape (TF's python/eager/backprop.py).

While a GradientTape is active, each eager op whose inputs include a watched
tensor is recorded (op type, attrs, inputs, outputs). ``gradient`` replays
the records backwards, calling the same registered gradient functions as
graph mode; those run eagerly, so an outer tape records them too, which is how
gradients of gradients come about. Inside ``aics.function`` (a graph being
built) the graph itself is the record: ``gradient`` adds gradient ops with
``aics.gradients`` for the sources the tape watches.
"""
import collections
import contextlib
import functools
import weakref

import numpy as np

from ..framework import context, tape as _tape
from ..framework.eager import EagerOperation, EagerTensor
from ..framework.gradient_registry import RegisterGradient, gradient_registry
from ..framework.nest import flatten as _flatten, pack_sequence_as
from ..framework.ops import Tensor, convert_to_tensor, get_default_graph
from ..framework.tensor_shape import v2_shapes_inside
from ..ops import math_ops
from ..ops.array_ops import identity_n, ones_like, reshape, stack, zeros_like
from ..ops.gradients_impl import gradients, graph_tensor_of
from ..ops.unconnected_gradients import check as check_unconnected
from ..ops.variables import Variable
from . import graph_tape_record as _graph_record


class GradientTape:
    """Records eager ops for automatic differentiation."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._entries = []
        self._watched = {}          # id -> tensor (kept alive so ids stay unique)
        self._watched_variables = []
        self._used = False
        self._recording = False

    def __enter__(self):
        self._recording = True
        _tape.push(self)
        _graph_record.open_span(self)  # inside aics.function: only the block's graph ops count
        return self

    def __exit__(self, *exc):
        self._recording = False
        _tape.pop(self)
        _graph_record.close_span(self)
        return False

    def watch(self, tensor):
        """Makes the tape record ops on ``tensor`` (or each tensor/variable in a nest)."""
        for t in _flatten(tensor):
            if isinstance(t, Variable):
                self._watch_variable(t)
            elif isinstance(t, (EagerTensor, Tensor)):
                if not (t.dtype.is_floating or t.dtype.is_complex or t.dtype.name == "resource"):
                    continue  # TF only watches floating (and complex) tensors
                self._watched[id(t)] = t
            else:
                raise ValueError(f"Passed in object {t!r} of type '{type(t).__name__}', not an "
                                 f"eager tensor or Variable, to GradientTape.watch.")

    def _watch_variable(self, var):
        h = var.handle
        if id(h) not in self._watched:
            self._watched[id(h)] = h
            self._watched_variables.append(var)

    def watched_variables(self):
        return list(self._watched_variables)

    def variable_accessed(self, var):
        """Called for each trainable variable read while recording (``tape.py``)."""
        if self._watch_accessed_variables:
            self._watch_variable(var)

    def watches_any(self, tensors):
        """True when one of ``tensors`` is watched (an op on them would be recorded)."""
        watched = self._watched
        return any(id(x) in watched for x in tensors)

    def record_operation(self, op):
        """Keeps ``op`` (an executed eager op) when one of its inputs is watched."""
        watched = self._watched
        for t in op.inputs:
            if id(t) in watched:
                break
        else:
            return
        self._entries.append(op)
        for o in op.outputs:
            watched[id(o)] = o

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside are not recorded by this tape."""
        if not self._recording:
            raise ValueError("Tape.stop_recording() called when the tape is not recording.")
        _tape.pop(self)
        self._recording = False
        _graph_record.close_span(self)
        try:
            yield
        finally:
            self._recording = True
            _tape.push(self)
            _graph_record.open_span(self)

    def reset(self):
        self._entries = []
        self._watched = {}
        self._watched_variables = []

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """d(sum of target)/d(each source), structured like ``sources``; None where unconnected."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set "
                               "of gradients (or jacobians). Use GradientTape(persistent=True) "
                               "to call gradient() more than once.")
        unconnected_gradients = check_unconnected(unconnected_gradients).value
        targets = _flatten(target)
        flat_sources = _flatten(sources)
        if not context.executing_eagerly():
            result = self._symbolic_gradient(targets, flat_sources, output_gradients, unconnected_gradients)
            self._used = True
            return pack_sequence_as(sources, result)
        keys = []
        for s in flat_sources:
            if isinstance(s, Variable):
                keys.append(id(s.handle))
            elif isinstance(s, EagerTensor):
                keys.append(id(s))
            else:
                raise TypeError(f"GradientTape.gradient sources must be eager tensors or Variables, "
                                f"got {s!r}.")
        was_recording = self._recording
        if was_recording:
            _tape.pop(self)  # this tape does not record its own backward pass
            self._recording = False
        try:
            grads = collections.defaultdict(list)
            out_grads = _flatten(output_gradients) if output_gradients is not None else [None] * len(targets)
            for t, g in zip(targets, out_grads):
                if isinstance(t, Variable):
                    # TF differentiates a variable target by its handle: the same variable as a
                    # source gets the output gradient (ones), even with no read on the tape
                    value = t.value()
                    grads[id(t.handle)].append(ones_like(value) if g is None
                                               else convert_to_tensor(g, dtype=value.dtype))
                    continue
                grads[id(t)].append(ones_like(t) if g is None else convert_to_tensor(g, dtype=t.dtype))
            watched = self._watched
            for op in reversed(self._entries):
                outputs = op.outputs
                if len(outputs) == 1:  # most ops: no list to build unless a gradient arrived
                    gs = grads.get(id(outputs[0]))
                    if not gs:
                        continue
                    og = [_sum(gs)]
                else:
                    og = [_sum(grads.get(id(o))) for o in outputs]
                    if not any(g is not None for g in og):
                        continue
                    takes_none = _GRAD_FN_ACCEPTS_NONE_FOR_INDICES.get(op.type, ())
                    og = [zeros_like(o) if g is None and i not in takes_none else g
                          for i, (g, o) in enumerate(zip(og, outputs))]
                fn = gradient_registry.lookup(op.gradient_type or op.type)
                if fn is None:
                    continue
                skip = [i for i, t in enumerate(op.inputs) if id(t) not in watched]
                op.skip_input_indices = tuple(skip) if skip else None
                with v2_shapes_inside():
                    in_grads = fn(op, *og)
                if not isinstance(in_grads, (list, tuple)):
                    in_grads = [in_grads]
                if len(in_grads) != len(op.inputs):
                    raise ValueError(f"Gradient function for {op.type} returned {len(in_grads)} "
                                     f"gradients for {len(op.inputs)} inputs.")
                for t, g in zip(op.inputs, in_grads):
                    if g is not None and id(t) in watched:
                        grads[id(t)].append(g)
            result = []
            for k, s in zip(keys, flat_sources):
                # as TF: an integer source has no gradient (TF logs that it must be floating)
                g = _sum(grads.get(k)) if s.dtype.is_floating or s.dtype.is_complex else None
                if g is None and unconnected_gradients == "zero":
                    g = zeros_like(s.value() if isinstance(s, Variable) else s)
                result.append(g)
        finally:
            if was_recording:
                self._recording = True
                _tape.push(self)
        self._used = True
        if not self._persistent:
            # Release the recorded tensors, so variable buffers they snapshot can again be
            # updated in place by the optimizer (copy-on-write sees no other holder).
            self._entries = []
            self._watched = {}
        return pack_sequence_as(sources, result)

    def _symbolic_gradient(self, targets, flat_sources, output_gradients, unconnected_gradients):
        """The tape used while a graph is built (inside ``aics.function``): the graph holds the
        recorded ops, so, as TF's tape in a FuncGraph, the gradient is built as graph ops
        (``aics.gradients``) for the sources this tape watches; None for the others."""
        xs, positions = [], []
        for i, s in enumerate(flat_sources):
            if isinstance(s, Variable):
                if id(s.handle) not in self._watched:
                    continue
            elif isinstance(s, Tensor):
                if id(s) not in self._watched:
                    continue
            else:
                raise TypeError(f"GradientTape.gradient sources must be tensors or Variables, got {s!r}.")
            xs.append(graph_tensor_of(s))
            positions.append(i)
        ys = [t.value() if isinstance(t, Variable) else convert_to_tensor(t) for t in targets]
        grad_ys = None
        if output_gradients is not None:
            grad_ys = [None if g is None else convert_to_tensor(g, dtype=y.dtype)
                       for g, y in zip(_flatten(output_gradients), ys)]
        result = [None] * len(flat_sources)
        if xs:
            # Only the ops built inside the tape's block carry gradients (and not this gradient's own).
            _graph_record.close_span(self)
            stops = _graph_record.unrecorded_outputs(self, ys[0].graph)
            try:
                for i, g in zip(positions, gradients(ys, xs, grad_ys=grad_ys, stop_gradients=stops)):
                    result[i] = g
            finally:
                if self._recording:
                    _graph_record.open_span(self)
        if unconnected_gradients == "zero":
            result = [zeros_like(s.value() if isinstance(s, Variable) else s) if g is None else g
                      for g, s in zip(result, flat_sources)]
        return result

    def jacobian(self, target, sources):
        """Full Jacobian by one gradient() per target element (slow, for teaching)."""
        flat = _flatten(sources)
        n = int(np.size(target.numpy()))
        saved_persistent = self._persistent
        self._persistent = True
        rows = []
        for i in range(n):
            onehot = np.zeros(n, dtype=target.dtype.as_numpy_dtype)
            onehot[i] = 1
            rows.append(self.gradient(target, flat, output_gradients=[onehot.reshape(np.shape(target.numpy()))]))
        self._persistent, self._used = saved_persistent, True
        out = []
        for j, s in enumerate(flat):
            sshape = list(np.shape(s.numpy()))
            out.append(reshape(stack([r[j] for r in rows]), list(np.shape(target.numpy())) + sshape))
        return out if isinstance(sources, (list, tuple)) else out[0]


# Outputs whose missing gradient a gradient function takes as None rather than as zeros
# (TF's backprop._grad_fn_accepts_none_for_indices): no ZerosLike op is run for them.
_GRAD_FN_ACCEPTS_NONE_FOR_INDICES = {
    "SoftmaxCrossEntropyWithLogits": (1,),
    "SparseSoftmaxCrossEntropyWithLogits": (1,),
}


def _sum(gs):
    if not gs:
        return None
    if len(gs) == 1:
        return gs[0]
    return math_ops.add_n(gs)


# ---------------------------------------------------------------------------

class _CustomGradientRecord(EagerOperation):
    """The tape's record of one custom_gradient call: an IdentityN whose gradient is
    looked up per record (weak-referenceable, so it can key ``_custom_grad_fns``)."""

    __slots__ = ("__weakref__",)

    def __init__(self, inputs, outputs, attrs):
        super().__init__("IdentityN", inputs, outputs, attrs, gradient_type="CustomGradient")


# Each custom_gradient call makes its own gradient function. The registry holds one entry,
# "CustomGradient", which finds the function of the op it is asked about here; the keys are
# weak, so an entry lives exactly as long as its op (a graph node, or a tape's record) and
# calls in a training loop leave neither registry entries nor closures behind.
_custom_grad_fns = weakref.WeakKeyDictionary()


@RegisterGradient("CustomGradient")
def _custom_gradient_dispatch(op, *grads):
    fn = _custom_grad_fns.get(op)
    if fn is None:
        raise LookupError(f"Op '{op.name}' uses the 'CustomGradient' gradient, but no "
                          f"custom_gradient function is recorded for it: only ops made by a "
                          f"call of an @aics.custom_gradient function in this process have one.")
    return fn(op, *grads)


def custom_gradient(f):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)``; gradients of y use ``grad_fn(dy)``.

    As TF, the outputs and inputs go through an IdentityN op whose gradient is
    overridden, in graph mode by ``gradient_override_map`` and in eager mode on
    the tape's record, to the registered "CustomGradient" gradient, which calls
    this call's grad_fn.
    """
    @functools.wraps(f)
    def decorated(*args):
        args = [convert_to_tensor(a) for a in args]
        if context.executing_eagerly():
            with _tape.paused():
                result, grad_fn = f(*args)
        else:
            result, grad_fn = f(*args)
        results = _flatten(result)
        n = len(results)

        def grad(op, *dys):
            g = grad_fn(*dys[:n])
            g = list(g) if isinstance(g, (list, tuple)) else [g]
            if len(g) != len(args):
                raise ValueError(f"custom_gradient function returned {len(g)} gradients for "
                                 f"{len(args)} inputs.")
            return [None] * n + g

        if context.executing_eagerly():
            outs = [EagerTensor(t.numpy(), t.dtype) for t in results + args]
            if _tape.active:
                rec = _CustomGradientRecord(list(results) + list(args), outs,
                                            {"T": [t.dtype for t in results + args]})
                _custom_grad_fns[rec] = grad
                _tape.record_operation(rec)
            outs = outs[:n]
        else:
            with get_default_graph().gradient_override_map({"IdentityN": "CustomGradient"}):
                outs = identity_n(list(results) + list(args))
            _custom_grad_fns[outs[0].op] = grad
            outs = outs[:n]
        return pack_sequence_as(result, outs)
    return decorated


def _x_sin_y_twice():
    """x sin y + y sin x through two calls of one @custom_gradient function whose grad_fn
    is the exact derivative: the check then shows that the "CustomGradient" gradient calls,
    for each IdentityN, the grad_fn of the call that made it, with that call's inputs."""
    @custom_gradient
    def x_sin_y(x, y):
        def grad(dz):
            return dz * math_ops.sin(y), dz * x * math_ops.cos(y)
        return x * math_ops.sin(y), grad
    return lambda x, y: x_sin_y(x, y) + x_sin_y(y, x)


def _normal(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# Numerical-check recipe for the gradient registered here (see ops/math_grad.GRADIENT_CHECK_RECIPES).
GRADIENT_CHECK_RECIPES = {
    "CustomGradient": lambda: (_x_sin_y_twice(), [_normal(2, 2), _normal(2, 2, seed=1)]),  # @custom_gradient calls
}
