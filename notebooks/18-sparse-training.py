# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 18 稀疏训练：让 784-300-100-10 网络的一半（或九成）权重变成 0
#
# **前置章节 (prerequisites)**：[04 mnist-mlp](04-mnist-mlp.ipynb)
#
# **对应习题**：习题 5.12（下半部分）——在 MNIST 上训练稀疏的三层全连接网络，每层稀疏度 (sparsity，权重中 0 元素的占比)
# 随训练从 0% 逐渐升到 50%；习题 5.9（下半部分）——借鉴混合精度 (mixed precision) 训练“同时存两份数据”的思想，
# 说明如何训练稀疏网络。
#
# **学习目标**
#
# 1. 看懂混合精度与稀疏训练的对应：float32 主权重 (master weights) + float16 副本 ↔ 稠密主权重 + 0/1 掩码 (mask)；
# 2. 掌握剪枝日程 (pruning schedule)：tensorflow-model-optimization（tfmot）的 `PolynomialDecay` 与 `ConstantSparsity`；
# 3. 亲手实现按幅值剪枝 (magnitude pruning) 的掩码，并理解“每次更新后重新施加掩码”；
# 4. 不用框架（只用 NumPy）实现稀疏训练（习题 5.12）：Zhu & Gupta 日程、手写反向传播的带掩码动量 SGD、渐进剪枝循环；
# 5. 用 `aicslib.sparsity.prune_low_magnitude` 在静态图 + Session 中训练，画出每层稀疏度随时间的变化，与稠密模型及论文数字比较；
# 6. 了解动态稀疏训练 (dynamic sparse training)：RigL 与稀疏动量 (sparse momentum) 如何“剪掉再长出”连接；
# 7. 用 `aics.sparse.SparseTensor`（COO）与 CSR 格式存储稀疏权重，度量稀疏矩阵乘相对稠密 GEMM 的速度；
# 8. 用小部件 (widget) 选择最终稀疏度与日程，重新训练并观察准确率和权重直方图。
#
# **运行时间**：下面第一个代码单元格打印本章实测的运行时间（完整设置与快速设置 `AICS_FAST=1`）。快速设置（CI）只用
# 8000 张训练图（稠密 2 轮，剪枝 1 轮），代码路径与完整设置完全相同；完整设置用全部 60000 张。机器繁忙时请设
# `OMP_NUM_THREADS=1`（多线程 BLAS 在别的进程抢 CPU 时反而慢得多）。每个训练都有进度条。
#
# **练习**（自动评分，共 14 分）：第 3 节的 `my_magnitude_mask`（3 分）；第 4 节的实验 (lab)“不用框架的稀疏训练”
# （习题 5.12）分三步：剪枝日程 `my_polynomial_decay`（3 分）、带掩码的动量 SGD 一步 `my_masked_sgd_step`（4 分）、
# 渐进剪枝的训练循环 `my_gradual_pruning`（4 分）。没做完（或没通过测试）的练习，后面的单元格改用参考实现
# （`aicslib` 或 `workbook.references`）并打印说明，笔记本仍能一直运行到底。

# %%
import math
import time

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags, sparsity
from workbook import grading, mnist_mlp, run_times

run_times.show("sparse-training")
FAST = flags.FAST                  # AICS_FAST=1: the quick setting used by CI
SEED = 0
np.random.seed(SEED)
aics.random.set_seed(SEED)

TRAIN_N = 8000 if FAST else 60000
EPOCHS = 2 if FAST else 20
BATCH = 128
BASE_LR, MOMENTUM = 0.1, 0.9
STEPS_PER_EPOCH = math.ceil(TRAIN_N / BATCH)
TOTAL_STEPS = EPOCHS * STEPS_PER_EPOCH
# Gradual pruning starts from the trained dense model (Han et al. 2015; tfmot's "prune a pre-trained
# model"): PRUNE_EPOCHS more epochs with the learning-rate schedule restarted from BASE_LR (learning-rate
# rewinding, Renda et al. 2020). Sparsity rises during the first half (masks recomputed every FREQ steps);
# the second half fine-tunes the surviving weights while the learning rate decays (Zhu & Gupta 2017).
PRUNE_EPOCHS = 1 if FAST else 10
PRUNE_LR = BASE_LR
PRUNE_STEPS = PRUNE_EPOCHS * STEPS_PER_EPOCH
PRUNE_END_FRACTION = 0.5

def pruning_window(total, steps_per_epoch, frequency, trained=False):
    """(begin_step, end_step): from epoch 1 (half an epoch when FAST; step 0 for a trained model) to
    PRUNE_END_FRACTION of training, end_step aligned so the last mask update lands exactly on it."""
    begin = 0 if trained else steps_per_epoch // 2 if FAST else steps_per_epoch
    end = begin + frequency * max(round((PRUNE_END_FRACTION * total - begin) / frequency), 1)
    return begin, end

FREQ = 10 if FAST else 100
BEGIN_STEP, END_STEP = pruning_window(PRUNE_STEPS, STEPS_PER_EPOCH, FREQ, trained=True)
LOG_EVERY = 5 if FAST else 25
print(f"FAST={FAST}: {TRAIN_N} images; dense: {EPOCHS} epochs = {TOTAL_STEPS} steps; pruning the trained "
      f"model: {PRUNE_EPOCHS} epochs = {PRUNE_STEPS} steps, masks from step {BEGIN_STEP} to {END_STEP} "
      f"every {FREQ} steps")

x_train, y_train, x_test, y_test = mnist_mlp.load(TRAIN_N)    # the MLP chapters' shared data (04, 17)
assert x_train.shape == (TRAIN_N, 784) and x_test.shape == (10000, 784)

# %% [markdown]
# ## 1. 从混合精度到稀疏训练（习题 5.9 下半部分）
#
# 混合精度训练在内存里为每个权重存**两份**：float32 的主权重负责接收更新（小的梯度更新不会被 float16 的舍入吞掉），
# float16 的副本负责前向与反向计算（快、省带宽）。每一步：用副本算梯度 → 更新主权重 → 再从主权重得到新副本。
#
# 稀疏训练照搬这个结构，只是“低精度副本”换成了“稀疏副本”：
#
# | | 混合精度 | 稀疏训练（本章） |
# |---|---|---|
# | 主数据（接收更新） | float32 主权重 | 稠密 (dense) 的 float32 权重 |
# | 计算用的副本 | float16 副本 = cast(主权重) | 稀疏权重 = 主权重 ⊙ 掩码 |
# | 额外存储 | 每个权重 2 字节 | 每个权重一个 0/1 掩码 |
# | 何时重新生成副本 | 每一步 | 掩码按日程 (schedule) 每隔若干步按幅值重算；每次更新后重新施加掩码 |
#
# 稠密存储的好处：反向传播照常得到**稠密梯度**（被剪掉的位置也有梯度），优化器不用改；RigL 正是用这些梯度决定在哪里“长出”新连接。
# 代价是训练时并不省内存和计算，省的是**训练结束后**：那时只保存非零权重（第 8 节的 COO/CSR 格式），推理用稀疏矩阵乘。
#
# 在 `aicslib` 里：`aicslib.sparsity.prune_low_magnitude(weights, schedule)` 为每个权重变量 `W` 建一个不可训练的
# 掩码变量 `W/mask`；`update(step)` 在日程要求的步把掩码重算为 `magnitude_mask(W, s)`；`apply_gradients`
# （或图模式下的 `wrap_train_op`）在优化器更新之后执行 `W.assign(W * mask)`，保证被剪掉的权重一直是 0——
# 动量 (momentum) 会不断把它们推离 0，所以“每次更新后重新施加”是必要的。

# %% [markdown]
# ## 2. 剪枝日程：`PolynomialDecay` 与 `ConstantSparsity`
#
# 日程是一个函数 `schedule(step) -> (should_prune, sparsity)`，语义与 tfmot 完全相同（见 `aicslib/sparsity/pruning_schedule.py`）：
#
# * 只在 `begin_step, begin_step + frequency, ...`（且 `<= end_step`）这些步重算掩码；
# * `PolynomialDecay`：$p = \mathrm{clip}\big(\frac{t - t_0}{t_1 - t_0}, 0, 1\big)$，
#   $s(t) = s_f + (s_i - s_f)(1 - p)^{\text{power}}$（Zhu & Gupta 2017），`power=3` 时开始剪得快、后来越来越慢，
#   给网络留出恢复的时间；
# * `ConstantSparsity`：从 `begin_step` 起一次到位（一次性剪枝 (one-shot pruning)），之后每 `frequency` 步按同一稀疏度重算。

# %%
def make_schedule(kind, final, begin=BEGIN_STEP, end=END_STEP, freq=FREQ):
    if kind == "polynomial (power 3)":
        return sparsity.PolynomialDecay(0.0, final, begin, end, power=3, frequency=freq)
    if kind == "polynomial (power 1)":
        return sparsity.PolynomialDecay(0.0, final, begin, end, power=1, frequency=freq)
    if kind == "constant (one-shot)":
        return sparsity.ConstantSparsity(final, begin, end, frequency=freq)
    raise ValueError(f"unknown schedule {kind!r}")

SCHEDULES = ["polynomial (power 3)", "polynomial (power 1)", "constant (one-shot)"]
steps = np.arange(PRUNE_STEPS + 1)
fig, ax = plt.subplots(figsize=(8, 3.2))
for kind in SCHEDULES:
    sched = make_schedule(kind, 0.5)
    s = [float(sched(int(t))[1]) if t >= BEGIN_STEP else 0.0 for t in steps]
    prune_at = [int(t) for t in steps if sched(int(t))[0]]
    line, = ax.plot(steps, s, label=kind)
    ax.plot(prune_at, [s[t] for t in prune_at], "o", ms=3, color=line.get_color())
ax.set_xlabel("step of the pruning run"); ax.set_ylabel("target sparsity")
ax.set_title("pruning schedules to 50% (dots: steps where masks are recomputed)")
ax.legend(); plt.show()

sched = make_schedule("polynomial (power 3)", 0.5)
mid = (BEGIN_STEP + END_STEP) // 2
print("step", mid, "->", sched(mid), " (1 - (1-p)^3) * 0.5 with p =", (mid - BEGIN_STEP) / (END_STEP - BEGIN_STEP))
assert sched(END_STEP) == (True, np.float32(0.5)) and sched(END_STEP + FREQ)[0] is False

# %% [markdown]
# ## 3. 练习：按幅值剪枝的掩码
#
# 要让 $n$ 个权重达到稀疏度 $s$，保留幅值最大的 $k = \max(\mathrm{round}(n(1-s)), 1)$ 个：阈值 $t$ 取第 $k$ 大的 $|w|$，
# 掩码为 $|w| \ge t$ 处是 1、其余是 0。因为用的是 $\ge$，**与阈值相等的权重都保留**（所以保留数可能多于 $k$）；至少保留 1 个。
# 这正是 tfmot 的做法。$\mathrm{round}$ 是“四舍六入五成双” (round half to even)，与 `tf.round` 相同：
# $n=10,\ s=0.25$ 时 $7.5\to 8$，$s=0.75$ 时 $2.5\to 2$。注意分位数 (quantile) `np.quantile(|w|, s)` 在两个值之间插值，
# 给出的保留数不一定是 $k$。
#
# 补全 `my_magnitude_mask(weights, s)`：输入任意形状的浮点数组和 $s\in[0,1)$，返回同形状、同 dtype 的 0/1 数组。
# 只用 NumPy，不调用 aicslib 的实现（提示：`np.sort` 或 `np.partition`；`round` 用 Python 的 `round` 或 `np.round` 均可，
# 两者都是五成双）。

# %% nbgrader={"grade": false, "grade_id": "magnitude_mask", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_magnitude_mask(weights, s):
    w = np.asarray(weights)
    ### BEGIN SOLUTION
    k = max(int(round(w.size * (1.0 - s))), 1)
    threshold = np.sort(np.abs(w), axis=None)[w.size - k]
    return (np.abs(w) >= threshold).astype(w.dtype)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "magnitude_mask_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the mask against tfmot's rule decided weight by weight (a weight survives
# when fewer than k weights are larger in magnitude), same shape and dtype; the exercise is by hand in
# NumPy: an answer that calls aicslib (e.g. sparsity.magnitude_mask) or the workbook fails.
from workbook.references import pruning as _pruning_reference


def _mask_case(w, s, what):
    got = grading.no_library_calls(my_magnitude_mask, w, s, what="my_magnitude_mask")
    keep, k = _pruning_reference.keep(w, s)
    call = f"my_magnitude_mask(w, s={s}) for {what}"
    try:
        kept = f"your mask keeps {int(np.count_nonzero(got))}; "
    except Exception:
        kept = ""
    ties = f", plus {int(keep.sum()) - k} tied with the k-th" if keep.sum() > k else ""
    grading.check_array(got, keep.astype(w.dtype), f"{call} ({w.size} weights)",
                        hint=f"{kept}tfmot keeps k = max(round({w.size} * (1 - {s})), 1) = {k} weights{ties}: "
                             f"round halves to even (as round() and np.round do), then every |w| >= the k-th "
                             f"largest |w| is kept")
    grading.check(np.asarray(got).dtype == w.dtype, f"{call}: the mask has dtype {np.asarray(got).dtype}, "
                                                     f"expected the weights' dtype {w.dtype} (0.0 and 1.0)")


_rng = np.random.default_rng(7)
with grading.exercise("magnitude_mask"):
    for _shape, _s in [((6, 7), 0.5), ((40,), 0.22), ((3, 4, 5), 0.9), ((10,), 0.0)]:
        _mask_case(_rng.normal(size=_shape).astype(np.float32), _s, f"random weights of shape {_shape}")
    _mask_case(np.array([-5.0, 0.1, 4.0, -0.2, 3.0, 0.3], np.float32), 0.5, "weights of both signs")
    ### BEGIN HIDDEN TESTS
    _ten = np.arange(1, 11, dtype=np.float32) * np.array([1, -1] * 5, np.float32)
    _mask_case(_ten, 0.25, "10 weights (7.5 rounds to 8: a quantile keeps 7)")
    _mask_case(_ten, 0.22, "10 weights (7.8 rounds to 8, int() would keep 7)")
    _mask_case(_ten, 0.75, "10 weights (2.5 rounds half to even: 2)")
    _mask_case(np.linspace(-1, 1, 7, dtype=np.float32)[[3, 0, 6, 1, 5, 2, 4]] + 0.01, 0.5, "7 weights (3.5 rounds to 4)")
    _mask_case(_ten, 0.99, "10 weights (at least one weight survives)")
    _mask_case(np.array([3.0, -3.0, 1.0, 1.0, -2.0, 2.0], np.float32), 0.5, "ties at the threshold (all kept)")
    _mask_case(np.ones((2, 4), np.float32), 0.5, "8 equal weights (all tied: all kept)")
    _mask_case(_rng.integers(-3, 4, size=(5, 10)).astype(np.float32), 0.6, "50 weights in 7 values (many ties)")
    _mask_case(_rng.normal(size=(20, 30)), 0.37, "float64 weights")
    _mask_case(_rng.normal(size=(300,)).astype(np.float32), 0.5, "300 weights")
    ### END HIDDEN TESTS


# %% [markdown]
# 后面的一次性剪枝实验用你的 `my_magnitude_mask`；还没写完或还没通过测试时，改用库里的 `sparsity.magnitude_mask`（并打印说明）。

# %%
mask_fn = grading.use("magnitude_mask", my_magnitude_mask, sparsity.magnitude_mask,
                      what="aicslib.sparsity.magnitude_mask")

# %% [markdown]
# ## 4. 实验：不用框架的稀疏训练（习题 5.12）
#
# 习题 5.12 要求“不使用常见的机器学习框架”，只用 NumPy 训练三层全连接网络，并让每层稀疏度随训练从 0% 逐渐升到 50%。
# 把 tfmot 做的事拆开，就是三件事：
#
# 1. **日程**：第 $t$ 步要不要重算掩码、目标稀疏度是多少（第 2 节的 Zhu & Gupta 三次日程）；
# 2. **一步带掩码的动量 SGD**：前向、手写反向、动量更新，然后**重新施加掩码**；
# 3. **训练循环**：日程说该剪时，按当前权重用第 3 节的掩码规则重算每层掩码并立刻把剪掉的权重置 0，再走一步训练。
#
# 三个练习分开评分：后一个练习的测试用前一个的参考实现，所以前面没做对不影响后面的分数。

# %% [markdown]
# ### 4.1 练习：剪枝日程 `my_polynomial_decay`（3 分）
#
# 返回 `(should_prune, sparsity)`，与 tfmot 的 `PolynomialDecay` 相同（不要调用它）：
#
# * `should_prune`：只在 `begin_step, begin_step + frequency, begin_step + 2·frequency, ...` 这些步、且 `step <= end_step` 时为真；
#   `begin_step` 之前、`end_step` 之后都不剪；
# * `sparsity`：$p = \mathrm{clip}\big(\frac{t - t_0}{t_1 - t_0}, 0, 1\big)$，$s = s_f + (s_i - s_f)(1 - p)^{\text{power}}$。
#   `begin_step` 之前是 $s_i$，`end_step` 之后停在 $s_f$。可以假定 `end_step > begin_step`。

# %% nbgrader={"grade": false, "grade_id": "polynomial_decay", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_polynomial_decay(step, initial_sparsity, final_sparsity, begin_step, end_step, frequency=100, power=3):
    """(should_prune: bool, sparsity: float) at training step `step` (Zhu & Gupta 2017, tfmot's rules)."""
    ### BEGIN SOLUTION
    should_prune = begin_step <= step <= end_step and (step - begin_step) % frequency == 0
    p = min(max((step - begin_step) / (end_step - begin_step), 0.0), 1.0)
    return should_prune, final_sparsity + (initial_sparsity - final_sparsity) * (1.0 - p) ** power
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "polynomial_decay_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): my_polynomial_decay at every step of whole runs (before begin_step, at
# and between the pruning steps, after end_step) against the formula with tfmot's step rules
# (workbook.references.pruning.polynomial_decay, imported as _pruning_reference by the test cell of
# section 3); an answer calling aicslib's PolynomialDecay fails.


def _schedule_case(initial, final, begin, end, frequency, power=3):
    args = f"{initial}, {final}, begin_step={begin}, end_step={end}, frequency={frequency}, power={power}"
    for step in range(end + 2 * frequency + 2):
        got = grading.no_library_calls(my_polynomial_decay, step, initial, final, begin, end, frequency, power,
                                       what="my_polynomial_decay")
        should, s = _pruning_reference.polynomial_decay(step, initial, final, begin, end, frequency, power)
        call = f"my_polynomial_decay({step}, {args})"
        grading.check(isinstance(got, (tuple, list)) and len(got) == 2,
                      f"{call}: expected a pair (should_prune, sparsity), got {got!r}")
        grading.check(bool(got[0]) == should,
                      f"{call}: should_prune expected {should}, got {got[0]!r}. Hint: masks are recomputed at "
                      f"begin_step, begin_step + frequency, ... and only while step <= end_step")
        grading.check(abs(float(got[1]) - s) <= 1e-6,
                      f"{call}: sparsity expected {s:.6f}, got {float(got[1]):.6f}. Hint: p = (step - begin_step) "
                      f"/ (end_step - begin_step) clipped to [0, 1], s = final + (initial - final) * (1 - p)**power")


with grading.exercise("polynomial_decay"):
    _schedule_case(0.0, 0.5, 10, 50, 10)
    grading.check(tuple(my_polynomial_decay(30, 0.0, 0.5, 10, 50, 10)) == (True, 0.4375),
                  "halfway (p = 0.5) to 50% with power 3: expected (True, 0.4375) = 0.5 * (1 - 0.5**3)")
    ### BEGIN HIDDEN TESTS
    _schedule_case(0.0, 0.9, 3, 50, 7)             # frequency does not divide the window: no pruning at 50
    _schedule_case(0.2, 0.8, 0, 40, 5, power=1)    # linear, starting at step 0 from 20%
    _schedule_case(0.0, 0.5, 25, 100, 25, power=2)
    _schedule_case(0.1, 0.95, 4, 9, 1)             # a mask update at every step of a short window
    ### END HIDDEN TESTS


# %% [markdown]
# ### 4.2 练习：带掩码的动量 SGD 一步 `my_masked_sgd_step`（4 分）
#
# 网络 784-300-100-10：$h_1 = \mathrm{relu}(xW_1 + b_1)$，$h_2 = \mathrm{relu}(h_1W_2 + b_2)$，$z = h_2W_3 + b_3$，损失是
# 一个批次 (batch) 上 softmax 交叉熵的**平均**。反向传播从 $\partial L/\partial z = (\mathrm{softmax}(z) - \mathrm{onehot}(y))/B$ 开始，
# 逐层往回：$\partial L/\partial W = h^\top \delta$，$\partial L/\partial b = \sum_{\text{batch}} \delta$，
# 再 $\delta \leftarrow (\delta W^\top) \odot [h > 0]$（ReLU 只在输出大于 0 处传梯度）。
#
# 更新用 TF 的 `MomentumOptimizer` 规则，对**所有**参数：$v \leftarrow \mu v + g$，$w \leftarrow w - \eta v$；梯度是稠密的
# （被剪位置也有梯度），所以动量会把被剪的权重推离 0——更新之后必须**重新施加掩码** $W \leftarrow W \odot M$（偏置不剪）。
#
# 在原地更新 `params` 与 `velocity` 两个字典（`params[k] = ...` 即可），保持 float32，返回更新前这一批的平均损失。
# 被剪位置的速度不评分（把梯度也乘上掩码同样正确）。

# %% nbgrader={"grade": false, "grade_id": "masked_sgd_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_masked_sgd_step(params, velocity, masks, x, y, lr, momentum):
    """One momentum-SGD step on the MLP. params, velocity: dicts 'W1','b1',...,'W3','b3' of float32
    arrays (updated in place); masks: dict 'W1','W2','W3' of 0/1 arrays; x: (B, 784) float32;
    y: (B,) int labels. Returns the mean cross-entropy of the batch before the update."""
    ### BEGIN SOLUTION
    h1 = np.maximum(x @ params["W1"] + params["b1"], 0)
    h2 = np.maximum(h1 @ params["W2"] + params["b2"], 0)
    z = h2 @ params["W3"] + params["b3"]
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(len(y))
    loss = -log_p[rows, y].mean()
    d = np.exp(log_p)
    d[rows, y] -= 1
    d /= len(y)
    grads = {"W3": h2.T @ d, "b3": d.sum(axis=0)}
    d = (d @ params["W3"].T) * (h2 > 0)
    grads["W2"], grads["b2"] = h1.T @ d, d.sum(axis=0)
    d = (d @ params["W2"].T) * (h1 > 0)
    grads["W1"], grads["b1"] = x.T @ d, d.sum(axis=0)
    for k in params:
        velocity[k] = momentum * velocity[k] + grads[k]
        params[k] = params[k] - lr * velocity[k]
        if k in masks:
            params[k] = params[k] * masks[k]
    return float(loss)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "masked_sgd_step_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): one step against workbook.references.pruning.masked_sgd_step run in
# float64 on the same inputs: the loss, every parameter, the velocity of every weight that is not
# pruned; pruned weights exactly 0; params stay float32. The starting velocity is nonzero at pruned
# positions (as after a mask update): momentum alone would move them.
def _step_case(seed, sizes, batch, what, x=None, y=None, lr=0.05, momentum=0.9):
    rng = np.random.default_rng(seed)
    params = _pruning_reference.init_params(seed, sizes)
    params.update({f"b{i}": rng.normal(0, 0.1, n).astype(np.float32) for i, n in enumerate(sizes[1:], 1)})
    masks = {k: _pruning_reference.fast_mask(params[k], 0.5) for k in _pruning_reference.LAYERS}
    for k in masks:
        params[k] = params[k] * masks[k]
    velocity = {k: rng.normal(0, 0.1, v.shape).astype(np.float32) for k, v in params.items()}
    if x is None:
        x = rng.uniform(0, 1, (batch, sizes[0])).astype(np.float32)
        y = rng.integers(0, sizes[-1], batch)
    p, v = {k: a.copy() for k, a in params.items()}, {k: a.copy() for k, a in velocity.items()}
    loss = grading.no_library_calls(my_masked_sgd_step, p, v, masks, x, y, lr, momentum, what="my_masked_sgd_step")
    ep, ev = ({k: a.astype(np.float64) for k, a in d.items()} for d in (params, velocity))
    eloss = _pruning_reference.masked_sgd_step(ep, ev, masks, x.astype(np.float64), y, lr, momentum)
    call = f"my_masked_sgd_step on {what} (lr={lr}, momentum={momentum})"
    grading.check(loss is not None and abs(float(loss) - eloss) <= 1e-5 * max(1.0, abs(eloss)),
                  f"{call}: returned loss {loss!r}, expected the batch's mean cross-entropy {eloss:.6f}")
    for k in ("W3", "b3", "W2", "b2", "W1", "b1"):
        grading.check(not np.array_equal(p[k], params[k]),
                      f"{call}: params[{k!r}] did not change: update the dicts in place (params[k] = ...)")
        if k in masks:
            grading.check(np.all(p[k][masks[k] == 0] == 0),
                          f"{call}: {int(np.count_nonzero(p[k][masks[k] == 0]))} pruned weights of {k} are not 0 "
                          f"after the step. Hint: momentum moves them; re-apply the mask after the update")
        grading.check_array(p[k], ep[k], f"{call}: params[{k!r}] after the step", dtype=np.float32,
                            rtol=1e-4, atol=1e-6, hint="g by backprop of the mean loss; v = momentum * v + g; "
                            "w = w - lr * v; then W = W * mask (float32)")
        kept = masks[k] != 0 if k in masks else np.ones(p[k].shape, bool)
        grading.check_array(np.where(kept, v[k], 0), np.where(kept, ev[k], 0),
                            f"{call}: velocity[{k!r}] (weights not pruned)", rtol=1e-4, atol=1e-6,
                            hint="v = momentum * v + g with the gradient of the MEAN loss over the batch")


with grading.exercise("masked_sgd_step"):
    _step_case(1, (12, 10, 8, 5), 6, "a 12-10-8-5 network, a batch of 6")
    ### BEGIN HIDDEN TESTS
    _step_case(2, (30, 20, 16, 4), 17, "a 30-20-16-4 network, a batch of 17", lr=0.1, momentum=0.5)
    _step_case(3, (784, 300, 100, 10), 32, "the 784-300-100-10 MLP on 32 MNIST images",
               x=x_train[:32], y=y_train[:32])
    ### END HIDDEN TESTS


# %% [markdown]
# ### 4.3 练习：渐进剪枝的训练循环 `my_gradual_pruning`（4 分）
#
# 循环按 `t = 0, 1, 2, ...` 依次取批次。每步**训练之前**问日程 `schedule(t)`；要剪时，对 `W1, W2, W3` 各自
# `masks[k] = mask_fn(params[k], s)`，并**立刻**把剪掉的权重置 0（tfmot 也是先更新掩码、施加到权重，再算这一步），然后
# `step_fn(params, velocity, masks, x, y, lr, momentum)`。掩码开始时全是 1，速度全是 0。
#
# 因为权重一直是乘过掩码的，被剪的权重是 0、幅值最小，下一次稀疏度更高的掩码一定还剪掉它们：**掩码只会单调变稀疏**。
# 循环本身不做浮点运算，所以测试要求与参考循环的结果逐位相同。

# %% nbgrader={"grade": false, "grade_id": "gradual_pruning", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_gradual_pruning(params, batches, schedule, mask_fn, step_fn, lr=0.1, momentum=0.9):
    """Trains params (dict 'W1','b1',...; updated in place) on batches (an iterable of (x, y)).
    schedule(t) -> (should_prune, sparsity); mask_fn(W, s) -> 0/1 mask; step_fn as my_masked_sgd_step.
    Returns the final masks: dict 'W1','W2','W3'."""
    masks = {k: np.ones_like(params[k]) for k in ("W1", "W2", "W3")}
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    ### BEGIN SOLUTION
    for t, (x, y) in enumerate(batches):
        should_prune, s = schedule(t)
        if should_prune:
            for k in masks:
                masks[k] = mask_fn(params[k], s)
                params[k] = params[k] * masks[k]
        step_fn(params, velocity, masks, x, y, lr, momentum)
    ### END SOLUTION
    return masks


# %% nbgrader={"grade": true, "grade_id": "gradual_pruning_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the loop runs with the reference schedule, mask and step functions
# (wrapped to record their calls) and must reproduce the reference loop bit for bit: masks recomputed
# before exactly the scheduled steps at the scheduled sparsity, monotone masks (a pruned weight stays
# pruned), k = max(round(n (1 - s)), 1) weights kept at the end, the same final weights; on MNIST,
# 50% sparse within a band of the dense run.
def _run_loop(loop, params, data, schedule, lr=0.05, what="my_gradual_pruning"):
    rec = _pruning_reference.Recorder(schedule)
    masks = grading.no_library_calls(loop, params, iter(data), rec.schedule, rec.mask, rec.step, lr, 0.9,
                                     allowed=("schedule", "mask", "step"), what=what,
                                     how="with the schedule, mask_fn and step_fn it is given")
    return masks, rec


def _loop_case(seed, n_steps, final, begin, end, freq, what, sizes=(30, 20, 16, 4)):
    rng = np.random.default_rng(seed)
    data = [(rng.uniform(0, 1, (8, sizes[0])).astype(np.float32), rng.integers(0, sizes[-1], 8))
            for _ in range(n_steps)]
    sched = _pruning_reference.polynomial_schedule(0.0, final, begin, end, freq)
    p, ep = _pruning_reference.init_params(seed, sizes), _pruning_reference.init_params(seed, sizes)
    masks, rec = _run_loop(my_gradual_pruning, p, data, sched)
    emasks, erec = _run_loop(_pruning_reference.gradual_pruning, ep, data, sched, what="the reference")
    call = f"my_gradual_pruning on {what} ({n_steps} steps, 0 -> {final:.0%}, begin {begin}, end {end}, every {freq})"
    got_calls = [(t, shape, round(s, 6)) for t, shape, s, _ in rec.masks]
    want_calls = [(t, shape, round(s, 6)) for t, shape, s, _ in erec.masks]
    grading.check(got_calls == want_calls,
                  f"{call}: mask_fn calls (steps run before it, layer shape, sparsity) expected {want_calls[:6]}"
                  f"{' ...' if len(want_calls) > 6 else ''} ({len(want_calls)} calls), got {got_calls[:6]}"
                  f"{' ...' if len(got_calls) > 6 else ''} ({len(got_calls)} calls). Hint: ask schedule(t) before "
                  f"step t, t = 0, 1, ...; recompute W1, W2, W3's masks only when it says so")
    grading.check(rec.steps == n_steps, f"{call}: step_fn ran {rec.steps} times, expected once per batch ({n_steps})")
    for shape in {m[1] for m in rec.masks}:
        history = [m[3] for m in rec.masks if m[1] == shape]
        for before, after in zip(history, history[1:]):
            grading.check(np.all(after <= before), f"{call}: a weight of the {shape} layer pruned by one mask "
                                                   "update is kept by a later one (masks must only get sparser)")
    grading.check(isinstance(masks, dict) and set(masks) == {"W1", "W2", "W3"},
                  f"{call}: expected the final masks as a dict W1, W2, W3, got {type(masks).__name__}")
    for k in ("W1", "W2", "W3"):
        grading.check_array(masks[k], emasks[k], f"{call}: the final mask of {k}",
                            hint="rank the current (trained, already masked) weights; zero the pruned ones at once, "
                                 "before that step's forward pass; one velocity for the whole run")
        k_final = _pruning_reference.kept_count(p[k].size, final)
        grading.check(int(np.count_nonzero(p[k])) == k_final,
                      f"{call}: {k} keeps {int(np.count_nonzero(p[k]))} nonzero weights, expected k = "
                      f"max(round({p[k].size} * (1 - {final})), 1) = {k_final}")
    for k in ep:
        grading.check_array(p[k], ep[k], f"{call}: params[{k!r}] after training (bit for bit)",
                            hint="zero the pruned weights as soon as a mask is recomputed, before that step's "
                                 "forward pass; one velocity for the whole run")


with grading.exercise("gradual_pruning"):
    _loop_case(4, 30, 0.5, 5, 20, 5, "a 30-20-16-4 network")
    ### BEGIN HIDDEN TESTS
    _loop_case(5, 40, 0.9, 0, 33, 4, "a 30-20-16-4 network")        # pruning from step 0; no update at 33
    _loop_case(6, 12, 0.75, 2, 11, 3, "a 7-5-6-3 network", sizes=(7, 5, 6, 3))   # tiny layers: rounding
    _mnist = [(x_train[i:i + 100], y_train[i:i + 100]) for i in range(0, 2000, 100)] * 2
    _acc = {}
    for _final in (None, 0.5):
        _p = _pruning_reference.init_params(SEED)
        _sched = (_pruning_reference.never_prune if _final is None else
                  _pruning_reference.polynomial_schedule(0.0, 0.5, 4, 20, 4))
        _run_loop(my_gradual_pruning, _p, _mnist, _sched, lr=0.1)
        _acc[_final] = _pruning_reference.accuracy(_p, x_test[:2000], y_test[:2000])
    grading.check(_acc[0.5] >= _acc[None] - 0.04,
                  f"40 steps on 2000 MNIST images: 50% sparse reached {_acc[0.5]:.2%}, the dense run {_acc[None]:.2%}: "
                  "expected within 4 points")
    ### END HIDDEN TESTS


# %% [markdown]
# ### 4.4 用你的实现训练：稠密 vs 0% → 50%
#
# 下面用你写的四个函数（掩码、日程、一步、循环；没通过测试的用参考实现，并打印说明）在本章的 MNIST 数据上从头训练两次：
# 稠密（日程从不剪枝）与 0% → 50%（Zhu & Gupta 三次日程，从第 1/4 轮开始、训练过半时达到 50%，之后只训练留下的权重）。
# 学习率恒为 0.05，批次 128。这正是习题 5.12 的要求：纯 NumPy，每层稀疏度随训练从 0% 升到 50%。

# %%
from workbook.references import pruning as pruning_reference

lab_mask = mask_fn
lab_schedule = grading.use("polynomial_decay", my_polynomial_decay, pruning_reference.polynomial_decay,
                           what="workbook.references.pruning.polynomial_decay")
lab_step = grading.use("masked_sgd_step", my_masked_sgd_step, pruning_reference.masked_sgd_step,
                       what="workbook.references.pruning.masked_sgd_step")
lab_loop = grading.use("gradual_pruning", my_gradual_pruning, pruning_reference.gradual_pruning,
                       what="workbook.references.pruning.gradual_pruning")
LAB_EPOCHS, LAB_LR = (2, 0.05) if FAST else (4, 0.05)
LAB_STEPS = LAB_EPOCHS * STEPS_PER_EPOCH
LAB_BEGIN = STEPS_PER_EPOCH // 4
LAB_FREQ = max(FREQ // 2, 1)
LAB_END = LAB_BEGIN + LAB_FREQ * max((LAB_STEPS // 2 - LAB_BEGIN) // LAB_FREQ, 1)
LAB_LAYERS = pruning_reference.LAYERS


def lab_logged(step_fn, bar, log):
    """step_fn, also recording every layer's sparsity (into log) and advancing the progress bar."""
    def step(params, velocity, masks, x, y, lr, momentum):
        if bar.n % LOG_EVERY == 0:
            log["step"].append(bar.n)
            for k in LAB_LAYERS:
                log[k].append(float(np.mean(params[k] == 0)))
        bar.update(1)
        return step_fn(params, velocity, masks, x, y, lr, momentum)
    return step


lab = {}
t0 = time.perf_counter()
for name, final in (("dense", None), ("0 -> 50%", 0.5)):
    params = mnist_mlp.init_params(SEED)      # the same Glorot-uniform weights as chapters 04 and 17
    sched = ((lambda t: (False, 0.0)) if final is None else
             (lambda t, f=final: lab_schedule(t, 0.0, f, LAB_BEGIN, LAB_END, LAB_FREQ)))
    log = {"step": [], **{k: [] for k in LAB_LAYERS}}
    with tqdm(total=LAB_STEPS, desc=f"NumPy, {name}", leave=False) as bar:
        masks = lab_loop(params, pruning_reference.batches(x_train, y_train, BATCH, LAB_EPOCHS, SEED), sched,
                         lab_mask, lab_logged(lab_step, bar, log), LAB_LR, MOMENTUM)
    lab[name] = {"accuracy": mnist_mlp.accuracy(params, x_test, y_test), "params": params, "log": log}
gap_lab = 100 * (lab["0 -> 50%"]["accuracy"] - lab["dense"]["accuracy"])
print(f"NumPy, {LAB_EPOCHS} epochs ({LAB_STEPS} steps; {time.perf_counter() - t0:.1f} s for both runs): "
      f"dense {lab['dense']['accuracy']:.2%}, 0 -> 50% {lab['0 -> 50%']['accuracy']:.2%} ({gap_lab:+.2f} points); "
      f"masks from step {LAB_BEGIN} to {LAB_END} every {LAB_FREQ} steps")
for k in LAB_LAYERS:
    w = lab["0 -> 50%"]["params"][k]
    print(f"  {k} {w.shape}: {np.count_nonzero(w)} of {w.size} weights nonzero")
    assert np.count_nonzero(w) == max(round(w.size * 0.5), 1), k
assert gap_lab > -(2.0 if FAST else 1.0), "0 -> 50% should stay close to the dense run"

fig, ax = plt.subplots(figsize=(8, 3.2))
lab_steps = np.arange(LAB_STEPS)
ax.plot(lab_steps, [pruning_reference.polynomial_decay(int(t), 0.0, 0.5, LAB_BEGIN, LAB_END, LAB_FREQ)[1]
                    for t in lab_steps], "k--", lw=1, label="schedule (target)")
for k, m in zip(LAB_LAYERS, ("o", "s", "^")):
    ax.plot(lab["0 -> 50%"]["log"]["step"], lab["0 -> 50%"]["log"][k], m, ms=3, label=k)
ax.set_xlabel("training step"); ax.set_ylabel("sparsity (fraction of zeros)")
ax.set_title("NumPy sparse training (lab): per-layer sparsity, 0 -> 50%"); ax.legend(); plt.show()


# %% [markdown]
# ## 5. 用框架做同样的事：`aicslib` 的渐进剪枝（静态图 + Session）
#
# 网络与第 04 章相同（784-300-100-10，ReLU，Glorot 均匀初始化，动量 SGD，学习率 0.1 按轮余弦衰减），写成静态图，用 Session 训练。
# 数据、初始化与 NumPy 前向都来自 `workbook/mnist_mlp.py`，与第 04、17 章是同一份代码、同一组初始权重（第 4 节的实验也从它出发）。
# 先训练稠密模型（完整设置 20 轮），再**从训练好的稠密模型出发**剪枝：这是 Han et al. 2015 与 tfmot 推荐的做法
# （“先训练、再剪枝、再训练”）。剪枝运行共 `PRUNE_EPOCHS` 轮（完整设置 10 轮），学习率重新从 0.1 开始余弦衰减
# （学习率回卷 (learning-rate rewinding)，Renda et al. 2020）；前一半时间里稀疏度按日程从 0% 升到目标，
# 后一半掩码不再变化，只对留下的权重继续训练 (fine-tuning)（Zhu & Gupta 2017 的做法）。
# 剪枝只作用于三个权重矩阵（偏置不剪，tfmot 也如此）。训练循环多了两行：每步之前 `pruned.update(step, session=sess)`
# （日程说该剪时按当前权重重算掩码），以及 `train_op = pruned.apply_gradients(opt, grads_and_vars)`
# （优化器更新之后在同一次 `sess.run` 里重新施加掩码）。

# %%
from workbook.mnist_mlp import SIZES, init_params     # shared with chapters 04 and 17

LAYERS = ("W1", "W2", "W3")
assert SIZES == (784, 300, 100, 10)
INIT = init_params(SEED)         # the weights chapter 03 starts from

def lr_at(step, total, epochs=EPOCHS, base_lr=BASE_LR):
    """Cosine decay from base_lr to 0 over the run, one value per epoch."""
    epoch = step * epochs // total
    return float(base_lr * 0.5 * (1 + np.cos(np.pi * epoch / epochs)))


def train(method="dense", final_sparsity=0.5, schedule="polynomial (power 3)", n_train=TRAIN_N,
          epochs=EPOCHS, log_every=LOG_EVERY, progress=True, seed=SEED, start=None, base_lr=BASE_LR):
    """Trains the MLP in a graph + Session. method: 'dense', 'prune' (gradual magnitude pruning),
    'rigl' or 'momentum' (dynamic sparse training at final_sparsity from the start).
    start: initial weights (default: the fresh INIT); pruning a trained model starts at step 0.
    Returns a dict: test accuracy, final weights, sparsity log."""
    steps_per_epoch = math.ceil(n_train / BATCH)
    total = epochs * steps_per_epoch
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, [None, 784], name="x")
        y = aics.placeholder(aics.int64, [None], name="y")
        lr = aics.placeholder(aics.float32, [], name="learning_rate")
        p = {k: aics.Variable(v, name=k) for k, v in (INIT if start is None else start).items()}
        h1 = aics.nn.relu(aics.matmul(x, p["W1"]) + p["b1"])
        h2 = aics.nn.relu(aics.matmul(h1, p["W2"]) + p["b2"])
        logits = aics.matmul(h2, p["W3"]) + p["b3"]
        loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = aics.reduce_mean(aics.cast(aics.equal(aics.argmax(logits, axis=1), y), aics.float32))
        opt = aics.train.MomentumOptimizer(lr, MOMENTUM)
        grads_and_vars = opt.compute_gradients(loss, var_list=list(p.values()))
        kernels = {k: p[k] for k in LAYERS}
        kernel_grads = [g for g, v in grads_and_vars if v in kernels.values()]
        if method == "dense":
            masked = None
            train_op = opt.apply_gradients(grads_and_vars)
        elif method == "prune":
            freq = max(FREQ * steps_per_epoch // STEPS_PER_EPOCH, 1)
            begin, end = pruning_window(total, steps_per_epoch, freq, trained=start is not None)
            masked = sparsity.prune_low_magnitude(
                kernels, make_schedule(schedule, final_sparsity, begin=begin, end=end, freq=freq))
        elif method == "rigl":
            masked = sparsity.RigL(kernels, final_sparsity, end_step=int(0.75 * total),
                                   update_frequency=max(total // 20, 1), drop_fraction=0.3,
                                   optimizer=opt, seed=seed)
        elif method == "momentum":
            masked = sparsity.SparseMomentum(kernels, final_sparsity, end_step=int(0.75 * total),
                                             optimizer=opt, update_frequency=max(total // 10, 1),
                                             prune_rate=0.5, seed=seed)
        else:
            raise ValueError(f"unknown method {method!r}")
        if masked is not None:
            train_op = masked.apply_gradients(opt, grads_and_vars)
        init = aics.global_variables_initializer()
    sess = aics.Session(graph=graph)
    sess.run(init)
    if method in ("rigl", "momentum"):
        masked.initialize(session=sess)
    log = {"step": [], **{k: [] for k in LAYERS}}
    rng = np.random.default_rng(seed)
    xs, ys = x_train[:n_train], y_train[:n_train]
    bar = tqdm(total=total, desc=f"{method} -> {final_sparsity:.0%}" if method != "dense" else "dense",
               leave=False, disable=not progress)
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for first in range(0, n_train, BATCH):
            idx = order[first:first + BATCH]
            feed = {x: xs[idx], y: ys[idx], lr: lr_at(step, total, epochs, base_lr)}
            if method == "prune":
                masked.update(step, session=sess)
            elif method == "rigl" and masked.is_update_step(step):
                masked.update(step, sess.run(kernel_grads, feed), session=sess)
            elif method == "momentum":
                masked.update(step, session=sess)
            sess.run(train_op, feed)
            if masked is not None and step % log_every == 0:
                log["step"].append(step)
                for k, v in masked.sparsities(session=sess).items():
                    log[k].append(v)
            step += 1
            bar.update(1)
    bar.close()
    acc = float(sess.run(accuracy, {x: x_test, y: y_test}))
    weights = sess.run({k: v for k, v in p.items()})
    return {"method": method, "accuracy": acc, "weights": weights, "log": log, "masked": masked,
            "final_sparsity": {k: float((weights[k] == 0).mean()) for k in LAYERS}}


t0 = time.perf_counter()
dense = train("dense")
pruned50 = train("prune", 0.5, epochs=PRUNE_EPOCHS, base_lr=PRUNE_LR, start=dense["weights"])
print(f"dense: {dense['accuracy']:.4f}   pruned to 50%: {pruned50['accuracy']:.4f}   "
      f"({time.perf_counter() - t0:.1f} s)")
print("final sparsity per layer:", {k: round(v, 4) for k, v in pruned50["final_sparsity"].items()})
for k in LAYERS:   # exactly max(round(n * 0.5), 1) weights survive in every layer
    n = INIT[k].size
    assert int((pruned50["weights"][k] != 0).sum()) == max(round(n * 0.5), 1), k
assert pruned50["accuracy"] > (0.90 if FAST else 0.98)
gap50 = 100 * (dense["accuracy"] - pruned50["accuracy"])
print(f"50% sparse vs dense: {gap50:.2f} points below dense (target: within 0.1 points: "
      f"{'met' if gap50 <= 0.1 + 1e-9 else 'missed'})")
if not FAST:   # measured -0.02 and 0.06 (seed 0, 2 and 1 BLAS threads): the summation order moves it
    assert gap50 <= 0.15, "gradual pruning to 50% should cost almost nothing in the full setting"

# %% [markdown]
# 每层的实际稀疏度（按 `LOG_EVERY` 步记录）与日程给出的目标完全重合：稀疏度只在 `FREQ` 的整数倍步上跳一级，两次之间保持不变。

# %%
sched = make_schedule("polynomial (power 3)", 0.5)
log = pruned50["log"]
fig, ax = plt.subplots(figsize=(8, 3.2))
ax.plot(steps, [float(sched(int(t))[1]) if t >= BEGIN_STEP else 0.0 for t in steps], "k--", lw=1,
        label="schedule (target)")
for k, m in zip(LAYERS, ("o", "s", "^")):
    ax.plot(log["step"], log[k], m, ms=3, label=f"{k} {INIT[k].shape}")
ax.set_xlabel("step of the pruning run"); ax.set_ylabel("sparsity (fraction of zeros)")
ax.set_title("per-layer sparsity during gradual pruning to 50%"); ax.legend(); plt.show()

# %% [markdown]
# ## 6. 更稀疏：90%，以及与论文数字的对照
#
# 同一个流程（从同一个训练好的稠密模型出发）把最终稀疏度设为 90%（只剩十分之一的权重）。作为对照，再做一次**一次性剪枝**：
# 直接把训练好的稠密模型按幅值剪到 50% / 90%（用你在第 3 节写的掩码），不再训练——可以看到渐进剪枝 + 继续训练为什么重要。
#
# 论文里 LeNet-300-100（就是这个 784-300-100-10 网络）的数字：Han et al. 2015（*Learning both Weights and Connections*）
# 稠密错误率 1.64%，剪掉约 92% 的权重（参数从 267K 减到 22K，少 12 倍）后 1.59%（论文表 1；稠密的参考模型取自 Caffe 的
# model zoo）。训练设置与本章不同，仅作量级参考。
# RigL 的论文（Evci et al. 2020，arXiv 1911.11134）在摘要里列出的实验是 ImageNet-2012 上的 ResNet-50 与 MobileNet v1/v2、
# CIFAR-10 上的 WideResNet 和 WikiText-103 上的 RNN，没有这个网络。作为量级对照，下面打印作者官方仓库 README
# （https://github.com/google-research/rigl ）里 ImageNet 上 ResNet-50 的一组数：“1x Training Results” 表中，
# 稀疏度按层均匀分布（Uniform；README 注明这种分布让第一层保持稠密）、90% 稀疏、训练步数与稠密相同时 top-1 准确率 72.02%；
# “Extended Training Results” 表第一行的稠密模型是 76.8%。
# RigL 在这个 784-300-100-10 网络上的表现由第 7 节在本机实测。

# %%
pruned90 = train("prune", 0.9, epochs=PRUNE_EPOCHS, base_lr=PRUNE_LR, start=dense["weights"])

one_shot = {}
for s in (0.5, 0.9):
    w = dict(dense["weights"])
    for k in LAYERS:
        w[k] = w[k] * mask_fn(w[k], s)
    one_shot[s] = mnist_mlp.accuracy(w, x_test, y_test)

rows = [("dense (this run)", dense["accuracy"], 0.0),
        ("one-shot 50%, no retraining", one_shot[0.5], 0.5),
        ("gradual 0 -> 50% (this run)", pruned50["accuracy"], 0.5),
        ("one-shot 90%, no retraining", one_shot[0.9], 0.9),
        ("gradual 0 -> 90% (this run)", pruned90["accuracy"], 0.9),
        ("Han et al. 2015, dense", 1 - 0.0164, 0.0),
        ("Han et al. 2015, 12x fewer weights", 1 - 0.0159, 1 - 1 / 12)]
print(f"{'model':38s} {'sparsity':>8s} {'accuracy':>9s} {'error':>7s}")
for name, acc, s in rows:
    print(f"{name:38s} {s:>8.0%} {acc:>9.2%} {1 - acc:>7.2%}")
# RigL (Evci et al. 2020), the authors' README at https://github.com/google-research/rigl: ResNet-50 on ImageNet,
# "1x Training Results" (uniform 90% sparsity, first layer dense, as many steps as the dense run) and the dense row
# of "Extended Training Results". Another task: only the drop is comparable.
rigl_imagenet = {"dense": 0.768, "RigL, 90% sparse (uniform), 1x steps": 0.7202}
print("for scale, RigL on ImageNet (ResNet-50, top-1; the rigl repository's README):",
      ", ".join(f"{k} {v:.2%}" for k, v in rigl_imagenet.items()),
      f"({100 * (rigl_imagenet['RigL, 90% sparse (uniform), 1x steps'] - rigl_imagenet['dense']):+.1f} points)")
print(f"\n50%: {100 * (pruned50['accuracy'] - dense['accuracy']):+.2f} points vs dense; "
      f"90%: {100 * (pruned90['accuracy'] - dense['accuracy']):+.2f} points")
assert pruned90["accuracy"] > (0.88 if FAST else 0.98)
assert pruned90["accuracy"] > one_shot[0.9]     # retraining recovers what one-shot pruning loses

# %% [markdown]
# ## 7. 动态稀疏训练：RigL 与稀疏动量
#
# 渐进剪枝从稠密网络出发，训练前期并不省计算。**动态稀疏训练**从一开始就是稀疏的（随机掩码，这里 90%），
# 并保持非零权重总数不变，但不断**移动**它们：
#
# * **RigL**（Evci et al. 2020）：每 $\Delta T$ 步，在每层剪掉 $k = f(t)\cdot n_{\text{active}}$ 个幅值最小的权重，
#   再在不活跃的位置中按**稠密梯度**的幅值 $|\partial L/\partial w|$ 长出 $k$ 个（新权重从 0 开始，动量清零）。
#   $f(t) = \frac{\alpha}{2}(1+\cos\frac{\pi t}{T_{\text{end}}})$ 按余弦衰减（$\alpha=0.3$），$T_{\text{end}}$ 之后掩码不再变。
# * **稀疏动量**（Dettmers & Zettlemoyer 2019）：每次按剪枝率（同样余弦衰减）剪掉每层幅值最小的权重；
#   再按各层活跃权重的**平均动量幅值**把长出名额在层间重新分配，层内在动量最大的位置长出。于是各层稀疏度会自己调整。
#
# 稠密主权重在这里又派上用场：RigL 需要的“被剪位置的梯度”就是普通反向传播给出的稠密梯度。

# %%
rigl = train("rigl", 0.9)
smom = train("momentum", 0.9)
print(f"90% sparse from scratch: RigL {rigl['accuracy']:.4f}, sparse momentum {smom['accuracy']:.4f}; "
      f"gradual pruning {pruned90['accuracy']:.4f}; dense {dense['accuracy']:.4f}")
print("sparse momentum final per-layer sparsity:", {k: round(v, 3) for k, v in smom["final_sparsity"].items()})

fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.4), layout="constrained")
hist = rigl["masked"].history
a1.bar([h[0] for h in hist], [sum(h[2]) for h in hist], width=max(TOTAL_STEPS // 40, 1))
a1.set_xlabel("step"); a1.set_ylabel("connections moved (all layers)"); a1.set_title("RigL: drop/grow count (cosine decay)")
for k in LAYERS:
    a2.plot(smom["log"]["step"], smom["log"][k], label=k)
a2.set_xlabel("step"); a2.set_ylabel("sparsity (fraction of zeros)"); a2.legend()
a2.set_title("sparse momentum: per-layer sparsity moves, total fixed")
plt.show()
total_nonzero = sum(int((rigl["weights"][k] != 0).sum()) for k in LAYERS)
assert total_nonzero <= sum(max(round(INIT[k].size * 0.1), 1) for k in LAYERS)
assert [h[1] for h in hist] == sorted([h[1] for h in hist], reverse=True)   # drop fraction decays
assert rigl["accuracy"] > (0.85 if FAST else 0.97) and smom["accuracy"] > (0.85 if FAST else 0.97)

# %% [markdown]
# ## 8. 稀疏存储：COO（`SparseTensor`）与 CSR，以及稀疏矩阵乘的速度
#
# 训练结束后只需保存非零权重。`aics.sparse.SparseTensor(indices, values, dense_shape)` 是 TensorFlow 的 COO 格式：
# 每个非零元存一个坐标（int64）和一个值。CSR（压缩稀疏行，compressed sparse row）按行排好，行坐标换成每行一个偏移量
# `row_ptr`，更小，也正是矩阵乘 kernel 想要的顺序。下面把 90% 稀疏的 `W1` 存成两种格式，并用稀疏矩阵乘做推理，
# 结果与稠密计算一致。

# %%
W1 = pruned90["weights"]["W1"]
sp = aics.sparse.from_dense(W1.T)               # 300 x 784: the layer as A in A @ x^T
csr = aics.sparse.CSRMatrix.from_sparse_tensor(sp)
coo_bytes = sp.indices.numpy().nbytes + sp.values.numpy().nbytes
print(f"W1: {W1.size} weights, {csr.nnz} nonzero; dense {W1.nbytes / 1024:.0f} KB, "
      f"COO {coo_bytes / 1024:.0f} KB, CSR {csr.nbytes / 1024:.0f} KB")
xb = x_test[:256]
h_sparse = aics.sparse.sparse_dense_matmul(sp, xb.T).numpy().T
np.testing.assert_allclose(h_sparse, xb @ W1, rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(csr.matmul(xb.T).T, xb @ W1, rtol=1e-4, atol=1e-4)

def median_ms(fn, reps=5 if FAST else 15):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))

speed = {}
for s in (0.5, 0.9, 0.99):
    wd = dense["weights"]["W1"]
    a = (wd * sparsity.magnitude_mask(wd, s)).T.copy()      # the dense layer pruned one-shot to s
    c = aics.sparse.CSRMatrix.from_dense(a)
    speed[s] = (median_ms(lambda: a @ xb.T), median_ms(lambda: c.matmul(xb.T)))
print(f"{'sparsity':>8s} {'dense GEMM ms':>14s} {'CSR ms':>8s} {'dense/CSR':>10s}")
for s, (td, tc) in speed.items():
    print(f"{s:>8.0%} {td:>14.3f} {tc:>8.3f} {td / tc:>9.2f}x")

# %% [markdown]
# 稀疏矩阵乘的工作量与非零元个数成正比，但每个非零元都要一次间接寻址 (gather)，而稠密 GEMM 连续访存、几乎跑满 CPU 峰值。
# 所以 50% 稀疏时稀疏乘反而慢得多，90% 时也未必快，只有很高的稀疏度（如 99%）才赢——这就是为什么实际系统偏爱
# **结构化稀疏** (structured sparsity，如 2:4 稀疏、整行/整块剪枝) 或专用硬件。`benchmarks/bench_sparse.py` 给出更完整的对比
# （含 COO 算子与 PyTorch，计时在本机负载下会抖动）。

# %% [markdown]
# ## 9. 动手试一试：最终稀疏度与日程
#
# 选择最终稀疏度与剪枝日程，从第 5 节训练好的稠密模型出发，用一个小设置（`WIDGET_N` 张训练图、`WIDGET_EPOCHS` 轮，图的标题里印着）重新剪枝并继续训练；
# 右侧显示每层**非零**权重的直方图。
# 幅值剪枝在 0 附近挖出一个“空洞”；稀疏度越高，空洞越宽，剩下的权重越大。

# %%
out = widgets.Output()
final_w = widgets.Dropdown(options=[("50%", 0.5), ("75%", 0.75), ("90%", 0.9), ("95%", 0.95), ("99%", 0.99)],
                           value=0.5, description="final sparsity (fraction of zeros)",
                           style={"description_width": "initial"})
schedule_w = widgets.Dropdown(options=SCHEDULES, value=SCHEDULES[0], description="pruning schedule",
                              style={"description_width": "initial"})
WIDGET_N, WIDGET_EPOCHS = (1000, 1) if FAST else (2000, 2)

def retrain(_=None):
    r = train("prune", final_w.value, schedule_w.value, n_train=WIDGET_N, epochs=WIDGET_EPOCHS,
              log_every=2, progress=False, start=dense["weights"], base_lr=PRUNE_LR)
    with out:
        out.clear_output(wait=True)
        # constrained layout keeps the suptitle above the panel titles and the labels apart
        fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), layout="constrained")
        for k in LAYERS:
            axes[0].plot(r["log"]["step"], r["log"][k], label=k)
        axes[0].set_title(f"sparsity, {schedule_w.value}", fontsize=9); axes[0].legend(fontsize=7)
        axes[0].set_xlabel("training step"); axes[0].set_ylabel("fraction of zeros")
        for ax, k in zip(axes[1:], LAYERS):
            w = r["weights"][k]
            ax.hist(w[w != 0], bins=60, color="C0")
            ax.set_title(f"{k}: {(w == 0).mean():.1%} zeros", fontsize=9); ax.set_yscale("log")
            ax.set_xlabel("value of a nonzero weight"); ax.set_ylabel("number of weights (log)")
        fig.suptitle(f"final sparsity {final_w.value:.0%}: test accuracy {r['accuracy']:.2%} "
                     f"({WIDGET_N} images, {WIDGET_EPOCHS} epochs)", fontsize=10)
        plt.show()
    return r

final_w.observe(retrain, "value"); schedule_w.observe(retrain, "value")
display(widgets.VBox([widgets.HBox([final_w, schedule_w]), out]))
r0 = retrain()
assert abs(r0["final_sparsity"]["W1"] - 0.5) < 1e-3 and r0["accuracy"] > 0.7

# %% [markdown]
# ## 本次运行的结果
#
# 下面汇总这次运行的测试准确率（`AICS_FAST=1` 只用 8000 张训练图，数字比完整设置低）。完整设置下，上面的断言要求：
# 剪到 50% 比稠密低不超过 0.15 个百分点（目标 0.1）、剪到 90% 仍有 98%。单次运行的噪声约 ±0.1 个百分点（测试集的 10 张图就是
# 0.1 个百分点），BLAS 的线程数改变求和顺序，数字也会变；换种子重跑同一段代码用
# `OMP_NUM_THREADS=1 python benchmarks/sparse_training_seeds.py 1 2`。

# %%
summary = [("dense", dense["accuracy"]), ("gradual 0 -> 50%", pruned50["accuracy"]),
           ("gradual 0 -> 90%", pruned90["accuracy"]), ("one-shot 90%, no retraining", one_shot[0.9]),
           ("RigL 90% from scratch", rigl["accuracy"]), ("sparse momentum 90% from scratch", smom["accuracy"])]
print(f"{'full setting' if not FAST else 'AICS_FAST'}: {TRAIN_N} training images, seed {SEED}")
for name, acc in summary:
    print(f"  {name:34s} {acc:.2%}  ({100 * (acc - dense['accuracy']):+.2f} points vs dense)")
print(f"NumPy lab ({LAB_EPOCHS} epochs from scratch): dense {lab['dense']['accuracy']:.2%}, "
      f"0 -> 50% {lab['0 -> 50%']['accuracy']:.2%} ({gap_lab:+.2f} points)")

# %% [markdown]
# ## 小结
#
# * 稀疏训练沿用混合精度“两份数据”的结构：稠密主权重接收更新（梯度照常是稠密的），掩码给出计算用的稀疏权重；
#   每次优化器更新之后重新施加掩码，被剪掉的权重才会一直为 0。
# * 不用框架也只要三样东西（第 4 节的实验）：日程（何时、剪到多少）、按幅值的掩码、以及“前向—手写反向—动量更新—重新施加掩码”
#   的一步；框架（第 5 节的 `prune_low_magnitude`）做的是同一件事，只是把它们放进了图里。
# * 剪枝日程决定**何时剪**、**剪到多少**：`PolynomialDecay` 先快后慢，给网络恢复时间；一次性剪到 90% 而不再训练会明显掉点，
#   渐进剪枝 + 继续训练几乎不掉点（上一节打印了这次运行的数字）。要紧的是剪完之后还有足够的训练：从训练好的稠密模型出发、
#   剪枝只占剪枝运行的前一半，后一半继续训练留下的权重。
# * 动态稀疏训练（RigL、稀疏动量）从一开始就稀疏，用梯度或动量决定在哪里长出新连接，训练全程都能利用稀疏性。
# * 稀疏存储（COO / CSR）省内存；但在通用 CPU 上，非结构化稀疏矩阵乘只有在很高的稀疏度下才比稠密 GEMM 快。
