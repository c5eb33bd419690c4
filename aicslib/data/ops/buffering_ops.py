"""Datasets that hold elements back: ``shuffle`` and ``batch`` (TF's shuffle_op.py, batch_op.py).
``buffer_size`` and ``batch_size`` may be graph tensors (see scalar_args)."""
import random

import numpy as np

from ...framework.errors import InvalidArgumentError
from ...framework.tensor_shape import TensorShape
from ..util.nest import map_structure
from .dataset_ops import Dataset, TensorSpec
from .scalar_args import ScalarArgs


def _at_least_one(what):
    def check(v):
        if v < 1:
            raise ValueError(f"{what} must be greater than zero, got {v}.")
        return v
    return check


class ShuffleDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self._input = input_dataset
        self._set_scalar("_buffer_size", buffer_size, "buffer_size",
                         _at_least_one("shuffle: buffer_size"))
        self._seed = seed
        self._reshuffle = reshuffle_each_iteration
        self._epoch = 0
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        if self._seed is None:
            rng = random.Random()
        else:
            epoch = self._epoch if self._reshuffle else 0
            rng = random.Random(int(self._seed) * 1000003 + epoch)
        self._epoch += 1
        buf = []
        size = self._buffer_size
        for flat in self._input._flat_numpy_iterator():
            if len(buf) < size:
                buf.append(flat)
                continue
            k = rng.randrange(size)
            out = buf[k]
            buf[k] = flat
            yield out
        rng.shuffle(buf)
        yield from buf


class BatchDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._input = input_dataset
        self._set_scalar("_batch_size", batch_size, "batch_size", _at_least_one("Batch size"))
        self._drop = drop_remainder
        # the batch dimension is static only for a known size whose last batch is dropped
        dim = self._batch_size if drop_remainder else None
        spec = map_structure(
            lambda s: TensorSpec(TensorShape(None) if s.shape.rank is None
                                 else TensorShape([dim] + s.shape.dims), s.dtype),
            input_dataset.element_spec)
        super().__init__(spec)

    @staticmethod
    def _stack(rows):
        out = []
        for i in range(len(rows[0])):
            parts = [r[i] for r in rows]
            shape0 = parts[0].shape
            for j, p in enumerate(parts):
                if p.shape != shape0:
                    raise InvalidArgumentError(
                        None, None, f"Cannot batch tensors with different shapes in component "
                        f"{i}. First element had shape {list(shape0)} and element {j} had "
                        f"shape {list(p.shape)}.")
            out.append(np.stack(parts))
        return out

    def _flat_numpy_iterator(self):
        rows = []
        for flat in self._input._flat_numpy_iterator():
            rows.append(flat)
            if len(rows) == self._batch_size:
                yield self._stack(rows)
                rows = []
        if rows and not self._drop:
            yield self._stack(rows)
