"""The graph-rewrite chapter's lab: a remapper-style pass on a GraphDef, written out.

``match_conv_bias_relu(graph_def, fetches)`` finds the Conv2D -> BiasAdd -> Relu chains that may
become one ``_FusedConv2D``; ``rewrite_conv_bias_relu(graph_def, matches)`` replaces each by that
node. The same rules as ``aicslib/grappler/optimizers/remapper.py`` (TF's ``remapper.cc``), for this
one pattern and on the JSON GraphDef (``Graph.as_graph_def()``) instead of a GraphView: an
intermediate (the convolution's or the BiasAdd's output) may vanish only when its one reader is the
next node of the chain, nothing waits on it through a control edge and it is not fetched.
"""
import copy


def _parse(inp):
    """``"x:1"`` -> ("x", 1); ``"x"`` -> ("x", 0); ``"^x"`` -> ("x", -1) (a control edge)."""
    if inp.startswith("^"):
        return inp[1:], -1
    name, sep, port = inp.rpartition(":")
    return (name, int(port)) if sep and port.isdigit() else (inp, 0)


def _readers(graph_def):
    """node name -> list of (reader name, port read; -1 for a control edge)."""
    readers = {}
    for node in graph_def["node"]:
        for inp in node.get("input", []):
            src, port = _parse(inp)
            readers.setdefault(src, []).append((node["name"], port))
    return readers


def match_conv_bias_relu(graph_def, fetches):
    """[(conv, bias_add, relu) node names] of every chain that is safe to fuse."""
    nodes = {n["name"]: n for n in graph_def["node"]}
    readers = _readers(graph_def)
    fetched = {_parse(f)[0] for f in fetches}

    def only_reader_is(name, reader):
        return readers.get(name, []) == [(reader, 0)] and name not in fetched

    found = []
    for relu in graph_def["node"]:
        if relu["op"] != "Relu":
            continue
        bias_name, port = _parse(relu["input"][0])
        bias = nodes.get(bias_name)
        if bias is None or bias["op"] != "BiasAdd" or port != 0:
            continue
        conv_name, port = _parse(bias["input"][0])
        conv = nodes.get(conv_name)
        if conv is None or conv["op"] != "Conv2D" or port != 0:
            continue
        if only_reader_is(bias_name, relu["name"]) and only_reader_is(conv_name, bias_name):
            found.append((conv_name, bias_name, relu["name"]))
    return found


def rewrite_conv_bias_relu(graph_def, matches):
    """A new GraphDef: each (conv, bias_add, relu) of ``matches`` replaced by one ``_FusedConv2D``
    named as the Relu (its readers read the fused node unchanged); ``graph_def`` is left as it was."""
    out = copy.deepcopy(graph_def)
    nodes = {n["name"]: n for n in out["node"]}
    gone = set()
    for conv_name, bias_name, relu_name in matches:
        conv, bias, relu = nodes[conv_name], nodes[bias_name], nodes[relu_name]
        data = [i for i in conv["input"] if not i.startswith("^")] + [bias["input"][1]]
        control = []
        for n in (conv, bias, relu):
            control += [i for i in n["input"] if i.startswith("^") and i not in control]
        attr = copy.deepcopy(conv.get("attr", {}))
        attr["num_args"] = {"i": 1}
        attr["fused_ops"] = {"list": {"s": ["BiasAdd", "Relu"]}}
        device = relu.get("device")
        relu.clear()
        relu.update({"name": relu_name, "op": "_FusedConv2D", "input": data + control, "attr": attr})
        if device:
            relu["device"] = device
        gone.update((conv_name, bias_name))
    out["node"] = [n for n in out["node"] if n["name"] not in gone]
    return out
