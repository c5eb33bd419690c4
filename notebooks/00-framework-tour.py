# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 编程框架之旅：计算图、操作、张量、会话、变量、占位符
#
# **前置章节 (prerequisites)**：无（从这里开始）
#
# **对应教材**：第 3 章《编程框架使用》（TensorFlow 编程模型及基本概念）。本章是习题 5.1、5.2（见 `01-eager-vs-static.ipynb`）
# 和 5.10（数据流图剪枝日志）的基础。
#
# **学习目标**
#
# 1. 理解计算图 (computation graph) 的节点与边：数据边传递张量，控制边 (control edge) 只规定执行顺序；
# 2. 从活的对象上读出操作 (operation) 与张量 (tensor) 的属性，对照课件中的属性表；
# 3. 会用会话 (session) 运行计算图：`run`、`eval`、一次取多个结果、关闭会话；
# 4. 会用变量 (variable) 与初始化器 (initializer)，理解“未初始化”错误；
# 5. 会用占位符 (placeholder) 和 `feed_dict` 输入数据，读懂形状不匹配的报错；
# 6. 会用设备作用域 (device scope) 把操作放到 `/cpu:0` 或 `/mlu:0`，观察软放置 (soft placement)；
# 7. 用运行元数据 (run metadata) 画出每个节点的执行时间线 (timeline)。
#
# 本书使用的框架是 `aicslib`：一个用 NumPy 写成的“袖珍 TensorFlow”，API 与 TensorFlow 1.x/2.x 一致
# （`import aicslib as aics` 相当于 `import tensorflow as tf`），源码短到一个下午就能读完。
#
# **运行时间**：见下面第一个代码单元格的输出（`make test-full` 实测；没有耗时的单元格）。
#
# **练习**（自动评分 (autograded)，共 4 分）：第 11 节用静态图搭一个线性层（2 分）；第 12 节不运行图，
# 预测一个广播 (broadcasting) 运算结果的静态形状（2 分）。练习之后的单元格不依赖你的答案，没做完也能一直运行到底。

# %%
import os

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display

import aicslib as aics
from aicslib import flags
from aicslib.visualize import draw_graph, needed_ops, plot_timeline, timeline_rows
from workbook import grading, run_times

run_times.show("framework-tour")
np.random.seed(0)
aics.random.set_seed(0)
print("aicslib", aics.__version__, "| eager by default:", aics.executing_eagerly(), "| FAST:", flags.FAST)

# %% [markdown]
# ## 1. 计算图 (computation graph)
#
# TensorFlow 1.x 风格的程序分两步：先**构建**计算图，再在会话里**执行**它。图是一个有向图：
#
# * **节点**是操作：数学运算、常量、变量读写、数据输入……
# * **边**有两类：**数据边**把一个操作的输出张量送给另一个操作；**控制边**不传数据，只表示“前一个节点算完，后一个节点才能开始”。
#
# `aicslib` 和 TensorFlow 2.x 一样默认处于立即执行 (eager execution) 模式。要构建静态图，就进入
# `with aics.Graph().as_default():`，此时的 `aics.constant`、`aics.matmul` 只往图里添加节点，不做计算。
# 下面是课件中的例子 $y = x \cdot w$：

# %%
g = aics.Graph()
with g.as_default():
    x = aics.constant([[3., 3.]], name="x")
    w = aics.constant([[2.], [2.]], name="w")
    y = aics.matmul(x, w, name="y")

print(y)  # a symbolic tensor: it has a name, dtype and shape, but no value yet
for op in g.get_operations():
    print(f"{op.name:>3s}  {op.type:<8s} inputs={[t.name for t in op.inputs]}")

assert [op.type for op in g.get_operations()] == ["Const", "Const", "MatMul"]
assert y.shape.as_list() == [1, 1]  # the shape function already knows the result shape

# %%
ax = draw_graph(g, fetches=y, figsize=(7, 3), fontsize=10)
ax.set_title("y = matmul(x, w)")
plt.show()

# %% [markdown]
# ## 2. 操作 (operation)
#
# 图中的每个节点都是一个操作：接收 0 个或多个张量，产生 0 个或多个张量。课件中的“操作的主要属性”表，
# 下面直接从活的 `Operation` 对象上读出来。为了让 `control_inputs` 非空，我们再加一个节点 `z`，
# 它通过 `aics.control_dependencies` 要求 `y` 先执行。

# %%
with g.as_default():
    with aics.control_dependencies([y]):
        z = aics.add(x, 1.0, name="z")

def show_table(obj, attrs, title):
    print(title)
    print("-" * 72)
    for a in attrs:
        value = getattr(obj, a)
        if a == "traceback":
            value = f"{len(value)} frames, innermost: line {value[-1].lineno} of {os.path.basename(value[-1].filename)}"
        elif isinstance(value, (list, tuple)):
            value = [getattr(v, "name", v) for v in value]
        elif value == "":
            value = "'' (no device requested: the placer decides)"
        print(f"{type(obj).__name__.lower()}.{a:<15s} {value}")
    print()

OP_ATTRS = ["name", "type", "inputs", "outputs", "control_inputs", "device", "graph", "traceback"]
show_table(y.op, OP_ATTRS, "MatMul 节点 y")
show_table(z.op, OP_ATTRS, "AddV2 节点 z（带控制依赖）")
print("y.op.get_attr('transpose_a') =", y.op.get_attr("transpose_a"))
print("z.op.node_def =", z.op.node_def)

assert y.op.type == "MatMul" and [t.name for t in y.op.inputs] == ["x:0", "w:0"]
assert z.op.control_inputs == [y.op] and "^y" in z.op.node_def["input"]
assert y.op.graph is g and y.op.traceback[-1].lineno > 0

# %% [markdown]
# `traceback` 记录了创建这个操作时的 Python 调用栈（已去掉框架自己的栈帧）。静态图在**运行时**出错时，
# 报错信息就靠它指回**构建时**的那一行代码——这一点在 `01` 号笔记本的调试部分还会用到。
# `node_def` 是节点序列化后的样子：控制输入写成 `^y`，和 TensorFlow 的 GraphDef 一样。

# %% [markdown]
# ## 3. 张量 (tensor)
#
# 张量是图上的数据载体。图模式下的张量**不保存数据**，只是对“某个操作的第几个输出”的引用，
# 名字就是 `操作名:输出序号`。张量的阶 (rank) 就是维数：0 阶是标量，1 阶是向量，2 阶是矩阵。
# 下面打印课件中的“tensor 的常用属性”表，并检查几种阶数的 `shape`。

# %%
TENSOR_ATTRS = ["dtype", "shape", "name", "op", "device", "graph"]
show_table(y, TENSOR_ATTRS, "张量 y")

with g.as_default():
    examples = {
        "标量": aics.constant(1.0),
        "向量": aics.constant([1., 1., 1.]),
        "矩阵": aics.ones([3, 3]),
        "三维数组": aics.ones([2, 3, 3]),
        "批大小未知": aics.placeholder(aics.float32, shape=(None, 3), name="batch"),
        "整数": aics.constant([2, 3], dtype=aics.int32),
    }
for kind, t in examples.items():
    print(f"{kind:<6s} rank={t.shape.rank}  shape={t.shape}  dtype={t.dtype.name}  name={t.name}")

assert [examples[k].shape.rank for k in ["标量", "向量", "矩阵", "三维数组"]] == [0, 1, 2, 3]
assert examples["批大小未知"].shape.as_list() == [None, 3]
assert y.name == "y:0" and y.op is g.get_operation_by_name("y") and y is g.get_tensor_by_name("y:0")


# %% [markdown]
# `aics.float32` 等数据类型 (dtype) 与 TensorFlow 同名。课件中提到的 `bfloat16`（裁短浮点数，brain floating point）
# 也有，而且是真正的 2 字节类型（来自 `ml_dtypes` 包，TensorFlow 和 JAX 用的也是它）：与 float32 同样 8 位指数，
# 尾数只剩 7 位（加上隐含位共 8 位有效位），范围与 float32 相当，精度只有两三位十进制数字。下面打印每种类型
# 每个元素占的字节数和范围：

# %%
def fmt(v):
    return f"{v:.6g}" if isinstance(v, float) else str(v)

for dt in [aics.float16, aics.bfloat16, aics.float32, aics.int8, aics.int32, aics.uint8, aics.bool]:
    itemsize = np.dtype(dt.as_numpy_dtype).itemsize
    print(f"{dt.name:<9s} bytes={itemsize} floating={str(dt.is_floating):<5s} min={fmt(dt.min):<13s} max={fmt(dt.max)}")
third = aics.constant([1 / 3, 256.5], dtype=aics.bfloat16).numpy()
print(f"1/3 and 256.5 as bfloat16: {third} (numpy dtype {third.dtype}, {third.itemsize} bytes each)")
assert aics.bfloat16.is_floating and not aics.int32.is_floating
assert third.dtype.itemsize == 2 and third.dtype.name == "bfloat16"

# %% [markdown]
# ## 4. 会话 (session)
#
# 图只描述计算；真正的计算在会话中进行。`aics.Session(target='', graph=None, config=None)` 的参数与课件一致：
#
# | 参数 | 作用 |
# |---|---|
# | `target` | 执行引擎，默认 `''` 为进程内引擎 |
# | `graph` | 要执行的图，默认是当前默认图 |
# | `config` | `aics.ConfigProto`：软放置、是否打印设备放置等 |
#
# `sess.run(fetches, feed_dict=None, options=None, run_metadata=None)` 中的 `fetches` 可以是一个张量、
# 一个操作（结果为 `None`）、或它们组成的列表/元组/字典，结果保持同样的结构。会话只执行 `fetches` 真正需要的
# 子图（剪枝 (pruning)），并把每组 `(fetches, feeds)` 的执行计划缓存下来。
#
# 下面是课件中 `tensor.eval()` 与 `sess.run()` 的对比例子：`eval` 一次求一个张量，`run` 一次可求多个。

# %%
g2 = aics.Graph()
with g2.as_default():
    a = aics.constant([[1.0, 2.0]], name="a")
    b = aics.constant([[3.0], [4.0]], name="b")
    c = aics.constant([[5.0], [6.0]], name="c")
    y1 = aics.matmul(a, b, name="y1")
    y2 = aics.matmul(a, c, name="y2")

with aics.Session(graph=g2) as sess:          # 'with' makes it the default session and closes it
    v1 = y1.eval()                             # same as sess.run(y1)
    v2 = y2.eval()
    both = sess.run([y1, y2])                  # one run, a list of results
    named = sess.run({"y1": y1, "pair": (y1, y2)})
    nothing = sess.run(y1.op)                  # fetching an operation gives None
print("y1.eval() =", v1.tolist(), " y2.eval() =", v2.tolist())
print("sess.run([y1, y2]) =", [r.tolist() for r in both])
print("sess.run(dict) keys =", list(named), " sess.run(y1.op) =", nothing)

assert v1.item() == 11.0 and v2.item() == 17.0
assert [r.item() for r in both] == [11.0, 17.0] and named["pair"][1].item() == 17.0 and nothing is None

# %% [markdown]
# 会话占用资源（变量的值、队列、缓存的执行计划），用完要关闭：要么显式 `sess.close()`，要么像上面那样用
# `with` 语句自动关闭。对已关闭的会话调用 `run` 会报错：

# %%
sess = aics.Session(graph=g2)
print(sess.run(y1))
sess.close()
try:
    sess.run(y1)
    raise AssertionError("a closed session must not run")
except RuntimeError as e:
    print("RuntimeError:", e)

# %% [markdown]
# ## 5. 变量 (variable) 与初始化
#
# 每次 `run` 结束，中间结果都会被释放；需要跨多次执行保存的状态（模型参数）放在变量里。变量是**有状态**节点：
# 它的输出取决于它自己保存的值。在图中一个变量 `w` 由几个节点组成：`w`（VarHandleOp，变量本身）、
# `w/Assign`（初始化器）和 `w/Read/ReadVariableOp`（读出它的值）。
#
# 下面用课件中的例子：`weights` 用正态分布随机初始化，`w2` 用 `weights.initialized_value()` 作为初值，
# 然后打印课件中“变量的常用属性”表。

# %%
g3 = aics.Graph()
with g3.as_default():
    aics.set_random_seed(0)  # graph-level seed: the run is reproducible
    weights = aics.Variable(aics.random_normal([3, 4], stddev=0.35), name="weights")
    w2 = aics.Variable(weights.initialized_value() * 2.0, name="w2")
    counter = aics.Variable(0, name="counter", trainable=False)
    step = counter.assign_add(1)
    reset = counter.assign(10)
    first_value = weights.initialized_value()  # a read that runs the initializer first

VAR_ATTRS = ["dtype", "shape", "name", "op", "device", "graph", "initializer", "trainable"]
show_table(weights, VAR_ATTRS, "变量 weights")
print("weights.initialized_value() ->", first_value, "control inputs:", [c.name for c in first_value.op.control_inputs])
print("global variables   :", [v.name for v in g3.get_collection(aics.GraphKeys.GLOBAL_VARIABLES)])
print("trainable variables:", [v.name for v in g3.get_collection(aics.GraphKeys.TRAINABLE_VARIABLES)])
assert weights.trainable and not counter.trainable
assert weights.initializer.type == "AssignVariableOp"

# %% [markdown]
# 变量在初始化之前没有值。读一个未初始化的变量会得到 `FailedPreconditionError`，报错信息指出是哪个变量：

# %%
sess3 = aics.Session(graph=g3)
try:
    sess3.run(weights)
    raise AssertionError("reading an uninitialized variable must fail")
except aics.errors.FailedPreconditionError as e:
    print(type(e).__name__ + ":", e)

# %%
with g3.as_default():
    init = aics.global_variables_initializer()
sess3.run(init)
w_val, w2_val = sess3.run([weights, w2])
print("weights =\n", w_val.round(3))
print("counter after 3 steps:", [int(sess3.run(step)) for _ in range(3)])  # the value persists across runs

assert np.allclose(w2_val, 2 * w_val)
assert int(sess3.run(counter)) == 3
sess3.run(reset)
assert int(sess3.run(counter)) == 10
sess3.close()

# %% [markdown]
# 更新变量的方式有两类：强制赋值（`assign`、`assign_add`、`assign_sub`，上面用到的就是）和由优化器
# (optimizer) 自动更新（`aics.train.GradientDescentOptimizer` 等，训练那一章再讲）。

# %% [markdown]
# ## 6. 占位符 (placeholder) 与 `feed_dict`
#
# 如果每个训练样本都用 `constant` 放进图里，图会越变越大。占位符只在图中占一个节点，没有值，
# 在 `run` 时通过 `feed_dict` 填入数据。`aics.placeholder(dtype, shape=None, name=None)`：
# `shape` 中的 `None` 表示这一维在运行时才确定（常用于批大小）。

# %%
g4 = aics.Graph()
with g4.as_default():
    xp = aics.placeholder(aics.float32, shape=(1, 2), name="x")
    batch = aics.placeholder(aics.float32, shape=(None, 2), name="batch")
    wp = aics.constant([[2.], [2.]], name="w")
    yp = aics.matmul(xp, wp, name="y")
    yb = aics.matmul(batch, wp, name="y_batch")

sess4 = aics.Session(graph=g4)
y_1 = sess4.run(yp, feed_dict={xp: [[0.7, 0.9]]})
y_b = sess4.run(yb, feed_dict={batch: np.arange(6, dtype=np.float32).reshape(3, 2)})
print("y   =", y_1.tolist())
print("y_b =", y_b.ravel().tolist())
assert np.allclose(y_1, [[3.2]]) and y_b.shape == (3, 1) and y_b.ravel().tolist() == [2., 10., 18.]

# %% [markdown]
# 占位符的形状和类型在填充时会被检查。下面故意犯两个常见错误：形状不对，以及忘记填充：

# %%
try:
    sess4.run(yp, feed_dict={xp: [0.7, 0.9]})  # shape (2,) instead of (1, 2)
    raise AssertionError("a wrong-shape feed must fail")
except ValueError as e:
    print("ValueError:", e)
    assert "Cannot feed value of shape (2,) for Tensor 'x:0', which has shape (1, 2)" in str(e)

try:
    sess4.run(yp)  # nothing fed
    raise AssertionError("a missing feed must fail")
except aics.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", e)
sess4.close()

# %% [markdown]
# ## 7. 设备 (device) 与软放置 (soft placement)
#
# `aics.device(name)` 指定其中创建的操作在哪个设备上运行：所有 CPU 统称 `/cpu:0`，第 n 个 GPU 为 `/gpu:n`，
# 第 n 个深度学习处理器 (MLU) 为 `/mlu:n`。`aicslib` 中的 MLU 是**模拟**的：只有部分算子（`MatMul` 和逐元素
# 加减乘除）注册了 MLU 内核 (kernel)。会话放置节点时，若请求的设备上没有该算子的内核，就按
# `ConfigProto(allow_soft_placement=True)`（默认）**软放置**到 CPU，并在 VLOG 1 级日志中说明。
#
# 两种查看放置结果的方法：
#
# * `ConfigProto(log_device_placement=True)`：打印每个节点最终放在哪里；
# * 环境变量 `AICS_MIN_VLOG_LEVEL`（对应 TensorFlow 的 `TF_CPP_MIN_VLOG_LEVEL`）：1 级打印剪枝与软放置，
#   2 级打印每个节点的放置，3 级打印每次内核执行。在运行中的进程里修改环境变量后要调用 `flags.reload()`。
#
# 下面在课件的例子上多加一个 `reduce_sum`，它在 MLU 上没有内核：

# %%
g5 = aics.Graph()
with g5.as_default():
    with aics.device("/cpu:0"):
        a5 = aics.constant([[3., 3.]], name="a")
        b5 = aics.constant([[2.], [2.]], name="b")
    with aics.device("/mlu:0"):
        y5 = aics.matmul(a5, b5, name="y")
        s5 = aics.reduce_sum(y5, name="s")

print("requested:", {op.name: op.device for op in g5.get_operations()})
config = aics.ConfigProto(log_device_placement=True)
with aics.Session(graph=g5, config=config) as sess:
    print("s =", sess.run(s5))

# %%
os.environ["AICS_MIN_VLOG_LEVEL"] = "1"
flags.reload()
try:
    with aics.Session(graph=g5) as sess:
        md5 = aics.RunMetadata()
        result = sess.run(s5, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                          run_metadata=md5)
finally:
    os.environ["AICS_MIN_VLOG_LEVEL"] = "0"
    flags.reload()

placed = {r.node_name: r.device for r in timeline_rows(md5)}
print("placed:", placed)
assert result == 12.0
assert s5.op.device == "/device:MLU:0" and placed["s"] == "/device:CPU:0"   # soft placement
assert placed["y"] == "/device:MLU:0"                                        # MatMul has an MLU kernel

# %% [markdown]
# 关掉软放置后，同样的图会在放置阶段直接报错，错误信息指出是哪个节点、缺哪个设备的内核：

# %%
try:
    with aics.Session(graph=g5, config=aics.ConfigProto(allow_soft_placement=False)) as sess:
        sess.run(s5)
    raise AssertionError("placement without soft placement must fail")
except aics.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", e)

# %% [markdown]
# ## 8. 队列 (queue)
#
# 课件的最后一个概念是队列：`FIFOQueue`（先进先出）和 `RandomShuffleQueue` 把“读数据”和“算数据”拆到不同线程，
# 是有状态的操作，入队满时阻塞、出队空时阻塞。`aicslib` 的队列属于训练那一章（输入流水线）；
# 如果当前版本已经提供 `aics.FIFOQueue`，下面的单元格就运行课件中的例子，否则只给出说明。

# %%
if hasattr(aics, "FIFOQueue"):
    gq = aics.Graph()
    with gq.as_default():
        q = aics.FIFOQueue(3, aics.float32, shapes=[[]])
        q_init = q.enqueue_many([[0., 0., 0.]])
        xq = q.dequeue()
        q_inc = q.enqueue([xq + 1])
        q_all = q.dequeue_many(3)
    with aics.Session(graph=gq) as sess:
        q_init.run()
        for _ in range(4):
            q_inc.run()
        left = sorted(np.ravel(sess.run(q_all)).tolist())
    print("after 4 increments the queue holds", left)
    assert left == [1.0, 1.0, 2.0]
else:
    print("aics.FIFOQueue is not available in this version of aicslib: see the training chapter.")

# %% [markdown]
# ## 9. 运行元数据与时间线 (timeline)
#
# `run` 的 `options` 和 `run_metadata` 参数用来收集“非张量”的运行信息。给出
# `RunOptions(trace_level=RunOptions.FULL_TRACE)` 时，会话把每个节点的设备、开始时间和耗时写进
# `RunMetadata.step_stats`。`aicslib.visualize.plot_timeline` 把它画成甘特图。下面是一个两层全连接网络的前向计算：

# %%
g6 = aics.Graph()
with g6.as_default():
    aics.set_random_seed(1)
    inp = aics.placeholder(aics.float32, shape=(None, 64), name="input")
    with aics.device("/mlu:0"):
        w1 = aics.Variable(aics.random_normal([64, 128], stddev=0.1), name="w1")
        h = aics.tanh(aics.matmul(inp, w1), name="hidden")
        w2_ = aics.Variable(aics.random_normal([128, 10], stddev=0.1), name="w2")
        logits = aics.matmul(h, w2_, name="logits")
    loss6 = aics.reduce_mean(aics.square(logits), name="loss")
    init6 = aics.global_variables_initializer()

rng = np.random.default_rng(0)
batch6 = rng.standard_normal((32, 64)).astype(np.float32)
with aics.Session(graph=g6) as sess:
    sess.run(init6)
    sess.run(loss6, feed_dict={inp: batch6})  # warm-up: the first call pays one-off set-up costs
    md6 = aics.RunMetadata()
    loss_val = sess.run(loss6, feed_dict={inp: batch6},
                        options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md6)

rows = timeline_rows(md6)
print(f"loss = {loss_val:.4f}; {len(rows)} nodes traced")
ax = plot_timeline(md6)
ax.set_title("one Session.run of a 2-layer MLP (FULL_TRACE)")
plt.show()

# Only the nodes the fetch needs were run: the initializers were pruned.
assert {r.node_name for r in rows} == needed_ops(g6, loss6, feeds={inp: batch6})
assert not any("Assign" in r.node_name for r in rows)

# %% [markdown]
# 条形的长度是内核本身的耗时；条与条之间的空隙是执行器自己的开销（取输入、调用内核、记录时间）。
# 小算子时这部分开销不可忽略——`01` 号笔记本会测量它，并和立即执行模式的逐操作调度开销比较。
# 请对照颜色：请求放在 `/mlu:0` 上的 `MatMul` 真的在 MLU 上运行，而 `Tanh`、变量读取等没有 MLU 内核的节点被软放置到了 CPU。

# %% [markdown]
# ## 10. 动手：选一个取值 (fetch)，看会话剪掉了哪些节点
#
# 下面的小部件 (widget) 列出图 `g6` 里所有节点。选择一个作为 `fetches`，单元格会：
#
# 1. 用 `needed_ops` 计算它依赖的节点（沿数据边和控制边往回走），其余节点画成灰色；
# 2. 真的用 `Session.run` 跑一次（`FULL_TRACE`），节点按**实际运行的设备**着色，所以软放置到 CPU 的节点会变色；
# 3. 核对：会话实际执行的节点集合与 `needed_ops` 算出的完全相同。
#
# 勾掉“按实际设备着色”则按请求的设备 (`op.device`) 着色。

# %%
def named_by_the_code(op):
    """A name the code gave (input, w1, loss): not inside a scope (w1/Assign, random_normal/mul) and
    not the op type's default name (MatMul, ReadVariableOp_1)."""
    return "/" not in op.name and op.name.split("_")[0] != op.type


# The names this cell's code chose come first, then the nodes the library added (initializers, reads).
fetchable = [op for op in g6.get_operations() if op.outputs or op.type.startswith("Assign")]
fetch_names = ([op.name for op in fetchable if named_by_the_code(op)]
               + [op.name for op in fetchable if not named_by_the_code(op)])
print("named by the code:", [n for n in fetch_names if named_by_the_code(g6.get_operation_by_name(n))])
fetch_picker = widgets.Dropdown(options=fetch_names, value="loss", description="fetch (取值的节点)",
                                style={"description_width": "initial"})
use_placement = widgets.Checkbox(value=True, description="按实际设备着色", style={"description_width": "initial"})
graph_out = widgets.Output()

def show_fetch(fetch_name, by_placement=True, plot=True):
    """Runs `fetch_name` with FULL_TRACE; draws the graph (if `plot`); returns the needed node set."""
    el = g6.as_graph_element(fetch_name)
    fetch = el.outputs[0] if el.outputs else el
    with aics.Session(graph=g6) as sess:
        sess.run(init6)
        md = aics.RunMetadata()
        sess.run(fetch, feed_dict={inp: batch6},
                 options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
    ran = {r.node_name: r.device for r in timeline_rows(md)}
    need = needed_ops(g6, fetch, feeds={inp: batch6})
    if plot:
        # Left to right (sources on the left): the nodes sit in short columns; 15 inches wide, the
        # longest op type (RandomStandardNormal) fits inside its box at 7 points.
        ax = draw_graph(g6, fetches=fetch, feeds={inp: batch6}, placement=ran if by_placement else None,
                        rankdir="LR", figsize=(15, 8), fontsize=7)
        ax.set_title(f"fetch = {fetch_name}: {len(need)} of {len(g6.get_operations())} nodes needed")
        plt.show()
    print(f"fetch {fetch_name!r}: nodes run by the Session:", sorted(ran))
    assert set(ran) == need  # the Session ran exactly the needed set (the fed input is a cut)
    return need

def _on_change(change=None):
    graph_out.clear_output(wait=True)
    with graph_out:
        show_fetch(fetch_picker.value, use_placement.value)

fetch_picker.observe(_on_change, names="value")
use_placement.observe(_on_change, names="value")
display(widgets.VBox([widgets.HBox([fetch_picker, use_placement]), graph_out]))
_on_change()

# The same function, called directly without drawing (the widget above already shows the graph).
need_hidden = show_fetch("hidden", plot=False)
assert "logits" not in need_hidden and "w1" in need_hidden and "input" not in need_hidden

# %% [markdown]
# ## 11. 练习：一个线性层
#
# 用本章的概念搭一个线性层 $y = xW + b$。补全 `linear_layer(x_val)`：
#
# * 新建一张图 `graph = aics.Graph()`，在其中构建：
#   * `x`：`float32` 占位符，形状 `(None, 3)`，名字 `"x"`；
#   * `W`：变量，初值为 3×2 的全 1 矩阵，名字 `"W"`；`b`：变量，初值 `[0.5, -0.5]`，名字 `"b"`；
#   * `y`：名字为 `"y"` 的张量（提示：`aics.add(..., name="y")`）；
# * 在会话里初始化变量，把 `x_val` 通过 `feed_dict` 填给 `x`，**用 `sess.run` 取出** `y` 的值 `y_val`（NumPy 数组）；
# * 返回 `(graph, y_val)`。
#
# 注意：`y_val` 必须是会话运行这张图得到的结果——在图旁边用 NumPy 算出同样的数不算数，测试会检查。
# 写完后运行下面锁定的测试单元格：它检查图的结构（名字、形状、变量）和会话取出的值，不通过时说明期望什么、得到了什么。

# %% nbgrader={"grade": false, "grade_id": "linear_layer", "locked": false, "schema_version": 3, "solution": true, "task": false}
def linear_layer(x_val):
    """Builds y = xW + b in a new graph, runs it on x_val; returns (graph, y_val)."""
    ### BEGIN SOLUTION
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, shape=(None, 3), name="x")
        W = aics.Variable(aics.ones([3, 2]), name="W")
        b = aics.Variable([0.5, -0.5], name="b")
        y = aics.add(aics.matmul(x, W), b, name="y")
        init = aics.global_variables_initializer()
    with aics.Session(graph=graph) as sess:
        sess.run(init)
        y_val = sess.run(y, feed_dict={x: x_val})
    return graph, y_val
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "linear_layer_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): the graph's structure, and that y_val is what a Session run of that graph
# returned for the fed x (a NumPy value computed beside the graph does not count).
def _run_recorded(fn, *args):
    """Calls fn(*args) while recording every Session.run: [(feed names -> values, result)]."""
    runs, original = [], aics.Session.run

    def recording_run(self, fetches, feed_dict=None, *a, **kw):
        result = original(self, fetches, feed_dict, *a, **kw)
        feeds = {getattr(k, "name", k): np.asarray(v) for k, v in (feed_dict or {}).items()}
        runs.append((feeds, result))
        return result
    aics.Session.run = recording_run
    try:
        return fn(*args), runs
    finally:
        aics.Session.run = original


def _expected_y(xv):
    return np.asarray(xv, np.float64) @ np.ones((3, 2)) + np.array([0.5, -0.5])


def _check_linear_layer(xv):
    out, runs = _run_recorded(linear_layer, xv)
    grading.check(isinstance(out, (tuple, list)) and len(out) == 2,
                  f"linear_layer must return (graph, y_val), got {type(out).__name__}")
    graph, yv = out
    grading.check(isinstance(graph, aics.Graph),
                  f"the first value returned must be the aics.Graph you built, got {type(graph).__name__}")
    ops = {op.name: op for op in graph.get_operations()}
    grading.check("x" in ops, "your graph has no op named 'x': aics.placeholder(aics.float32, shape=(None, 3), name=\"x\")")
    x_t = ops["x"].outputs[0]
    grading.check(ops["x"].type == "Placeholder", f"'x' must be a placeholder, it is a {ops['x'].type} op")
    grading.check(x_t.dtype == aics.float32, f"placeholder x: expected dtype float32, got {x_t.dtype.name}")
    grading.check(x_t.shape.as_list() == [None, 3],
                  f"placeholder x: expected shape (None, 3) (None: any batch size), got {x_t.shape}")
    variables = sorted(v.name for v in graph.get_collection(aics.GraphKeys.GLOBAL_VARIABLES))
    grading.check(variables == ["W:0", "b:0"],
                  f"expected exactly two variables, named 'W' and 'b' (aics.Variable(..., name=\"W\")), "
                  f"found {variables}")
    grading.check("y" in ops, "your graph has no tensor named 'y:0': give the result name=\"y\", "
                              "e.g. aics.add(..., name=\"y\")")
    y_t = ops["y"].outputs[0]
    grading.check(y_t.shape.as_list() == [None, 2], f"tensor y: expected shape (None, 2), got {y_t.shape}")
    grading.check(isinstance(yv, np.ndarray),
                  f"y_val must be the NumPy array sess.run returns, got {type(yv).__name__}")
    grading.check_array(yv, _expected_y(xv), "y_val", atol=1e-5,
                        hint="y = xW + b with W a 3x2 matrix of ones and b = [0.5, -0.5]")
    fed = [result for feeds, result in runs
           if any(np.array_equal(v, xv) for k, v in feeds.items() if str(k).startswith("x"))]
    grading.check(fed, "y_val must come from sess.run(y, feed_dict={x: x_val}): no Session.run fed x_val to x")
    grading.check(any(np.size(r) == yv.size and np.array_equal(np.asarray(r, np.float64).reshape(yv.shape), yv)
                      for r in fed),
                  "y_val is not the value the Session returned when x_val was fed: return what sess.run gives")
    # The graph itself computes xW + b for any input, not only for x_val.
    other = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    with aics.Session(graph=graph) as sess:
        sess.run([v.initializer for v in graph.get_collection(aics.GraphKeys.GLOBAL_VARIABLES)])
        got = sess.run(y_t, feed_dict={x_t: other})
    grading.check_array(got, _expected_y(other), "your graph's y for another batch of 4 rows fed to x", atol=1e-5,
                        hint="y must be computed in the graph from the placeholder x, the variables W and b")


with grading.exercise("linear_layer"):
    _check_linear_layer(np.array([[1., 2., 3.], [0., -1., 4.]], dtype=np.float32))
    ### BEGIN HIDDEN TESTS
    _check_linear_layer(np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32))
    ### END HIDDEN TESTS

# %% [markdown]
# ## 12. 练习：不运行图，预测形状
#
# 第 1 节看到，图在**构建**时就知道结果的形状：每个操作有一个形状函数 (shape function)，按输入的**静态形状**
# (static shape) 推出输出的静态形状，`None` 表示要等 feed 时才知道的维。`a + b` 这样的逐元素运算按 NumPy 的
# **广播 (broadcasting)** 规则：两个形状右对齐，短的左边补 1；每一维上，一边是 1 就取另一边，两边相等就取这个值，
# 两边是不同的已知值（都不是 1）就不兼容——构建图时就报错，不必等到运行。
#
# 有 `None` 时要想一想：`None` 将来可能是 1，也可能是别的数。结果的某一维只有在**所有能成功广播的取值**下都一样时
# 才是已知的，否则是 `None`；没有任何取值能成功广播，就是不兼容。
#
# 补全 `predict_add_shape(shape_a, shape_b)`：`shape_a`、`shape_b` 是由整数和 `None` 组成的列表（可以是空列表，
# 即标量），返回 `a + b` 的静态形状（同样格式的列表）；不兼容时抛出 `ValueError`。自己写规则，不要构建图、
# 也不要调用 `aicslib`。测试用很多随机的形状对比较你的预测和图里 `aics.add` 的实际静态形状。

# %%
g_shapes = aics.Graph()
with g_shapes.as_default():
    images = aics.placeholder(aics.float32, [None, 28, 28, 1], name="images")
    mean_per_pixel = aics.placeholder(aics.float32, [28, 28, None], name="mean")
    centred = images - mean_per_pixel
print("images:", images.shape, "| mean:", mean_per_pixel.shape, "| images - mean:", centred.shape)

# %% nbgrader={"grade": false, "grade_id": "predict_add_shape", "locked": false, "schema_version": 3, "solution": true, "task": false}
def predict_add_shape(shape_a, shape_b):
    """The static shape of a + b for shapes a, b given as lists of ints and None; ValueError if incompatible."""
    ### BEGIN SOLUTION
    n = max(len(shape_a), len(shape_b))
    a = [1] * (n - len(shape_a)) + list(shape_a)
    b = [1] * (n - len(shape_b)) + list(shape_b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y}")
    return out
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "predict_add_shape_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): the prediction against the static shape aics.add gives in a graph and
# against a brute force over the values the unknown dimensions could take; ValueError exactly when
# no values broadcast; by hand (no aicslib call, no graph built).
from workbook.references import shapes as _shapes_reference


def _graph_add_shape(a, b):
    with aics.Graph().as_default():
        try:
            return aics.add(aics.placeholder(aics.float32, a), aics.placeholder(aics.float32, b)).shape.as_list()
        except ValueError:
            return "error"


def _check_add_shape(a, b):
    try:
        expected = _shapes_reference.broadcast_static(a, b)
    except ValueError:
        expected = "error"
    assert expected == _graph_add_shape(a, b), (a, b)       # the library's shape function agrees
    try:
        got = grading.no_library_calls(predict_add_shape, list(a), list(b), what="predict_add_shape",
                                       how="from the broadcasting rule")
    except ValueError as e:
        grading.check(expected == "error", f"predict_add_shape({a}, {b}) raised ValueError ({e}), but they "
                                           f"broadcast to {expected}")
        return
    grading.check(expected != "error", f"predict_add_shape({a}, {b}) returned {got!r}, but these shapes cannot "
                                       f"be broadcast: raise ValueError (aics.add refuses to build that node)")
    grading.check(isinstance(got, (list, tuple)) and list(got) == expected,
                  f"predict_add_shape({a}, {b}): expected {expected}, got {got!r}")


with grading.exercise("predict_add_shape"):
    for _a, _b in [([None, 28, 28, 1], [28, 28, None]), ([2, 3], [3]), ([], [4, None]), ([None], [1]),
                   ([None], [None]), ([None, 4], [3, 1]), ([5, 1], [1, 7]), ([3], [4])]:
        _check_add_shape(_a, _b)
    ### BEGIN HIDDEN TESTS
    _rng_shapes = np.random.default_rng(12)
    for _ in range(150):
        _ra, _rb = (int(r) for r in _rng_shapes.integers(0, 5, 2))
        _a, _b = ([None if d == 0 else int(d) for d in _rng_shapes.integers(0, 4, r)] for r in (_ra, _rb))
        _check_add_shape(a=_a, b=_b)
    for _a, _b in [([None, 3], [None, 1]), ([1, None], [None, 1]), ([2, None], [3, 1]), ([None, 4], [4, None, 1])]:
        _check_add_shape(a=_a, b=_b)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 小结
#
# | 概念 | 在 `aicslib` 中 | 对应神经网络中的 |
# |---|---|---|
# | 计算图 | `aics.Graph`，`with g.as_default():` | 网络结构 |
# | 操作 | `aics.Operation`：`name/type/inputs/outputs/control_inputs/device/graph/traceback` | 具体计算 |
# | 张量 | `aics.Tensor`：`dtype/shape/name/op/device/graph`，只是引用，没有值 | 层间流动的数据 |
# | 会话 | `aics.Session`：`run`（可取多个、嵌套结构）、`eval`、`close`/`with` | 训练与预测的执行 |
# | 变量 | `aics.Variable`：必须先初始化，值跨 `run` 保留，`assign*` 更新 | 模型参数 |
# | 占位符 | `aics.placeholder` + `feed_dict`，形状和类型在填充时检查 | 训练/预测输入 |
# | 设备 | `aics.device('/cpu:0' / '/mlu:0')`，无内核时软放置到 CPU | 异构计算 |
# | 队列 | `FIFOQueue` / `RandomShuffleQueue`（训练一章） | 多线程输入流水线 |
#
# 静态形状 (static shape) 在构建图时就由形状函数推出（`None` 是 feed 时才知道的维），广播规则不兼容的形状在构建时就报错（第 12 节的练习）。
#
# 另外两点会贯穿后面的章节：会话只执行取值所需的子图（剪枝，习题 5.10 会看它的日志），
# 以及 `RunMetadata` 能告诉我们每个节点在哪个设备上花了多少时间。下一本笔记本 `01-eager-vs-static.ipynb`
# 把同样的计算用立即执行模式写一遍，并实测两种模式的优缺点（习题 5.1、5.2）。
