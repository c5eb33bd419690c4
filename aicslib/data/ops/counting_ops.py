"""Datasets defined by counts: ``range``, ``take``, ``skip``, ``repeat`` (TF's range_op.py,
take_op.py, skip_op.py, repeat_op.py). Every count may be a graph tensor (see scalar_args)."""
import numpy as np

from ...framework import dtypes
from ...framework.errors import InvalidArgumentError
from ...framework.ops import Tensor
from ..util.structure import TensorSpec
from .dataset_ops import Dataset
from .scalar_args import ScalarArgs


def _nonzero_step(step):
    if step == 0:
        raise InvalidArgumentError(None, None, "step must be a non-zero integer.")
    return step


class RangeDataset(ScalarArgs, Dataset):
    def __init__(self, *args, dtype=dtypes.int64):
        # TF's checks (dataset_ops.RangeDataset and range_dataset_op.cc), with its messages
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid `args`. The length of `args` should be between 1 and 3 "
                             f"but was {len(args)}.")
        self._nargs = len(args)
        for i, a in enumerate(args):
            if not isinstance(a, Tensor) and np.asarray(a).dtype.kind not in "iu":
                raise TypeError(f"Cannot convert {a!r} to EagerTensor of dtype int64")
            check = _nonzero_step if i == 2 else (lambda v: v)
            self._set_scalar(f"_arg{i}", a, ["start", "stop", "step"][i + (len(args) == 1)], check)
        self._dtype = dtypes.as_dtype(dtype)
        super().__init__(TensorSpec([], self._dtype))

    def _flat_numpy_iterator(self):
        t = self._dtype.as_numpy_dtype
        for i in range(*[getattr(self, f"_arg{k}") for k in range(self._nargs)]):
            yield [np.asarray(i, dtype=t)]


def _count_or_forever(count):
    return None if count < 0 else count


class RepeatDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, count):
        self.input_dataset = input_dataset
        if count is None:
            self._count = None
        else:
            self._set_scalar("_count", count, "count", _count_or_forever)
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        n = 0
        while self._count is None or n < self._count:
            empty = True
            for flat in self.input_dataset._flat_numpy_iterator():
                empty = False
                yield flat
            if empty:
                return
            n += 1


class TakeDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, count):
        self.input_dataset = input_dataset
        self._set_scalar("_count", count, "count")
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        if self._count == 0:
            return
        for i, flat in enumerate(self.input_dataset._flat_numpy_iterator()):
            yield flat
            if self._count >= 0 and i + 1 >= self._count:
                return


class SkipDataset(ScalarArgs, Dataset):
    def __init__(self, input_dataset, count):
        self.input_dataset = input_dataset
        self._set_scalar("_count", count, "count")
        super().__init__(input_dataset.element_spec)

    def _flat_numpy_iterator(self):
        for i, flat in enumerate(self.input_dataset._flat_numpy_iterator()):
            if self._count < 0 or i < self._count:
                continue
            yield flat
