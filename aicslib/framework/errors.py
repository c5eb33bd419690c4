"""Error classes, mirroring tensorflow/python/framework/errors_impl.py.

Every runtime failure of an op is an OpError carrying the node (when known)
and a canonical error code, so a student can catch the same exception types
as in TensorFlow.
"""
import errno
import os

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15


class OpError(Exception):
    """A failure while building or running an op.

    Attributes: ``node_def`` (dict or None), ``op`` (the Operation or None),
    ``message`` and ``error_code``, as in TensorFlow.
    """

    error_code = UNKNOWN

    def __init__(self, node_def, op, message, error_code=None):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self):
        if self.op is not None and getattr(self.op, "name", None):
            if f"'{self.op.name}'" not in self.message and f"node {self.op.name}" not in self.message:
                return f"{self.message}\n\t [[node {self.op.name} (op type {self.op.type})]]"
        return self.message


def _subclass(name, code, doc):
    def __init__(self, node_def, op, message):
        OpError.__init__(self, node_def, op, message, code)
    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "error_code": code})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation was cancelled (e.g. enqueue on a closed queue).")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error with no better category.")
InvalidArgumentError = _subclass("InvalidArgumentError", INVALID_ARGUMENT, "An op received an invalid argument (shape, dtype, value).")
DeadlineExceededError = _subclass("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation completed.")
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity (op, kernel, file) was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", ALREADY_EXISTS, "An entity we tried to create already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation.")
ResourceExhaustedError = _subclass("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory, queue capacity) is exhausted.")
FailedPreconditionError = _subclass("FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run the op (e.g. an uninitialized variable).")
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", OUT_OF_RANGE, "Iteration ran past the end (closed, empty queue; exhausted dataset).")
UnimplementedError = _subclass("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported here.")
InternalError = _subclass("InternalError", INTERNAL, "An internal invariant was broken.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption (e.g. a damaged checkpoint).")


class GraphConstructionError(InvalidArgumentError, ValueError):
    """An invalid argument found while a graph is built (a shape function's refusal, a
    malformed GraphDef): TF's InvalidArgumentError, and also the ValueError that TF's Python
    raises for it (``ops._create_c_op`` re-raises the C API's InvalidArgument as ValueError),
    so code written against either class catches it."""

    def __init__(self, message, op=None):
        InvalidArgumentError.__init__(self, None, op, message)

# TF's errno -> code table (tensorflow/core/platform/errors.cc, ErrnoToCode), for file errors.
_ERRNO_CODES = {
    errno.EACCES: PermissionDeniedError, errno.EPERM: PermissionDeniedError,
    errno.EROFS: PermissionDeniedError,
    errno.ENOSPC: ResourceExhaustedError, errno.EDQUOT: ResourceExhaustedError,
    errno.ENOMEM: ResourceExhaustedError, errno.EMFILE: ResourceExhaustedError,
    errno.ENFILE: ResourceExhaustedError,
    errno.ENOENT: NotFoundError, errno.ENXIO: NotFoundError, errno.ENODEV: NotFoundError,
    errno.EEXIST: AlreadyExistsError,
    errno.EISDIR: FailedPreconditionError, errno.ENOTDIR: FailedPreconditionError,
    errno.ENOTEMPTY: FailedPreconditionError,
    errno.EINVAL: InvalidArgumentError, errno.ENAMETOOLONG: InvalidArgumentError,
    errno.EFBIG: OutOfRangeError,
}


def from_os_error(os_error, path):
    """TF's error for a failed file operation on ``path``: the class its errno maps to in
    TensorFlow (read-only folder -> PermissionDeniedError, full disk ->
    ResourceExhaustedError, ...) and TF's message, ``"<path>; <strerror>"``.
    An OSError without an errno is returned unchanged."""
    code = getattr(os_error, "errno", None)
    if code is None:
        return os_error
    cls = _ERRNO_CODES.get(code) or UnknownError
    return cls(None, None, f"{path}; {os_error.strerror or os.strerror(code)}")


__all__ = ["OpError", "CancelledError", "UnknownError", "InvalidArgumentError",
           "DeadlineExceededError", "NotFoundError", "AlreadyExistsError",
           "PermissionDeniedError", "ResourceExhaustedError", "FailedPreconditionError",
           "AbortedError", "OutOfRangeError", "UnimplementedError", "InternalError", "DataLossError",
           "GraphConstructionError", "from_os_error"]
