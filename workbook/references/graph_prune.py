"""Notebook 14's exercise ``prune_graph_def``: the Session's pruning, on a GraphDef.

From the fetches, walk back along every input (data edges ``"x"``/``"x:1"`` and control edges
``"^x"``); a fed tensor is a cut: whoever reads it reads the fed value, so its producer is not
needed on that reader's account (it may still be needed for another of its outputs, or through a
control edge). A fetch that is itself fed needs nothing. The kept nodes are returned in the
GraphDef's order. The runtime's own version: ``aicslib/framework/session.py`` (and
``aicslib.visualize.needed_ops``, which the test compares with).
"""


def _split(name):
    """``"x:1"`` -> ("x", 1); ``"x"`` -> ("x", 0); ``"^x"`` -> ("x", None)."""
    if name.startswith("^"):
        return name[1:], None
    node, sep, port = name.rpartition(":")
    return (node, int(port)) if sep and port.isdigit() else (name, 0)


def prune_graph_def(graph_def, fetches, feeds=()):
    """Names of the nodes a run of ``fetches`` with ``feeds`` (tensor names) needs, in graph order."""
    nodes = {n["name"]: n for n in graph_def["node"]}
    fed = {_split(t) for t in feeds}
    needed, stack = set(), []
    for f in fetches:
        node, port = _split(f)
        if ":" in f and (node, port) in fed:
            continue                         # returned as fed: nothing runs for it
        stack.append(node)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for inp in nodes[name].get("input", []):
            src, port = _split(inp)
            if port is not None and (src, port) in fed:
                continue
            stack.append(src)
    return [n["name"] for n in graph_def["node"] if n["name"] in needed]
