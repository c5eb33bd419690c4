"""Queues as ops (TF's core/ops/data_flow_ops.cc and python/ops/data_flow_ops.py).

``q = aics.FIFOQueue(capacity, dtypes, shapes)`` adds one op that creates
the queue resource (``FIFOQueueV2``); its methods add ops that use it::

    q = aics.FIFOQueue(100, [aics.float32, aics.int64], shapes=[[784], []])
    enq = q.enqueue_many([images, labels])      # an op: run it to insert a batch
    x, y = q.dequeue_many(128)                  # tensors: each run takes 128 elements
    close = q.close()

Running a dequeue blocks the ``Session.run`` until enough elements are there;
after ``close`` it raises ``OutOfRangeError`` once the queue cannot satisfy it,
and enqueues raise ``CancelledError``, as in TensorFlow. The queue's runtime
(blocking, ordering, shuffling) is ``aicslib/framework/queue_state.py``; the
kernels are ``aicslib/kernels/data_flow_ops.py``. Eagerly, the queue is
created at once and every method runs immediately.
"""
from ..framework import context, dtypes as _dtypes
from ..framework.eager import EagerTensor
from ..framework.op_def import register_op
from ..framework.execute import apply_op
from ..framework.ops import convert_to_tensor, name_scope
from ..framework.tensor_shape import TensorShape, as_shape
from ..framework.common_shapes import scalar_shape
from ..framework.queue_state import FIFOQueueState, RandomShuffleQueueState

_QUEUE_ATTRS = ("component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
                "capacity: int = -1", "container: string = ''", "shared_name: string = ''")

_b = register_op("FIFOQueueV2").output("handle: resource")
for _a in _QUEUE_ATTRS:
    _b = _b.attr(_a)
_b.set_is_stateful().set_shape_fn(scalar_shape)

_b = register_op("RandomShuffleQueueV2").output("handle: resource")
for _a in _QUEUE_ATTRS[:3] + ("min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0") \
        + _QUEUE_ATTRS[3:]:
    _b = _b.attr(_a)
_b.set_is_stateful().set_shape_fn(scalar_shape)

register_op("QueueEnqueueV2").input("handle: resource").input("components: Tcomponents") \
    .attr("Tcomponents: list(type) >= 1").attr("timeout_ms: int = -1").set_is_stateful()
register_op("QueueEnqueueManyV2").input("handle: resource").input("components: Tcomponents") \
    .attr("Tcomponents: list(type) >= 1").attr("timeout_ms: int = -1").set_is_stateful()
register_op("QueueDequeueV2").input("handle: resource").output("components: component_types") \
    .attr("component_types: list(type) >= 1").attr("timeout_ms: int = -1").set_is_stateful()
register_op("QueueDequeueManyV2").input("handle: resource").input("n: int32") \
    .output("components: component_types").attr("component_types: list(type) >= 1") \
    .attr("timeout_ms: int = -1").set_is_stateful()
register_op("QueueDequeueUpToV2").input("handle: resource").input("n: int32") \
    .output("components: component_types").attr("component_types: list(type) >= 1") \
    .attr("timeout_ms: int = -1").set_is_stateful()
register_op("QueueCloseV2").input("handle: resource").attr("cancel_pending_enqueues: bool = false") \
    .set_is_stateful()
register_op("QueueSizeV2").input("handle: resource").output("size: int32").set_is_stateful() \
    .set_shape_fn(scalar_shape)
register_op("QueueIsClosedV2").input("handle: resource").output("is_closed: bool") \
    .set_is_stateful().set_shape_fn(scalar_shape)

# Queue ops have no gradient (they are not differentiable).
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("FIFOQueueV2")
NotDifferentiable("RandomShuffleQueueV2")
NotDifferentiable("QueueEnqueueV2")
NotDifferentiable("QueueEnqueueManyV2")
NotDifferentiable("QueueDequeueV2")
NotDifferentiable("QueueDequeueManyV2")
NotDifferentiable("QueueDequeueUpToV2")
NotDifferentiable("QueueCloseV2")
NotDifferentiable("QueueSizeV2")
NotDifferentiable("QueueIsClosedV2")

GRADIENT_CHECK_RECIPES = {}


def _as_type_list(dtypes):
    if isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(d) for d in dtypes]
    return [_dtypes.as_dtype(dtypes)]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False):
    """As TF's ``_as_shape_list``: None, or one fully defined TensorShape per dtype."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape) or not isinstance(shapes, (list, tuple)) or not shapes \
            or all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]
    shapes = [as_shape(s) for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError(f"shapes must have the same length as dtypes: {len(shapes)} shapes for "
                         f"{len(dtypes)} dtypes.")
    if not unknown_dim_allowed:
        for s in shapes:
            if not s.is_fully_defined():
                raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


class QueueBase:
    """Base class of the queue classes: the ops shared by all queues."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes if shapes is not None else [TensorShape(None) for _ in dtypes]
        self._names = names
        self._queue_ref = queue_ref
        if context.executing_eagerly():
            self._name = queue_ref.array.name
        else:
            self._name = queue_ref.op.name

    @property
    def queue_ref(self):
        """The resource handle of the queue."""
        return self._queue_ref

    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    @property
    def names(self):
        return self._names

    def _check_enqueue_values(self, vals, many):
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue. "
                                 f"Dictionary: {sorted(vals)}, Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names is not None:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Queue '{self._name}' has {len(self._dtypes)} components "
                             f"({[d.name for d in self._dtypes]}), got {len(vals)} values to "
                             f"enqueue.")
        tensors = []
        for i, (v, dt) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            shape = self._shapes[i]
            got = t.shape
            if many:
                if got.rank == 0:
                    raise ValueError(f"enqueue_many on queue '{self._name}': component {i} is a "
                                     f"scalar; it needs a leading batch dimension.")
                got = got[1:] if got.rank is not None else got
            if not shape.is_compatible_with(got):
                raise ValueError(f"Shape mismatch in tuple component {i} of queue "
                                 f"'{self._name}'. Expected {shape}, got {got}.")
            tensors.append(t)
        return tensors

    def _dequeue_return_value(self, tensors):
        if self._names:
            return dict(zip(self._names, tensors))
        if len(tensors) == 1:
            return tensors[0]
        return list(tensors)

    def enqueue(self, vals, name=None):
        """Adds one element (a tensor, a list of tensors, or a dict when the queue has names).

        Returns the op (graph) or None (eager, done at once)."""
        with name_scope(name, f"{self._name}_enqueue"):
            vals = self._check_enqueue_values(vals, many=False)
            return apply_op("QueueEnqueueV2", [self._queue_ref, vals], name=name)

    def enqueue_many(self, vals, name=None):
        """Adds a batch: each component has an extra leading dimension of the same size."""
        with name_scope(name, f"{self._name}_EnqueueMany"):
            vals = self._check_enqueue_values(vals, many=True)
            return apply_op("QueueEnqueueManyV2", [self._queue_ref, vals], name=name)

    def _dequeue(self, op_type, n, name, batch_dim):
        types = {"component_types": list(self._dtypes)}
        if n is None:
            out = apply_op(op_type, [self._queue_ref], types, name=name)
        else:
            out = apply_op(op_type, [self._queue_ref, convert_to_tensor(n, dtype=_dtypes.int32)],
                           types, name=name)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        if not context.executing_eagerly():
            for t, shape in zip(out, self._shapes):
                if shape.rank is not None:
                    t.set_shape(([batch_dim] + shape.dims) if n is not None else shape.dims)
        return self._dequeue_return_value(out)

    def dequeue(self, name=None):
        """Removes one element; blocks until there is one. After ``close()``, raises
        OutOfRangeError once the queue is empty."""
        return self._dequeue("QueueDequeueV2", None, name or f"{self._name}_Dequeue", None)

    def dequeue_many(self, n, name=None):
        """Removes ``n`` elements, concatenated along a new first dimension."""
        dim = n if isinstance(n, int) else None
        return self._dequeue("QueueDequeueManyV2", n, name or f"{self._name}_DequeueMany", dim)

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but after ``close()`` returns the fewer than ``n`` left."""
        return self._dequeue("QueueDequeueUpToV2", n, name or f"{self._name}_DequeueUpTo", None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: further enqueues fail; dequeues drain what is left.
        ``cancel_pending_enqueues=True`` also cancels enqueues blocked right now."""
        return apply_op("QueueCloseV2", [self._queue_ref],
                        {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                        name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        return apply_op("QueueIsClosedV2", [self._queue_ref], name=name or f"{self._name}_IsClosed")

    def size(self, name=None):
        """The number of elements in the queue (int32)."""
        return apply_op("QueueSizeV2", [self._queue_ref], name=name or f"{self._name}_Size")


def _queue_attrs(dtypes, shapes, capacity, shared_name):
    return {"component_types": dtypes,
            "shapes": [s.dims for s in shapes] if shapes is not None else [],
            "capacity": int(capacity), "shared_name": shared_name or ""}


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        if context.executing_eagerly():
            state = FIFOQueueState(capacity, dtypes, [s.dims for s in shapes] if shapes else None,
                                   name=name)
            ref = EagerTensor(state, _dtypes.resource)
        else:
            ref = apply_op("FIFOQueueV2", [], _queue_attrs(dtypes, shapes, capacity, shared_name),
                           name=name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in a random order; while open it keeps at least
    ``min_after_dequeue`` elements, so that what comes out is well mixed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        from .random_ops import get_seed
        seed1, seed2 = get_seed(seed)
        seed1, seed2 = seed1 or 0, seed2 or 0      # (0, 0): nondeterministic, as TF
        if context.executing_eagerly():
            s = None if (seed1 == 0 and seed2 == 0) else seed1 * 1000003 + seed2
            state = RandomShuffleQueueState(capacity, min_after_dequeue, dtypes,
                                            [s_.dims for s_ in shapes] if shapes else None,
                                            seed=s, name=name)
            ref = EagerTensor(state, _dtypes.resource)
        else:
            attrs = _queue_attrs(dtypes, shapes, capacity, shared_name)
            attrs.update({"min_after_dequeue": int(min_after_dequeue), "seed": int(seed1),
                          "seed2": int(seed2)})
            if min_after_dequeue >= capacity:
                raise ValueError(f"RandomShuffleQueue: min_after_dequeue ({min_after_dequeue}) "
                                 f"must be less than capacity ({capacity}).")
            ref = apply_op("RandomShuffleQueueV2", [], attrs, name=name)
        super().__init__(dtypes, shapes, names, ref)


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)
