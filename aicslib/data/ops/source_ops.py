"""Datasets that read their elements from somewhere: ``from_tensor_slices``, ``from_tensors``,
``from_generator``, ``TextLineDataset`` (TF's from_tensor_slices_op.py, from_tensors_op.py,
from_generator_op.py, readers.py).

A component of ``from_tensor_slices`` or ``from_tensors`` may be a graph tensor whose value is
known only when the graph runs (a placeholder): it is *captured*, and an initializable
iterator's initializer feeds its value in (``Dataset.bind_captures``).
"""
import gzip
import zlib

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.errors import InvalidArgumentError
from ...framework.ops import Tensor, constant_value, to_numpy
from ...framework.tensor_shape import TensorShape
from ..util.structure import (TensorSpec, flatten, flatten_up_to, normalize, pack_sequence_as,
                              structure_specs, to_array)
from .dataset_ops import Dataset


def source_component(value, what):
    """``(array, dtype, None)`` for a value known now; ``(None, dtype, tensor)`` for a graph tensor
    whose value is known only when the graph runs (a placeholder): it is *captured*, and an
    initializable iterator's initializer feeds its value in."""
    if isinstance(value, Tensor):
        known = constant_value(value)
        if known is not None:
            return np.asarray(known), value.dtype, None
        return None, value.dtype, value
    arr, dt = to_array(value, what)
    return arr, dt, None


class TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        tensors = normalize(tensors)
        flat = flatten(tensors)
        if not flat:
            raise ValueError("from_tensor_slices needs at least one component.")
        arrays, specs, captures = [], [], []
        for i, t in enumerate(flat):
            arr, dt, tensor = source_component(t, f"from_tensor_slices component {i}")
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
        specs = self.flat_specs()
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


class TensorDataset(Dataset):
    def __init__(self, tensors):
        tensors = normalize(tensors)
        arrays, specs, captures = [], [], []
        for i, t in enumerate(flatten(tensors)):
            arr, dt, tensor = source_component(t, f"from_tensors component {i}")
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


class GeneratorDataset(Dataset):
    def __init__(self, generator, output_types, output_shapes):
        self._gen = generator
        super().__init__(structure_specs(output_types, output_shapes))

    def _flat_numpy_iterator(self):
        specs = self.flat_specs()
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
