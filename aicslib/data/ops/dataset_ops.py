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

import numpy as np

from ...framework import context, dtypes as _dtypes
from ...framework.eager import EagerTensor
from ...framework.errors import InvalidArgumentError
from ...framework.ops import convert_to_tensor
from ..util.structure import (DatasetSpec, HasElementSpec, flatten, map_structure, normalize,
                              pack_sequence_as, to_array)
from .structured_function import capture_feeds, function_graph

AUTOTUNE = -1


class Dataset(HasElementSpec):
    """A stream of elements built from arrays and transformed step by step."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    # ---- what the elements look like (element_spec, output_types, output_shapes: HasElementSpec)
    def flat_specs(self):
        return flatten(self._element_spec)

    # ---- iteration (subclasses yield lists of arrays, one per component)
    def _flat_numpy_iterator(self):
        raise NotImplementedError

    def structure_element(self, flat):
        specs = self.flat_specs()
        return pack_sequence_as(self._element_spec,
                                [a if isinstance(s, DatasetSpec) else EagerTensor(a, s.dtype)
                                 for a, s in zip(flat, specs)])

    # ---- graph tensors the data come from (placeholders), bound when an iterator is initialized
    def _children(self):
        kids = [self.input_dataset] if hasattr(self, "input_dataset") else []
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
        if hasattr(self, "input_dataset"):
            new.input_dataset = self.input_dataset._bind(values_by_id)
        if hasattr(self, "_flat_ds"):
            new.component_datasets = [d._bind(values_by_id) for d in self.component_datasets]
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
            yield self.structure_element(flat)

    def as_numpy_iterator(self):
        """Iterates the elements as NumPy arrays (any mode)."""
        for flat in self._flat_numpy_iterator():
            yield pack_sequence_as(self._element_spec, list(flat))

    def make_one_shot_iterator(self):
        """TF 1.x: an iterator whose ``get_next()`` gives the next element.

        In a graph, ``get_next()`` returns tensors; each ``Session.run`` of them
        advances the iterator (once per run, however many of them are fetched).
        Eagerly it returns the next element directly."""
        from .iterator_ops import EagerIterator, Iterator, check_no_placeholders
        if context.executing_eagerly():
            return EagerIterator(self)
        check_no_placeholders(self.captured_tensors())
        return Iterator.from_dataset(self)

    def make_initializable_iterator(self, shared_name=None):
        """TF 1.x: an iterator that starts (over) when ``iterator.initializer`` runs.

        The dataset may be built from placeholders: feed them when running the
        initializer (``sess.run(it.initializer, {x: data})``)."""
        if context.executing_eagerly():
            raise RuntimeError("dataset.make_initializable_iterator is not supported when eager "
                               "execution is enabled. Use `for element in dataset` instead.")
        from .iterator_ops import Iterator
        return Iterator.initializable(self, shared_name=shared_name)

    # ---- whole-dataset computations
    def reduce(self, initial_state, reduce_func):
        """Folds the elements into a state: ``state = reduce_func(state, element)``, from
        ``initial_state``; returns the final state (as TF, the function is traced once
        into a graph and run for every element)."""
        self._check_no_captures("reduce()")
        state0 = normalize(initial_state)
        flat0 = [to_array(v, f"reduce initial_state component {i}")
                 for i, v in enumerate(flatten(state0))]
        graph, phs_state, phs_elem, outs = function_graph("reduce_func"), [], [], None
        with graph.as_default():
            from ...ops.array_ops import placeholder
            phs_state = [placeholder(dt, None, name=f"state{i}") for i, (_, dt) in enumerate(flat0)]
            specs = self.flat_specs()
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
                feed = capture_feeds(graph)
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
        from .source_ops import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        """A single element: ``tensors`` itself."""
        from .source_ops import TensorDataset
        return TensorDataset(tensors)

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
            call_args = tuple(to_array(a, f"from_generator args[{i}]")[0] for i, a in enumerate(args))
            gen = generator

            def generator():
                return gen(*call_args)
        from .source_ops import GeneratorDataset
        return GeneratorDataset(generator, output_types, output_shapes)

    @staticmethod
    def zip(datasets):
        """Elements are tuples (or dicts) of the elements of ``datasets``."""
        from .combining_ops import ZipDataset
        return ZipDataset(datasets)

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
        from .source_ops import TensorSliceDataset
        ds = TensorSliceDataset(np.array([n.encode() for n in names], dtype=object))
        return ds.shuffle(len(names), seed=seed) if shuffle is None or shuffle else ds

    # ---- transformations
    def filter(self, predicate):
        """Keeps the elements for which ``predicate`` (traced once, as map's function) is true."""
        from .mapping_ops import FilterDataset
        return FilterDataset(self, predicate)

    def flat_map(self, map_func):
        """``map_func`` returns a Dataset per element; their elements follow one another."""
        from .mapping_ops import FlatMapDataset
        return FlatMapDataset(self, map_func)

    def interleave(self, map_func, cycle_length=None, block_length=1, num_parallel_calls=None,
                   deterministic=None):
        """Elements of the datasets ``map_func`` returns, taken ``block_length`` at a time from
        ``cycle_length`` of them in turn."""
        from .mapping_ops import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length)

    def window(self, size, shift=None, stride=1, drop_remainder=False):
        """A dataset of windows, each a Dataset of ``size`` elements (``stride`` apart), a new
        window every ``shift`` elements (default ``size``). Without ``drop_remainder`` the last
        windows may be shorter. Usually followed by ``flat_map(lambda w: w.batch(size))``."""
        from .buffering_ops import WindowDataset
        return WindowDataset(self, size, shift, stride, drop_remainder)

    def enumerate(self, start=0):
        """Elements become ``(index, element)``, index int64 from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s (the structures must match)."""
        from .combining_ops import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    def unbatch(self):
        """Splits each element along its first dimension (the inverse of batch)."""
        from .buffering_ops import UnbatchDataset
        return UnbatchDataset(self)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Applies ``map_func`` to each element (tuple elements are passed as arguments)."""
        from .mapping_ops import MapDataset
        return MapDataset(self, map_func)

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
        from .buffering_ops import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def take(self, count):
        """At most ``count`` elements (-1: all)."""
        from .counting_ops import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        """All but the first ``count`` elements."""
        from .counting_ops import SkipDataset
        return SkipDataset(self, count)

    def __repr__(self):
        return f"<{type(self).__name__.lstrip('_')} element_spec={self._element_spec}>"
