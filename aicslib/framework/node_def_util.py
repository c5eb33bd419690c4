"""A node as one line of text, as TF's ``SummarizeNodeDef`` prints it in logs.

TF's ``core/framework/node_def_util.cc``: grappler's and the executor's VLOG
lines show a node as ``{{node NAME}} = OP[attr=value, ..., _device="..."](in, ...)``,
for example (from a recorded TF 2.21 log, ``data/tf_vlog/``)::

    {{node k}} = Mul[T=DT_FLOAT, _device="/job:localhost/replica:0/task:0/device:CPU:0"](five, two)

Attributes are sorted by name, ``_device`` comes last; types print as their
``DT_*`` names, booleans as ``true``/``false``, strings quoted, tensors as
``Tensor<type: float shape: [2] values: 10 20>``.
"""
import numpy as np

from .dtypes import DType, type_string

#: TF's SummarizeTensor shows at most this many values, then "...".
MAX_TENSOR_VALUES = 10


def summarize_tensor(value):
    """``Tensor<type: float shape: [2] values: 10 20>``, TF's ``Tensor::DebugString``."""
    arr = np.asarray(value)
    try:
        type_name = type_string(arr.dtype)
    except (TypeError, ValueError):
        type_name = str(arr.dtype)
    flat = arr.reshape(-1)
    shown = " ".join(_scalar(v) for v in flat[:MAX_TENSOR_VALUES])
    more = "..." if flat.size > MAX_TENSOR_VALUES else ""
    return f"Tensor<type: {type_name} shape: [{','.join(str(d) for d in arr.shape)}] values: {shown}{more}>"


def _scalar(v):
    if isinstance(v, (bytes, np.bytes_)):
        return repr(bytes(v))[1:]
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def summarize_attr_value(value):
    """One attr value as TF's ``SummarizeAttrValue`` writes it."""
    if isinstance(value, DType):
        return value.datatype_name  # DT_FLOAT: the name TF's logs use (as graph_io.py writes it)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (str, bytes)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        return '"' + text.replace('"', '\\"') + '"'
    if isinstance(value, np.ndarray):
        return summarize_tensor(value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(summarize_attr_value(v) for v in value) + "]"
    if value is None:
        return "<Unknown AttrValue type>"
    return str(value)


def summarize_node_def(name, op, attrs, inputs, device=""):
    """``{{node NAME}} = OP[attrs, _device="..."](inputs)``."""
    parts = [f"{k}={summarize_attr_value(attrs[k])}" for k in sorted(attrs) if k != "_device"]
    if device:
        parts.append(f'_device="{device}"')
    inputs = [i[:-2] if i.endswith(":0") else i for i in inputs]  # a NodeDef writes "x" for "x:0"
    return f"{{{{node {name}}}}} = {op}[{', '.join(parts)}]({', '.join(inputs)})"
