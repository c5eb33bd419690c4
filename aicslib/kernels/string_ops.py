"""String kernels (TF's core/kernels/string_*.cc, substr_op.cc, regex_replace_op.cc,
as_string_op.cc, string_to_number_op.cc, reduce_join_op.cc, string_format_op.cc).

String tensors are NumPy object arrays of ``bytes``; every kernel returns such
arrays (never NumPy's ``S`` dtype, which drops trailing NUL bytes).
"""
import re

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel

builtin_len = len   # Substr's kernel takes an argument named len, as TF's op does

_ALL_NUMBERS = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int8,
                dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8]


def _bytes_array(shape, items):
    out = np.empty(shape, dtype=object)
    for i, item in enumerate(items):
        out.flat[i] = item
    return out


def _map(fn, x):
    x = np.asarray(x, dtype=object)
    return _bytes_array(x.shape, (fn(s) for s in x.flat))


def _scalar_bytes(x, what):
    a = np.asarray(x, dtype=object)
    if a.ndim != 0:
        raise InvalidArgumentError(None, None, f"{what} must be a scalar, got shape {list(a.shape)}")
    return a[()]


@register_kernel("Add", type_constraint={"T": [dtypes.string]})
def _add_strings(x, y):
    """Concatenation, broadcasting as for numbers (bytes + bytes)."""
    return np.asarray(np.add(np.asarray(x, dtype=object), np.asarray(y, dtype=object)), dtype=object)


@register_kernel("Add", type_constraint={"T": _ALL_NUMBERS})
def _add_numbers(x, y):
    return np.add(x, y)


@register_kernel("StringJoin")
def _string_join(inputs, separator=""):
    sep = separator.encode() if isinstance(separator, str) else separator
    arrays = [np.asarray(x, dtype=object) for x in inputs]
    shape = ()
    for a in arrays:
        if a.ndim:
            if shape and a.shape != shape:
                raise InvalidArgumentError(None, None, f"Input shapes do not match: "
                                                       f"{list(shape)} vs. {list(a.shape)}")
            shape = a.shape
    arrays = [np.broadcast_to(a, shape) for a in arrays]
    n = int(np.prod(shape, dtype=np.int64))
    flat = [a.reshape(-1) if a.size == n else np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    return _bytes_array(shape, (sep.join(col[i] for col in flat) for i in range(n)))


@register_kernel("ReduceJoin")
def _reduce_join(inputs, reduction_indices, keep_dims=False, separator=""):
    sep = separator.encode() if isinstance(separator, str) else separator
    x = np.asarray(inputs, dtype=object)
    rank = x.ndim
    axes = [int(a) for a in np.ravel(reduction_indices)]
    seen = set()
    for a in axes:
        if not -rank <= a < rank:
            raise InvalidArgumentError(None, None, f"Invalid reduction dimension {a} for input "
                                                   f"with {rank} dimensions.")
        if a % rank in seen:
            raise InvalidArgumentError(None, None, f"Duplicate reduction dimension {a % rank}")
        seen.add(a % rank)
    reduced = sorted(seen)
    kept = [i for i in range(rank) if i not in seen]
    out_shape = [x.shape[i] for i in kept]
    n_out = int(np.prod(out_shape, dtype=np.int64))
    group = int(np.prod([x.shape[i] for i in reduced], dtype=np.int64))
    rows = np.transpose(x, kept + reduced).reshape(n_out, group)   # row-major within a group
    out = _bytes_array(out_shape, (sep.join(row) for row in rows))
    if keep_dims:
        out = out.reshape([1 if i in seen else d for i, d in enumerate(x.shape)])
    return out


@register_kernel("StringLength")
def _string_length(input, unit="BYTE"):
    x = np.asarray(input, dtype=object)
    if unit == "UTF8_CHAR":
        # TF counts the bytes that do not continue a UTF-8 sequence (0b10xxxxxx).
        count = lambda s: sum(1 for b in s if b & 0xC0 != 0x80)  # noqa: E731
    else:
        count = len
    return np.array([count(s) for s in x.flat], dtype=np.int32).reshape(x.shape)


def _utf8_chars(s, where):
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentError(None, None, f"Invalid UTF-8 string {s!r} at {where}") from None


@register_kernel("Substr")
def _substr(input, pos, len, unit="BYTE"):
    x = np.asarray(input, dtype=object)
    pos, length = np.asarray(pos), np.asarray(len)
    if pos.shape != length.shape:
        raise InvalidArgumentError(None, None, f"pos and len should have the same shape, got: "
                                               f"{list(pos.shape)} vs. {list(length.shape)}")
    try:
        x_b, pos_b, len_b = np.broadcast_arrays(x, pos, length)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Incompatible shapes: {list(x.shape)} vs. "
                                               f"{list(pos.shape)}") from None
    out = []
    for i, (s, p, n) in enumerate(zip(x_b.flat, pos_b.flat, len_b.flat)):
        p, n = int(p), int(n)
        seq = _utf8_chars(s, f"index {i}") if unit == "UTF8_CHAR" else s
        size = builtin_len(seq)
        if p > size or p < -size:
            raise InvalidArgumentError(None, None, f"pos {p} out of range for string b'"
                                                   f"{s.decode('latin-1')}' at index {i}")
        if p < 0:
            p += size
        piece = seq[p:p + max(n, 0)]
        out.append(piece.encode("utf-8") if unit == "UTF8_CHAR" else piece)
    return _bytes_array(x_b.shape, out)



@register_kernel("StringSplitV2")
def _string_split_v2(input, sep, maxsplit=-1):
    x = np.asarray(input, dtype=object)
    sep_b = _scalar_bytes(sep, "sep")
    indices, values = [], []
    for row, s in enumerate(x.reshape(-1)):
        if sep_b:
            tokens = s.split(sep_b, maxsplit) if maxsplit >= 0 else s.split(sep_b)
        else:   # TF: an empty sep splits on runs of whitespace, dropping empty tokens
            tokens = s.split(None, maxsplit) if maxsplit >= 0 else s.split()
        for j, t in enumerate(tokens):
            indices.append((row, j))
            values.append(t)
    width = max((j + 1 for _, j in indices), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), _bytes_array((builtin_len(values),), values),
            np.array([x.size, width], dtype=np.int64))


@register_kernel("AsString")
def _as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill=""):
    x = np.asarray(input)
    kind = x.dtype.kind
    if scientific and shortest:
        raise InvalidArgumentError(None, None, "Cannot select both scientific and shortest notation")
    if fill and (builtin_len(fill) > 1 or fill not in " +-0#"):
        raise InvalidArgumentError(None, None, f'Fill argument not supported: "{fill}"')
    if kind == "b":
        if precision > -1 or scientific or shortest or width > -1 or fill:
            raise InvalidArgumentError(None, None, "Cannot select precision, notation, width or "
                                                   "fill for type bool")
        return _bytes_array(x.shape, (b"true" if v else b"false" for v in x.flat))
    spec = "%" + fill + (str(width) if width > -1 else "")
    if kind in "iu":
        if precision > -1:
            raise InvalidArgumentError(None, None, f"Cannot select precision for type "
                                                   f"{x.dtype.name}")
        if scientific or shortest:
            raise InvalidArgumentError(None, None, f"Cannot select scientific or shortest "
                                                   f"notation for type {x.dtype.name}")
        spec += "d"
        return _bytes_array(x.shape, ((spec % int(v)).encode() for v in x.flat))
    spec += (f".{precision}" if precision > -1 else "") + ("g" if shortest else "e" if scientific else "f")
    return _bytes_array(x.shape, ((spec % float(v)).encode() for v in x.flat))


_INT = re.compile(rb"\s*[+-]?[0-9]+\s*")
_FLOAT = re.compile(rb"\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)\s*",
                    re.IGNORECASE)


@register_kernel("StringToNumber")
def _string_to_number(string_tensor, out_type=dtypes.float32):
    x = np.asarray(string_tensor, dtype=object)
    np_type = dtypes.as_dtype(out_type).as_numpy_dtype
    integer = np.issubdtype(np_type, np.integer)
    out = np.empty(x.shape, dtype=np_type)
    for i, s in enumerate(x.flat):
        ok = (_INT if integer else _FLOAT).fullmatch(s) is not None
        if ok and integer:
            v = int(s)
            info = np.iinfo(np_type)
            ok = info.min <= v <= info.max
        if not ok:
            raise InvalidArgumentError(None, None, f"StringToNumberOp could not correctly convert "
                                                   f"string: {s.decode('utf-8', 'backslashreplace')}")
        out.flat[i] = v if integer else np.asarray(float(s)).astype(np_type)
    return out


def _python_rewrite(rewrite):
    """An RE2 rewrite string (``\\1``, ``\\0`` whole match, ``\\\\`` backslash) for re.sub."""
    out, i = [], 0
    while i < builtin_len(rewrite):
        c = rewrite[i:i + 1]
        if c == b"\\" and i + 1 < builtin_len(rewrite):
            nxt = rewrite[i + 1:i + 2]
            if nxt.isdigit():
                out.append(b"\\g<" + nxt + b">")
            elif nxt == b"\\":
                out.append(b"\\\\")
            else:
                raise InvalidArgumentError(None, None, f"Invalid rewrite pattern: {rewrite!r} "
                                                       f"(a backslash must be followed by a digit "
                                                       f"or another backslash)")
            i += 2
        else:
            out.append(c.replace(b"\\", b"\\\\"))
            i += 1
    return b"".join(out)


@register_kernel("RegexReplace")
def _regex_replace(input, pattern, rewrite, replace_global=True):
    pattern_b = _scalar_bytes(pattern, "Pattern")
    rewrite_b = _python_rewrite(_scalar_bytes(rewrite, "Rewrite"))
    try:
        regex = re.compile(pattern_b)
    except re.error as e:
        raise InvalidArgumentError(None, None, f"Invalid pattern: {pattern_b.decode('utf-8', 'replace')}, "
                                               f"error: {e}") from None
    count = 0 if replace_global else 1
    try:
        return _map(lambda s: regex.sub(rewrite_b, s, count=count), input)
    except (re.error, IndexError) as e:
        raise InvalidArgumentError(None, None, f"Invalid rewrite: {e}") from None


def _case(fn_ascii, fn_text, encoding, x):
    if encoding == "":
        return _map(fn_ascii, x)
    if encoding.lower().replace("-", "") != "utf8":
        raise InvalidArgumentError(None, None, f"encoding must be '' or 'utf-8', got {encoding!r}")
    return _map(lambda s: fn_text(_utf8_chars(s, "input")).encode("utf-8"), x)


@register_kernel("StringUpper")
def _string_upper(input, encoding=""):
    return _case(bytes.upper, str.upper, encoding, input)


@register_kernel("StringLower")
def _string_lower(input, encoding=""):
    return _case(bytes.lower, str.lower, encoding, input)


def _summarize(a, summarize):
    """A tensor as tf.print / tf.strings.format show it: ``[1 2 3]``, ``[[1 2] [3 4]]``,
    strings quoted, the middle of long dimensions elided with ``...``."""
    def item(v):
        if isinstance(v, bytes):
            return '"' + v.decode("utf-8", "backslashreplace") + '"'
        if isinstance(v, (bool, np.bool_)):
            return "True" if v else "False"
        if isinstance(v, (float, np.floating)):
            return np.format_float_positional(v, trim="-") if abs(v) < 1e16 else repr(float(v))
        return str(v)

    def rec(x):
        if x.ndim == 0:
            return item(x[()])
        n = x.shape[0]
        if summarize >= 0 and n > 2 * summarize:
            parts = [rec(x[i]) for i in range(summarize)] + ["..."] + \
                    [rec(x[i]) for i in range(n - summarize, n)]
        else:
            parts = [rec(x[i]) for i in range(n)]
        return "[" + (" " if x.ndim == 1 else "\n ").join(parts) + "]"
    a = np.asarray(a, dtype=object) if isinstance(a, bytes) else np.asarray(a)
    if a.ndim == 0 and isinstance(a[()], bytes):
        return a[()].decode("utf-8", "backslashreplace")   # a scalar string: its text
    return rec(a)


@register_kernel("StringFormat")
def _string_format(inputs, template="%s", placeholder="%s", summarize=3):
    pieces = template.split(placeholder)
    if builtin_len(pieces) - 1 != builtin_len(inputs):
        raise InvalidArgumentError(None, None, f"num placeholders in template and num inputs "
                                               f"must match: {builtin_len(pieces) - 1} vs. "
                                               f"{builtin_len(inputs)}")
    out = [pieces[0]]
    for x, rest in zip(inputs, pieces[1:]):
        out += [_summarize(x, summarize), rest]
    return np.array("".join(out).encode("utf-8"), dtype=object)
