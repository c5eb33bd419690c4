# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 09 算子融合 (operator fusion)：为什么融合更快，哪些网络受益最多
#
# **对应习题**：5.11（分析算子融合比非融合提高计算效率的原因；在常见的分类网络中，算子融合对具有哪些特征的网络带来的加速比更大）。
#
# **学习目标**
#
# 1. 测出这台机器的两个"屋顶"：矩阵乘 (GEMM) 的峰值算力与内存带宽 (memory bandwidth)；
# 2. 用屋顶线模型 (roofline model) 解释：逐元素 (elementwise) 算子的算术强度 (arithmetic intensity) 很低，时间花在搬数据上；
# 3. 对比融合与不融合：逐元素链、Conv2D+BiasAdd+ReLU（`_FusedConv2D`）、MatMul+BiasAdd+ReLU（`_FusedMatMul`）——
#    看 `aicslib/grappler` 的 remapper 与 elementwise fusion 怎样改写图；
# 4. 比较小型 VGG、ResNet、MobileNet 风格网络在图优化开/关时的端到端速度；
# 5. 练习：就地 (in-place) 实现"偏置 + 激活"的输出阶段（自动评分）；
# 6. 实验 (lab)：自己写一个 remapper 式的图改写 (graph rewrite) pass，把 GraphDef 里的 Conv2D + BiasAdd + Relu
#    换成 `_FusedConv2D`，并在不安全时拒绝改写（自动评分）；
# 7. 写出 5.11 的答案：哪些网络加速最多由本机的测量排出，并说明融合什么时候反而更慢、为什么。
#
# **运行时间**见下面第一个单元格的输出（`AICS_FAST=1` 时尺寸更小、重复更少，代码路径相同）。
# 计时受机器负载影响，请看比值与趋势，而不是某一次的绝对值。
# **练习与实验**（自动评分，共 12 分）在第 5、6 节；没做完，后面的单元格照样能运行（改用参考实现，并说明）。

# %%
import os
import statistics
import time
import tracemalloc

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib.ops.batch_norm_ops import fused_batch_norm
from workbook import grading, run_times

run_times.show("operator-fusion")
FAST = flags.FAST
REPEATS = 3 if FAST else 9
RC = aics.RewriterConfig
rng = np.random.default_rng(0)


def config(**kw):
    """A ConfigProto whose RewriterConfig has these fields (TF's names)."""
    return aics.ConfigProto(graph_options=aics.GraphOptions(rewrite_options=RC(**kw)))


ALL_OFF = config(disable_meta_optimizer=True)


def median_time(fn, repeats=REPEATS):
    fn()                                   # warm-up: builds and caches the plan
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def on_off(graph, fetch, feed, off=ALL_OFF, on=None):
    """(seconds with the passes on, seconds with them off), checking both give the same result."""
    s_on, s_off = aics.Session(graph=graph, config=on), aics.Session(graph=graph, config=off)
    a, b = s_on.run(fetch, feed), s_off.run(fetch, feed)
    assert np.array_equal(a, b), "an optimization changed a result"
    t = (median_time(lambda: s_on.run(fetch, feed)), median_time(lambda: s_off.run(fetch, feed)))
    s_on.close()
    s_off.close()
    return t


print("AICS_FAST:", FAST, "| CPU cores:", os.cpu_count())

# %% [markdown]
# ## 1. 这台机器的两个屋顶
#
# 屋顶线模型（Williams, Waterman, Patterson, *Roofline*, CACM 2009）：一个计算每从内存读写 1 字节做 $I$ 次浮点运算
# （算术强度 $I$，单位 FLOP/byte），它能达到的速度不超过 $\min(P_{\text{peak}},\; I \cdot B)$，$P$ 是峰值算力，$B$ 是内存带宽。
# 我们用 NumPy 测这两个数：大矩阵乘（$2n^3$ 次运算，几乎全在缓存里复用数据）给出峰值，
# 大数组的 `a + b`（每个元素读 8 字节、写 4 字节）给出带宽。

# %%
def measure_gemm_gflops(n):
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    t = median_time(lambda: a @ b)
    return 2 * n ** 3 / t / 1e9


def measure_bandwidth_gbs(n):
    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    out = np.empty(n, np.float32)
    t = median_time(lambda: np.add(a, b, out=out))
    return 3 * 4 * n / t / 1e9             # read a and b, write out


PEAK = measure_gemm_gflops(512 if FAST else 1536)
BW = measure_bandwidth_gbs((1 << 23) if FAST else (1 << 25))
RIDGE = PEAK / BW
print(f"GEMM peak ~ {PEAK:.1f} GFLOP/s, memory bandwidth ~ {BW:.1f} GB/s, ridge point {RIDGE:.1f} FLOP/byte")
assert PEAK > 0 and BW > 0

# %% [markdown]
# 屋顶的拐点 (ridge point) $P/B$ 通常是几 FLOP/byte 到几十 FLOP/byte。逐元素算子（加偏置、ReLU、乘一个数）每读写 8 字节
# 只做 1 次运算，$I \approx 0.1$，远在拐点左边：它们的时间由**搬数据**决定，算得再快也没用。
# 卷积与矩阵乘的 $I$ 随尺寸增长，大多在拐点右边，由算力决定。

# %% [markdown]
# ## 2. 逐元素链：一次遍历代替五次
#
# `relu(tanh(x * 0.5 + 0.25) - 0.1)` 是 5 个逐元素算子。不融合时每个算子读一遍输入、写一遍输出，
# 中间结果在内存里来回五次；`aicslib/grappler/optimizers/elementwise_fusion.py` 把它们合成一个 `_FusedElementwise` 节点，
# 其内核 (`kernels/cwise_ops_fused.py`) 把输出切成装得进缓存的小块 (tile)，每块把整条链算完再写回。

# %%
N_ELEM = (1 << 20) if FAST else (1 << 22)
g_chain = aics.Graph()
with g_chain.as_default():
    x_chain = aics.placeholder(aics.float32, [N_ELEM], name="x")
    y_chain = aics.nn.relu(aics.tanh(x_chain * 0.5 + 0.25) - 0.1, name="y")
feed_chain = {x_chain: rng.standard_normal(N_ELEM).astype(np.float32)}

optimized = aics.grappler.optimize(g_chain, ["y:0"])
print("optimized graph:", [(n["name"], n["op"]) for n in optimized["node"]])
print("program:", next(n for n in optimized["node"] if n["op"] == "_FusedElementwise")["attr"]["ops"]["list"]["s"])
t_on, t_off = on_off(g_chain, y_chain, feed_chain, off=config(elementwise_fusion=RC.OFF))
print(f"5-op chain on {N_ELEM / 2**20:.0f}M floats: unfused {t_off * 1e3:.1f} ms, fused {t_on * 1e3:.1f} ms "
      f"-> {t_off / t_on:.2f}x")

# %% [markdown]
# 搬运量估算：不融合时 5 个算子各读 4 字节、写 4 字节（常量是标量，忽略），共 $40N$ 字节；融合后读 $x$、写 $y$，共 $8N$ 字节——
# 少了 5 倍。实测加速比小于 5，因为 `tanh` 本身也要算一阵子，而且小块之间还有 Python 的调度开销。

# %% [markdown]
# ## 3. Conv2D + BiasAdd + ReLU 与 MatMul + BiasAdd + ReLU
#
# remapper（`grappler/optimizers/remapper.py`，对应 TF 的 `remapper.cc`）把这两种模式换成 `_FusedConv2D` / `_FusedMatMul`：
# 卷积（或矩阵乘）算完后，偏置与激活**就地**加在它的输出上，不再各自读写一遍整个张量。

# %%
def conv_block(batch, hw, c, k):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [batch, hw, hw, c], name="x")
        w = aics.constant(rng.standard_normal((k, k, c, c)).astype(np.float32) * 0.1)
        y = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(x, w, 1, "SAME"), aics.constant(np.ones(c, np.float32))),
                         name="y")
    return g, y, {x: rng.standard_normal((batch, hw, hw, c)).astype(np.float32)}


def matmul_block(m, k, n):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [m, k], name="x")
        w = aics.constant(rng.standard_normal((k, n)).astype(np.float32) * 0.05)
        y = aics.nn.relu(aics.nn.bias_add(aics.matmul(x, w), aics.constant(np.ones(n, np.float32))), name="y")
    return g, y, {x: rng.standard_normal((m, k)).astype(np.float32)}


CASES = {
    "Conv 3x3": (conv_block, (2, 28, 32, 3) if FAST else (4, 56, 64, 3)),
    "Conv 1x1": (conv_block, (2, 28, 32, 1) if FAST else (4, 56, 64, 1)),
    "MatMul": (matmul_block, (256, 256, 256) if FAST else (1024, 1024, 1024)),
}
NO_REMAP = config(remapping=RC.OFF, elementwise_fusion=RC.OFF)
points = []   # (name, flops, bytes unfused, bytes fused, t_unfused, t_fused)
for name, (build, args) in tqdm(CASES.items(), desc="fused vs unfused"):
    g, y, feed = build(*args)
    t_on, t_off = on_off(g, y, feed, off=NO_REMAP)
    out_elems = int(np.prod(y.shape.as_list()))
    if build is conv_block:
        b_, hw, c, k = args
        flops = 2 * b_ * hw * hw * c * c * k * k
        core_bytes = 4 * (b_ * hw * hw * c + k * k * c * c + out_elems)
    else:
        m, kk, n = args
        flops = 2 * m * kk * n
        core_bytes = 4 * (m * kk + kk * n + out_elems)
    points.append((name, flops, core_bytes + 4 * 4 * out_elems, core_bytes, t_off, t_on))
    print(f"{name:9s} unfused {t_off * 1e3:7.2f} ms  fused {t_on * 1e3:7.2f} ms  -> {t_off / t_on:.2f}x")
fused_node = next(n for n in aics.grappler.optimize(build(*args)[0], ["y:0"])["node"] if n["op"].startswith("_Fused"))
print("e.g.", fused_node["op"], "fused_ops =", fused_node["attr"]["fused_ops"]["list"]["s"])

# %% [markdown]
# 不融合时多出的搬运：BiasAdd 读、写一遍输出（$8\times$输出元素字节），ReLU 再读、写一遍，共 $16\times$ 输出元素字节。
# 对 3x3 卷积，这点额外搬运相对于卷积本身的计算很小，融合的收益有限；对 1x1 卷积与小矩阵乘，卷积本身便宜，
# 偏置与激活占的比例大，融合收益更明显。下图把它们放到屋顶线上。

# %%
chain_flops = 5 * N_ELEM
t_on_chain, t_off_chain = on_off(g_chain, y_chain, feed_chain, off=config(elementwise_fusion=RC.OFF))
chain = ("5-op chain", chain_flops, 40 * N_ELEM, 8 * N_ELEM, t_off_chain, t_on_chain)
fig, ax = plt.subplots(figsize=(7, 4.5))
ai = np.logspace(-2, 3, 200)
ax.loglog(ai, np.minimum(PEAK, ai * BW), "k-", label=f"roofline: {PEAK:.0f} GFLOP/s, {BW:.0f} GB/s")
for (name, flops, bytes_u, bytes_f, tu, tf), color in zip(points + [chain], ["C0", "C1", "C2", "C3"]):
    ax.loglog(flops / bytes_u, flops / tu / 1e9, "o", color=color, mfc="none", ms=9, label=f"{name} unfused")
    ax.loglog(flops / bytes_f, flops / tf / 1e9, "o", color=color, ms=9, label=f"{name} fused")
    ax.annotate("", xy=(flops / bytes_f, flops / tf / 1e9), xytext=(flops / bytes_u, flops / tu / 1e9),
                arrowprops=dict(arrowstyle="->", color=color))
ax.set_xlabel("arithmetic intensity (FLOP/byte)")
ax.set_ylabel("attained GFLOP/s")
ax.set_title("fusion moves a computation right (fewer bytes) and up (faster)")
ax.legend(fontsize=7, loc="lower right")
plt.show()

# %% [markdown]
# ## 4. 端到端：三种网络，图优化开与关
#
# 三个小网络（代码在下面，结构是各自家族的缩影）：
#
# * **VGG 风格**：3x3 卷积 + 偏置 + ReLU，每段两层后池化——计算密集，卷积占绝大部分时间；
# * **ResNet 风格**：卷积 + 批归一化 (batch normalization，推理模式) + ReLU，加残差连接——BN 被 remapper 并进卷积的输出阶段；
# * **MobileNet 风格**：深度可分离卷积 (depthwise separable)：3x3 深度卷积 + 偏置 + ReLU6，再 1x1 卷积 + BN + ReLU6——
#   每个卷积的计算量小，逐元素算子占比高。
#
# 每个网络测四个 Session：所有 pass 关（两次：同一设置测两遍的差就是噪声带 (noise band)）、只开 remapper、所有 pass 开。
# 几个 Session 轮流运行，各取最快的一次（机器上别的负载只会让时间变长）。表里还有一列 **memory-bound share**：
# 不融合时，能被融合拿掉的算子（BiasAdd、ReLU/ReLU6、BN、残差加法）在所有内核时间里的占比，来自一次带跟踪的运行
# (`RunOptions(trace_level=FULL_TRACE)`)。这一列是"融合最多能省多少"的上限，排名按它给出预测，按实测加速比给出结果。

# %%
def _w(*shape):
    return aics.constant((rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1]))).astype(np.float32))


def _bn(x, c):
    y, _, _ = fused_batch_norm(x, aics.constant(rng.uniform(0.5, 1.5, c).astype(np.float32)),
                               aics.constant(rng.standard_normal(c).astype(np.float32) * 0.1),
                               aics.constant(rng.standard_normal(c).astype(np.float32) * 0.1),
                               aics.constant(rng.uniform(0.5, 2, c).astype(np.float32)), epsilon=1e-3,
                               is_training=False)
    return y


def vgg_like(x):
    h, c = x, 3
    for width in (16, 32, 64):
        for _ in range(2):
            h = aics.nn.relu(aics.nn.bias_add(aics.nn.conv2d(h, _w(3, 3, c, width), 1, "SAME"),
                                              aics.constant(np.full(width, 0.01, np.float32))))
            c = width
        h = aics.nn.max_pool(h, 2, 2, "VALID")
    return h


def resnet_like(x, width=32):
    h = aics.nn.relu(_bn(aics.nn.conv2d(x, _w(3, 3, 3, width), 1, "SAME"), width))
    for _ in range(3):
        r = aics.nn.relu(_bn(aics.nn.conv2d(h, _w(3, 3, width, width), 1, "SAME"), width))
        h = aics.nn.relu(_bn(aics.nn.conv2d(r, _w(3, 3, width, width), 1, "SAME"), width) + h)
    return h


def mobilenet_like(x):
    h = aics.nn.relu6(_bn(aics.nn.conv2d(x, _w(3, 3, 3, 32), 1, "SAME"), 32))
    c = 32
    for i, width in enumerate((32, 64, 128, 128)):
        s = 2 if i in (1, 3) else 1
        h = aics.nn.relu6(aics.nn.bias_add(aics.nn.depthwise_conv2d(h, _w(3, 3, c, 1), [1, s, s, 1], "SAME"),
                                           aics.constant(np.full(c, 0.01, np.float32))))
        h = aics.nn.relu6(_bn(aics.nn.conv2d(h, _w(1, 1, c, width), 1, "SAME"), width))
        c = width
    return h


NETWORKS = {"VGG-like": vgg_like, "ResNet-like": resnet_like, "MobileNet-like": mobilenet_like}
BATCH, HW = (1, 32) if FAST else (8, 64)


def build_network(name):
    g = aics.Graph()
    with g.as_default():
        x = aics.placeholder(aics.float32, [BATCH, HW, HW, 3], name="x")
        out = aics.reduce_mean(NETWORKS[name](x), axis=[1, 2], name="out")
    return g, out, {x: rng.standard_normal((BATCH, HW, HW, 3)).astype(np.float32)}


NET_REPEATS = 9 if FAST else 15
REMAP_ONLY = config(constant_folding=RC.OFF, arithmetic_optimization=RC.OFF, elementwise_fusion=RC.OFF,
                    dependency_optimization=RC.OFF)
CONTRACTIONS = {"Conv2D", "DepthwiseConv2dNative", "MatMul", "_FusedConv2D", "_FusedDepthwiseConv2dNative",
                "_FusedMatMul"}
MEMORY_BOUND = {"BiasAdd", "Relu", "Relu6", "FusedBatchNormV3", "AddV2", "Add"}   # what fusion can take away


def interleaved_times(sessions, fetch, feed, repeats=NET_REPEATS):
    """Seconds per run of each session, the fastest of `repeats` (load on the machine only ever adds
    time, so the minimum is the steadiest estimate of a run's own cost); the sessions take turns, so
    a burst of load hits all of them alike."""
    samples = [[] for _ in sessions]
    for s in sessions:
        s.run(fetch, feed)
    for _ in range(repeats):
        for k, s in enumerate(sessions):
            t0 = time.perf_counter()
            s.run(fetch, feed)
            samples[k].append(time.perf_counter() - t0)
    return [min(x) for x in samples]


def kernel_times(sess, fetch, feed, repeats=5):
    """Microseconds per op type spent inside kernels (RunOptions FULL_TRACE), the fastest of
    `repeats` traced runs for each op type."""
    best = {}
    for _ in range(repeats):
        md = aics.RunMetadata()
        sess.run(fetch, feed, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
        per_op = {}
        for ns in md.node_stats():
            per_op[ns.op] = per_op.get(ns.op, 0) + ns.all_end_rel_micros
        for op, t in per_op.items():
            best[op] = min(best.get(op, t), t)
    return best


results = {}   # network -> measurements
for name in tqdm(NETWORKS, desc="networks"):
    g, out, feed = build_network(name)
    sessions = [aics.Session(graph=g, config=c) for c in (ALL_OFF, ALL_OFF, REMAP_ONLY, None)]
    first = [s.run(out, feed) for s in sessions]
    assert all(np.array_equal(first[0], r) for r in first), "an optimization changed a result"
    t_off, t_off_again, t_remap, t_all = interleaved_times(sessions, out, feed)
    k_off, k_all = kernel_times(sessions[0], out, feed), kernel_times(sessions[3], out, feed)
    for s in sessions:
        s.close()
    results[name] = dict(nodes_off=len(g.get_operations()), nodes_on=len(aics.grappler.optimize(g, ["out:0"])["node"]),
                         t_off=t_off, noise=abs(t_off_again / t_off - 1), remap=t_off / t_remap, all=t_off / t_all,
                         # share of the unfused kernels' time in what fusion can take away
                         share=sum(t for op, t in k_off.items() if op in MEMORY_BOUND) / sum(k_off.values()),
                         contraction_parts=sum(t for op, t in k_off.items() if op in CONTRACTIONS | MEMORY_BOUND) / 1e3,
                         contraction_fused=sum(t for op, t in k_all.items() if op in CONTRACTIONS | MEMORY_BOUND) / 1e3)

# The same graph run twice with the same settings is the noise floor: a speedup closer to 1 than
# that (and than 3 %) is no measurable difference.
BAND = max(0.03, 2 * max(r["noise"] for r in results.values()))


def verdict(speedup):
    return "gains" if speedup > 1 + BAND else "LOSES" if speedup < 1 - BAND else "no measurable difference"


print(f"{'network':15s} {'nodes':>9s} {'unfused':>9s} {'memory-bound':>13s} {'remapper':>9s} {'all passes':>11s}")
print(f"{'':15s} {'off->on':>9s} {'(ms)':>9s} {'share':>13s} {'speedup':>9s} {'speedup':>11s}")
for name, r in results.items():
    print(f"{name:15s} {r['nodes_off']:4d}->{r['nodes_on']:3d} {r['t_off'] * 1e3:9.2f} {r['share']:13.0%} "
          f"{r['remap']:8.2f}x {r['all']:10.2f}x  {verdict(r['all'])}")
print(f"noise band (same graph, same settings, timed twice): +-{BAND:.0%}")
ranking = sorted(results, key=lambda n: results[n]["all"], reverse=True)
by_share = sorted(results, key=lambda n: results[n]["share"], reverse=True)
print("measured ranking (all passes vs none):", " > ".join(f"{n} {results[n]['all']:.2f}x" for n in ranking))
print("ranking by memory-bound share of the unfused time:", " > ".join(f"{n} {results[n]['share']:.0%}" for n in by_share))
losers = [n for n in ranking if verdict(results[n]["all"]) == "LOSES"]
print("fusion lost on:", ", ".join(losers) if losers else "none of the three in this run")
print("\nkernel time (ms, summed over the nodes of a traced run): the convolutions with their bias/BN and "
      "activation, unfused and fused")
for name, r in results.items():
    print(f"  {name:15s} unfused {r['contraction_parts']:6.2f}  fused {r['contraction_fused']:6.2f}  "
          f"({'fused kernels slower' if r['contraction_fused'] > r['contraction_parts'] else 'fused kernels faster'})")

fig, ax = plt.subplots(figsize=(7, 3.5))
xs = np.arange(len(results))
ax.bar(xs - 0.2, [r["remap"] for r in results.values()], 0.4, label="remapper only", zorder=2)
ax.bar(xs + 0.2, [r["all"] for r in results.values()], 0.4, label="all passes", zorder=2)
ax.axhspan(1 - BAND, 1 + BAND, facecolor="none", edgecolor="0.4", hatch="///", lw=0, zorder=3,
           label=f"noise band (+-{BAND:.0%})")
ax.axhline(1.0, color="k", lw=0.8, zorder=4)
ax.set_xticks(xs, list(results))
ax.set_ylabel("speedup vs all passes off (x)")
ax.set_title(f"end to end, batch {BATCH}, {HW}x{HW} input")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 5. 练习：就地完成"偏置 + 激活"（3 分）
#
# 融合内核的输出阶段（TF 的 `fused_eigen_output_kernels.h`，这里的 `kernels/fused_eigen_output_kernels.py`）
# 在卷积/矩阵乘的输出 `y` 上**就地**加偏置、做激活，不产生任何与 `y` 一样大的临时数组。请实现
# `bias_act_inplace(y, bias, activation)`：
#
# * `y`：形状 `(..., C)` 的 float32/float64 数组，可写；`bias`：形状 `(C,)`；`activation`：`"relu"` 或 `"relu6"`；
# * 计算 $\mathrm{act}(y + b)$，把结果写回 `y` 并返回 `y` 本身（同一个数组对象）；
# * 结果必须与 `np.maximum(y + b, 0)`（或 `np.clip(y + b, 0, 6)`）**逐位相同**；
# * 不得分配与 `y` 元素个数相当的临时数组：`y + b` 这样的浮点临时数组不行，`y < 0` 这样的布尔掩码 (boolean mask)
#   也不行（它每个元素占 1 字节，共 `y.size` 字节）。测试用 `tracemalloc` 量峰值内存，上限是 `y.size / 8` 字节
#   （NumPy 内部按块使用的缓冲区远小于它）；
# * 整块数组一起算，不要逐元素（或逐像素）写 Python 循环（对通道的循环可以）；不得调用 aicslib 或 `workbook` 里的实现。

# %% nbgrader={"grade": false, "grade_id": "bias_act_inplace", "locked": false, "schema_version": 3, "solution": true, "task": false}
def bias_act_inplace(y, bias, activation="relu"):
    ### BEGIN SOLUTION
    np.add(y, bias, out=y)
    if activation == "relu":
        np.maximum(y, y.dtype.type(0), out=y)
    elif activation == "relu6":
        np.clip(y, y.dtype.type(0), y.dtype.type(6), out=y)
    else:
        raise ValueError(f"unknown activation {activation!r}")
    return y
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "bias_act_inplace_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): bit-exact against act(y + b), written into y itself, both activations
# and dtypes; the peak of the memory allocated meanwhile (tracemalloc) stays under y.size / 8 bytes,
# so neither a y-sized float temporary nor a boolean mask of y (y.size bytes) fits; no call into
# aicslib or the workbook.
from workbook.references import fusion as _fusion_reference


def _bias_act_case(shape, activation, dtype, seed):
    """Runs bias_act_inplace on a fresh y; returns the peak bytes allocated while it ran."""
    r = np.random.default_rng(seed)
    y = (r.standard_normal(shape) * 5).astype(dtype)
    b = (r.standard_normal(shape[-1]) * 3).astype(dtype)
    y.reshape(-1, shape[-1])[0] = -b                          # y + b exactly 0: the kink of the ReLU
    want = _fusion_reference.bias_act(y, b, activation)
    call = f"bias_act_inplace(y, bias, {activation!r}) with y of shape {shape}, {np.dtype(dtype).name}"
    tracemalloc.start()
    try:
        got = grading.no_library_calls(bias_act_inplace, y, b, activation, what="bias_act_inplace")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    what = "None" if got is None else "a new array" if isinstance(got, np.ndarray) else type(got).__name__
    grading.check(got is y, f"{call} returned {what}: write the result into y itself (out=y) and return y, "
                            f"the same array object")
    grading.check_array(y, want, f"y after {call}", dtype=dtype,
                        hint="add the bias first, then the activation; ReLU6 clamps to [0, 6] on both sides")
    return peak


def _bias_act_vectorised(shape, activation, dtype, seed):
    r = np.random.default_rng(seed)
    y = (r.standard_normal(shape) * 5).astype(dtype)
    b = (r.standard_normal(shape[-1]) * 3).astype(dtype)
    _, lines = grading.python_lines(bias_act_inplace, y, b, activation)
    pixels = y.size // shape[-1]
    grading.check(lines < pixels // 2,
                  f"bias_act_inplace({activation!r}) ran {lines} lines of Python for a y of shape {shape} "
                  f"({pixels} pixels of {shape[-1]} channels): a Python loop per element or per pixel. Work on "
                  f"whole arrays with NumPy's ufuncs (a loop over the {shape[-1]} channels is fine)")


def _bias_act_memory(shape, activation, dtype, seed):
    peak = _bias_act_case(shape, activation, dtype, seed)
    size = int(np.prod(shape))
    grading.check(peak < size // 8,
                  f"bias_act_inplace({activation!r}) on a y of {size} {np.dtype(dtype).name} ({size * np.dtype(dtype).itemsize} "
                  f"bytes) allocated up to {peak} bytes meanwhile; the limit is y.size / 8 = {size // 8} bytes. "
                  f"A float temporary such as y + bias takes {size * np.dtype(dtype).itemsize} bytes, a boolean "
                  f"mask such as y < 0 takes {size}. Hint: write every step into y with out=y "
                  f"(np.add(y, bias, out=y), then np.maximum / np.clip with out=y), no masks")


with grading.exercise("bias_act_inplace"):
    for _k, (_shape, _act, _dt) in enumerate([((5, 3), "relu", np.float32), ((4, 7, 6), "relu6", np.float32),
                                              ((9, 4), "relu6", np.float64), ((2, 3, 5, 8), "relu", np.float64)]):
        _bias_act_case(_shape, _act, _dt, _k)
    _bias_act_vectorised((64, 64, 8), "relu6", np.float32, 9)
    _bias_act_memory((64, 128, 512), "relu", np.float32, 10)
    ### BEGIN HIDDEN TESTS
    _bias_act_memory((2048, 2048), "relu6", np.float32, 11)
    _bias_act_memory((16, 64, 64, 64), "relu", np.float64, 12)
    _bias_act_memory((4096, 1024), "relu6", np.float64, 13)
    _bias_act_case((8000, 17), "relu6", np.float32, 14)
    _bias_act_case((1, 1), "relu", np.float32, 15)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 6. 实验：自己写一个 remapper（9 分）
#
# 前面的融合都是 `aicslib/grappler/optimizers/remapper.py`（TF 的 `remapper.cc`）替我们做的。这个实验里你自己写这个
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
# 用你的 pass 改写本章第 4 节的 VGG 风格网络（没做完或没通过时用参考实现，并说明）：比较改写前后的节点、
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
# ## 7. 交互：逐个开关优化 pass，看图与时间
#
# 勾掉某个 pass（用的正是 TF 的 `RewriterConfig` 字段名），右边显示优化后图里各种算子的个数（旁边一列是所有 pass 都开时的个数，
# 作为对照），下面是一次前向的时间。某个 pass 在这个网络上没有可改的地方时，算子个数不变，只有时间随测量波动。

# %%
pass_boxes = {field: widgets.Checkbox(value=True, description=field, indent=False)
              for field in ("constant_folding", "arithmetic_optimization", "remapping", "elementwise_fusion",
                            "dependency_optimization")}
net_choice = widgets.Dropdown(options=list(NETWORKS), value="MobileNet-like", description="network")
graph_out = widgets.Output()                  # the optimized graph: the same for the same switches
time_out = widgets.Output()
time_out.add_class("aics-timing")             # the forward pass timed anew on every change
_widget_graphs = {name: build_network(name) for name in NETWORKS}


def optimized_ops(network, switches):
    """The op types of `network`'s graph after grappler, with each pass on or off as `switches` says."""
    g = _widget_graphs[network][0]
    fields = {f: (RC.DEFAULT if on else RC.OFF) for f, on in switches.items()}
    cfg = config(**fields)
    return [n["op"] for n in aics.grappler.optimize(g, ["out:0"], cfg.graph_options.rewrite_options)["node"]], cfg


def show_passes(network, switches, repeats=1 if FAST else 3):
    ops, cfg = optimized_ops(network, switches)
    baseline, _ = optimized_ops(network, {f: True for f in switches})
    off = [f for f, on in switches.items() if not on]
    with graph_out:
        graph_out.clear_output(wait=True)
        print(f"{network}, passes off: {', '.join(off) or 'none'}")
        print(f"  {'op':30s} {'this setting':>12s} {'all passes on':>14s}")
        for op in sorted((set(ops) | set(baseline)) - {"Const"}):
            print(f"  {op:30s} {ops.count(op):12d} {baseline.count(op):14d}")
        print(f"  {'nodes in all':30s} {len(ops):12d} {len(baseline):14d}")
    g, out, feed = _widget_graphs[network]
    with aics.Session(graph=g, config=cfg) as sess:
        t = median_time(lambda: sess.run(out, feed), repeats)
    with time_out:
        time_out.clear_output(wait=True)
        print(f"{t * 1e3:.2f} ms per forward pass (median of {repeats})")


def _on_toggle(_=None):
    show_passes(net_choice.value, {f: b.value for f, b in pass_boxes.items()})


for _b in list(pass_boxes.values()) + [net_choice]:
    _b.observe(_on_toggle, names="value")
display(widgets.HBox([widgets.VBox([net_choice] + list(pass_boxes.values())),
                      widgets.VBox([graph_out, time_out])]))
_on_toggle()

# %%
_ops_all, _ = optimized_ops("MobileNet-like", {f: True for f in pass_boxes})
_ops_none, _ = optimized_ops("MobileNet-like", {f: False for f in pass_boxes})
assert "_FusedConv2D" in _ops_all and "_FusedDepthwiseConv2dNative" in _ops_all
assert "FusedBatchNormV3" in _ops_none and "_FusedConv2D" not in _ops_none

# %% [markdown]
# ## 8. 5.11 的答案
#
# **为什么融合比不融合快。** 一个算子把结果写回内存、下一个算子再读出来，这段往返就是融合要省掉的：
#
# 1. **访存量减少**：逐元素算子的算术强度约 0.1 FLOP/byte，远低于屋顶拐点（本机的数值见第 1 节的输出），时间由带宽决定；
#    融合后中间结果留在缓存/寄存器里，只读一次输入、写一次输出。第 2 节的 5 算子链从 $40N$ 字节降到 $8N$ 字节，实测加速见上；
# 2. **调度开销减少**：每个节点一次内核调用、一次内存分配、一次执行器记账；融合后节点数减少（第 4 节打印的节点数）；
# 3. **临时内存减少**：中间张量不再分配，峰值内存与分配开销都下降（练习里就地完成偏置 + 激活）；
# 4. 在 GPU 上还要加上**内核启动开销** (kernel launch overhead)，每次几微秒，小算子多时占比更大——这是 TF 的 remapper
#    与 XLA 在 GPU 上收益更大的原因之一。
#
# **哪些网络加速比更大。** 融合只能省掉"卷积之外"那部分时间：偏置、激活、BN、残差加法各自对整个张量的一次读写，
# 以及每个节点的调度开销。所以加速比的上限由这部分在总时间中的占比决定（阿姆达尔定律 (Amdahl's law)）：
#
# * 计算密集、每层通道多的网络（VGG）：卷积占绝大部分时间，逐元素部分占比最小，加速比的上限接近 1；
# * 含批归一化的网络（ResNet）：推理时 BN 并进卷积的输出阶段，每层省去一次整张量读写；
# * 轻量网络（MobileNet 的深度可分离卷积、1x1 卷积）：每个卷积计算量小，BN 与 ReLU6 的访存占比最大，上限最高；
#   同理，特征图大到放不进缓存时（大批量、高分辨率）省下的访存是真正的内存带宽，特征图小到整个留在缓存里时几乎省不下什么。
#
# 第 4 节的表按这个占比（memory-bound share）给出预测的排名，按实测加速比给出本机这次运行的排名，两者都由代码打印。
#
# **融合什么时候反而更慢。** 第 4 节打印的 "fusion lost on" 与内核时间表给出本机的情况。融合不是免费的：
#
# 1. **融合内核本身可能比分开的几个内核慢。** aicslib 的 `_FusedConv2D` 把输出阶段交给卷积，按块在工作线程上执行
#    （`aicslib/accel/fused_output_stage.py`）；每次调用都要准备输出阶段、把块分给线程。特征图很小时（快速设置、
#    MobileNet 后几层的 1x1 卷积），中间结果本来就留在缓存里，融合省下的访存几乎为零，这份固定开销就超过了收益——
#    表里 "fused kernels slower" 的那些行就是这种情况。TF 的 remapper 也有同样的取舍：它只在有融合内核、
#    且布局与类型合适时改写；
# 2. **中间结果另有读者。** 如果 BiasAdd 的输出还被别的节点读，融合就得另存一份或重算卷积，反而更慢——
#    所以 remapper（以及第 6 节你写的 pass）此时拒绝改写；
# 3. **测量噪声。** 每次前向很短时（快速设置下只有毫秒量级，见第 4 节表中的时间），机器上的其他负载足以掩盖差别：
#    噪声带之内的加速比不算"快"也不算"慢"。
#
# **与公开数据对照。** TVM 的论文（Chen et al., *TVM*, OSDI 2018，图 4）报告在 GPU 上算子融合对 conv+BN+ReLU、
# 深度卷积+BN+ReLU 等算子带来约 1.2–2 倍的加速。MobileNet 论文（Howard et al. 2017，表 2）报告其 95% 的乘加
# (mult-adds) 在 1x1 卷积里——这是**计算量**的分布，本身并不说明融合收益大：1x1 卷积是稠密的矩阵乘，融合省不了它的计算；
# 融合能省的是其余部分（深度卷积、BN、ReLU6）的访存，它们的计算量占比小，但算术强度低，在**时间**里的占比
# 比在计算量里高得多——要测，正是第 4 节 memory-bound share 一列。TensorFlow 的 XLA 文档（tensorflow.org/xla 概述页）
# 报告 BERT 的 MLPerf 提交在 8 块 V100 上用 XLA 得到约 7 倍的性能提升（其中融合是主要来源之一，还包括其他编译优化）。
# TF 的 Grappler 文档（tensorflow.org/guide/graph_optimization）把 remapper 描述为"用融合的单体内核替换常见的子图模式"。
# 我们在 NumPy 上测得的加速比更小：NumPy 的每个算子本身已经是优化过的 C 循环。融合卷积的输出阶段（偏置或 BN，再加激活）
# 在 aicslib 里是一个 C 循环（`aicslib/accel/src/aics_output_stage.c`），趁每块输出还在缓存里一次读写完，与不融合的
# NumPy 步骤逐位相同；逐元素链的融合内核仍以 Python 调度 NumPy 小块，省下的是内存带宽，而不是调度开销。
# 3x3 卷积的融合收益取决于卷积本身有多快（阿姆达尔定律）：`benchmarks/bench_fusion.py` 测 28x28x64 的 Conv+Bias+ReLU，
# 卷积走 Winograd F(4x4, 3x3) 时，融合的偏置 + ReLU 直接在 Winograd 输出变换写出每个 tile 的像素时顺手完成
# （相当于 oneDNN 的 post-ops）。作为对照，同一台 2 核机器上 TensorFlow 2.21（oneDNN）对同一个图，remapper 开与关之比
# 只有 1.03–1.05 倍（`Session`，`RewriterConfig(remapping=OFF)`，中位数）。主内核越快，融合掉的那几次访存占比越大。

# %% [markdown]
# ## 小结
#
# * 屋顶线模型告诉我们：算术强度低的算子受带宽限制，融合通过减少中间结果的读写来提高有效算术强度；
# * `aicslib/grappler` 的 remapper（`_FusedConv2D`、`_FusedMatMul`、`_FusedDepthwiseConv2dNative`、BN 折叠）和逐元素融合
#   在不改变任何结果的前提下改写图；每个 pass 都能用 `RewriterConfig` 的 TF 字段单独关闭；
# * 逐元素与归一化算子在时间中占比高的网络（MobileNet 类、大特征图）获益的上限最高；张量小到留在缓存里、
#   或融合内核自身的固定开销更大时，融合会更慢——该不该融合要测，本章第 4 节的表就是这样的测量；
# * 图改写必须保持语义：中间结果另有读者或被取回时不能融合（第 6 节的实验）。
