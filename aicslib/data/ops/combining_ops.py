"""Datasets made of other datasets: ``zip`` and ``concatenate`` (TF's zip_op.py,
concatenate_op.py)."""
from ...framework.tensor_shape import TensorShape
from ..util.structure import TensorSpec, flatten, pack_sequence_as
from .dataset_ops import Dataset


class ZipDataset(Dataset):
    def __init__(self, datasets):
        self._datasets = datasets
        flat = flatten(datasets)
        if not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip expects a (nested) tuple of Datasets.")
        self.component_datasets = flat
        super().__init__(pack_sequence_as(datasets, [d.element_spec for d in flat]))

    def _flat_numpy_iterator(self):
        its = [d._flat_numpy_iterator() for d in self.component_datasets]
        for parts in zip(*its):
            out = []
            for p in parts:
                out.extend(p)
            yield out


class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        a, b = first.flat_specs(), second.flat_specs()
        if len(a) != len(b) or any(x.dtype != y.dtype for x, y in zip(a, b)):
            raise TypeError(f"Incompatible dataset elements:\n  {first.element_spec} vs.\n  "
                            f"{second.element_spec}")
        self.component_datasets = [first, second]
        merged = [TensorSpec(x.shape if x.shape == y.shape else TensorShape(
            None if x.shape.rank != y.shape.rank else
            [p if p == q else None for p, q in zip(x.shape.dims, y.shape.dims)]), x.dtype)
            for x, y in zip(a, b)]
        super().__init__(pack_sequence_as(first.element_spec, merged))

    def _flat_numpy_iterator(self):
        for d in self.component_datasets:
            yield from d._flat_numpy_iterator()
