"""Datasets that apply a function to each element: ``map``, ``filter``, ``flat_map``,
``interleave`` (TF's map_op.py, filter_op.py, flat_map_op.py, interleave_op.py).

``map`` and ``filter`` trace their function into a graph once (structured_function.py);
the function of ``flat_map`` and ``interleave`` returns a Dataset, so it runs eagerly, once
per element, as Python.
"""
import numpy as np

from ...framework import context, dtypes as _dtypes
from ...framework.eager import EagerTensor
from ..util.structure import DatasetSpec, TensorSpec, flatten, pack_sequence_as
from .dataset_ops import AUTOTUNE, Dataset
from .source_ops import TensorSliceDataset
from .structured_function import StructuredFunction, call_with_element


class MapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self.input_dataset = input_dataset
        self._fn = fn = StructuredFunction(input_dataset.element_spec, map_func, "map_func")
        # Outputs that are inputs passed through unchanged are copied without a run.
        self._passthrough = [fn.phs.index(o) if o in fn.phs else None for o in fn.outs]
        self._compute = [o for o, p in zip(fn.outs, self._passthrough) if p is None]
        super().__init__(pack_sequence_as(fn.structure, [TensorSpec(t.shape, t.dtype) for t in fn.outs]))

    def _flat_numpy_iterator(self):
        for flat in self.input_dataset._flat_numpy_iterator():
            vals = iter(self._fn(flat, self._compute)) if self._compute else iter(())
            yield [flat[p] if p is not None else next(vals) for p in self._passthrough]


class FilterDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self.input_dataset = input_dataset
        self._fn = StructuredFunction(input_dataset.element_spec, predicate, "filter")
        if isinstance(self._fn.structure, bool):
            raise TypeError("The function given to filter returned a Python bool: in aicslib, "
                            "`==` and `!=` on tensors compare identity (TF1 graph semantics); "
                            "use aics.equal(x, y) / aics.not_equal(x, y) for elementwise results.")
        if len(self._fn.outs) != 1 or self._fn.outs[0].dtype != _dtypes.bool or \
                self._fn.outs[0].shape.rank not in (0, None):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor.")
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        for flat in self.input_dataset._flat_numpy_iterator():
            if bool(self._fn(flat)[0]):
                yield flat


def _python_element(dataset, flat):
    """An element as map_func of flat_map/interleave sees it: EagerTensors (or datasets of a window)."""
    specs = dataset.flat_specs()
    return pack_sequence_as(dataset.element_spec,
                            [a if isinstance(s, DatasetSpec) else EagerTensor(np.asarray(a), s.dtype)
                             for a, s in zip(flat, specs)])


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


class FlatMapDataset(Dataset):
    def __init__(self, input_dataset, map_func):
        self.input_dataset = input_dataset
        self._func = map_func
        probe = self._probe_spec(input_dataset, map_func)
        super().__init__(probe)

    @staticmethod
    def _probe_spec(input_dataset, map_func):
        """The element spec of the datasets map_func returns, from one dummy element."""
        specs = input_dataset.flat_specs()
        dummy = []
        for s in specs:
            if isinstance(s, DatasetSpec):
                inner = [np.zeros([d or 1 for d in (x.shape.dims or [])], x.dtype.as_numpy_dtype)[None]
                         for x in flatten(s.element_spec)]
                dummy.append(TensorSliceDataset(pack_sequence_as(s.element_spec, inner)))
            else:
                dummy.append(np.zeros([d or 1 for d in (s.shape.dims or [])], s.dtype.as_numpy_dtype))
        with _eager_calls():
            out = call_with_element(map_func, _python_element(input_dataset, dummy))
        if not isinstance(out, Dataset):
            raise TypeError(f"`map_func` must return a `Dataset` object. Got {type(out).__name__}.")
        return out.element_spec

    def _datasets(self):
        for flat in self.input_dataset._flat_numpy_iterator():
            with _eager_calls():
                ds = call_with_element(self._func, _python_element(self.input_dataset, flat))
            yield ds

    def _flat_numpy_iterator(self):
        for ds in self._datasets():
            yield from ds._flat_numpy_iterator()


class InterleaveDataset(FlatMapDataset):
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
