# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 16 图改写 (graph rewrite)：自己写一个 remapper 式的融合 pass
#
# **前置章节**：[15 operator-fusion](15-operator-fusion.ipynb)。那一章测量了算子融合为什么更快：grappler 的 remapper
# 把 Conv2D + BiasAdd + ReLU 换成一个 `_FusedConv2D`，偏置与激活就地加在卷积的输出上。这一章从"测"转到"写"：
# 自己在 GraphDef 上实现这条改写，并且只在它**安全**时改写。
#
# **学习目标**
#
# 1. 读懂 GraphDef：节点、数据输入 (`"conv0:0"`) 与控制输入 (`"^init"`)；
# 2. 找出可以安全融合的 Conv2D → BiasAdd → Relu 链：中间结果没有别的读者、没有被取回 (fetch)；
# 3. 把每条链换成 `_FusedConv2D`，改写后的图与原图结果逐位相同；再拿它改写一个真正的网络，与 aicslib 自己的 remapper 对照。
#
# **实验**（自动评分，共 9 分）：第 1 节的 `match_conv_bias_relu`（4 分）和 `rewrite_conv_bias_relu`（5 分）。
# 没做完，后面的单元格照样能运行（改用参考实现，并说明）。运行时间见下面第一个单元格的输出（实测）。
# 本章只改写 GraphDef 的副本，不注册任何算子或 kernel，不改动全局状态。

# %%
import numpy as np

import aicslib as aics
from workbook import grading, networks, run_times

run_times.show("graph-rewrite")
FAST = aics.flags.FAST
ALL_OFF = networks.ALL_OFF                  # every grappler pass off: a GraphDef runs exactly as written
REMAP_ONLY = networks.REMAP_ONLY            # only the library's remapper on, for comparison
BATCH, HW = (1, 32) if FAST else (8, 64)    # operator-fusion's settings for its networks
rng = np.random.default_rng(0)


def build_network(name):
    """(graph, out, feed) for one of operator-fusion's networks (workbook/networks.py)."""
    return networks.build_network(name, BATCH, HW, rng)


print("AICS_FAST:", FAST, "| networks:", ", ".join(networks.NETWORKS))

# %% [markdown]
# ## 1. 实验：自己写一个 remapper（9 分）
#
# [15 operator-fusion](15-operator-fusion.ipynb) 里的融合都是 `aicslib/grappler/optimizers/remapper.py`（TF 的 `remapper.cc`）替我们做的。这个实验里你自己写这个
# pass 的核心：在一张 **GraphDef**（图的序列化形式，`Graph.as_graph_def()` 给出，格式与 TF 的 GraphDef 一致）上，
# 找出 Conv2D → BiasAdd → Relu 的链，把每条链换成一个 `_FusedConv2D` 节点。
#
# GraphDef 是一个字典，`graph_def["node"]` 是节点列表；每个节点是 `{"name", "op", "input", "attr"}`。
# `input` 里的字符串指向产生这个输入的节点：`"conv0"`（`conv0` 的第 0 个输出，也可写成 `"conv0:0"`）、`"split:1"`
# （第 1 个输出）、`"^init"`（控制边 (control edge)：等 `init` 运行完，但不读它的值）。
#
# 图改写的第一条规矩是**不改变任何人看得到的结果**。融合节点只写出 ReLU 之后的结果，卷积与 BiasAdd 的输出从此不存在，
# 所以只有当这两个**中间结果** (intermediate) 没有别人需要时才能融合：
#
# * 它只有一个读者，就是链上的下一个节点（没有别的数据边读它，也没有节点通过控制边等它）；
# * 它不在 `fetches`（`Session.run` 要取回的张量）里——用户要取回的值不能消失。
#
# 实验分两步：
#
# 1. `match_conv_bias_relu(graph_def, fetches)`（4 分）：返回所有**可以安全融合**的链 `(conv, bias_add, relu)`（节点名）；
# 2. `rewrite_conv_bias_relu(graph_def, matches)`（5 分）：返回一张**新的** GraphDef（不要改动传入的那张），其中每条链
#    换成一个节点：
#    * 名字用 ReLU 节点的名字（读 ReLU 的节点因此无需改动），`op` 为 `"_FusedConv2D"`；
#    * 数据输入：卷积的两个数据输入（图像、卷积核），再加 BiasAdd 的偏置输入（它的第 2 个数据输入）；
#    * 控制输入：三个旧节点的控制输入（`"^..."`）都要保留，每个只出现一次；
#    * `attr`：卷积的 `attr`（步长、填充、数据格式……），再加 `"num_args": {"i": 1}`（一个额外参数：偏置）与
#      `"fused_ops": {"list": {"s": ["BiasAdd", "Relu"]}}`（输出阶段依次做什么）；
#    * 删掉卷积与 BiasAdd 两个节点，其余节点原样保留。
#
# 评分：改写后的图（节点、输入、属性）与参考一致，用 Session 运行新旧两张图结果**逐位相同**，并在中间结果有别的读者
# 或被取回时拒绝改写。两步都只用 Python 的字典与列表，不得调用 aicslib（例如 `aics.grappler`）或 `workbook` 里的实现。
# 下面的单元格给出一个小网络的 GraphDef 与运行 GraphDef 的帮手函数，可以用来试你的代码。

# %%
def lab_graph(twists=(), blocks=2, seed=0):
    """A small network as a GraphDef, and a feed for it: `blocks` blocks conv{k} (Conv2D) -> bias{k}
    (BiasAdd) -> relu{k} (Relu), then a dense layer dense -> dense_bias -> dense_relu (MatMul, not a
    convolution) and y = the sum of everything. `twists` (strings) change block k:
    "conv_read:k" / "bias_read:k": another node also reads conv{k}'s / bias{k}'s output;
    "bias_control:k": a node waits on bias{k} through a control edge; "conv_control:k": conv{k}
    waits on a NoOp "init"; "relu6:k": the activation is Relu6."""
    r = np.random.default_rng(seed)
    tw = {t.split(":")[0]: set() for t in twists}
    for t in twists:
        tw[t.split(":")[0]].add(int(t.split(":")[1]))
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [2, 8, 8, 3], name="x")
        init = aics.no_op(name="init")
        h, extra = x, []
        for k in range(blocks):
            c_in, c_out = h.shape.as_list()[-1], 4 + 2 * k
            w = aics.constant(r.standard_normal((3, 3, c_in, c_out)).astype(np.float32) * 0.3, name=f"w{k}")
            b = aics.constant(r.standard_normal(c_out).astype(np.float32), name=f"b{k}")
            with g.control_dependencies([init] if k in tw.get("conv_control", ()) else []):
                conv = aics.nn.conv2d(h, w, 1, "SAME", name=f"conv{k}")
            bias = aics.nn.bias_add(conv, b, name=f"bias{k}")
            h = (aics.nn.relu6 if k in tw.get("relu6", ()) else aics.nn.relu)(bias, name=f"relu{k}")
            if k in tw.get("conv_read", ()):
                extra.append(aics.reduce_max(conv, name=f"peek_conv{k}"))
            if k in tw.get("bias_read", ()):
                extra.append(aics.reduce_max(bias, name=f"peek_bias{k}"))
            if k in tw.get("bias_control", ()):
                with g.control_dependencies([bias.op]):
                    extra.append(aics.constant(0.0, name=f"after_bias{k}"))
        flat = aics.reshape(h, [2, -1], name="flat")
        wd = aics.constant(r.standard_normal((flat.shape.as_list()[1], 5)).astype(np.float32) * 0.1, name="wd")
        dense = aics.nn.relu(aics.nn.bias_add(aics.matmul(flat, wd, name="dense"), aics.constant(np.ones(5, np.float32)),
                                              name="dense_bias"), name="dense_relu")
        aics.add_n([aics.reduce_sum(dense)] + extra, name="y")
    return g.as_graph_def(), {"x:0": r.standard_normal((2, 8, 8, 3)).astype(np.float32)}


def run_graph_def(graph_def, fetches, feed):
    """Imports `graph_def` into a new graph and runs `fetches` with every grappler pass off (so the
    library rewrites nothing: what runs is exactly this GraphDef)."""
    g = aics.Graph()
    with g.as_default():
        aics.import_graph_def(graph_def, name="")
    with aics.Session(graph=g, config=ALL_OFF) as sess:
        return sess.run(fetches, feed)


example_gd, example_feed = lab_graph()
for node in example_gd["node"]:
    if node["op"] != "Const":
        print(f"{node['name']:12s} {node['op']:12s} input={node['input']}")

# %% nbgrader={"grade": false, "grade_id": "match_conv_bias_relu", "locked": false, "schema_version": 3, "solution": true, "task": false}
def match_conv_bias_relu(graph_def, fetches):
    """The Conv2D -> BiasAdd -> Relu chains of `graph_def` that can be fused safely.

    graph_def: a GraphDef dict ({"node": [{"name", "op", "input", "attr"}, ...]}).
    fetches: the tensors Session.run will fetch, as names ("y:0", "bias1:0" or "bias1").
    Returns a list of (conv name, bias_add name, relu name), in any order: each chain where the Relu
    reads the BiasAdd's output, the BiasAdd's first input is the Conv2D's output, and neither
    intermediate (the Conv2D's output, the BiasAdd's output) is read by anything else (a data or a
    control edge) or fetched."""
    ### BEGIN SOLUTION
    def parse(inp):
        if inp.startswith("^"):
            return inp[1:], -1
        name, sep, port = inp.rpartition(":")
        return (name, int(port)) if sep and port.isdigit() else (inp, 0)

    nodes = {n["name"]: n for n in graph_def["node"]}
    readers = {}
    for n in graph_def["node"]:
        for inp in n["input"]:
            src, port = parse(inp)
            readers.setdefault(src, []).append((n["name"], port))
    fetched = {parse(f)[0] for f in fetches}

    def only_reader(name, reader):
        return readers.get(name, []) == [(reader, 0)] and name not in fetched

    found = []
    for relu in graph_def["node"]:
        if relu["op"] != "Relu":
            continue
        bias_name, port = parse(relu["input"][0])
        if port != 0 or nodes.get(bias_name, {}).get("op") != "BiasAdd":
            continue
        conv_name, port = parse(nodes[bias_name]["input"][0])
        if port != 0 or nodes.get(conv_name, {}).get("op") != "Conv2D":
            continue
        if only_reader(bias_name, relu["name"]) and only_reader(conv_name, bias_name):
            found.append((conv_name, bias_name, relu["name"]))
    return found
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "match_conv_bias_relu_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the chains found against the reference on graphs with other readers,
# control edges, fetched intermediates, Relu6 and a MatMul chain; no call into aicslib or the workbook.
from workbook.references import remap as _remap_reference


def _match_case(twists, fetches, why):
    gd, _ = lab_graph(twists)
    before = repr(gd)
    got = grading.no_library_calls(match_conv_bias_relu, gd, list(fetches), what="match_conv_bias_relu",
                                   how="with Python's dicts and lists")
    call = f"match_conv_bias_relu(lab_graph({list(twists)}), {list(fetches)})"
    grading.check(repr(gd) == before, f"{call} changed the GraphDef it was given: only read it")
    try:
        got_set = {tuple(m) for m in got}
    except TypeError:
        raise grading.CheckFailed(f"{call} returned {got!r}: expected a list of (conv, bias_add, relu) name tuples")
    want = set(_remap_reference.match_conv_bias_relu(gd, fetches))
    missing, extra = sorted(want - got_set), sorted(got_set - want)
    grading.check(not missing and not extra and len(got) == len(got_set),
                  f"{call}: expected the chains {sorted(want)}, got {sorted(got_set)}"
                  + (f"; missing {missing}" if missing else "") + (f"; not safe or not a chain: {extra}" if extra else "")
                  + ("; some chain listed twice" if len(got) != len(got_set) else "") + f". {why}")


with grading.exercise("match_conv_bias_relu"):
    _match_case((), ["y:0"], "Both conv blocks fuse; dense -> dense_bias -> dense_relu starts with a MatMul, not a Conv2D.")
    _match_case(("conv_read:1",), ["y:0"], "conv1's output is also read by peek_conv1: the fused op never writes "
                                          "it, so conv1's chain must stay as it is.")
    _match_case((), ["y:0", "bias0:0"], "bias0:0 is fetched: the user wants that value, so its chain must not fuse.")
    ### BEGIN HIDDEN TESTS
    _match_case(("bias_read:0",), ["y:0"], "bias0's output is also read by peek_bias0.")
    _match_case(("bias_control:1",), ["y:0"], "after_bias1 waits on bias1 through a control edge (^bias1): if bias1 "
                                              "disappears, that edge points at nothing.")
    _match_case(("relu6:0",), ["y:0"], "relu0 is a Relu6 here: this pass fuses Conv2D + BiasAdd + Relu only.")
    _match_case((), ["y", "conv1"], "Fetches may name nodes without ':0': conv1 is fetched.")
    _match_case(("conv_control:0", "conv_read:0", "bias_read:1"), ["y:0"], "Neither block may fuse here.")
    _match_case(("conv_control:1",), ["y:0", "relu1:0"], "A control input of the conv and a fetched Relu do not "
                                                         "stop fusion: the fused node keeps both.")
    ### END HIDDEN TESTS

# %% nbgrader={"grade": false, "grade_id": "rewrite_conv_bias_relu", "locked": false, "schema_version": 3, "solution": true, "task": false}
def rewrite_conv_bias_relu(graph_def, matches):
    """A new GraphDef with each (conv, bias_add, relu) of `matches` replaced by one _FusedConv2D node
    named as the Relu: data inputs = the conv's data inputs + the BiasAdd's bias input; control
    inputs = those of the three nodes, each once; attr = the conv's attr plus num_args and fused_ops.
    The conv and BiasAdd nodes are gone; every other node is kept as it was. `graph_def` itself must
    not change (copy what you edit)."""
    ### BEGIN SOLUTION
    import copy

    out = copy.deepcopy(graph_def)
    nodes = {n["name"]: n for n in out["node"]}
    gone = set()
    for conv_name, bias_name, relu_name in matches:
        conv, bias, relu = nodes[conv_name], nodes[bias_name], nodes[relu_name]
        data = [i for i in conv["input"] if not i.startswith("^")] + [bias["input"][1]]
        control = []
        for n in (conv, bias, relu):
            control += [i for i in n["input"] if i.startswith("^") and i not in control]
        attr = dict(conv["attr"])
        attr["num_args"] = {"i": 1}
        attr["fused_ops"] = {"list": {"s": ["BiasAdd", "Relu"]}}
        relu["op"], relu["input"], relu["attr"] = "_FusedConv2D", data + control, attr
        gone.update((conv_name, bias_name))
    out["node"] = [n for n in out["node"] if n["name"] not in gone]
    return out
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "rewrite_conv_bias_relu_test", "locked": true, "points": 5, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the rewritten GraphDef node by node against the reference (fused node's
# op, inputs, control inputs, attrs; the rest unchanged), the original left as it was, and both
# graphs run in a Session with identical results; no call into aicslib or the workbook.
import json as _json


def _rewrite_case(twists, fetches, matches=None, seed=0):
    gd, feed = lab_graph(twists, seed=seed)
    if matches is None:
        matches = _remap_reference.match_conv_bias_relu(gd, fetches)
    before = _json.dumps(gd, sort_keys=True)
    call = f"rewrite_conv_bias_relu(lab_graph({list(twists)}), {matches})"
    got = grading.no_library_calls(rewrite_conv_bias_relu, gd, [tuple(m) for m in matches],
                                   what="rewrite_conv_bias_relu", how="with Python's dicts and lists")
    grading.check(_json.dumps(gd, sort_keys=True) == before,
                  f"{call} changed the GraphDef it was given: build a new one (copy.deepcopy, then edit the copy)")
    grading.check(isinstance(got, dict) and isinstance(got.get("node"), list),
                  f"{call} returned {type(got).__name__}: expected a GraphDef dict with a 'node' list")
    want = _remap_reference.rewrite_conv_bias_relu(gd, matches)
    got_nodes, want_nodes = {n.get("name"): n for n in got["node"]}, {n["name"]: n for n in want["node"]}
    grading.check(len(got_nodes) == len(got["node"]), f"{call}: some node name appears twice in the result")
    stale, lost = sorted(set(got_nodes) - set(want_nodes)), sorted(set(want_nodes) - set(got_nodes))
    grading.check(not stale, f"{call}: the result still has {stale}; the conv and BiasAdd of each fused chain "
                             f"must be removed")
    grading.check(not lost, f"{call}: the result lost the nodes {lost}; only the conv and BiasAdd of each chain go "
                            f"(the fused node takes the Relu's name)")
    for name, w in want_nodes.items():
        n = got_nodes[name]
        where = f"{call}: node '{name}'"
        if w["op"] != "_FusedConv2D":
            grading.check(n == w, f"{where} ({w['op']}) is not part of a fused chain and must stay as it was; "
                                  f"expected {w}, got {n}")
            continue
        grading.check(n.get("op") == "_FusedConv2D", f"{where}: expected op '_FusedConv2D', got {n.get('op')!r}")
        data = [i for i in n.get("input", []) if not i.startswith("^")]
        want_data = [i for i in w["input"] if not i.startswith("^")]
        grading.check(data == want_data, f"{where}: expected data inputs {want_data} (the conv's input and filter, "
                                         f"then the bias), got {data}")
        control = [i for i in n["input"] if i.startswith("^")]
        want_control = [i for i in w["input"] if i.startswith("^")]
        grading.check(sorted(control) == sorted(want_control),
                      f"{where}: expected the control inputs {sorted(want_control)} (those of the conv, the BiasAdd "
                      f"and the Relu, each once), got {sorted(control)}")
        for key, value in w["attr"].items():
            grading.check(n.get("attr", {}).get(key) == value,
                          f"{where}: attr {key!r}: expected {value}, got {n.get('attr', {}).get(key)}")
    fetch = list(fetches) + [m[2] + ":0" for m in matches]
    try:
        got_values = run_graph_def(got, fetch, feed)
    except Exception as exc:
        raise grading.CheckFailed(f"{call}: the rewritten GraphDef does not run: {type(exc).__name__}: {exc}")
    for t, a, b in zip(fetch, run_graph_def(gd, fetch, feed), got_values):
        grading.check_array(b, a, f"{t} in the rewritten graph (against the original graph's)")


with grading.exercise("rewrite_conv_bias_relu"):
    _rewrite_case((), ["y:0"])
    _rewrite_case(("conv_read:1",), ["y:0"])
    ### BEGIN HIDDEN TESTS
    _rewrite_case(("conv_control:0", "bias_control:1"), ["y:0"], seed=1)
    _rewrite_case(("conv_control:1",), ["y:0", "relu1:0"], seed=2)
    _rewrite_case((), ["y:0"], matches=[("conv1", "bias1", "relu1")], seed=3)
    _rewrite_case((), ["y:0"], matches=[], seed=4)
    _rewrite_case(("relu6:1",), ["y:0"], seed=5)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 2. 用你的 pass 改写一个网络
#
# 用你的 pass 改写 operator-fusion 一章第 4 节计时的 VGG 风格网络（`workbook/networks.py`，同样的结构）；没做完或没通过时用参考实现，并说明。比较改写前后的节点、
# 两张图的结果，以及与 aicslib 自己的 remapper 改写出的算子是否一样。

# %%
my_match = grading.use("match_conv_bias_relu", match_conv_bias_relu, _remap_reference.match_conv_bias_relu,
                       what="matcher workbook.references.remap.match_conv_bias_relu")
my_rewrite = grading.use("rewrite_conv_bias_relu", rewrite_conv_bias_relu, _remap_reference.rewrite_conv_bias_relu,
                         what="rewrite workbook.references.remap.rewrite_conv_bias_relu")
vgg_graph, vgg_out, vgg_feed = build_network("VGG-like")
vgg_gd = vgg_graph.as_graph_def()
vgg_matches = my_match(vgg_gd, ["out:0"])
vgg_fused = my_rewrite(vgg_gd, vgg_matches)
feed_by_name = {t.name: v for t, v in vgg_feed.items()}
a, b = run_graph_def(vgg_gd, ["out:0"], feed_by_name), run_graph_def(vgg_fused, ["out:0"], feed_by_name)
assert np.array_equal(a[0], b[0]), "the rewrite changed the network's output"


def op_counts(gd):
    ops = [n["op"] for n in gd["node"] if n["op"] != "Const"]
    return {op: ops.count(op) for op in sorted(set(ops))}


library_only_remap = aics.grappler.optimize(vgg_graph, ["out:0"], REMAP_ONLY.graph_options.rewrite_options)
print(f"{len(vgg_matches)} chains fused; nodes {len(vgg_gd['node'])} -> {len(vgg_fused['node'])}")
print("ops before:            ", op_counts(vgg_gd))
print("ops after your pass:   ", op_counts(vgg_fused))
print("ops after the library's remapper:", op_counts(library_only_remap))
print("outputs identical:", np.array_equal(a[0], b[0]))

# %% [markdown]
# ## 小结
#
# * 图改写在 GraphDef 上做：节点的 `input` 列表就是边，`"name:port"` 是数据边，`"^name"` 是控制边；
# * 融合会让中间结果消失，所以必须先确认没有人需要它：没有别的数据读者、没有控制边等它、不在 `fetches` 里——
#   这正是 aicslib 的 remapper（TF 的 `remapper.cc`）在改写前做的检查；
# * 改写后的节点沿用 ReLU 的名字，读它的节点不用改；三个旧节点的控制输入都要留下；
# * 检验一个图改写的标准是"结果不变"：新旧两张图用 Session 运行，结果逐位相同。
#   它为什么更快（或在小张量上反而更慢），见 [15 operator-fusion](15-operator-fusion.ipynb) 的测量。
