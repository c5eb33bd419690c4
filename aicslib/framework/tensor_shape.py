"""Static shapes that may be partially known, as tensorflow/python/framework/tensor_shape.py."""


class Dimension(int):
    """A known size as TF1 shapes give it (``x.shape[1].value``): an int with ``.value``.

    ``shape[i]`` returns one after ``compat.v1.disable_v2_tensorshape()`` (or
    ``disable_v2_behavior()``); with TF2 behaviour it returns a plain int. An
    unknown size stays None either way.
    """

    __slots__ = ()

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"Dimension({int(self)})"


_V2_TENSORSHAPE = [True]  # one switch for the process, as TF's _TENSORSHAPE_V2_OVERRIDE


def enable_v2_tensorshape():
    """``shape[i]`` returns an int (TF2)."""
    _V2_TENSORSHAPE[0] = True


def disable_v2_tensorshape():
    """``shape[i]`` returns a Dimension with ``.value`` (TF1)."""
    _V2_TENSORSHAPE[0] = False


def dimension_value(dimension):
    """The int (or None) in a shape entry, whether a Dimension or already an int."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


class TensorShape:
    """A possibly partial shape: ``dims`` is None (unknown rank) or a tuple of int/None."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            try:
                dims = list(dims)
            except TypeError:
                dims = [dims]
            out = []
            for d in dims:
                if d is None or d == -1:
                    out.append(None)
                else:
                    d = int(d)
                    if d < 0:
                        raise ValueError(f"Dimension {d} must be >= 0 (or None for unknown).")
                    out.append(d)
            self._dims = tuple(out)

    @classmethod
    def from_known_dims(cls, dims):
        """A fully known shape from a tuple of ints (an array's ``.shape``), unchecked."""
        shape = cls.__new__(cls)
        shape._dims = tuple(dims)
        return shape

    @property
    def dims(self):
        if self._dims is None:
            return None
        if _V2_TENSORSHAPE[0]:
            return list(self._dims)
        return [d if d is None else Dimension(d) for d in self._dims]  # TF1: dims[i].value

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and None not in self._dims

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        d = self._dims[key]
        return d if _V2_TENSORSHAPE[0] or d is None else Dimension(d)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return f"TensorShape({self.dims})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join("None" if d is None else str(d) for d in self._dims) + ")"

    def as_proto_list(self):
        """JSON form used in GraphDefs: None for unknown rank, -1 for unknown dims."""
        return None if self._dims is None else [-1 if d is None else d for d in self._dims]


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    return TensorShape(None if rank is None else [None] * rank)


def shape_debug_string(dims):
    """A shape as TF's C++ messages print it (TensorShape::DebugString): ``[2,3]``, ``?`` for
    an unknown size, ``<unknown>`` for an unknown rank."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(int(d)) for d in dims) + "]"
