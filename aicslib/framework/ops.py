"""TF's ``python/framework/ops.py`` surface in one import: Graph, Operation, Tensor, the
default graph and its scopes, and conversion to tensors.

Each lives in the module of its subject:

* ``graph.py``: Graph, Operation, Tensor;
* ``default_graph.py``: the default graph, ``name_scope``, ``control_dependencies``,
  ``device``, collections and GraphKeys;
* ``shape_inference.py``: what a shape function sees, values known before running;
* ``tensor_conversion.py``, ``tensor_util.py``, ``constant_op.py``: values to tensors;
* ``tensor_operators.py``: the Python operators tensors share.
"""
from .constant_op import constant  # noqa: F401
from .default_graph import (GraphKeys, add_to_collection, control_dependencies, device,  # noqa: F401
                            get_collection, get_default_graph, name_scope, reset_default_graph)
from .graph import Graph, Operation, Tensor  # noqa: F401
from .shape_inference import InferenceContext, constant_value  # noqa: F401
from .tensor_conversion import (conversion_function_for, convert_to_tensor, is_tensor,  # noqa: F401
                                register_tensor_conversion_function)
from .tensor_operators import TensorOperators  # noqa: F401
from .tensor_util import default_dtype_for, to_numpy  # noqa: F401
