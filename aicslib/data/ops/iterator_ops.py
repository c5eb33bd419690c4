"""Iterators over datasets (TF's python/data/ops/iterator_ops.py).

Eagerly a one-shot iterator simply walks the dataset. In a graph an iterator is a resource
that ops act on (their definitions: aicslib/ops/dataset_ops.py; kernels:
aicslib/kernels/dataset_ops.py): ``MakeIterator`` points it at a dataset, kept with the graph
under an id (``register_dataset``), and ``IteratorGetNext`` gives the next element, one per
``Session.run``.
"""
from ...framework import context, dtypes as _dtypes
from ...framework.errors import OutOfRangeError
from ...framework.execute import apply_op
from ...framework.ops import convert_to_tensor, get_default_graph
from ..util.structure import HasElementSpec, flatten, map_structure, pack_sequence_as, structure_specs
from .dataset_ops import Dataset


def check_no_placeholders(captured):
    """A one-shot iterator evaluates what its dataset captured when it first runs, with no feed:
    a placeholder there is an error, as TF's "Cannot capture a placeholder by value"."""
    seen, todo = set(), [t.op for t in captured]
    while todo:
        op = todo.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.type == "Placeholder":
            raise ValueError(f"Cannot capture a placeholder (name:{op.name}, type:Placeholder) by "
                             f"value: use make_initializable_iterator() and feed it when running "
                             f"the iterator's initializer.")
        todo.extend(t.op for t in op.inputs)


class EagerIterator:
    """Eager one-shot iterator: ``get_next()`` / ``next()`` return the next element."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._it = dataset._flat_numpy_iterator()

    def __iter__(self):
        return self

    def __next__(self):
        return self._dataset.structure_element(next(self._it))

    def get_next(self, name=None):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    @property
    def element_spec(self):
        return self._dataset.element_spec


def register_dataset(dataset):
    """Keeps ``dataset`` with the default graph; the iterator kernels find it by this id."""
    g = get_default_graph()
    registry = g.__dict__.setdefault("_aics_datasets", {})
    dataset_id = len(registry) + 1
    registry[dataset_id] = dataset
    return dataset_id


class Iterator(HasElementSpec):
    """A graph-mode iterator (TF 1.x ``tf.compat.v1.data.Iterator``)."""

    def __init__(self, handle, element_spec, initializer=None):
        self._handle = handle
        if isinstance(element_spec, Dataset):  # the older (handle, dataset) form
            element_spec = element_spec.element_spec
        self._element_spec = element_spec
        self._initializer = initializer
        self._next = None
        self._string_handle = None

    @classmethod
    def from_dataset(cls, dataset):
        from ...ops import dataset_ops as _defs  # noqa: F401  (op definitions)
        dataset_id = register_dataset(dataset)
        specs = dataset.flat_specs()
        handle = apply_op("OneShotIterator", [dataset.captured_tensors()], {
            "dataset_id": dataset_id, "output_types": [s.dtype for s in specs],
            "output_shapes": [s.shape.dims for s in specs]}, name="OneShotIterator")
        return cls(handle, dataset.element_spec)

    @classmethod
    def initializable(cls, dataset, shared_name=None):
        """``dataset.make_initializable_iterator()``: an iterator of the dataset's structure whose
        ``initializer`` starts it (over) on ``dataset``, as TF builds it."""
        it = cls.from_structure(dataset.output_types, dataset.output_shapes, shared_name=shared_name)
        it._initializer = it.make_initializer(dataset)
        return it

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An uninitialized iterator for elements of this structure; ``make_initializer(ds)``
        gives the op that (re)starts it on a dataset ``ds`` of that structure."""
        from ...ops import dataset_ops as _defs  # noqa: F401  (op definitions)
        if context.executing_eagerly():
            raise RuntimeError("Iterator.from_structure is only supported in graph mode "
                               "(tf.compat.v1.disable_eager_execution()).")
        spec = structure_specs(output_types, output_shapes)
        flat = flatten(spec)
        handle = apply_op("IteratorV2", [], {
            "shared_name": shared_name or "", "container": "",
            "output_types": [s.dtype for s in flat],
            "output_shapes": [s.shape.dims for s in flat]}, name="Iterator")
        return Iterator(handle, spec)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A *feedable* iterator: the iterator named by the ``string`` tensor ``string_handle``
        (typically a placeholder fed the value of another iterator's ``string_handle()``), so
        one ``get_next()`` reads from the training or the validation iterator, as the feed
        picks. Its elements must have ``output_types`` (and shapes compatible with
        ``output_shapes``); a mismatch is an InvalidArgumentError when it runs, as in TF."""
        from ...ops import dataset_ops as _defs  # noqa: F401  (op definitions)
        if context.executing_eagerly():
            raise RuntimeError("Iterator.from_string_handle is only supported in graph mode "
                               "(tf.compat.v1.disable_eager_execution()).")
        string_handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        if string_handle.shape.rank not in (None, 0):
            raise ValueError(f"string_handle must be a scalar string tensor, got '{string_handle.name}' "
                             f"of shape {string_handle.shape}.")
        spec = structure_specs(output_types, output_shapes)
        flat = flatten(spec)
        handle = apply_op("IteratorFromStringHandleV2", [string_handle], {
            "output_types": [s.dtype for s in flat],
            "output_shapes": [s.shape.dims for s in flat]}, name="IteratorFromStringHandleV2")
        return Iterator(handle, spec)

    def string_handle(self, name=None):
        """A scalar ``string`` tensor naming this iterator, to feed a ``from_string_handle``
        iterator's placeholder (its value is only meaningful in the session that made it)."""
        if name is not None:
            return apply_op("IteratorToStringHandle", [self._handle], name=name)
        if self._string_handle is None:
            self._string_handle = apply_op("IteratorToStringHandle", [self._handle], name="IteratorToStringHandle")
        return self._string_handle

    def make_initializer(self, dataset, name=None):
        """The op that points this iterator at the start of ``dataset``."""
        mine, theirs = flatten(self._element_spec), dataset.flat_specs()
        if len(mine) != len(theirs) or any(a.dtype != b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output types {map_structure(lambda s: s.dtype, self._element_spec)} "
                            f"but got dataset with output types {dataset.output_types}.")
        for a, b in zip(mine, theirs):
            if not a.shape.is_compatible_with(b.shape):
                raise TypeError(f"Expected output shapes compatible with "
                                f"{map_structure(lambda s: s.shape, self._element_spec)} but got "
                                f"dataset with output shapes {dataset.output_shapes}.")
        dataset_id = register_dataset(dataset)
        return apply_op("MakeIterator", [self._handle, dataset.captured_tensors()],
                        {"dataset_id": dataset_id}, name=name or "MakeIterator")

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("The iterator does not have an initializer. This means it was likely "
                             "created using `tf.data.Dataset.make_one_shot_iterator()`. For an "
                             "initializable iterator, use "
                             "`tf.data.Dataset.make_initializable_iterator()` instead.")
        return self._initializer

    def get_next(self, name=None):
        """Tensors of the next element. The same tensors are returned on every call."""
        if self._next is None:
            specs = flatten(self._element_spec)
            out = apply_op("IteratorGetNext", [self._handle], {
                "output_types": [s.dtype for s in specs],
                "output_shapes": [s.shape.dims for s in specs]}, name=name or "IteratorGetNext")
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            for t, s in zip(out, specs):
                if s.shape.rank is not None:
                    t.set_shape(s.shape)
            self._next = pack_sequence_as(self._element_spec, out)
        return self._next


def make_one_shot_iterator(dataset):
    """TF 1.x ``tf.compat.v1.data.make_one_shot_iterator(dataset)``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """TF 1.x ``tf.compat.v1.data.make_initializable_iterator(dataset)``."""
    return dataset.make_initializable_iterator(shared_name=shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes
