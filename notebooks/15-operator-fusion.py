# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 15 算子融合 (operator fusion)：为什么融合更快，哪些网络受益最多
#
# **前置章节 (prerequisites)**：[12 convolution-internals](12-convolution-internals.ipynb)、[14 graph-pruning-vlog](14-graph-pruning-vlog.ipynb)
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
# 6. 写出 5.11 的答案：哪些网络加速最多由本机的测量排出，并说明融合什么时候反而更慢、为什么。
#
# **运行时间**见下面第一个单元格的输出（`AICS_FAST=1` 时尺寸更小、重复更少，代码路径相同）。
# 计时受机器负载影响，请看比值与趋势，而不是某一次的绝对值。
# **练习**（自动评分，共 3 分）在第 5 节；没做完，后面的单元格照样能运行（改用参考实现，并说明）。
# 自己写一个 remapper 式的图改写 (graph rewrite) pass 的实验在后面的 [16 graph-rewrite](16-graph-rewrite.ipynb) 一章，
# 它改写的正是本章第 4 节的 VGG 风格网络。

# %%
import inspect
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
from workbook import grading, networks, run_times

run_times.show("operator-fusion")
FAST = flags.FAST
REPEATS = 3 if FAST else 9
RC = aics.RewriterConfig
rng = np.random.default_rng(0)


config = networks.rewriter_config          # config(remapping=RC.OFF, ...): a ConfigProto with these fields
ALL_OFF = networks.ALL_OFF                  # every grappler pass off: the graph runs as built


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
# ### 练习：用屋顶线估算一条逐元素链（2 分）
#
# 写 `my_chain_estimate(n, n_ops, fused, peak_gflops, bw_gbs)`：$n$ 个 float32 元素经过 `n_ops` 个逐元素算子
# （每个算子每个元素做 1 次浮点运算；常量是标量，不计搬运），返回 `(bytes_moved, seconds)`：
# 不融合时每个算子读一遍输入、写一遍输出；融合时整条链只读 $x$、写 $y$ 一次。
# `seconds` 是屋顶线模型给的下界：运算受算力所限的时间与搬运受带宽所限的时间，两者中较长的那个
# （`peak_gflops` 以 $10^9$ FLOP/s、`bw_gbs` 以 $10^9$ 字节/秒计）。

# %% nbgrader={"grade": false, "grade_id": "chain_estimate", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_chain_estimate(n, n_ops, fused, peak_gflops, bw_gbs):
    """(bytes moved, roofline time in seconds) of n_ops element-wise ops over n float32 elements."""
    ### BEGIN SOLUTION
    bytes_moved = 8 * n if fused else 8 * n * n_ops
    flops = n * n_ops
    return bytes_moved, max(flops / (peak_gflops * 1e9), bytes_moved / (bw_gbs * 1e9))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "chain_estimate_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the bytes and the roofline bound, against the model written out term by term.
def _chain_case(n, n_ops, fused, peak, bw):
    got = grading.no_library_calls(my_chain_estimate, n, n_ops, fused, peak, bw, what="my_chain_estimate",
                                   how="from the model's terms")
    call = f"my_chain_estimate(n={n}, n_ops={n_ops}, fused={fused}, peak_gflops={peak}, bw_gbs={bw})"
    grading.check(isinstance(got, tuple) and len(got) == 2, f"{call} should return (bytes_moved, seconds), got {got!r}")
    reads_and_writes = 4 * n + 4 * n
    want_bytes = reads_and_writes * (1 if fused else n_ops)
    grading.check(got[0] == want_bytes, f"{call}: bytes_moved {got[0]!r}, expected {want_bytes} "
                                        f"({'x read and y written once' if fused else f'{n_ops} ops, each reading and writing 4n bytes'})")
    compute_s, memory_s = n * n_ops / (peak * 1e9), want_bytes / (bw * 1e9)
    want_s = max(compute_s, memory_s)
    grading.check(abs(got[1] - want_s) <= 1e-9 * want_s,
                  f"{call}: {got[1]!r} s, expected {want_s:.6g} s: compute alone takes {compute_s:.6g} s, "
                  f"moving the bytes {memory_s:.6g} s, and the roofline bound is the longer of the two")


with grading.exercise("chain_estimate"):
    _chain_case(1 << 20, 5, False, 100.0, 20.0)
    _chain_case(1 << 20, 5, True, 100.0, 20.0)
    ### BEGIN HIDDEN TESTS
    _chain_case(1000, 3, True, 0.001, 50.0)          # compute-bound: a very slow core
    _chain_case(12345, 1, False, 50.0, 10.0)
    _chain_case(1 << 22, 8, True, 2.0, 100.0)
    ### END HIDDEN TESTS

# %%
from workbook.references import fusion as fusion_reference

estimate = grading.use("chain_estimate", my_chain_estimate, fusion_reference.chain_estimate,
                       what="workbook.references.fusion.chain_estimate")
for fused_flag, measured in ((False, t_off), (True, t_on)):
    moved, bound = estimate(N_ELEM, 5, fused_flag, PEAK, BW)
    print(f"{'fused  ' if fused_flag else 'unfused'}: {moved / 2**20:6.0f} MiB moved, roofline bound {bound * 1e3:6.2f} ms, "
          f"measured {measured * 1e3:6.2f} ms ({measured / bound:.1f}x the bound)")

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
# 三个小网络（代码在 `workbook/networks.py`，下面的单元格把它打印出来；结构是各自家族的缩影）：
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
# The three networks live in workbook/networks.py (the graph-rewrite chapter rewrites the VGG-like one);
# here is their code, then this chapter's batch and image size.
for _net in networks.NETWORKS.values():
    print(inspect.getsource(_net))
NETWORKS = networks.NETWORKS
BATCH, HW = (1, 32) if FAST else (8, 64)


def build_network(name):
    """(graph, out, feed) for one of NETWORKS; the weights come from this chapter's rng."""
    return networks.build_network(name, BATCH, HW, rng)


NET_REPEATS = 9 if FAST else 15
REMAP_ONLY = networks.REMAP_ONLY             # only the remapper on (TF's RewriterConfig fields)
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
# ## 6. 交互：逐个开关优化 pass，看图与时间
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
# ## 7. 5.11 的答案
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
#    所以 remapper（以及 [16 graph-rewrite](16-graph-rewrite.ipynb) 一章里你写的 pass）此时拒绝改写；
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
# * 图改写必须保持语义：中间结果另有读者或被取回时不能融合（[16 graph-rewrite](16-graph-rewrite.ipynb) 一章的实验）。
