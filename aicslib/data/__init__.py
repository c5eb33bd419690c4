"""aics.data: input pipelines (TF's tf.data), the fourth way of loading data.

``Dataset.from_tensor_slices``, ``from_tensors``, ``range``, ``from_generator``,
``zip``, ``list_files``, ``TextLineDataset``; transformations ``map``, ``filter``,
``shuffle``, ``batch``, ``unbatch``, ``repeat``, ``prefetch``, ``take``, ``skip``,
``window``, ``flat_map``, ``interleave``, ``enumerate``, ``concatenate``;
``reduce``. Iterate eagerly with ``for``, or in a graph with
``dataset.make_one_shot_iterator().get_next()`` or an initializable iterator
(``make_initializable_iterator``, ``Iterator.from_structure``) whose
initializer may feed placeholders the dataset was built from.
"""
from ..framework.missing_api import module_getattr
from ..ops import dataset_ops as _dataset_op_defs  # noqa: F401  (iterator op definitions)
from . import experimental  # noqa: F401
from .ops.dataset_ops import AUTOTUNE, Dataset
from .ops.iterator_ops import (Iterator, get_output_shapes, get_output_types,
                               make_initializable_iterator, make_one_shot_iterator)
from .ops.source_ops import TextLineDataset
from .util.structure import DatasetSpec, TensorSpec

__getattr__ = module_getattr(__name__)

__all__ = ["AUTOTUNE", "Dataset", "DatasetSpec", "Iterator", "TensorSpec", "TextLineDataset",
           "experimental", "get_output_shapes", "get_output_types", "make_initializable_iterator",
           "make_one_shot_iterator"]
