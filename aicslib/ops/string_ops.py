"""String ops: definitions (TF's core/ops/string_ops.cc) and Python API (python/ops/string_ops.py).

A string tensor holds ``bytes`` (NUL bytes included; ``framework/string_values.py``),
and these ops work on bytes as TF's do: ``length`` counts bytes unless
``unit="UTF8_CHAR"``, ``upper``/``lower`` change ASCII letters only unless
``encoding="utf-8"``. ``aics.strings`` is this module's public API; kernels are
in ``aicslib/kernels/string_ops.py``. ``a + b`` on string tensors is TF's ``Add``
op (``math_ops.add`` sends strings there, as TF's ``_add_dispatch`` does).
"""
import numpy as np

from ..framework import dtypes
from ..framework.common_shapes import broadcast_binary_op_shape, scalar_shape, unchanged_shape
from ..framework.execute import apply_op
from ..framework.gradient_registry import no_gradient
from ..framework.op_def import register_op
from ..framework.ops import convert_to_tensor
from ..framework.tensor_shape import TensorShape

_NUMBERS = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8}"
_AS_STRING_TYPES = "{half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool}"


def _join_shape(ctx):
    shape = TensorShape([])
    for i in range(ctx.num_inputs):
        s = ctx.input_shape(i)
        if s.rank == 0:
            continue
        if shape.rank == 0:
            shape = s
            continue
        try:
            shape = shape.merge_with(s)
        except ValueError:
            raise ValueError(f"Input shapes do not match: {shape} vs. {s}") from None
    return shape


def _reduce_join_shape(ctx):
    shape = ctx.input_shape(0)
    axes = ctx.input_constant(1)
    if shape.rank is None or axes is None:
        return None
    rank = shape.rank
    axes = [int(a) for a in np.ravel(axes)]
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
    axes = {a % rank for a in axes} if rank else set()
    keep = ctx.attr("keep_dims")
    dims = [1 if i in axes else d for i, d in enumerate(shape.dims)] if keep else \
        [d for i, d in enumerate(shape.dims) if i not in axes]
    return TensorShape(dims)


def _split_shape(ctx):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


# Add: TF's string-capable addition (cwise_op_add_1.cc registers it for tstring too).
register_op("Add").input("x: T").input("y: T").output("z: T") \
    .attr("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, string}") \
    .set_shape_fn(broadcast_binary_op_shape)
register_op("StringJoin").input("inputs: N * string").output("output: string") \
    .attr("N: int >= 0").attr("separator: string = ''").set_shape_fn(_join_shape)
register_op("ReduceJoin").input("inputs: string").input("reduction_indices: int32") \
    .output("output: string").attr("keep_dims: bool = false").attr("separator: string = ''") \
    .set_shape_fn(_reduce_join_shape)
register_op("StringLength").input("input: string").output("output: int32") \
    .attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'").set_shape_fn(unchanged_shape)
register_op("Substr").input("input: string").input("pos: T").input("len: T") \
    .output("output: string").attr("T: {int32, int64}") \
    .attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'").set_shape_fn(broadcast_binary_op_shape)
register_op("StringSplitV2").input("input: string").input("sep: string") \
    .output("indices: int64").output("values: string").output("shape: int64") \
    .attr("maxsplit: int = -1").set_shape_fn(_split_shape)
register_op("AsString").input("input: T").output("output: string").attr(f"T: {_AS_STRING_TYPES}") \
    .attr("precision: int = -1").attr("scientific: bool = false").attr("shortest: bool = false") \
    .attr("width: int = -1").attr("fill: string = ''").set_shape_fn(unchanged_shape)
register_op("StringToNumber").input("string_tensor: string").output("output: out_type") \
    .attr("out_type: {float, double, int32, int64} = DT_FLOAT").set_shape_fn(unchanged_shape)
register_op("RegexReplace").input("input: string").input("pattern: string") \
    .input("rewrite: string").output("output: string").attr("replace_global: bool = true") \
    .set_shape_fn(unchanged_shape)
register_op("StringUpper").input("input: string").output("output: string") \
    .attr("encoding: string = ''").set_shape_fn(unchanged_shape)
register_op("StringLower").input("input: string").output("output: string") \
    .attr("encoding: string = ''").set_shape_fn(unchanged_shape)
register_op("StringFormat").input("inputs: T").output("output: string") \
    .attr("T: list(type) >= 0").attr("template: string = '%s'") \
    .attr("placeholder: string = '%s'").attr("summarize: int = 3").set_shape_fn(scalar_shape)

no_gradient("StringJoin")
no_gradient("ReduceJoin")
no_gradient("StringLength")
no_gradient("Substr")
no_gradient("StringSplitV2")
no_gradient("AsString")
no_gradient("StringToNumber")
no_gradient("RegexReplace")
no_gradient("StringUpper")
no_gradient("StringLower")
no_gradient("StringFormat")


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# ---------------------------------------------------------------------------
# Python API (aics.strings), TF's names and defaults.

def join(inputs, separator="", name=None):
    """Joins the strings of ``inputs`` element-wise (scalars broadcast), with ``separator``:
    ``join(["a", ["b", "c"]], "-")`` -> ``[b"a-b", b"a-c"]``."""
    return apply_op("StringJoin", [list(inputs)], {"separator": _text(separator)}, name=name)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along ``axis`` (all axes when None), in row-major order:
    ``reduce_join([["abc", "123"], ["def", "456"]])`` -> ``b"abc123def456"``."""
    inputs = convert_to_tensor(inputs, dtype=dtypes.string)
    if axis is None:
        rank = inputs.shape.rank
        if rank is None:
            raise NotImplementedError("reduce_join(axis=None) of a tensor of unknown rank: pass "
                                      "the axes explicitly.")
        axis = list(range(rank - 1, -1, -1))
    axis = np.asarray(axis, dtype=np.int32)
    return apply_op("ReduceJoin", [inputs, axis],
                    {"keep_dims": bool(keepdims), "separator": _text(separator)}, name=name)


def length(input, unit="BYTE", name=None):
    """The length of each string in bytes (``unit="BYTE"``) or Unicode characters
    (``unit="UTF8_CHAR"``), as int32."""
    return apply_op("StringLength", [input], {"unit": unit}, name=name)


def substr(input, pos, len, unit="BYTE", name=None):
    """``len`` bytes (or characters) of each string from ``pos`` (negative: from the end).
    A ``pos`` past the end is an InvalidArgumentError, as in TF."""
    pos_t = convert_to_tensor(pos)
    dtype = pos_t.dtype if pos_t.dtype in (dtypes.int32, dtypes.int64) else dtypes.int32
    return apply_op("Substr", [input, convert_to_tensor(pos, dtype=dtype),
                               convert_to_tensor(len, dtype=dtype)], {"unit": unit}, name=name)


def split(input, sep=None, maxsplit=-1, name=None):
    """Splits a scalar string into a 1-D tensor of tokens (``sep=None``: on runs of
    whitespace). TF returns a RaggedTensor for inputs of rank 1 or more; aicslib has no
    RaggedTensor, so those raise NotImplementedError."""
    input = convert_to_tensor(input, dtype=dtypes.string)
    rank = input.shape.rank
    if rank != 0:
        raise NotImplementedError(
            f"aics.strings.split of a rank-{rank} input: TensorFlow returns a RaggedTensor "
            f"(one row of tokens per string), which aicslib does not implement. Split each "
            f"scalar string separately (aics.strings.split(s) for s in the strings).")
    _, values, _ = apply_op("StringSplitV2", [input, _text(sep or "")],
                            {"maxsplit": int(maxsplit)}, name=name)
    return values


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="",
              name=None):
    """Numbers to strings, as C's printf: floats ``%f`` (``3.5`` -> ``b"3.500000"``),
    ``shortest`` ``%g``, ``scientific`` ``%e``; ints ``%d``; bools ``true``/``false``."""
    return apply_op("AsString", [input], {"precision": int(precision), "scientific": bool(scientific),
                                          "shortest": bool(shortest), "width": int(width),
                                          "fill": _text(fill)}, name=name)


def to_number(input, out_type=dtypes.float32, name=None):
    """Parses each string as a number of ``out_type`` (float32 by default); a string that
    is not one is an InvalidArgumentError naming it."""
    return apply_op("StringToNumber", [input], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces matches of the RE2 ``pattern`` with ``rewrite`` (``\\1`` names a group,
    ``\\0`` the whole match); only the first match when ``replace_global=False``."""
    return apply_op("RegexReplace", [input, pattern, rewrite],
                    {"replace_global": bool(replace_global)}, name=name)


def upper(input, encoding="", name=None):
    """Upper case: ASCII letters only, unless ``encoding="utf-8"``."""
    return apply_op("StringUpper", [input], {"encoding": encoding}, name=name)


def lower(input, encoding="", name=None):
    """Lower case: ASCII letters only, unless ``encoding="utf-8"``."""
    return apply_op("StringLower", [input], {"encoding": encoding}, name=name)


def format(template, inputs, placeholder="{}", summarize=3, name=None):
    """Formats ``inputs`` (a tensor or a list of them) into ``template`` at each
    ``placeholder``, tensors printed as ``tf.print`` does: ``format("x={}", [1, 2])``
    -> ``b"x=[1 2]"``."""
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    template = _text(template)
    count = template.count(placeholder)
    if count != len(inputs):
        raise ValueError(f"The template expects {count} tensors, but the inputs only has "
                         f"{len(inputs)}. Please ensure the number of placeholders in template "
                         f"matches inputs length.")
    return apply_op("StringFormat", [list(inputs)],
                    {"template": template, "placeholder": placeholder,
                     "summarize": int(summarize)}, name=name)


def _raw_add(x, y):
    return apply_op("Add", [x, y])


# Add on numbers (raw_ops.Add, TF1 graphs) shares AddV2's gradient (math_grad.py).
GRADIENT_CHECK_RECIPES = {
    "Add": lambda: (_raw_add, [np.random.default_rng(0).standard_normal((2, 3)),
                               np.random.default_rng(1).standard_normal(3)]),
}

__all__ = ["join", "reduce_join", "length", "substr", "split", "as_string", "to_number",
           "regex_replace", "upper", "lower", "format"]
