# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 14 数据流图剪枝与 VLOG 日志：读懂运行时在做什么
#
# **前置章节 (prerequisites)**：[01 eager-vs-static](01-eager-vs-static.ipynb)、[02 graph-execution](02-graph-execution.ipynb)
#
# **对应习题**：5.10（设置环境变量 `TF_CPP_MIN_VLOG_LEVEL=3`，运行课本中数据流图剪枝 (graph pruning) 的程序，查看并分析输出日志）。
#
# **学习目标**
#
# 1. 在子进程 (subprocess) 里用 `AICS_MIN_VLOG_LEVEL=3`（`TF_CPP_MIN_VLOG_LEVEL` 作为别名同样有效）运行一个剪枝程序，拿到完整日志；
# 2. 读懂日志的格式：`时间: 级别 文件:行号] 消息`，这是 TensorFlow 1.x 与早期 2.x 的 C++ 日志 (`LOG`/`VLOG`) 的格式（TF 2.21 的前缀换成了 absl 的写法，见第 6 节）；
# 3. 从日志里找出：哪些节点被剪掉、为什么；Grappler 图优化 (graph optimization) 各个 pass 做了什么；每个节点放在哪个设备 (placement)；内核 (kernel) 按什么顺序执行；
# 4. 练习：写一个日志解析器 `parse_vlog`，把日志变成结构化数据；再自己实现剪枝 `prune_graph_def`，与日志对照（都自动评分）；
# 5. 对照一份真实的 TensorFlow 2.21 日志（`data/tf_vlog/`）：两边的剪枝、放置、执行顺序逐项比较，并解释每一处差异。
#
# **运行时间**见下面第一个单元格的输出（大部分是三个子进程的启动；`AICS_FAST=1` 与完整设置相同，本章没有重计算）。
# **练习**（自动评分，共 6 分）在第 3、4 节；没做完，后面的单元格用参考实现照样能运行到底（并说明）。

# %%
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import contextlib
import functools
import io

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display

import aicslib as aics
from aicslib import flags
from aicslib.datasets.images import data_dir
from aicslib.visualize import draw_graph, needed_ops
from workbook import grading, run_times

run_times.show("graph-pruning-vlog")
FAST = flags.FAST
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))   # the repository (for the subprocess)
print("AICS_FAST:", FAST)

# %% [markdown]
# ## 1. 剪枝程序：图里有的，不一定会运行
#
# 课本的例子建一张图，图里有多条支路，但 `sess.run` 只取 (fetch) 其中一部分。会话 (Session) 运行前先做**剪枝**：
# 从取值节点出发沿输入边（数据边和控制边）反向遍历，只保留取值需要的节点；被喂值 (feed) 的张量是遍历的"截断点"，
# 它的上游不再需要。下面的程序就是这样一张图（写成字符串，交给子进程运行）：
#
# * `c = a * b` 和 `d = a + b` 都依赖占位符 `a` 与常量 `b`；`e = d * 3` 依赖 `d`；
# * 我们只取 `c`，所以 `d`、`e` 应当被剪掉；
# * 图里还有一个常量子图 `k = 2 * 5` 与一个 `Identity`，用来观察 Grappler 的常量折叠 (constant folding) 与剪除冗余节点。

# %%
PROGRAM = textwrap.dedent('''
    import numpy as np
    import aicslib as aics

    g = aics.Graph()
    with g.as_default():
        a = aics.placeholder(aics.float32, shape=[2], name="a")
        b = aics.constant([1.0, 2.0], name="b")
        k = aics.multiply(aics.constant(2.0, name="two"), aics.constant(5.0, name="five"), name="k")
        c = aics.multiply(a, b, name="c")
        c_scaled = aics.identity(c * k, name="c_scaled")
        d = aics.add(a, b, name="d")
        e = aics.multiply(d, 3.0, name="e")
    with aics.Session(graph=g) as sess:
        print("c_scaled =", sess.run(c_scaled, feed_dict={a: [3.0, 4.0]}))
''')


@functools.lru_cache(maxsize=None)
def run_with_vlog(program, level=3, var="AICS_MIN_VLOG_LEVEL"):
    """Runs `program` in a fresh Python process with VLOG level `level` set through `var`;
    returns (stdout, stderr). A subprocess, because the level is read when aicslib starts. The
    same program at the same level logs the same lines, so a second call (a test cell run again)
    gives the first run's output instead of starting a process again."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("AICS_MIN_VLOG_LEVEL", None)
    env.pop("TF_CPP_MIN_VLOG_LEVEL", None)
    env[var] = str(level)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(program)
    try:
        done = subprocess.run([sys.executable, f.name], env=env, capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise RuntimeError(f"the program failed:\n{done.stderr[-2000:]}")
    return done.stdout, done.stderr


out, LOG = run_with_vlog(PROGRAM, 3)
print(out)
print(LOG)

# %% [markdown]
# `TF_CPP_MIN_VLOG_LEVEL` 是 TensorFlow 的变量名，`aicslib` 把它当作 `AICS_MIN_VLOG_LEVEL` 的别名：用它运行，日志的消息部分完全相同
# （时间戳不同）。

# %%
_, LOG_TF_NAME = run_with_vlog(PROGRAM, 3, var="TF_CPP_MIN_VLOG_LEVEL")


def messages(log):
    """The log without timestamps (what stays the same from run to run)."""
    return [re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: ", "", line) for line in log.splitlines()
            if "time = " not in line and " in " not in line.split("]")[-1][-12:]]


assert messages(LOG_TF_NAME) == messages(LOG) and len(messages(LOG)) > 10
print("same", len(messages(LOG)), "lines with either variable")

# %% [markdown]
# ## 2. 日志的格式与三个阶段
#
# 每一行的格式是 `YYYY-MM-DD hh:mm:ss.ffffff: I 文件:行号] 消息`：`I` 是严重级别 INFO（VLOG 一律是 INFO 级别），
# `文件:行号` 是打印这条日志的源码位置——点开它就能找到运行时的那段代码。这正是 TensorFlow 1.x 与早期 2.x 的 C++ 日志格式
# （`tensorflow/core/platform/default/logging.cc` 里的 `LogMessage`；TF 2.21 的前缀不同，见第 6 节）。`VLOG(n)` 只在 `n <= 级别` 时打印，所以级别越高越啰嗦：
#
# | VLOG 级别 | aicslib 打印什么 | 在哪里 |
# |---|---|---|
# | 1 | 剪枝：保留了几个节点、剪掉了哪些；Grappler 每个 pass 的结果，照 TF 2.21 的格式 `constant_folding: Graph size after: N nodes (变化), ...`（数字是 aicslib 对这张图的结果，见上面的日志；TF 2.21 对同一程序打印的是它自己的数，第 6 节对照） | `framework/session.py`、`grappler/optimizers/meta_optimizer.py` |
# | 2 | Grappler 的每一次改写（常量折叠照 TF 的格式 `Folded node: {{node k}} = Mul[T=DT_FLOAT](two, five)`）；每个节点的放置（TF 的 `k(Mul) placed on: ...`，以及 aicslib 多给的一行：内核注册的源码位置） | `grappler/optimizers/*.py`、`framework/session.py` |
# | 3 | 每个内核的执行：TF 的 `Process node: ID step N {{node ...}} = ...`，再加一行 aicslib 的 `Executing kernel ...`（输入输出的 dtype/形状、耗时）；Grappler 放弃某个改写的原因 | `framework/executor.py`、`grappler/optimizers/*.py` |
#
# "在哪里"一列不必靠记：每行日志的前缀就写着打印它的文件与行号。下面的单元格从上面的日志里把它们数出来。
#
# 日志里依次出现三个阶段：**剪枝 → 图优化 → 放置**（建执行计划，只在第一次 `run` 这组 fetch/feed 时发生，之后复用缓存的计划），
# 然后是**执行**（每次 `run` 都有）。`{{node NAME}} = OP[属性](输入)` 是 TF 描述一个节点的写法（`SummarizeNodeDef`），
# aicslib 在同样的事件上照抄这种写法，第 6 节把两边的行并排对比。

# %%
SOURCE = re.compile(r"^\S+ \S+ [IWE] (aicslib/[^:]+):\d+\] (\S+(?: \S+)?)")
kinds = {}
for _line in LOG.splitlines():
    _m = SOURCE.match(_line)
    if _m:
        kinds.setdefault(_m.group(1), set()).add(_m.group(2))
for _file, _starts in sorted(kinds.items()):
    print(f"{_file:50s} {', '.join(sorted(_starts))[:90]}")
assert any(s.startswith("Pruning graph") for s in kinds["aicslib/framework/session.py"])
assert {"Process node:", "Executing kernel"} <= kinds["aicslib/framework/executor.py"]

# %% [markdown]
# ## 3. 练习：把日志解析成结构化数据（3 分）
#
# 实现 `parse_vlog(text)`，返回一个字典，描述日志里**第一次** `sess.run`：
#
# * `"kept"`、`"total"`：剪枝行 `... keeping N of M nodes` 里的 N 与 M（整数）；
# * `"pruned"`：剪枝行 `Pruned (not needed by the fetches): x, y` 里的节点名列表，**保持日志中的顺序**（即图里的顺序，不是字母序）；这次 run 没有这一行时为空列表；
# * `"placement"`：字典，节点名 → 设备，来自 `Placing node 'NAME' (OP) on DEVICE; ...`；
# * `"executed"`：执行顺序，来自 `Executing kernel OP for node 'NAME' on DEVICE: ...` 的节点名列表。
#
# 一份日志里可能有多次 `run`，只要第一次的。第一次 run 在下一次 run 开始处结束，下一次 run 有两种开始方式：
# 取值或喂值不同时要重新建计划，日志里出现**新的剪枝行**；取值和喂值相同时直接复用缓存的计划，没有剪枝、放置行，
# 只有 `Process node`/`Executing` 行——这时**已经执行过的节点又执行一次**（一次 run 里每个节点只执行一次）。
#
# 注意：节点名可以含 `/`（名字作用域 (name scope)）；不带前缀的行要跳过（例如程序自己 `print` 的行：用 `2>&1` 把 stdout 和
# stderr 合在一起看日志时会混进来；多行消息的续行也没有前缀）；其他格式的行（Grappler、`placed on`、`Process node` 等）
# 不属于这四项，忽略即可（当然也可以用 `Process node: ID step N` 里的 step 编号 N 来区分不同的 run）。只用 Python 标准库（`re`、字符串方法）。
# 测试用上面的日志和一个新程序的日志（三次 `run`）检查，答案与运行时自己报告的结果（剪枝集合、`FULL_TRACE` 记录的放置和执行顺序）比较。

# %% nbgrader={"grade": false, "grade_id": "parse_vlog", "locked": false, "schema_version": 3, "solution": true, "task": false}
PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] [^ ]+:\d+\] (.*)$")


def parse_vlog(text):
    result = {"kept": None, "total": None, "pruned": [], "placement": {}, "executed": []}
    ### BEGIN SOLUTION
    for line in text.splitlines():
        m = PREFIX.match(line)
        if m is None:
            continue                      # the program's own output, or a continuation line
        msg = m.group(1)
        p = re.search(r"keeping (\d+) of (\d+) nodes$", msg)
        if msg.startswith("Pruning graph for fetches") and p:
            if result["kept"] is not None:
                break                     # a second pruning line: the next run (a new plan)
            result["kept"], result["total"] = int(p.group(1)), int(p.group(2))
        elif msg.startswith("Pruned (not needed by the fetches): "):
            result["pruned"] = [s.strip() for s in msg.split(": ", 1)[1].split(",") if s.strip()]
        elif msg.startswith("Placing node '"):
            p = re.match(r"Placing node '([^']+)' \([^)]*\) on ([^;]+);", msg)
            result["placement"][p.group(1)] = p.group(2)
        elif msg.startswith("Executing kernel "):
            name = re.match(r"Executing kernel \S+ for node '([^']+)'", msg).group(1)
            if name in result["executed"]:
                break                     # a node runs again: the cached plan's next run
            result["executed"].append(name)
    ### END SOLUTION
    return result


# %% nbgrader={"grade": true, "grade_id": "parse_vlog_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): parse_vlog on the log above (one run) and on a new program's log (name scopes, a
# soft-placed node, a fed tensor, Grappler rewrites, three runs: the same fetch twice, then another), each
# against what the runtime itself reports for the first run: the pruned nodes in graph order (from
# aicslib.visualize.needed_ops), placement and kernel order from a FULL_TRACE run.
import traceback as _traceback

_CHECK_PROGRAM = textwrap.dedent('''
    import numpy as np
    import aicslib as aics
    g = aics.Graph()
    with g.as_default():
        with aics.name_scope("inputs"):
            x = aics.placeholder(aics.float32, [3], name="x")
            w = aics.constant([1.0, -2.0, 0.5], name="w")
        with aics.name_scope("layer"):
            h = aics.nn.relu(x * w, name="h")
            with aics.device("/mlu:0"):
                s = aics.reduce_sum(h, name="s")
        unused = aics.exp(x, name="side/unused")
        t = aics.add(s, aics.multiply(aics.constant(2.0), aics.constant(4.0)), name="total")
        norm = aics.reduce_max(aics.abs(w), name="aux/norm")
    with aics.Session(graph=g) as sess:
        print(sess.run(t, feed_dict={x: [1.0, 2.0, 3.0]}))
        print(sess.run(t, feed_dict={x: [4.0, 5.0, 6.0]}))       # the cached plan again
        print(sess.run(unused, feed_dict={x: [0.0, 1.0, 2.0]}))  # other fetches: a new plan
''')
_out2, _log2 = run_with_vlog(_CHECK_PROGRAM, 3)


def _student_parse(text, which):
    """parse_vlog(text) without library calls; an error raised in the student's code is reported with
    the student's own lines, the release stub's NotImplementedError passes through as "not answered"."""
    try:
        parsed, called = grading.library_calls(parse_vlog, text)
    except grading.CheckFailed:
        raise
    except Exception as exc:
        if isinstance(exc, NotImplementedError) and not exc.args:
            raise
        own = [f for f in _traceback.extract_tb(exc.__traceback__) if f.filename == parse_vlog.__code__.co_filename]
        raise grading.CheckFailed(f"parse_vlog({which}) raised {type(exc).__name__}: {exc}" + "".join(
            f"\n    in {f.name}, line {f.lineno}: {(f.line or '').strip()}" for f in own)) from None
    called = sorted(name for name in called if not name.startswith("<"))
    grading.check(not called, f"parse_vlog calls the library ({', '.join(called)}): write the parser yourself "
                              f"with re and string methods")
    return parsed


def _runtime_truth(program, fetch, feed, value):
    """What the Session reports for the first run of `program`'s graph: pruned nodes in graph order,
    and placement and kernel order from RunMetadata (FULL_TRACE)."""
    ns = {}
    exec(program.split("with aics.Session")[0], ns)
    graph = ns["g"]
    fetch_t, feed_t = graph.get_tensor_by_name(fetch + ":0"), graph.get_tensor_by_name(feed + ":0")
    needed = needed_ops(graph, fetch_t, feeds={feed_t: 0.0})
    names = [op.name for op in graph.get_operations()]
    with aics.Session(graph=graph) as sess:
        md = aics.RunMetadata()
        sess.run(fetch_t, {feed_t: value}, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                 run_metadata=md)
    trace = md.node_stats()
    pruned = [n for n in names if n not in needed]
    return {"kept": len(names) - len(pruned), "total": len(names), "pruned": pruned,
            "placement": {n.node_name: n.device for n in trace}, "executed": [n.node_name for n in trace]}


def _compare(got, want, which):
    """Checks one parse against the truth, naming the key and the usual mistake."""
    grading.check(isinstance(got, dict) and set(got) >= set(want),
                  f"parse_vlog({which}) must return a dict with the keys {sorted(want)}, got {got!r:.200}")
    for key in ("kept", "total"):
        grading.check(got[key] == want[key], f"parse_vlog({which})[{key!r}]: expected {want[key]!r} (from the first "
                                             f"run's line '... keeping N of M nodes'), got {got[key]!r}")
    g, w = list(got["pruned"]), want["pruned"]
    why = ("the same names in another order: keep the log's order (the graph's), do not sort" if sorted(g) == sorted(w)
           else "names of a later run: only the first run's 'Pruned (...)' line counts" if set(g) > set(w)
           else "the names of the first run's 'Pruned (not needed by the fetches): ...' line, each whole (with its /)")
    grading.check(g == w, f"parse_vlog({which})['pruned']: expected {w}, got {g} ({why})")
    g, w = dict(got["placement"]), want["placement"]
    extra, wrong = sorted(set(g) - set(w)), sorted(n for n in set(g) & set(w) if g[n] != w[n])
    why = (f"{extra} are placed by a later run: only the first run" if extra
           else f"node {wrong[0]!r} ran on {w[wrong[0]]}: the device of its 'Placing node' line (soft placement can "
                f"move a node off the device it asked for)" if wrong
           else "every node of the first run's 'Placing node ...' lines, the whole name")
    grading.check(g == w, f"parse_vlog({which})['placement']: expected {w}, got {g} ({why})")
    g, w = list(got["executed"]), want["executed"]
    why = ("the log's order is the order the kernels ran in: keep it" if sorted(g) == sorted(w)
           else f"the first run executes {len(w)} kernels; the next run starts at a new pruning line or where a node "
                f"executes again (a run executes each node once)" if g[:len(w)] == w
           else "the node names of the first run's 'Executing kernel ... for node NAME' lines, in order")
    grading.check(g == w, f"parse_vlog({which})['executed']: expected {w}, got {g} ({why})")


with grading.exercise("parse_vlog"):
    _r1 = _student_parse(LOG, "LOG")
    _compare(_r1, _runtime_truth(PROGRAM, "c_scaled", "a", [3.0, 4.0]), "LOG")
    grading.check(_student_parse(LOG + out, "LOG + out") == _r1,
                  "parse_vlog(LOG + out) differs from parse_vlog(LOG): lines without the log prefix (the program's own "
                  "output, read together with the log via 2>&1) must be skipped")
    _compare(_student_parse(_log2, "the log of _CHECK_PROGRAM"),
             _runtime_truth(_CHECK_PROGRAM, "total", "inputs/x", [1.0, 2.0, 3.0]),
             "the log of _CHECK_PROGRAM (three runs)")
    ### BEGIN HIDDEN TESTS
    # The program's output mixed in, and a hand-made log: the first run prunes nothing (a later one does),
    # a continuation line without the prefix, severities W and E, the same plan run again.
    _compare(_student_parse(_out2 + _log2 + _out2, "output + log"),
             _runtime_truth(_CHECK_PROGRAM, "total", "inputs/x", [1.0, 2.0, 3.0]), "the program's output and its log")

    def _line(msg, sev="I"):
        return f"2026-01-02 03:04:05.678901: {sev} aicslib/framework/session.py:345] {msg}"

    def _ran(node_id, step, name, op, device="/device:CPU:0"):
        return [_line(f"Process node: {node_id} step {step} {{{{node {name}}}}} = {op}[T=DT_FLOAT]() device: {device}"),
                _line(f"Executing kernel {op} for node '{name}' on {device}: inputs [] -> [float32[]] in 1.0us")]

    _hand = "\n".join([
        _line("Pruning graph for fetches [z:0] feeds []: keeping 3 of 3 nodes"),
        _line("Placing node 'p/q_1' (Const) on /device:CPU:0; kernel registered at aicslib/kernels/array_ops.py:12"),
        _line("Placing node 'r' (Const) on /device:CPU:0; kernel registered at aicslib/kernels/array_ops.py:12"),
        _line("Placing node 'z' (AddV2) on /device:MLU:0; kernel registered at aicslib/kernels/cwise_ops.py:108", "W"),
        *_ran(0, 1, "r", "Const"),
        "    continued: Executing kernel Const for node 'ghost' on /device:CPU:0: inputs [] -> [] in 1.0us",
        *_ran(1, 1, "p/q_1", "Const"), *_ran(2, 1, "z", "AddV2", "/device:MLU:0"),
        *_ran(0, 2, "r", "Const"), *_ran(1, 2, "p/q_1", "Const"), *_ran(2, 2, "z", "AddV2", "/device:MLU:0"),
        _line("Pruning graph for fetches [p/q_1:0] feeds []: keeping 1 of 3 nodes"),
        _line("Pruned (not needed by the fetches): z, r", "E"),
        _line("Placing node 'p/q_1' (Const) on /device:CPU:0; kernel registered at aicslib/kernels/array_ops.py:12"),
        *_ran(0, 3, "p/q_1", "Const"),
    ])
    _compare(_student_parse(_hand, "a hand-made log"),
             {"kept": 3, "total": 3, "pruned": [], "executed": ["r", "p/q_1", "z"],
              "placement": {"p/q_1": "/device:CPU:0", "r": "/device:CPU:0", "z": "/device:MLU:0"}}, "a hand-made log")
    ### END HIDDEN TESTS

# %% [markdown]
# ## 4. 分析日志
#
# 下面用解析结果（你的 `parse_vlog`；练习没通过时用参考解析器 `workbook.references.vlog.parse_vlog`）回答 5.10 要问的问题。

# %%
from workbook.references import vlog as vlog_reference

parse = grading.use("parse_vlog", parse_vlog, vlog_reference.parse_vlog, what="parser workbook.references.vlog.parse_vlog")
parsed = parse(LOG)
grappler_lines = [m.group(1) for m in map(PREFIX.match, LOG.splitlines())
                  if m and re.match(r"^\w+: Graph size after: ", m.group(1))]
print(f"剪枝 (pruning): kept {parsed['kept']} of {parsed['total']} nodes; pruned: {parsed['pruned']}")
print("\nGrappler (first round):\n" + "\n".join(grappler_lines[:8]))
print("\n放置 (placement):", parsed["placement"])
print("执行顺序 (execution order):", parsed["executed"])
assert "d" in parsed["pruned"] and "e" in parsed["pruned"]
assert parsed["executed"].index("c") < parsed["executed"].index("mul")   # a producer runs before its consumer

# %% [markdown]
# 读日志得到的结论（与上面打印的内容对照）：
#
# 1. **剪掉了谁、为什么**：只取 `c_scaled` 时，`d`、`e`（以及 `e` 的常量 3.0，名为 `Const`）不在它的输入闭包里，被剪掉；
#    占位符 `a` 也在"剪掉"之列——它被喂了值，喂值的张量是截断点，会话不运行占位符本身，而是直接把喂的数组放进它的输出槽。
# 2. **Grappler 又做了什么**（VLOG 1/2 的行）：`constant_folding` 把 `k = two * five` 在运行前算成常量 `10.0`（节点名不变，
#    日志行 `Folded node: ...`，结果见上面打印的 `constant_folding: Graph size after: ...` 行），其输入 `two`、`five` 随之删去；`elementwise_fusion` 本可以把 `c = a * b` 与 `mul = c * k` 合成一个节点，但 VLOG 3 的行
#    说明了它为什么没做：张量只有 2 个元素，这时时间花在逐个调度算子上而不是搬数据上，融合不划算（第 09 号笔记本细讲）；
#    `Identity` 节点 `c_scaled` 被取值，必须保留，`model_pruner` 不删它；没事可做的 pass 打印 `Graph size after: ... (0)`。
# 3. **放置**：每个节点放在它请求的设备上（这里都是 CPU），日志还给出了内核注册的源码位置（逐元素算子是 `framework/cwise_table.py:…`，算子表中的那一行）——习题 5.7 找内核就从这里入手。
# 4. **执行顺序**：一个拓扑序 (topological order)，生产者总在消费者之前；计划建好后，第二次 `run` 只有 `Executing` 行，没有剪枝和放置。

# %% [markdown]
# ### 练习：自己做剪枝（3 分）
#
# 日志里的剪枝行是 Session 算出来的；现在你来算。实现 `prune_graph_def(graph_def, fetches, feeds)`：
#
# * `graph_def`：`Graph.as_graph_def()` 给出的字典，`graph_def["node"]` 是节点列表，每个节点有 `"name"`、`"op"`、
#   `"input"`；`input` 里 `"x"` 是节点 `x` 的第 0 个输出，`"x:1"` 是第 1 个输出，`"^x"` 是控制边 (control edge)；
# * `fetches`：要取的东西，张量名（`"c:0"`）或节点名（`"init"`，只运行它）；`feeds`：被喂值的张量名（`"a:0"`、`"split:1"`）；
# * 返回这次 run **需要运行**的节点名列表，按 `graph_def["node"]` 里的顺序。
#
# 规则就是第 1 节说的：从取值出发，沿数据边和控制边反向遍历；被喂值的**张量**是截断点——读它的节点读到的是喂进来的值，
# 所以产生它的节点不因这条边而被需要（但如果它的另一个输出、或一条控制边还需要它，它照样要运行）；
# 本身被喂值的取值张量什么也不需要运行。只用 Python 的字典、列表与字符串方法，不要调用 aicslib 或 `workbook` 里的函数。

# %% nbgrader={"grade": false, "grade_id": "prune_graph_def", "locked": false, "schema_version": 3, "solution": true, "task": false}
def prune_graph_def(graph_def, fetches, feeds=()):
    ### BEGIN SOLUTION
    def split(name):
        if name.startswith("^"):
            return name[1:], None
        node, sep, port = name.rpartition(":")
        return (node, int(port)) if sep and port.isdigit() else (name, 0)

    nodes = {n["name"]: n for n in graph_def["node"]}
    fed = {split(t) for t in feeds}
    needed = set()
    stack = [split(f)[0] for f in fetches if not (":" in f and split(f) in fed)]
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        for inp in nodes[name]["input"]:
            src, port = split(inp)
            if port is None or (src, port) not in fed:
                stack.append(src)
    return [n["name"] for n in graph_def["node"] if n["name"] in needed]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "prune_graph_def_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): on PROGRAM's graph and on random graphs (control edges, a two-output
# split fed on one output, fed fetches, node-name targets), against the runtime's own pruning
# (aicslib.visualize.needed_ops) in graph order; no call into aicslib or the workbook.
def _random_graph(seed):
    """A random graph of float32[4] tensors: a placeholder x, constants, a two-output split, and
    binary/unary ops on random earlier tensors, some with a control edge from an earlier op."""
    r = np.random.default_rng(seed)
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [4], name="x")
        ts = [x, aics.constant(r.standard_normal(4).astype(np.float32), name="c0")]
        ts += list(aics.split(aics.concat([x, ts[1]], 0), 2, name="split"))
        for i in range(int(r.integers(8, 14))):
            a, b = (ts[int(j)] for j in r.integers(0, len(ts), 2))
            deps = [ts[int(r.integers(0, len(ts)))].op] if r.random() < 0.3 else []
            with g.control_dependencies(deps):
                kind = int(r.integers(0, 4))
                t = (aics.add(a, b, name=f"n{i}") if kind == 0 else aics.multiply(a, b, name=f"n{i}") if kind == 1
                     else aics.identity(a, name=f"n{i}") if kind == 2 else aics.negative(a, name=f"n{i}"))
            ts.append(t)
    return g, ts


def _prune_case(graph, fetches, feeds, what):
    gd = graph.as_graph_def()
    got = grading.no_library_calls(prune_graph_def, gd, list(fetches), list(feeds), what="prune_graph_def",
                                   how="with Python's dicts, lists and string methods")
    needed = needed_ops(graph, list(fetches), feeds={graph.get_tensor_by_name(t): 0.0 for t in feeds})
    want = [n["name"] for n in gd["node"] if n["name"] in needed]
    call = f"prune_graph_def({what}, fetches={list(fetches)}, feeds={list(feeds)})"
    grading.check(isinstance(got, list), f"{call} returned {type(got).__name__}: expected a list of node names")
    extra, missing = [n for n in got if n not in needed], [n for n in want if n not in got]
    grading.check(not extra and not missing and got == want,
                  f"{call}: expected {want}, got {got}" + (f"; not needed: {extra}" if extra else "")
                  + (f"; missing: {missing}" if missing else "")
                  + ("; the right names in another order: keep graph_def's order" if not extra and not missing else "")
                  + ". Hint: walk back from the fetches along data and control (^) inputs; a fed tensor (node, port) "
                    "is a cut for the readers of that tensor only")


with grading.exercise("prune_graph_def"):
    _prog_ns = {}
    exec(PROGRAM.split("with aics.Session")[0], _prog_ns)
    _prune_case(_prog_ns["g"], ["c_scaled:0"], ["a:0"], "PROGRAM's graph")
    _g, _ts = _random_graph(0)
    _prune_case(_g, [_ts[-1].name], [], "_random_graph(0)")
    _prune_case(_g, [_ts[-1].name, _ts[-3].name], ["split:1", _ts[5].name], "_random_graph(0)")
    ### BEGIN HIDDEN TESTS
    for _seed in range(1, 25):
        _g, _ts = _random_graph(_seed)
        _r = np.random.default_rng(100 + _seed)
        _fetch = [_ts[int(i)].name for i in _r.choice(np.arange(4, len(_ts)), 2, replace=False)]
        _feed = [t for t in ("x:0", "split:0", "split:1", _ts[int(_r.integers(4, len(_ts)))].name) if _r.random() < 0.5]
        if _seed % 5 == 0:
            _fetch = [_fetch[0].split(":")[0]]            # a node name: a target
        if _seed % 7 == 0:
            _feed = _feed + [_fetch[0]] if ":" in _fetch[0] else _feed   # a fetch that is fed
        _prune_case(_g, _fetch, sorted(set(_feed)), f"_random_graph({_seed})")
    ### END HIDDEN TESTS

# %%
from workbook.references import graph_prune as _graph_prune_reference

prune_fn = grading.use("prune_graph_def", prune_graph_def, _graph_prune_reference.prune_graph_def,
                       what="pruning workbook.references.graph_prune.prune_graph_def")
_ns = {}
exec(PROGRAM.split("with aics.Session")[0], _ns)
_prog_gd = _ns["g"].as_graph_def()
kept = prune_fn(_prog_gd, ["c_scaled:0"], ["a:0"])
pruned_by_you = [n["name"] for n in _prog_gd["node"] if n["name"] not in kept]
print(f"your pruning keeps {len(kept)} of {len(_prog_gd['node'])} nodes: {kept}")
print(f"pruned: {pruned_by_you}")
print(f"the log says: keeping {parsed['kept']} of {parsed['total']}; pruned {parsed['pruned']}")
assert pruned_by_you == parsed["pruned"] and len(kept) == parsed["kept"]

# %% [markdown]
# ## 5. 交互：选择取值节点，看剪枝后的图与日志
#
# 选一个取值节点、打开或关闭 Grappler：左边是图（灰色是剪掉的节点），右边是这次 `run` 的 VLOG 日志（级别 2：剪枝、优化、放置）。

# %%
demo_ns = {}
exec(PROGRAM.split("with aics.Session")[0], demo_ns)
demo_graph = demo_ns["g"]
demo_a = demo_ns["a"]
fetch_choice = widgets.Dropdown(options=["c_scaled", "c", "d", "e", "k"], value="c_scaled", description="fetch")
grappler_on = widgets.Checkbox(value=True, description="Grappler on")
demo_out = widgets.Output()


@contextlib.contextmanager
def vlog_level(level):
    old = os.environ.get("AICS_MIN_VLOG_LEVEL")
    os.environ["AICS_MIN_VLOG_LEVEL"] = str(level)
    flags.reload()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("AICS_MIN_VLOG_LEVEL")
        else:
            os.environ["AICS_MIN_VLOG_LEVEL"] = old
        flags.reload()


def show_pruning(fetch_name, use_grappler=True, plot=True):
    fetch = demo_graph.get_tensor_by_name(fetch_name + ":0")
    config = None if use_grappler else aics.ConfigProto(graph_options=aics.GraphOptions(
        rewrite_options=aics.RewriterConfig(disable_meta_optimizer=True)))
    buf = io.StringIO()
    with vlog_level(2), contextlib.redirect_stderr(buf):
        with aics.Session(graph=demo_graph, config=config) as sess:
            value = sess.run(fetch, {demo_a: [3.0, 4.0]})
    log = buf.getvalue()
    if plot:
        fig, ax = plt.subplots(figsize=(6, 4))
        draw_graph(demo_graph, fetches=fetch, feeds={demo_a: 0.0}, ax=ax, fontsize=8)
        ax.set_title(f"fetch {fetch_name} = {value}")
        plt.show()
    lines = [re.sub(r"^\S+ \S+ I (\S+)\] ", r"[\1] ", line) for line in log.splitlines()]
    print("\n".join(lines))
    return value, log


def _on_change(_=None):
    with demo_out:
        demo_out.clear_output(wait=True)
        show_pruning(fetch_choice.value, grappler_on.value)


fetch_choice.observe(_on_change, names="value")
grappler_on.observe(_on_change, names="value")
display(widgets.HBox([fetch_choice, grappler_on]), demo_out)
_on_change()

# %%
_v, _log_on = show_pruning("c_scaled", True, plot=False)
_v_off, _log_off = show_pruning("c_scaled", False, plot=False)
assert np.array_equal(_v, _v_off)                      # the passes never change a result
assert "Folded node: {{node k}} = Mul" in _log_on and "constant_folding" not in _log_off

# %% [markdown]
# ## 6. 与 TensorFlow 的真实日志对照
#
# `data/tf_vlog/` 里有一份**真实的** TensorFlow 2.21 日志（CPU 版，在这台课程机器上录制一次；程序 `record_tf_vlog.py`
# 用 `tf.compat.v1` 建与上面 `PROGRAM` 完全相同的图、相同的节点名，`log_device_placement=True` 运行一次；
# 版本、系统、CPU、日期与命令见 `data/tf_vlog/README.md`）。日志没有编辑过，约 2,300 行——大部分是 XLA 的算子注册、
# 内存分配器记录，与本题无关；我们只取打印剪枝、Grappler、放置、执行的几个源文件的行。
#
# 先说一个录制时的发现：**今天的 TensorFlow 已经不认课本里的 `TF_CPP_MIN_VLOG_LEVEL` 了**，VLOG 级别改由
# `TF_CPP_MAX_VLOG_LEVEL` 控制（也可以用 `TF_CPP_VMODULE=executor=1,...` 按源文件设置）。这不是 2.21 才有的变化：
# TensorFlow 的 issue #54925（https://github.com/tensorflow/tensorflow/issues/54925 ，2022 年）报告在 TF 2.8 上
# `TF_CPP_MIN_VLOG_LEVEL` 就已经不再打开 VLOG。课本写于更早的 TF 1.x。
# 用课本的变量录的第二份日志里只有 `log_device_placement` 打印的 INFO 行：

# %%
TF_DIR = os.path.join(data_dir(), "tf_vlog")
with open(os.path.join(TF_DIR, "tf_vlog_level3.txt"), encoding="utf-8") as f:
    TF_LOG = f.read()
with open(os.path.join(TF_DIR, "tf_min_vlog_level3.txt"), encoding="utf-8") as f:
    TF_LOG_MIN = f.read()

# TF 2.21's prefix is absl's: severity, MMDD hh:mm:seconds, thread id, file:line.
TF_PREFIX = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ ([\w.]+):(\d+)\] (.*)$")
ABOUT = ("meta_optimizer.cc", "model_pruner.cc", "constant_folding.cc", "placer.cc", "subgraph.cc",
         "executor.cc")


def tf_messages(text, files=None):
    """(source file, message) for each prefixed line of a TF 2.21 log, only from `files` if given."""
    out = []
    for line in text.splitlines():
        m = TF_PREFIX.match(line)
        if m and (files is None or m.group(2) in files):
            out.append((m.group(2), m.group(4)))
    return out


def files_of(text):
    return sorted({f for f, _ in tf_messages(text)})


print(f"TF_CPP_MAX_VLOG_LEVEL=3: {len(TF_LOG.splitlines())} lines from {len(files_of(TF_LOG))} source files")
print(f"TF_CPP_MIN_VLOG_LEVEL=3: {len(TF_LOG_MIN.splitlines())} lines from {files_of(TF_LOG_MIN)}")
assert "executor.cc" in files_of(TF_LOG) and "executor.cc" not in files_of(TF_LOG_MIN)
print()
for file, msg in tf_messages(TF_LOG, ABOUT):
    if "tfg_optimizer" in msg or "is not trivial" in msg or msg.startswith("Replace function library") \
            or not msg.strip():
        continue                                         # MLIR pass names, per-node notes, bookkeeping
    print(f"{file:22s}] {msg[:150]}{'...' if len(msg) > 150 else ''}")

# %% [markdown]
# 把两份日志都变成结构化数据——每个节点的结局（剪掉、折叠、喂值、运行）、放置的设备、内核执行顺序——再逐项对比。
# TF 日志里各项从这些行得到：`placer.cc` 的 `NAME: (OP): DEVICE`（放置）、`model_pruner.cc` 的 `NAME is not trivial.`
# （剪枝后留下的节点）、`constant_folding.cc` 的 `Folded node: {{node NAME}} = ...`（折叠）、`executor.cc` 的
# `Process node: ID step N {{node NAME}} = ...`（执行）。

# %%
def parse_tf_log(text):
    msgs = tf_messages(text)
    placement, kept_by_pruner, folded, executed, passes = {}, [], [], [], []
    for file, msg in msgs:
        if file == "placer.cc" and (m := re.match(r"^(\S+): \((\w+)\): (\S+)$", msg)):
            placement[m.group(1)] = m.group(3)
        elif file == "model_pruner.cc" and (m := re.match(r"^(\S+) is not trivial\.$", msg)):
            kept_by_pruner.append(m.group(1))
        elif file == "constant_folding.cc" and (m := re.match(r"^Folded node: \{\{node (\S+)\}\}", msg)):
            folded.append(m.group(1))
        elif file == "executor.cc" and (m := re.match(r"^Process node: \d+ step \d+ \{\{node (\S+)\}\}", msg)):
            executed.append(m.group(1))
        elif file == "meta_optimizer.cc" and (m := re.match(r"^(\w+): Graph size after: (\d+) nodes \((-?\d+)\)", msg)):
            passes.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return {"placement": placement, "kept_by_pruner": kept_by_pruner, "folded": folded,
            "executed": executed, "passes": passes}


def parse_aicslib_log(text):
    r = parse(text)
    msgs = [m.group(1) for m in map(PREFIX.match, text.splitlines()) if m]
    r["folded"] = [m.group(1) for m in (re.match(r"^Folded node: \{\{node (\S+)\}\}", s) for s in msgs) if m]
    r["removed"] = [m.group(1) for m in (re.match(r"^constant_folding: removing unused constant '(\S+)'", s)
                                         for s in msgs) if m]
    r["passes"] = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in
                   (re.match(r"^(\w+): Graph size after: (\d+) nodes \((-?\d+)\)", s) for s in msgs) if m]
    return r


tf = parse_tf_log(TF_LOG)
ours = parse_aicslib_log(LOG)
nodes = list(tf["placement"])                    # TF places every node of the graph, in graph order


def tf_fate(name):
    if name == "a":
        return "fed: becomes _Arg node _arg_a_0_0"
    if name not in tf["kept_by_pruner"] and name != "c_scaled":
        return "pruned by grappler model_pruner"
    if name in tf["executed"]:
        return "folded, runs as a Const" if name in tf["folded"] else "runs"
    return "folded away by constant_folding"


def our_fate(name):
    if name == "a":
        return "fed: its array goes into a slot"
    if name in ours["pruned"]:
        return "pruned by the Session"
    if name in ours["removed"]:
        return "folded away by constant_folding"
    if name in ours["executed"]:
        return "folded, runs as a Const" if name in ours["folded"] else "runs"
    return "?"


name_of = {"e/y": "Const"}                       # the constant 3.0 of e = d * 3: TF names it e/y, aicslib Const
print(f"{'node':10s} {'TensorFlow 2.21':38s} {'aicslib':34s} TF device / aicslib device")
for n in nodes:
    ours_n = name_of.get(n, n)
    print(f"{n:10s} {tf_fate(n):38s} {our_fate(ours_n):34s} {tf['placement'][n]} / "
          f"{ours['placement'].get(ours_n, '(not placed)')}")
print("\nkernel order, TensorFlow:", tf["executed"])
print("kernel order, aicslib:   ", ours["executed"])
assert {"d", "e", "e/y"} <= set(nodes) - set(tf["kept_by_pruner"])     # TF prunes d, e and e/y too
assert {"d", "e", "Const"} <= set(ours["pruned"])
assert tf["executed"][0] == "_SOURCE" and tf["executed"][-1].startswith("_retval_c_scaled")

# %% [markdown]
# Grappler 每个 pass 的结果行两边格式相同（`名字: Graph size after: N nodes (Δ), M edges (Δ), time = t ms.`），
# 把时间去掉后可以直接做文本差分 (diff)。两边都跑两轮（TF 的 `meta_optimizer_iterations` 默认两轮）；下面只比第一轮：

# %%
import difflib


def first_round(passes):
    seen, out = set(), []
    for name, n, delta in passes:
        if name in seen:
            break
        seen.add(name)
        out.append(f"{name}: {n} nodes ({delta})")
    return out


diff = list(difflib.unified_diff(first_round(tf["passes"]), first_round(ours["passes"]),
                                 "TensorFlow 2.21", "aicslib", lineterm="", n=20))
print("\n".join(diff))
assert any(line.startswith("-model_pruner") for line in diff) and "+elementwise_fusion: " in "\n".join(diff)

# %% [markdown]
# 同一个事件，两边的行长什么样——aicslib 对这些事件用的是 TF 的原话（去掉时间戳前缀；`device` 名字不同，见下文）：

# %%
def first_line(log_msgs, pattern):
    return next((m for m in log_msgs if re.search(pattern, m)), "(none)")


tf_msgs = [m for _, m in tf_messages(TF_LOG)]
our_msgs = [m.group(1) for m in map(PREFIX.match, LOG.splitlines()) if m]
EVENTS = [("a grappler pass", r"^constant_folding: Graph size after"),
          ("a folded node", r"^Folded node: \{\{node k\}\}"),
          ("placement (VLOG)", r"^c\(Mul\) placed on: "),
          ("a kernel runs", r"^Process node: \d+ step \d+ \{\{node c_scaled\}\}")]
for what, pattern in EVENTS:
    print(f"{what}:\n  TF      {first_line(tf_msgs, pattern)[:170]}\n  aicslib {first_line(our_msgs, pattern)[:170]}")
    assert first_line(tf_msgs, pattern) != "(none)" and first_line(our_msgs, pattern) != "(none)", what

# %% [markdown]
# 下面的差异里引用的数字，都从两份日志里数出来：

# %%
def kernels_of_type(log_msgs, op_type):
    """Nodes of type op_type that an executor ran ('Process node: ... {{node NAME}} = OP[...]')."""
    return [m.group(1) for m in (re.match(r"^Process node: \d+ step \d+ \{\{node (\S+)\}\} = (\w+)", s)
                                 for s in log_msgs) if m and m.group(2) == op_type]


num_optimizers = {who: int(re.search(r"num_optimizers=(\d+)", first_line(msgs, r"num_optimizers=")).group(1))
                  for who, msgs in [("TensorFlow 2.21", tf_msgs), ("aicslib", our_msgs)]}
print(f"nodes placed: TensorFlow {len(tf['placement'])} (the whole graph), aicslib {len(ours['placement'])} "
      f"(what the Session kept)")
print("TF's model_pruner:", first_line(tf_msgs, r"^model_pruner: Graph size after")[:60])
print("optimizers ('Optimize GrapplerItem ... num_optimizers'):", num_optimizers)
print("folded: TensorFlow", tf["folded"], "| aicslib", ours["folded"])
print("Mul kernels run: TensorFlow", kernels_of_type(tf_msgs, "Mul"), "| aicslib", kernels_of_type(our_msgs, "Mul"))
assert len(tf["placement"]) == len(nodes) == 11 and num_optimizers["TensorFlow 2.21"] == 13
assert len(kernels_of_type(tf_msgs, "Mul")) == 1 and len(kernels_of_type(our_msgs, "Mul")) == 2

# %% [markdown]
# **差异与原因**（对照上面打印的结果，逐条都能在日志里找到）：
#
# 1. **剪枝发生在哪里**。TF 2.x 先把**整张图**（上面数出的 11 个节点，包括用不到的 `d`、`e`）交给放置器 (placer)，每个节点都有一行放置；
#    然后由 Grappler 的 `model_pruner` 按取值节点剪枝：`Graph size after: 8 nodes (-3)`，剪掉 `d`、`e`、`e/y`。
#    aicslib 的 Session 先剪枝（`Pruned (not needed by the fetches): ...`），再交给 Grappler，所以它的 `model_pruner`
#    没事可做（`(0)`），放置也只放留下的节点。结论相同：取值用不到的节点不运行。也因为 TF 先放置、后优化，
#    它的 Grappler 行里节点带着 `_device="..."`；aicslib 先优化、后放置，Grappler 行里还没有设备。
# 2. **喂值与取值**。TF 把被喂的 `a` 换成一个 `_Arg` 节点（`_arg_a_0_0`），把取值换成 `_Retval` 节点，执行器还有 `_SOURCE` 节点；
#    aicslib 直接把数组放进槽位，没有这些节点。
# 3. **常量折叠做得更多**。两边都把 `k = two * five` 折叠成常量 10。TF 的 `constant_folding` 还做了"常量下推"（`ConstantPushDown`）：
#    把 `(a * b) * k` 改写成 `a * (b * k)`，于是 `b * k = [10, 20]` 也被折叠（日志里 `Folded node: {{node c}} = Mul(k, b)`，
#    TF 复用了名字 `c`），最后只剩**一个** `Mul`（`mul = a * c`）；aicslib 没有实现这条改写，运行两个 `Mul`。
#    TF 生成的常量先叫 `ConstantFolding/k-folded`；aicslib 让常量直接沿用被折叠节点的名字。
# 4. **pass 不同**。TF 2.21 跑 13 个优化器（上面打印的 `num_optimizers`），其中有 aicslib 没有的 `tfg_optimizer`（MLIR 上的图优化）、`implementation_selector`、
#    `loop_optimizer`、`memory_optimizer`；aicslib 有 TF 没有的 `elementwise_fusion`（TF 把这件事交给 XLA）。
# 5. **名字**。`e = d * 3` 里的常量 3，TF 叫 `e/y`（在 `e` 的名字作用域里，按输入名 `y` 命名），aicslib 叫 `Const`。
# 6. **设备名**。TF 写完整名字 `/job:localhost/replica:0/task:0/device:CPU:0`（分布式运行时的作业、副本、任务），aicslib 只写 `/device:CPU:0`。
# 7. **级别与前缀**。TF 的 `placed on` 与 `Process node` 是 VLOG(1)、`Synchronous kernel done` 是 VLOG(2)；aicslib 沿用课本的分级
#    （2 级放置、3 级内核），并在 `Process node` 后多打一行带形状和耗时的 `Executing kernel`。
#    TF 2.21 的前缀是 absl 的 `I1123 16:23:45.123456  1234 executor.cc:879]`（这份日志里月日时分写成了 `0000 00:00`，
#    秒是自 1970 年起的秒数），aicslib 打印的是 TF 1.x/早期 2.x 的 `2026-11-23 16:23:45.123456: I 文件:行号]`。
# 8. **执行顺序**。两边都是拓扑序；TF 的执行器是数据流调度（一个节点的输入都就绪就进入就绪队列），
#    aicslib 按深度优先建好的固定顺序执行。

# %% [markdown]
# ## 小结
#
# * `AICS_MIN_VLOG_LEVEL`（或课本的 `TF_CPP_MIN_VLOG_LEVEL`；今天的 TF 用 `TF_CPP_MAX_VLOG_LEVEL`）打开运行时的"内心独白"：1 级剪枝与优化结果，2 级每次改写与放置，3 级每个内核的执行。
# * 剪枝从取值节点反向遍历，喂值张量截断遍历；Grappler 随后改写剪枝后的图（折叠常量、删除转发节点、融合算子），且从不改变结果。
# * 计划在第一次 `run` 时建好并缓存，之后的 `run` 只执行——这就是静态图 (static graph) 可以"先优化、后执行"的原因。
