"""Drawing a Graph and a RunMetadata timeline with matplotlib (no graphviz needed).

The drawing is split into pure functions that tests can check by hand and two
plotting functions that only turn their results into artists:

* ``needed_ops(graph, fetches, feeds)`` - the ops a Session would keep after
  pruning: walk data inputs and control inputs back from the fetches, stopping
  at fed tensors (the same rule as ``Session._prune``).
* ``op_depths(graph)`` - topological depth of every op (0 for ops without
  inputs, else 1 + the deepest input or control input).
* ``graph_layout(graph)`` - (x, y) per op: one row per depth, ops of a row in
  creation order, rows centred on x = 0, depth growing downwards.
* ``timeline_rows(run_metadata)`` - the traced nodes as plain tuples.
* ``draw_graph`` / ``plot_timeline`` - the matplotlib views of the above.
"""
import collections

from ..framework.device import canonical_device, device_type
from ..framework.ops import Operation, Tensor

#: Fill colour per device type; an op with no device request uses "" (placer's choice).
DEVICE_COLORS = {
    "CPU": "#4C72B0",
    "MLU": "#DD8452",
    "GPU": "#55A868",
    "": "#8C8CA8",
}
#: Fill colour of ops the chosen fetches do not need (pruned by the Session).
UNNEEDED_COLOR = "#E0E0E0"

NodeStyle = collections.namedtuple("NodeStyle", ["color", "needed", "device"])
TimelineRow = collections.namedtuple("TimelineRow", ["node_name", "op", "device", "start_us", "duration_us"])


# --------------------------------------------------------------------------
# Pure helpers.

def _flatten(fetches):
    if isinstance(fetches, dict):
        return [x for v in fetches.values() for x in _flatten(v)]
    if isinstance(fetches, (list, tuple)):
        return [x for v in fetches for x in _flatten(v)]
    return [fetches]


def _as_op(graph, element):
    """Resolves a Tensor, Operation, Variable or name to the Operation that produces it."""
    el = graph.as_graph_element(element)
    return el if isinstance(el, Operation) else el.op


def _fed_tensors(graph, feeds):
    if not feeds:
        return set()
    out = set()
    for k in (feeds.keys() if isinstance(feeds, dict) else feeds):
        el = graph.as_graph_element(k)
        if isinstance(el, Operation):
            raise TypeError(f"Cannot feed an Operation ('{el.name}'); feed one of its output tensors.")
        out.add(el)
    return out


def needed_ops(graph, fetches=None, feeds=None):
    """Names of the ops needed to compute ``fetches`` (all ops when ``fetches`` is None).

    ``fetches`` may be a Tensor, Operation, Variable, a name ('y', 'y:0') or a
    nested list/tuple/dict of them. A fed tensor is a cut: the op producing it
    is not needed on its account, as in ``Session.run``'s pruning.
    """
    if fetches is None:
        return {op.name for op in graph.get_operations()}
    fed = _fed_tensors(graph, feeds)
    needed, stack = set(), []
    for f in _flatten(fetches):
        el = graph.as_graph_element(f)
        if isinstance(el, Tensor) and el in fed:
            continue  # a fed fetch is returned as fed; nothing runs for it
        stack.append(el if isinstance(el, Operation) else el.op)
    while stack:
        op = stack.pop()
        if op.name in needed:
            continue
        needed.add(op.name)
        for t in op.inputs:
            if t not in fed:
                stack.append(t.op)
        stack.extend(op.control_inputs)
    return needed


def op_depths(graph):
    """``{op name: depth}``: 0 for source ops, else 1 + max depth of its (control) inputs."""
    depth = {}
    for root in graph.get_operations():
        if root.name in depth:
            continue
        stack = [(root, False)]
        while stack:  # iterative post-order DFS: no recursion limit on long chains
            op, expanded = stack.pop()
            if op.name in depth:
                continue
            # A while loop's back edge (NextIteration -> Merge) is drawn but does not set depth.
            preds = [t.op for t in op.inputs if t.op.type != "NextIteration"] + list(op.control_inputs)
            if expanded:
                depth[op.name] = 1 + max((depth[p.name] for p in preds), default=-1)
                continue
            stack.append((op, True))
            stack.extend((p, False) for p in preds if p.name not in depth)
    return depth


def graph_layout(graph, x_spacing=1.0, y_spacing=1.0):
    """``{op name: (x, y)}``: row ``-depth * y_spacing``, ops of a row in creation
    order ``x_spacing`` apart and centred on x = 0."""
    depth = op_depths(graph)
    rows = collections.defaultdict(list)
    for op in graph.get_operations():  # creation order inside a row
        rows[depth[op.name]].append(op.name)
    pos = {}
    for d, names in rows.items():
        offset = (len(names) - 1) / 2.0
        for i, name in enumerate(names):
            pos[name] = ((i - offset) * x_spacing, -d * y_spacing)
    return pos


def _device_key(device):
    """'CPU' / 'MLU' / 'GPU' for a device string, '' for no device."""
    if not device:
        return ""
    return device_type(canonical_device(device))


def node_styles(graph, fetches=None, feeds=None, placement=None):
    """``{op name: NodeStyle(color, needed, device)}``.

    The device is the op's requested device (``op.device``) unless
    ``placement`` maps the op's name to where it actually ran (e.g. from
    ``timeline_rows``); ops the fetches do not need get ``UNNEEDED_COLOR``.
    """
    needed = needed_ops(graph, fetches, feeds)
    placement = placement or {}
    styles = {}
    for op in graph.get_operations():
        dev = placement.get(op.name, op.device)
        key = _device_key(dev)
        is_needed = op.name in needed
        color = DEVICE_COLORS.get(key, DEVICE_COLORS[""]) if is_needed else UNNEEDED_COLOR
        styles[op.name] = NodeStyle(color, is_needed, key)
    return styles


def timeline_rows(run_metadata):
    """The traced nodes of a ``RunMetadata`` as ``TimelineRow``s, in start order."""
    rows = [TimelineRow(n.node_name, n.op, n.device, n.all_start_micros, n.all_end_rel_micros)
            for d in run_metadata.step_stats.dev_stats for n in d.node_stats]
    return sorted(rows, key=lambda r: (r.start_us, r.node_name))


# --------------------------------------------------------------------------
# Plotting.

def _new_axes(ax, size):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    _, ax = plt.subplots(figsize=size)
    return ax


def draw_graph(graph, fetches=None, ax=None, *, feeds=None, placement=None, show_types=True,
               rankdir="TB", figsize=None, fontsize=7):
    """Draws ``graph`` layered by topological depth.

    ``rankdir="TB"`` puts sources at the top, ``"LR"`` at the left (better for
    wide graphs: labels then sit side by side in short columns). ``figsize``
    (inches) overrides the automatic size when no ``ax`` is given; ``fontsize``
    is the node labels' size in points.

    Nodes are coloured by device (``DEVICE_COLORS``); nodes that ``fetches``
    does not need are grey, as the Session would prune them. Data edges are
    solid arrows, control edges dashed. Returns the matplotlib Axes.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyBboxPatch, Patch

    if rankdir not in ("TB", "LR"):
        raise ValueError(f"rankdir must be 'TB' or 'LR', got {rankdir!r}")
    ops = graph.get_operations()
    styles = node_styles(graph, fetches, feeds, placement)
    if rankdir == "TB":
        pos = graph_layout(graph, x_spacing=2.0, y_spacing=1.0)
        width = max([abs(x) for x, _ in pos.values()] + [0.0])
        depth = max([-y for _, y in pos.values()] + [0.0])
        auto_size = (min(16, 4 + 1.6 * width), min(12, 1.5 + 0.9 * depth))
        xlim, ylim = (-width - 1.0, width + 1.0), (-depth - 0.5, 0.5)
        out_dx, out_dy, in_dx, in_dy = 0.0, -0.22, 0.0, 0.22
        half_w = 0.85
    else:
        # Wider boxes, columns 2.6 apart: long op types (RandomStandardNormal) fit inside.
        pos = {k: (-y * 2.6, -x * 0.7) for k, (x, y) in graph_layout(graph).items()}
        span = max([x for x, _ in pos.values()] + [0.0])
        height = max([abs(y) for _, y in pos.values()] + [0.0])
        auto_size = (min(16, 3.5 + 0.6 * span), min(12, 1.2 + 0.75 * height))
        xlim, ylim = (-1.2, span + 1.2), (-height - 0.5, height + 0.5)
        half_w = 1.1
        out_dx, out_dy, in_dx, in_dy = half_w, 0.0, -half_w, 0.0
    ax = _new_axes(ax, figsize or auto_size)
    ax.set_xlim(*xlim)    # before the labels: they are fitted to their boxes in display units
    ax.set_ylim(*ylim)

    def edge(src, dst, dashed, needed, back=False):
        (x0, y0), (x1, y1) = pos[src], pos[dst]
        # A while loop's back edge (NextIteration -> Merge) curves back, in orange.
        ax.annotate("", xy=(x1 + in_dx, y1 + in_dy), xytext=(x0 + out_dx, y0 + out_dy),
                    arrowprops=dict(arrowstyle="->", lw=1.3 if back else 1.0, ls="--" if dashed else "-",
                                    color=("#E07000" if back else "#444444") if needed else "#C8C8C8",
                                    connectionstyle="arc3,rad=-0.35" if back else "arc3",
                                    shrinkA=0, shrinkB=0), zorder=1)

    for op in ops:
        for t in op.inputs:
            edge(t.op.name, op.name, False, styles[op.name].needed and styles[t.op.name].needed,
                 back=t.op.type == "NextIteration")
        for c in op.control_inputs:
            edge(c.name, op.name, True, styles[op.name].needed and styles[c.name].needed)

    for op in ops:
        x, y = pos[op.name]
        st = styles[op.name]
        ax.add_patch(FancyBboxPatch((x - half_w, y - 0.22), 2 * half_w, 0.44, boxstyle="round,pad=0.02",
                                    fc=st.color, ec="#333333" if st.needed else "#B0B0B0",
                                    lw=1.0, zorder=2))
        label = _wrap_name(op.name)
        if show_types:
            label += f"\n{op.type}"
        text = ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, zorder=3,
                       color="white" if st.needed else "#888888")
        _fit_text(ax, text, 2 * half_w, 0.44)

    used = sorted({s.device for s in styles.values() if s.needed})
    handles = [Patch(fc=DEVICE_COLORS.get(k, DEVICE_COLORS[""]), label=k or "(no device)") for k in used]
    handles.append(Patch(fc=UNNEEDED_COLOR, ec="#B0B0B0", label="not needed (pruned)"))
    handles.append(Line2D([], [], color="#444444", ls="--", label="control edge"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_axis_off()
    return ax


def _wrap_name(name, width=18):
    """The whole node name, broken after a '/' where a line would pass ``width`` characters
    (random_normal_1/RandomStandardNormal -> two lines): a label is never cut."""
    lines = [""]
    for part in name.split("/"):
        piece = part if not lines[-1] else "/" + part
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines[-1] += "/"
            lines.append(part)
        else:
            lines[-1] += piece
    return "\n".join(lines)


def _fit_text(ax, text, width, height):
    """Shrinks ``text``'s font until it fits inside a box of ``width`` x ``height`` data units."""
    renderer = ax.figure.canvas.get_renderer()
    (x0, y0), (x1, y1) = ax.transData.transform([(0.0, 0.0), (width, height)])
    room_w, room_h = abs(x1 - x0) * 0.94, abs(y1 - y0) * 0.92
    for _ in range(6):
        ext = text.get_window_extent(renderer)
        if ext.width <= room_w and ext.height <= room_h:
            return
        text.set_fontsize(text.get_fontsize() * min(room_w / ext.width, room_h / ext.height) * 0.98)


def plot_timeline(run_metadata, ax=None):
    """A Gantt chart of one traced ``Session.run``: one bar per node, coloured by the
    device it ran on, x = microseconds since the step started. Returns the Axes."""
    from matplotlib.patches import Patch

    rows = timeline_rows(run_metadata)
    ax = _new_axes(ax, (8, max(2.0, 0.3 * len(rows) + 1)))
    for i, r in enumerate(rows):
        ax.barh(i, r.duration_us, left=r.start_us, height=0.6,
                color=DEVICE_COLORS.get(_device_key(r.device), DEVICE_COLORS[""]))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r.node_name} ({r.op})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel("time since step start (µs)")
    devices = sorted({_device_key(r.device) for r in rows})
    if devices:
        ax.legend(handles=[Patch(fc=DEVICE_COLORS.get(k, DEVICE_COLORS[""]), label=k or "(no device)")
                           for k in devices], fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax
