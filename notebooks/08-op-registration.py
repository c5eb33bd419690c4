# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 08 算子注册与自动求导：梯度注册与一个新算子
#
# **前置章节 (prerequisites)**：[01 eager-vs-static](01-eager-vs-static.ipynb)、[04 mnist-mlp](04-mnist-mlp.ipynb)
#
# **对应习题**：5.5（在 TensorFlow 的 `python/ops` 中找到 Sin 和 MaxPool 的梯度注册代码，学习 Python 层的算子注册）；
# 5.6（算子注册流程）在下一章 [09 registration-flow](09-registration-flow.ipynb)。
#
# TensorFlow 把一个算子 (op) 拆成三处分别登记：
#
# | 登记什么 | TensorFlow | aicslib |
# |---|---|---|
# | 算子定义 (OpDef)：输入、输出、属性 (attr)、形状函数 (shape function) | `core/ops/*_ops.cc` 里的 `REGISTER_OP` | `aicslib/ops/*_ops.py` 里的 `aics.register_op` |
# | 核函数 (kernel)：某种设备 (device)、某种数据类型 (dtype) 上的具体实现 | `core/kernels/*.cc` 里的 `REGISTER_KERNEL_BUILDER` | `aicslib/kernels/*.py` 里的 `@aics.register_kernel` |
# | 梯度函数 (gradient function) | `python/ops/*_grad.py` 里的 `@ops.RegisterGradient` | `aicslib/ops/*_grad.py` 里的 `@aics.RegisterGradient` |
#
# 本章的学习目标：
#
# 1. 用内省 (introspection) 工具 `aics.introspect` 找到任意算子的定义、kernel 和梯度在源码中的位置，并与 TensorFlow 的源文件逐一对照；
# 2. 用数值梯度检查 (numerical gradient check) 验证梯度；弄清 MaxPool 在窗口里出现并列最大值 (tie) 时梯度交给谁；
# 3. **实验**：自己加一个新算子 `PowerDifference`（AICS 实验里的 $(x-y)^{pow}$）：OpDef 与形状函数、CPU kernel、梯度，
#    并在 eager、静态图 (graph) 和 `aics.function` 中使用它。
#
# 注册的流程本身（spec 字符串 → `OpDefBuilder` → `OpDef` → 注册表，kernel 的查找与软放置 (soft placement)，一次调用走过的路）
# 和给 `Tan` 注册梯度的练习在下一章 [09 registration-flow](09-registration-flow.ipynb)；
# 再后面的 [10 graph-gradients](10-graph-gradients.ipynb) 把单个算子的梯度函数串起来：自己写图上的 `gradients(ys, xs, grad_ys)`。
#
# **练习**（自动评分，共 8 分）：第 2 节的 `define_power_difference`（3 分）、`power_difference_kernel`（2 分）、
# `power_difference_grad`（3 分）。
# 没做完或没通过测试时，后面的单元格改用参考实现（并打印说明），笔记本仍能一直运行到底。运行时间见下面第一个代码单元格的输出（实测）。
#
# > 注册表是**进程级全局**的。第 2 节开头用 `aics.experimental.registration_scope()` 记下注册表此刻的状态，本章最后一个单元格把它原样恢复；各个注册单元格都可以反复运行。

# %%
import inspect
import os

import numpy as np
import matplotlib.pyplot as plt

import aicslib as aics
from aicslib.ops.math_grad import sum_to_shape   # reduces a broadcast gradient to an input's shape
from workbook import grading, run_times

np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)                   # every random input below comes from this stream
run_times.show("op-registration")
print(f"aicslib {aics.__version__}: {len(aics.introspect.list_ops())} ops registered, "
      f"AICS_FAST={aics.flags.FAST}")

# %% [markdown]
# ## 1 习题 5.5：找到 Sin 和 MaxPool 的梯度注册
#
# ### 1.1 Sin：从注册表反查源码位置
#
# 每一次注册都会记下源码位置：算子定义记下写着算子名的那一行，kernel 和梯度记下实现它的函数（`def` 所在处，
# 有装饰器时是装饰器那一行）。`aics.introspect.where(op_type)` 返回三类注册各自的位置，
# `aics.introspect.TF_SOURCE_MAP` 则说明同样的东西在 TensorFlow 仓库里放在哪里。
# Sin 这样的逐元素算子 (elementwise op) 在 aicslib 里由一张表 `aicslib/framework/cwise_table.py` 给出：
# 一行写明算子名、输入个数、dtype 和计算它的 NumPy 函数，算子定义和 kernel 都注册在这一行
# （TensorFlow 把同样的内容分在 `core/ops/math_ops.cc` 的一行定义和 `core/kernels/cwise_op_sin.cc` 的 kernel 注册里）。

# %%
for kind, tf_path in aics.introspect.TF_SOURCE_MAP.items():
    print(f"{kind:15s} TensorFlow: {tf_path}")
print()
w_sin = aics.introspect.where("Sin")
for key, value in w_sin.items():
    print(f"{key:9s} {value}")

assert w_sin["op"].startswith("aicslib/framework/cwise_table.py:")
assert w_sin["kernels"][0]["location"] == w_sin["op"]   # the same row
assert w_sin["gradient"].startswith("aicslib/ops/math_grad.py:")
assert [k["device"] for k in w_sin["kernels"]] == ["CPU"]

# %% [markdown]
# 梯度函数本身就是一个普通的 Python 函数，`gradient_source` 直接打印它的源码：

# %%
print(aics.introspect.gradient_source("Sin"))

# %% [markdown]
# **与 TensorFlow 对照。** TensorFlow 的对应代码在 `tensorflow/python/ops/math_grad.py`，函数名 `_SinGrad`（TF 2.x 的写法）：
#
# ```python
# @ops.RegisterGradient("Sin")
# def _SinGrad(op, grad):
#   """Returns grad * cos(x)."""
#   x = op.inputs[0]
#   with ops.control_dependencies([grad]):
#     x = math_ops.conj(x)
#     return grad * math_ops.cos(x)
# ```
#
# 两者的骨架完全相同：
#
# * 装饰器以**算子类型名**（字符串 `"Sin"`）为键，把函数放进梯度注册表；
# * 函数签名都是 `(op, grad)`：`op` 是前向算子（从中取 `op.inputs`、`op.outputs`、`op.get_attr(...)`），`grad` 是损失对该算子输出的梯度；
# * 返回值是损失对每个输入的梯度，即链式法则 $\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}\cos x$；
# * 梯度**用算子写成**（`cos`、乘法），而不是直接用 NumPy 算数值，所以同一个函数既能在静态图里生成反向子图，也能在 eager 模式下被 `GradientTape` 调用，还能再被求导（高阶导数）。
#
# TensorFlow 的版本里还有两处值得一说：`control_dependencies([grad])` 让 `cos(x)` 等上游梯度算出来之后才执行，避免它在前向阶段就被提前调度、长期占用内存（aicslib 没有这一行）；
# `conj` 是为复数输入准备的：对复数，TensorFlow 的梯度约定是上游梯度乘以导数的**共轭** $\overline{\cos x}$。
# aicslib 也有复数类型 `complex64`/`complex128`，`_sin_grad` 同样调用了 `conj`（对实数张量它原样返回输入）。
# 下面打印两者的差别：aicslib 的 Sin 只允许实数类型，所以这里的 `conj` 总是原样返回；而 Mul 接受复数，
# $y = x\,c$ 对 $x$ 的梯度就是 $\bar c$，可以直接看到共轭。

# %%
print("Sin allows T in:", [t.name for t in aics.op_def_registry.get("Sin").attr[0].allowed_values])
print("Mul allows T in:", [t.name for t in aics.op_def_registry.get("Mul").attr[0].allowed_values])
x_c = aics.constant(np.array([0.5 + 1j, -1 + 0.25j], dtype=np.complex128))
c_c = aics.constant(np.array([2 - 1j, 1j], dtype=np.complex128))
with aics.GradientTape() as tape:
    tape.watch(x_c)
    y_c = x_c * c_c
dx_c = tape.gradient(y_c, x_c).numpy()
print("c =", c_c.numpy(), "| d(x*c)/dx with grad 1 =", dx_c)
assert np.array_equal(dx_c, np.conj(c_c.numpy()))
assert "conj(" in aics.introspect.gradient_source("Sin")

# %% [markdown]
# `math_grad.py` 里还注册了很多别的算子。按梯度所在文件筛选注册表，就能列出“相关文件里注册的其他算子”：

# %%
in_math_grad = [op for op in aics.introspect.list_ops()
                if (aics.introspect.where(op)["gradient"] or "").startswith("aicslib/ops/math_grad.py")]
differentiable, not_differentiable = aics.introspect.list_gradients()
print(f"{len(in_math_grad)} gradients registered in aicslib/ops/math_grad.py:")
print(", ".join(in_math_grad))
print(f"\nwhole registry: {len(differentiable)} differentiable op types, "
      f"{len(not_differentiable)} marked with no_gradient (e.g. {', '.join(not_differentiable[:4])})")
assert "Sin" in in_math_grad and "Cos" in in_math_grad

# %% [markdown]
# ### 1.2 数值验证 Sin 的梯度
#
# `aics.test.compute_gradient(f, [x])` 和 `tf.test.compute_gradient` 一样返回两个雅可比矩阵 (Jacobian)：
# 理论值 (theoretical) 来自注册的梯度函数，数值值 (numerical) 来自 float64 下的中心差分 (central difference)
# $\frac{f(x+\delta)-f(x-\delta)}{2\delta}$。逐元素算子的雅可比矩阵是对角阵，对角线应当等于 $\cos x$。

# %%
x0 = np.linspace(-3.0, 3.0, 7)
theoretical, numerical = aics.test.compute_gradient(aics.sin, [x0])
err_sin = aics.test.max_error(theoretical, numerical)
print("diag(theoretical):", np.diag(theoretical[0]))
print("cos(x):           ", np.cos(x0))
print("max_error:", err_sin)
assert err_sin < 1e-6
assert np.allclose(np.diag(theoretical[0]), np.cos(x0))

# %% [markdown]
# 因为梯度是用算子写的，二阶导数不需要任何额外代码：把一个 `GradientTape` 套在另一个外面即可，$\frac{d^2}{dx^2}\sin x = -\sin x$。

# %%
x = aics.constant(x0)
with aics.GradientTape() as outer:
    outer.watch(x)
    with aics.GradientTape() as inner:
        inner.watch(x)
        y = aics.sin(x)
    dy = inner.gradient(y, x)        # cos(x), built from the Cos op -> recorded by `outer`
d2y = outer.gradient(dy, x)          # goes through Cos's own registered gradient
print(d2y.numpy())
assert np.allclose(d2y.numpy(), -np.sin(x0))

# %% [markdown]
# ### 1.3 MaxPool：梯度注册与对应的 TensorFlow 代码
#
# `aics.nn.max_pool(input, ksize, strides, padding, data_format="NHWC")` 生成类型为 `MaxPool` 的算子。同样用内省工具找到它的三处注册：

# %%
w_pool = aics.introspect.where("MaxPool")
for key, value in w_pool.items():
    print(f"{key:9s} {value}")
print()
print(aics.introspect.gradient_source("MaxPool"))
assert w_pool["gradient"].startswith("aicslib/ops/nn_grad.py:")

# %% [markdown]
# **与 TensorFlow 对照。** TensorFlow 的代码在 `tensorflow/python/ops/nn_grad.py`，函数名 `_MaxPoolGrad`：
#
# ```python
# @ops.RegisterGradient("MaxPool")
# def _MaxPoolGrad(op, grad):
#   return gen_nn_ops.max_pool_grad(
#       op.inputs[0],
#       op.outputs[0],
#       grad,
#       op.get_attr("ksize"),
#       op.get_attr("strides"),
#       padding=op.get_attr("padding"),
#       data_format=op.get_attr("data_format"))
# ```
#
# （较新的版本还多传一个 `explicit_paddings`。）和 Sin 不同，MaxPool 的 Python 层梯度几乎什么都不算：它只是把前向的输入 `op.inputs[0]`、
# 前向的输出 `op.outputs[0]`、上游梯度 `grad` 和前向的属性原样交给**另一个算子** `MaxPoolGrad`。真正的工作在 `MaxPoolGrad` 的
# C++ kernel（`tensorflow/core/kernels/maxpooling_op.cc`）里完成：它根据输入和输出重新找出每个窗口的最大值位置，再把梯度送回那个位置。
# “梯度函数 = 用已有算子搭出来的子图，必要时为反向专门注册一个新算子”，这是 TensorFlow 里很常见的模式。

# %% [markdown]
# `MaxPoolGrad` 的 kernel 在 `aicslib/kernels/pooling_ops.py`（对应 TensorFlow 的 `core/kernels/maxpooling_op.cc`）。
# kernel 函数本身只是整理数据布局，真正的计算在 `max_pool_grad` 里：它按行优先顺序逐个取窗口内的位置 (tap) `(i, j)`，
# `_first_max_masks` 用一个 `taken` 掩码保证每个窗口只有**第一个**等于最大值的位置被选中；`dst += ...` 则让重叠窗口的梯度在同一输入位置上累加。

# %%
kd_pool_grad = aics.kernel_registry.find("MaxPoolGrad", "CPU", {"T": aics.float64})
pooling_kernels = inspect.getmodule(kd_pool_grad.impl)
print(aics.introspect.kernel_source("MaxPoolGrad"))
print(inspect.getsource(pooling_kernels.max_pool_grad))
print(inspect.getsource(pooling_kernels._first_max_masks))

# %%
x_pool = rng.standard_normal((1, 4, 4, 2))      # continuous random values: no ties
for ksize, strides, padding in [(2, 2, "VALID"), (3, 1, "SAME")]:
    f = lambda t: aics.nn.max_pool(t, ksize=ksize, strides=strides, padding=padding)
    theoretical, numerical = aics.test.compute_gradient(f, [x_pool])
    err = aics.test.max_error(theoretical, numerical)
    print(f"ksize={ksize} strides={strides} {padding:5s}: Jacobian {theoretical[0].shape}, max_error={err:.2e}")
    assert err < 1e-6

# %% [markdown]
# ### 1.4 并列最大值 (tie) 时梯度给谁？
#
# 数学上，窗口里有两个相同的最大值时 max 不可导。TensorFlow 的 CPU kernel 的约定是：
# **在每个窗口里按行优先 (row-major) 顺序扫描，只在遇到严格更大的值时才更新最大值位置，因此第一个最大值拿走整个梯度**；
# 窗口有重叠时，一个输入位置可能是多个窗口的最大值，它收到的梯度**累加**。aicslib 遵守同样的规则。
#
# 下面是一个 4×4 的输入，2×2 窗口、步长 1（窗口互相重叠），输出 3×3。上游梯度取 1…9，便于看出每个数去了哪里：
#
# | 窗口(行,列) | 窗口内容 | 最大值 | 梯度去向（第一个最大值） |
# |---|---|---|---|
# | (0,0) | 1 3 / 2 3 | 3 | (0,1) ← 1 |
# | (0,1) | 3 3 / 3 1 | 3 | (0,1) ← 2 |
# | (0,2) | 3 0 / 1 1 | 3 | (0,2) ← 3 |
# | (1,0) | 2 3 / 0 1 | 3 | (1,1) ← 4 |
# | (1,1) | 3 1 / 1 5 | 5 | (2,2) ← 5 |
# | (1,2) | 1 1 / 5 5 | 5 | (2,2) ← 6 |
# | (2,0) | 0 1 / 4 4 | 4 | (3,0) ← 7 |
# | (2,1) | 1 5 / 4 5 | 5 | (2,2) ← 8 |
# | (2,2) | 5 5 / 5 2 | 5 | (2,2) ← 9 |
#
# 手算结果：位置 (0,1) 得 1+2=3，(2,2) 得 5+6+8+9=28，梯度总和等于 1+…+9=45。

# %%
x_tie = np.array([[1., 3., 3., 0.],
                  [2., 3., 1., 1.],
                  [0., 1., 5., 5.],
                  [4., 4., 5., 2.]])
dy_tie = np.arange(1., 10.).reshape(3, 3)
expected_dx = np.array([[0.,  3., 3., 0.],
                        [0.,  4., 0., 0.],
                        [0.,  0., 28., 0.],
                        [7.,  0., 0., 0.]])

xt = aics.constant(x_tie.reshape(1, 4, 4, 1))
with aics.GradientTape() as tape:
    tape.watch(xt)
    yt = aics.nn.max_pool(xt, ksize=2, strides=1, padding="VALID")
dx_tie = tape.gradient(yt, xt, output_gradients=aics.constant(dy_tie.reshape(1, 3, 3, 1))).numpy()[0, :, :, 0]
print("forward:\n", yt.numpy()[0, :, :, 0])
print("gradient:\n", dx_tie)
print("dx at (0,1):", dx_tie[0, 1], "| dx at (2,2):", dx_tie[2, 2], "| sum of dx:", dx_tie.sum(),
      "= sum of dy:", dy_tie.sum())
assert np.array_equal(yt.numpy()[0, :, :, 0], [[3, 3, 3], [3, 5, 5], [4, 5, 5]])
assert np.array_equal(dx_tie, expected_dx)
assert dx_tie.sum() == dy_tie.sum()

# %%
fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
panels = [(x_tie, "input x (4x4)"), (dy_tie, "upstream gradient dy (3x3)"), (dx_tie, "dx: first max wins, overlaps add")]
for ax, (arr, title) in zip(axes, panels):
    ax.imshow(arr, cmap="Blues")
    for (i, j), v in np.ndenumerate(arr):
        ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=11)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([]); ax.set_yticks([])
plt.tight_layout()
plt.show()

# %% [markdown]
# 顺便看看数值梯度在 tie 处会怎样：只有一个 2×2 窗口 `[[3, 3], [1, 0]]` 时，把左上角加 δ 会让输出增加 δ，减 δ 则输出不变（另一个 3 接手），
# 中心差分得到 0.5；右上角同理。于是数值梯度把梯度**平分**，而理论梯度按约定全部给第一个。这就是为什么检查整个梯度注册表的测试
# 只在没有 tie 的随机输入上比较两者。

# %%
one_window = np.array([[3., 3.], [1., 0.]]).reshape(1, 2, 2, 1)
theoretical, numerical = aics.test.compute_gradient(
    lambda t: aics.nn.max_pool(t, ksize=2, strides=2, padding="VALID"), [one_window])
print("theoretical:", theoretical[0].ravel())
print("numerical:  ", numerical[0].ravel())
assert np.allclose(theoretical[0].ravel(), [1, 0, 0, 0])
assert np.allclose(numerical[0].ravel(), [0.5, 0.5, 0, 0])

# %% [markdown]
# ## 2 实验：在 Python 里加一个新算子 PowerDifference
#
# AICS 课程实验里的自定义算子 `PowerDifference` 计算 $z = (x-y)^{pow}$（$x$、$y$ 可广播 (broadcast)）。
# 在 TensorFlow 里加一个算子要写三样东西，aicslib 里三样都是 Python：
#
# | 步骤 | TensorFlow | aicslib |
# |---|---|---|
# | 定义 OpDef | C++：`REGISTER_OP("PowerDifference").Input(...).Attr(...)` | `aics.register_op("PowerDifference").input(...).attr(...)` |
# | 实现 kernel | C++：`class PowerDifferenceOp : public OpKernel` + `REGISTER_KERNEL_BUILDER` | 一个 NumPy 函数 + `@aics.register_kernel` |
# | 注册梯度 | Python：`@ops.RegisterGradient("PowerDifference")` | `@aics.RegisterGradient("PowerDifference")` |
# | 调用 | 生成的 `gen_*_ops` 包装函数，或 `tf.raw_ops.PowerDifference` | `aics.raw_ops.PowerDifference`（由 OpDef 即时生成） |
#
# 梯度：$\frac{\partial z}{\partial x} = pow\,(x-y)^{pow-1}$，$\frac{\partial z}{\partial y} = -\frac{\partial z}{\partial x}$。
# $x$ 和 $y$ 形状不同时，前向做了广播，反向要把梯度沿被广播的维度求和，还原成各自输入的形状（`sum_to_shape`）。
# 注意 $(x-y)^{pow-1}$ 恰好就是 `PowerDifference(x, y, pow-1)`：梯度可以用这个算子自己来写，于是二阶导数也自动走它自己的梯度。

# %% [markdown]
# 这一节是一个实验：三样东西由你来写，每样单独计分。先说清楚每一样要做什么。
#
# * **OpDef 与形状函数 (shape function)**。形状函数在**建图时**根据输入的静态形状推断输出形状，形状里可以有未知维度
#   （`None`，例如 `placeholder(float32, [None, 3])` 的批大小），甚至未知的秩 (rank)。广播的规则从最右边的维度开始逐维对齐
#   （短的一方在左边补 1）：两维相等或有一维是 1 就能广播，结果取不是 1 的那个；一方未知时，另一方若是大于 1 的已知值，
#   结果就是它（否则无法广播），若是 1 结果仍未知；有一方秩未知，结果的形状整个未知；两个不相等、又都不是 1 的已知维度在建图时就报
#   `ValueError`。形状函数的参数 `ctx` 有 `ctx.input_shape(i)`（一个 `TensorShape`：`.rank` 为 `None` 表示秩未知，`.dims`
#   是各维的列表，未知维是 `None`），返回值是 `TensorShape(dims)` 或 `TensorShape(None)`。
# * **kernel**：NumPy 数组进、NumPy 数组出，属性按关键字传入（这里是 `pow`），结果的 dtype 与输入相同（float32 进、float32 出）。
# * **梯度**：用算子写，对 $x$ 和 $y$ 各返回一个与输入同形状的梯度（被广播的维度求和：`sum_to_shape(g, x)`）。
#
# 注册表是**进程级全局**的。为了让练习可以反复运行、测试互不影响，解答单元格只**定义函数**，不注册；测试单元格在
# `aics.experimental.registration_scope()` 里注册、检查，结束时注册表恢复原样。三道题之后的一个单元格才真正注册
# `PowerDifference`（没通过的部分改用参考实现，并说明），后面各节都用它；本章最后一个单元格用同一个机制把注册表恢复到本章开始前。

# %%
OP = "PowerDifference"
TensorShape = aics.TensorShape
# Everything this chapter registers (PowerDifference: OpDef, kernel, gradient) ends with the
# chapter: its last cell calls chapter_scope.restore().
chapter_scope = aics.experimental.registration_scope()

# %% [markdown]
# ### 2.1 练习：OpDef 与形状函数（3 分）
#
# 补全 `define_power_difference()`：用 `aics.register_op(OP)` 注册输入 `x: T`、`y: T`，输出 `z: T`，属性
# `T: {half, float, double}` 和 `pow: int = 2`，并用 `.set_shape_fn(...)` 设上你自己写的形状函数（不要用库里现成的广播形状函数）。
# spec 字符串的语法和 TensorFlow 的 `REGISTER_OP` 一样（例如 `T: {float, double}`、`pow: int = 2`；下一章第 1.1 节逐条解析它们）。测试在一个临时的注册作用域里调用它，检查 OpDef，
# 再用各种部分已知的形状建节点，检查推断出的形状。

# %% nbgrader={"grade": false, "grade_id": "power_difference_opdef", "locked": false, "schema_version": 3, "solution": true, "task": false}
def define_power_difference():
    """Registers the OpDef of PowerDifference (z = (x - y)^pow, broadcasting): inputs x: T and y: T,
    output z: T, attrs T in {half, float, double} and pow: int = 2, and a shape function that
    broadcasts the two input shapes (unknown dimensions and unknown ranks allowed)."""
    ### BEGIN SOLUTION
    def shape_fn(ctx):
        a, b = ctx.input_shape(0), ctx.input_shape(1)
        if a.rank is None or b.rank is None:
            return TensorShape(None)
        n = max(a.rank, b.rank)
        da, db = [1] * (n - a.rank) + list(a.dims), [1] * (n - b.rank) + list(b.dims)
        dims = []
        for p, q in zip(da, db):
            if p is not None and q is not None and p != q and 1 not in (p, q):
                raise ValueError(f"PowerDifference: dimensions {p} and {q} do not broadcast")
            known = [d for d in (p, q) if d is not None and d != 1]
            dims.append(known[0] if known else (1 if p == q == 1 else None))
        return TensorShape(dims)

    (aics.register_op(OP)
        .input("x: T").input("y: T").output("z: T")
        .attr("T: {half, float, double}")
        .attr("pow: int = 2")
        .set_shape_fn(shape_fn)
        .doc("Computes (x - y)^pow element-wise, with NumPy broadcasting."))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "power_difference_opdef_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): the OpDef, and the inferred shapes against the broadcasting rule tried on every filling
# of the unknown dimensions (workbook.references.power_difference.broadcast_brute).
from workbook.references import power_difference as _pd

_REGISTRIES = (aics.op_def_registry, aics.kernel_registry, aics.gradient_registry)
_LIBRARY_SHAPES = {"broadcast_binary_op_shape", "broadcast_shapes", "power_difference_shape", "define_power_difference"}


def _inferred(a, b):
    """The static shape of a PowerDifference node on placeholders of partial shapes a and b (lists, or None)."""
    with aics.Graph().as_default():
        px, py = aics.placeholder(aics.float32, a), aics.placeholder(aics.float32, b)
        (z, called) = grading.library_calls(lambda: aics.raw_ops.PowerDifference(x=px, y=py, pow=3))
    used = sorted(called & _LIBRARY_SHAPES)
    grading.check(not used, f"the shape function calls the library's ({', '.join(used)}): write the broadcasting rule yourself")
    return None if z.shape.rank is None else z.shape.as_list()


def _check_shape(a, b):
    want = _pd.broadcast_brute(a, b)
    got = _inferred(a, b)
    grading.check(got == want, f"shape of PowerDifference(x: {a}, y: {b}): expected {want}, got {got} "
                               f"(None: an unknown dimension; a bare None: an unknown rank)")


def _check_rejected(a, b):
    try:
        _inferred(a, b)
    except ValueError:
        return
    raise grading.CheckFailed(f"PowerDifference(x: {a}, y: {b}) was built, but {a} and {b} cannot broadcast: "
                              f"the shape function should raise ValueError")


with grading.exercise("power_difference_opdef"):
    with aics.experimental.registration_scope():
        for _registry in _REGISTRIES:
            _registry.unregister(OP)
        define_power_difference()
        _od = aics.op_def_registry.get(OP)
        grading.check(_od is not None, "define_power_difference() registered no op named 'PowerDifference'")
        _ins = [(a.name, a.type_attr) for a in _od.input_arg]
        _outs = [(a.name, a.type_attr) for a in _od.output_arg]
        grading.check(_ins == [("x", "T"), ("y", "T")] and _outs == [("z", "T")],
                      f"inputs/outputs: expected x: T, y: T -> z: T, got {_ins} -> {_outs}")
        _attrs = {a.name: a for a in _od.attr}
        grading.check(set(_attrs) == {"T", "pow"}, f"attrs: expected T and pow, got {sorted(_attrs)}")
        _allowed = sorted(t.name for t in _attrs["T"].allowed_values or [])
        grading.check(_allowed == ["float16", "float32", "float64"], f"attr T: expected the types {{half, float, double}}, "
                                                                     f"got {_allowed}")
        grading.check(_attrs["pow"].type == "int" and _attrs["pow"].default_value == 2,
                      f"attr pow: expected 'pow: int = 2', got type {_attrs['pow'].type!r}, "
                      f"default {_attrs['pow'].default_value!r}")
        _shape_code = getattr(_od.shape_fn, "__code__", None)
        _library = (os.path.dirname(aics.__file__), os.path.dirname(os.path.dirname(_pd.__file__)))
        grading.check(_shape_code is not None and not _shape_code.co_filename.startswith(_library),
                      f"the shape function is {getattr(_od.shape_fn, '__qualname__', _od.shape_fn)!r} from the library: "
                      f"write the broadcasting rule yourself")
        _where = aics.introspect.where(OP)["op"]
        grading.check(not _where.startswith(("aicslib/", "workbook/")) and "references" not in _where,
                      f"the op is registered at {_where}: register it with aics.register_op in your own code")
        for _a, _b in [([2, 3], [2, 3]), ([2, 3], [3]), ([None, 3], [3]), ([None, 3], [None, 1]), ([4, 1], [1, 5])]:
            _check_shape(_a, _b)
        _check_rejected([2, 3], [4])
    ### BEGIN HIDDEN TESTS
        for _ha, _hb in [([3], [None, 3]), ([None], [5]), ([5], [None]), ([None], [None]), ([None, 1], [1, None]),
                       ([2, None, 1], [None, 4]), ([1], [None]), (None, [2, 3]), ([2, 3], None), ([], [None, 2]),
                       ([2, 1, 3], [])]:
            _check_shape(_ha, _hb)
        _check_rejected([3, 2], [2, 3])
        _check_rejected([None, 3], [2])
    ### END HIDDEN TESTS

# %% [markdown]
# ### 2.2 练习：CPU kernel（2 分）
#
# 补全 `power_difference_kernel(x, y, pow)`：`x`、`y` 是 NumPy 数组（同一个 dtype，可以广播），`pow` 是整数；返回
# $(x-y)^{pow}$，dtype 与输入相同。只用 NumPy（在 kernel 里调用 aicslib 的算子不得分：kernel 是算子最底层的实现）。
# 测试把它注册为 float32 和 float64 的 CPU kernel（OpDef 用参考实现，与 2.1 分开计分），在 eager、Session 和 `aics.function`
# 三种模式下运行。

# %% nbgrader={"grade": false, "grade_id": "power_difference_kernel", "locked": false, "schema_version": 3, "solution": true, "task": false}
def power_difference_kernel(x, y, pow):
    """The CPU kernel of PowerDifference: (x - y) ** pow element-wise, broadcasting, x's dtype kept."""
    ### BEGIN SOLUTION
    return np.power(np.subtract(x, y), pow)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "power_difference_kernel_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): the kernel against NumPy in float64, in eager mode, in a Session and in aics.function.
from workbook.references import power_difference as _pd


def _run_three_modes(xv, yv, p):
    """PowerDifference(x, y, pow=p) eagerly, by a Session and by an aics.function: three NumPy arrays."""
    eager = aics.raw_ops.PowerDifference(x=aics.constant(xv), y=aics.constant(yv), pow=p).numpy()
    with aics.Graph().as_default():
        px, py = aics.placeholder(aics.as_dtype(xv.dtype), None), aics.placeholder(aics.as_dtype(yv.dtype), None)
        z = aics.raw_ops.PowerDifference(x=px, y=py, pow=p)
        with aics.Session() as sess:
            session = sess.run(z, {px: xv, py: yv})
    traced = aics.function(lambda a, b: aics.raw_ops.PowerDifference(x=a, y=b, pow=p))
    return eager, session, traced(aics.constant(xv), aics.constant(yv)).numpy()


def _check_kernel(xv, yv, p, what):
    got = grading.no_library_calls(power_difference_kernel, xv, yv, p, what="power_difference_kernel")
    want = np.power(xv.astype(np.float64) - yv.astype(np.float64), p)
    grading.check_array(got, want.astype(xv.dtype), f"power_difference_kernel({what}, pow={p})", dtype=xv.dtype,
                        rtol=1e-6 if xv.dtype == np.float32 else 1e-12, atol=1e-6 if xv.dtype == np.float32 else 0.0,
                        hint="(x - y) ** pow, with NumPy broadcasting, in the inputs' dtype")
    for mode, value in zip(("eager", "Session", "aics.function"), _run_three_modes(xv, yv, p)):
        grading.check_array(value, want.astype(xv.dtype), f"{mode}: PowerDifference({what}, pow={p})", dtype=xv.dtype,
                            rtol=1e-6 if xv.dtype == np.float32 else 1e-12, atol=1e-6 if xv.dtype == np.float32 else 0.0)


with grading.exercise("power_difference_kernel"):
    _r = np.random.default_rng(11)
    with aics.experimental.registration_scope():
        for _registry in (aics.op_def_registry, aics.kernel_registry, aics.gradient_registry):
            _registry.unregister(OP)
        _pd.define_power_difference()
        aics.register_kernel(OP, device="CPU", type_constraint={"T": [aics.float32, aics.float64]})(
            lambda x, y, pow: power_difference_kernel(x, y, pow))
        _x, _y = _r.uniform(-2, 2, (2, 3)), _r.uniform(-2, 2, 3)
        _check_kernel(_x, _y, 3, "x (2,3), y (3,) float64")
        _check_kernel(_x.astype(np.float32), _y.astype(np.float32), 2, "x (2,3), y (3,) float32")
    ### BEGIN HIDDEN TESTS
        for _p in (0, 1, 4, 5):
            _check_kernel(_r.uniform(-2, 2, (3, 1)), _r.uniform(-2, 2, (1, 4)), _p, "x (3,1), y (1,4) float64")
        _check_kernel(_r.uniform(-2, 2, (2, 2)).astype(np.float32), np.float32(0.5) * np.ones((), np.float32), 3,
                      "x (2,2), y a scalar, float32")
        _d = aics.raw_ops.PowerDifference(x=aics.constant([3.0, -1.0]), y=aics.constant([1.0, 1.0]))   # pow = 2
        grading.check_array(_d.numpy(), np.array([4.0, 4.0], np.float32), "PowerDifference with pow left at its default 2",
                            dtype=np.float32)
    ### END HIDDEN TESTS

# %% [markdown]
# ### 2.3 练习：梯度（3 分）
#
# 补全 `power_difference_grad(op, grad)`：返回 `(dx, dy)`，
# $\frac{\partial z}{\partial x} = pow\,(x-y)^{pow-1}$、$\frac{\partial z}{\partial y} = -\frac{\partial z}{\partial x}$，乘上上游梯度
# `grad`，再用 `sum_to_shape(g, x)` / `sum_to_shape(g, y)` 把被广播的维度求和。用算子写（`aics.raw_ops.PowerDifference`、乘法……），
# 不要用 NumPy，也不要在梯度函数里调用 `aics.gradients`/`GradientTape`。注意 $(x-y)^{pow-1}$ 恰好就是
# `PowerDifference(x, y, pow-1)`：用这个算子自己来写，二阶导数也就自动走它自己的梯度。
# 测试（OpDef 和 kernel 用参考实现）用中心差分检查雅可比矩阵，并在 `GradientTape`、`aics.gradients` + Session 和 `aics.function` 中各检查一次。

# %% nbgrader={"grade": false, "grade_id": "power_difference_gradient", "locked": false, "schema_version": 3, "solution": true, "task": false}
def power_difference_grad(op, grad):
    """The gradient of PowerDifference: (dL/dx, dL/dy) from grad = dL/dz, each with its input's shape."""
    ### BEGIN SOLUTION
    x, y = op.inputs
    p = op.get_attr("pow")
    dz_dx = float(p) * aics.raw_ops.PowerDifference(x=x, y=y, pow=p - 1)
    return sum_to_shape(grad * dz_dx, x), sum_to_shape(-(grad * dz_dx), y)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "power_difference_gradient_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): the gradient against central differences (aics.test.compute_gradient, float64), with
# broadcasting, in a GradientTape, with aics.gradients in a Session, and in aics.function.
from workbook.references import power_difference as _pd

_MACHINERY = {"gradients", "gradient", "watch", "power_difference_grad", "function"}


def _check_jacobians(xv, yv, p):
    f = lambda a, b: aics.raw_ops.PowerDifference(x=a, y=b, pow=p)
    theoretical, numerical = aics.test.compute_gradient(f, [xv, yv])
    for name, t, n in zip("xy", theoretical, numerical):
        grading.check_array(t, n, f"the Jacobian of PowerDifference(x {xv.shape}, y {yv.shape}, pow={p}) with "
                            f"respect to {name}", atol=1e-6, hint="pow (x-y)^(pow-1) for x, its negative for y, "
                            "times grad, summed over the broadcast dimensions (sum_to_shape)")


def _expected(xv, yv, gz, p):
    """(dL/dx, dL/dy) in NumPy: the broadcast gradient summed back to each input's shape."""
    d = gz * p * np.power(xv - yv, p - 1)
    return _sum_to(d, xv.shape), _sum_to(-d, yv.shape)


def _sum_to(g, shape):
    g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    return g.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)


def _check_modes(xv, yv, p):
    gz = np.random.default_rng(5).uniform(-1, 1, np.broadcast_shapes(xv.shape, yv.shape))
    want = _expected(xv, yv, gz, p)
    a, b = aics.constant(xv), aics.constant(yv)
    with aics.GradientTape() as tape:
        tape.watch([a, b])
        z = aics.raw_ops.PowerDifference(x=a, y=b, pow=p)
    tape_grads = [g.numpy() for g in tape.gradient(z, [a, b], output_gradients=aics.constant(gz))]
    with aics.Graph().as_default():
        px, py, pg = (aics.placeholder(aics.float64, v.shape) for v in (xv, yv, gz))
        z = aics.raw_ops.PowerDifference(x=px, y=py, pow=p)
        gx, gy = aics.gradients(z, [px, py], grad_ys=[pg])
        _, called = grading.library_calls(aics.gradient_registry.function(OP), z.op, pg)
        with aics.Session() as sess:
            graph_grads = sess.run([gx, gy], {px: xv, py: yv, pg: gz})
    used = sorted(called & _MACHINERY)
    grading.check(not used, f"power_difference_grad calls the gradient machinery ({', '.join(used)}): write "
                            f"pow (x-y)^(pow-1) with ops")

    @aics.function(autograph=False)          # plain Python: nothing for AutoGraph to convert
    def traced(u, v):
        with aics.GradientTape() as t:
            t.watch([u, v])
            zz = aics.raw_ops.PowerDifference(x=u, y=v, pow=p)
        return t.gradient(zz, [u, v], output_gradients=aics.constant(gz))
    function_grads = [g.numpy() for g in traced(a, b)]
    for mode, got in (("GradientTape", tape_grads), ("aics.gradients + Session", graph_grads),
                      ("aics.function", function_grads)):
        for name, g, w in zip("xy", got, want):
            grading.check_array(g, w, f"{mode}: d/d{name} of PowerDifference(x {xv.shape}, y {yv.shape}, pow={p}) "
                                f"with an upstream gradient", rtol=1e-9, atol=1e-12,
                                hint="times grad, then summed to the input's shape")


with grading.exercise("power_difference_gradient"):
    _r = np.random.default_rng(13)
    with aics.experimental.registration_scope():
        for _registry in (aics.op_def_registry, aics.kernel_registry, aics.gradient_registry):
            _registry.unregister(OP)
        _pd.define_power_difference()
        aics.register_kernel(OP, device="CPU", type_constraint={"T": [aics.float32, aics.float64]})(
            _pd.power_difference_kernel)
        aics.RegisterGradient(OP)(lambda op, grad: power_difference_grad(op, grad))
        _check_jacobians(_r.uniform(-2, 2, (2, 3)), _r.uniform(-2, 2, 3), 3)
        _check_modes(_r.uniform(-2, 2, (2, 3)), _r.uniform(-2, 2, 3), 2)
    ### BEGIN HIDDEN TESTS
        for _p in (1, 2, 4):
            _check_jacobians(_r.uniform(-2, 2, (3, 1)), _r.uniform(-2, 2, (1, 4)), _p)
        _check_jacobians(_r.uniform(-2, 2, 3), _r.uniform(-2, 2, (2, 3)), 3)
        _check_modes(_r.uniform(-2, 2, (2, 1)), _r.uniform(-2, 2, (1, 3)), 3)
        # Built from ops, the gradient has its own gradient: d2z/dx2 = pow (pow-1) (x-y)^(pow-2).
        _xv, _yv = _r.uniform(-2, 2, (2, 3)), _r.uniform(-2, 2, 3)
        _xa, _ya = aics.constant(_xv), aics.constant(_yv)
        with aics.GradientTape() as _outer:
            _outer.watch(_xa)
            with aics.GradientTape() as _inner:
                _inner.watch(_xa)
                _z = aics.raw_ops.PowerDifference(x=_xa, y=_ya, pow=3)
            _dz = _inner.gradient(_z, _xa)
        _d2 = _outer.gradient(_dz, _xa)
        grading.check(_d2 is not None, "the second derivative is None: build the gradient from ops")
        grading.check_array(_d2.numpy(), 6 * (_xv - _yv), "d2/dx2 of PowerDifference(pow=3)", rtol=1e-9,
                            hint="write the gradient with ops (PowerDifference itself), not NumPy")
        # float32 in, float32 gradients out.
        _a32 = aics.constant(_xv.astype(np.float32))
        with aics.GradientTape() as _t:
            _t.watch(_a32)
            _z32 = aics.raw_ops.PowerDifference(x=_a32, y=aics.constant(_yv.astype(np.float32)), pow=2)
        _g32 = _t.gradient(_z32, _a32).numpy()
        grading.check_array(_g32, 2 * (_xv - _yv), "d/dx for float32 inputs", dtype=np.float32, rtol=1e-5)
    ### END HIDDEN TESTS

# %% [markdown]
# ### 2.4 注册 PowerDifference
#
# 三部分都写好以后，这个单元格把它们真正注册到全局注册表里，后面各节都用它。哪一部分没通过测试，就改用参考实现（并说明）。
# `aics.introspect.summary` 显示的定义、kernel 和梯度的位置就是你写的那几个单元格（`文件:行号`），和内置算子一样可以反查。

# %%
from workbook.references import power_difference as pd_reference

define_fn = grading.use("power_difference_opdef", define_power_difference, pd_reference.define_power_difference,
                        "PowerDifference OpDef")
kernel_fn = grading.use("power_difference_kernel", power_difference_kernel, pd_reference.power_difference_kernel,
                        "PowerDifference kernel")
grad_fn = grading.use("power_difference_gradient", power_difference_grad, pd_reference.power_difference_grad,
                      "PowerDifference gradient")
# Unregisters what was there first (re-running this cell starts from a clean slate), then the OpDef,
# the float32/float64 CPU kernel (half is allowed by the OpDef but gets no kernel) and the gradient.
pd_reference.register(define_fn, kernel_fn, grad_fn)

print(aics.introspect.summary(OP))
where_pd = aics.introspect.where(OP)
print("\nop:", where_pd["op"], "| kernel:", where_pd["kernels"][0]["location"], "| gradient:", where_pd["gradient"])
assert OP in aics.introspect.list_ops()
assert aics.gradient_registry.is_differentiable(OP)

# %% [markdown]
# ### 2.5 Eager 模式
#
# `aics.raw_ops.PowerDifference` 是按 OpDef 即时生成的包装函数：输入和属性都按关键字传，`T` 由输入推断，`pow` 不传时取默认值 2。

# %%
xv = np.array([[1., 2., 3.], [4., 5., 6.]], dtype=np.float32)
yv = np.array([0.5, 1.0, 1.5], dtype=np.float32)
x, y = aics.constant(xv), aics.constant(yv)

z3 = aics.raw_ops.PowerDifference(x=x, y=y, pow=3)
z2 = aics.raw_ops.PowerDifference(x=x, y=y)            # pow defaults to 2
print(z3)
print(z2.numpy())
print(aics.raw_ops.PowerDifference.__doc__.splitlines()[0])
assert z3.dtype == aics.float32 and z3.shape == (2, 3)
assert np.allclose(z3.numpy(), (xv - yv) ** 3)
assert np.allclose(z2.numpy(), (xv - yv) ** 2)

# %% [markdown]
# ### 2.6 静态图模式：Session 与 `aics.gradients`
#
# 在 `Graph` 里调用同一个包装函数只会添加一个节点 (node)；形状函数在建图时就推断出输出形状 `(?, 3)`。
# `aics.gradients` 在 `gradients/` 名字作用域 (name scope) 下生成反向子图，其中调用的正是我们注册的梯度函数。

# %%
g = aics.Graph()
with g.as_default():
    px = aics.placeholder(aics.float32, [None, 3], name="x")
    py = aics.placeholder(aics.float32, [3], name="y")
    pz = aics.raw_ops.PowerDifference(x=px, y=py, pow=2, name="pd")
    loss = aics.reduce_sum(pz, name="loss")
    gx, gy = aics.gradients(loss, [px, py])

print(pz, "| attr pow =", pz.op.get_attr("pow"))
print("backward nodes:", [op.name for op in g.get_operations() if op.name.startswith("gradients/")][:6], "...")
with aics.Session(graph=g) as sess:
    z_val, gx_val, gy_val = sess.run([pz, gx, gy], feed_dict={px: xv, py: yv})
print("dloss/dx =\n", gx_val, "\ndloss/dy =", gy_val)
assert pz.shape.as_list() == [None, 3]
assert np.allclose(z_val, (xv - yv) ** 2)
assert np.allclose(gx_val, 2 * (xv - yv))
assert np.allclose(gy_val, (-2 * (xv - yv)).sum(axis=0))     # y was broadcast over rows


# %% [markdown]
# ### 2.7 在 `aics.function` 里使用
#
# `aics.function` 第一次调用时把 Python 函数追踪 (trace) 成图，之后直接运行这张图。新算子和内置算子没有任何区别，
# 在 `GradientTape` 下求导也照常工作。

# %%
@aics.function
def mean_power_difference(a, b):
    return aics.reduce_mean(aics.raw_ops.PowerDifference(x=a, y=b, pow=2))

with aics.GradientTape() as tape:
    tape.watch(x)
    value = mean_power_difference(x, y)
dvalue_dx = tape.gradient(value, x)

traced = mean_power_difference.get_concrete_function(x, y).graph
print("traced op types:", [op.type for op in traced.get_operations()])
print("value:", value.numpy(), "\ngradient:\n", dvalue_dx.numpy())
assert "PowerDifference" in [op.type for op in traced.get_operations()]
assert np.isclose(value.numpy(), np.mean((xv - yv) ** 2))
assert np.allclose(dvalue_dx.numpy(), 2 * (xv - yv) / xv.size)

# %% [markdown]
# ### 2.8 数值检查梯度
#
# 对几个不同的 `pow`，在 float64 下比较理论与数值雅可比矩阵（$y$ 仍然被广播）；再用嵌套 tape 检查二阶导数
# $\frac{\partial^2 z}{\partial x^2} = pow\,(pow-1)(x-y)^{pow-2}$。

# %%
x64 = rng.standard_normal((2, 3))
y64 = rng.standard_normal(3)
for p in (1, 2, 3, 4):
    theoretical, numerical = aics.test.compute_gradient(
        lambda a, b: aics.raw_ops.PowerDifference(x=a, y=b, pow=p), [x64, y64])
    err = aics.test.max_error(theoretical, numerical)
    print(f"pow={p}: Jacobians {[t.shape for t in theoretical]}, max_error={err:.2e}")
    assert err < 1e-6

xa, ya = aics.constant(x64), aics.constant(y64)
with aics.GradientTape() as outer:
    outer.watch(xa)
    with aics.GradientTape() as inner:
        inner.watch(xa)
        z = aics.raw_ops.PowerDifference(x=xa, y=ya, pow=3)
    dz = inner.gradient(z, xa)
d2z = outer.gradient(dz, xa)
assert np.allclose(d2z.numpy(), 6 * (x64 - y64))

# %% [markdown]
# ## 小结
#
# * TensorFlow 和 aicslib 都把算子分三处登记：**定义**（`REGISTER_OP` / `aics.register_op`，在 `core/ops` 与 `aicslib/ops/*_ops.py`）、
#   **kernel**（`REGISTER_KERNEL_BUILDER` / `aics.register_kernel`，在 `core/kernels` 与 `aicslib/kernels`）、
#   **梯度**（`@RegisterGradient`，在 `python/ops/*_grad.py` 与 `aicslib/ops/*_grad.py`）。每次注册都记下源码位置，`aics.introspect.where` 可以反查。
# * Sin 的梯度 `grad * cos(x)` 和 MaxPool 的梯度（转交给 `MaxPoolGrad` 算子）都是**用算子写的**，所以一个梯度函数同时服务静态图的
#   `aics.gradients` 和 eager 的 `GradientTape`，还能继续求高阶导数。用 `aics.test.compute_gradient` 对比理论与数值雅可比矩阵即可验证。
# * MaxPool 遇到并列最大值时，窗口里按行优先的第一个最大值拿走梯度，重叠窗口的梯度在同一位置累加；在 tie 处数值梯度会把梯度平分，
#   所以数值检查要用没有 tie 的输入。
# * 新算子 `PowerDifference` 用三段 Python 代码就完成了定义（含处理未知维度的形状函数）、kernel 和梯度（被广播的维度求和），
#   并在 eager、Session、`aics.function` 中与内置算子一样工作，`aics.introspect` 同样能反查到你写的那几行。
# * 下一章 [09 registration-flow](09-registration-flow.ipynb) 一步步走完注册流程，看 kernel 怎样被查找、放到哪个设备上，
#   并给 `Tan` 注册梯度。
#
# 最后用第 2 节开头的 `chapter_scope.restore()` 把全局注册表恢复到本章开始前（去掉 `PowerDifference`），不影响同一进程里之后运行的代码。

# %%
chapter_scope.restore()          # what this chapter registered is gone
assert OP not in aics.introspect.list_ops() and not aics.introspect.list_kernels(OP)
print("registries restored:", len(aics.introspect.list_ops()), "ops")
