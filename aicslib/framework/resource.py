"""The state behind a resource variable handle (TF's ``Var`` in a ResourceMgr).

A VarHandleOp produces a handle: in a Session it is looked up in that
session's resources by the variable's shared name, so two sessions of one
graph hold separate values; in eager mode the Variable object owns it.
Stored values are marked read-only, so a value read earlier is a stable
snapshot: assignment replaces the array, and optimizer updates write in place
only through ``writable_value``, which copies first when anyone else still
holds the array (TF's copy-on-write).
"""
import sys
import threading

import numpy as np

from .errors import FailedPreconditionError, InvalidArgumentError


class VariableStorage:
    __slots__ = ("name", "dtype", "shape", "value", "lock", "owner", "__weakref__")

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = shape  # TensorShape; may be partially known
        self.value = None
        self.lock = threading.Lock()
        self.owner = None  # weakref to the eager Variable, so traced calls can tell tapes

    def read(self):
        v = self.value
        if v is None:
            raise FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name} (variable "
                f"'{self.name}:0'); run its initializer first, e.g. "
                f"sess.run(aics.global_variables_initializer()).")
        return v

    def assign(self, value):
        value = np.asarray(value)
        if value.dtype != self.dtype.as_numpy_dtype:
            raise InvalidArgumentError(None, None, f"Trying to assign a {value.dtype} value to "
                                       f"variable '{self.name}' of dtype {self.dtype.name}.")
        if not self.shape.is_compatible_with(value.shape):
            raise InvalidArgumentError(None, None, f"Trying to assign a value of shape "
                                       f"{tuple(value.shape)} to variable '{self.name}' of shape "
                                       f"{self.shape}.")
        if value.flags.writeable:
            # Writable arrays may be aliased by the caller; kernels that return a fresh
            # array mark it read-only themselves to skip this copy.
            value = value.copy()
            value.flags.writeable = False
        self.value = value

    def writable_value(self):
        """The value to update in place: the stored array itself when nothing else holds
        it, else a private copy (TF's copy-on-write in PrepareToUpdateVariable).

        A snapshot someone still holds (a fetched value, an eager tensor from an earlier
        read) therefore never changes under them, while the common case, a training step
        whose reads are all consumed, updates without allocating.
        """
        v = self.value if self.value is not None else self.read()   # read() raises for an unset one
        # References: self.value, `v` here and getrefcount's own argument.
        if sys.getrefcount(v) <= 3 and v.flags.owndata:
            v.flags.writeable = True
            return v
        return v.copy()

    def store_updated(self, value):
        """Stores an array the caller owns exclusively (from writable_value or fresh)."""
        value.flags.writeable = False
        self.value = value

    @property
    def is_initialized(self):
        return self.value is not None

    def __repr__(self):
        return f"<VariableStorage '{self.name}' {self.dtype.name}{self.shape}>"
