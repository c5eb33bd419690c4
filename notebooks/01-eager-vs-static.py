# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 动态图与静态图：立即执行 vs 计算图 + 会话
#
# **前置章节 (prerequisites)**：[00 framework-tour](00-framework-tour.ipynb)
#
# **对应习题**
#
# * **5.1** 调研 Eager API 的使用，用 Eager API 实现两个数的加法和矩阵乘法；
# * **5.2** 常见编程框架的执行模式分为静态图模式和动态图模式，说明这两种执行模式各有什么优缺点。
#
# **学习目标**
#
# 1. 用立即执行 (eager execution，动态图) 模式写加法和矩阵乘法，再用静态图 (static graph) + 会话写一遍，结果逐位相同；
# 2. **测量**而不是背诵两种模式的差别：每步的调度开销、“构建一次、运行多次 (build once, run many)”的收益、图的构建代价；
# 3. 把静态图保存到磁盘，在一个全新的 Python 进程里加载并运行（部署 (deployment) 的基础）；
# 4. 比较两种模式下的调试 (debugging)：`print`、运行时报错、`pdb`；
# 5. 用 `aics.function`（对应 `tf.function`）把动态图代码追踪 (trace) 成静态图，理解追踪次数与重新追踪 (retracing)；
# 6. 练习（自动评分，2 分）：写一个只追踪一次的 `aics.function`（不随批大小和 Python 数字重新追踪）；
# 7. 练习（自动评分，2 分）：把一段 eager 代码改写成“构建一次、运行多次”的静态图；
# 8. 最后用本笔记本测得的数字回答习题 5.2。
#
# 静态图内部的故事——图里的控制流与 AutoGraph、会话的规划器和执行器（一个实验）、TensorBoard——在下一章
# [02 graph-execution](02-graph-execution.ipynb)。
#
# **运行时间**：见下面第一个代码单元格的输出（`make test-full` 实测；第 3 节的计时扫描最长，有进度条）。
# 练习之后的单元格不依赖你的答案，没做完也能一直运行到底。

# %%
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib.visualize import draw_graph
from workbook import grading, run_times

run_times.show("eager-vs-static")
np.random.seed(0)
aics.random.set_seed(0)
FAST = flags.FAST  # AICS_FAST=1 (CI): fewer sizes and repeats, same code path
print("eager by default:", aics.executing_eagerly(), "| FAST:", FAST)

# %% [markdown]
# ## 1. 习题 5.1：用 Eager API 做加法和矩阵乘法
#
# 立即执行模式下，每调用一个操作，框架就**马上**找到它的内核 (kernel) 并计算，返回一个带值的 `EagerTensor`；
# `.numpy()` 取出 NumPy 数组。不需要图，也不需要会话——写起来和 NumPy 一样。`aicslib` 和 TensorFlow 2.x
# 一样默认开启立即执行。

# %%
# Addition of two numbers
a = aics.constant(2.0)
b = aics.constant(3.0)
c = aics.add(a, b)          # computed right now
print("a + b =", c, "->", c.numpy())
print("operator form:", (a + b).numpy(), "| mixed with a Python number:", (a + 1.5).numpy())

# Matrix multiplication
m1 = aics.constant([[1., 2.], [3., 4.]])
m2 = aics.constant([[5., 6.], [7., 8.]])
p = aics.matmul(m1, m2)
print("matmul(m1, m2) =\n", p.numpy())
print("m1 @ m2 equals:", np.array_equal((m1 @ m2).numpy(), p.numpy()))

eager_sum, eager_product = c.numpy(), p.numpy()
assert aics.executing_eagerly()
assert eager_sum == 5.0
np.testing.assert_array_equal(eager_product, np.array([[19., 22.], [43., 50.]], dtype=np.float32))

# %% [markdown]
# ## 2. 同样的计算，用静态图 + 会话
#
# 静态图模式分两步：先**描述**计算（构建图），再在会话里**执行**。构建时得到的是符号张量 (symbolic tensor)，
# 只有名字、类型和形状，没有值：

# %%
graph = aics.Graph()
with graph.as_default():
    assert not aics.executing_eagerly()   # inside the block, ops only add nodes
    ga = aics.constant(2.0, name="a")
    gb = aics.constant(3.0, name="b")
    gc = aics.add(ga, gb, name="c")
    gm1 = aics.constant([[1., 2.], [3., 4.]], name="m1")
    gm2 = aics.constant([[5., 6.], [7., 8.]], name="m2")
    gp = aics.matmul(gm1, gm2, name="p")
print("at build time:", gc, gp, sep="\n  ")

with aics.Session(graph=graph) as sess:
    graph_sum, graph_product = sess.run([gc, gp])
print("after Session.run:", graph_sum, graph_product.tolist())

assert graph_sum == eager_sum
np.testing.assert_array_equal(graph_product, eager_product)   # bit-identical: same kernels

# %% [markdown]
# 两种模式调用的是**同一个**内核注册表 (kernel registry) 中的同一批 NumPy 内核，所以结果逐位相同；
# 差别只在“什么时候、以什么粒度”调用它们。这正是下面要测量的。

# %% [markdown]
# ## 3. 构建一次、运行多次：测量
#
# 我们用一个小“网络”来计时：一次矩阵乘法，再接 `DEPTH` 层 $c \leftarrow \tanh(c) \cdot 0.5 + b$，最后求均值。
# **同一个 Python 函数** `model` 在三种方式下运行：
#
# | 方式 | 每一步做什么 |
# |---|---|
# | eager | 每个操作都经过 Python 调度：查内核、检查类型、包装结果 |
# | graph（`Session`，计划已缓存） | 图只构建一次；第一次 `run` 剪枝、放置、生成执行计划并缓存，之后每步只是一个调用内核的循环 |
# | `aics.function` | 第一次调用时追踪成图（见第 6 节），之后每次调用执行这张图 |
#
# `per_call` 取若干轮中最快的一轮的平均值，以减少机器上其他进程的干扰。图的一次性代价（构建 + 第一次运行）
# 单独记为 `build_s`，函数的追踪代价记为 `trace_s`。

# %%
DEPTH = 8

def model(a, b):
    """matmul, then DEPTH layers of tanh(c) * 0.5 + b, then the mean: 3 * DEPTH + 2 ops."""
    c = aics.matmul(a, b)
    for _ in range(DEPTH):
        c = aics.tanh(c) * 0.5 + b
    return aics.reduce_mean(c)

def per_call(fn, repeats, rounds=3):
    """Seconds per call of fn(): the fastest of `rounds` rounds of `repeats` calls."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best

def make_inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    return A, B

def measure(n, repeats):
    """Times one step of `model` on n x n inputs in the three modes; checks they agree."""
    A, B = make_inputs(n)
    # eager
    a, b = aics.constant(A), aics.constant(B)
    eager_value = model(a, b).numpy()
    eager_s = per_call(lambda: model(a, b), repeats)
    # graph: build once (timed together with the first run, which builds the plan) ...
    t0 = time.perf_counter()
    g = aics.Graph()
    with g.as_default():
        pa = aics.placeholder(aics.float32, shape=(n, n), name="a")
        pb = aics.placeholder(aics.float32, shape=(n, n), name="b")
        out = model(pa, pb)
    sess = aics.Session(graph=g)
    feed = {pa: A, pb: B}
    graph_value = sess.run(out, feed_dict=feed)
    build_s = time.perf_counter() - t0
    # ... run many: the cached plan is reused
    graph_s = per_call(lambda: sess.run(out, feed_dict=feed), repeats)
    sess.close()
    # aics.function: the first call traces
    f = aics.function(model)
    t0 = time.perf_counter()
    function_value = f(a, b).numpy()
    trace_s = time.perf_counter() - t0
    function_s = per_call(lambda: f(a, b), repeats)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(graph_value, eager_value, rtol=1e-5)
    np.testing.assert_allclose(function_value, eager_value, rtol=1e-5)
    n_ops = len(g.get_operations())
    return dict(n=n, repeats=repeats, ops=n_ops, eager_s=eager_s, graph_s=graph_s,
                function_s=function_s, build_s=build_s, trace_s=trace_s)

r = measure(8, 5)
print({k: (f"{v * 1e6:.0f} us" if k.endswith("_s") else v) for k, v in r.items()})

# %% [markdown]
# ### 动手：调矩阵大小和重复次数
#
# 拖动滑块，单元格会**真的**重新构建图、重新追踪函数并计时。左图是每步耗时；右图是累计耗时：
# eager 为 $k \cdot t_\text{eager}$，graph 为 $t_\text{build} + k \cdot t_\text{graph}$。
# 两条线的交点就是“图的一次性代价被摊薄”的步数。注意矩阵变大后三者趋于一致：此时时间花在内核本身，
# 调度开销不再重要。

# %%
SIZE_CHOICES = [4, 16, 64, 128, 256]
size_slider = widgets.SelectionSlider(options=SIZE_CHOICES, value=16, description="n", continuous_update=False)
repeat_slider = widgets.IntSlider(value=10 if FAST else 100, min=5, max=500, step=5, description="repeats",
                              continuous_update=False)
setting_out = widgets.Output()           # what the sliders set: the same for the same values
timing_out = widgets.Output()
timing_out.add_class("aics-timing")       # what they measure: new numbers on every run

def show_timing(n, repeats):
    r = measure(n, repeats)
    with setting_out:
        setting_out.clear_output(wait=True)
        print(f"n = {n}: a {n}x{n} matmul, tanh, scale and reduce ({r['ops']} graph ops), "
              f"each mode timed as best of 3 x {repeats} steps")
    modes = ["eager", "graph", "function"]
    per_step_us = [r[m + "_s"] * 1e6 for m in modes]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.5))
    ax1.bar(modes, per_step_us, color=["#C44E52", "#4C72B0", "#55A868"])
    ax1.set_ylabel("µs per step")
    ax1.set_title(f"n = {n}, {r['ops']} graph ops, best of 3 x {repeats}")
    gain = r["eager_s"] - r["graph_s"]
    k_max = int(max(4 * repeats, 1.5 * r["build_s"] / gain if gain > 0 else 0))
    k = np.arange(0, k_max + 1)
    ax2.plot(k, k * r["eager_s"] * 1e3, color="#C44E52", label="eager: k * t_eager")
    ax2.plot(k, (r["build_s"] + k * r["graph_s"]) * 1e3, color="#4C72B0", label="graph: t_build + k * t_graph")
    ax2.set_xlabel("steps k")
    ax2.set_ylabel("total ms")
    ax2.legend()
    plt.show()
    if gain > 0:
        print(f"graph breaks even after {r['build_s'] / gain:.0f} steps (build + first run {r['build_s'] * 1e3:.1f} ms)")
    else:
        print("at this size the graph step is not faster than the eager step: the kernels dominate")
    return r

def _on_timing_change(change=None):
    """Redraws inside the Output widget: clear_output(wait=True) replaces the old plot, never stacks."""
    with timing_out:
        timing_out.clear_output(wait=True)
        return show_timing(size_slider.value, repeat_slider.value)

size_slider.observe(_on_timing_change, names="value")
repeat_slider.observe(_on_timing_change, names="value")
display(widgets.VBox([widgets.HBox([size_slider, repeat_slider]), setting_out, timing_out]))

# The first plot is drawn inside the same Output widget, so moving a slider replaces it.
r16 = _on_timing_change()
assert r16["n"] == 16 and r16["eager_s"] > 0 and r16["graph_s"] > 0

# %% [markdown]
# ### 扫描矩阵大小
#
# 下面对一组矩阵大小各测一次，结果存在 `results` 里，后面回答 5.2 时直接引用。

# %%
SIZES = [4, 16, 64, 128] if FAST else [4, 16, 32, 64, 128, 256, 512]
REPEATS = 10 if FAST else 100

results = []
for n in tqdm(SIZES, desc="sizes"):
    results.append(measure(n, REPEATS if n <= 128 else max(5, REPEATS // 10)))

print(f"{'n':>5} {'eager us':>10} {'graph us':>10} {'func us':>10} {'eager/graph':>12} {'build ms':>9} {'trace ms':>9}")
for r in results:
    print(f"{r['n']:>5} {r['eager_s'] * 1e6:>10.1f} {r['graph_s'] * 1e6:>10.1f} {r['function_s'] * 1e6:>10.1f}"
          f" {r['eager_s'] / r['graph_s']:>12.2f} {r['build_s'] * 1e3:>9.2f} {r['trace_s'] * 1e3:>9.2f}")

fig, ax = plt.subplots(figsize=(6.5, 4))
for key, label, color in [("eager_s", "eager", "#C44E52"), ("graph_s", "graph (cached plan)", "#4C72B0"),
                          ("function_s", "aics.function", "#55A868")]:
    ax.plot(SIZES, [r[key] * 1e6 for r in results], "o-", label=label, color=color)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("matrix size n")
ax.set_ylabel("µs per step")
ax.set_title(f"model: {results[0]['ops']} ops per step")
ax.legend()
plt.show()

assert [r["n"] for r in results] == SIZES


# %% [markdown]
# 读图的方法：小矩阵时每个内核只要几微秒，**每个操作的调度开销**占了大头，所以 eager（每步都走一遍 Python
# 调度）明显慢于 graph（调度在构建执行计划时一次做完）。`aics.function` 每次调用比直接 `Session.run`
# 多一点开销（包装输入输出），但同样省掉了 eager 的逐操作调度。矩阵变大后，调度开销相对于矩阵乘法和 `tanh`
# 本身可以忽略，执行模式不再是决定因素——这时起作用的是内核和**内存**。
#
# ### 大矩阵时：中间结果何时释放
#
# 大矩阵时 `eager/graph` 接近 1，这说明两种模式不仅调用同样的内核，中间结果的**生命周期**也一样：
# eager 代码中 `c = ...` 每次重新绑定，旧数组马上被释放；`aicslib` 的会话在生成执行计划时就算出每个中间结果的
# **最后一个消费者**（规划器 (planner) `aicslib/framework/planner.py` 中的 `last_uses`），执行器
# （`aicslib/framework/executor.py` 的 `run_sequential`）在这个节点一执行完就释放它——
# 和 TensorFlow 的执行器一样（下一章 [02 graph-execution](02-graph-execution.ipynb) 的实验里你自己写这两部分）。所以一步里同时活着的只有少数几个矩阵，NumPy 下一次分配拿到的往往是刚释放、
# 还在缓存里的内存。静态图让这种内存规划变得容易：执行之前就看得到整张图，知道谁是最后一个消费者。
#
# 如果不做这种释放会怎样？下面用 eager 模拟“所有中间结果都保留到一步结束”，与正常的 eager 和会话放在一起计时：
# %%
def model_keep_alive(a, b):
    """Same maths as `model`, but every intermediate stays alive until the end (as in the Session's plan)."""
    kept = [aics.matmul(a, b)]
    for _ in range(DEPTH):
        kept.append(aics.tanh(kept[-1]))
        kept.append(kept[-1] * 0.5)
        kept.append(kept[-1] + b)
    return aics.reduce_mean(kept[-1])

n_big = SIZES[-1]
A_big, B_big = make_inputs(n_big)
a_big, b_big = aics.constant(A_big), aics.constant(B_big)
g_big = aics.Graph()
with g_big.as_default():
    pa_big = aics.placeholder(aics.float32, shape=(n_big, n_big))
    pb_big = aics.placeholder(aics.float32, shape=(n_big, n_big))
    out_big = model(pa_big, pb_big)
sess_big = aics.Session(graph=g_big)
feed_big = {pa_big: A_big, pb_big: B_big}
big_repeats = max(3, REPEATS // 10)
# The three variants take turns, so a busy machine slows them alike; keep each one's best round.
best = {"eager, intermediates freed at once": [], "eager, all intermediates kept": [], "graph (Session)": []}
for _ in range(3):
    best["eager, intermediates freed at once"].append(per_call(lambda: model(a_big, b_big), big_repeats, rounds=1))
    best["eager, all intermediates kept"].append(per_call(lambda: model_keep_alive(a_big, b_big), big_repeats, rounds=1))
    best["graph (Session)"].append(per_call(lambda: sess_big.run(out_big, feed_dict=feed_big), big_repeats, rounds=1))
keep_alive = {k: min(v) for k, v in best.items()}
sess_big.close()
live_mb = (3 * DEPTH + 1) * n_big * n_big * 4 / 2**20
print(f"n = {n_big}: {3 * DEPTH + 1} intermediates of {n_big}x{n_big} float32 = {live_mb:.1f} MiB alive at the end of a step")
for k, v in keep_alive.items():
    print(f"  {k:<36s} {v * 1e3:8.2f} ms per step")
np.testing.assert_allclose(model_keep_alive(a_big, b_big).numpy(), model(a_big, b_big).numpy(), rtol=1e-6)
kept_vs_freed = keep_alive["eager, all intermediates kept"] / keep_alive["eager, intermediates freed at once"]
graph_vs_freed = keep_alive["graph (Session)"] / keep_alive["eager, intermediates freed at once"]
print(f"keeping every intermediate: {kept_vs_freed:.2f}x the time of freeing at once; "
      f"Session / eager (both free at once): {graph_vs_freed:.2f}x")

# %% [markdown]
# 读数：会话的每步耗时与“用完即释放”的 eager 基本相同（比值接近 1，差别在调度开销和计时噪声的量级），
# 而“全部保留”的那一行明显更慢——保留的矩阵越多、越大，分配的新内存就越多，缓存命中越少，每一页新内存还要缺页
# (page fault)。所以会话在大矩阵时不吃亏，靠的正是按最后一个消费者释放中间结果；矩阵越大，内存管理与内核本身
# 就越决定速度，执行模式就越不重要。

# %% [markdown]
# ## 4. 把图存到磁盘，在另一个进程里运行
#
# 静态图是**数据**：`graph.as_graph_def()` 给出一个 GraphDef（节点列表，JSON 格式，不含 pickle），
# `aics.io.write_graph` 把它写到文件。另一个进程只要有 `aicslib`，不需要构建图的 Python 源码，
# 就能用 `aics.io.read_graph` + `aics.import_graph_def` 恢复并运行它——这就是静态图便于部署的原因。

# %%
save_graph = aics.Graph()
with save_graph.as_default():
    x_in = aics.placeholder(aics.float32, shape=(None, 2), name="x")
    W = aics.constant([[1.0, -1.0], [0.5, 2.0]], name="W")
    bias = aics.constant([0.1, -0.2], name="bias")
    y_out = aics.tanh(aics.matmul(x_in, W) + bias, name="y")

x_test = np.array([[1.0, 2.0], [-0.5, 0.25]], dtype=np.float32)
with aics.Session(graph=save_graph) as sess:
    expected = sess.run(y_out, feed_dict={x_in: x_test})

tmpdir = tempfile.TemporaryDirectory()
path = aics.io.write_graph(save_graph, tmpdir.name, "tiny_model.json")
print(path, os.path.getsize(path), "bytes; first node:")
print(json.dumps(aics.io.read_graph(path)["node"][0]))

# %%
# A fresh interpreter: it never sees the Python code that built the graph.
CHILD = '''
import json, sys
import numpy as np
import aicslib as aics
path, feed_name, fetch_name, value = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
g = aics.Graph()
with g.as_default():
    aics.import_graph_def(aics.io.read_graph(path), name="")
with aics.Session(graph=g) as sess:
    out = sess.run(fetch_name, feed_dict={feed_name: np.array(value, dtype=np.float32)})
print(json.dumps({"ops": len(g.get_operations()), "result": out.tolist()}))
'''
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))

def run_in_fresh_process(path, feed_name, fetch_name, value):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", CHILD, path, feed_name, fetch_name, json.dumps(value)],
                          capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])

child = run_in_fresh_process(path, "x:0", "y:0", x_test.tolist())
print("child process:", child)
print("this process :", expected.tolist())
np.testing.assert_allclose(np.array(child["result"], dtype=np.float32), expected, rtol=1e-6)
assert child["ops"] == len(save_graph.get_operations())


# %% [markdown]
# 立即执行的代码没有“图”可存：它就是 Python 程序本身，要在别处运行就得带上全部源码和 Python 环境。
# 第 6 节会看到，`aics.function` 追踪得到的图同样可以这样保存。

# %% [markdown]
# ## 5. 调试：`print`、报错位置与 `pdb`
#
# ### 调试（一）立即执行：中间结果就是普通的值
#
# 在 eager 代码里，任何中间结果都能直接 `print`、转成 NumPy、用 Python 的 `if` 判断：

# %%
def eager_step(x):
    h = aics.matmul(x, aics.constant([[1.0], [1.0]]))
    print("  inside eager_step, h =", h.numpy().ravel())   # a real value
    if aics.reduce_sum(h) > 0:                              # Python control flow on a value
        return h * 2.0
    return -h

out = eager_step(aics.constant([[1.0, 2.0]]))
assert out.numpy().item() == 6.0

# %% [markdown]
# ### 调试（二）静态图：构建时只有符号
#
# 同样的 `print` 写在构建图的代码里，只在**构建时**执行一次，打印的是符号张量；用符号张量做 Python 的 `if`
# 会直接报错（它还没有值）。要在**运行时**打印，需要把打印本身做成图中的一个节点：`aics.print`，并用控制依赖
# 保证它在需要的值之前执行。

# %%
debug_graph = aics.Graph()
with debug_graph.as_default():
    dx = aics.placeholder(aics.float32, shape=(1, 2), name="x")
    h = aics.matmul(dx, aics.constant([[1.0], [1.0]]), name="h")
    print("  build time: h =", h)                       # symbolic: name, shape, dtype only
    try:
        if aics.reduce_sum(h) > 0:
            pass
    except TypeError as e:
        print("  TypeError:", e)
    print_op = aics.print("  run time (aics.print): h =", h)
    with aics.control_dependencies([print_op]):
        doubled = aics.multiply(h, 2.0, name="doubled")

with aics.Session(graph=debug_graph) as sess:
    for v in ([[1.0, 2.0]], [[3.0, 4.0]]):
        print("  result:", sess.run(doubled, feed_dict={dx: v}).ravel())

assert print_op.type == "PrintV2" and doubled.op.control_inputs == [print_op]

# %% [markdown]
# ### 调试（三）报错发生在哪里
#
# eager 模式下，出错的就是当前这一行，Python 栈直接指向它。静态图中，形状在构建时未知的错误要到 `run` 时才暴露，
# 此时 Python 栈停在 `sess.run`，离写错的那一行很远。报错信息会写出出错的节点（`[[node uv ...]]`），
# 异常的 `op` 属性就是那个节点，而节点的 `traceback` 属性（`00` 号笔记本第 2 节）记录了**构建**它的代码行。

# %%
# eager: the error is raised by the offending line itself
try:
    aics.matmul(aics.ones([2, 3]), aics.ones([2, 3]))
    raise AssertionError("incompatible shapes must fail")
except aics.errors.InvalidArgumentError as e:
    print("eager :", str(e).splitlines()[0])

# graph: shapes unknown at build time, so the error appears only at run time
err_graph = aics.Graph()
with err_graph.as_default():
    u = aics.placeholder(aics.float32, shape=(None, None), name="u")
    v = aics.placeholder(aics.float32, shape=(None, None), name="v")
    uv = aics.matmul(u, v, name="uv")                    # <- the line the message points to
with aics.Session(graph=err_graph) as sess:
    try:
        sess.run(uv, feed_dict={u: np.ones((2, 3)), v: np.ones((2, 3))})
        raise AssertionError("incompatible shapes must fail")
    except aics.errors.InvalidArgumentError as e:
        message = str(e)
        print("graph :", message)
        built_at = e.op.traceback[-1]
        print(f"        node '{e.op.name}' was built at line {built_at.lineno}: {built_at.line}")
        failed_op = e.op
assert failed_op is uv.op and "node uv" in message


# %% [markdown]
# ### 调试（四）`pdb`
#
# （下面的代码只作展示，不在本笔记本中运行：`pdb` 需要交互输入。）在 eager 代码里可以直接设断点，
# 在断点处看到的就是真实的值：
#
# ```python
# def eager_step(x):
#     h = aics.matmul(x, w)
#     breakpoint()          # (Pdb) p h.numpy()   -> array([[3.]], dtype=float32)
#     return aics.tanh(h)
# ```
#
# 在构建静态图的代码里设断点，只能看到符号张量 `<aics.Tensor 'MatMul:0' shape=(1, 1) dtype=float32>`。
# 想看运行时的值，只能在会话里取出中间张量（`sess.run(h, feed_dict=...)`），或者进入框架内部：
#
# ```python
# import pdb
# pdb.run("sess.run(uv, feed_dict={u: U, v: V})")
# # (Pdb) b aicslib/framework/executor.py:<the line of run_sequential that calls step(call, gather(vals), op)>
# # (Pdb) c   ... now each stop is one kernel call; `p op.name` tells which node
# ```
#
# 在 Jupyter 中，出错后运行 `%debug` 可以进入事后调试 (post-mortem)。eager 模式下它停在你自己的代码里；
# 静态图模式下它停在 `Session.run` 的执行循环里，离你写的那一行很远。

# %% [markdown]
# ## 6. `aics.function`：两种模式之间的桥
#
# `@aics.function` 装饰的 Python 函数，第一次以某种输入签名（每个张量参数的 dtype 和形状、每个 Python 参数的值）
# 调用时会被**追踪**：函数在一张新图里运行一次，参数换成占位符，各个操作只添加节点；之后同样签名的调用直接执行这张图，
# **不再运行 Python 代码**。所以：
#
# * 普通 `print` 只在追踪时执行（它属于 Python 代码）；`aics.print` 是图中的节点，每次调用都执行；
# * 新的输入形状会触发重新追踪；把 Python 数字当参数传，每换一个值都会重新追踪（常见的性能陷阱）。

# %%
@aics.function
def affine(x, w, scale):
    print("  [Python print] tracing affine with x =", x, "scale =", scale)
    aics.print("  [aics.print] running affine, sum(x) =", aics.reduce_sum(x))
    return aics.tanh(aics.matmul(x, w)) * scale

w_e = aics.constant([[1.0, -1.0], [0.5, 2.0]])
x2 = aics.constant(np.ones((2, 2), np.float32))
print("call 1:"); affine(x2, w_e, 2.0)
print("call 2:"); affine(x2, w_e, 2.0)
print("call 3:"); affine(x2 * 3.0, w_e, 2.0)
assert affine.experimental_get_tracing_count() == 1      # same signature: traced once

print("call 4 (new shape):"); affine(aics.constant(np.ones((5, 2), np.float32)), w_e, 2.0)
assert affine.experimental_get_tracing_count() == 2

for s in [1.0, 3.0, 4.0]:
    affine(x2, w_e, s)
print("tracing count after three new Python scalars:", affine.experimental_get_tracing_count())
assert affine.experimental_get_tracing_count() == 5   # 2.0 was cached; 1.0, 3.0, 4.0 each retraced

# %% [markdown]
# 追踪得到的图是一张普通的 `aics.Graph`，可以打印、画出来，也可以像第 4 节那样保存并在另一个进程里运行。
# 注意图中灰色的 `PrintV2`：输出 `Mul` 并不依赖它，按剪枝规则它不会被执行。`aics.function` 在每次调用时会**额外**执行
# 这类没有输出的副作用节点（打印、赋值），效果相当于 `tf.function` 自动添加的控制依赖；而在另一个进程里只导入这张图、
# 只取 `Mul:0` 时，打印节点就被剪掉了。

# %%
cf = affine.get_concrete_function(x2, w_e, 2.0)
print(cf.pretty_printed_graph())
ax = draw_graph(cf.graph, fetches=[t for t in cf.outputs if t is not None])
ax.set_title("graph traced by aics.function (affine, x: 2x2)")
plt.show()

traced_path = aics.io.write_graph(cf.graph, tmpdir.name, "affine_traced.json")
x_name, w_name, fetch_name = cf.inputs[0].name, cf.inputs[1].name, cf.outputs[0].name
print("placeholders:", [x_name, w_name], "| output:", fetch_name, "| scale=2.0 is baked in as a Const")
op_types = [op.type for op in cf.graph.get_operations()]
assert "MatMul" in op_types and "Tanh" in op_types and "PrintV2" in op_types

# %%
# Run the traced graph in a fresh process: feed both placeholders (x and w).
CHILD2 = CHILD.replace(
    "feed_dict={feed_name: np.array(value, dtype=np.float32)}",
    "feed_dict={k: np.array(v, dtype=np.float32) for k, v in value.items()}")

def run_traced_in_fresh_process(path, fetch_name, feeds):
    env = dict(os.environ, PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", CHILD2, path, "-", fetch_name, json.dumps(feeds)],
                          capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed:\n{proc.stderr}")
    return proc.stdout, json.loads(proc.stdout.strip().splitlines()[-1])

child_stdout, child2 = run_traced_in_fresh_process(
    traced_path, fetch_name, {x_name: x2.numpy().tolist(), w_name: w_e.numpy().tolist()})
print("child stdout:", child_stdout)
np.testing.assert_allclose(np.array(child2["result"], dtype=np.float32),
                           np.tanh(x2.numpy() @ w_e.numpy()) * 2.0, rtol=1e-6)
assert "aics.print" not in child_stdout   # PrintV2 is in the file, but the fetch does not need it

# %% [markdown]
# 性能上，`aics.function` 落在两者之间、靠近静态图：第 3 节的表中 `func us` 一列接近 `graph us`，
# 而一次性的追踪代价 `trace ms` 与图的构建代价 `build ms` 同一量级。代价是语义上的约束：函数体里的 Python
# 副作用（`print`、修改 Python 列表）只在追踪时发生；依赖张量值的 Python `if`/`while` 在追踪时无法直接判断，
# 要靠 AutoGraph 把它们改写成图中的控制流（下一章 [02 graph-execution](02-graph-execution.ipynb) 第 1 节）。

# %% [markdown]
# ### 练习：只追踪一次
#
# 上面的 `affine` 每遇到一个新的批大小、或一个新的 Python 数字 `scale`，就重新追踪一次。部署成服务 (serving) 时，
# 每个请求的批大小都可能不同，`scale` 又常由调用方以 Python 数字传入：每次重新追踪都要重新运行 Python 代码、重新建图，
# 正好抵消了图带来的好处。
#
# 补全 `make_affine()`：返回一个 `aics.function`，计算 `tanh(x @ w) * scale`（`x`：`(批大小, 2)` 的 float32；
# `w`：`2×2` 的 float32；`scale`：float32 标量），并且**不管批大小和 `scale` 怎样变，只追踪一次**。
#
# * `aics.function(fn, input_signature=[aics.TensorSpec(shape, dtype), ...])`（也可以写成装饰器
#   `@aics.function(input_signature=[...])`）事先声明每个参数的形状和 dtype；形状里的 `None` 是未知的维，什么大小都接受；
# * 声明成张量的参数，调用时传入的 Python 数字先被转换成张量，于是它的**值**不再是追踪的键。
#
# 测试用几种批大小和几个 `scale` 调用你返回的函数（`x`、`w` 传张量，`scale` 传 Python 数字），把结果与 NumPy（float64）
# 比较，最后检查追踪次数。

# %% nbgrader={"grade": false, "grade_id": "make_affine", "locked": false, "schema_version": 3, "solution": true, "task": false}
def make_affine():
    """An aics.function computing tanh(x @ w) * scale, traced once whatever the batch size and scale."""
    ### BEGIN SOLUTION
    @aics.function(input_signature=[aics.TensorSpec([None, 2], aics.float32),
                                    aics.TensorSpec([2, 2], aics.float32),
                                    aics.TensorSpec([], aics.float32)])
    def affine_once(x, w, scale):
        return aics.tanh(aics.matmul(x, w)) * scale
    return affine_once
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "make_affine_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): the function make_affine returns, called with several batch sizes and
# Python-number scales, gives tanh(x @ w) * scale (NumPy in float64 as the reference) and traces once.
def _check_affine(calls, what):
    f = make_affine()
    grading.check(callable(getattr(f, "experimental_get_tracing_count", None)),
                  f"make_affine must return an aics.function (it counts its traces), got {type(f).__name__}")
    for i, (xv, wv, s) in enumerate(calls):
        call = f"{what}, call {i + 1} (x of shape {xv.shape}, scale={s})"
        try:
            got = f(aics.constant(xv), aics.constant(wv), s)
        except grading.CheckFailed:
            raise
        except Exception as e:
            raise grading.CheckFailed(f"{call} raised {type(e).__name__}: {str(e).splitlines()[0]}. The signature must "
                                      f"accept any batch size (None) and a float32 scalar scale") from None
        want = np.tanh(xv.astype(np.float64) @ wv.astype(np.float64)) * s
        grading.check_array(got.numpy() if hasattr(got, "numpy") else got, want, call, rtol=1e-5, atol=1e-6,
                            hint="tanh(x @ w) * scale")
    traces = f.experimental_get_tracing_count()
    batches, scales = sorted({xv.shape[0] for xv, _, _ in calls}), sorted({s for _, _, s in calls})
    grading.check(traces == 1, f"{what}: {len(calls)} calls (batch sizes {batches}, scales {scales}) traced the "
                               f"function {traces} times, expected once: declare the arguments with input_signature, "
                               f"the batch dimension as None and scale as a float32 tensor")


def _affine_calls(seed, batches, scales):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((2, 2)).astype(np.float32)
    return [(rng.standard_normal((n, 2)).astype(np.float32), w, s) for n, s in zip(batches, scales)]


with grading.exercise("make_affine"):
    _check_affine(_affine_calls(0, [2, 2, 5, 1], [2.0, 0.5, 0.5, 3.0]), "visible")
    ### BEGIN HIDDEN TESTS
    _check_affine(_affine_calls(1, [3, 7, 1, 4, 4, 2], [-1.0, 1.5, 0.25, 2.0, -2.5, 10.0]), "hidden")
    _hidden = _affine_calls(2, [6, 6], [1.0, 1.0])
    _check_affine([(x, -w, s) for x, w, s in _hidden], "hidden, another w")
    ### END HIDDEN TESTS

# %% [markdown]
# ## 7. 练习：构建一次、运行多次
#
# 下面的 `eager_step` 是一段立即执行的代码。请把**同样的计算**写成静态图，补全 `run_static(xs, w_val)`：
#
# * 只构建**一张**图：输入 `x` 是 `float32` 占位符（形状 `(None, 3)`），`w` 可以是常量或变量，取值 `w_val`；
#   图的大小不能随 `len(xs)` 增长（不要为每个输入新建节点或新建图）；
# * 只创建**一个** `aics.Session`，对 `xs` 中的每个 `x` 调用一次 `sess.run`，通过 `feed_dict` 填入 `x`；
# * 返回 `(graph, results)`：`results` 是与 `xs` 等长的列表，第 i 个元素是 `sess.run` 对 `xs[i]` 的结果（NumPy 数组）。
#
# 这正是第 3 节测量的“构建一次、运行多次”：构建和生成执行计划的代价只付一次。测试会检查图的大小、会话的个数、
# 每次 `run` 填入的数据和结果（直接用 eager、`aics.function` 或 NumPy 算出结果都不算数）。写完后运行下面锁定的测试单元格。

# %%
def eager_step(x, w):
    """Row sums of tanh(x @ w) * 2 - 1, computed eagerly."""
    return aics.reduce_sum(aics.tanh(aics.matmul(x, w)) * 2.0 - 1.0, axis=1)

W_EX = np.array([[0.5, -1.0], [1.5, 0.25], [-0.5, 2.0]], dtype=np.float32)
XS_EX = [np.random.default_rng(i).standard_normal((i + 1, 3)).astype(np.float32) for i in range(4)]
print("eager results:", [eager_step(aics.constant(x), aics.constant(W_EX)).numpy().round(3) for x in XS_EX])

# %% nbgrader={"grade": false, "grade_id": "run_static", "locked": false, "schema_version": 3, "solution": true, "task": false}
def run_static(xs, w_val):
    """eager_step as one static graph, run once per x by one Session; returns (graph, results)."""
    ### BEGIN SOLUTION
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
        w = aics.constant(w_val, name="w")
        y = aics.reduce_sum(aics.tanh(aics.matmul(x, w)) * 2.0 - 1.0, axis=1)
    with aics.Session(graph=graph) as sess:
        results = [sess.run(y, feed_dict={x: xv}) for xv in xs]
    return graph, results
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "run_static_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): one graph whose size does not depend on len(xs), one Session on that
# graph, one run per input with that input fed, and results equal to the eager computation.
def _record_sessions(fn, *args):
    """Calls fn(*args) recording the graph of every Session created and every Session.run."""
    log = {"graphs": [], "runs": []}
    init, run = aics.Session.__init__, aics.Session.run

    def recording_init(self, *a, **kw):
        init(self, *a, **kw)
        log["graphs"].append(self.graph)

    def recording_run(self, fetches, feed_dict=None, *a, **kw):
        result = run(self, fetches, feed_dict, *a, **kw)
        log["runs"].append(([np.asarray(v) for v in (feed_dict or {}).values()], result))
        return result
    aics.Session.__init__, aics.Session.run = recording_init, recording_run
    try:
        return fn(*args), log
    finally:
        aics.Session.__init__, aics.Session.run = init, run


def _check_run_static(xs, w):
    out, log = _record_sessions(run_static, xs, w)
    grading.check(isinstance(out, (tuple, list)) and len(out) == 2,
                  f"run_static must return (graph, results), got {type(out).__name__}")
    graph, results = out
    grading.check(isinstance(graph, aics.Graph),
                  f"the first value returned must be the aics.Graph you built, got {type(graph).__name__}")
    grading.check(graph.get_operations(), "the graph you returned is empty: build the computation in it "
                                          "(with graph.as_default(): ...) and run it with a Session")
    inputs = [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]
    grading.check(any(t.dtype == aics.float32 and t.shape.as_list() == [None, 3] for t in inputs),
                  f"the graph needs a float32 placeholder of shape (None, 3) for x; its placeholders: "
                  f"{[(t.name, t.dtype.name, str(t.shape)) for t in inputs]}")
    sessions = len(log["graphs"])
    grading.check(sessions > 0, "no aics.Session was created: run the graph with sess.run, one call per input")
    grading.check(sessions == 1, f"use one Session for all inputs, not {sessions}: the plan is built on the first run "
                                 f"and reused by the next ones only within the same Session")
    grading.check(log["graphs"][0] is graph, "the Session runs another graph than the one you returned")
    fed_runs = [r for feeds, r in log["runs"] if feeds]
    grading.check(len(fed_runs) == len(xs),
                  f"expected one fed Session.run per input ({len(xs)}), got {len(fed_runs)}")
    grading.check(isinstance(results, (list, tuple)) and len(results) == len(xs),
                  f"results must be a list with one result per input ({len(xs)}), got {type(results).__name__}"
                  + (f" of length {len(results)}" if hasattr(results, "__len__") else ""))
    for i, (xv, got) in enumerate(zip(xs, results)):
        expected = eager_step(aics.constant(xv), aics.constant(w)).numpy()
        grading.check_array(np.asarray(got), expected, f"results[{i}] (for xs[{i}] of shape {xv.shape})",
                            rtol=1e-5, atol=1e-6,
                            hint="the row sums (axis 1) of tanh(x @ w) * 2 - 1, as eager_step computes them")
        grading.check(any(any(np.array_equal(f, xv) for f in feeds) and np.array_equal(np.asarray(r), np.asarray(got))
                          for feeds, r in log["runs"]),
                      f"results[{i}] is not what a Session.run fed with xs[{i}] returned: return sess.run's values")
    return len(graph.get_operations())


with grading.exercise("run_static"):
    _n_small = _check_run_static(XS_EX[:2], W_EX)
    _n_large = _check_run_static(XS_EX, W_EX)
    grading.check(_n_small == _n_large, f"the graph grows with the number of inputs ({_n_small} ops for 2 inputs, "
                                        f"{_n_large} for 4): build it once, then only run it")
    ### BEGIN HIDDEN TESTS
    _xs_hidden = [np.random.default_rng(40 + i).standard_normal((3, 3)).astype(np.float32) for i in range(6)]
    _n_hidden = _check_run_static(_xs_hidden, -W_EX)
    grading.check(_n_hidden == _n_small, f"the graph grows with the number of inputs ({_n_small} ops for 2 inputs, "
                                         f"{_n_hidden} for 6): build it once, then only run it")
    ### END HIDDEN TESTS

# %% [markdown]
# ## 8. 习题 5.2 的回答（用本笔记本的测量支撑）
#
# 先把上面测得的数字汇总（变量 `results`、`child`、`message`、`affine` 都来自前面的单元格）：

# %%
small, large = results[0], results[-1]
summary = {
    "smallest n": small["n"],
    "eager / graph per step (smallest n)": small["eager_s"] / small["graph_s"],
    "eager / graph per step (largest n)": large["eager_s"] / large["graph_s"],
    "function / graph per step (smallest n)": small["function_s"] / small["graph_s"],
    "eager dispatch per op, us (smallest n)": small["eager_s"] / small["ops"] * 1e6,
    "graph per op, us (smallest n)": small["graph_s"] / small["ops"] * 1e6,
    "graph build + first run, ms (smallest n)": small["build_s"] * 1e3,
    "break-even steps (smallest n)": small["build_s"] / max(small["eager_s"] - small["graph_s"], 1e-12),
    "saved graph ran in a fresh process": bool(np.allclose(child["result"], expected)),
    "aics.function traces so far": affine.experimental_get_tracing_count(),
}
for k, v in summary.items():
    print(f"{k:<42s} {v:.3g}" if isinstance(v, float) else f"{k:<42s} {v}")

ratio_small = summary["eager / graph per step (smallest n)"]
ratio_large = summary["eager / graph per step (largest n)"]
speed = f"快 {ratio_small:.1f} 倍" if ratio_small > 1 else f"慢 {1 / ratio_small:.1f} 倍"
if ratio_large >= 1:
    trend = "，差距变小：矩阵越大，内核本身的计算时间占比越高" if ratio_large < ratio_small else ""
else:
    trend = "，静态图略慢：此时差别落在计时噪声和调度开销的量级，内核与内存决定速度（第 3 节末尾的实验）"
payback = (f"约 {summary['break-even steps (smallest n)']:.0f} 步后摊平" if ratio_small > 1
           else "在这台机器上没有摊平")
print()
print(f"对 {small['n']}x{small['n']} 的小矩阵，静态图每步比立即执行{speed}"
      f"（每个操作约 {summary['eager dispatch per op, us (smallest n)']:.1f} µs 对 "
      f"{summary['graph per op, us (smallest n)']:.1f} µs）；对 {large['n']}x{large['n']} 的矩阵，"
      f"两者之比为 {ratio_large:.2f}{trend}。构建图并第一次运行花了 "
      f"{summary['graph build + first run, ms (smallest n)']:.1f} ms，{payback}。")
assert summary["saved graph ran in a fresh process"]

# %% [markdown]
# **答：** 两种模式的根本区别在于“计算何时发生”。静态图模式先把整个计算描述成一张图，再交给会话执行；
# 动态图（立即执行）模式在每个操作被调用时立刻计算。
#
# **静态图的优点**
#
# 1. **运行效率高（尤其是小算子多的网络）**：图只构建一次，剪枝、设备放置、内核查找在生成执行计划时一次完成，
#    之后每一步只是按计划调用内核。上表中小矩阵时 `eager / graph per step` 明显大于 1：每个操作的调度开销
#    见上面打印的 `eager dispatch per op, us` 与 `graph per op, us` 两行。
# 2. **便于全局优化**：框架在执行前看得到整张图，可以做剪枝（`00` 号笔记本里会话只执行取值需要的节点）、
#    常量折叠、算子融合、内存复用（习题 5.10、5.11 会看到）。
# 3. **便于部署**：图是数据，可以序列化。第 4 节的 GraphDef 在一个全新进程里被加载并运行，得到相同结果
#    （`saved graph ran in a fresh process` 为 `True`），不需要构建它的 Python 源码。
# 4. 便于放置到不同设备（`/mlu:0`）和做分布式切分，也便于提前规划内存（何时释放、复用哪块缓冲）：
#    `aicslib` 的会话在执行计划里算好每个中间结果的最后一个消费者，用完即释放；第 3 节末尾的实验显示，
#    若把中间结果都留到一步结束，大矩阵时每步会明显变慢。
#
# **静态图的缺点**
#
# 1. **有一次性代价**：构建图和第一次运行（生成计划）要花时间（`graph build + first run`），只运行少数几步时不划算
#    （`break-even steps`）。
# 2. **编程和调试困难**：构建时只有符号张量，`print` 看不到值，Python 的 `if`/`for` 不能直接作用于张量；
#    错误在 `run` 时才暴露，要借助节点的 `traceback` 属性才能找回出错的构建代码；`pdb` 停在框架的执行循环里。
# 3. 需要学习图特有的写法（占位符、`feed_dict`、控制依赖、`aics.print`）。
#
# **动态图的优点**：写法就是普通 Python，直观、学习成本低；每一步都能 `print`、`pdb`、用 Python 控制流，
# 适合研究和快速迭代；网络结构可以随输入变化。
#
# **动态图的缺点**：每个操作都经过 Python 调度，小算子多时开销大（上表）；框架看不到整体，难以做全局优化；
# 没有可以序列化的图，部署要带上 Python 源码和环境。
#
# **折中**：`aics.function`（`tf.function`）、PyTorch 的 TorchScript/`torch.compile` 等让开发时用动态图、
# 部署和性能关键处追踪成静态图。第 6 节显示它的每步耗时接近静态图，代价是追踪开销和“Python 副作用只在追踪时发生”
# 的语义约束。另外，矩阵越大（上表越往下，`eager / graph per step (largest n)`），调度开销越不重要，
# 执行模式本身不再决定速度：决定速度的是算子内核和内存管理（第 3 节末尾的实验）。这正是后续章节要优化内核
# （卷积算法、算子融合、低精度）的原因。

# %% [markdown]
# ## 小结
#
# * 习题 5.1：eager 模式下 `aics.add`、`aics.matmul` 立即返回带值的张量；同样的计算写成静态图后在 `Session` 中得到逐位相同的结果。
# * 两种模式共用一套内核，区别在调度：eager 每个操作都调度一次，静态图把调度放进缓存的执行计划里。
#   小算子时静态图快得多；大算子时差别消失。
# * 静态图可以保存为 JSON GraphDef，在另一个进程中加载运行；eager 程序只能连同源码一起搬走。
# * 调试：eager 可以随处 `print`/`pdb`；静态图构建时只有符号，运行时打印要用 `aics.print`，报错靠 `traceback` 定位构建代码。
# * `aics.function` 把 eager 写法追踪成图：同一签名只追踪一次，新形状或新的 Python 参数值会重新追踪；
#   `input_signature` 加上未知的批大小、把数字当张量传，就只追踪一次。
# * 会话按每个中间结果的最后一个消费者释放它，所以大矩阵时静态图不比 eager 多占内存、也不更慢。
# * 练习：同一段计算写成一张图、一个会话、每个输入一次 `run`——“构建一次、运行多次”。
#
# 下一章 [02 graph-execution](02-graph-execution.ipynb) 打开会话看里面：图中的控制流、规划器与执行器（实验）、TensorBoard。
