# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 19 多设备与分布式训练：单机单卡、单机多卡、多机多卡
#
# **前置章节 (prerequisites)**：[03 training-workflow](03-training-workflow.ipynb)、[04 mnist-mlp](04-mnist-mlp.ipynb)
#
# **对应习题**：5.3（使用 GPU 训练卷积神经网络时，单机单卡、单机多卡、多机多卡三种设置下训练流程有何区别？
# 哪些步骤可以并行，哪些步骤必须串行？）
#
# **学习目标**
#
# 1. 说清数据并行 (data parallelism) 一步训练的结构：每个副本 (replica) 的前向、反向**并行**；梯度同步 (gradient
#    synchronization) 和参数更新 (update) 是**串行点**；
# 2. 在一个进程里用多个逻辑设备 (logical device) 复现 TF1 的多卡"塔" (tower) 写法：`ConfigProto(device_count=...)`、
#    `with aics.device('/CPU:1')`、梯度平均，并在 `RunMetadata` 时间线 (timeline) 上看到设备真的同时在算；
# 3. 用 MPI (mpi4py) 跑一个真正的多进程数据并行作业：广播 (broadcast) 初始权重、梯度 allreduce，
#    读懂环形 allreduce (ring-allreduce) 的两个阶段；
# 4. 实验 (lab)：自己写 ring-allreduce——reduce-scatter 与 allgather 的每一步，再写一个 rank 的 MPI 程序，
#    并在真正的多个 MPI 进程上运行它。
#
# 下一章 `20-parallelism-models.ipynb` 接着本章：数据并行何时**不**等于单卡大批（BatchNorm）、参数服务器的同步与异步训练、
# 用 alpha-beta 通信模型外推到更多机器，以及模型并行的 GPipe 流水线。
#
# **运行时间**见下面第一个代码单元的输出（实测；第 5 节和第 6.4 节会真正启动 MPI 作业）。
# **实验**（自动评分，3 个练习共 10 分）在第 6 节；没做完也能一直运行到底（后面的单元改用参考实现，并会说明）。
#
# 代码在 `aicslib/distribute/`（towers、MPI 集合通信、launcher），多设备执行器在
# `aicslib/framework/parallel_executor.py`，时间线在 `aicslib/client/timeline.py`（对应 TF 的
# `tensorflow/python/client/timeline.py`）。

# %%
import json
import os
import tempfile
import time

import numpy as np
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib.client.timeline import Timeline
from aicslib.distribute import launch, ring, split_batch, average_gradients
from aicslib.distribute import train_data_parallel as dp
from aicslib.framework.device import DeviceSpec, session_device_count, visible_device_map
from workbook import grading, run_times
from workbook.device_timeline import plot_timeline   # device lanes of a traced step (also used by 17)

run_times.show("distributed-training")   # measured by `make test-full`, not typed
FAST = flags.FAST   # AICS_FAST=1 (CI): smaller models and fewer repeats, same code path
rng = np.random.default_rng(0)
print("AICS_FAST:", FAST, "| CPU cores:", os.cpu_count())

# %% [markdown]
# ## 1. 三种设置，一张表
#
# | | 单机单卡 | 单机多卡 | 多机多卡 |
# |---|---|---|---|
# | 模型副本 | 1 | 每张卡 1 个（同一进程里的多个"塔"） | 每台机器每张卡 1 个（多个进程） |
# | 一步的数据 | 整个批 $B$ | 每卡 $B/N$ | 每卡 $B/N$ |
# | 梯度同步 | 无 | 卡间（PCIe/NVLink，或同一块内存） | 机器间网络（allreduce，MPI/NCCL） |
# | 权重一致性 | 自然一致 | 共享一份变量 | 开始时广播一次，之后每步用同样的平均梯度更新 |
# | 启动方式 | `python train.py` | 同左，`CUDA_VISIBLE_DEVICES` 选卡 | `mpiexec -n N python train.py`（加主机文件 host file） |
#
# 数据并行一步训练的结构（5.3 问的"哪些并行、哪些串行"）：
#
# ```
#   副本 0:  [取 B/N 数据] [前向 forward] [反向 backward] ─┐
#   副本 1:  [取 B/N 数据] [前向 forward] [反向 backward] ─┼─> [梯度 allreduce / 平均] -> [更新 update] -> 下一步
#   副本 N-1:[取 B/N 数据] [前向 forward] [反向 backward] ─┘        (串行点：要等所有副本)     (每个副本做同样的更新)
# ```
#
# * **可以并行**：各副本的数据读取与预处理、前向、反向（彼此独立，只依赖本副本的数据和同一份权重）。
# * **必须串行**：梯度同步——第 $t$ 步的更新要用**所有**副本的梯度，谁都不能先走；更新必须在同步之后，
#   下一步的前向又必须在更新之后。（工程上可以把一层的梯度通信和更早几层的反向计算重叠，但依赖关系不变。）
#
# 均值损失 (mean loss) 下，$N$ 份 $B/N$ 的梯度取平均恰好等于整个批的梯度，所以只要每个样本的前向只依赖它自己，
# 数据并行训练出的模型与单卡用 $B$ 训练的**相同**（只差浮点加法顺序），下面几节都会验证这一点。
# 用批统计量的层（BatchNorm）是例外：不同步的 BN 让每个副本只用自己 $B/N$ 个样本的统计量，结果就不同了——
# 下一章 `20-parallelism-models.ipynb` 用一个带 BN 的卷积网络演示，并给出同步 BN 的修复。

# %% [markdown]
# ## 2. 设备名：TensorFlow 接受的写法
#
# TF 的设备名由五部分组成（都可省略）：`/job:名字/replica:i/task:j/device:类型:编号`。
# `aicslib` 和 TF 一样在一个地方（`aicslib/framework/device.py` 的 `DeviceSpec`）解析它们，规则与 TF 的
# `DeviceSpec.from_string` 相同：

# %%
for s in ["cpu", "CPU:1", "/CPU:0", "/device:CPU:0", "/gpu:*", "/job:localhost/replica:0/task:0/device:CPU:0",
          "/job:worker/task:3/device:CPU:1"]:
    d = DeviceSpec.from_string(s)
    print(f"{s!r:48} job={d.job!s:9} replica={d.replica!s:4} task={d.task!s:4} "
          f"type={d.device_type!s:4} index={d.device_index!s:4} -> {d.to_string()!r}")
for bad in ["/cpu:0/gpu:0", "/job:foo/unknown:0"]:
    try:
        DeviceSpec.from_string(bad)
    except ValueError as e:
        print(f"{bad!r:48} ValueError: {e}")
assert DeviceSpec.from_string("cpu").to_string() == "/device:CPU:*"

# %% [markdown]
# ## 3. 单机多卡：一个进程里的多个逻辑设备
#
# TF1 的 `cifar10_multi_gpu_train.py` 是单机多卡的标准写法：同一个模型在每张卡上建一份（一个"塔" tower），
# 共享同一组变量；每个塔拿批的一片，算自己的损失和梯度；所有塔的梯度在一张卡上平均，更新一次。
#
# 这里没有 GPU，我们用 `ConfigProto(device_count={"CPU": 4})` 给会话 4 个**逻辑 CPU 设备**。
# 会话把放在不同设备上的节点交给不同线程同时执行（`parallel_executor.py`，相当于 TF 把图按设备切分成子图
# partition、每个设备一个执行器）；NumPy 的矩阵乘会释放 GIL，所以线程真的能同时算。

# %%
IN, HID, OUT = (64, 128, 10) if FAST else (256, 512, 10)
BATCH = 256 if FAST else 1024
X_all = rng.standard_normal((BATCH, IN)).astype(np.float32)
Y_all = rng.standard_normal((BATCH, OUT)).astype(np.float32)
W1_0 = (rng.standard_normal((IN, HID)) * 0.1).astype(np.float32)
W2_0 = (rng.standard_normal((HID, OUT)) * 0.1).astype(np.float32)


def build_towers(num_devices, lr=0.05):
    """The tower pattern: one replica of a 2-layer MLP per device, gradients averaged on CPU:0."""
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [BATCH, IN], name="x")
        y = aics.placeholder(aics.float32, [BATCH, OUT], name="y")
        w1 = aics.Variable(W1_0, name="w1")
        w2 = aics.Variable(W2_0, name="w2")
        opt = aics.train.GradientDescentOptimizer(lr)
        towers = []
        for i, (xi, yi) in enumerate(zip(split_batch(x, num_devices), split_batch(y, num_devices))):
            with aics.device(f"/CPU:{i}"), aics.name_scope(f"tower_{i}"):
                h = aics.tanh(aics.matmul(xi, w1))
                loss = aics.reduce_mean(aics.square(aics.matmul(h, w2) - yi))
                towers.append(opt.compute_gradients(loss, [w1, w2]))
        with aics.device("/CPU:0"):
            train_op = opt.apply_gradients(average_gradients(towers))
        init = aics.global_variables_initializer()
    sess = aics.Session(graph=g, config=aics.ConfigProto(device_count={"CPU": num_devices}))
    sess.run(init)
    return sess, train_op, (x, y), (w1, w2)


def train_towers(num_devices, steps=3):
    sess, train_op, (x, y), ws = build_towers(num_devices)
    for _ in range(steps):
        sess.run(train_op, {x: X_all, y: Y_all})
    out = sess.run(list(ws))
    sess.close()
    return out


w_single = train_towers(1)
w_four = train_towers(4)
for a, b in zip(w_single, w_four):
    print("max |single device - 4 towers| =", float(np.abs(a - b).max()))
    assert np.allclose(a, b, rtol=1e-5, atol=1e-6)

# %% [markdown]
# 用 `RunOptions(trace_level=FULL_TRACE)` 跑一步，`RunMetadata.step_stats` 里按设备记录了每个节点的开始时间和时长。
# 下图（`workbook/device_timeline.py` 的 `plot_timeline`）每条泳道 (lane) 是一个设备：四个塔的前向、反向（MatMul、Tanh……）同时进行；最后 CPU:0 上的
# `AddN`/`RealDiv`（梯度平均）和 `ResourceApplyGradientDescent`（更新）要等所有塔都完成——这就是串行点。
#
# 同一份数据也写成 Chrome 的 trace 格式（与 TF 的 `timeline.Timeline.generate_chrome_trace_format()` 相同），
# 可以在 Chrome 的 `chrome://tracing` 或 <https://ui.perfetto.dev> 里打开，跨设备的数据流画成箭头。

# %%
def tower_style(name):
    tab = plt.get_cmap("tab10")
    if not name.startswith("tower_"):
        return "average gradients + update", tab(3)
    return ("backward (gradients)", tab(1)) if "gradients" in name else ("forward", tab(0))


sess, train_op, (x, y), _ = build_towers(4)
sess.run(train_op, {x: X_all, y: Y_all})   # warm-up: plans and kernels are built once
md = aics.RunMetadata()
sess.run(train_op, {x: X_all, y: Y_all}, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
         run_metadata=md)
sess.close()
tl = Timeline(md.step_stats)
trace_path = os.path.join(tempfile.mkdtemp(prefix="aics06-"), "towers_trace.json")
with open(trace_path, "w") as f:
    f.write(tl.generate_chrome_trace_format())
events = json.load(open(trace_path))["traceEvents"]
print("Chrome trace:", trace_path, "|", sum(e["ph"] == "X" for e in events), "node events,",
      sum(e["ph"] == "s" for e in events), "cross-device arrows")
plot_timeline(md.step_stats, "4 towers on 4 logical CPU devices: one traced training step", tower_style)
plt.tight_layout()
plt.show()
assert {d.device for d in md.step_stats.dev_stats} == {f"/device:CPU:{i}" for i in range(4)}

# %% [markdown]
# ### `AICS_VISIBLE_DEVICES`：`CUDA_VISIBLE_DEVICES` 的类比
#
# `CUDA_VISIBLE_DEVICES=1,3` 让进程只看见第 1、3 号 GPU，并把它们重新编号为 0、1（5.3 的参考答案就提到用它"屏蔽"
# 不用的卡）。`AICS_VISIBLE_DEVICES` 对逻辑 CPU 设备做同样的事，和其他环境变量一起在 `aicslib/flags.py` 里读取
# （改了环境变量要调用 `flags.reload()`）：

# %%
saved = os.environ.get("AICS_VISIBLE_DEVICES")
os.environ["AICS_VISIBLE_DEVICES"] = "1,3"
flags.reload()
print("AICS_VISIBLE_DEVICES=1,3, ConfigProto asks for 4 CPUs ->", session_device_count({"CPU": 4}),
      "| logical -> physical:", visible_device_map(4))
with aics.Session(config=aics.ConfigProto(device_count={"CPU": 4})) as s:
    for d in s.list_devices():      # TF1's Session.list_devices()
        print("  ", d.name, "-> configured device", d.physical_index)
assert session_device_count({"CPU": 4})["CPU"] == 2
if saved is None:
    del os.environ["AICS_VISIBLE_DEVICES"]
else:
    os.environ["AICS_VISIBLE_DEVICES"] = saved
flags.reload()

# %% [markdown]
# ### 本机实测：1 个设备与 2 个设备
#
# 这台机器只有很少的核，而 NumPy 的 BLAS 本身也会用多线程，所以两个设备的加速比可能远小于 2，甚至小于 1——
# 这正说明"设备"要有各自独立的计算资源（真的 GPU）。下面测的就是这台机器上的真实数字。

# %%
REPEATS = 3 if FAST else 10


def time_step(num_devices):
    sess, train_op, (x, y), _ = build_towers(num_devices)
    sess.run(train_op, {x: X_all, y: Y_all})
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        sess.run(train_op, {x: X_all, y: Y_all})
        times.append(time.perf_counter() - t)
    sess.close()
    return float(np.median(times))


step_times = {n: time_step(n) for n in tqdm([1, 2], desc="timing towers")}
measured_speedup = step_times[1] / step_times[2]
print({n: f"{t * 1e3:.1f} ms" for n, t in step_times.items()}, f"| measured speedup with 2 devices: {measured_speedup:.2f}x")

# %% [markdown]
# ## 4. 多机多卡：MPI 与 ring-allreduce
#
# 多台机器没有共享内存，梯度要通过网络交换。MPI (Message Passing Interface) 是超算的通信层，Horovod 也可以用它
# （或 Gloo，GPU 之间用 NCCL）：同一个脚本启动 $N$ 份（rank 0…N-1），用 `Send/Recv`（点对点）和
# `Bcast/Allreduce`（集合通信）交换数组。TensorFlow 自己的 `MultiWorkerMirroredStrategy` **不用 MPI**：它的集合通信
# (`CollectiveCommunication`/`CommunicationImplementation`) 是 TF 自己的 ring 实现走 gRPC（`RING`），或 GPU 上的 NCCL（`NCCL`），
# 各 worker 的地址来自环境变量 `TF_CONFIG`。算法是同一个：下面的 ring-allreduce。
#
# **Ring-allreduce**：$p$ 个 rank 排成一个环，每个 rank 把数组切成 $p$ 块，每一步把一块发给右邻居、从左邻居收一块：
#
# 1. **reduce-scatter**（$p-1$ 步）：第 $s$ 步 rank $r$ 发出第 $(r-s) \bmod p$ 块，把收到的第 $(r-s-1)\bmod p$ 块**加**到自己的
#    那块上；结束时 rank $r$ 持有第 $(r+1) \bmod p$ 块的完整和；
# 2. **allgather**（$p-1$ 步）：把完整的块沿环传一圈，收到的块**覆盖**自己的。
#
# 每个 rank 一共只发送 $2(p-1)/p \cdot n$ 个数，几乎与 $p$ 无关——这就是它能扩展到很多机器的原因。
# 下面在一个进程里模拟 4 个 rank，画出每一步后每个 rank 缓冲区的内容（颜色 = 已经加进去了几个 rank 的数据）：

# %%
P_SIM, N_SIM = 4, 10
# rank r holds the one-hot-ish array 10**r, so every entry shows which ranks have been summed into it
sim_inputs = [np.full(N_SIM, 10.0 ** r) for r in range(P_SIM)]
history = []
sim_out = ring.simulate_ring_allreduce(sim_inputs, history=history)
assert all(np.array_equal(o, np.sum(sim_inputs, axis=0)) for o in sim_out)
fig, axes = plt.subplots(1, len(history), figsize=(2.1 * len(history) + 1, 2.8), sharey=True, layout="constrained")
for ax, (phase, step, bufs) in zip(axes, history):
    # entry = sum of 10**r over the ranks r added in so far: its decimal digits count them
    counts = np.array([[sum(int(c) for c in str(int(round(v)))) for v in b] for b in bufs])
    im = ax.imshow(counts, vmin=0.5, vmax=P_SIM + 0.5, cmap=plt.get_cmap("viridis", P_SIM), aspect="auto")
    ax.set_title(f"{phase}\nstep {step}", fontsize=8)
    ax.set_xticks(range(0, N_SIM, 3))
    ax.set_yticks(range(P_SIM))
    ax.set_xlabel("element index")
axes[0].set_ylabel("rank")
fig.colorbar(im, ax=axes, ticks=range(1, P_SIM + 1), label="ranks summed in", shrink=0.9)
plt.show()
print("chunks (np.array_split of", N_SIM, "elements over", P_SIM, "ranks):", ring.chunk_bounds(N_SIM, P_SIM))

# %% [markdown]
# ## 5. 一个真正的 2 进程 MPI 作业
#
# `aicslib/distribute/train_data_parallel.py` 是一个完整的数据并行训练脚本：每个 rank 用自己的随机种子初始化权重，
# 然后 `broadcast_variables` 把 rank 0 的权重广播给所有人；每一步每个 rank 只看批的 $1/N$，算梯度，
# `allreduce_gradients` 取平均，再各自做同样的更新。启动器 `python -m aicslib.distribute.launch -n 2 脚本.py`
# 包装了 `mpiexec`（`--hostfile` 指定多台机器；任何 rank 出错或被杀，整个作业在几秒内失败，而不是挂起）。
#
# 下面从笔记本里用子进程启动它（有超时），再在本进程里用整个批做单进程训练，比较两者的权重：

# %%
DP_BATCH, DP_STEPS = (64, 5) if FAST else (256, 20)
out_path = os.path.join(tempfile.mkdtemp(prefix="aics06-"), "dp.npz")
mpi_ok = True
try:
    t0 = time.perf_counter()
    job = launch.run(dp.__file__, 2, ["--batch", DP_BATCH, "--steps", DP_STEPS, "--out", out_path],
                     capture=True, timeout=120)
    print(f"mpiexec job finished in {time.perf_counter() - t0:.1f}s with exit status {job.returncode}")
    print(job.stdout.strip())
    assert job.returncode == 0, job.stderr
except launch.LaunchError as e:   # no MPI on this machine: say how to get it, and go on
    mpi_ok = False
    print("MPI is not available:", e)

w_ref, losses_ref, _ = dp.train(DP_BATCH, DP_STEPS)   # one process, the whole batch, no MPI
if mpi_ok:
    with np.load(out_path, allow_pickle=False) as d:
        mpi_weights = [d[f"w{i}"] for i in range(len(w_ref))]
        mpi_losses = d["losses"]
    diff = max(float(np.abs(a - b).max()) for a, b in zip(w_ref, mpi_weights))
    print(f"2 ranks x {DP_BATCH // 2} examples vs 1 process x {DP_BATCH}: max weight difference {diff:.2e}")
    assert diff < 1e-5
    plt.figure(figsize=(5, 3))
    plt.plot(losses_ref, "o-", label="1 process, batch B")
    plt.plot(mpi_losses, "x--", label="2 MPI ranks, B/2 each")
    plt.xlabel("step")
    plt.ylabel("loss")
    plt.legend()
    plt.tight_layout()
    plt.show()

# %% [markdown]
# ## 6. 实验 (lab)：自己写 ring-allreduce（3 + 3 + 4 分）
#
# 回忆第 4 节：$p$ 个 rank 排成环，每个 rank 把自己的数组按 `ring.chunk_bounds(n, p)`（与 `np.array_split` 相同，
# $n$ 不一定能被 $p$ 整除）切成 $p$ 块。每一步里**所有** rank 同时把一块发给右邻居 $(r+1) \bmod p$、
# 从左邻居 $(r-1) \bmod p$ 收一块——收到的是左邻居**这一步之前**的数据：
#
# | 阶段 | 第 $s$ 步 rank $r$ 发出 | 第 $s$ 步 rank $r$ 收到 | 收到后 | 结束时 |
# |---|---|---|---|---|
# | reduce-scatter（$p-1$ 步） | 块 $(r-s) \bmod p$ | 块 $(r-s-1) \bmod p$ | **加**到自己的这一块上 | rank $r$ 持有块 $(r+1) \bmod p$ 的完整和 |
# | allgather（$p-1$ 步） | 块 $(r+1-s) \bmod p$（已完整） | 块 $(r-s) \bmod p$ | **覆盖**自己的这一块 | 每个 rank 持有所有完整的块 |
#
# 实验分三部分：先在一个进程里模拟 $p$ 个 rank（`buffers[r]` 是 rank $r$ 的缓冲区），一步一步地写两个阶段；
# 再写**一个 rank** 的完整程序，只用 MPI 的点对点消息；最后（6.4）把你的程序放到真正的 MPI 进程上运行。
# 测试在**每一步之后**检查每个 rank 的缓冲区（或每条消息）是否等于环形算法走到这一步时的状态，
# 所以在第 0 步就把整个阶段算完是不得分的；直接调用 aicslib 自己的实现（`ring.reduce_scatter_step`、
# `ring.allgather_step`、`ring.ring_allreduce`）或 MPI 自带的 `Allreduce` 也不得分。

# %% [markdown]
# ### 6.1 reduce-scatter 的一步（3 分）
#
# 实现 `my_reduce_scatter_step(buffers, step)`：**就地 (in place)** 完成第 `step` 步——每个 rank $r$ 把从左邻居收到的
# 第 $(r-\text{step}-1) \bmod p$ 块加到自己的这一块上；这一步里其他块都不变。

# %% nbgrader={"grade": false, "grade_id": "my_reduce_scatter_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_reduce_scatter_step(buffers, step):
    """Reduce-scatter step `step` (0 .. p-2) of ring-allreduce, in place on `buffers`: a list of p
    1-D NumPy arrays of the same length, buffers[r] being rank r's. Every rank r receives one chunk
    from its left neighbour and adds it into its own copy of that chunk; nothing else changes.
    Returns nothing."""
    p = len(buffers)
    bounds = ring.chunk_bounds(buffers[0].size, p)
    ### BEGIN SOLUTION
    messages = []
    for r in range(p):
        lo, hi = bounds[(r - step - 1) % p]
        messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
    for r, lo, hi, data in messages:
        buffers[r][lo:hi] += data
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_reduce_scatter_step_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): after every step, every rank's buffer against the ring algorithm's state after
# that step (workbook/references/ring_allreduce.py, from the definition, without stepping), then a
# whole ring-allreduce built on the answer against NumPy's sum. Calling aicslib's own step fails.
from workbook.references import ring_checks as _ring_checks

with grading.exercise("my_reduce_scatter_step"):
    for _p, _n in [(2, 4), (3, 7), (4, 10)]:
        _ring_checks.check_step_function(my_reduce_scatter_step, "reduce-scatter", _p, _n, _p * 100 + _n,
                                         "my_reduce_scatter_step")
    ### BEGIN HIDDEN TESTS
    for _p, _n in [(1, 5), (5, 3), (6, 23), (3, 0), (7, 50)]:
        _ring_checks.check_step_function(my_reduce_scatter_step, "reduce-scatter", _p, _n, 7 * _p + _n,
                                         name="my_reduce_scatter_step")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 6.2 allgather 的一步（3 分）
#
# reduce-scatter 结束后，rank $r$ 持有块 $(r+1) \bmod p$ 的完整和。实现 `my_allgather_step(buffers, step)`：就地完成
# allgather 的第 `step` 步——每个 rank $r$ 用左邻居（这一步之前）的第 $(r-\text{step}) \bmod p$ 块**覆盖**自己的这一块。
# 测试从 reduce-scatter 结束时的缓冲区开始，每一步之后检查所有 rank。

# %% nbgrader={"grade": false, "grade_id": "my_allgather_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_allgather_step(buffers, step):
    """Allgather step `step` (0 .. p-2) of ring-allreduce, in place on `buffers` (as in 6.1, after the
    whole reduce-scatter): every rank r receives one complete chunk from its left neighbour and
    overwrites its own copy of that chunk with it. Returns nothing."""
    p = len(buffers)
    bounds = ring.chunk_bounds(buffers[0].size, p)
    ### BEGIN SOLUTION
    messages = []
    for r in range(p):
        lo, hi = bounds[(r - step) % p]
        messages.append((r, lo, hi, buffers[(r - 1) % p][lo:hi].copy()))
    for r, lo, hi, data in messages:
        buffers[r][lo:hi] = data
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_allgather_step_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): from the end of reduce-scatter, every rank's buffer after every allgather step
# against the state from the definition, then a whole ring-allreduce with the answer's allgather.
with grading.exercise("my_allgather_step"):
    for _p, _n in [(2, 4), (3, 7), (4, 10)]:
        _ring_checks.check_step_function(my_allgather_step, "allgather", _p, _n, _p * 100 + _n, "my_allgather_step")
    ### BEGIN HIDDEN TESTS
    for _p, _n in [(1, 5), (5, 3), (6, 23), (3, 0), (7, 50)]:
        _ring_checks.check_step_function(my_allgather_step, "allgather", _p, _n, 9 * _p + _n,
                                         name="my_allgather_step")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 6.3 一个 rank 的完整程序：MPI 点对点消息（4 分）
#
# 真实的作业里每个 rank 是一个进程，只有**自己的**缓冲区。实现 `my_ring_allreduce(comm, x)`：rank
# `comm.Get_rank()`（共 `comm.Get_size()` 个）先做 $p-1$ 步 reduce-scatter、再做 $p-1$ 步 allgather，返回所有 rank 的
# `x` 之和（形状、dtype 与 `x` 相同；`x` 本身不变）。每一步只用一次
# `comm.Sendrecv(要发的块, dest=右邻居, recvbuf=接收缓冲区, source=左邻居)`——它同时发送和接收，所以环上不会死锁；
# `recvbuf` 是一个大小等于收到的块的 NumPy 数组。
#
# 测试在一个进程里用线程模拟 $p$ 个 rank（通信器只提供 `Get_rank`、`Get_size`、`Sendrecv`、`Send`、`Recv`），
# 检查每个 rank **每一步发出的消息**（哪一块、当时的值），再检查结果。6.4 会把这个函数的源代码交给真正的 MPI
# 进程运行，所以函数里只能用 `np`、`ring.chunk_bounds` 和它自己的变量。

# %% nbgrader={"grade": false, "grade_id": "my_ring_allreduce", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_ring_allreduce(comm, x):
    """Ring-allreduce as rank comm.Get_rank() of comm.Get_size() runs it: returns the sum of every
    rank's `x` (x's shape and dtype), leaving `x` unchanged. Only point-to-point messages:
    comm.Sendrecv(send_array, dest=right, recvbuf=receive_array, source=left), one per step,
    p-1 reduce-scatter steps then p-1 allgather steps. Uses only np and ring.chunk_bounds (the
    source is shipped to the MPI ranks in 6.4)."""
    p, r = comm.Get_size(), comm.Get_rank()
    buf = np.array(x, copy=True).reshape(-1)
    bounds = ring.chunk_bounds(buf.size, p)
    ### BEGIN SOLUTION
    left, right = (r - 1) % p, (r + 1) % p
    incoming = np.empty_like(buf)
    for step in range(p - 1):          # reduce-scatter: add what arrives
        slo, shi = bounds[(r - step) % p]
        rlo, rhi = bounds[(r - step - 1) % p]
        comm.Sendrecv(buf[slo:shi].copy(), dest=right, recvbuf=incoming[:rhi - rlo], source=left)
        buf[rlo:rhi] += incoming[:rhi - rlo]
    for step in range(p - 1):          # allgather: complete chunks overwrite
        slo, shi = bounds[(r + 1 - step) % p]
        rlo, rhi = bounds[(r - step) % p]
        comm.Sendrecv(buf[slo:shi].copy(), dest=right, recvbuf=incoming[:rhi - rlo], source=left)
        buf[rlo:rhi] = incoming[:rhi - rlo]
    ### END SOLUTION
    return buf.reshape(np.shape(x))


# %% nbgrader={"grade": true, "grade_id": "my_ring_allreduce_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): p ranks on threads with an in-process communicator (workbook/references/
# ring_checks.py); every message each rank sends is compared with the chunk the ring sends at that
# step, then every rank's result with NumPy's sum. Collectives and aicslib's ring_allreduce fail.
with grading.exercise("my_ring_allreduce"):
    for _p, _n in [(2, 4), (3, 7), (4, 10)]:
        _ring_checks.check_rank_program(my_ring_allreduce, _p, _n, _p * 100 + _n, "my_ring_allreduce")
    ### BEGIN HIDDEN TESTS
    for _p, _n in [(1, 5), (5, 3), (6, 23), (3, 0)]:
        _ring_checks.check_rank_program(my_ring_allreduce, _p, _n, _p * 100 + _n + 3, "my_ring_allreduce")
    _ring_checks.check_rank_program(my_ring_allreduce, 4, 9, 49, "my_ring_allreduce", dtype=np.float32)
    ### END HIDDEN TESTS

# %% [markdown]
# ### 6.4 在真正的 MPI 进程上运行你的 ring-allreduce
#
# 笔记本里定义的函数不能被别的进程 import，所以 `aicslib/distribute/run_function.py` 把它的**源代码**写进一个文件，
# 用第 5 节的启动器 (`launch.run`，即 `mpiexec`) 启动 $p$ 个 rank；每个 rank 执行这段源代码，用真正的
# `MPI.COMM_WORLD` 调用它，rank 0 收集所有结果。下面把每个 rank 的结果与单进程的 `np.sum` 比较
# （6.3 还没通过时用参考实现，并会说明）：

# %%
import inspect

from aicslib.distribute.run_function import run_on_ranks
from workbook.references import ring_allreduce as ring_reference

ring_fn = grading.use("my_ring_allreduce", my_ring_allreduce, ring_reference.ring_allreduce_rank,
                      "ring-allreduce (workbook/references/ring_allreduce.py)")
ring_source = inspect.getsource(my_ring_allreduce if ring_fn is my_ring_allreduce else ring_reference)
RING_P, RING_N = 4, (10_000 if FAST else 1_000_000)
ring_inputs = [np.random.default_rng(100 + r).standard_normal(RING_N).astype(np.float32) for r in range(RING_P)]
single_sum = np.sum(ring_inputs, axis=0)          # one process, NumPy's own order of additions
try:
    t0 = time.perf_counter()
    ring_results, ring_seconds, _ = run_on_ranks(ring_source, ring_fn.__name__, ring_inputs, timeout=120)
    print(f"{RING_P} MPI ranks ran {ring_fn.__name__} in {time.perf_counter() - t0:.1f}s (with start-up); "
          f"the allreduce itself took {ring_seconds.max() * 1e3:.1f} ms on the slowest rank")
    for r, out in enumerate(ring_results):
        print(f"  rank {r}: max |ring - np.sum| = {float(np.abs(out - single_sum).max()):.2e} "
              f"(float32; the ring adds in another order)")
        assert np.allclose(out, single_sum, rtol=1e-5, atol=1e-5)
    sent = 2 * (RING_P - 1) * int(np.ceil(RING_N / RING_P)) * 4
    print(f"each rank sent 2(p-1) = {2 * (RING_P - 1)} messages, about {sent / 1e3:.0f} kB in all: 2(p-1)/p = "
          f"{2 * (RING_P - 1) / RING_P:.2f} times its {RING_N * 4 / 1e3:.0f} kB array")
except launch.LaunchError as e:
    print("MPI is not available:", e)

# %% [markdown]
# ## 小结
#
# * 单机单卡、单机多卡、多机多卡的数据并行是同一个算法：每个副本对 $B/N$ 个样本做前向和反向（**并行**），
#   梯度求平均（**串行点**，所有副本都要到齐），然后每个副本做同样的更新。区别只在梯度走哪条路：同一块内存、
#   卡间总线，还是机器间网络。
# * 单机多卡在 TF1 里是"塔"：每个设备一份图，共享变量，`average_gradients` 后 `apply_gradients` 一次；
#   `RunMetadata` 时间线显示各设备同时计算、在梯度平均处汇合。
# * 多机多卡用 MPI：启动时广播初始权重，每步 allreduce 梯度。ring-allreduce 每个 rank 只发 $2(p-1)/p\cdot n$ 个数，
#   几乎与 $p$ 无关。实验里你自己写了它的两个阶段和一个 rank 的 MPI 程序，并在真正的多个 MPI 进程上得到与单进程求和相同的结果。
#
# 下一章 `20-parallelism-models.ipynb`：BatchNorm 让数据并行不再等于单卡大批（以及同步 BN）、参数服务器的同步与异步训练、
# 用 alpha-beta 模型估计 allreduce 的代价和加速比，以及把层切到不同设备上的模型并行（GPipe 流水线）。
