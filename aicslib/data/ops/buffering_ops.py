"""Datasets that hold elements back or ahead: ``shuffle``, ``batch`` and its inverse ``unbatch``,
``window``, ``prefetch`` (TF's shuffle_op.py, batch_op.py, unbatch_op.py, window_op.py,
prefetch_op.py). ``buffer_size`` and ``batch_size`` may be graph tensors (see scalar_args)."""
import queue as _queue
import random
import threading

import numpy as np

from ...framework.errors import InvalidArgumentError
from ...framework.tensor_shape import TensorShape
from ..util.structure import DatasetSpec, TensorSpec, map_structure, pack_sequence_as
from .dataset_ops import AUTOTUNE, Dataset
from .scalar_args import ScalarArgs
from .source_ops import TensorSliceDataset


def _at_least_one(what):
    def check(v):
        if v < 1:
            raise ValueError(f"{what} must be greater than zero, got {v}.")
        return v
    return check


class ShuffleDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self.input_dataset = input_dataset
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
        for flat in self.input_dataset._flat_numpy_iterator():
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
        self.input_dataset = input_dataset
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
        for flat in self.input_dataset._flat_numpy_iterator():
            rows.append(flat)
            if len(rows) == self._batch_size:
                yield self._stack(rows)
                rows = []
        if rows and not self._drop:
            yield self._stack(rows)


class UnbatchDataset(Dataset):
    def __init__(self, input_dataset):
        self.input_dataset = input_dataset
        spec = map_structure(lambda s: TensorSpec(s.shape[1:] if s.shape.rank else TensorShape(None),
                                                   s.dtype), input_dataset.element_spec)
        super().__init__(spec)

    def _flat_numpy_iterator(self):
        for flat in self.input_dataset._flat_numpy_iterator():
            n = {np.shape(a)[0] for a in flat}
            if len(n) != 1:
                raise InvalidArgumentError(None, None, "Input element must have the same batch "
                                           "size in each component.")
            for i in range(n.pop()):
                yield [a[i] for a in flat]


class WindowDataset(Dataset):
    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        size = int(size)
        shift = size if shift is None else int(shift)
        stride = int(stride)
        for name, v in (("size", size), ("shift", shift), ("stride", stride)):
            if v < 1:
                raise InvalidArgumentError(None, None, f"Window {name} must be greater than zero, "
                                           f"but got {v}.")
        self.input_dataset = input_dataset
        self._size, self._shift, self._stride, self._drop = size, shift, stride, bool(drop_remainder)
        super().__init__(map_structure(lambda s: DatasetSpec(s), input_dataset.element_spec))

    def _flat_numpy_iterator(self):
        it = self.input_dataset._flat_numpy_iterator()
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
            yield [TensorSliceDataset(np.stack([r[c] for r in rows])) for c in range(n_comp)]
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

    def structure_element(self, flat):
        return pack_sequence_as(self._element_spec, list(flat))


_END = object()


class PrefetchDataset(Dataset):
    def __init__(self, input_dataset, buffer_size):
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE:
            buffer_size = 2
        if buffer_size < 1:
            raise ValueError(f"prefetch: buffer_size must be >= 1 or AUTOTUNE, got "
                             f"{buffer_size}.")
        self.input_dataset = input_dataset
        self._buffer_size = buffer_size
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        q = _queue.Queue(self._buffer_size)
        stop = threading.Event()
        source = self.input_dataset._flat_numpy_iterator()

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
