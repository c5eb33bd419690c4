# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 12 稀疏训练：让 784-300-100-10 网络的一半（或九成）权重变成 0
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
# 4. 用 `aicslib.sparsity.prune_low_magnitude` 在静态图 + Session 中训练，画出每层稀疏度随时间的变化，与稠密模型及论文数字比较；
# 5. 了解动态稀疏训练 (dynamic sparse training)：RigL 与稀疏动量 (sparse momentum) 如何“剪掉再长出”连接；
# 6. 用 `aics.sparse.SparseTensor`（COO）与 CSR 格式存储稀疏权重，度量稀疏矩阵乘相对稠密 GEMM 的速度；
# 7. 用小部件 (widget) 选择最终稀疏度与日程，重新训练并观察准确率和权重直方图。
#
# **运行时间**：`AICS_FAST=1`（CI）只用 8000 张训练图（稠密 2 轮，剪枝 1 轮），代码路径与完整设置完全相同。
# 完整设置（60000 张；稠密 20 轮 = 9380 步，两次剪枝各 10 轮 = 4690 步，RigL 与稀疏动量各 20 轮）：2026-11-23 在本机
# 用 `python notebooks/12-sparse-training.py` 实测，几乎空闲时（负载约 2）1 分 21 秒（CPU 时间 148 秒）。
# 机器繁忙时请设 `OMP_NUM_THREADS=1`：负载约 14 时，BLAS 用默认的 2 个线程每秒只走约 4 步，单线程约 175 步
# （`OMP_NUM_THREADS=1` 全程 4 分 47 秒，CPU 时间 92 秒）。每个训练都有进度条。
#
# **练习**（自动评分，3 分）：第 3 节的 `my_magnitude_mask`。没做完（或没通过测试）时后面的单元格改用库里的
# `sparsity.magnitude_mask`，并打印说明，笔记本仍能一直运行到底。

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
from aicslib.datasets import mnist
from workbook import grading

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

(x_train_u8, y_train), (x_test_u8, y_test) = mnist.load_data()
x_train = x_train_u8[:TRAIN_N].reshape(-1, 784).astype(np.float32) / np.float32(255.0)
x_test = x_test_u8.reshape(-1, 784).astype(np.float32) / np.float32(255.0)
y_train, y_test = y_train[:TRAIN_N].astype(np.int64), y_test.astype(np.int64)
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
# 代价是训练时并不省内存和计算，省的是**训练结束后**：那时只保存非零权重（第 6 节的 COO/CSR 格式），推理用稀疏矩阵乘。
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
# ## 4. 渐进剪枝训练：0% → 50%（习题 5.12 下半部分）
#
# 网络与第 10 章相同（784-300-100-10，ReLU，Glorot 均匀初始化，动量 SGD，学习率 0.1 按轮余弦衰减），写成静态图，用 Session 训练。
# 先训练稠密模型（完整设置 20 轮），再**从训练好的稠密模型出发**剪枝：这是 Han et al. 2015 与 tfmot 推荐的做法
# （“先训练、再剪枝、再训练”）。剪枝运行共 `PRUNE_EPOCHS` 轮（完整设置 10 轮），学习率重新从 0.1 开始余弦衰减
# （学习率回卷 (learning-rate rewinding)，Renda et al. 2020）；前一半时间里稀疏度按日程从 0% 升到目标，
# 后一半掩码不再变化，只对留下的权重继续训练 (fine-tuning)（Zhu & Gupta 2017 的做法）。
# 剪枝只作用于三个权重矩阵（偏置不剪，tfmot 也如此）。训练循环多了两行：每步之前 `pruned.update(step, session=sess)`
# （日程说该剪时按当前权重重算掩码），以及 `train_op = pruned.apply_gradients(opt, grads_and_vars)`
# （优化器更新之后在同一次 `sess.run` 里重新施加掩码）。

# %%
SIZES = (784, 300, 100, 10)
LAYERS = ("W1", "W2", "W3")

def init_params(seed=SEED):
    rng = np.random.default_rng(seed)
    params = {}
    for i, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:]), start=1):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params[f"W{i}"] = rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)
        params[f"b{i}"] = np.zeros(fan_out, np.float32)
    return params

INIT = init_params()

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
# ## 5. 更稀疏：90%，以及与论文数字的对照
#
# 同一个流程（从同一个训练好的稠密模型出发）把最终稀疏度设为 90%（只剩十分之一的权重）。作为对照，再做一次**一次性剪枝**：
# 直接把训练好的稠密模型按幅值剪到 50% / 90%（用你在第 3 节写的掩码），不再训练——可以看到渐进剪枝 + 继续训练为什么重要。
#
# 论文里 LeNet-300-100（就是这个 784-300-100-10 网络）的数字：Han et al. 2015（*Learning both Weights and Connections*）
# 稠密错误率 1.64%，剪掉约 92% 的权重（参数少 12 倍）后 1.59%；RigL（Evci et al. 2020）报告在 87% 稀疏度下训练结束时错误率约 1.48%。
# 这些数字来自更长的训练（数十轮）与调过的超参数，仅作量级参考。

# %%
pruned90 = train("prune", 0.9, epochs=PRUNE_EPOCHS, base_lr=PRUNE_LR, start=dense["weights"])

def accuracy_of(weights):
    h = np.maximum(x_test @ weights["W1"] + weights["b1"], 0)
    h = np.maximum(h @ weights["W2"] + weights["b2"], 0)
    return float(np.mean((h @ weights["W3"] + weights["b3"]).argmax(axis=1) == y_test))

one_shot = {}
for s in (0.5, 0.9):
    w = dict(dense["weights"])
    for k in LAYERS:
        w[k] = w[k] * mask_fn(w[k], s)
    one_shot[s] = accuracy_of(w)

rows = [("dense (this run)", dense["accuracy"], 0.0),
        ("one-shot 50%, no retraining", one_shot[0.5], 0.5),
        ("gradual 0 -> 50% (this run)", pruned50["accuracy"], 0.5),
        ("one-shot 90%, no retraining", one_shot[0.9], 0.9),
        ("gradual 0 -> 90% (this run)", pruned90["accuracy"], 0.9),
        ("Han et al. 2015, dense", 1 - 0.0164, 0.0),
        ("Han et al. 2015, 12x fewer weights", 1 - 0.0159, 1 - 1 / 12),
        ("RigL 2020, end of training", 1 - 0.0148, 0.87)]
print(f"{'model':38s} {'sparsity':>8s} {'accuracy':>9s} {'error':>7s}")
for name, acc, s in rows:
    print(f"{name:38s} {s:>8.0%} {acc:>9.2%} {1 - acc:>7.2%}")
print(f"\n50%: {100 * (pruned50['accuracy'] - dense['accuracy']):+.2f} points vs dense; "
      f"90%: {100 * (pruned90['accuracy'] - dense['accuracy']):+.2f} points")
assert pruned90["accuracy"] > (0.88 if FAST else 0.98)
assert pruned90["accuracy"] > one_shot[0.9]     # retraining recovers what one-shot pruning loses

# %% [markdown]
# ## 6. 动态稀疏训练：RigL 与稀疏动量
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

fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.2))
hist = rigl["masked"].history
a1.bar([h[0] for h in hist], [sum(h[2]) for h in hist], width=max(TOTAL_STEPS // 40, 1))
a1.set_xlabel("step"); a1.set_ylabel("connections moved"); a1.set_title("RigL: drop/grow count (cosine decay)")
for k in LAYERS:
    a2.plot(smom["log"]["step"], smom["log"][k], label=k)
a2.set_xlabel("step"); a2.set_ylabel("sparsity"); a2.legend()
a2.set_title("sparse momentum: per-layer sparsity moves, total fixed")
plt.show()
total_nonzero = sum(int((rigl["weights"][k] != 0).sum()) for k in LAYERS)
assert total_nonzero <= sum(max(round(INIT[k].size * 0.1), 1) for k in LAYERS)
assert [h[1] for h in hist] == sorted([h[1] for h in hist], reverse=True)   # drop fraction decays
assert rigl["accuracy"] > (0.85 if FAST else 0.97) and smom["accuracy"] > (0.85 if FAST else 0.97)

# %% [markdown]
# ## 7. 稀疏存储：COO（`SparseTensor`）与 CSR，以及稀疏矩阵乘的速度
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
# ## 8. 动手试一试：最终稀疏度与日程
#
# 选择最终稀疏度与剪枝日程，从第 4 节训练好的稠密模型出发，用快速设置（2000 张训练图、2 轮）重新剪枝并继续训练；
# 右侧显示每层**非零**权重的直方图。
# 幅值剪枝在 0 附近挖出一个“空洞”；稀疏度越高，空洞越宽，剩下的权重越大。

# %%
out = widgets.Output()
final_w = widgets.Dropdown(options=[0.5, 0.75, 0.9, 0.95, 0.99], value=0.5, description="final sparsity")
schedule_w = widgets.Dropdown(options=SCHEDULES, value=SCHEDULES[0], description="schedule")
WIDGET_N, WIDGET_EPOCHS = 2000, 2

def retrain(_=None):
    r = train("prune", final_w.value, schedule_w.value, n_train=WIDGET_N, epochs=WIDGET_EPOCHS,
              log_every=2, progress=False, start=dense["weights"], base_lr=PRUNE_LR)
    with out:
        out.clear_output(wait=True)
        fig, axes = plt.subplots(1, 4, figsize=(13, 2.8))
        for k in LAYERS:
            axes[0].plot(r["log"]["step"], r["log"][k], label=k)
        axes[0].set_title(f"sparsity, {schedule_w.value}", fontsize=9); axes[0].legend(fontsize=7)
        axes[0].set_xlabel("step")
        for ax, k in zip(axes[1:], LAYERS):
            w = r["weights"][k]
            ax.hist(w[w != 0], bins=60, color="C0")
            ax.set_title(f"{k}: {(w == 0).mean():.1%} zeros", fontsize=9); ax.set_yscale("log")
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

# %% [markdown]
# ## 小结
#
# * 稀疏训练沿用混合精度“两份数据”的结构：稠密主权重接收更新（梯度照常是稠密的），掩码给出计算用的稀疏权重；
#   每次优化器更新之后重新施加掩码，被剪掉的权重才会一直为 0。
# * 剪枝日程决定**何时剪**、**剪到多少**：`PolynomialDecay` 先快后慢，给网络恢复时间；一次性剪到 90% 而不再训练会明显掉点，
#   渐进剪枝 + 继续训练几乎不掉点（上一节打印了这次运行的数字）。要紧的是剪完之后还有足够的训练：从训练好的稠密模型出发、
#   剪枝只占剪枝运行的前一半，后一半继续训练留下的权重。
# * 动态稀疏训练（RigL、稀疏动量）从一开始就稀疏，用梯度或动量决定在哪里长出新连接，训练全程都能利用稀疏性。
# * 稀疏存储（COO / CSR）省内存；但在通用 CPU 上，非结构化稀疏矩阵乘只有在很高的稀疏度下才比稠密 GEMM 快。
