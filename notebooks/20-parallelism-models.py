# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 20 并行训练的几种模型：同步 BatchNorm、参数服务器、通信代价与流水线并行
#
# **前置章节 (prerequisites)**：[19 distributed-training](19-distributed-training.ipynb)
#
# **对应习题**：5.3（续）。**承接** `19-distributed-training.ipynb`：那一章用逻辑设备上的"塔"、真正的 MPI 作业和你自己写的
# ring-allreduce 实现了数据并行——每个副本对 $B/N$ 个样本做前向和反向，梯度 allreduce 后做同样的更新，结果与单卡用整个批
# 训练相同。本章看这幅图之外的几种情形和几种结构：
#
# **学习目标**
#
# 1. 知道数据并行何时**不**等于单卡大批：BatchNorm 用批统计量，不同步时每个副本只看到自己的样本；同步 BN 把统计量
#    allreduce——练习里你写出各副本样本数不同时的合并公式；
# 2. 参数服务器 (parameter server) 的同步与异步训练：慢节点 (straggler) 与陈旧梯度 (stale gradient)；
# 3. 用 alpha-beta 通信模型 (latency-bandwidth model) 把本机的测量外推到 1–64 台机器（**这是模型，不是测量**）；
# 4. 模型并行 (model parallelism)：把网络的层切到不同设备上，用微批 (micro-batch) 流水线 (GPipe) 减少空泡 (bubble)。
#
# **运行时间**见下面第一个代码单元的输出（实测；第 4 节会启动一个 2 进程的 MPI 作业测量消息时间）。
# **练习**（自动评分，3 分）在第 2 节；没做完也能一直运行到底（后面的单元改用参考实现，并会说明）。
#
# 代码在 `aicslib/distribute/`（towers、通信模型 `comm_model.py`、GPipe `pipeline.py`），多设备执行器在
# `aicslib/framework/parallel_executor.py`，时间线在 `aicslib/client/timeline.py`。

# %%
import os
import tempfile

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display

import aicslib as aics
from aicslib import flags
from aicslib.distribute import comm_model, launch, split_batch, average_gradients
from aicslib.distribute import train_data_parallel as dp
from aicslib.distribute.pipeline import Pipeline, Stage, bubble_fraction, gpipe_schedule
from workbook import grading, run_times
from workbook.device_timeline import plot_timeline   # device lanes of a traced step (as in 06)

run_times.show("parallelism-models")   # measured by `make test-full`, not typed
FAST = flags.FAST   # AICS_FAST=1 (CI): smaller models and fewer repeats, same code path
rng = np.random.default_rng(0)
print("AICS_FAST:", FAST, "| CPU cores:", os.cpu_count())

# %% [markdown]
# ## 1. 数据并行什么时候**不**等于单卡大批：BatchNorm
#
# `19-distributed-training.ipynb` 里"$N$ 份梯度的平均 = 整个批的梯度"成立，是因为损失是**逐样本**损失的平均：每个样本的前向只依赖它自己。
# 批归一化 (Batch Normalization, BN) 打破了这一点：训练时它用**批**的均值和方差归一化每个通道，而每个副本只看得到自己的
# $B/N$ 个样本。于是每个副本算的是"用半个批的统计量归一化"的另一个网络的梯度，平均起来也不等于单卡用整个批的梯度。
# 修复办法是**同步 BN** (synchronized BN)：各副本先 allreduce 每个通道的 $\sum x$ 和 $\sum x^2$，都用整个批的统计量归一化
# （反向时这些统计量的梯度同样要跨副本汇总）；TF 2 里是 `tf.keras.layers.BatchNormalization(synchronized=True)`
# （早先的 `tf.keras.layers.experimental.SyncBatchNormalization`）。
#
# 下面用一个带 BN 的小卷积网络（conv → BN → ReLU → 全局平均池化 → 全连接）验证：单卡用整个批、2 个副本各用自己一半的
# 统计量（不同步）、2 个副本同步 BN，训练几步后比较权重。两半数据的分布故意不同（后一半整体放大、平移——
# 按文件或类别切分数据时常见）；同步版本在一张图里把两个塔的统计量合起来，自动微分会把统计量的梯度送回两个塔。

# %%
BN_B, BN_HW, BN_C, BN_STEPS = (16, 8, 4, 3) if FAST else (64, 16, 8, 10)
Xb = rng.standard_normal((BN_B, BN_HW, BN_HW, 1)).astype(np.float32)
Xb[BN_B // 2:] = Xb[BN_B // 2:] * 2.0 + 1.0          # the second replica's shard comes from elsewhere
Yb = rng.integers(0, 3, BN_B).astype(np.int32)
Kb = (rng.standard_normal((3, 3, 1, BN_C)) * 0.5).astype(np.float32)
Wb = (rng.standard_normal((BN_C, 3)) * 0.5).astype(np.float32)


def train_bn_cnn(replicas, sync, steps=BN_STEPS, lr=0.5):
    """conv -> BN -> ReLU -> global average pool -> dense on `replicas` towers; BN normalises each tower
    with its own shard's statistics, or (sync) with the whole batch's. Returns (weights, losses)."""
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, Xb.shape)
        y = aics.placeholder(aics.int32, Yb.shape)
        k, w = aics.Variable(Kb), aics.Variable(Wb)
        gamma, beta = aics.Variable(np.ones(BN_C, np.float32)), aics.Variable(np.zeros(BN_C, np.float32))
        params = [k, w, gamma, beta]
        xs, ys = split_batch(x, replicas), split_batch(y, replicas)
        convs = []
        for i in range(replicas):
            with aics.device(f"/CPU:{i}"):
                convs.append(aics.nn.conv2d(xs[i], k, [1, 1, 1, 1], "SAME"))
        stats = [aics.nn.moments(c, axes=[0, 1, 2]) for c in convs]     # per channel, this shard only
        if sync:   # all-reduce of the per-channel mean and mean square (equal shards): the whole batch's
            mean = aics.add_n([m for m, _ in stats]) / replicas
            mean_sq = aics.add_n([v + aics.square(m) for m, v in stats]) / replicas
            stats = [(mean, mean_sq - aics.square(mean))] * replicas
        opt = aics.train.GradientDescentOptimizer(lr)
        towers, losses = [], []
        for i, (c, (m, v)) in enumerate(zip(convs, stats)):
            with aics.device(f"/CPU:{i}"):
                h = aics.nn.relu(aics.nn.batch_normalization(c, m, v, beta, gamma, 1e-3))
                logits = aics.matmul(aics.reduce_mean(h, axis=[1, 2]), w)
                losses.append(aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=ys[i],
                                                                                                 logits=logits)))
                towers.append(opt.compute_gradients(losses[-1], params))
        train = opt.apply_gradients(average_gradients(towers))
        mean_loss = aics.add_n(losses) / replicas
        init = aics.global_variables_initializer()
    with aics.Session(graph=g, config=aics.ConfigProto(device_count={"CPU": replicas})) as s:
        s.run(init)
        history = [s.run([mean_loss, train], {x: Xb, y: Yb})[0] for _ in range(steps)]
        return s.run(params), history


bn_runs = {"1 device, whole batch": train_bn_cnn(1, False), "2 replicas, per-replica BN": train_bn_cnn(2, False),
           "2 replicas, synchronized BN": train_bn_cnn(2, True)}
bn_ref = bn_runs["1 device, whole batch"][0]
bn_diff = {name: max(float(np.abs(a - b).max()) for a, b in zip(bn_ref, ws)) for name, (ws, _) in bn_runs.items()}
for name, d in bn_diff.items():
    print(f"{name:30}: max |weights - single device| after {BN_STEPS} steps = {d:.2e}")
assert bn_diff["2 replicas, synchronized BN"] < 1e-5 < 1e-3 < bn_diff["2 replicas, per-replica BN"]
fig, ax = plt.subplots(figsize=(6, 3))
for (name, (_, hist)), style in zip(bn_runs.items(), ["o-", "s--", "x:"]):
    ax.plot(range(1, BN_STEPS + 1), hist, style, label=name)
ax.set_xticks(range(1, BN_STEPS + 1))
ax.set_xlabel("training step")
ax.set_ylabel("training loss (mean cross-entropy)")
ax.set_title("Data parallelism with BatchNorm: only synchronized BN matches one device", fontsize=9)
ax.legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 2. 练习：各副本样本数不同时的同步 BN 统计量（3 分）
#
# 上面的同步版本假设每个副本的样本一样多，所以直接把各副本的均值平均。实际上最后一个批常常不满、各副本分到的样本数不同
# （比如 $B$ 不能被 $N$ 整除），这时等权平均就错了。每个副本 $r$ 只报告三样东西：样本数 $n_r$、每个通道的均值 $\mu_r$
# 和（有偏的，除以 $n_r$）方差 $\sigma_r^2$。整个批的均值是按样本数加权的平均；整个批的方差除了各副本**内部**的方差，
# 还要加上各副本均值**之间**的差异：
#
# $$n=\sum_r n_r,\qquad \mu=\sum_r \frac{n_r}{n}\mu_r,\qquad \sigma^2=\sum_r \frac{n_r}{n}\left(\sigma_r^2+(\mu_r-\mu)^2\right).$$
#
# （等价地，allreduce $\sum_r n_r$、$\sum_r n_r\mu_r$ 即 $\sum x$、$\sum_r n_r(\sigma_r^2+\mu_r^2)$ 即 $\sum x^2$。）
# 实现 `sync_bn_moments(counts, means, variances)`：`counts` 形状 `[R]`，`means`、`variances` 形状 `[R, C]`，
# 返回整个批每个通道的 `(mean, variance)`，两个形状 `[C]` 的 NumPy 数组。没有样本的副本（$n_r=0$，它的均值和方差记为 0）
# 不影响结果。只用 NumPy；测试把你的结果与 NumPy 在**拼起来的整个批**上算的均值、方差比较（相对误差 $10^{-6}$ 以内：只允许舍入量级的差别）。

# %% nbgrader={"grade": false, "grade_id": "sync_bn_moments", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sync_bn_moments(counts, means, variances):
    """The whole batch's per-channel mean and (biased) variance from each replica's: counts[r]
    examples on replica r, with per-channel means[r] and variances[r] over its own shard (what
    synchronized BatchNorm all-reduces). Returns (mean, variance), NumPy arrays of shape [C]."""
    counts = np.asarray(counts, np.float64)
    means, variances = np.asarray(means, np.float64), np.asarray(variances, np.float64)
    ### BEGIN SOLUTION
    weights = (counts / counts.sum())[:, None]
    mean = (weights * means).sum(axis=0)
    variance = (weights * (variances + (means - mean) ** 2)).sum(axis=0)
    return mean, variance
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "sync_bn_moments_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): replicas' shards of random sizes, each from its own distribution; the answer,
# given only each shard's count, mean and variance, against NumPy's mean and variance of the whole
# batch (the shards concatenated: the definition). Calling aicslib or the reference fails.
_SYNC_BN_HINT = ("weight each replica's mean by its share n_r / n of the examples; the variance is the weighted sum of "
                 "variances[r] + (means[r] - mean)**2, the spread between the replicas' means included")


def _check_sync_bn(sizes, channels, seed):
    g = np.random.default_rng(seed)
    shards = [g.standard_normal((n, channels)) * g.uniform(0.5, 3.0, channels) + g.uniform(-4.0, 4.0, channels)
              for n in sizes]
    counts = np.array(sizes)
    means = np.array([s.mean(axis=0) if len(s) else np.zeros(channels) for s in shards])
    variances = np.array([s.var(axis=0) if len(s) else np.zeros(channels) for s in shards])
    got = grading.no_library_calls(sync_bn_moments, counts, means.copy(), variances.copy(), what="sync_bn_moments")
    grading.check(isinstance(got, tuple) and len(got) == 2,
                  f"sync_bn_moments must return a pair (mean, variance), got {type(got).__name__}")
    whole = np.concatenate(shards)
    where = f"{len(sizes)} replica(s) holding {list(sizes)} examples, {channels} channel(s)"
    grading.check_array(got[0], whole.mean(axis=0), f"the mean over {where}", rtol=1e-6, atol=1e-9, hint=_SYNC_BN_HINT)
    grading.check_array(got[1], whole.var(axis=0), f"the variance over {where}", rtol=1e-6, atol=1e-9,
                        hint=_SYNC_BN_HINT)


with grading.exercise("sync_bn_moments"):
    _check_sync_bn([4, 4], 3, 1)
    _check_sync_bn([3, 9], 2, 2)
    _check_sync_bn([1, 6, 2], 4, 3)
    ### BEGIN HIDDEN TESTS
    _check_sync_bn([5], 3, 4)                  # one replica: its own moments
    _check_sync_bn([0, 7, 3], 2, 5)            # an empty replica adds nothing
    _check_sync_bn([2, 3, 5, 7, 11], 5, 6)
    _check_sync_bn([8, 8, 8, 8], 1, 7)
    _check_sync_bn([1, 1, 30], 3, 8)
    ### END HIDDEN TESTS

# %% [markdown]
# 用上你的函数：把第 1 节那个批（后一半整体放大、平移过）的输入像素按 3 个**不等**的分片分给 3 个副本，
# 每个副本只报告自己的样本数、均值和方差；合并的结果与整个批直接算的一致，而上面同步版本里的等权平均差得远
# （练习没通过时用参考实现 `workbook/references/sync_bn.py`，并会说明）：

# %%
from workbook.references import sync_bn as sync_bn_reference

combine = grading.use("sync_bn_moments", sync_bn_moments, sync_bn_reference.combine_moments,
                      "merging per-replica moments (workbook/references/sync_bn.py)")
pixels = Xb.reshape(-1, Xb.shape[-1]).astype(np.float64)      # every pixel is one example of the channel
cuts = [len(pixels) // 8, len(pixels) // 2]                    # shards of 1/8, 3/8 and 1/2 of the batch
pieces = np.split(pixels, cuts)
shard_counts = np.array([len(p) for p in pieces])
shard_means = np.array([p.mean(axis=0) for p in pieces])
shard_vars = np.array([p.var(axis=0) for p in pieces])
synced_mean, synced_var = combine(shard_counts, shard_means, shard_vars)
equal_mean = shard_means.mean(axis=0)
equal_var = (shard_vars + shard_means ** 2).mean(axis=0) - equal_mean ** 2
print("shard sizes:", shard_counts.tolist())
print(f"whole batch:        mean {pixels.mean():+.4f}, variance {pixels.var():.4f}")
print(f"merged by count:    mean {float(synced_mean[0]):+.4f}, variance {float(synced_var[0]):.4f}")
print(f"equal weights (the graph above, right only for equal shards): mean {float(equal_mean[0]):+.4f}, "
      f"variance {float(equal_var[0]):.4f}")
assert np.allclose(synced_mean, pixels.mean(axis=0)) and np.allclose(synced_var, pixels.var(axis=0))
assert abs(float(equal_mean[0]) - pixels.mean()) > 1e-2

# %% [markdown]
# ## 3. 另一种多机结构：参数服务器 (parameter server) 与异步训练
#
# 5.3 参考答案说多机训练还要"配置不同机器之间的角色"——这指的是 TF1 的**参数服务器**架构：`tf.train.ClusterSpec`
# 里有两种角色 (job)，`ps`（参数服务器，保存变量）和 `worker`（计算梯度）；`tf.train.replica_device_setter` 把变量放到
# ps 上、计算放到 worker 上。每个 worker 反复：从 ps **拉取** (pull) 当前参数 → 用自己的小批算梯度 → **推送** (push) 给 ps，
# ps 收到一个梯度就更新一次。
#
# * **同步** (synchronous，TF1 的 `SyncReplicasOptimizer`，或 06 章的 allreduce)：每步等所有 worker 的梯度到齐再更新——
#   结果与大批训练相同，但每一步都要等**最慢**的 worker（慢节点 straggler）。
# * **异步** (asynchronous，TF1 参数服务器的默认)：没有全局的串行点，谁算完谁更新，worker 之间从不互相等待；
#   代价是**陈旧梯度** (stale gradient)：一个 worker 拉取参数之后，别的 worker 可能已经更新了好几次，它的梯度是在旧参数上算的。
#   陈旧度大约是 worker 数，学习率大时训练会发散。
#
# 下面是一个小模拟（线性回归，SGD；时间是模拟的，不是测量）：8 个 worker，每个梯度约花 1 个时间单位，
# 其中 worker 0 慢 3 倍。同步版本每步取 8 个小批梯度的平均；异步版本每收到一个梯度就更新一次。

# %%
PS_WORKERS, PS_ROUNDS, PS_D, PS_N = 8, (40 if FAST else 120), 20, 2048
ps_rng = np.random.default_rng(3)
Xps = ps_rng.standard_normal((PS_N, PS_D))
yps = Xps @ ps_rng.standard_normal(PS_D) + 0.1 * ps_rng.standard_normal(PS_N)


def ps_loss(w):
    return float(np.mean((Xps @ w - yps) ** 2))


def ps_grad(w, g, batch=32):
    idx = g.integers(0, PS_N, batch)
    return 2 * Xps[idx].T @ (Xps[idx] @ w - yps[idx]) / batch


def compute_time(worker, g):
    """Simulated seconds for one gradient: about 1, worker 0 (a straggler) about 3."""
    return g.lognormal(0.0, 0.2) * (3.0 if worker == 0 else 1.0)


def synchronous_sgd(lr, rounds=PS_ROUNDS):
    g, w, t = np.random.default_rng(1), np.zeros(PS_D), 0.0
    curve = [(t, ps_loss(w))]
    for _ in range(rounds):
        t += max(compute_time(k, g) for k in range(PS_WORKERS))           # everyone waits for the slowest
        w = w - lr * np.mean([ps_grad(w, g) for _ in range(PS_WORKERS)], axis=0)
        curve.append((t, ps_loss(w)))
    return np.array(curve)


def asynchronous_sgd(lr, updates=PS_ROUNDS * PS_WORKERS):
    """The server applies each pushed gradient at once; a gradient's staleness = updates since its pull."""
    import heapq

    g, w, version = np.random.default_rng(1), np.zeros(PS_D), 0
    curve, staleness = [(0.0, ps_loss(w))], []
    running = [(compute_time(k, g), k, w.copy(), 0) for k in range(PS_WORKERS)]    # (done at, worker, pulled w, version)
    heapq.heapify(running)
    while version < updates:
        t, k, pulled, pulled_version = heapq.heappop(running)
        w = w - lr * ps_grad(pulled, g)                 # computed on the weights the worker pulled
        staleness.append(version - pulled_version)
        version += 1
        curve.append((t, min(ps_loss(w), 1e6)))
        heapq.heappush(running, (t + compute_time(k, g), k, w.copy(), version))
    return np.array(curve), np.array(staleness)


ps_runs = {f"synchronous, lr {lr}": (synchronous_sgd(lr), None) for lr in (0.05, 0.2)}
ps_runs.update({f"asynchronous, lr {lr}": asynchronous_sgd(lr) for lr in (0.05, 0.2)})
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
for name, (curve, _) in ps_runs.items():
    ax1.plot(curve[:, 0], curve[:, 1], "--" if name.startswith("asyn") else "-", label=name)
ax1.set_yscale("log")
ax1.set_xlabel("simulated time (one gradient ≈ 1 unit)")
ax1.set_ylabel("training loss (MSE, log scale; capped at 1e6)")
ax1.set_title(f"{PS_WORKERS} workers, worker 0 three times slower", fontsize=9)
ax1.legend(fontsize=7)
stale = ps_runs["asynchronous, lr 0.05"][1]
ax2.hist(stale, bins=np.arange(stale.max() + 2) - 0.5, edgecolor="black")
ax2.set_xlabel("staleness (server updates between pull and push)")
ax2.set_ylabel("number of gradients")
ax2.set_title(f"asynchronous: mean staleness {stale.mean():.1f} with {PS_WORKERS} workers", fontsize=9)
plt.tight_layout()
plt.show()
for name, (curve, _) in ps_runs.items():
    print(f"{name:24}: loss {curve[-1, 1]:.3g} at simulated time {curve[-1, 0]:.0f}")

# %% [markdown]
# 图上：同步训练每一步都被慢节点拖住（同样的时间里更新次数少），但它等价于大批训练，学习率大一些也稳定；
# 异步训练不等人，小学习率时在同样的时间里下降得更快，但梯度平均陈旧约 $N-1$ 步，学习率一大就发散。
# 这就是为什么今天的大规模训练多用同步 allreduce（加上处理慢节点的办法），而参数服务器主要留在稀疏、超大嵌入表的场景。

# %% [markdown]
# ## 4. Alpha-beta 通信模型：外推到 1–64 台机器（模型，不是测量）
#
# 发一条 $n$ 字节的消息耗时 $\alpha + n\beta$：$\alpha$ 是延迟 (latency)，$\beta$ 是每字节时间（带宽的倒数）。
# ring-allreduce 发 $2(p-1)$ 条 $n/p$ 字节的消息：
#
# $$T_\text{allreduce}(n,p) = 2(p-1)\alpha + \frac{2(p-1)}{p} n\beta .$$
#
# 固定全局批大小时，一步的时间 $T(p) = T_c/p + T_\text{allreduce} + T_\text{update}$，加速比 $S(p)=T(1)/T(p)$。
# 下面先用 2 个 MPI rank 实测消息时间（`19-distributed-training.ipynb` 第 5 节的训练脚本，加上 `--pingpong`：
# rank 0 和 rank 1 之间来回发不同大小的消息），拟合 $\alpha,\beta$；用单进程实测的计算时间作 $T_c$，
# 画出模型预测的加速比，并与同一个作业实测的 2 个 rank 的加速比放在一起（这个小 MLP 每步的计算很少，实测的加速比
# 可能小于 1：消息的延迟和进程间的同步占了大头——模型里的 $\alpha$ 项说的正是这个）。**注意**：这里的 $\alpha,\beta$ 是同一台机器上共享内存的数字，真实网络的 $\alpha$
# 大 10–100 倍；模型也忽略了通信与反向计算的重叠、网络拥塞和慢节点 (straggler)。

# %%
DP_BATCH, DP_STEPS = (64, 5) if FAST else (256, 20)
out_path = os.path.join(tempfile.mkdtemp(prefix="aics17-"), "dp.npz")
try:
    job = launch.run(dp.__file__, 2, ["--batch", DP_BATCH, "--steps", DP_STEPS, "--out", out_path, "--pingpong"],
                     capture=True, timeout=120)
    assert job.returncode == 0, job.stderr
    with np.load(out_path, allow_pickle=False) as d:
        pp_bytes, pp_seconds, mpi_timings = d["pingpong_bytes"], d["pingpong_seconds"], d["timings"]
    for nbytes, seconds in zip(pp_bytes, pp_seconds):
        print(f"one-way message of {int(nbytes):>7} bytes between 2 ranks: {seconds * 1e6:8.1f} µs")
except launch.LaunchError as e:   # no MPI on this machine: say so, and go on with typical shared-memory values
    print("MPI is not available:", e)
    pp_bytes, pp_seconds, mpi_timings = np.array([8.0, 262144.0]), np.array([2e-6, 2e-6 + 262144 * 2e-10]), None

alpha, beta = comm_model.fit_alpha_beta(pp_bytes, pp_seconds)
w_ref, _, dp_timings = dp.train(DP_BATCH, DP_STEPS)     # one process, the whole batch, no MPI
t_compute = float(np.median(dp_timings[:, 0]))
# rank 0 of the 2-rank job: half the batch's compute plus the gradient allreduce, per step
measured_speedup = None if mpi_timings is None else t_compute / float(np.median(mpi_timings.sum(axis=1)))
model_bytes = sum(w.nbytes for w in w_ref)
print(f"fitted alpha = {alpha * 1e6:.1f} us, beta = {beta * 1e9:.3f} ns/byte ({1 / max(beta, 1e-15) / 1e9:.2f} GB/s); "
      f"T_c = {t_compute * 1e3:.2f} ms for {model_bytes} bytes of gradients")
ranks = np.array([1, 2, 4, 8, 16, 32, 64])


def modelled_speedups(t_c, nbytes, a, b):
    return comm_model.speedup(t_c, nbytes, ranks, a, b)


fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(ranks, ranks, "k:", label="ideal (linear)")
ax.plot(ranks, modelled_speedups(t_compute, model_bytes, alpha, beta), "o-",
        label="MODEL: this MLP, fitted alpha/beta")
ax.plot(ranks, modelled_speedups(0.1, 100e6, 20e-6, 1 / 10e9), "s-",
        label="MODEL: 100 MB model, 10 GB/s network, T_c = 100 ms")
if measured_speedup is not None:
    print(f"measured with 2 MPI ranks on this machine: speedup {measured_speedup:.2f}x (compute + allreduce per step)")
    ax.plot([2], [measured_speedup], "r*", ms=12, label="MEASURED here: 2 MPI ranks (compute + allreduce)")
ax.set_xscale("log", base=2)
ax.set_yscale("log", base=2)
ax.set_xlabel("machines (ranks)")
ax.set_ylabel("speedup T(1)/T(p)")
ax.set_title("Alpha-beta model (extrapolation, not measurement)")
ax.legend(fontsize=7)
plt.tight_layout()
plt.show()
assert comm_model.speedup(1.0, 0, 8, 0.0, 0.0) == 8.0

# %% [markdown]
# 拖动滑块：模型越大（通信越多）、网络越慢（$\beta$ 越大）、计算越少，加速比越早"封顶"甚至下降。

# %%
speedup_out = widgets.Output()
_slider = dict(base=10, readout_format=".2g", style={"description_width": "initial"},
               layout=widgets.Layout(width="680px"))
alpha_slider = widgets.FloatLogSlider(value=20e-6, min=-7, max=-2, description="latency alpha (seconds per message)",
                                      **_slider)
bw_slider = widgets.FloatLogSlider(value=10e9, min=7, max=11, description="bandwidth 1/beta (bytes per second)",
                                   **_slider)
size_slider = widgets.FloatLogSlider(value=100e6, min=4, max=10, description="gradient size n (bytes)", **_slider)
tc_slider = widgets.FloatLogSlider(value=0.1, min=-4, max=1, description="compute time T_c on 1 machine (seconds)",
                                   **_slider)


def draw_speedup(*_):
    with speedup_out:
        speedup_out.clear_output(wait=True)
        s = modelled_speedups(tc_slider.value, size_slider.value, alpha_slider.value, 1 / bw_slider.value)
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot(ranks, ranks, "k:", label="ideal")
        ax.plot(ranks, s, "o-", label="MODEL")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("machines (ranks)")
        ax.set_ylabel("modelled speedup T(1)/T(p)")
        ax.set_title(f"alpha {alpha_slider.value * 1e6:.3g} µs, {bw_slider.value / 1e9:.3g} GB/s, "
                     f"{size_slider.value / 1e6:.3g} MB, T_c {tc_slider.value * 1e3:.3g} ms\n"
                     f"best: {s.max():.1f}x at {ranks[int(np.argmax(s))]} machines", fontsize=8)
        ax.legend(fontsize=7)
        plt.tight_layout()
        plt.show()


for w in (alpha_slider, bw_slider, size_slider, tc_slider):
    w.observe(draw_speedup, names="value")
display(widgets.VBox([alpha_slider, bw_slider, size_slider, tc_slider, speedup_out]))
draw_speedup()

# %% [markdown]
# ### 练习：模型给出的加速比（2 分）
#
# 写 `my_step_speedup(t_compute, nbytes, p, alpha, beta)`：单机一步的计算时间 `t_compute`、梯度共 `nbytes` 字节、
# `p` 个 rank 时，按上面的模型（忽略 $T_\text{update}$）给出加速比 $S(p) = T(1)/T(p)$。不调用 `comm_model`。

# %% nbgrader={"grade": false, "grade_id": "step_speedup", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_step_speedup(t_compute, nbytes, p, alpha, beta):
    """The alpha-beta model's speedup of a data-parallel step on p ranks with a ring all-reduce."""
    ### BEGIN SOLUTION
    allreduce = 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes * beta
    return t_compute / (t_compute / p + allreduce)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "step_speedup_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): against the formula written out in the package, for 1 to 64 ranks and
# latency-bound and bandwidth-bound settings.
from workbook.references import comm as _comm_reference


def _speedup_model_case(t_c, nbytes, p, a, b):
    got = grading.no_library_calls(my_step_speedup, t_c, nbytes, p, a, b, what="my_step_speedup",
                                   how="from the formula")
    want = _comm_reference.step_speedup(t_c, nbytes, p, a, b)
    call = f"my_step_speedup(t_compute={t_c}, nbytes={nbytes}, p={p}, alpha={a}, beta={b})"
    grading.check(got is not None and abs(float(got) - want) <= 1e-9 * abs(want),
                  f"{call}: {got!r}, expected {want:.6g} (the ring sends 2(p-1) messages of n/p bytes; "
                  f"one rank computes t_compute/p)")


with grading.exercise("step_speedup"):
    _speedup_model_case(0.1, 4e6, 4, 1e-5, 1e-9)
    _speedup_model_case(0.1, 4e6, 1, 1e-5, 1e-9)
    ### BEGIN HIDDEN TESTS
    _speedup_model_case(0.01, 1e8, 8, 5e-6, 1e-10)
    _speedup_model_case(0.5, 1e3, 64, 1e-3, 1e-9)
    _speedup_model_case(2.0, 5e7, 2, 0.0, 4e-10)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 5. 模型并行与 GPipe 流水线
#
# 模型太大、一张卡放不下时，把网络的层切成几段 (stage)，第 $s$ 段放在第 $s$ 个设备上。朴素地跑，同一时刻只有
# 一个设备在工作。GPipe 把批切成 $M$ 个微批：第 2 段处理微批 0 时，第 1 段已经在算微批 1；反向时梯度沿相反方向流动；
# 每段把各微批的权重梯度**累加**，最后更新一次，所以结果与不切分的网络完全相同。
# 流水线"灌满"和"排空"时设备空闲，这段时间叫空泡 (bubble)，占比 $\frac{S-1}{M+S-1}$（$S$ 段，各段耗时相同）。

# %%
fig, axes = plt.subplots(2, 1, figsize=(8, 4), sharex=True)
for ax, M in zip(axes, [1, 4]):
    sched = gpipe_schedule(3, M, forward_time=1.0, backward_time=2.0)
    for s, kind, m, a, b in sched:
        ax.broken_barh([(a * 4 / (M + 2), (b - a) * 4 / (M + 2))], (s - 0.4, 0.8),
                       facecolors=plt.get_cmap("tab10")(m), edgecolors="black", alpha=1.0 if kind == "F" else 0.55)
        ax.text((a + b) / 2 * 4 / (M + 2), s, f"{kind}{m}", ha="center", va="center", fontsize=7)
    ax.set_yticks(range(3))
    ax.set_yticklabels([f"stage {s} (/CPU:{s})" for s in range(3)])
    ax.invert_yaxis()
    ax.set_title(f"M = {M} micro-batch(es): bubble = {bubble_fraction(3, M):.0%} of the time (same total work)",
                 fontsize=9)
axes[-1].set_xlabel("time (one full batch's forward = 1 unit per stage)")
from matplotlib.patches import Patch

fig.legend([Patch(facecolor="lightgray", edgecolor="black"), Patch(facecolor="lightgray", edgecolor="black", alpha=0.55)]
           + [Patch(facecolor=plt.get_cmap("tab10")(m)) for m in range(4)],
           ["F = forward (solid)", "B = backward (pale)"] + [f"micro-batch {m}" for m in range(4)],
           loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# `Pipeline` 把这套调度写成图：第 $s$ 段的前向和反向都在 `with aics.device(f'/CPU:{s}')` 下，反向用
# `aics.gradients(本段输出, [本段输入] + 本段变量, grad_ys=后一段传回的梯度)`。会话的多设备执行器按依赖关系
# 驱动三个设备线程，时间线上就能看到流水线和空泡。先验证它与不切分的网络相等：

# %%
PIPE_B, PIPE_W = (32, 64) if FAST else (128, 256)
Xp = rng.standard_normal((PIPE_B, PIPE_W)).astype(np.float32)
Yp = rng.standard_normal((PIPE_B, 4)).astype(np.float32)
Wp = [(rng.standard_normal(s) * 0.2).astype(np.float32) for s in [(PIPE_W, PIPE_W), (PIPE_W, PIPE_W), (PIPE_W, 4)]]


def run_mlp(split, micro_batches=4, trace=False):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [PIPE_B, PIPE_W])
        y = aics.placeholder(aics.float32, [PIPE_B, 4])
        ws = [aics.Variable(w) for w in Wp]
        layers = [lambda h, w=ws[0]: aics.tanh(aics.matmul(h, w)),
                  lambda h, w=ws[1]: aics.tanh(aics.matmul(h, w)),
                  lambda h, w=ws[2]: aics.matmul(h, w)]

        def mse(pred, target):
            return aics.reduce_mean(aics.square(pred - target))
        if split:
            loss, gv = Pipeline([Stage(f, [w]) for f, w in zip(layers, ws)],
                                num_micro_batches=micro_batches).build(x, y, mse)
        else:
            h = x
            for f in layers:
                h = f(h)
            loss = mse(h, y)
            gv = list(zip(aics.gradients(loss, ws), ws))
        fetches = [loss] + [gr for gr, _ in gv]
        with aics.Session(config=aics.ConfigProto(device_count={"CPU": 3})) as s:
            s.run(aics.global_variables_initializer())
            s.run(fetches, {x: Xp, y: Yp})
            md = aics.RunMetadata()
            out = s.run(fetches, {x: Xp, y: Yp}, options=aics.RunOptions(trace_level=3) if trace else None,
                        run_metadata=md)
    return out, md


ref_out, _ = run_mlp(False)
pipe_out, pipe_md = run_mlp(True, micro_batches=4, trace=True)
for a, b in zip(ref_out, pipe_out):
    assert np.allclose(a, b, rtol=1e-5, atol=1e-6)
print("GPipe (3 stages, 4 micro-batches) == unsplit network: loss", float(pipe_out[0]),
      "| max gradient difference", max(float(np.abs(a - b).max()) for a, b in zip(ref_out[1:], pipe_out[1:])))


def pipeline_style(name):
    """Forward of micro-batch m in a dark shade, its backward in the light one (tab20's pairs)."""
    for kind, shade, what in (("/fwd_mb", 0, "forward"), ("/bwd_mb", 1, "backward")):
        if kind in name:
            m = int(name.split(kind)[1].split("/")[0])
            return f"{what}, micro-batch {m}", plt.get_cmap("tab20")(2 * m + shade)
    if "accumulate" in name:
        return "accumulate weight gradients", "dimgray"
    return "loss, inputs, split", "lightgray"


plot_timeline(pipe_md.step_stats, "GPipe, measured: 3 stages on 3 logical devices, 4 micro-batches (gaps = bubbles)",
              pipeline_style)
plt.tight_layout()
plt.show()

# %% [markdown]
# 跨机器时，每一段就是一个进程：`aicslib/distribute/pipeline_mpi.py` 的 `pipeline_step` 让 rank $s$ 运行第 $s$ 段，
# 激活值和它的梯度作为 MPI 消息在相邻 rank 之间传递（调度与上面相同）；`tests/distribute/test_distribute.py` 用 3 个进程验证它
# 与不切分的网络相等。

# %% [markdown]
# ## 小结
#
# * "数据并行 = 单卡大批"只对逐样本的损失成立：BatchNorm 用批统计量，不同步时每个副本只看到自己的 $B/N$ 个样本，
#   结果不同；同步 BN 把统计量 allreduce 后才相等。各副本样本数不同时，均值按样本数加权，方差还要加上各副本均值之间的差异
#   （练习）。
# * 多机的另一种结构是参数服务器（ps 与 worker 两种角色）：同步时等最慢的 worker，异步时不等人但梯度陈旧，
#   学习率大时会发散。
# * ring-allreduce 的代价用 alpha-beta 模型估计：$2(p-1)\alpha + \frac{2(p-1)}{p}n\beta$；模型显示通信（尤其延迟 $\alpha$
#   和大模型的 $n\beta$）最终限制了加速比。它是外推，不是测量。
# * 模型并行把层切到不同设备上；GPipe 用微批流水线把空泡从 $\frac{S-1}{S}$ 降到 $\frac{S-1}{M+S-1}$，
#   权重梯度在微批间累加，结果与不切分的网络相同。
