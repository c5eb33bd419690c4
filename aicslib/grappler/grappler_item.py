"""GrapplerItem: the graph handed to the passes, with what must survive them.

TF's ``core/grappler/grappler_item.h``: a GraphDef plus the fetch nodes, the
feeds, and the nodes to preserve (fetched or fed nodes keep their names and
outputs whatever a pass does). Built from a Session's pruned op list or from a
GraphDef; turned back into a Graph, a GraphDef, or the op list a Session's
plan runs.
"""
from ..framework.errors import InvalidArgumentError
from ..framework.op_def_library import output_dtypes
from ..framework.ops import Graph
from .graph_view import NodeDef, parse_input, tensor_name


def input_lengths(op_def, attrs):
    """Per input arg: None for a single tensor, the list length for ``N * T`` inputs."""
    out = []
    for arg in op_def.input_arg:
        if arg.number_attr:
            out.append(attrs[arg.number_attr])
        elif arg.type_list_attr:
            out.append(len(attrs[arg.type_list_attr]))
        else:
            out.append(None)
    return out


def _tensor_input(t):
    return tensor_name(t.op.name, t.value_index)


class GrapplerItem:
    """``nodes`` in topological order; ``fetch`` node names; ``feed`` tensor names."""

    def __init__(self, nodes, fetch, feed=(), item_id="graph_to_optimize"):
        self.nodes = list(nodes)
        self.fetch = list(fetch)
        self.feed = set(feed)
        self.id = item_id
        self.graph_size = len(self.nodes)  # nodes of the whole graph (TF's min_graph_nodes counts these)
        self._preserve = set(self.fetch) | {parse_input(f)[0] for f in self.feed}

    def is_preserved(self, name):
        """Fetched and fed nodes keep their name, op and outputs (TF's NodesToPreserve)."""
        return name in self._preserve

    def is_fed(self, inp):
        src, port = parse_input(inp)
        return tensor_name(src, port) in self.feed

    # ---- construction
    @classmethod
    def from_operations(cls, ops, fetch_elements, fed_tensors, item_id="graph_to_optimize"):
        """From a Session's pruned, ordered op list (inputs outside it are fed tensors)."""
        nodes = []
        for op in ops:
            inputs = [_tensor_input(t) for t in op.inputs] + ["^" + c.name for c in op.control_inputs]
            nodes.append(NodeDef(op.name, op.type, inputs, op.attrs, op.device, source=op, changed=False))
        fetch = [el.name if not hasattr(el, "value_index") else el.op.name for el in fetch_elements]
        feed = [_tensor_input(t) for t in fed_tensors]
        item = cls(nodes, fetch, feed, item_id)
        if ops:
            item.graph_size = len(ops[0].graph.get_operations())
        return item

    @classmethod
    def from_graph(cls, graph, fetches, item_id="graph_to_optimize"):
        fetch = []
        for f in fetches:
            el = graph.as_graph_element(f)
            fetch.append(el.op.name if hasattr(el, "value_index") else el.name)
        return cls.from_operations(graph.get_operations(), [], [], item_id)._with_fetch(fetch)

    def _with_fetch(self, fetch):
        self.fetch = fetch
        self._preserve |= set(fetch)
        return self

    # ---- bookkeeping
    def num_edges(self):
        return sum(len(n.input) for n in self.nodes)

    def topological_sort(self):
        """Reorders ``nodes`` so every node follows its inputs; a cycle is an error."""
        by_name = {n.name: n for n in self.nodes}
        order, state = [], {}
        for root in self.nodes:
            if root.name in state:
                continue
            state[root.name] = 1
            stack = [(root, iter(root.input))]
            while stack:
                node, it = stack[-1]
                inp = next(it, None)
                if inp is None:
                    stack.pop()
                    state[node.name] = 2
                    order.append(node)
                    continue
                src = by_name.get(parse_input(inp)[0])
                if src is None:
                    continue
                st = state.get(src.name)
                if st == 1:
                    raise InvalidArgumentError(None, None, f"Grappler produced a cycle through node "
                                               f"'{src.name}'.")
                if st is None:
                    state[src.name] = 1
                    stack.append((src, iter(src.input)))
        self.nodes = order

    # ---- back to something runnable
    def to_graph(self):
        """A new Graph holding the nodes (shape functions run, so a bad rewrite fails here)."""
        self.topological_sort()
        g = Graph()
        created = {}
        with g.as_default():
            for n in self.nodes:
                od = n.op_def
                data, control = [], []
                for inp in n.input:
                    src, port = parse_input(inp)
                    if src not in created:
                        raise InvalidArgumentError(None, None, f"Node '{n.name}': input '{inp}' is not "
                                                   f"in the optimized graph.")
                    (control.append(created[src]) if port < 0 else data.append(created[src].outputs[port]))
                with g.control_dependencies(control or None):
                    op = g.create_op(od, data, input_lengths(od, n.attr), dict(n.attr),
                                     output_dtypes(od, n.attr), name=n.name + "/")
                if n.device:
                    op.set_device(n.device)
                created[n.name] = op
        return g

    def to_graph_def(self):
        return self.to_graph().as_graph_def()

    def session_ops(self, tensors):
        """The op list a Session plan runs: unchanged nodes as their original Operations,
        rewritten ones as :class:`PlannedOp`. ``tensors`` maps tensor names to the original
        graph's Tensors, which stay the plan's slot keys, so feeds and fetches still match.
        """
        self.topological_sort()
        keys = dict(tensors)
        ops_by_name = {}
        out = []
        for n in self.nodes:
            if not n.changed and n.source is not None:
                op = n.source
            else:
                op = PlannedOp(n, keys, ops_by_name)
            ops_by_name[n.name] = op
            out.append(op)
        return out


class PlanTensor:
    """Slot key for a tensor that exists only in the optimized graph."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<PlanTensor '{self.name}'>"


class PlannedOp:
    """A rewritten node as the Session's planner sees an Operation.

    It has what a plan step needs (op_def, attrs, device, inputs and outputs as
    slot keys) and the traceback of the op it replaces, so an error inside a
    fused kernel still points at the user's line.
    """

    def __init__(self, node, keys, ops_by_name):
        self.name = node.name
        self.type = node.op
        self.op_def = node.op_def
        self._attrs = dict(node.attr)
        self._device = node.device
        self._input_lengths = input_lengths(self.op_def, self._attrs)
        self._inputs = []
        self._control_inputs = []
        for inp in node.input:
            src, port = parse_input(inp)
            if port < 0:
                if src in ops_by_name:
                    self._control_inputs.append(ops_by_name[src])
                continue
            self._inputs.append(_key(keys, f"{src}:{port}"))
        n_out = len(output_dtypes(self.op_def, self._attrs))
        self.outputs = [_key(keys, f"{self.name}:{i}") for i in range(n_out)]
        self._source = node.source

    @property
    def device(self):
        return self._device

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def traceback(self):
        return self._source.traceback if self._source is not None else []

    @property
    def attrs(self):
        return dict(self._attrs)

    @property
    def input_lengths(self):
        return list(self._input_lengths)

    def get_attr(self, name):
        return self._attrs[name]

    def __repr__(self):
        return f"<grappler PlannedOp '{self.name}' type={self.type}>"


def _key(keys, name):
    k = keys.get(name)
    if k is None:
        k = keys[name] = PlanTensor(name)
    return k
