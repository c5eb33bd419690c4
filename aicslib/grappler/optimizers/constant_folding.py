"""ConstantFolding: compute at optimization time what depends on constants only.

TF's ``constant_folding.cc``. A pure node (see ``op_types.is_pure``) whose data
inputs are all Const nodes is evaluated once, with the same kernel the Session
would run, and replaced by a Const of the same name holding the result (its
control inputs are kept, so ordering is unchanged). ``Shape``, ``Size`` and
``Rank`` of a tensor whose static shape is fully known are folded too (TF's
"materialize shapes"). Consts nothing reads any more are removed.

Not folded: fetched or fed nodes, nodes placed on a device explicitly (kept
where the user put them; TF would fold them onto that device), stateful ops (``random_uniform`` must draw new
numbers each run), ops with several outputs, and results over
``MAX_CONSTANT_BYTES`` (TF's kMaxConstantSize, 10 MB), which would bloat the graph.
"""
import numpy as np

from ...framework import dtypes, logging as _log
from ...framework.execute import KernelCall, run_kernel
from ...framework.node_def_util import summarize_node_def
from ...framework.op_def_library import output_dtypes
from .. import op_types
from ..graph_view import GraphView, NodeDef, remove_dead_nodes, static_shape
from ..grappler_item import input_lengths

MAX_CONSTANT_BYTES = 10 * 1024 * 1024


def _const_value(view, inp):
    if view.item.is_fed(inp):
        return None
    node = view.producer(inp)
    if node is None or node.op != "Const":
        return None
    return node.attr["value"]


def _shape_value(view, node):
    """Shape/Size/Rank of a tensor with a fully known static shape, else None."""
    shape = static_shape(view, node.data_inputs()[0])
    if shape is None or not shape.is_fully_defined():
        return None
    dims = shape.as_list()
    out_type = node.attr.get("out_type", None)
    npdt = out_type.as_numpy_dtype if out_type is not None else np.int32
    if node.op == "Shape":
        return np.array(dims, dtype=npdt)
    if node.op == "Size":
        return np.array(int(np.prod(dims)), dtype=npdt)
    return np.array(len(dims), dtype=np.int32)


def _evaluate(node, values):
    call = KernelCall(node.op_def, node.attr, node.device, input_lengths(node.op_def, node.attr),
                      node.name, {})
    return run_kernel(call, values)


def optimize(item):
    view = GraphView(item)
    changes = 0
    for n in list(item.nodes):
        if item.is_preserved(n.name) or not op_types.is_pure(n.op):
            continue
        if n.device:
            # Left to run where the user placed it (an aicslib choice: TF would fold it onto that
            # device, but here a Const may have no kernel there, and placement is what a graph
            # with explicit devices is usually written to show).
            _log.vlog(3, f"constant_folding: not folding '{n.name}': it was placed on {n.device} explicitly")
            continue
        dts = output_dtypes(n.op_def, n.attr)
        if len(dts) != 1 or dts[0] in (dtypes.string, dtypes.resource, dtypes.variant):
            continue
        if n.op in ("Shape", "Size", "Rank"):
            value = _shape_value(view, n)
            how = "from its input's static shape"
        else:
            data = n.data_inputs()
            values = [_const_value(view, i) for i in data]
            if not data or any(v is None for v in values):
                continue
            try:
                value = _evaluate(n, values)
            except Exception as e:  # the error belongs to run time, where the Session reports it
                _log.vlog(3, f"constant_folding: not folding '{n.name}' ({n.op}): {type(e).__name__}: {e}")
                continue
            how = f"from constant inputs {data}"
        if value is None:
            continue
        value = np.array(value, dtype=dts[0].as_numpy_dtype)
        if value.nbytes > MAX_CONSTANT_BYTES:
            _log.vlog(3, f"constant_folding: not folding '{n.name}': result has {value.nbytes} bytes")
            continue
        value.flags.writeable = False
        folded = NodeDef(n.name, "Const", ["^" + c for c in n.control_inputs()],
                         {"value": value, "dtype": dts[0]}, n.device, source=n.source)
        if _log.vlog_is_on(2):
            # TF's lines (constant_folding.cc); TF names the new node ConstantFolding/<name>-folded
            # and rewires consumers to it, here the Const takes the folded node's name.
            _log.vlog(2, f"Folded node: {summarize_node_def(n.name, n.op, n.attr, n.input, n.device)}")
            _log.vlog(2, f"constant_folding: folded '{n.name}' ({n.op}) {how} into a Const "
                         f"{dts[0].name}{list(value.shape)}")
            _log.vlog(3, f"Generated constant node: "
                         f"{summarize_node_def(folded.name, 'Const', folded.attr, folded.input, folded.device)}")
        item.nodes[item.nodes.index(n)] = folded
        view.rebuild()
        changes += 1
    if changes:
        for name in remove_dead_nodes(view, lambda n: n.op == "Const"):
            _log.vlog(2, f"constant_folding: removing unused constant '{name}'")
    return changes
