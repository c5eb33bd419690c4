"""Static shapes that may be partially known, as tensorflow/python/framework/tensor_shape.py."""
import threading



def _other_value(other):
    """``other``'s size for Dimension arithmetic: an int, None (unknown), or NotImplemented."""
    if isinstance(other, Dimension):
        return other.value
    if other is None:
        return None
    if isinstance(other, bool) or not hasattr(other, "__index__"):
        return NotImplemented
    try:
        return other.__index__()
    except TypeError:  # an array or tensor with __index__ that is not a scalar int
        return NotImplemented


class _DimensionType(type):
    """``isinstance(Dimension(None), Dimension)`` holds although the unknown size is no int."""

    def __instancecheck__(cls, instance):
        return type.__instancecheck__(cls, instance) or (
            cls is Dimension and type(instance) is UnknownDimension)


class Dimension(int, metaclass=_DimensionType):
    """One entry of a TF1 shape (``x.shape[1].value``), as TF's ``tensor_shape.Dimension``.

    ``shape[i]`` returns one after ``compat.v1.disable_v2_tensorshape()`` (or
    ``disable_v2_behavior()``); with TF2 behaviour it returns a plain int or None.
    A known size is an int (so it works wherever an int does) whose arithmetic
    with ints gives Dimensions; ``Dimension(None)`` is the unknown size: ``.value``
    is None, it prints as ``?``, arithmetic with it stays unknown and comparisons
    with it give None, as in TF.
    """

    def __new__(cls, value):
        if isinstance(value, Dimension):
            return value
        if value is None:
            return _UNKNOWN
        try:
            v = value.__index__()
        except AttributeError:
            raise TypeError(f"Dimension value must be integer or None or have an __index__ method, "
                            f"got value '{value!r}' with type '{type(value)}'") from None
        if v < 0:
            raise ValueError(f"Dimension {v} must be >= 0")
        return int.__new__(cls, v)

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"Dimension({int(self)})"

    def __str__(self):
        return str(int(self))

    __hash__ = int.__hash__  # defining __eq__ (below) would drop it

    def __truediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: 'Dimension' and '{type(other).__name__}', "
                        "please use // instead")

    def __rtruediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and 'Dimension', "
                        "please use // instead")

    def is_compatible_with(self, other):
        v = _other_value(other)
        return v is None or v == int(self)

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        self.assert_is_compatible_with(other)
        return self

    def __reduce__(self):
        return Dimension, (int(self),)


class UnknownDimension:
    """``Dimension(None)``: a size not known until the graph runs (``x.shape[0]`` of a
    ``[None, 784]`` placeholder under TF1 behaviour). Not an int: using it as one is an
    error, as in TF, rather than a silent 0."""

    __slots__ = ()
    value = None

    def __repr__(self):
        return "Dimension(None)"

    def __str__(self):
        return "?"

    def __bool__(self):
        return False

    def __hash__(self):
        return hash(None)

    def __int__(self):
        raise TypeError("Cannot convert Dimension(None) (an unknown size) to an int")

    __index__ = __int__

    def is_compatible_with(self, other):
        return True

    def assert_is_compatible_with(self, other):
        pass

    def merge_with(self, other):
        return Dimension(other)

    def __reduce__(self):
        return Dimension, (None,)


_UNKNOWN = UnknownDimension()


def _binary(name, result):
    """A Dimension operator: NotImplemented unless ``other`` is a size, else ``result(self, size)``."""
    def method(self, other):
        v = _other_value(other)
        return NotImplemented if v is NotImplemented else result(self, v)
    method.__name__ = name
    return method


# Comparisons with an unknown size give None; arithmetic with one stays unknown (TF's rules).
for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(Dimension, _name, _binary(_name, lambda d, v, op=_name: None if v is None
                                      else getattr(int(d), op)(v)))
    setattr(UnknownDimension, _name, _binary(_name, lambda d, v: None))
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__"):
    setattr(Dimension, _name, _binary(_name, lambda d, v, op=_name: _UNKNOWN if v is None
                                      else Dimension(getattr(int(d), op)(v))))
    setattr(UnknownDimension, _name, _binary(_name, lambda d, v: d))
del _name


def as_dimension(value):
    """``value`` as a Dimension (a Dimension is returned as it is)."""
    return Dimension(value)


_V2_TENSORSHAPE = [True]  # one switch for the process, as TF's _TENSORSHAPE_V2_OVERRIDE
_INTERNAL = threading.local()  # shape and gradient functions see ints whatever the switch says


def _v2():
    return _V2_TENSORSHAPE[0] or getattr(_INTERNAL, "depth", 0) > 0


class v2_shapes_inside:
    """Within it (on this thread), ``shape[i]`` is an int or None whatever the TF1 switch says.

    Shape and gradient functions are written against TF2 shapes; the framework runs
    them inside this so that a TF1 program's ``disable_v2_behavior()`` changes what
    the program sees, not how the library computes.
    """

    def __enter__(self):
        _INTERNAL.depth = getattr(_INTERNAL, "depth", 0) + 1

    def __exit__(self, *exc):
        _INTERNAL.depth -= 1


def enable_v2_tensorshape():
    """``shape[i]`` returns an int (TF2)."""
    _V2_TENSORSHAPE[0] = True


def disable_v2_tensorshape():
    """``shape[i]`` returns a Dimension with ``.value`` (TF1)."""
    _V2_TENSORSHAPE[0] = False


def dimension_value(dimension):
    """The int (or None) in a shape entry, whether a Dimension or already an int."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def _tf1_dim(d):
    return _UNKNOWN if d is None else Dimension(d)


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
        if _v2():
            return list(self._dims)
        # TF1: dims[i].value. Unknown entries stay None here (TF gives Dimension(None)): the
        # library's own code reads .dims, while programs read sizes by indexing or iterating.
        return [d if d is None else Dimension(d) for d in self._dims]

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

    def accepts(self, shape):
        """Whether a value of the known shape ``shape`` (a tuple of ints, an array's ``.shape``)
        fits this one: ``is_compatible_with`` without making a TensorShape of it (a Session
        checks every feed)."""
        dims = self._dims
        if dims is None:
            return True
        if len(dims) != len(shape):
            return False
        for a, b in zip(dims, shape):
            if a is not None and a != b:
                return False
        return True

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
        if _v2():
            return iter(self._dims)
        return iter([_tf1_dim(d) for d in self._dims])

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        d = self._dims[key]
        return d if _v2() else _tf1_dim(d)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        if self._dims is None or _v2():
            return f"TensorShape({self.dims})"
        return f"TensorShape({[_tf1_dim(d) for d in self._dims]})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        unknown = "None" if _v2() else "?"  # TF1 printed unknown sizes as '?'
        dims = [unknown if d is None else str(d) for d in self._dims]
        if len(dims) == 1:
            return f"({dims[0]},)"
        return "(" + ", ".join(dims) + ")"

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
