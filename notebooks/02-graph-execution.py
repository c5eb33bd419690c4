# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 静态图的执行：控制流、会话的规划器与执行器、TensorBoard
#
# **前置章节 (prerequisites)**：[01 eager-vs-static](01-eager-vs-static.ipynb)
#
# 上一章 [01 eager-vs-static](01-eager-vs-static.ipynb) 从外面比较了两种执行模式：测量调度开销、把图存到磁盘、
# 用 `aics.function` 追踪，并用测得的数字回答了习题 5.1 和 5.2。这一章接着走进静态图**内部**：图里的 `if`/`while`
# 长什么样，`Session.run` 拿到一张图之后怎样决定运行哪些节点、按什么顺序运行、什么时候释放中间结果，
# 以及怎样用 TensorBoard 把图和训练过程记录下来。
#
# **学习目标**
#
# 1. 看懂静态图里的控制流：`cond`/`while_loop` 怎样变成 Switch/Merge/Enter/Exit/NextIteration，AutoGraph 怎样把
#    Python 的 `if`/`while` 改写成它们；练习（自动评分，2 分）：用 `while_loop` 在图中实现辗转相除法；
# 2. 实验（自动评分，11 分）：自己写会话的规划器 (planner) 和执行器 (executor)——剪枝、拓扑排序、按最后一个消费者
#    释放中间结果、从内核注册表取内核运行——再让一个真实的 TF1 程序在你的规划器上跑一遍；
# 3. 用 TensorBoard 事件文件 (event file) 记录标量、直方图和计算图，并把图导出为二进制 `.pb`。
#
# **运行时间**：见下面第一个代码单元格的输出（`make test-full` 实测）。
# 练习之后的单元格不依赖你的答案，没做完也能一直运行到底。

# %%
import os
import tempfile

import numpy as np
import matplotlib.pyplot as plt

import aicslib as aics
from aicslib import flags
from aicslib.visualize import draw_graph
from workbook import grading, run_times

run_times.show("graph-execution")
np.random.seed(0)
aics.random.set_seed(0)
FAST = flags.FAST  # AICS_FAST=1 (CI): fewer training steps, same code path
tmpdir = tempfile.TemporaryDirectory()   # the TensorBoard logs of section 3
print("eager by default:", aics.executing_eagerly(), "| FAST:", FAST)

# %% [markdown]
# ## 1. 静态图里的控制流与 AutoGraph
#
# 静态图是一张**数据流图**：节点在输入都到齐时执行，没有“程序计数器”。那么 `if` 和 `while` 怎么放进去？
# TF1（以及 `aicslib`）用 6 个只负责“搬运”值的原语 (primitive) 搭出控制流：
#
# | 操作 | 作用 |
# |---|---|
# | `Switch(data, pred)` | 把 `data` 送到输出 1（`pred` 为真）或输出 0（为假）；另一个输出是**死张量 (dead tensor)** |
# | `Merge(inputs)` | 哪个输入是活的就输出哪个（和它的下标） |
# | `Enter(data, frame_name)` | 把值送进循环的**帧 (frame)**，第 0 次迭代；常量 `Enter` 供每次迭代使用 |
# | `NextIteration` | 把值送到同一帧的下一次迭代 |
# | `Exit` | 把值送出帧（循环结束时的那个值） |
# | `LoopCond` | 标记循环条件 |
#
# 规则只有两条：(1) 输入里有死张量的节点**不执行**，它的输出也都是死的（`Merge` 除外，它只要一个活输入）；
# (2) 每个值带着 (帧, 迭代次数) 的标记流动，节点在**同一标记**的输入都到齐时执行。于是 `cond` 的两个分支都在图里，
# 但只有被选中的分支是活的；`while_loop` 的循环体每次迭代执行一次，`pred` 为假时 `Switch` 把值送进 `Exit`，
# 送往 `NextIteration` 的那一路变成死张量，循环就停了：
#
# ```
# Enter -> Merge -> Switch(LoopCond) --真--> Identity -> 循环体 -> NextIteration --+
#            ^                     \--假--> Exit                                   |
#            +---------------------------------------------------------------------+
# ```

# %%
loop_graph = aics.Graph()
with loop_graph.as_default():
    n_ph = aics.placeholder(aics.int32, [], name="n")
    x_ph = aics.placeholder(aics.float32, [], name="x")
    # while i < n: i += 1; p *= x   ->  p = x ** n
    i_out, p_out = aics.while_loop(lambda i, p: i < n_ph, lambda i, p: (i + 1, p * x_ph),
                                   [aics.constant(0), aics.constant(1.0)])
    y_cond = aics.cond(p_out > 10.0, lambda: p_out - 10.0, lambda: aics.constant(0.0))
    dp_dx = aics.gradients(p_out, x_ph)[0]   # the gradient is another loop, running backwards
    loop_ops = [op.type for op in loop_graph.get_operations()]
with aics.Session(graph=loop_graph) as sess:
    for n_val in (0, 3, 5):
        p_val, y_val, g_val = sess.run([p_out, y_cond, dp_dx], {n_ph: n_val, x_ph: 2.0})
        print(f"n={n_val}: x**n = {p_val:g}, cond = {y_val:g}, d(x**n)/dx = {g_val:g} (n x**(n-1) = {n_val * 2.0 ** max(n_val - 1, 0) if n_val else 0:g})")
        assert p_val == 2.0 ** n_val and np.isclose(g_val, n_val * 2.0 ** (n_val - 1) if n_val else 0.0)
print({t: loop_ops.count(t) for t in ("Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond",
                                      "StackPushV2", "StackPopV2")})

# %% [markdown]
# 画出前向循环（不含梯度部分）。橙色的弧线 `NextIteration -> Merge` 就是回边 (back edge)：数据流图里唯一的环。
# 梯度图中的 `StackPushV2`/`StackPopV2` 是反向循环的“记忆”：前向每次迭代把反向需要的值压栈，反向循环倒序弹出
# （和 TF1 的做法一样）。

# %%
forward_only = aics.Graph()
with forward_only.as_default():
    n_f = aics.placeholder(aics.int32, [], name="n")
    x_f = aics.placeholder(aics.float32, [], name="x")
    _, p_f = aics.while_loop(lambda i, p: i < n_f, lambda i, p: (i + 1, p * x_f),
                             [aics.constant(0, name="i0"), aics.constant(1.0, name="p0")])
ax = draw_graph(forward_only, fetches=p_f, rankdir="LR", figsize=(14, 6))
ax.set_title("while_loop: Enter / Merge / Switch / NextIteration / Exit")
plt.show()

# %% [markdown]
# ### AutoGraph：把 Python 控制流改写成图
#
# 在 `aics.function` 里，`if x > 0:` 中的 `x` 是符号张量，Python 无法判断真假。AutoGraph 在追踪前把函数的
# 抽象语法树 (AST) 改写：每个 `if`/`while`/`for` 变成几个小函数加一次 `ag__` 调用，语句修改的变量作为参数传入、
# 作为结果传出。运行时，**条件是图张量**才建成 `cond`/`while_loop`，条件是 Python 值时仍是普通 Python 语句。
# `aics.autograph.to_code` 显示改写后的源码：

# %%
def collatz_steps(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps

print(aics.autograph.to_code(collatz_steps))
collatz_fn = aics.function(collatz_steps)
for start in (6, 7, 27):
    got = int(collatz_fn(aics.constant(start)).numpy())
    assert got == collatz_steps(start)   # the plain Python function is the reference
    print(f"collatz_steps({start}) = {got}")
traced_types = {op.type for op in collatz_fn.get_concrete_function(aics.constant(6)).graph.get_operations()}
assert {"Enter", "Merge", "Switch", "NextIteration", "Exit"} <= traced_types
print("traced once for every int32 scalar:", collatz_fn.experimental_get_tracing_count())

# %% [markdown]
# ### 练习：用 `while_loop` 在图中实现辗转相除法
#
# 补全 `gcd_graph()`：构建并返回 `(graph, a, b, g)`，其中 `a`、`b` 是 `int32` 标量占位符，`g` 是它们的最大公约数
# （欧几里得算法：当 `b != 0` 时 `(a, b) <- (b, a % b)`，结束时 `a` 就是答案；`gcd(a, 0) = a`）。
#
# * 必须用 `aics.while_loop` 在图中循环：测试从 `g` 沿着图的边往回走，检查 `g` 的值确实是从循环里出来的
#   （`Enter`/`Merge`/`Switch`/`NextIteration`/`Exit`）。图里另放一个 `g` 用不到的循环、或用 `cond` 展开固定的几步，都不算；
# * 同一张图要能对任意输入运行（测试对很多对 `(a, b)`，包括需要迭代很多次的，用 `feed_dict` 运行**同一个** `g`）；
# * 输入都是非负整数；`aics.floormod(a, b)`（或 `a % b`）是取余，`aics.not_equal(b, 0)` 是比较。
#
# 写完后运行下面锁定的测试单元格，它会说明哪一项检查没通过、期望什么、得到了什么。

# %% nbgrader={"grade": false, "grade_id": "gcd_graph", "locked": false, "schema_version": 3, "solution": true, "task": false}
def gcd_graph():
    """Euclid's algorithm as one graph: returns (graph, a, b, g) with a, b int32 placeholders."""
    ### BEGIN SOLUTION
    graph = aics.Graph()
    with graph.as_default():
        a = aics.placeholder(aics.int32, [], name="a")
        b = aics.placeholder(aics.int32, [], name="b")
        g, _ = aics.while_loop(lambda x, y: aics.not_equal(y, 0), lambda x, y: (y, aics.floormod(x, y)), [a, b])
    return graph, a, b, g
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "gcd_graph_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): g's value comes out of a while_loop (found by walking the graph back
# from g, so a loop g does not use does not count), one graph for all inputs, results = math.gcd.
import math


def _fan_in(tensor):
    """The ops `tensor` depends on: a walk backwards along data and control edges."""
    seen, todo = set(), [tensor.op]
    while todo:
        op = todo.pop()
        if op not in seen:
            seen.add(op)
            todo.extend(t.op for t in op.inputs)
            todo.extend(op.control_inputs)
    return seen


def _check_gcd(pairs):
    out = gcd_graph()
    grading.check(isinstance(out, (tuple, list)) and len(out) == 4,
                  f"gcd_graph must return (graph, a, b, g), got {type(out).__name__}")
    graph, a, b, g = out
    grading.check(isinstance(graph, aics.Graph),
                  f"the first value returned must be the aics.Graph you built, got {type(graph).__name__}")
    for name, t in (("a", a), ("b", b)):
        grading.check(isinstance(t, aics.Tensor) and t.op.type == "Placeholder" and t.dtype == aics.int32,
                      f"{name} must be an int32 placeholder (aics.placeholder(aics.int32, [])), got {t!r}")
    grading.check(isinstance(g, aics.Tensor) and g.graph is graph, f"g must be a tensor of the returned graph, got {g!r}")
    upstream = _fan_in(g)
    missing = [t for t in ("Enter", "Merge", "Switch", "NextIteration", "Exit") if t not in {op.type for op in upstream}]
    grading.check(not missing, f"g does not come out of a while_loop: walking the graph back from g finds no "
                               f"{'/'.join(missing)} op. A loop elsewhere in the graph that g does not use does not "
                               f"count, nor a fixed number of steps unrolled with cond: g must be a loop variable "
                               f"returned by aics.while_loop")
    grading.check(a.op in upstream and b.op in upstream, "g must be computed from both placeholders a and b")
    n_ops = len(graph.get_operations())
    with aics.Session(graph=graph) as sess:
        for x, y in pairs:
            try:
                got = sess.run(g, {a: x, b: y})
            except aics.errors.OpError as e:
                raise grading.CheckFailed(f"running g with a={x}, b={y} raised {type(e).__name__}: {e}") from None
            grading.check(np.ndim(got) == 0 and int(got) == math.gcd(x, y),
                          f"gcd({x}, {y}): expected {math.gcd(x, y)}, got {got}. Hint: loop while b != 0 with "
                          f"(a, b) <- (b, a % b); the answer is the first loop variable when the loop ends")
    grading.check(len(graph.get_operations()) == n_ops,
                  "running g added ops to the graph: build everything before the Session runs")


with grading.exercise("gcd_graph"):
    _check_gcd([(84, 36), (36, 84), (17, 5), (9, 0), (0, 9), (1, 1), (1071, 462), (89, 55)])
    ### BEGIN HIDDEN TESTS
    _rng_gcd = np.random.default_rng(7)
    _check_gcd([(int(u), int(v)) for u, v in _rng_gcd.integers(0, 10_000, size=(25, 2))]
               + [(2 ** 20, 3 ** 12), (832040, 514229), (514229, 832040), (0, 0)])
    ### END HIDDEN TESTS

# %% [markdown]
# ## 2. 实验：会话的规划器 (planner) 与执行器 (executor)
#
# [01 eager-vs-static](01-eager-vs-static.ipynb) 第 3 节看到，会话在大矩阵时不比 eager 多占内存，靠的是“最后一个消费者一跑完就释放”。这一节你自己把
# `Session.run(fetches, feed_dict)` 背后的那套机制写出来。TensorFlow 的 DirectSession 第一次见到一组
# (fetches, feeds) 时做三件事，`aicslib` 把它们放在一个可替换的函数——**规划器**——里：
#
# 1. **剪枝 (prune)**：从要取的结果出发，沿着数据边和控制边往回走，只留下它们需要的节点。被 feed 的张量值已经给定，
#    生产它的节点及其上游都不必运行：**feed 切断了它的扇入 (fan-in)**——上游哪怕有一个没人 feed 的占位符也没关系；
# 2. **拓扑排序 (topological order)**：每个节点排在它需要的所有节点之后（图可能有几千层深，用显式的栈，别用递归）；
# 3. **释放点**：每个值在读它的**最后一个**节点运行之后就可以丢掉；没人读的输出（例如 `split` 没用上的那一半）
#    在产生它的节点之后立刻丢掉；要返回给用户的值（`keep`）从不丢。
#
# 然后**执行器**按顺序对每个节点从内核注册表 (kernel registry) 取出内核运行，存下输出、按释放点丢掉不再需要的值。
# 一个需要的占位符却没人 feed，是 TensorFlow 的 `InvalidArgumentError`：
# `You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]`（TensorFlow 用 C++ 的类型名
# `float`；`aicslib` 的会话写 `dtype.name`，即 `float32`；这一行的其余部分一字不差）。
#
# 在 `aicslib` 里，规划器的约定写在 `aicslib/framework/planner.py` 的文档字符串里
# (`planner(targets, feeds, keep) -> (order, free_after)`，库自己的是 `default_planner` = `prune` + `last_uses`)，
# 执行器是 `aicslib/framework/executor.py` 的 `run_sequential`。`aics.experimental.use_planner(fn)` 在一个
# `with` 块里把会话的规划器换成 `fn`；`workbook.engine.student_engine(planner=fn)` 是同一个开关。
#
# 下面三个练习（共 11 分）合起来就是一个规划器加一个执行器；最后用你的规划器跑一个真实的 TF1 程序。
# 三个练习都要自己写：调用库里的 `prune`、`last_uses`、`Session.run` 或 `workbook` 里的参考实现都不算。

# %%
from aicslib.framework.execute import KernelCall, run_kernel
from workbook.references import planner as _planner_ref

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def kernel_for(op):
    """The registry's CPU kernel for graph node `op`, bound to the node's attrs:
    kernel_for(op)(*input_arrays) -> one array, or a tuple of arrays for an op with several outputs."""
    call = KernelCall(op.op_def, op.attrs, CPU0, op.input_lengths, op.name, None)   # selects the kernel
    return lambda *arrays: run_kernel(call, arrays, op)


# A small graph to try things on: a diamond (a is read twice), an unused split half, a control edge.
demo_graph = aics.Graph()
with demo_graph.as_default():
    px = aics.placeholder(aics.float32, [4, 2], name="px")
    py = aics.placeholder(aics.float32, [4, 2], name="py")
    a = aics.multiply(px, py, name="a")
    top, bottom = aics.split(aics.tanh(a, name="t"), 2, axis=0, name="halves")
    with demo_graph.control_dependencies([bottom.op]):
        c = aics.add(a, 1.0, name="c")
    d = aics.add(aics.concat([top, top], 0, name="cat"), c, name="d")
    unused = aics.negative(py, name="unused")
demo_feeds = {px: np.ones((4, 2), np.float32), py: np.full((4, 2), 2.0, np.float32)}
for op in demo_graph.get_operations():
    print(f"{op.name:8s} {op.type:9s} inputs={[t.name for t in op.inputs]} control={[o.name for o in op.control_inputs]}")
print("the kernel the registry gives d:", aics.kernel_registry.lookup(d.op.type, "CPU", d.op.attrs))
print("d run by hand:", kernel_for(d.op)(np.zeros((4, 2), np.float32), np.ones((4, 2), np.float32))[0])

# %% [markdown]
# ### 练习 1（4 分）：剪枝 + 拓扑排序
#
# `plan_order(targets, feeds)`：`targets` 是必须运行的 `Operation` 列表，`feeds` 是被 feed 的张量（支持 `in`）。
# 返回 targets 需要的全部 `Operation`（经过 `op.inputs` 中**没被 feed** 的张量的 `t.op`，以及 `op.control_inputs`），
# 每个只出现一次，排在它需要的所有节点之后；不需要的节点、被 feed 的张量上游的节点都不能出现。
# 满足条件的顺序不止一种，哪种都算对。测试用随机图（菱形、被 feed 的中间结果、多个 fetch）和一条几千层深的链。

# %% nbgrader={"grade": false, "grade_id": "plan_order", "locked": false, "schema_version": 3, "solution": true, "task": false}
def plan_order(targets, feeds):
    """The Operations `targets` need, each after every op it needs; feeds cut their fan-in."""
    ### BEGIN SOLUTION
    def needs(op):
        return [t.op for t in op.inputs if t not in feeds] + list(op.control_inputs)

    order, opened = [], set()
    for root in targets:
        if root in opened:
            continue
        opened.add(root)
        stack = [(root, needs(root))]
        while stack:
            op, waiting = stack[-1]
            if waiting:
                dep = waiting.pop()
                if dep not in opened:
                    opened.add(dep)
                    stack.append((dep, needs(dep)))
            else:
                stack.pop()
                order.append(op)
    return order
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "plan_order_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): the same set of ops as the reference pruning (feeds cut fan-in), each
# after the ops it reads or waits for, no duplicates; random graphs and a deep chain; no library call.
_ORDER_ALLOWED = ("op", "inputs", "control_inputs", "outputs", "name", "type", "graph", "consumers",
                  "get_operations", "value_index")


def _needs(op, feeds):
    return [t.op for t in op.inputs if t not in feeds] + list(op.control_inputs)


def _check_order(targets, feeds, what):
    got = grading.no_library_calls(plan_order, targets, feeds, allowed=_ORDER_ALLOWED, what="plan_order",
                                   how="with a stack over op.inputs and op.control_inputs")
    grading.check(isinstance(got, (list, tuple)) and all(isinstance(op, aics.Operation) for op in got),
                  f"{what}: plan_order must return a list of Operations, got {type(got).__name__}"
                  + (f" holding {sorted({type(o).__name__ for o in got})}" if isinstance(got, (list, tuple)) else ""))
    names = [op.name for op in got]
    dup = sorted({n for n in names if names.count(n) > 1})
    grading.check(not dup, f"{what}: {', '.join(dup[:5])} listed more than once: each op runs once per step")
    expected = set(_planner_ref.reference_order(targets, feeds))
    behind = set(_planner_ref.reference_order(targets, {})) - expected
    extra, missing = set(got) - expected, expected - set(got)
    grading.check(not missing, f"{what}: missing {sorted(op.name for op in missing)[:6]} (needed by the targets "
                               f"through inputs that are not fed or through control inputs)")
    grading.check(not (extra & behind), f"{what}: {sorted(op.name for op in extra & behind)[:6]} sit behind a fed "
                                        f"tensor: its value is given, so its producer and what feeds it need not run")
    grading.check(not extra, f"{what}: {sorted(op.name for op in extra)[:6]} are not needed by the targets")
    pos = {op: i for i, op in enumerate(got)}
    for op in got:
        for dep in _needs(op, feeds):
            grading.check(pos[dep] < pos[op], f"{what}: '{op.name}' comes before '{dep.name}', which it needs "
                                              f"(position {pos[op]} vs {pos[dep]}): every op after the ops it needs")


def _random_case(seed, n_ops=30):
    graph, fetches, feeds, _ = _planner_ref.random_graph(seed, n_ops)
    return graph, [t.op for t in fetches if t not in feeds], feeds, fetches


with grading.exercise("plan_order"):
    _check_order([d.op], {}, "demo graph, fetch d, nothing fed")
    _check_order([d.op], {a: np.zeros((4, 2), np.float32)}, "demo graph, fetch d, a fed")
    _check_order([d.op, unused.op], {px: None, py: None}, "demo graph, fetch d and unused")
    for _seed in range(3):
        _g, _targets, _feeds, _ = _random_case(_seed)
        _check_order(_targets, _feeds, f"random graph {_seed}")
    _chain, _end, _chain_feed = _planner_ref.deep_chain(2000)
    _check_order([_end.op], _chain_feed, "a chain 2000 ops deep (recursion would overflow Python's stack)")
    ### BEGIN HIDDEN TESTS
    for _seed in range(10, 16):
        _g, _targets, _feeds, _ = _random_case(_seed, 40)
        _check_order(_targets, _feeds, f"hidden graph {_seed}")
        _check_order(_targets, {}, f"hidden graph {_seed}, nothing fed")
    _check_order([], {}, "no targets")
    _check_order([_end.op], {}, "the deep chain, its placeholder not fed (planning does not run it)")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 练习 2（3 分）：释放点
#
# `plan_frees(order, keep)`：`order` 是一个合法的执行顺序，`keep` 是要返回的张量（支持 `in`）。返回一个与 `order`
# 等长的列表，第 i 项是 `order[i]` 运行完之后可以丢掉的张量：`order` 中读它的**最后一个**节点是 `order[i]`；
# 或者它是 `order[i]` 的输出而 `order` 中没人读它。`keep` 里的张量永远不丢；每个张量最多丢一次。
# 测试按每个张量的字节数模拟执行，比较你的计划和参考计划同时占用的**峰值字节数 (peak live bytes)**。

# %% nbgrader={"grade": false, "grade_id": "plan_frees", "locked": false, "schema_version": 3, "solution": true, "task": false}
def plan_frees(order, keep):
    """Per op of `order`, the tensors to drop once it has run (never one in `keep`)."""
    ### BEGIN SOLUTION
    last = {}
    for i, op in enumerate(order):
        for t in op.outputs:
            last.setdefault(t, i)          # produced here: dropped here unless someone reads it later
        for t in op.inputs:
            last[t] = i
    frees = [[] for _ in order]
    for t, i in last.items():
        if t not in keep:
            frees[i].append(t)
    return frees
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "plan_frees_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): nothing freed before a later op reads it, nothing in keep freed, each
# tensor freed once, every one freed; the peak bytes of the plan equal the reference's on the same
# order, and each tensor is freed right after its last reader; no library call.
def _check_frees(order, keep, feeds, what):
    got = grading.no_library_calls(plan_frees, order, keep, allowed=_ORDER_ALLOWED, what="plan_frees",
                                   how="with one pass over order")
    grading.check(isinstance(got, (list, tuple)) and len(got) == len(order),
                  f"{what}: plan_frees must return one list per op of order ({len(order)}), got "
                  f"{type(got).__name__}" + (f" of length {len(got)}" if hasattr(got, "__len__") else ""))
    at = {}
    for i, free in enumerate(got):
        for t in free:
            grading.check(isinstance(t, aics.Tensor), f"{what}: free_after[{i}] holds {t!r}, not a Tensor")
            grading.check(t not in keep, f"{what}: '{t.name}' is returned to the caller (in keep) but freed "
                                         f"after '{order[i].name}'")
            grading.check(t not in at, f"{what}: '{t.name}' freed twice (after '{order[at.get(t, i)].name}' "
                                       f"and '{order[i].name}')")
            at[t] = i
    readers = {}
    for j, op in enumerate(order):
        for t in op.inputs:
            readers[t] = j
    for t, i in at.items():
        grading.check(readers.get(t, -1) <= i, f"{what}: '{t.name}' freed after '{order[i].name}' but "
                                               f"'{order[readers.get(t, i)].name}' reads it later")
    reference = _planner_ref.reference_frees(order, keep)
    never = [t for free in reference for t in free if t not in at]
    grading.check(not never, f"{what}: {sorted(t.name for t in never)[:5]} never freed (a value nobody reads "
                             f"goes right after the op that made it)")
    mine = _planner_ref.simulate_peak(order, got, feeds, _planner_ref.static_nbytes)
    best = _planner_ref.simulate_peak(order, reference, feeds, _planner_ref.static_nbytes)
    grading.check(mine == best, f"{what}: your plan holds up to {mine} bytes at once, expected {best} "
                                f"(each value freed right after its last reader)")
    where = {t: i for i, free in enumerate(reference) for t in free}
    for t, i in at.items():
        grading.check(where.get(t) == i, f"{what}: '{t.name}' freed after '{order[i].name}', but its last "
                                         f"reader in order is '{order[where[t]].name}'" if t in where else
                                         f"{what}: '{t.name}' is not produced or read by any op of order")


def _frees_case(seed, n_ops=30):
    graph, targets, feeds, fetches = _random_case(seed, n_ops)
    return _planner_ref.reference_order(targets, feeds), set(fetches), feeds


with grading.exercise("plan_frees"):
    _demo_order = _planner_ref.reference_order([d.op], {})
    _check_frees(_demo_order, {d}, {}, "demo graph, fetch d")
    _check_frees(_demo_order, {d, a, bottom}, {}, "demo graph, fetch d, a and bottom")
    for _seed in range(3):
        _check_frees(*_frees_case(_seed), f"random graph {_seed}")
    ### BEGIN HIDDEN TESTS
    for _seed in range(10, 16):
        _order, _keep, _feeds = _frees_case(_seed, 40)
        _check_frees(_order, _keep, _feeds, f"hidden graph {_seed}")
        _check_frees(_order, set(), _feeds, f"hidden graph {_seed}, nothing kept")
    _check_frees([], set(), {}, "an empty plan")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 练习 3（4 分）：执行器
#
# `run_graph(fetches, feed_dict, planner)`：`fetches` 是张量列表，`feed_dict` 是 `{张量: NumPy 数组}`，
# `planner(targets, feeds, keep) -> (order, free_after)` 是一个规划器（测试给你参考的那个）。要做的：
#
# * targets 是每个**没被 feed** 的 fetch 的 `t.op`（被 feed 的 fetch 直接返回 feed 的值），keep 是 fetches；
# * 按 `order` 运行每个节点：`kernel_for(op)(*输入数组)`（单输出的算子返回一个数组，多输出的返回元组）；
#   一个输出被 feed 时，feed 的值优先；一个没被 feed 的 `Placeholder` 节点要运行时，抛出
#   `aics.errors.InvalidArgumentError(None, op, message)`，message 与 `aicslib` 的会话给出的一样（即 TensorFlow 的那句）：
#   `You must feed a value for placeholder tensor '<op.name>' with dtype <dtype.name> and shape [?,3]`（形状里未知的维写 `?`）；
# * 每个节点运行完，先记下此刻持有的所有数组（包括 feed 进来的）的字节数 `.nbytes` 之和，再丢掉 `free_after` 里的张量；
# * 返回 `(fetch 的值的列表, 峰值字节数)`；峰值从一开始持有的 feed 算起。

# %% nbgrader={"grade": false, "grade_id": "run_graph", "locked": false, "schema_version": 3, "solution": true, "task": false}
def run_graph(fetches, feed_dict, planner):
    """Runs what `fetches` need with kernel_for, freeing as `planner` says: (values, peak bytes)."""
    ### BEGIN SOLUTION
    feeds = dict(feed_dict)
    targets = []
    for t in fetches:
        if t not in feeds and t.op not in targets:
            targets.append(t.op)
    order, free_after = planner(targets, feeds, set(fetches))
    values = dict(feeds)
    peak = sum(v.nbytes for v in values.values())
    for op, free in zip(order, free_after):
        if op.type == "Placeholder" and op.outputs[0] not in feeds:
            t = op.outputs[0]
            shape = "[" + ",".join("?" if n is None else str(n) for n in t.shape.as_list()) + "]"
            raise aics.errors.InvalidArgumentError(
                None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype {t.dtype.name} "
                          f"and shape {shape}")
        result = kernel_for(op)(*[values[t] for t in op.inputs])
        outputs = (result,) if len(op.outputs) == 1 else result
        for t, v in zip(op.outputs, outputs):
            if t not in feeds:
                values[t] = v
        peak = max(peak, sum(v.nbytes for v in values.values()))
        for t in free:
            del values[t]
    return [values[t] for t in fetches], peak
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "run_graph_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): the planner's order run once each through kernel_for, values equal to
# Session.run's, peak bytes equal to the reference executor's with the same planner, TF's error for
# an unfed placeholder the fetches need (and none for one they do not); no Session, no reference.
_RUN_FORBIDDEN = {"run", "make_callable", "prune", "last_uses", "default_planner", "run_plan", "run_sequential",
                  "reference_run", "reference_order", "reference_frees"}


def _call_run_graph(fetches, feeds):
    global kernel_for
    ran, given = [], kernel_for

    def counting_kernel_for(op):
        ran.append(op.name)
        return given(op)
    kernel_for = counting_kernel_for
    try:
        out, called = grading.library_calls(run_graph, fetches, feeds, _planner_ref.reference_planner)
    finally:
        kernel_for = given
    used = sorted(called & _RUN_FORBIDDEN)
    grading.check(not used, f"run_graph calls {', '.join(used)}: run each node yourself with kernel_for(op) "
                            f"(the Session and the library's executor are what you are writing)")
    return out, ran


def _check_run(graph, fetches, feeds, what):
    out, ran = _call_run_graph(fetches, feeds)
    grading.check(isinstance(out, (tuple, list)) and len(out) == 2,
                  f"{what}: run_graph must return (values, peak_bytes), got {type(out).__name__}")
    got, peak = out
    targets = list(dict.fromkeys(t.op for t in fetches if t not in feeds))
    order = [op.name for op in _planner_ref.reference_order(targets, feeds)]
    grading.check(ran == order, f"{what}: ran {len(ran)} nodes {ran[:6]}...; the plan has {len(order)}: "
                                f"{order[:6]}...: run the planner's order, each node once through kernel_for(op)")
    with aics.Session(graph=graph) as sess:
        expected = sess.run(fetches, feeds)
    grading.check(isinstance(got, (list, tuple)) and len(got) == len(fetches),
                  f"{what}: expected {len(fetches)} values, one per fetch, got {type(got).__name__}")
    for t, g_val, e_val in zip(fetches, got, expected):
        grading.check_array(g_val, e_val, f"{what}: the value of '{t.name}'", rtol=1e-6)
    _, best = _planner_ref.reference_run(fetches, feeds)
    grading.check(peak == best, f"{what}: peak bytes {peak}, expected {best}: sum the .nbytes of every array held "
                                f"(feeds included) after each node stored its outputs, before its frees")


def _check_unfed(shape, what):
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, shape, name="needed")
        y = aics.tanh(aics.add(x, 1.0))
    with aics.Session(graph=graph) as sess:
        try:
            sess.run(y)
        except aics.errors.InvalidArgumentError as e:
            expected = str(e.message).split("\n")[0]
    try:
        _call_run_graph([y], {})
    except aics.errors.InvalidArgumentError as e:
        grading.check(str(e.message).split("\n")[0] == expected,
                      f"{what}: the message should read {expected!r}, got {str(e.message).split(chr(10))[0]!r}")
        return
    except grading.CheckFailed:
        raise
    except Exception as e:
        raise grading.CheckFailed(f"{what}: expected InvalidArgumentError, got {type(e).__name__}: {e}") from None
    raise grading.CheckFailed(f"{what}: an unfed placeholder the fetch needs must raise InvalidArgumentError")


with grading.exercise("run_graph"):
    _check_run(demo_graph, [d], demo_feeds, "demo graph, fetch d")
    _check_run(demo_graph, [d, a, top], demo_feeds, "demo graph, fetch d, a and top")
    _check_run(demo_graph, [d], {px: np.ones((4, 2), np.float32), a: np.full((4, 2), 3.0, np.float32)},
               "demo graph, a fed (py is not needed)")
    _check_run(demo_graph, [a], {a: np.zeros((4, 2), np.float32)}, "demo graph, the fetch itself fed")
    _g, _, _feeds, _fetches = _random_case(0)
    _check_run(_g, _fetches, _feeds, "random graph 0")
    _check_unfed([None, 3], "placeholder of shape [?,3] not fed")
    ### BEGIN HIDDEN TESTS
    for _seed in range(10, 14):
        _g, _, _feeds, _fetches = _random_case(_seed, 40)
        _check_run(_g, _fetches, _feeds, f"hidden graph {_seed}")
    _check_unfed([2, 5], "placeholder of shape [2,5] not fed")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 你的规划器跑真实程序
#
# 把练习 1、2 合成一个规划器。先用你的执行器在一张随机图上和 `Session.run` 对比，看看按最后一个消费者释放省下多少内存；
# 再用 `workbook.engine.compare_engines` 把一个真实的 TF1 程序（`tests/tf_programs/tf1_mnist_softmax.py`：TensorFlow
# 入门教程的 MNIST softmax 回归，只把 `import tensorflow` 换成了 `aicslib`）分别在库的规划器和你的规划器上跑一遍，
# 打印两边的数字。练习没有完成时，这里用参考实现（会打印说明）。

# %%
from workbook import engine

order_fn = grading.use("plan_order", plan_order, _planner_ref.reference_order, what="pruning and ordering")
frees_fn = grading.use("plan_frees", plan_frees, _planner_ref.reference_frees, what="release points")
run_fn = grading.use("run_graph", run_graph, _planner_ref.reference_run, what="executor")
planned = []


def my_planner(targets, feeds, keep):
    """Exercises 1 and 2 as one planner, with aicslib's contract."""
    order = order_fn(targets, feeds)
    planned.append(len(order))
    return order, frees_fn(order, keep)


def keep_everything(targets, feeds, keep):
    order = order_fn(targets, feeds)
    return order, [[] for _ in order]


lab_graph, lab_fetches, lab_feeds, _ = _planner_ref.random_graph(2024, 60)
mine, peak = run_fn(lab_fetches, lab_feeds, my_planner)
_, peak_all = run_fn(lab_fetches, lab_feeds, keep_everything)
with aics.Session(graph=lab_graph) as sess:
    lib = sess.run(lab_fetches, lab_feeds)
print(f"random graph: {len(lab_graph.get_operations())} ops, your plan runs {planned[-1]} of them; "
      f"same values as Session.run: {all(np.array_equal(u, v) for u, v in zip(mine, lib))}")
print(f"peak bytes held: {peak} freeing after the last reader, {peak_all} keeping every value")

planned.clear()
library_numbers, your_numbers = engine.compare_engines("tf1_mnist_softmax", planner=my_planner)
print(f"your planner planned {len(planned)} different Session.run signatures of the program "
      f"(the Session caches a plan per fetches and feeds); same numbers: {library_numbers == your_numbers}")

# %% [markdown]
# ## 3. TensorBoard：事件文件与计算图
#
# TensorBoard 读取的是**事件文件 (event file)**：`events.out.tfevents.*`，一串 TFRecord 记录（长度 + 掩码 CRC32C
# 校验 + 数据 + 校验），每条记录是一个 `Event` 协议缓冲区 (protocol buffer)：第一条写文件版本，之后每条带着
# 墙钟时间、步数 (step) 和一个 `Summary`（标量、直方图、图像……），或者一张 `GraphDef`。`aicslib` 用 `tensorboard`
# 包自带的 protobuf 定义构造这些消息，所以写出的文件就是 TensorBoard 的原生格式。
#
# * TF2 写法：`aics.summary.create_file_writer(logdir)` + `with writer.as_default():` + `aics.summary.scalar(...)`；
# * TF1 写法：图中的 `compat.v1.summary.scalar(...)` 等是**操作**，`merge_all()` 合并，`sess.run` 得到序列化的
#   `Summary`，`FileWriter(logdir, sess.graph)` 写文件，并把计算图写进去（TensorBoard 的 Graphs 页）。
#
# 下面用两种写法各记录一次：eager 训练一个小线性回归 (linear regression)，静态图版本再写一次，附上计算图。

# %%
import shutil
from aicslib.summary import v1 as summary_v1

tb_logdir = os.path.join(tmpdir.name, "tb_logs")
shutil.rmtree(tb_logdir, ignore_errors=True)
rng_tb = np.random.default_rng(0)
X_tb = rng_tb.normal(size=(64, 3)).astype(np.float32)
true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
Y_tb = X_tb @ true_w + 0.05 * rng_tb.normal(size=(64, 1)).astype(np.float32)
tb_steps = 30 if FAST else 100

# TF2: eager training, summaries written as they are computed.
w_tb = aics.Variable(np.zeros((3, 1), np.float32))
writer = aics.summary.create_file_writer(os.path.join(tb_logdir, "eager"))
with writer.as_default():
    for step in range(tb_steps):
        with aics.GradientTape() as tape:
            loss = aics.reduce_mean(aics.square(aics.matmul(aics.constant(X_tb), w_tb) - Y_tb))
        grad = tape.gradient(loss, w_tb)
        w_tb.assign_sub(0.1 * grad)
        aics.summary.scalar("loss", loss, step=step)
        if step % 10 == 0:
            aics.summary.histogram("w", w_tb, step=step)
writer.close()

# TF1: the same model as a graph with summary ops and a FileWriter that also stores the graph.
tb_graph = aics.Graph()
with tb_graph.as_default():
    x_tb = aics.placeholder(aics.float32, [None, 3], name="x")
    y_tb = aics.placeholder(aics.float32, [None, 1], name="y")
    w_g = aics.Variable(np.zeros((3, 1), np.float32), name="w")
    mse = aics.reduce_mean(aics.square(aics.matmul(x_tb, w_g) - y_tb), name="mse")
    train_op = aics.train.GradientDescentOptimizer(0.1).minimize(mse)
    summary_v1.scalar("loss", mse)
    summary_v1.histogram("w", w_g)
    merged = summary_v1.merge_all()
    init_tb = aics.global_variables_initializer()
with tb_graph.as_default(), aics.Session() as sess:  # FileWriter is TF1 graph-mode API
    sess.run(init_tb)
    fw = summary_v1.FileWriter(os.path.join(tb_logdir, "graph"), sess.graph)
    for step in range(tb_steps):
        s, _ = sess.run([merged, train_op], {x_tb: X_tb, y_tb: Y_tb})
        fw.add_summary(s, global_step=step)
    fw.close()
print(sorted(os.listdir(os.path.join(tb_logdir, "eager"))), sorted(os.listdir(os.path.join(tb_logdir, "graph"))))

# %% [markdown]
# 用 TensorBoard 自己的读取器 (`EventAccumulator`) 把文件读回来：两种写法记录的损失曲线应当一致（同样的数据、
# 初值和学习率），`GraphDef` 也能读回并重新导入成 `aicslib` 的图。这也是 TensorBoard 打不开时的**静态替代**：
# 用 matplotlib 画出记录的标量和图。

# %%
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

def load_events(path):
    acc = EventAccumulator(path, size_guidance={"scalars": 0, "histograms": 0})
    acc.Reload()
    return acc

acc_eager = load_events(os.path.join(tb_logdir, "eager"))
acc_graph = load_events(os.path.join(tb_logdir, "graph"))
loss_eager = [e.value for e in acc_eager.Scalars("loss")]
loss_graph = [e.value for e in acc_graph.Scalars("loss")]
np.testing.assert_allclose(loss_eager, loss_graph, rtol=1e-4)
assert loss_eager[-1] < 0.1 * loss_eager[0]

read_back = aics.Graph()
with read_back.as_default():
    aics.import_graph_def(acc_graph.Graph(), name="")   # a GraphDef protobuf, read from the event file
fig = plt.figure(figsize=(14, 4.5))
ax1 = fig.add_subplot(1, 3, 1)
ax1.plot([e.step for e in acc_eager.Scalars("loss")], loss_eager, label="aics.summary (eager)")
ax1.plot([e.step for e in acc_graph.Scalars("loss")], loss_graph, "--", label="FileWriter (graph)")
ax1.set_yscale("log"); ax1.set_xlabel("step"); ax1.set_title("scalar 'loss' read back"); ax1.legend()
ax2 = fig.add_subplot(1, 3, (2, 3))
mse_op = read_back.get_operation_by_name("mse")
draw_graph(read_back, fetches=mse_op.outputs[0], ax=ax2, rankdir="LR", fontsize=6)
ax2.set_title("GraphDef read back from the event file (forward part)")
plt.show()

# %% [markdown]
# 在 JupyterLab 里可以直接打开 TensorBoard（`%load_ext tensorboard`，然后 `%tensorboard --logdir ...`）。
# 下面的单元格只在完整设置、且 TensorBoard 能启动时这样做；CI（`AICS_FAST=1`）下只打印命令，上面的静态图就是替代。
# 也可以在终端运行 `tensorboard --logdir <目录>`，在浏览器里看 Scalars、Histograms 和 Graphs 三页。

# %%
tb_command = f"tensorboard --logdir {tb_logdir}"
if FAST or os.environ.get("CI") or shutil.which("tensorboard") is None:
    print("TensorBoard not started here (fast/CI setting). In a terminal:", tb_command)
else:
    try:
        ip = get_ipython()  # noqa: F821 - defined inside Jupyter
        ip.run_line_magic("load_ext", "tensorboard")
        ip.run_line_magic("tensorboard", f"--logdir {tb_logdir} --port 0")
    except Exception as e:  # no notebook frontend, port trouble...: the static plots above stand in
        print("TensorBoard could not start here:", e, "| run:", tb_command)

# %% [markdown]
# 课上说的“pb 文件”就是二进制的 `GraphDef`。`aics.io.write_graph(graph, logdir, "model.pb", as_text=False)`
# 写出 TF 的二进制格式（`as_text=True` 写文本格式 `.pbtxt`），节点的操作名 (`MatMul`、`AddV2`……) 和属性与 TF 相同，
# 所以 Netron 和 TensorBoard 都能直接打开；`import_graph_def` 也能读回它。

# %%
pb_path = aics.io.write_graph(tb_graph, tb_logdir, "linear_regression.pb", as_text=False)
print(pb_path, os.path.getsize(pb_path), "bytes")
with open(pb_path, "rb") as f:
    head = f.read(24)
print("first bytes:", head)
reloaded = aics.Graph()
with reloaded.as_default():
    x_r, mse_r = aics.import_graph_def(aics.io.read_graph(pb_path), return_elements=["x:0", "mse:0"], name="")
assert sorted(op.type for op in reloaded.get_operations()) == sorted(op.type for op in tb_graph.get_operations())

# %% [markdown]
# ## 小结
#
# * 静态图里的 `cond`/`while_loop` 由 Switch/Merge/Enter/Exit/NextIteration 搭成：死张量让未选中的分支不执行，
#   帧和迭代标记让循环体每次迭代执行一次；循环的梯度是一个倒着跑的循环，前向的中间值靠栈保存。
# * AutoGraph 在 `aics.function` 追踪前改写 AST：条件是图张量时 `if`/`while`/`for` 变成 `cond`/`while_loop`，
#   条件是 Python 值时保持 Python 语句；`aics.autograph.to_code` 显示改写结果。
# * 实验：会话的规划器 = 剪枝（feed 切断扇入）+ 拓扑排序 + 按最后一个读者释放；执行器按顺序从内核注册表取内核运行。
#   `aics.experimental.use_planner` 让真实的 TF1 程序跑在你写的规划器上，结果与库的规划器相同。
# * TensorBoard 的事件文件是 TFRecord 里的 `Event` protobuf；`aics.summary`（TF2）和 `compat.v1.summary` + `FileWriter`
#   （TF1）都写这种文件，计算图以 `GraphDef` 写入；`.pb` 是二进制 `GraphDef`。
