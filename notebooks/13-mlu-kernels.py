# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13 为有片上存储的加速器写核函数：模拟的 MLU
#
# **前置章节 (prerequisites)**：[08 op-registration](08-op-registration.ipynb)、[09 registration-flow](09-registration-flow.ipynb)、[12 convolution-internals](12-convolution-internals.ipynb)
#
# CPU 上的核函数直接读写内存，缓存替它决定什么数据留在近处。课程里的 MLU 这样的加速器不同：
# 每个核心有一块很小、很快的片上存储 (NRAM)，计算指令只能读写 NRAM；大而慢的全局存储 (GDRAM) 里放着算子的输入输出，
# 数据要由核函数自己用 DMA 搬上搬下（BANG C 里是 `__nram__` 数组和 `__memcpy(..., GDRAM2NRAM)`）。
# 于是写核函数的核心问题变成：**怎样切块 (tiling)，让每个字节搬得尽量少、每次搬运尽量大**。
#
# `aicslib.mlu` 模拟这样一个核心：`core.nram(shape)` 在片上分配（超出预算就报错），`core.load` / `core.store` 是 DMA，
# `core.add` / `core.relu` / `core.matmul` 只接受 NRAM 上的操作数；每个操作按一个写明的代价模型 `mlu.COST` 计周期
# （DMA：固定启动开销加按字节计；向量与矩阵运算：启动开销加按元素 / 乘加计）。代价模型是本实验自己定的，
# 只为体现“搬数据比算更贵”，不对应哪一款具体芯片。下面先看预算与代价，再写两个核函数：逐元素加法与矩阵乘法。

# %%
import numpy as np
import matplotlib.pyplot as plt

import aicslib as aics
from aicslib import mlu
from workbook import grading, run_times

run_times.show("mlu-kernels")
print(f"NRAM per core: {mlu.NRAM_BYTES // 1024} KiB; cost model: {mlu.COST}")
_core = mlu.Core()
_buf = _core.nram((1024,))
_core.load(_buf, np.ones(1024, np.float32))
print(f"one DMA of 4 KiB: {_core.cycles:.0f} cycles; ", end="")
_core.relu(_buf, _buf)
print(f"plus one ReLU over 1024 elements: {_core.cycles:.0f} cycles in all")
try:
    _core.nram((mlu.NRAM_BYTES // 4,), name="too_big")
except mlu.NRAMOverflow as e:
    print("over the budget:", e)

# %% [markdown]
# ## 1. 逐元素加法 (3 分)
#
# 写 `my_mlu_add(core, x, y, out)`：`x`、`y`、`out` 是 GDRAM 里等长的一维 float32 数组，长度可以远大于 NRAM。
# 按块搬上来、相加、搬回去。评分看三件事：结果正确（包括长度不是块大小整数倍时的尾巴）、不超出 NRAM 预算、
# 周期数不超过参考实现的 1.2 倍（参考实现用预算允许的最大块：每次 DMA 的启动开销分摊到尽量多的字节上）。
# 只能用 `core` 的方法（`nram`、`scope`、`load`、`store`、`add` ...）计算，不能调用库里现成的核函数。

# %% nbgrader={"grade": false, "grade_id": "mlu_add", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_mlu_add(core, x, y, out):
    """out = x + y on the simulated core, chunk by chunk through NRAM."""
    ### BEGIN SOLUTION
    chunk = (core.nram_bytes - 256) // 8          # two float32 buffers fill the budget
    with core.scope():
        a, b = core.nram((chunk,)), core.nram((chunk,))
        for i in range(0, x.size, chunk):
            m = min(chunk, x.size - i)
            core.load(a[:m], x[i:i + m])
            core.load(b[:m], y[i:i + m])
            core.add(a[:m], a[:m], b[:m])
            core.store(out[i:i + m], a[:m])
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "mlu_add_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the sum, the budget (the core raises past it), and the cycles against the
# reference kernel on the same core model; only the core's own operations may compute.
_CORE_OPS = {"nram", "scope", "load", "store", "add", "mul", "relu", "matmul", "on_chip", "stats"}


def _run_on_core(kernel, *arrays, what):
    core = mlu.Core()
    try:
        grading.no_library_calls(kernel, core, *arrays, allowed=_CORE_OPS, what=what,
                                 how="with the core's operations (core.nram, core.load, core.add, ...)")
    except mlu.MLUError as e:
        raise grading.CheckFailed(f"{what}: the device refused it: {e}") from None
    return core


def _add_case(n, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    core = _run_on_core(my_mlu_add, x, y, out, what=f"my_mlu_add on {n} elements")
    grading.check_array(out, x + y, f"out after my_mlu_add on {n} elements",
                        hint="every chunk, the last (shorter) one included, must be stored back")
    ref = mlu.Core()
    mlu.reference_add(ref, x, y, np.empty_like(x))
    grading.check(core.cycles <= 1.2 * ref.cycles,
                  f"my_mlu_add on {n} elements took {core.cycles:.0f} cycles in {core.dma_transfers} DMA transfers; "
                  f"the reference takes {ref.cycles:.0f} in {ref.dma_transfers} (at most 1.2x allowed): each transfer "
                  f"costs {mlu.COST['dma_startup']} cycles before its first byte, so move bigger chunks")


with grading.exercise("mlu_add"):
    _add_case(1000, 0)
    _add_case(200_003, 1)
    ### BEGIN HIDDEN TESTS
    _add_case(1, 2)
    _add_case(65_536 * 3 + 17, 3)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 2. 矩阵乘法的切块 (6 分)
#
# 写 `my_mlu_matmul(core, a, b, c)`：`a` 是 M×K，`b` 是 K×N，结果写进 GDRAM 的 `c`（M×N，初值为 0）。
# `core.matmul(out, a_tile, b_tile, accumulate=True)` 在片上做 `out += a_tile @ b_tile`。
#
# 最先想到的切法 `mlu.naive_matmul`：32×32 的小块，每走一步 k 就把 C 块搬上来、加、再搬回去。它正确，但大部分周期花在 DMA 上。
# 好的切法让 C 块留在片上，直到整条 k 都加完才写回一次，并用预算允许的大块，让每个搬上来的字节参与尽量多的乘加。
# 评分：结果正确（M、K、N 不是块大小的整数倍也要对）、不超预算、周期数不超过 `naive_matmul` 的 35%；
# 所有乘加都要在片上算（用 NumPy 直接在 GDRAM 上乘不算数：核函数必须把 `a`、`b` 搬上来、把 `c` 写回去）。

# %% nbgrader={"grade": false, "grade_id": "mlu_matmul", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_mlu_matmul(core, a, b, c):
    """c = a @ b on the simulated core, tile by tile."""
    ### BEGIN SOLUTION
    bm = bn = bk = 128
    with core.scope():
        a_t, b_t, c_t = core.nram((bm, bk)), core.nram((bk, bn)), core.nram((bm, bn))
        for i in range(0, a.shape[0], bm):
            m = min(bm, a.shape[0] - i)
            for j in range(0, b.shape[1], bn):
                n = min(bn, b.shape[1] - j)
                for k0 in range(0, a.shape[1], bk):
                    k = min(bk, a.shape[1] - k0)
                    core.load(a_t[:m, :k], a[i:i + m, k0:k0 + k])
                    core.load(b_t[:k, :n], b[k0:k0 + k, j:j + n])
                    core.matmul(c_t[:m, :n], a_t[:m, :k], b_t[:k, :n], accumulate=k0 > 0)
                core.store(c[i:i + m, j:j + n], c_t[:m, :n])
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "mlu_matmul_test", "locked": true, "points": 6, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the product, the budget, the work done on chip (every input byte loaded and
# every output byte stored at least once, every multiply-add on the core), and the cycles against the
# naive tiling on the same core model.
def _matmul_case(m, k, n, seed, against_naive=True):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, k)).astype(np.float32), rng.normal(size=(k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    what = f"my_mlu_matmul with a {m}x{k}, b {k}x{n}"
    core = _run_on_core(my_mlu_matmul, a, b, c, what=what)
    grading.check_array(c, (a.astype(np.float64) @ b).astype(np.float32), f"c after {what}",
                        rtol=1e-4, atol=1e-4 * np.sqrt(k),
                        hint="with k tiles, the first product sets the c tile and the later ones add to it "
                             "(accumulate=True); the last, shorter tiles of m, k and n count too")
    least = a.nbytes + b.nbytes + c.nbytes
    grading.check(core.dma_bytes >= least,
                  f"{what}: only {core.dma_bytes} bytes moved by DMA, less than a, b and c themselves ({least}): "
                  f"the kernel must compute on chip, not on GDRAM")
    macs = m * k * n
    grading.check(core.compute_cycles >= macs / mlu.COST["macs_per_cycle"],
                  f"{what}: the core's matmul did fewer than the {macs} multiply-adds the product needs")
    if against_naive:
        naive = mlu.Core()
        mlu.naive_matmul(naive, a, b, np.zeros_like(c))
        grading.check(core.cycles <= 0.35 * naive.cycles,
                      f"{what}: {core.cycles:.0f} cycles ({core.dma_bytes} bytes in {core.dma_transfers} DMA "
                      f"transfers); the naive tiling takes {naive.cycles:.0f} ({naive.dma_bytes} bytes): at most 35% "
                      f"of that is required. Keep the c tile on chip across k, and use bigger tiles")
    return core


with grading.exercise("mlu_matmul"):
    _matmul_case(64, 64, 64, 0)
    _matmul_case(129, 257, 65, 1)
    ### BEGIN HIDDEN TESTS
    _matmul_case(1, 1, 1, 2, against_naive=False)
    _matmul_case(300, 200, 100, 3)
    _matmul_case(256, 512, 256, 4)
    _matmul_case(7, 1000, 3, 5, against_naive=False)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 3. 注册到 MLU 设备上，跑一个网络层
#
# `mlu.matmul_kernel(fn)` 把 `fn(core, a, b, c)` 包成 MatMul 的核函数；`aics.experimental.use_kernel` 在一个块里把它放到
# MLU 设备上、所有已注册的 MatMul 核函数之前。于是 `with aics.device("/device:MLU:0")` 下的 `aics.matmul` 就在模拟核心上
# 跑你的核函数——eager 与 Session 走的是同一条路。下面比较三种核函数在一个 256×512×256 的全连接层上的周期与搬运量
# （你的核函数还没通过测试时用参考实现，并说明）。

# %%
matmul_fn = grading.use("mlu_matmul", my_mlu_matmul, mlu.reference_matmul, what="aicslib.mlu.reference_matmul")
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 512)).astype(np.float32)
w = (rng.normal(size=(512, 256)) / np.sqrt(512)).astype(np.float32)
results = {}
for name, fn in [("naive tiling", mlu.naive_matmul), ("yours" if matmul_fn is my_mlu_matmul else "reference (yours pending)", matmul_fn),
                 ("library reference", mlu.reference_matmul)]:
    runs = []
    with aics.experimental.use_kernel("MatMul", mlu.matmul_kernel(fn, record=runs), device="MLU"):
        with aics.device("/device:MLU:0"):
            y = aics.nn.relu(aics.matmul(x, w)).numpy()
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-3)
    results[name] = runs[-1]
    print(f"{name:28s} {runs[-1]['cycles']:>10,d} cycles  {runs[-1]['dma_bytes']:>10,d} DMA bytes  "
          f"{runs[-1]['dma_transfers']:>6,d} transfers  peak NRAM {runs[-1]['peak_nram_bytes'] // 1024} KiB")

fig, ax = plt.subplots(1, 2, figsize=(9, 2.6))
names = list(results)
ax[0].barh(names, [r["cycles"] - r["compute_cycles"] for r in results.values()], label="DMA", color="tab:orange")
ax[0].barh(names, [r["compute_cycles"] for r in results.values()], left=[r["cycles"] - r["compute_cycles"] for r in results.values()],
           label="compute (matmul, vector ops)", color="tab:blue")
ax[0].set_xlabel("simulated cycles"); ax[0].legend(fontsize=8); ax[0].set_title("relu(x @ w), 256x512x256 on the MLU")
ax[1].barh(names, [r["dma_bytes"] / 2**20 for r in results.values()], color="tab:gray")
ax[1].set_xlabel("bytes moved by DMA (MiB)"); ax[1].set_yticks([])
plt.tight_layout()
plt.show()

