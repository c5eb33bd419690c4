"""GraphDef as JSON: ``Graph.as_graph_def()``, ``import_graph_def`` (files: ``graph_def_proto.py``).

The format mirrors TF's GraphDef proto (a list of NodeDefs with ``name``,
``op``, ``input`` — ``"x"``, ``"x:1"``, ``"^ctrl"`` — ``device`` and
``attr``), written as JSON: no pickle, readable by any process.
"""
import base64
import json
import re

import numpy as np

from . import dtypes
from .device import canonical_device
from .errors import GraphConstructionError, InvalidArgumentError, NotFoundError, ResourceExhaustedError
from .op_def import op_def_registry, validate_attr_value
from .op_def_library import output_dtypes
from .ops import get_default_graph, name_scope
from .string_values import as_bytes

GRAPH_DEF_VERSION = 1


def _encode_attr(attr_type, value):
    if attr_type == "type":
        return {"type": value.datatype_name}
    if attr_type == "list(type)":
        return {"list": {"type": [v.datatype_name for v in value]}}
    if attr_type == "tensor":
        arr = np.asarray(value)
        dt = dtypes.as_dtype(arr.dtype) if arr.dtype.kind not in "US" else dtypes.string
        if dt == dtypes.string:   # bytes are not JSON: base64, as protobuf's JSON mapping does
            vals = [base64.b64encode(as_bytes(v)).decode("ascii") for v in arr.reshape(-1)]
            return {"tensor": {"dtype": dt.datatype_name, "shape": list(arr.shape),
                               "string_val_base64": vals}}
        vals = arr.reshape(-1).tolist()
        return {"tensor": {"dtype": dt.datatype_name, "shape": list(arr.shape), "values": vals}}
    key = {"int": "i", "float": "f", "bool": "b", "string": "s", "shape": "shape"}
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        return {"list": {key.get(inner, inner): list(value)}}
    if attr_type == "func":
        raise ValueError("Graphs holding function attrs cannot be serialized.")
    return {key[attr_type]: value}


def _decode_attr(attr_type, enc):
    if attr_type == "type":
        return dtypes.as_dtype(enc["type"])
    if attr_type == "list(type)":
        return [dtypes.as_dtype(t) for t in enc["list"]["type"]]
    if attr_type == "tensor":
        t = enc["tensor"]
        dt = dtypes.as_dtype(t["dtype"])
        if "string_val_base64" in t:
            arr = np.empty(len(t["string_val_base64"]), dtype=object)
            arr[:] = [base64.b64decode(v) for v in t["string_val_base64"]]
            arr = arr.reshape(t["shape"])
        elif len(t["values"]) == 1 and int(np.prod(t["shape"])) != 1:   # TF: one value fills all
            arr = np.full(t["shape"], t["values"][0], dtype=dt.as_numpy_dtype)
        else:
            arr = np.asarray(t["values"], dtype=dt.as_numpy_dtype).reshape(t["shape"])
        arr.flags.writeable = False
        return arr
    key = {"int": "i", "float": "f", "bool": "b", "string": "s", "shape": "shape"}
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        return list(enc["list"][key.get(inner, inner)])
    return enc[key[attr_type]]


def node_def_of(op):
    inputs = [t.op.name if t.value_index == 0 else t.name for t in op.inputs]
    inputs += ["^" + c.name for c in op.control_inputs]
    attr = {}
    for a in op.op_def.attr:
        attr[a.name] = _encode_attr(a.type, op.get_attr(a.name))
    nd = {"name": op.name, "op": op.type, "input": inputs, "attr": attr}
    if op.device:
        nd["device"] = op.device
    return nd


def graph_to_graph_def(graph):
    return {"versions": {"producer": GRAPH_DEF_VERSION},
            "node": [node_def_of(op) for op in graph.get_operations()]}


_MERGE_OPS = ("Merge", "RefMerge")
_NEXT_ITERATION_OPS = ("NextIteration", "RefNextIteration")


def _is_back_edge(node, src_node):
    """A while loop's NextIteration -> Merge edge: the one cycle a dataflow graph may hold
    (TF's importer, too, adds it after the loop's other nodes exist)."""
    return node.get("op") in _MERGE_OPS and src_node.get("op") in _NEXT_ITERATION_OPS


def _topological(nodes):
    by_name = {n["name"]: n for n in nodes}
    order, state = [], {}
    for root in nodes:
        if state.get(root["name"]) == 2:
            continue
        stack = [(root, iter(root.get("input", [])))]
        state[root["name"]] = 1
        while stack:
            node, it = stack[-1]
            inp = next(it, None)
            if inp is None:
                stack.pop()
                state[node["name"]] = 2
                order.append(node)
                continue
            src = inp.lstrip("^").split(":")[0]
            if src not in by_name:
                continue  # resolved by input_map or an error later
            if _is_back_edge(node, by_name[src]):
                continue  # wired after every node exists
            if state.get(src) == 1:
                raise InvalidArgumentError(None, None, f"GraphDef contains a cycle through node '{src}'.")
            if state.get(src) is None:
                state[src] = 1
                stack.append((by_name[src], iter(by_name[src].get("input", []))))
    return order


class InvalidGraphDefError(GraphConstructionError):
    """A malformed GraphDef: TF's InvalidArgumentError, and also a ValueError, the class TF's
    Python ``import_graph_def`` turns it into."""


class InvalidGraphDefAttrError(InvalidGraphDefError, TypeError):
    """An attr value the op does not allow (also a TypeError, as for ops built in Python)."""


_NODE_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*")
_INPUT = re.compile(r"(\^)?([A-Za-z0-9.][A-Za-z0-9_.\-/>]*)(?::(0|[1-9][0-9]{0,8}))?")
_SCALAR_KEYS = {"int": "i", "float": "f", "bool": "b", "string": "s", "shape": "shape"}
_NODE_FIELDS = {"name", "op", "input", "device", "attr", "experimental_debug_info"}
MAX_CONST_BYTES = 1 << 30   # a Const node's value: what one import may allocate for it


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _scalar_ok(kind, v):
    if kind == "int":
        return _is_int(v)
    if kind == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "string":
        return isinstance(v, str)
    if kind == "shape":
        return v is None or (isinstance(v, list) and len(v) <= 64
                              and all(d is None or (_is_int(d) and d >= -1) for d in v))
    if kind == "type":
        if not isinstance(v, str):
            return False
        try:
            dtypes.as_dtype(v)
            return True
        except TypeError:
            return False
    return False


def _check_tensor(node, t):
    if not isinstance(t, dict):
        raise InvalidGraphDefError(f"Node '{node}': attr tensor is a {type(t).__name__}, expected "
                                   f"an object.")
    if not _scalar_ok("type", t.get("dtype")):
        raise InvalidGraphDefError(f"Node '{node}': tensor dtype {t.get('dtype')!r} is not a "
                                   f"known type.")
    dt = dtypes.as_dtype(t["dtype"])
    shape = t.get("shape")
    if not isinstance(shape, list) or len(shape) > 64 or not all(_is_int(d) for d in shape):
        raise InvalidGraphDefError(f"Node '{node}': tensor shape {str(shape)[:80]} is not a list "
                                   f"of integers.")
    if any(d < 0 for d in shape):
        raise InvalidGraphDefError(f"Node '{node}': tensor shape {shape} has a negative "
                                   f"dimension.")
    n = 1
    for d in shape:
        n *= d
    itemsize = 8 if dt == dtypes.string else np.dtype(dt.as_numpy_dtype).itemsize
    if n * itemsize > MAX_CONST_BYTES:
        raise ResourceExhaustedError(None, None, f"OOM when allocating tensor with shape"
                                                 f"[{','.join(map(str, shape))}] and type "
                                                 f"{dt.name} for node '{node}' ({n * itemsize} "
                                                 f"bytes; the limit is {MAX_CONST_BYTES}).")
    key = "string_val_base64" if dt == dtypes.string else "values"
    values = t.get(key)
    if not isinstance(values, list):
        raise InvalidGraphDefError(f"Node '{node}': tensor of {dt.name} has no '{key}' list.")
    if not (len(values) == n or (len(values) == 1 and n > 0)):
        raise InvalidGraphDefError(f"Node '{node}': tensor has {len(values)} values for shape "
                                   f"{shape} ({n} elements).")
    if dt == dtypes.string:
        ok = all(isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", v) for v in values)
    elif dt.is_bool:
        ok = all(isinstance(v, bool) for v in values)
    else:
        ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        if ok and dt.is_integer:
            ok = all(_is_int(v) and dt.min <= v <= dt.max for v in values)
    if not ok:
        raise InvalidGraphDefError(f"Node '{node}': tensor values are not all {dt.name} values.")


def _check_attr(node, op_type, a, enc):
    where = f"Node '{node}': attr '{a.name}' of {op_type}"
    if not isinstance(enc, dict):
        raise InvalidGraphDefError(f"{where} is a {type(enc).__name__}, expected an AttrValue "
                                   f"object.")
    kind = a.type
    if kind == "tensor":
        _check_tensor(node, enc.get("tensor"))
        return
    if kind == "func":
        raise InvalidGraphDefError(f"{where}: function attrs cannot be imported.")
    if kind.startswith("list("):
        inner = kind[5:-1]
        lst = enc.get("list")
        values = lst.get(_SCALAR_KEYS.get(inner, inner), []) if isinstance(lst, dict) else None
        if not isinstance(values, list) or not all(_scalar_ok(inner, v) for v in values):
            raise InvalidGraphDefError(f"{where} expects a list of {inner}, got {str(enc)[:80]}.")
        return
    key = _SCALAR_KEYS.get(kind, kind)
    if key not in enc or not _scalar_ok(kind, enc[key]):
        raise InvalidGraphDefError(f"{where} expects a {kind} under '{key}', got {str(enc)[:80]}.")


def _map_key(key):
    return key if ":" in key else key + ":0"


def parse_graph_def(text):
    """A GraphDef from its JSON text; InvalidGraphDefError for text that is not one."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InvalidGraphDefError("Cannot parse the GraphDef JSON: nested too deeply.") from None
    except ValueError as e:
        raise InvalidGraphDefError(f"Cannot parse the GraphDef JSON: {e}") from None


def validate_graph_def(graph_def, input_map=None):
    """Checks a parsed GraphDef (a dict, as ``as_graph_def`` returns, whatever file it was
    read from) before anything is built: node names (valid, unique), registered ops, edges
    (``"x"``, ``"x:1"``, ``"^ctrl"``: existing nodes, control edges last), attrs (declared by
    the op, of the declared kind, present when they have no default), Const tensors
    (dtype, non-negative shape, as many values as elements, a bounded size) and the
    ``input_map`` keys. Raises InvalidGraphDefError (an InvalidArgumentError and a
    ValueError) or NotFoundError, naming the node; output indices and input dtypes are
    checked as the nodes are created (``import_graph_def``)."""
    if not isinstance(graph_def, dict):
        raise InvalidGraphDefError(f"A GraphDef is an object with a 'node' list, got a "
                                   f"{type(graph_def).__name__}.")
    nodes = graph_def.get("node", [])
    if not isinstance(nodes, list):
        raise InvalidGraphDefError(f"GraphDef 'node' is a {type(nodes).__name__}, expected a list.")
    names = set()
    for i, nd in enumerate(nodes):
        if not isinstance(nd, dict):
            raise InvalidGraphDefError(f"GraphDef node #{i} is a {type(nd).__name__}, expected "
                                       f"an object.")
        name = nd.get("name")
        if not isinstance(name, str) or not _NODE_NAME.fullmatch(name):
            raise InvalidGraphDefError(f"GraphDef node #{i}: invalid node name {str(name)[:80]!r}.")
        if name in names:
            raise InvalidGraphDefError(f"Duplicate node name in graph: '{name}'")
        names.add(name)
    for key in (input_map or {}):
        if not isinstance(key, str) or _map_key(key).rsplit(":", 1)[0] not in names:
            raise InvalidGraphDefError(f"Attempted to map inputs that were not found in "
                                       f"graph_def: [{key}]")
    mapped = {_map_key(k) for k in (input_map or {})}
    for nd in nodes:
        name, op_type = nd["name"], nd.get("op")
        extra = set(nd) - _NODE_FIELDS
        if extra:
            raise InvalidGraphDefError(f"Node '{name}': unknown NodeDef fields {sorted(extra)}.")
        if not isinstance(op_type, str):
            raise InvalidGraphDefError(f"Node '{name}': 'op' is {str(op_type)[:80]!r}, expected an "
                                       f"op type name.")
        op_def = op_def_registry.get(op_type)
        if op_def is None:
            raise NotFoundError(None, None, f"Op type not registered '{op_type}' in node "
                                            f"'{name}' of the imported GraphDef.")
        device = nd.get("device", "")
        if not isinstance(device, str):
            raise InvalidGraphDefError(f"Node '{name}': 'device' must be a string.")
        if device:
            try:
                canonical_device(device)
            except (ValueError, TypeError) as e:
                raise InvalidGraphDefError(f"Node '{name}': invalid device {device!r}: {e}") from None
        inputs = nd.get("input", [])
        if not isinstance(inputs, list):
            raise InvalidGraphDefError(f"Node '{name}': 'input' must be a list of strings.")
        control_seen = False
        for inp in inputs:
            m = _INPUT.fullmatch(inp) if isinstance(inp, str) else None
            if m is None:
                raise InvalidGraphDefError(f"Node '{name}': malformed input {str(inp)[:80]!r} "
                                           f"(expected 'node', 'node:index' or '^node').")
            control, src, idx = m.groups()
            if control:
                control_seen = True
                if idx is not None:
                    raise InvalidGraphDefError(f"Node '{name}': control input '{inp}' cannot "
                                               f"name an output.")
            elif control_seen:
                raise InvalidGraphDefError(f"Node '{name}': Control dependencies must come after "
                                           f"regular dependencies (input '{inp}').")
            if not control and f"{src}:{idx or 0}" in mapped:
                continue
            if src not in names:
                raise InvalidGraphDefError(f"Node '{name}': Unknown input node '{inp}'")
        attrs = nd.get("attr", {})
        if not isinstance(attrs, dict):
            raise InvalidGraphDefError(f"Node '{name}': 'attr' must be an object.")
        declared = {a.name: a for a in op_def.attr}
        for key, enc in attrs.items():
            if key not in declared:
                raise InvalidGraphDefError(f"Node '{name}': NodeDef mentions attr '{key}' not in "
                                           f"Op<name={op_type}> (it has: "
                                           f"{', '.join(sorted(declared)) or 'no attrs'}).")
            _check_attr(name, op_type, declared[key], enc)
        for a in op_def.attr:
            if a.name not in attrs and not a.has_default:
                raise InvalidGraphDefError(f"NodeDef '{name}' is missing attr '{a.name}'.")
        _check_const_dtype(name, declared, attrs)


def _check_const_dtype(node, declared, attrs):
    """A Const's two dtypes (of its value, and its 'dtype' attr, which its output has) must
    agree: TF's Const kernel refuses the node only when it runs; here the import does."""
    if not ("value" in attrs and "dtype" in attrs and declared["value"].type == "tensor"
            and declared["dtype"].type == "type"):
        return
    value = dtypes.as_dtype(attrs["value"]["tensor"]["dtype"])
    claimed = dtypes.as_dtype(attrs["dtype"]["type"])
    if value != claimed:
        raise InvalidGraphDefError(
            f"Node '{node}': Type mismatch between value ({dtypes.type_string(value)}) and dtype "
            f"({dtypes.type_string(claimed)}): attr 'value' holds a {value.name} tensor, attr "
            f"'dtype' says {claimed.name}.")


def _expected_input_dtypes(op_def, attrs):
    out = []
    for arg in op_def.input_arg:
        if arg.type_list_attr:
            out.extend(attrs[arg.type_list_attr])
            continue
        dt = arg.type if arg.type is not None else attrs.get(arg.type_attr)
        out.extend([dt] * (attrs[arg.number_attr] if arg.number_attr else 1))
    return out


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None):
    """Adds the nodes of ``graph_def`` to the default graph under scope ``name`` ("import").

    The GraphDef (a dict or its JSON text) is validated first (``validate_graph_def``);
    a malformed one raises InvalidGraphDefError (an InvalidArgumentError and a ValueError,
    as TF's Python raises) or NotFoundError naming the node, and adds nothing."""
    from .graph_def_proto import from_proto_if_needed  # a binary .pb / GraphDef message -> dict
    graph_def = from_proto_if_needed(graph_def)
    if isinstance(graph_def, (str, bytes)):
        graph_def = parse_graph_def(graph_def)
    validate_graph_def(graph_def, input_map)
    graph = get_default_graph()
    input_map = {_map_key(k): v for k, v in (input_map or {}).items()}
    created = {}
    back_edges = []                          # (Merge op, input index, NextIteration tensor key)
    by_name = {nd["name"]: nd for nd in graph_def.get("node", [])}
    prefix = "import" if name is None else name
    with name_scope(prefix) as scope:
        scope = scope or ""
        for nd in _topological(graph_def.get("node", [])):
            node = nd["name"]
            op_def = op_def_registry.get(nd["op"])
            attrs = {}
            for a in op_def.attr:
                if a.name in nd.get("attr", {}):
                    try:
                        attrs[a.name] = validate_attr_value(
                            a, _decode_attr(a.type, nd["attr"][a.name]), nd["op"])
                    except TypeError as e:
                        raise InvalidGraphDefAttrError(f"Node '{node}': {e}") from None
                    except ValueError as e:
                        raise InvalidGraphDefError(f"Node '{node}': {e}") from None
                else:
                    attrs[a.name] = a.default_value
            data_inputs, control = [], []
            for position, inp in enumerate(nd.get("input", [])):
                if inp.startswith("^"):
                    control.append(created[inp[1:]])
                    continue
                key = _map_key(inp)
                if key in input_map:
                    try:
                        data_inputs.append(graph.as_graph_element(input_map[key]))
                    except (TypeError, ValueError, KeyError) as e:
                        raise InvalidGraphDefError(f"Node '{node}': input_map value for '{key}' "
                                                   f"is not a tensor of this graph ({e}).") from None
                    continue
                src, idx = key.rsplit(":", 1)
                if src not in created and src in by_name and _is_back_edge(nd, by_name[src]):
                    # Stand in with the loop's Enter input (same dtype) until NextIteration exists.
                    back_edges.append((node, len(data_inputs), key))
                    data_inputs.append(None)
                    continue
                outputs = created[src].outputs
                if int(idx) >= len(outputs):
                    raise InvalidGraphDefError(
                        f"Node '{node}': input {position} '{inp}': Connecting to invalid "
                        f"output {idx} of source node {src} which has {len(outputs)} outputs.")
                data_inputs.append(outputs[int(idx)])
            if None in data_inputs:
                stand_in = next((t for t in data_inputs if t is not None), None)
                if stand_in is None:
                    raise InvalidGraphDefError(f"Node '{node}': a Merge whose inputs all come from "
                                               f"NextIteration nodes has no loop entry.")
                data_inputs = [stand_in if t is None else t for t in data_inputs]
            expected = _expected_input_dtypes(op_def, attrs)
            if len(expected) != len(data_inputs):
                raise InvalidGraphDefError(f"Node '{node}': {nd['op']} expects "
                                           f"{len(expected)} inputs, the NodeDef has "
                                           f"{len(data_inputs)}.")
            for i, (t, want) in enumerate(zip(data_inputs, expected)):
                if want is not None and t.dtype != want:
                    raise InvalidGraphDefError(
                        f"Input {i} of node {node} was passed {t.dtype.name} from {t.name} "
                        f"incompatible with expected {want.name}.")
            lengths = []
            for arg in op_def.input_arg:
                if arg.number_attr:
                    lengths.append(attrs[arg.number_attr])
                elif arg.type_list_attr:
                    lengths.append(len(attrs[arg.type_list_attr]))
                else:
                    lengths.append(None)
            try:
                with graph.control_dependencies(control or None) if control else _null():
                    op = graph.create_op(op_def, data_inputs, lengths, attrs,
                                         output_dtypes(op_def, attrs), name=scope + node + "/")
            except InvalidArgumentError as e:
                raise InvalidGraphDefError(f"Node '{node}': {e.message}") from None
            except ValueError as e:
                raise InvalidGraphDefError(f"Node '{node}': {e}") from None
            if nd.get("device"):
                op.set_device(nd["device"])
            created[node] = op
    for node, index, key in back_edges:
        src, idx = key.rsplit(":", 1)
        outputs = created[src].outputs
        if int(idx) >= len(outputs) or outputs[int(idx)].dtype != created[node].inputs[index].dtype:
            raise InvalidGraphDefError(f"Node '{node}': back edge from '{key}' does not match the "
                                       f"loop's other Merge input.")
        created[node].update_input(index, outputs[int(idx)], allow_cycle=True)
    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        src, idx = (r.rsplit(":", 1) + [None])[:2] if ":" in r else (r, None)
        if src not in created or (idx is not None and (not idx.isdigit()
                                                       or int(idx) >= len(created[src].outputs))):
            raise InvalidGraphDefError(f"Requested return_element {r!r} not found in graph_def.")
        out.append(created[src] if idx is None else created[src].outputs[int(idx)])
    return out


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
