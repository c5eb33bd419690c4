"""Python operators (+ - * / @ ** comparisons, indexing) shared by graph and eager tensors."""


class TensorOperators:
    """Python operators (+ - * / @ ** comparisons, indexing) for graph and eager tensors alike.

    The ops behind them are installed by ``aicslib/ops`` (``override_operator``),
    as TF's math_ops overloads Tensor's operators, so the framework does not
    depend on the ops built on it.
    """

    __slots__ = ()
    __array_priority__ = 100  # make ndarray + tensor defer to us

    @classmethod
    def override_operator(cls, name, fn):
        """Makes ``fn(tensor, ...)`` the implementation of operator method ``name``."""
        if not (name.startswith("__") and name.endswith("__")):
            raise ValueError(f"override_operator expects an operator method name such as "
                             f"'__add__', got {name!r}.")
        setattr(cls, name, fn)

    # Tensors hash by identity so they can be dict keys (feeds); == stays identity too,
    # as in TF1 graph mode (use aics.equal for elementwise comparison).
    __hash__ = object.__hash__

