"""CPU kernels of the iterator ops (TF's core/kernels/data/iterator_ops.cc)."""
import json
import threading

import numpy as np

from ..framework.dtypes import type_string
from ..framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError, OutOfRangeError
from ..framework.kernel_registry import register_kernel
from ..framework.tensor_shape import shape_debug_string


class _IteratorResource:
    """A Python iterator over a Dataset's flat elements, safe to share between threads."""

    def __init__(self, dataset, name, key=None, output_types=(), output_shapes=()):
        self.name = name
        self.key = key                    # where the session's resources keep it (its string handle)
        self.output_types = list(output_types)
        self.output_shapes = list(output_shapes)
        self._it = None if dataset is None else dataset._flat_numpy_iterator()
        self._lock = threading.Lock()
        self._done = False

    def reset(self, dataset):
        """Starts over on ``dataset`` (an initializable iterator's initializer)."""
        with self._lock:
            self._session_closed()
            self._it = dataset._flat_numpy_iterator()
            self._done = False

    def get_next(self):
        with self._lock:
            if self._it is None:
                raise FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been initialized. "
                    "Ensure that you have run the initializer operation for this iterator before "
                    "getting the next element.")
            if self._done:
                raise OutOfRangeError(None, None, "End of sequence")
            try:
                return next(self._it)
            except StopIteration:
                self._done = True
                raise OutOfRangeError(None, None, "End of sequence") from None

    def _session_closed(self):
        if self._it is None:
            return
        close = getattr(self._it, "close", None)
        if close is not None:
            try:
                close()
            except Exception:
                pass


_create_lock = threading.Lock()


@register_kernel("OneShotIterator")
def _one_shot_iterator(ctx, captures, dataset_id, output_types, output_shapes, container="",
                       shared_name=""):
    key = ("iterator", container, shared_name or ctx.node_name)
    it = ctx.resources.get(key)
    if it is not None:
        return it
    with _create_lock:
        it = ctx.resources.get(key)
        if it is not None:
            return it
        registry = getattr(ctx.session.graph, "_aics_datasets", {}) if ctx.session else {}
        ds = registry.get(dataset_id)
        if ds is None:
            raise FailedPreconditionError(
                None, None, f"OneShotIterator '{ctx.node_name}': its dataset is not registered "
                f"with this graph (was the graph imported from a file? Rebuild the dataset).")
        ds = ds.bind_captures(list(captures))
        it = ctx.resources[key] = _IteratorResource(ds, ctx.node_name, key, output_types, output_shapes)
    return it


def _registered_dataset(ctx, dataset_id, what):
    registry = getattr(ctx.session.graph, "_aics_datasets", {}) if ctx.session else {}
    ds = registry.get(dataset_id)
    if ds is None:
        raise FailedPreconditionError(
            None, None, f"{what} '{ctx.node_name}': its dataset is not registered with this "
            f"graph (was the graph imported from a file? Rebuild the dataset).")
    return ds


@register_kernel("IteratorV2")
def _iterator_v2(ctx, shared_name, container, output_types, output_shapes):
    key = ("iterator", container, shared_name or ctx.node_name)
    with _create_lock:
        it = ctx.resources.get(key)
        if it is None:
            it = ctx.resources[key] = _IteratorResource(None, ctx.node_name, key, output_types, output_shapes)
    return it


@register_kernel("MakeIterator")
def _make_iterator(ctx, iterator, captures, dataset_id):
    ds = _registered_dataset(ctx, dataset_id, "MakeIterator")
    iterator.reset(ds.bind_captures(list(captures)))


@register_kernel("IteratorGetNext")
def _iterator_get_next(iterator, output_types):
    return list(iterator.get_next())


# ---- feedable iterators: an iterator named by a string (TF's iterator_ops.cc,
# IteratorToStringHandleOp / IteratorFromStringHandleOp). TF's handle is a serialized
# ResourceHandleProto; here it is the JSON of the key the session keeps the iterator under.

_HANDLE_PREFIX = b"aics-iterator:"


@register_kernel("IteratorToStringHandle")
def _iterator_to_string_handle(resource_handle):
    return np.asarray(_HANDLE_PREFIX + json.dumps(list(resource_handle.key)).encode(), dtype=object)


def _dims(shape):
    return None if shape is None else [None if d is None or d < 0 else int(d) for d in shape]


@register_kernel("IteratorFromStringHandleV2")
def _iterator_from_string_handle(ctx, string_handle, output_types=(), output_shapes=()):
    raw = string_handle[()] if isinstance(string_handle, np.ndarray) else string_handle
    try:
        if not raw.startswith(_HANDLE_PREFIX):
            raise ValueError
        key = tuple(json.loads(raw[len(_HANDLE_PREFIX):].decode()))
    except (ValueError, AttributeError, UnicodeDecodeError):
        raise InvalidArgumentError(None, None, "Could not parse string_handle as a valid ResourceHandle") \
            from None
    it = ctx.resources.get(key)
    if it is None:
        raise NotFoundError(None, None, f"Resource {key[1]}/{key[2]} of type Iterator does not exist in "
                            f"this session (a string handle from another session, or one whose iterator "
                            f"has not run yet).")
    if output_types:
        if len(output_types) != len(it.output_types):
            raise InvalidArgumentError(None, None, f"Number of components does not match: expected "
                                       f"{len(output_types)} types but got {len(it.output_types)}.")
        for i, (want, got) in enumerate(zip(output_types, it.output_types)):
            if want != got:
                raise InvalidArgumentError(None, None, f"Data type mismatch at component {i}: expected "
                                           f"{type_string(want)} but got {type_string(got)}.")
    if output_shapes and it.output_shapes:
        for i, (want, got) in enumerate(zip(output_shapes, it.output_shapes)):
            w, g = _dims(want), _dims(got)
            if w is not None and g is not None and (len(w) != len(g) or any(
                    a is not None and b is not None and a != b for a, b in zip(w, g))):
                raise InvalidArgumentError(None, None, f"Incompatible shapes at component {i}: expected "
                                           f"{shape_debug_string(w)} but got {shape_debug_string(g)}.")
    return it


