"""GraphDef as TensorFlow's protocol buffer: the lecture's ".pb" file (TF's graph.proto,
node_def.proto, attr_value.proto, tensor.proto).

aicslib keeps a GraphDef as a dict (``Graph.as_graph_def()``, JSON on disk:
``graph_io.py``). This module converts that dict to and from the real
``GraphDef`` message, using the message classes the ``tensorboard`` package
ships (``tensorboard.compat.proto``), so a graph exported here opens in
TensorBoard and Netron, and a ``.pb`` written by them (or by TensorFlow, for
the ops aicslib has) imports here:

* ``write_graph(graph, logdir, "model.pb", as_text=False)``: binary GraphDef;
  ``as_text=True``: the text format (``.pbtxt``); a name ending in ``.json``
  keeps aicslib's JSON.
* ``read_graph(path)``: any of the three, as the dict ``import_graph_def`` takes;
  ``import_graph_def`` also accepts the bytes of a binary GraphDef or a message.

Node names, op types (``AddV2``, ``MatMul``...), attr names and kinds are
TF's, so NodeDefs need no renaming: an AttrValue is self-describing, and only
the kind of an empty list is looked up in the op registry.
"""
import base64
import json
import os

import numpy as np

from . import dtypes
from .file_io import atomic_write_string_to_file
from .op_def import op_def_registry

_SCALAR_FIELDS = {"i": "i", "f": "f", "b": "b", "s": "s", "type": "type", "shape": "shape"}
_LIST_KEYS = {"int": "i", "float": "f", "bool": "b", "string": "s", "type": "type", "shape": "shape"}


def _protos():
    try:
        from tensorboard.compat.proto import attr_value_pb2, graph_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
    except ImportError as e:  # pragma: no cover - tensorboard is a dependency of the workbook
        raise ImportError("Binary GraphDef (.pb) support needs the 'tensorboard' package (its protobuf "
                          "definitions).") from e
    return graph_pb2, attr_value_pb2, tensor_pb2, tensor_shape_pb2, types_pb2


# ---------------------------------------------------------------------------
# dict -> proto

def _shape_proto(dims, tensor_shape_pb2):
    p = tensor_shape_pb2.TensorShapeProto()
    if dims is None:
        p.unknown_rank = True
        return p
    for d in dims:
        p.dim.add(size=-1 if d is None else int(d))
    return p


def _tensor_proto(t, tensor_pb2, tensor_shape_pb2, types_pb2):
    dt = dtypes.as_dtype(t["dtype"])
    p = tensor_pb2.TensorProto(dtype=types_pb2.DataType.Value(dt.datatype_name))
    p.tensor_shape.CopyFrom(_shape_proto(t["shape"], tensor_shape_pb2))
    if "string_val_base64" in t:
        p.string_val.extend(base64.b64decode(v) for v in t["string_val_base64"])
        return p
    n = int(np.prod(t["shape"])) if t["shape"] else 1
    values = t["values"]
    if len(values) == 1 and n != 1:
        values = values * n
    if dt == dtypes.bfloat16:  # stored in float32: the upper 16 bits are bfloat16's
        bits = (np.asarray(values, np.float32).view(np.uint32) >> 16).astype("<u2")
        p.tensor_content = bits.tobytes()
        return p
    arr = np.asarray(values, dtype=dt.as_numpy_dtype)
    p.tensor_content = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    return p


def _attr_proto(enc, mods):
    graph_pb2, attr_value_pb2, tensor_pb2, tensor_shape_pb2, types_pb2 = mods
    a = attr_value_pb2.AttrValue()
    if "tensor" in enc:
        a.tensor.CopyFrom(_tensor_proto(enc["tensor"], tensor_pb2, tensor_shape_pb2, types_pb2))
    elif "list" in enc:
        lst = enc["list"]
        a.list.SetInParent()
        for key, values in lst.items():
            if key == "type":
                a.list.type.extend(types_pb2.DataType.Value(v) for v in values)
            elif key == "shape":
                for v in values:
                    a.list.shape.add().CopyFrom(_shape_proto(v, tensor_shape_pb2))
            elif key == "s":
                a.list.s.extend(v.encode("utf-8") if isinstance(v, str) else v for v in values)
            elif key in ("i", "f", "b"):
                getattr(a.list, key).extend(values)
    elif "type" in enc:
        a.type = types_pb2.DataType.Value(enc["type"])
    elif "shape" in enc:
        a.shape.CopyFrom(_shape_proto(enc["shape"], tensor_shape_pb2))
    elif "s" in enc:
        a.s = enc["s"].encode("utf-8") if isinstance(enc["s"], str) else enc["s"]
    elif "i" in enc:
        a.i = int(enc["i"])
    elif "f" in enc:
        a.f = float(enc["f"])
    elif "b" in enc:
        a.b = bool(enc["b"])
    return a


def graph_def_to_proto(graph_def):
    """A ``GraphDef`` message from an aicslib GraphDef dict (or a Graph)."""
    if hasattr(graph_def, "as_graph_def"):
        graph_def = graph_def.as_graph_def()
    mods = _protos()
    gd = mods[0].GraphDef()
    gd.versions.producer = int(graph_def.get("versions", {}).get("producer", 1))
    for nd in graph_def.get("node", []):
        node = gd.node.add(name=nd["name"], op=nd["op"], input=list(nd.get("input", [])),
                           device=nd.get("device", ""))
        for k, enc in nd.get("attr", {}).items():
            node.attr[k].CopyFrom(_attr_proto(enc, mods))
    return gd


# ---------------------------------------------------------------------------
# proto -> dict

def _dims(shape_proto):
    if shape_proto.unknown_rank:
        return None
    return [None if d.size < 0 else int(d.size) for d in shape_proto.dim]


def _tensor_dict(p, types_pb2):
    dt = dtypes.as_dtype(types_pb2.DataType.Name(p.dtype))
    shape = [int(d.size) for d in p.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if dt == dtypes.string:
        vals = list(p.string_val)
        return {"dtype": dt.datatype_name, "shape": shape,
                "string_val_base64": [base64.b64encode(v).decode("ascii") for v in vals]}
    if p.tensor_content:
        if dt == dtypes.bfloat16:
            arr = (np.frombuffer(p.tensor_content, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(p.tensor_content, np.dtype(dt.as_numpy_dtype).newbyteorder("<"))
        values = arr.tolist()
    else:
        field = {dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int64: "int64_val",
                 dtypes.bool: "bool_val", dtypes.float16: "half_val", dtypes.bfloat16: "half_val"}.get(dt, "int_val")
        values = list(getattr(p, field))
        if dt == dtypes.float16:
            values = np.asarray(values, np.uint16).view(np.float16).astype(np.float32).tolist()
        elif dt == dtypes.bfloat16:
            values = (np.asarray(values, np.uint32) << 16).view(np.float32).tolist()
        if values and len(values) < n:  # TF: the last value repeats to fill the tensor
            values = values + [values[-1]] * (n - len(values))
    if dt.is_bool:
        values = [bool(v) for v in values]
    elif dt.is_integer:
        values = [int(v) for v in values]
    return {"dtype": dt.datatype_name, "shape": shape, "values": values}


def _attr_dict(a, op_type, name, types_pb2):
    kind = a.WhichOneof("value")
    if kind == "tensor":
        return {"tensor": _tensor_dict(a.tensor, types_pb2)}
    if kind == "type":
        return {"type": types_pb2.DataType.Name(a.type)}
    if kind == "shape":
        return {"shape": _dims(a.shape)}
    if kind == "s":
        return {"s": a.s.decode("utf-8", errors="replace")}
    if kind in ("i", "f", "b"):
        return {kind: getattr(a, kind)}
    if kind == "list":
        lst = a.list
        if lst.type:
            return {"list": {"type": [types_pb2.DataType.Name(t) for t in lst.type]}}
        if lst.shape:
            return {"list": {"shape": [_dims(s) for s in lst.shape]}}
        for key in ("i", "f", "b"):
            if getattr(lst, key):
                return {"list": {key: list(getattr(lst, key))}}
        if lst.s:
            return {"list": {"s": [v.decode("utf-8", errors="replace") for v in lst.s]}}
        # An empty list does not say of what: the op's definition does.
        op_def = op_def_registry.get(op_type)
        attr_def = op_def.get_attr_def(name) if op_def is not None else None
        inner = attr_def.type[5:-1] if attr_def is not None and attr_def.type.startswith("list(") else "int"
        return {"list": {_LIST_KEYS.get(inner, inner): []}}
    if kind == "func":
        return {"func": a.func.name}
    return {}


def proto_to_graph_def(message_or_bytes):
    """The aicslib GraphDef dict of a ``GraphDef`` message or its serialized bytes."""
    mods = _protos()
    graph_pb2, types_pb2 = mods[0], mods[4]
    if isinstance(message_or_bytes, (bytes, bytearray, memoryview)):
        gd = graph_pb2.GraphDef()
        try:
            gd.ParseFromString(bytes(message_or_bytes))
        except Exception as e:  # protobuf's DecodeError
            from .errors import InvalidArgumentError
            raise InvalidArgumentError(None, None, f"Cannot parse a binary GraphDef: {e}") from None
    else:
        gd = message_or_bytes
    nodes = []
    for node in gd.node:
        nd = {"name": node.name, "op": node.op, "input": list(node.input),
              "attr": {k: _attr_dict(v, node.op, k, types_pb2) for k, v in node.attr.items()}}
        if node.device:
            nd["device"] = node.device
        nodes.append(nd)
    return {"versions": {"producer": int(gd.versions.producer)}, "node": nodes}


def is_binary_graph_def(data):
    """Bytes that are not JSON text (which starts with '{'): a serialized GraphDef."""
    return isinstance(data, (bytes, bytearray)) and not bytes(data[:64]).lstrip().startswith(b"{")


def from_proto_if_needed(graph_def):
    """``import_graph_def``'s hook: a message or binary GraphDef becomes the dict it takes."""
    if hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):
        return proto_to_graph_def(graph_def)
    if isinstance(graph_def, (bytes, bytearray)) and is_binary_graph_def(graph_def):
        return proto_to_graph_def(graph_def)
    return graph_def


# ---------------------------------------------------------------------------
# files

def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes a GraphDef to ``logdir/name`` and returns the path (TF's tf.io.write_graph).

    ``as_text=False``: binary protobuf (``.pb``); ``as_text=True``: protobuf text format
    (``.pbtxt``); a ``name`` ending in ``.json``: aicslib's JSON (as before)."""
    g = graph_or_graph_def
    if hasattr(g, "as_graph_def"):
        g = g.as_graph_def()
    elif hasattr(g, "SerializeToString"):
        g = proto_to_graph_def(g)
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    # every format through one crash-safe writer: a reader sees the old file or the new one
    if name.endswith(".json"):
        atomic_write_string_to_file(path, json.dumps(g, indent=1 if as_text else None))
        return path
    proto = graph_def_to_proto(g)
    if as_text:
        from google.protobuf import text_format
        atomic_write_string_to_file(path, text_format.MessageToString(proto))
        return path
    atomic_write_string_to_file(path, proto.SerializeToString())
    return path


def read_graph(path):
    """Reads a GraphDef written by ``write_graph`` in any of its formats: the dict
    ``import_graph_def`` takes."""
    with open(path, "rb") as f:
        data = f.read()
    head = data[:64].lstrip()
    if head.startswith(b"{"):
        return json.loads(data.decode("utf-8"))
    if head.startswith((b"node", b"versions", b"library")):
        from google.protobuf import text_format
        graph_pb2 = _protos()[0]
        return proto_to_graph_def(text_format.Parse(data.decode("utf-8"), graph_pb2.GraphDef()))
    return proto_to_graph_def(data)
