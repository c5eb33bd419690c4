"""What one element of a tf.data stream is: its structure, its specs, its components' values
(TF's python/data/util/structure.py and nest.py, with TensorSpec from
python/framework/tensor_spec.py).

An element is a tensor or a (nested) tuple, namedtuple or dict of tensors. Unlike ``tf.nest``,
tf.data treats a *list* as one tensor (``from_tensor_slices([1, 2])`` slices a vector), so
the nest functions here are ``aicslib.framework.nest``'s with tuples and dicts as the only
structure.
"""
import functools

from ...framework import dtypes, nest
from ...framework.eager import EagerTensor
from ...framework.ops import default_dtype_for, to_numpy
from ...framework.tensor_shape import TensorShape, as_shape

ELEMENT_SEQUENCES = (tuple,)  # a list is one tensor, not structure

is_nested = functools.partial(nest.is_nested, sequences=ELEMENT_SEQUENCES)
flatten = functools.partial(nest.flatten, sequences=ELEMENT_SEQUENCES)
pack_sequence_as = functools.partial(nest.pack_sequence_as, sequences=ELEMENT_SEQUENCES)
map_structure = functools.partial(nest.map_structure, sequences=ELEMENT_SEQUENCES)
flatten_up_to = functools.partial(nest.flatten_up_to, sequences=ELEMENT_SEQUENCES)


def normalize(value):
    """Lists become tensors (as in TF), tuples and dicts stay structures."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [normalize(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


class TensorSpec:
    """The dtype and (possibly partial) shape of one component of an element."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=aics.{self.dtype.name}, name={self.name!r})"


class DatasetSpec:
    """The element_spec of a dataset whose elements are datasets (``window``)."""

    __slots__ = ("element_spec",)

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r})"


class HasElementSpec:
    """``element_spec`` and its TF1 views ``output_types`` / ``output_shapes``, for datasets
    and iterators (which set ``self._element_spec``)."""

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


def structure_specs(output_types, output_shapes):
    """The element_spec (a structure of TensorSpecs) of TF1's ``output_types`` and
    ``output_shapes`` (None: every shape unknown)."""
    types = normalize(output_types)
    types = map_structure(dtypes.as_dtype, types) if is_nested(types) else dtypes.as_dtype(types)
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


def to_array(value, what):
    """``(array, dtype)`` of a component value known now (NumPy, Python, an EagerTensor)."""
    if isinstance(value, EagerTensor):
        return value.numpy(), value.dtype
    if hasattr(value, "graph") and hasattr(value, "op"):
        raise TypeError(f"{what}: graph tensors cannot be captured by a Dataset here; pass "
                        f"NumPy arrays (or use feeding with placeholders instead).")
    if hasattr(value, "numpy") and callable(value.numpy):
        value = value.numpy()
    dt = default_dtype_for(value)
    return to_numpy(value, dt, what=what), dt
