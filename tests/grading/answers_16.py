"""Plausible wrong answers for notebook 16 (graph-rewrite), and other correct ones, keyed by grade_id.

Each replaces the body of one of the lab's functions (``match_conv_bias_relu`` and
``rewrite_conv_bias_relu``, split from notebook 15, operator-fusion); each wrong one must lose
exactly that exercise's points, each correct one must score them."""

# The lab's answers share the input parser a student would write first.
_PARSE = """
def parse(inp):
    if inp.startswith("^"):
        return inp[1:], -1
    name, sep, port = inp.rpartition(":")
    return (name, int(port)) if sep and port.isdigit() else (inp, 0)
"""

# match_conv_bias_relu without the one check a wrong answer leaves out: {FETCHED} and {READERS}
# are filled in per answer.
_MATCH = _PARSE + """
nodes = {{n["name"]: n for n in graph_def["node"]}}
readers = {{}}
for n in graph_def["node"]:
    for inp in n["input"]:
        src, port = parse(inp)
        readers.setdefault(src, []).append((n["name"], port))
fetched = {FETCHED}
def only_reader(name, reader):
    return {READERS} and name not in fetched
found = []
for relu in graph_def["node"]:
    if relu["op"] != {RELU}:
        continue
    bias_name, port = parse(relu["input"][0])
    if nodes.get(bias_name, {{}}).get("op") != "BiasAdd":
        continue
    conv_name, port = parse(nodes[bias_name]["input"][0])
    if nodes.get(conv_name, {{}}).get("op") not in {CONTRACTIONS}:
        continue
    if only_reader(bias_name, relu["name"]) and only_reader(conv_name, bias_name):
        found.append((conv_name, bias_name, relu["name"]))
return found
"""
_RIGHT = dict(FETCHED="{parse(f)[0] for f in fetches}", READERS="readers.get(name, []) == [(reader, 0)]",
              RELU='"Relu"', CONTRACTIONS='("Conv2D",)')


def _match(**wrong):
    return _MATCH.format(**{**_RIGHT, **wrong})


# rewrite_conv_bias_relu with one step changed: {DATA}, {CONTROL}, {FUSED_OPS}, {COPY}, {KEEP}
_REWRITE = """
import copy
out = {COPY}
nodes = {{n["name"]: n for n in out["node"]}}
gone = set()
for conv_name, bias_name, relu_name in matches:
    conv, bias, relu = nodes[conv_name], nodes[bias_name], nodes[relu_name]
    data = {DATA}
    control = {CONTROL}
    attr = dict(conv["attr"])
    attr["num_args"] = {{"i": 1}}
    attr["fused_ops"] = {{"list": {{"s": {FUSED_OPS}}}}}
    relu["op"], relu["input"], relu["attr"] = "_FusedConv2D", data + control, attr
    gone.update({KEEP})
out["node"] = [n for n in out["node"] if n["name"] not in gone]
return out
"""
_RIGHT_REWRITE = dict(
    COPY="copy.deepcopy(graph_def)",
    DATA='[i for i in conv["input"] if not i.startswith("^")] + [bias["input"][1]]',
    CONTROL='list(dict.fromkeys(i for n in (conv, bias, relu) for i in n["input"] if i.startswith("^")))',
    FUSED_OPS='["BiasAdd", "Relu"]', KEEP="(conv_name, bias_name)")


def _rewrite(**wrong):
    return _REWRITE.format(**{**_RIGHT_REWRITE, **wrong})


WRONG_ANSWERS = {
    "match_conv_bias_relu": {
        # any reader count: fuses a conv whose output peek_conv1 also reads
        "ignores_other_readers": _match(READERS="True"),
        # counts data readers only: a node waiting on the BiasAdd through ^bias1 is left dangling
        "ignores_control_edges": _match(READERS="[r for r in readers.get(name, []) if r[1] >= 0] == [(reader, 0)]"),
        # never looks at the fetches: a fetched bias0:0 would vanish
        "ignores_fetches": _match(FETCHED="set()"),
        # compares fetches as written: "bias0:0" is never equal to the node name "bias0"
        "fetch_names_with_port": _match(FETCHED="set(fetches)"),
        # Relu6 too: this pass (and the fused_ops it writes) is for Relu only
        "matches_relu6_too": _match(RELU='relu["op"] if relu["op"] in ("Relu", "Relu6") else None'),
        # any contraction: the dense layer's MatMul chain is not a Conv2D
        "matches_matmul_too": _match(CONTRACTIONS='("Conv2D", "MatMul")'),
        # asks the library's remapper which Relus became _FusedConv2D
        "library_remapper": """
import aicslib as aics
g = aics.Graph()
with g.as_default():
    aics.import_graph_def(graph_def, name="")
fused = aics.grappler.optimize(g, list(fetches))
names = {n["name"] for n in fused["node"] if n["op"] == "_FusedConv2D"}
nodes = {n["name"]: n for n in graph_def["node"]}
found = []
for name in names:
    bias = nodes[name]["input"][0]
    found.append((nodes[bias]["input"][0], bias, name))
return found
""",
        "copies_the_package_reference": """
from workbook.references.remap import match_conv_bias_relu as ref
return ref(graph_def, fetches)
""",
    },
    "rewrite_conv_bias_relu": {
        # edits the GraphDef it was given (a shallow copy shares the node dicts)
        "edits_the_input": _rewrite(COPY='dict(graph_def, node=list(graph_def["node"]))'),
        # forgets the bias: the fused op has num_args = 1 but no argument
        "forgets_the_bias_input": _rewrite(DATA='[i for i in conv["input"] if not i.startswith("^")]'),
        # keeps only the Relu's own control inputs: conv0's ^init is lost
        "drops_control_inputs": _rewrite(CONTROL='[i for i in relu["input"] if i.startswith("^")]'),
        # the output stage in the wrong order: relu then bias
        "fused_ops_reversed": _rewrite(FUSED_OPS='["Relu", "BiasAdd"]'),
        # leaves the conv and the BiasAdd in the graph (dead nodes the graph still computes)
        "keeps_the_old_nodes": _rewrite(KEEP="()"),
        # the library's remapper on the whole graph (fuses more than `matches` says, and calls aicslib)
        "library_remapper": """
import aicslib as aics
g = aics.Graph()
with g.as_default():
    aics.import_graph_def(graph_def, name="")
return aics.grappler.optimize(g, [m[2] for m in matches] or ["y"])
""",
        "copies_the_package_reference": """
from workbook.references.remap import rewrite_conv_bias_relu as ref
return ref(graph_def, matches)
""",
    },
}

CORRECT_ANSWERS = {
    "match_conv_bias_relu": {
        # walks from each Conv2D forward, through consumer lists, and returns a list of lists
        "walks_forward_from_the_conv": _PARSE + """
readers = {}
for n in graph_def["node"]:
    for inp in n["input"]:
        readers.setdefault(parse(inp)[0], []).append((n, parse(inp)[1]))
fetched = {f.split(":")[0] for f in fetches}
def sole(name):
    r = readers.get(name, [])
    if len(r) != 1 or r[0][1] != 0 or name in fetched:
        return None
    return r[0][0]
out = []
for conv in graph_def["node"]:
    if conv["op"] == "Conv2D":
        bias = sole(conv["name"])
        if bias is not None and bias["op"] == "BiasAdd" and parse(bias["input"][0]) == (conv["name"], 0):
            relu = sole(bias["name"])
            if relu is not None and relu["op"] == "Relu":
                out.append([conv["name"], bias["name"], relu["name"]])
return out
""",
    },
    "rewrite_conv_bias_relu": {
        # a JSON round trip as the copy, a new node list, the fused node appended at the end
        "json_copy_fused_node_last": """
import json
gd = json.loads(json.dumps(graph_def))
nodes = {n["name"]: n for n in gd["node"]}
drop, fused = set(), []
for c, b, r in matches:
    conv, bias, relu = nodes[c], nodes[b], nodes[r]
    control = []
    for n in (conv, bias, relu):
        for i in n["input"]:
            if i.startswith("^") and i not in control:
                control.append(i)
    attr = json.loads(json.dumps(conv["attr"]))
    attr.update(num_args={"i": 1}, fused_ops={"list": {"s": ["BiasAdd", "Relu"]}})
    fused.append({"name": r, "op": "_FusedConv2D", "attr": attr, "device": relu.get("device", ""),
                  "input": [i for i in conv["input"] if i[0] != "^"] + [bias["input"][1]] + control})
    drop |= {c, b, r}
gd["node"] = [n for n in gd["node"] if n["name"] not in drop] + fused
return gd
""",
    },
}
