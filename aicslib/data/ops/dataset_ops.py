"""``aics.data.Dataset`` (TF's python/data/ops/dataset_ops.py), in miniature.

A Dataset is a recipe for a stream of *elements*; an element is a tensor or
a (nested) tuple/dict of tensors. Transformations return new Datasets::

    ds = (aics.data.Dataset.from_tensor_slices((x_train, y_train))
          .shuffle(10000, seed=0)
          .map(lambda x, y: (aics.cast(x, aics.float32) / 255.0, y))
          .batch(128)
          .prefetch(2))

    for x, y in ds:          # eager: EagerTensors
        ...
    x, y = ds.make_one_shot_iterator().get_next()   # graph: tensors; each run -> next batch

As in TensorFlow, the function given to ``map`` is *traced into a graph*
once (its arguments are placeholders with the element's dtypes and shapes)
and run for every element, in both modes; so it must be written with aicslib
ops (or plain arithmetic on tensors). In graph mode, the end of the data
raises ``OutOfRangeError`` from ``Session.run``.

Elements are kept as NumPy arrays between transformations; ``prefetch``
prepares elements in a background thread.
"""
import copy
import gzip
import queue as _queue
import threading
import zlib

import numpy as np

from ...framework import context, dtypes as _dtypes
from ...framework.eager import EagerTensor
from ...framework.errors import InvalidArgumentError, OutOfRangeError
from ...framework.execute import apply_op
from ...framework.ops import (Tensor, constant_value, convert_to_tensor, default_dtype_for,
                              get_default_graph, to_numpy)
from ...framework.tensor_shape import TensorShape, as_shape
from ..util.nest import (flatten, flatten_up_to, is_nested, map_structure, normalize,  # noqa: F401
                         pack_sequence_as)

AUTOTUNE = -1


class TensorSpec:
    """The dtype and (possibly partial) shape of one component of an element."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self.shape = as_shape(shape)
        self.dtype = _dtypes.as_dtype(dtype)
        self.name = name

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=aics.{self.dtype.name}, name={self.name!r})"


def _to_array(value, what):
    if isinstance(value, EagerTensor):
        return value.numpy(), value.dtype
    if hasattr(value, "graph") and hasattr(value, "op"):
        raise TypeError(f"{what}: graph tensors cannot be captured by a Dataset here; pass "
                        f"NumPy arrays (or use feeding with placeholders instead).")
    if hasattr(value, "numpy") and callable(value.numpy):
        value = value.numpy()
    dt = default_dtype_for(value)
    return to_numpy(value, dt, what=what), dt


def _source_component(value, what):
    """``(array, dtype, None)`` for a value known now; ``(None, dtype, tensor)`` for a graph tensor
    whose value is known only when the graph runs (a placeholder): it is *captured*, and an
    initializable iterator's initializer feeds its value in."""
    if isinstance(value, Tensor):
        known = constant_value(value)
        if known is not None:
            return np.asarray(known), value.dtype, None
        return None, value.dtype, value
    arr, dt = _to_array(value, what)
    return arr, dt, None


def _check_no_placeholders(captured):
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


class DatasetSpec:
    """The element_spec of a dataset whose elements are datasets (``window``)."""

    __slots__ = ("element_spec",)

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r})"


class Dataset:
    """A stream of elements built from arrays and transformed step by step."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    # ---- what the elements look like
    @property
    def element_spec(self):
        """The structure of TensorSpecs describing one element."""
        return self._element_spec

    @property
    def output_types(self):
        return map_structure(lambda s: s.dtype, self._element_spec)

    @property
    def output_shapes(self):
        return map_structure(lambda s: s.shape, self._element_spec)

    def _flat_specs(self):
        return flatten(self._element_spec)

    # ---- iteration (subclasses yield lists of arrays, one per component)
    def _flat_numpy_iterator(self):
        raise NotImplementedError

    def _wrap(self, flat):
        specs = self._flat_specs()
        return pack_sequence_as(self._element_spec,
                                [a if isinstance(s, DatasetSpec) else EagerTensor(a, s.dtype)
                                 for a, s in zip(flat, specs)])

    # ---- graph tensors the data come from (placeholders), bound when an iterator is initialized
    def _children(self):
        kids = [self._input] if hasattr(self, "_input") else []
        return kids + list(getattr(self, "_flat_ds", ()))

    def captured_tensors(self):
        """The graph tensors (placeholders) this dataset reads, each once, in a fixed order."""
        out, seen = [], set()
        for _, t in getattr(self, "_captures", ()):
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
        for child in self._children():
            for t in child.captured_tensors():
                if id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
        return out

    def bind_captures(self, values):
        """A copy reading ``values`` (arrays, in ``captured_tensors()`` order) for the captured tensors."""
        caps = self.captured_tensors()
        if len(values) != len(caps):
            raise InvalidArgumentError(None, None, f"Dataset captures {len(caps)} tensors, "
                                       f"got {len(values)} values.")
        return self._bind({id(t): v for t, v in zip(caps, values)})

    def _bind(self, values_by_id):
        if not self.captured_tensors():
            return self
        new = copy.copy(self)
        if hasattr(self, "_input"):
            new._input = self._input._bind(values_by_id)
        if hasattr(self, "_flat_ds"):
            new._flat_ds = [d._bind(values_by_id) for d in self._flat_ds]
        new._bind_own(values_by_id)
        return new

    def _bind_own(self, values_by_id):
        pass

    def _check_no_captures(self, what):
        caps = self.captured_tensors()
        if caps:
            raise ValueError(f"{what}: this dataset is built from graph tensors whose values are "
                             f"only known when the graph runs ({', '.join(repr(t.name) for t in caps)}); "
                             f"use make_initializable_iterator() and run its initializer with a feed.")

    def __iter__(self):
        if not context.executing_eagerly():
            raise RuntimeError("__iter__() is only supported when eager execution is enabled; "
                               "in a graph use dataset.make_one_shot_iterator().get_next().")
        self._check_no_captures("__iter__()")
        for flat in self._flat_numpy_iterator():
            yield self._wrap(flat)

    def as_numpy_iterator(self):
        """Iterates the elements as NumPy arrays (any mode)."""
        for flat in self._flat_numpy_iterator():
            yield pack_sequence_as(self._element_spec, list(flat))

    def make_one_shot_iterator(self):
        """TF 1.x: an iterator whose ``get_next()`` gives the next element.

        In a graph, ``get_next()`` returns tensors; each ``Session.run`` of them
        advances the iterator (once per run, however many of them are fetched).
        Eagerly it returns the next element directly."""
        if context.executing_eagerly():
            return _EagerIterator(self)
        _check_no_placeholders(self.captured_tensors())
        return Iterator._from_dataset(self)

    def make_initializable_iterator(self, shared_name=None):
        """TF 1.x: an iterator that starts (over) when ``iterator.initializer`` runs.

        The dataset may be built from placeholders: feed them when running the
        initializer (``sess.run(it.initializer, {x: data})``)."""
        if context.executing_eagerly():
            raise RuntimeError("dataset.make_initializable_iterator is not supported when eager "
                               "execution is enabled. Use `for element in dataset` instead.")
        it = Iterator.from_structure(self.output_types, self.output_shapes, shared_name=shared_name)
        it._initializer = it.make_initializer(self)
        return it

    # ---- whole-dataset computations
    def reduce(self, initial_state, reduce_func):
        """Folds the elements into a state: ``state = reduce_func(state, element)``, from
        ``initial_state``; returns the final state (as TF, the function is traced once
        into a graph and run for every element)."""
        self._check_no_captures("reduce()")
        state0 = normalize(initial_state)
        flat0 = [_to_array(v, f"reduce initial_state component {i}")
                 for i, v in enumerate(flatten(state0))]
        graph, phs_state, phs_elem, outs = _function_graph("reduce_func"), [], [], None
        with graph.as_default():
            from ...ops.array_ops import placeholder
            phs_state = [placeholder(dt, None, name=f"state{i}") for i, (_, dt) in enumerate(flat0)]
            specs = self._flat_specs()
            phs_elem = [placeholder(sp.dtype, sp.shape, name=f"elem{i}") for i, sp in enumerate(specs)]
            st = pack_sequence_as(state0, phs_state)
            el = pack_sequence_as(self._element_spec, phs_elem)
            out = normalize(reduce_func(st, el))  # TF passes the element whole, even a tuple
            if isinstance(out, list):
                out = tuple(out)
            outs = [convert_to_tensor(o, dtype=dt) for o, (_, dt) in zip(flatten(out), flat0)]
            if len(outs) != len(flat0):
                raise TypeError("reduce_func must return a state with the structure of initial_state.")
        from ...framework.session import Session
        values = [a for a, _ in flat0]
        with Session(graph=graph) as sess:
            for flat in self._flat_numpy_iterator():
                feed = _capture_feeds(graph)
                feed.update(zip(phs_state, values))
                feed.update(zip(phs_elem, flat))
                values = sess.run(outs, feed_dict=feed)
        from ...ops.array_ops import constant
        result = [constant(np.asarray(v), dtype=dt) for v, (_, dt) in zip(values, flat0)]
        return pack_sequence_as(state0, result)

    def cardinality(self):
        """The number of elements when known without iterating (-1 infinite, -2 unknown)."""
        from ...ops.array_ops import constant
        n = self._cardinality()
        return constant(np.int64(n))

    def _cardinality(self):
        return -2

    # ---- sources
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per slice along the first dimension of every component."""
        return _TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        """A single element: ``tensors`` itself."""
        return _TensorDataset(tensors)

    @staticmethod
    def range(*args, dtype=_dtypes.int64):
        """Like Python's range: ``range(stop)``, ``range(start, stop[, step])``, int64."""
        from .counting_ops import RangeDataset
        return RangeDataset(*args, dtype=dtype)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None):
        """Elements produced by calling ``generator(*args)`` (a Python generator function).

        Give the elements' dtypes as ``output_types`` (and optionally
        ``output_shapes``), or both at once as ``output_signature`` (a structure
        of ``TensorSpec``). ``args`` are converted to NumPy values before the call,
        as TF passes them to the generator."""
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments must not be "
                                "specified together with the `output_signature` argument.")
            sig = normalize(output_signature)
            output_types = map_structure(lambda sp: sp.dtype, sig)
            output_shapes = map_structure(lambda sp: sp.shape, sig)
        elif output_types is None:
            raise TypeError("Missing required positional argument: output_signature (or output_types).")
        if args is not None:
            call_args = tuple(_to_array(a, f"from_generator args[{i}]")[0] for i, a in enumerate(args))
            gen = generator

            def generator():
                return gen(*call_args)
        return _GeneratorDataset(generator, output_types, output_shapes)

    @staticmethod
    def zip(datasets):
        """Elements are tuples (or dicts) of the elements of ``datasets``."""
        return _ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The file names matching a glob pattern, as a dataset of strings (sorted unless shuffled)."""
        import glob as _glob
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
        names = sorted({n for p in patterns for n in _glob.glob(p.decode() if isinstance(p, bytes) else p)})
        if not names:
            raise InvalidArgumentError(None, None, f"Expected 'tf.Tensor(False, shape=(), "
                                       f"dtype=bool)' to be true. No files matched pattern: "
                                       f"{file_pattern}")
        ds = _TensorSliceDataset(np.array([n.encode() for n in names], dtype=object))
        return ds.shuffle(len(names), seed=seed) if shuffle is None or shuffle else ds

    # ---- transformations
    def filter(self, predicate):
        """Keeps the elements for which ``predicate`` (traced once, as map's function) is true."""
        return _FilterDataset(self, predicate)

    def flat_map(self, map_func):
        """``map_func`` returns a Dataset per element; their elements follow one another."""
        return _FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=1, num_parallel_calls=None,
                   deterministic=None):
        """Elements of the datasets ``map_func`` returns, taken ``block_length`` at a time from
        ``cycle_length`` of them in turn."""
        return _InterleaveDataset(self, map_func, cycle_length, block_length)

    def window(self, size, shift=None, stride=1, drop_remainder=False):
        """A dataset of windows, each a Dataset of ``size`` elements (``stride`` apart), a new
        window every ``shift`` elements (default ``size``). Without ``drop_remainder`` the last
        windows may be shorter. Usually followed by ``flat_map(lambda w: w.batch(size))``."""
        return _WindowDataset(self, size, shift, stride, drop_remainder)

    def enumerate(self, start=0):
        """Elements become ``(index, element)``, index int64 from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s (the structures must match)."""
        return _ConcatenateDataset(self, dataset)

    def unbatch(self):
        """Splits each element along its first dimension (the inverse of batch)."""
        return _UnbatchDataset(self)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Applies ``map_func`` to each element (tuple elements are passed as arguments)."""
        return _MapDataset(self, map_func)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Shuffles with a buffer of ``buffer_size`` elements, as TF: each output is drawn at
        random from the buffer, which is refilled from the input. A buffer as large as the
        data set shuffles it uniformly."""
        from .buffering_ops import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def batch(self, batch_size, drop_remainder=False):
        """Stacks ``batch_size`` consecutive elements (the last batch may be smaller)."""
        from .buffering_ops import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def repeat(self, count=None):
        """Repeats the data ``count`` times (None or -1: forever)."""
        from .counting_ops import RepeatDataset
        return RepeatDataset(self, count)

    def prefetch(self, buffer_size):
        """Prepares up to ``buffer_size`` elements ahead in a background thread."""
        return _PrefetchDataset(self, buffer_size)

    def take(self, count):
        """At most ``count`` elements (-1: all)."""
        from .counting_ops import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        """All but the first ``count`` elements."""
        from .counting_ops import SkipDataset
        return SkipDataset(self, count)

    def __repr__(self):
        return f"<{type(self).__name__[1:]} element_spec={self._element_spec}>"


class _TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        tensors = normalize(tensors)
        flat = flatten(tensors)
        if not flat:
            raise ValueError("from_tensor_slices needs at least one component.")
        arrays, specs, captures = [], [], []
        for i, t in enumerate(flat):
            arr, dt, tensor = _source_component(t, f"from_tensor_slices component {i}")
            if tensor is not None:
                if tensor.shape.rank == 0:
                    raise ValueError(f"from_tensor_slices: component {i} ('{tensor.name}') is a "
                                     f"scalar; every component needs a first dimension to slice.")
                captures.append((i, tensor))
                specs.append(TensorSpec(tensor.shape[1:] if tensor.shape.rank is not None
                                        else TensorShape(None), dt))
                arrays.append(None)
                continue
            if arr.ndim == 0:
                raise ValueError(f"from_tensor_slices: component {i} is a scalar; every "
                                 f"component needs a first dimension to slice.")
            arrays.append(arr)
            specs.append(TensorSpec(arr.shape[1:], dt))
        self._arrays = arrays
        self._captures = captures
        self._n = self._check_sizes(arrays)
        super().__init__(pack_sequence_as(tensors, specs))

    @staticmethod
    def _check_sizes(arrays):
        n = {a.shape[0] for a in arrays if a is not None}
        if len(n) > 1:
            raise ValueError(f"from_tensor_slices: all components must have the same size in "
                             f"dimension 0, got {[a.shape[0] for a in arrays if a is not None]}.")
        return n.pop() if n else None

    def _bind_own(self, values_by_id):
        arrays = list(self._arrays)
        specs = self._flat_specs()
        for i, t in self._captures:
            a = np.asarray(values_by_id[id(t)])
            if a.ndim == 0 or not specs[i].shape.is_compatible_with(a.shape[1:]):
                raise InvalidArgumentError(None, None, f"from_tensor_slices: the value fed for "
                                           f"'{t.name}' has shape {a.shape}, expected slices of "
                                           f"shape {specs[i].shape}.")
            arrays[i] = a
        try:
            self._n = self._check_sizes(arrays)
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        self._arrays, self._captures = arrays, []

    def _flat_numpy_iterator(self):
        arrays = self._arrays
        for i in range(self._n):
            yield [a[i] for a in arrays]

    def _cardinality(self):
        return -2 if self._captures else self._n

    def __len__(self):
        return self._n


class _TensorDataset(Dataset):
    def __init__(self, tensors):
        tensors = normalize(tensors)
        arrays, specs, captures = [], [], []
        for i, t in enumerate(flatten(tensors)):
            arr, dt, tensor = _source_component(t, f"from_tensors component {i}")
            if tensor is not None:
                captures.append((i, tensor))
                specs.append(TensorSpec(tensor.shape, dt))
            else:
                specs.append(TensorSpec(arr.shape, dt))
            arrays.append(arr)
        self._arrays = arrays
        self._captures = captures
        super().__init__(pack_sequence_as(tensors, specs))

    def _bind_own(self, values_by_id):
        arrays = list(self._arrays)
        for i, t in self._captures:
            arrays[i] = np.asarray(values_by_id[id(t)])
        self._arrays, self._captures = arrays, []

    def _flat_numpy_iterator(self):
        yield list(self._arrays)

    def _cardinality(self):
        return 1


class _GeneratorDataset(Dataset):
    def __init__(self, generator, output_types, output_shapes):
        self._gen = generator
        super().__init__(_structure_specs(output_types, output_shapes))

    def _flat_numpy_iterator(self):
        specs = self._flat_specs()
        for value in self._gen():
            try:
                flat = flatten_up_to(self._element_spec, value)
            except ValueError:
                flat = []
            if len(flat) != len(specs):
                raise InvalidArgumentError(None, None, f"from_generator: the generator yielded "
                                           f"{len(flat)} components, expected {len(specs)}.")
            out = []
            for i, (v, s) in enumerate(zip(flat, specs)):
                arr = to_numpy(v, s.dtype, what=f"generator component {i}")
                if not s.shape.is_compatible_with(arr.shape):
                    raise InvalidArgumentError(None, None, f"from_generator: component {i} has "
                                               f"shape {arr.shape}, expected {s.shape}.")
                out.append(arr)
            yield out


class _ZipDataset(Dataset):
    def __init__(self, datasets):
        self._datasets = datasets
        flat = flatten(datasets)
        if not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip expects a (nested) tuple of Datasets.")
        self._flat_ds = flat
        super().__init__(pack_sequence_as(datasets, [d.element_spec for d in flat]))

    def _flat_numpy_iterator(self):
        its = [d._flat_numpy_iterator() for d in self._flat_ds]
        for parts in zip(*its):
            out = []
            for p in parts:
                out.extend(p)
            yield out


class _MapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        from ...ops.array_ops import placeholder
        self._input = input_dataset
        self._graph = _function_graph("map_func")
        in_spec = input_dataset.element_spec
        with self._graph.as_default():
            phs = [placeholder(s.dtype, s.shape, name=f"arg{i}")
                   for i, s in enumerate(flatten(in_spec))]
            args = pack_sequence_as(in_spec, phs)
            if isinstance(args, tuple) and not hasattr(args, "_fields"):
                out = map_func(*args)
            else:
                out = map_func(args)
            if isinstance(out, list):
                out = tuple(out)
            out = normalize(out)
            outs = [convert_to_tensor(o) for o in flatten(out)]
        self._phs = phs
        self._outs = outs
        # Outputs that are inputs passed through unchanged are copied without a run.
        self._passthrough = [phs.index(o) if o in phs else None for o in outs]
        self._session = None
        self._lock = threading.Lock()
        super().__init__(pack_sequence_as(out, [TensorSpec(t.shape, t.dtype) for t in outs]))

    def _get_session(self):
        from ...framework.session import Session
        with self._lock:
            if self._session is None:
                self._session = Session(graph=self._graph)
            return self._session

    def _flat_numpy_iterator(self):
        sess = self._get_session()
        phs, outs = self._phs, self._outs
        compute = [o for o, p in zip(outs, self._passthrough) if p is None]
        for flat in self._input._flat_numpy_iterator():
            feed = _capture_feeds(self._graph)
            feed.update(zip(phs, flat))
            vals = iter(sess.run(compute, feed_dict=feed)) if compute else iter(())
            yield [flat[p] if p is not None else next(vals) for p in self._passthrough]


_END = object()


class _PrefetchDataset(Dataset):
    def __init__(self, input_dataset, buffer_size):
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE:
            buffer_size = 2
        if buffer_size < 1:
            raise ValueError(f"prefetch: buffer_size must be >= 1 or AUTOTUNE, got "
                             f"{buffer_size}.")
        self._input = input_dataset
        self._buffer_size = buffer_size
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        q = _queue.Queue(self._buffer_size)
        stop = threading.Event()
        source = self._input._flat_numpy_iterator()

        def produce():
            try:
                for flat in source:
                    while not stop.is_set():
                        try:
                            q.put(flat, timeout=0.1)
                            break
                        except _queue.Full:
                            continue
                    if stop.is_set():
                        return
                q.put(_END)
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
                q.put(e)

        t = threading.Thread(target=produce, daemon=True, name="aics.data.prefetch")
        t.start()
        try:
            while True:
                item = q.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()


def _function_graph(what):
    """A graph to trace a dataset function into; eager tensors and variables it uses are
    captured (fed at every run, so a variable's current value is read), as TF's FuncGraph."""
    from ...eager.function import FuncGraph
    return FuncGraph(what)


def _capture_feeds(graph):
    return {ph: value.array for value, ph in graph.captures}


class _TracedFunction:
    """A function of one element, traced once into its own graph and run per element (as map)."""

    def __init__(self, input_spec, func, what):
        from ...ops.array_ops import placeholder
        self._graph = _function_graph(what)
        with self._graph.as_default():
            phs = [placeholder(s.dtype, s.shape, name=f"arg{i}")
                   for i, s in enumerate(flatten(input_spec))]
            args = pack_sequence_as(input_spec, phs)
            out = func(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") else func(args)
            if isinstance(out, bool):
                raise TypeError(f"The function given to {what} returned a Python bool: in aicslib, "
                                f"`==` and `!=` on tensors compare identity (TF1 graph semantics); "
                                f"use aics.equal(x, y) / aics.not_equal(x, y) for elementwise results.")
            if isinstance(out, list):
                out = tuple(out)
            out = normalize(out)
            outs = [convert_to_tensor(o) for o in flatten(out)]
        self.phs, self.outs, self.structure = phs, outs, out
        self._session = None
        self._lock = threading.Lock()
        self._what = what

    def __call__(self, flat):
        from ...framework.session import Session
        with self._lock:
            if self._session is None:
                self._session = Session(graph=self._graph)
        feed = _capture_feeds(self._graph)
        feed.update(zip(self.phs, flat))
        return self._session.run(self.outs, feed_dict=feed)


class _FilterDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self._input = input_dataset
        self._fn = _TracedFunction(input_dataset.element_spec, predicate, "filter")
        if len(self._fn.outs) != 1 or self._fn.outs[0].dtype != _dtypes.bool or \
                self._fn.outs[0].shape.rank not in (0, None):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor.")
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        for flat in self._input._flat_numpy_iterator():
            if bool(self._fn(flat)[0]):
                yield flat


def _python_element(dataset, flat):
    """An element as map_func of flat_map/interleave sees it: EagerTensors (or datasets of a window)."""
    specs = dataset._flat_specs()
    return pack_sequence_as(dataset.element_spec,
                            [a if isinstance(s, DatasetSpec) else EagerTensor(np.asarray(a), s.dtype)
                             for a, s in zip(flat, specs)])


def _call_with_element(func, element):
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return func(*element)
    return func(element)


class _FlatMapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self._input = input_dataset
        self._func = map_func
        probe = self._probe_spec(input_dataset, map_func)
        super().__init__(probe)

    @staticmethod
    def _probe_spec(input_dataset, map_func):
        """The element spec of the datasets map_func returns, from one dummy element."""
        specs = input_dataset._flat_specs()
        dummy = []
        for s in specs:
            if isinstance(s, DatasetSpec):
                inner = [np.zeros([d or 1 for d in (x.shape.dims or [])], x.dtype.as_numpy_dtype)[None]
                         for x in flatten(s.element_spec)]
                dummy.append(_TensorSliceDataset(pack_sequence_as(s.element_spec, inner)))
            else:
                dummy.append(np.zeros([d or 1 for d in (s.shape.dims or [])], s.dtype.as_numpy_dtype))
        with _eager_calls():
            out = _call_with_element(map_func, _python_element(input_dataset, dummy))
        if not isinstance(out, Dataset):
            raise TypeError(f"`map_func` must return a `Dataset` object. Got {type(out).__name__}.")
        return out.element_spec

    def _datasets(self):
        for flat in self._input._flat_numpy_iterator():
            with _eager_calls():
                ds = _call_with_element(self._func, _python_element(self._input, flat))
            yield ds

    def _flat_numpy_iterator(self):
        for ds in self._datasets():
            yield from ds._flat_numpy_iterator()


class _InterleaveDataset(_FlatMapDataset):
    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        super().__init__(input_dataset, map_func)
        self._cycle = None if cycle_length in (None, AUTOTUNE) else int(cycle_length)
        self._block = int(block_length)

    def _flat_numpy_iterator(self):
        sources = self._datasets()
        cycle = self._cycle or 4
        active = []
        exhausted = False
        while True:
            while not exhausted and len(active) < cycle:
                try:
                    active.append(next(sources)._flat_numpy_iterator())
                except StopIteration:
                    exhausted = True
            if not active:
                return
            for it in list(active):
                for _ in range(self._block):
                    try:
                        yield next(it)
                    except StopIteration:
                        active.remove(it)
                        break


class _eager_calls:
    """Runs map_func of flat_map eagerly (it builds datasets, not graph ops), in any mode."""

    def __enter__(self):
        self._was = context.eager_enabled()
        self._stack = list(context.thread_state().graph_stack)
        context.thread_state().graph_stack[:] = []
        context.enable_eager_execution()

    def __exit__(self, *exc):
        context.thread_state().graph_stack[:] = self._stack
        if not self._was:
            context.disable_eager_execution()


class _WindowDataset(Dataset):
    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        size = int(size)
        shift = size if shift is None else int(shift)
        stride = int(stride)
        for name, v in (("size", size), ("shift", shift), ("stride", stride)):
            if v < 1:
                raise InvalidArgumentError(None, None, f"Window {name} must be greater than zero, "
                                           f"but got {v}.")
        self._input = input_dataset
        self._size, self._shift, self._stride, self._drop = size, shift, stride, bool(drop_remainder)
        super().__init__(map_structure(lambda s: DatasetSpec(s), input_dataset.element_spec))

    def _flat_numpy_iterator(self):
        it = self._input._flat_numpy_iterator()
        span = (self._size - 1) * self._stride + 1
        buf, exhausted = [], False
        while True:
            while not exhausted and len(buf) < span:
                try:
                    buf.append(next(it))
                except StopIteration:
                    exhausted = True
            if not buf:
                return
            rows = buf[0:span:self._stride]
            if len(rows) < self._size and self._drop:
                return
            n_comp = len(rows[0])
            yield [_TensorSliceDataset(np.stack([r[c] for r in rows])) for c in range(n_comp)]
            if self._shift < len(buf):
                buf = buf[self._shift:]
            else:
                skip = self._shift - len(buf)
                buf = []
                for _ in range(skip):
                    try:
                        next(it)
                    except StopIteration:
                        exhausted = True
                        break
            if exhausted and not buf:
                return

    def _wrap(self, flat):
        return pack_sequence_as(self._element_spec, list(flat))


class _ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        a, b = first._flat_specs(), second._flat_specs()
        if len(a) != len(b) or any(x.dtype != y.dtype for x, y in zip(a, b)):
            raise TypeError(f"Incompatible dataset elements:\n  {first.element_spec} vs.\n  "
                            f"{second.element_spec}")
        self._flat_ds = [first, second]
        merged = [TensorSpec(x.shape if x.shape == y.shape else TensorShape(
            None if x.shape.rank != y.shape.rank else
            [p if p == q else None for p, q in zip(x.shape.dims, y.shape.dims)]), x.dtype)
            for x, y in zip(a, b)]
        super().__init__(pack_sequence_as(first.element_spec, merged))

    def _flat_numpy_iterator(self):
        for d in self._flat_ds:
            yield from d._flat_numpy_iterator()


class _UnbatchDataset(Dataset):
    def __init__(self, input_dataset):
        self._input = input_dataset
        spec = map_structure(lambda s: TensorSpec(s.shape[1:] if s.shape.rank else TensorShape(None),
                                                   s.dtype), input_dataset.element_spec)
        super().__init__(spec)

    def _flat_numpy_iterator(self):
        for flat in self._input._flat_numpy_iterator():
            n = {np.shape(a)[0] for a in flat}
            if len(n) != 1:
                raise InvalidArgumentError(None, None, "Input element must have the same batch "
                                           "size in each component.")
            for i in range(n.pop()):
                yield [a[i] for a in flat]


class TextLineDataset(Dataset):
    """The lines of one or more text files, as string scalars without the line ending.

    ``compression_type``: None or '' (plain), 'GZIP' or 'ZLIB'. Files are read in
    the order given, each from the start, as TF's TextLineDataset."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,
                 name=None):
        if isinstance(filenames, (str, bytes)):
            filenames = [filenames]
        elif isinstance(filenames, Dataset):
            filenames = [f for (f,) in filenames._flat_numpy_iterator()]
        else:
            filenames = [getattr(f, "numpy", lambda f=f: f)() for f in filenames]
        self._files = [f.decode() if isinstance(f, bytes) else str(np.asarray(f).item()
                       if not isinstance(f, str) else f) for f in filenames]
        kind = (compression_type or "").upper()
        if kind not in ("", "GZIP", "ZLIB"):
            raise InvalidArgumentError(None, None, f"Unsupported compression_type: {compression_type}")
        self._compression = kind
        super().__init__(TensorSpec([], _dtypes.string))

    def _read(self, path):
        from ...framework import errors
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise errors.from_os_error(e, path) from None
        if self._compression == "GZIP":
            data = gzip.decompress(data)
        elif self._compression == "ZLIB":
            data = zlib.decompress(data)
        return data

    def _flat_numpy_iterator(self):
        for path in self._files:
            data = self._read(path)
            lines = data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                if line.endswith(b"\r"):
                    line = line[:-1]
                yield [np.array(line, dtype=object)]


# -- iterators ---------------------------------------------------------------------------------

class _EagerIterator:
    """Eager one-shot iterator: ``get_next()`` / ``next()`` return the next element."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._it = dataset._flat_numpy_iterator()

    def __iter__(self):
        return self

    def __next__(self):
        return self._dataset._wrap(next(self._it))

    def get_next(self, name=None):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    @property
    def element_spec(self):
        return self._dataset.element_spec


def _register_dataset(dataset):
    """Keeps ``dataset`` with the default graph; the iterator kernels find it by this id."""
    g = get_default_graph()
    registry = g.__dict__.setdefault("_aics_datasets", {})
    dataset_id = len(registry) + 1
    registry[dataset_id] = dataset
    return dataset_id


def _structure_specs(output_types, output_shapes):
    types = normalize(output_types)
    types = map_structure(_dtypes.as_dtype, types) if is_nested(types) else _dtypes.as_dtype(types)
    if output_shapes is None:
        shapes = map_structure(lambda _: TensorShape(None), types) if is_nested(types) \
            else TensorShape(None)
    else:
        shapes = output_shapes
    flat_t = flatten(types)
    try:
        flat_s = flatten_up_to(types, shapes)
    except ValueError:
        raise ValueError(f"output_shapes {output_shapes} must have the same structure as "
                         f"output_types {output_types}.") from None
    return pack_sequence_as(types, [TensorSpec(as_shape(sh) if not isinstance(sh, TensorShape) else sh, t)
                                    for sh, t in zip(flat_s, flat_t)])


class Iterator:
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
    def _from_dataset(cls, dataset):
        from ...ops import dataset_ops as _defs  # noqa: F401  (op definitions)
        dataset_id = _register_dataset(dataset)
        specs = dataset._flat_specs()
        handle = apply_op("OneShotIterator", [dataset.captured_tensors()], {
            "dataset_id": dataset_id, "output_types": [s.dtype for s in specs],
            "output_shapes": [s.shape.dims for s in specs]}, name="OneShotIterator")
        return cls(handle, dataset.element_spec)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An uninitialized iterator for elements of this structure; ``make_initializer(ds)``
        gives the op that (re)starts it on a dataset ``ds`` of that structure."""
        from ...ops import dataset_ops as _defs  # noqa: F401  (op definitions)
        if context.executing_eagerly():
            raise RuntimeError("Iterator.from_structure is only supported in graph mode "
                               "(tf.compat.v1.disable_eager_execution()).")
        spec = _structure_specs(output_types, output_shapes)
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
        spec = _structure_specs(output_types, output_shapes)
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
        mine, theirs = flatten(self._element_spec), dataset._flat_specs()
        if len(mine) != len(theirs) or any(a.dtype != b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output types {map_structure(lambda s: s.dtype, self._element_spec)} "
                            f"but got dataset with output types {dataset.output_types}.")
        for a, b in zip(mine, theirs):
            if not a.shape.is_compatible_with(b.shape):
                raise TypeError(f"Expected output shapes compatible with "
                                f"{map_structure(lambda s: s.shape, self._element_spec)} but got "
                                f"dataset with output shapes {dataset.output_shapes}.")
        dataset_id = _register_dataset(dataset)
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

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def output_types(self):
        return map_structure(lambda s: s.dtype, self._element_spec)

    @property
    def output_shapes(self):
        return map_structure(lambda s: s.shape, self._element_spec)

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
