# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 卷积的内部实现：直接卷积、im2col + GEMM、Winograd、反向传播
#
# **对应习题**：5.7（TensorFlow 中卷积算子的 CPU 实现：`Conv2DOp::Compute` 如何检查参数、计算输出尺寸、选择算法；
# 卷积的反向传播 `Conv2DBackpropInput` / `Conv2DBackpropFilter` 如何化为矩阵乘）。
#
# **学习目标**
#
# 1. 写出卷积的定义（七重循环），数清它的乘加次数 (FLOPs)；
# 2. 理解 im2col (image to column)：把每个输出像素的感受野 (receptive field) 展开成矩阵的一行，卷积就变成**一次** GEMM（通用矩阵乘）；
# 3. 理解 Winograd F(2x2, 3x3)：三个变换矩阵 $B^T, G, A^T$，为什么乘法次数从 36 降到 16；
# 4. 把反向传播写成 GEMM：输入梯度 = GEMM + col2im，卷积核梯度 = im2col + GEMM，并与自动求导 (autograd) 对照；
# 5. 比较 NHWC（TensorFlow）与 NCHW（Caffe）两种数据布局 (data layout) 的内存排列与速度；
# 6. 对照 TensorFlow 的 `Conv2DOp::Compute` 与 `aicslib` 的对应代码；
# 7. 练习：自己算出输出尺寸和 SAME/VALID/显式填充 (padding)，实现 im2col，并通过锁定的测试。
#
# **运行时间**：完整设置下在笔记本电脑上全部运行约 15 秒（第 6 节的算法计时最长，有进度条）。
# **练习**（自动评分，3 分）在第 8 节；没做完也能一直运行到底（练习后面用到 im2col 的单元格在练习通过之前用参考实现）。
#
# 代码分两层，和 TensorFlow 一样“算子定义、kernel、加速库”各归各处：
# * `aicslib/kernels/` 是可读的参考实现 (reference kernel)，按 TensorFlow 的分法每种算法一个函数：前向在 `conv_ops.py`，
#   两个反向在 `conv_grad_input_ops.py` 和 `conv_grad_filter_ops.py`，共用的几何与 im2col 工具在 `conv_2d.py`；
# * `aicslib/accel/` 是加速层 (speed layer)：C 写的 SGEMM 与 Winograd 变换（`accel/src/`，安装时编译）、分块与多线程
#   （`work_sharder.py`）、选算法的规则（`conv_policy.py`）。它为同一个 `Conv2D` 算子注册了优先级 (priority) 更高的 kernel，
#   所以默认跑它；环境变量 `AICS_ACCEL=0` 关掉整个加速层，换回参考 kernel，`AICS_CONV_ALGO` 可以强制指定算法。

# %%
import inspect
import os
import time

import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib.framework.kernel_shape_util import get_windowed_output_size
from aicslib.kernels import conv_ops as co
from aicslib.kernels import conv_2d as c2d, conv_grad_filter_ops as cgf, conv_grad_input_ops as cgi
from aicslib.kernels import conv_layout as cl
from aicslib.accel import c_sgemm, conv_policy, work_sharder
from workbook import grading

FAST = flags.FAST   # AICS_FAST=1 (CI): smaller layers and fewer repeats, same code path
rng = np.random.default_rng(0)
aics.random.set_seed(0)
print("AICS_FAST:", FAST, "| threads used by the conv kernels:", work_sharder.NUM_THREADS)

# %% [markdown]
# ## 1. 直接卷积 (direct convolution)：定义即算法
#
# TensorFlow 的 `Conv2D` 约定输入是 NHWC（批 batch、高、宽、通道），卷积核是 HWIO（核高、核宽、输入通道、输出通道）。
# 输出像素 $(n, o_h, o_w, k)$ 是输入感受野与第 $k$ 个卷积核的内积（严格说是互相关 (cross-correlation)，不翻转卷积核）：
#
# $$y[n,o_h,o_w,k]=\sum_{i<k_h}\sum_{j<k_w}\sum_{c<C} x_p[n,\,o_h s_h+i d_h,\,o_w s_w+j d_w,\,c]\; w[i,j,c,k]$$
#
# 其中 $x_p$ 是补零后的输入，$s$ 是步长 (stride)，$d$ 是空洞 (dilation)。输出尺寸按 TensorFlow 的规则：
#
# * `SAME`：$H_o=\lceil H/s\rceil$，总填充 $\max((H_o-1)s+(k-1)d+1-H,\,0)$，上方 (top) 取一半向下取整，**多出的一个像素补在下方/右方**；
# * `VALID`：$H_o=\lceil (H-(k-1)d)/s\rceil$，不填充。
#
# `conv2d_direct` 就是这个公式的循环版本（批和通道两重求和用 `@` 向量化，像素和抽头 (tap) 的循环是显式的）：

# %%
print(inspect.getsource(co.conv2d_direct))
for H, s, pad in [(6, 2, "SAME"), (5, 2, "SAME"), (7, 2, "VALID")]:
    print(f"H={H} k=3 stride={s} {pad:5s} -> (out, pad_top, pad_bottom) =", get_windowed_output_size(H, 3, s, 1, pad))
assert get_windowed_output_size(6, 3, 2, 1, "SAME") == (3, 0, 1)     # the odd padding pixel goes to the bottom

# %%
x = rng.standard_normal((2, 7, 7, 3)).astype(np.float32)
w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
y_direct = co.conv2d_direct(x, w, (1, 1), "SAME")
y_aics = aics.nn.conv2d(x, w, strides=1, padding="SAME").numpy()
print("output shape:", y_direct.shape, "| max |direct - aics.nn.conv2d| =", np.abs(y_direct - y_aics).max())
assert np.allclose(y_direct, y_aics, rtol=1e-4, atol=1e-4)

flops = co.conv2d_flops(x.shape, w.shape, (1, 1), "SAME")
print(f"FLOPs = 2*N*Ho*Wo*K*C*kh*kw = 2*2*7*7*4*3*3*3 = {flops}")
assert flops == 2 * 2 * 7 * 7 * 4 * 3 * 3 * 3

# %% [markdown]
# ## 2. im2col：把卷积变成一次矩阵乘
#
# 对每个输出像素，把它的感受野（$k_h\times k_w\times C$ 个数）摊平成一行，所有输出像素的行堆成矩阵
# $\mathrm{cols}\in\mathbb{R}^{(N H_o W_o)\times(k_h k_w C)}$；卷积核 HWIO 直接 reshape 成 $W\in\mathbb{R}^{(k_h k_w C)\times K}$。于是
#
# $$Y_{(N H_o W_o)\times K}=\mathrm{cols}\cdot W$$
#
# 而且在 NHWC 布局下，这个乘积的结果**就是** NHWC 的输出，不需要再转置。`im2col_view` 用
# `numpy.lib.stride_tricks.as_strided` 只改步长 (strides) 就得到这个矩阵的视图 (view)，不复制数据、不写像素循环：

# %%
print(inspect.getsource(c2d.im2col_view))
xp = c2d.pad_nhwc(x, 1, 1, 1, 1)
cols = c2d.im2col_view(xp, 3, 3, 7, 7)
print("im2col view shape (N, Ho, Wo, kh, kw, C):", cols.shape, "| shares memory with the input:",
      np.shares_memory(cols, xp))
A = cols.reshape(-1, 3 * 3 * 3)          # here the data are copied: (N*Ho*Wo, kh*kw*C)
print("im2col matrix:", A.shape, " filter matrix:", w.reshape(-1, 4).shape)
y_gemm = (A @ w.reshape(-1, 4)).reshape(2, 7, 7, 4)
assert np.allclose(y_gemm, y_direct, rtol=1e-4, atol=1e-4)
print("FLOPs of the GEMM:", 2 * A.shape[0] * A.shape[1] * 4, "= the direct convolution's", flops)


# %% [markdown]
# **动手看一看**：拖动滑块选一个输出像素，左图高亮它在（补零后的）输入中的感受野，右图高亮它在 im2col 矩阵中对应的那一行。
# 改变步长 (stride) 后感受野跳着走，im2col 矩阵的行数随之变少。

# %%
def show_receptive_field(oh=3, ow=2, stride=1):
    img = np.random.default_rng(5).integers(0, 9, (1, 6, 6, 1)).astype(np.float32)   # the same image every call
    Ho, pt, pb = get_windowed_output_size(6, 3, stride, 1, "SAME")
    Wo, pl, pr = get_windowed_output_size(6, 3, stride, 1, "SAME")
    oh, ow = min(oh, Ho - 1), min(ow, Wo - 1)
    xp1 = c2d.pad_nhwc(img, pt, pb, pl, pr)
    A1 = c2d.im2col_view(xp1, 3, 3, Ho, Wo, (stride, stride)).reshape(Ho * Wo, 9)
    row = oh * Wo + ow
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [1, 1.4]})
    a0.imshow(xp1[0, :, :, 0], cmap="Greys", vmin=-4, vmax=12)
    a0.add_patch(plt.Rectangle((ow * stride - 0.5, oh * stride - 0.5), 3, 3, fill=False, ec="red", lw=3))
    a0.set_title(f"padded input, output pixel ({oh}, {ow})")
    a1.imshow(A1, cmap="Greys", vmin=-4, vmax=12, aspect="auto")
    a1.add_patch(plt.Rectangle((-0.5, row - 0.5), 9, 1, fill=False, ec="red", lw=3))
    a1.set_title(f"im2col matrix {A1.shape}: row {row}")
    plt.show()
    assert np.array_equal(A1[row].reshape(3, 3), xp1[0, oh * stride:oh * stride + 3, ow * stride:ow * stride + 3, 0])
    return A1


widgets.interact(show_receptive_field, oh=(0, 5), ow=(0, 5), stride=[1, 2]);

# %%
print(inspect.getsource(co.conv2d_im2col))
y_im2col = co.conv2d_im2col(x, w, (1, 1), "SAME")
assert np.allclose(y_im2col, y_direct, rtol=1e-4, atol=1e-4)

# %% [markdown]
# 实际的 `conv2d_im2col` 还做了两件工程上的事：把 im2col 矩阵**按行分块**（每块几 MiB，留在缓存里，
# $[A_1;A_2]W=[A_1W;A_2W]$ 不改变结果），并让两个线程各算一块（NumPy 的逐元素操作只用一个核，GEMM 用多个核）。
# 1x1、步长 1 的卷积根本不需要 im2col：NHWC 的输入本身就是 $(N H W)\times C$ 的矩阵。

# %% [markdown]
# ## 3. Winograd F(2x2, 3x3)：用加法换乘法
#
# 先看一维的 F(2, 3)：用 4 个输入 $d_0..d_3$ 和 3 个权重 $g_0..g_2$ 算 2 个输出
# $y_0=d_0g_0+d_1g_1+d_2g_2,\ y_1=d_1g_0+d_2g_1+d_3g_2$，直接算要 6 次乘法。Winograd 的算法是
#
# $$y=A^T\big[(G g)\odot(B^T d)\big]$$
#
# 其中 $Gg$ 只和卷积核有关（可以预先算好），$B^T d$ 和 $A^T(\cdot)$ 只含 $0,\pm1$（只有加减），中间的逐元素乘只有 **4 次**。

# %%
print("B^T =\n", co.WINOGRAD_BT, "\nG =\n", co.WINOGRAD_G, "\nA^T =\n", co.WINOGRAD_AT)
d = np.array([1.0, 2.0, 3.0, 4.0])
g = np.array([0.5, -1.0, 2.0])
m = (co.WINOGRAD_G @ g) * (co.WINOGRAD_BT @ d)       # the only 4 multiplications
y_wino = co.WINOGRAD_AT @ m
y_def = np.array([d[0:3] @ g, d[1:4] @ g])
print("Gg =", co.WINOGRAD_G @ g, " B^T d =", co.WINOGRAD_BT @ d, " -> y =", y_wino, " (definition:", y_def, ")")
assert np.allclose(y_wino, y_def)

# %% [markdown]
# 二维版本把一维算法嵌套使用：$Y=A^T\big[(G g G^T)\odot(B^T d B)\big]A$，对 4x4 的输入块 (tile) 算出 2x2 的输出块。
# 每个输出块的乘法从 $2\cdot2\cdot3\cdot3=36$ 次降到 $4\cdot4=16$ 次，是 2.25 倍。对 $C$ 个输入通道求和以后，
# 16 个位置上的逐元素乘积各自变成一个 GEMM：$M_{ab}=V_{ab}\,U_{ab}$，$V_{ab}\in\mathbb{R}^{\text{tiles}\times C}$，$U_{ab}\in\mathbb{R}^{C\times K}$。
# 代价是变换：输入变换、输出变换都要读写整块数据，所以通道数太少时不划算（`WINOGRAD_MIN_CHANNELS`）。

# %%
mults_direct, mults_wino = 2 * 2 * 3 * 3, 4 * 4
print(f"multiplies per 2x2 output tile and channel pair: direct {mults_direct}, Winograd {mults_wino} "
      f"({mults_direct / mults_wino:.2f}x fewer)")
x16 = rng.standard_normal((2, 9, 9, 16)).astype(np.float32)
w16 = rng.standard_normal((3, 3, 16, 16)).astype(np.float32)
ref16 = co.conv2d_direct(x16, w16, (1, 1), "SAME")
yw = co.conv2d_winograd(x16, w16, (1, 1), "SAME")      # 9x9 output: padded to 10x10 tiles, then cropped
rel = np.abs(yw - ref16).max() / np.abs(ref16).max()
print("Winograd vs direct, max relative error:", rel)
assert rel < 1e-4

# %% [markdown]
# ## 4. 反向传播也是 GEMM
#
# 设 $Y=\mathrm{cols}(X)\,W$。对损失 $L$ 求导：
#
# * **卷积核梯度** `Conv2DBackpropFilter`：$\partial L/\partial W=\mathrm{cols}(X)^T\,\partial L/\partial Y$ —— 先 im2col，再一次 GEMM；
# * **输入梯度** `Conv2DBackpropInput`：$\partial L/\partial\,\mathrm{cols}=\partial L/\partial Y\;W^T$ —— 一次 GEMM，再用 col2im
#   把每一行“加回”它来自的那些输入像素（感受野重叠，所以是累加 scatter-add，按 $k_h k_w$ 个抽头做，没有像素循环）。
#
# 这正是 TensorFlow CPU 路径的做法：`conv_grad_input_ops.cc` 调 `Eigen::SpatialConvolutionBackwardInput`，
# `conv_grad_filter_ops.cc` 调 `SpatialConvolutionBackwardKernel`，两者都归结为张量缩并 (tensor contraction)，最后是 GEMM。
# 步长为 1 时，输入梯度本身又是一次卷积（卷积核旋转 180° 并交换输入、输出通道），所以也能用 Winograd；
# 卷积核梯度也能：前向的每一步对 $W$ 都是线性的，把 Winograd 反过来走，$\partial L/\partial U[p]=V[p]^T\,(A\,\partial Y A^T)[p]$，
# 再乘 $G^T$ 变回 3x3（`conv2d_backprop_filter_winograd`，F(2x2) 或 F(4x4)）。

# %%
print(inspect.getsource(cgi.conv2d_backprop_input_gemm).split(chr(34) * 3)[-1][:1400])

# %%
xs = rng.standard_normal((2, 8, 8, 3))
ws = rng.standard_normal((3, 3, 3, 5))
dy = rng.standard_normal((2, 4, 4, 5))
xt, wt = aics.constant(xs), aics.constant(ws)
with aics.GradientTape() as tape:
    tape.watch([xt, wt])
    loss = aics.reduce_sum(aics.nn.conv2d(xt, wt, strides=2, padding="SAME") * dy)
gx, gw = tape.gradient(loss, [xt, wt])
dx_gemm = cgi.conv2d_backprop_input_gemm(dy, ws, xs.shape, (2, 2), "SAME")
dw_gemm = cgf.conv2d_backprop_filter_gemm(xs, dy, ws.shape, (2, 2), "SAME")
print("autograd vs GEMM+col2im (input):  ", np.abs(gx.numpy() - dx_gemm).max())
print("autograd vs im2col+GEMM (filter):", np.abs(gw.numpy() - dw_gemm).max())
assert np.allclose(gx.numpy(), dx_gemm) and np.allclose(gw.numpy(), dw_gemm)
# the registered gradient of Conv2D is exactly these two ops:
print(inspect.getsource(aics.gradient_registry.function("Conv2D")))
theoretical, numerical = aics.test.compute_gradient(
    lambda a, b: aics.nn.conv2d(a, b, 2, "SAME"), [xs[:1, :5, :5], ws[:, :, :, :2]])
assert aics.test.max_error(theoretical, numerical) < 1e-6

# %% [markdown]
# ## 5. NHWC 与 NCHW、HWIO 与 OIHW
#
# | | TensorFlow | Caffe / PyTorch |
# |:--:|:--:|:--:|
# | 数据 (Tensor) | NHWC | NCHW |
# | 卷积核 (Weight) | HWIO | OIHW |
#
# 下图画出一个 $1\times2\times2\times3$ 张量（3 个通道用三种颜色）在内存里的排列：NHWC 把一个像素的各通道放在一起，
# NCHW 把一个通道的整张图放在一起。

# %%
t = np.arange(12).reshape(1, 2, 2, 3)                   # NHWC, value = position in memory
colors = np.array(["tab:red", "tab:green", "tab:blue"])
fig, axes = plt.subplots(2, 1, figsize=(8, 2.6))
for ax, (name, arr, chan) in zip(axes, [("NHWC", t.reshape(-1), np.tile([0, 1, 2], 4)),
                                        ("NCHW", cl.nhwc_to_nchw(t).reshape(-1), np.repeat([0, 1, 2], 4))]):
    for i, (v, c) in enumerate(zip(arr, chan)):
        ax.add_patch(plt.Rectangle((i, 0), 1, 1, color=colors[c], alpha=0.6))
        ax.text(i + 0.5, 0.5, f"c{c}\n{v}", ha="center", va="center", fontsize=8)
    ax.set_xlim(0, 12); ax.set_ylim(0, 1); ax.axis("off"); ax.set_title(f"{name}: memory order", loc="left")
plt.tight_layout(); plt.show()
assert cl.nhwc_to_nchw(t)[0, 2, 1, 0] == t[0, 1, 0, 2]


# %% [markdown]
# 两种布局下 im2col 的方向也不同：NHWC 里每个输出像素对应 im2col 矩阵的一**行**，结果就是 NHWC 输出；
# Caffe 的 NCHW 做法是每张图一个 $(C k_h k_w)\times(H_o W_o)$ 的矩阵，计算 $W_{K\times Ck_hk_w}\cdot\mathrm{cols}$，结果就是这张图的 NCHW 输出。
# 下面实测两种做法（结果必须一致）：

# %%
def best_time(fn, repeats):
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter(); fn(); best = min(best, time.perf_counter() - t0)
    return best

N_L, H_L, C_L = (2, 28, 32) if FAST else (8, 56, 64)
xl = rng.standard_normal((N_L, H_L, H_L, C_L)).astype(np.float32)
wl = (rng.standard_normal((3, 3, C_L, C_L)) / 20).astype(np.float32)
x_nchw, w_oihw = cl.nhwc_to_nchw(xl), cl.hwio_to_oihw(wl)
y_nhwc = co.conv2d_im2col(xl, wl, (1, 1), "SAME")
y_nchw = co.conv2d_im2col_nchw(x_nchw, w_oihw, (1, 1), "SAME")
assert np.allclose(cl.nchw_to_nhwc(y_nchw), y_nhwc, rtol=1e-4, atol=1e-4)
reps = 2 if FAST else 5
t_nhwc = best_time(lambda: co.conv2d_im2col(xl, wl, (1, 1), "SAME"), reps)
t_nchw = best_time(lambda: co.conv2d_im2col_nchw(x_nchw, w_oihw, (1, 1), "SAME"), reps)
t_conv = best_time(lambda: co.conv2d_nchw(x_nchw, w_oihw, (1, 1), "SAME", algorithm="im2col"), reps)
print(f"NHWC im2col (blocked, threaded):          {t_nhwc * 1e3:7.2f} ms")
print(f"NCHW im2col, Caffe style (one image/GEMM): {t_nchw * 1e3:7.2f} ms")
print(f"NCHW via transposes around the NHWC kernel: {t_conv * 1e3:7.2f} ms")

# %% [markdown]
# ## 6. 每种算法实测多快
#
# 对几个 ResNet 式的层计时，GFLOP/s 一律按直接卷积的 FLOPs 计算（所以 Winograd 可以“超过”GEMM 的峰值）。
# 完整的表格（包括反向传播、和 PyTorch CPU 的对比）由 `python benchmarks/bench_conv.py` 打印；这里 CI 用小尺寸。

# %%
LAYERS = ([("28x28x32", (2, 28, 28, 32), 32), ("14x14x64", (2, 14, 14, 64), 64)] if FAST else
          [("56x56x64", (8, 56, 56, 64), 64), ("28x28x128", (8, 28, 28, 128), 128), ("14x14x256", (8, 14, 14, 256), 256)])
ALGOS = ["im2col", "winograd"]
results = {}
for name, shape, K in tqdm(LAYERS, desc="layers"):
    xb = rng.standard_normal(shape).astype(np.float32)
    wb = (rng.standard_normal((3, 3, shape[3], K)) / 30).astype(np.float32)
    fl = co.conv2d_flops(xb.shape, wb.shape, (1, 1), "SAME")
    for algo in ALGOS:
        t = best_time(lambda: co.conv2d(xb, wb, (1, 1), "SAME", algorithm=algo), 2 if FAST else 5)
        results[(name, algo)] = fl / t / 1e9
    small = xb[:1, :8, :8, :8], wb[:, :, :8, :8]        # the loop version only on a tiny slice
    fl_s = co.conv2d_flops(small[0].shape, small[1].shape, (1, 1), "SAME")
    results[(name, "direct")] = fl_s / best_time(lambda: co.conv2d_direct(*small, (1, 1), "SAME"), 1) / 1e9

fig, ax = plt.subplots(figsize=(8, 3.5))
names = [n for n, _, _ in LAYERS]
for i, algo in enumerate(["direct"] + ALGOS):
    ax.bar(np.arange(len(names)) + 0.27 * (i - 1), [results[(n, algo)] for n in names], 0.27, label=algo)
ax.set_xticks(range(len(names)), names); ax.set_ylabel("GFLOP/s (direct-conv FLOPs)"); ax.set_yscale("log")
ax.legend(); ax.set_title("3x3 stride-1 convolution, forward"); plt.show()
for n in names:
    print(n, {a: round(results[(n, a)], 1) for a in ["direct"] + ALGOS})
# (timings on a shared machine are noisy; only the loop version being slowest is asserted)
assert all(results[(n, "im2col")] > results[(n, "direct")] for n in names)

# %% [markdown]
# **GEMM 本身从哪来？** im2col 和 Winograd 最后都落到 GEMM 上，所以卷积有多快，主要看 GEMM 有多快。
# NumPy 的 `matmul` 调用 OpenBLAS，它在加载时按 CPU 型号挑选汇编 kernel；环境变量 `OPENBLAS_CORETYPE`
# 可以把它固定成某一代 CPU 的 kernel（课程机器上是 `Haswell`：256 位向量，而 CPU 有 512 位的 FMA 单元，只用到一半峰值）。
# aicslib 的加速层因此用自己的 C SGEMM（`aicslib/accel/src/aics_sgemm_packed.c`，`pip install` 时按 CPU 架构的
# 基线指令集编译，另带 AVX2、AVX-512 两个版本，运行时按本机 CPU 选用；各版本的结果逐位相同）：和 BLIS、GotoBLAS 一样，
# 把 C 的一个小块一直放在寄存器里 (micro-kernel)，每一步读一行 B、广播一列 A、做一串向量乘加；A、B 先“打包”(packing)
# 成连续的窄条，让 micro-kernel 顺序读、留在 L1/L2 缓存里。环境变量 `AICS_GEMM=blas` 换回 NumPy 的 BLAS。
# 下面在一个卷积的 GEMM 形状上比较单线程的速度（完整的表由 `python benchmarks/bench_gemm.py` 打印）：

# %%
gemm_lib = c_sgemm.library()
if gemm_lib is not None:
    print("C SGEMM register tile (MR x NR) of this CPU's micro-kernel:", c_sgemm.micro_tile())
m_, k_, n_ = (1568, 576, 64) if FAST else (6272, 1152, 128)     # 28x28x128 3x3 forward at batch 8
a_g = rng.standard_normal((m_, k_)).astype(np.float32)
b_g = rng.standard_normal((k_, n_)).astype(np.float32)
out_g = np.empty((m_, n_), np.float32)


def blas_one_thread():
    with work_sharder.SingleThreadedBlas():
        np.matmul(a_g, b_g, out=out_g)


gemm_rates = {"NumPy BLAS, 1 thread": 2 * m_ * k_ * n_ / best_time(blas_one_thread, 5) / 1e9}
if gemm_lib is not None:
    gemm_rates["aicslib C SGEMM, 1 thread"] = 2 * m_ * k_ * n_ / best_time(
        lambda: c_sgemm.sgemm(gemm_lib, a_g, b_g, out_g), 5) / 1e9
    assert np.allclose(out_g, a_g @ b_g, rtol=1e-3, atol=1e-3)
else:
    print("the C SGEMM was not built here:", c_sgemm.fallback_reason())
print(f"GEMM {m_}x{k_} @ {k_}x{n_}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
for label, rate in gemm_rates.items():
    print(f"  {label:28s} {rate:7.1f} GFLOP/s")
fig, ax = plt.subplots(figsize=(6, 1.8))
ax.barh(list(gemm_rates), list(gemm_rates.values()), color=["tab:gray", "tab:green"][:len(gemm_rates)])
ax.set_xlabel("GFLOP/s, one thread"); ax.set_title("the GEMM under the convolutions"); plt.show()

# %% [markdown]
# GEMM 越快，Winograd 的三个变换（$G g G^T$、$B^T d B$、$A^T M A$）所占的比例就越大。用 NumPy 写变换时，
# 矩阵里每个非零元素就是一次整数组运算、一遍内存读写（F(4x4) 的输入变换要扫几十遍），在中等大小的层上光输入变换
# 就比 GEMM 还慢。所以加速层把三个变换也写成 C（`aicslib/accel/src/aics_winograd.c`）：每个 tile 只读一次、
# 在寄存器和 L1 里变换完、写一次（两种写法各自的耗时由 `python benchmarks/bench_conv.py` 实测打印，上面第 6 节的图是
# 本机上整个卷积的实测）。加速层选算法的规则 `conv_policy.choose_conv2d_algorithm` 因而有两套阈值：C 变换可用时（`native_winograd_rule()`），
# 输入、输出通道都不少于 `NATIVE_WINOGRAD_MIN_CHANNELS` 且 2x2 tile 不少于 `NATIVE_WINOGRAD_MIN_TILES` 个（GEMM 的行数）
# 就用 Winograd，4x4 tile 不少于 `NATIVE_WINOGRAD4_MIN_TILES` 个就用 F(4x4, 3x3)；没有 C 编译器时沿用 NumPy 变换测出的阈值
# （通道不少于 `WINOGRAD_MIN_CHANNELS`，C SGEMM 可用时再乘以 `NATIVE_GEMM_WINOGRAD_SCALE`）。这些阈值的值由下一个单元格打印。

# %% [markdown]
# **哪种算法由谁决定？** `aics.nn.conv2d` 选中的是加速层的 `Conv2D` kernel（优先级高于参考 kernel），它调用
# `accel/conv_forward.py` 的 `conv2d(..., algorithm="auto")`，规则写在 `conv_policy.choose_conv2d_algorithm` 里；
# 环境变量 `AICS_CONV_ALGO`（经 `aicslib.flags` 读取）可以强制指定。下面的下拉框改的就是 `aicslib.flags.CONV_ALGO`，
# 然后真正运行一次 `aics.nn.conv2d` 并计时：

# %%
print(inspect.getsource(conv_policy.choose_conv2d_algorithm))
for name in ["NATIVE_WINOGRAD_MIN_CHANNELS", "NATIVE_WINOGRAD_MIN_TILES", "NATIVE_WINOGRAD4_MIN_TILES",
             "WINOGRAD_MIN_CHANNELS", "WINOGRAD_MIN_PIXELS", "NATIVE_GEMM_WINOGRAD_SCALE"]:
    print(f"{name} = {getattr(conv_policy, name)}")
print("C Winograd transforms in use here (native_winograd_rule()):", conv_policy.native_winograd_rule())
summary = aics.introspect.summary("Conv2D")
print(summary[summary.index("kernels:"):])     # the reference kernel and the speed layer's, with its priority
algo_picker = widgets.Dropdown(options=["auto", "direct", "im2col", "winograd"], value="auto", description="algorithm")
algo_out = widgets.Output()
xw = rng.standard_normal((1, 16, 16, 32)).astype(np.float32)
ww = (rng.standard_normal((3, 3, 32, 32)) / 20).astype(np.float32)
y_ref = co.conv2d_im2col(xw, ww, (1, 1), "SAME")


def run_with_algorithm(change=None):
    saved = flags.CONV_ALGO
    flags.CONV_ALGO = algo_picker.value                # what AICS_CONV_ALGO=... sets
    try:
        t0 = time.perf_counter()
        y = aics.nn.conv2d(xw, ww, 1, "SAME").numpy()
        dt = time.perf_counter() - t0
    finally:
        flags.CONV_ALGO = saved
    picked = algo_picker.value if algo_picker.value != "auto" else conv_policy.choose_conv2d_algorithm(
        ww.shape, 1, 1, xw.shape)
    with algo_out:
        algo_out.clear_output()
        print(f"AICS_CONV_ALGO={algo_picker.value!r} -> ran {picked!r} in {dt * 1e3:.2f} ms, "
              f"max |y - y_im2col| = {np.abs(y - y_ref).max():.2e}")
    return y


algo_picker.observe(run_with_algorithm, names="value")
display(widgets.VBox([algo_picker, algo_out]))
for a in ["direct", "winograd", "auto"]:
    algo_picker.value = a
    assert np.allclose(run_with_algorithm(), y_ref, rtol=1e-4, atol=1e-3)

# %% [markdown]
# ## 7. 对照 TensorFlow 的 `Conv2DOp::Compute`
#
# TensorFlow 的 CPU 卷积在 `tensorflow/core/kernels/conv_ops.cc`。`Conv2DOp::Compute` 依次做：
#
# | 步骤 | TensorFlow（conv_ops.cc） | aicslib |
# |---|---|---|
# | 1. 读属性、检查参数 | 构造函数里 `GetAttr("strides")`、`GetAttr("padding")`、`GetAttr("data_format")`；`ComputeConv2DDimension` 检查 `input.dims()==4`、`in_depth == filter.dim_size(2)`（不等时报 `InvalidArgument`，信息里有两个形状） | `aicslib/ops/nn_ops.py` 的 `_conv2d_shape`（建图时）与 `conv_2d.conv_geometry`（运行时），错误变成 `InvalidArgumentError` |
# | 2. 计算输出尺寸 | `GetWindowedOutputSizeVerbose(input_rows, filter_rows, dilation, stride, padding, &out_rows, &pad_top, &pad_bottom)` | `framework/kernel_shape_util.py` 的 `get_windowed_output_size`（同名同规则：SAME/VALID/EXPLICIT） |
# | 3. 分配输出 | `context->allocate_output(0, out_shape, &output)` | `np.empty((N, Ho, Wo, K))` |
# | 4. 选算法 | `LaunchConv2DOp<CPUDevice>`：1x1 卷积或卷积核覆盖整张图时直接 `MatMulConvFunctor`（一次 GEMM）；`LaunchDeepConvOp` 是 TensorFlow 自带的 CPU Winograd（`deep_conv2d.cc`，只在环境变量 `TF_USE_DEEP_CONV2D=1` 时启用，默认关闭）；否则 Eigen 的 `SpatialConvolution`（im2col + 张量缩并 = GEMM）。编译时打开 `TENSORFLOW_USE_LIBXSMM_CONVOLUTIONS` 还有一条 libxsmm 路径（题目里引用的代码就带着它）。自 TF 2.9 起，x86 Linux 的官方包默认走 oneDNN 的卷积（`_MklConv2D`，由图改写换上），上面这些是关掉 oneDNN（`TF_ENABLE_ONEDNN_OPTS=0`）时的路径；GPU 上交给 cuDNN 自己挑算法（包括 Winograd、FFT） | 加速层的 `conv_forward.conv2d` + `conv_policy.choose_conv2d_algorithm`：1x1 步长 1 直接 GEMM；3x3 步长 1 且通道、tile 够多时 Winograd；否则 im2col + GEMM。参考 kernel `kernels/conv_ops.py` 只有 im2col + GEMM（和教学用的直接循环） |
# | 5. 注册 kernel | `REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU).TypeConstraint<float>("T"), Conv2DOp<CPUDevice, float>)`；同一算子的多个 kernel 靠 `.Priority(n)` 分先后 | 参考 kernel：`kernels/conv_ops.py` 里的 `@register_kernel("Conv2D", ...)`；加速层：`accel/conv_kernels.py` 里的 `@register_fast_kernel("Conv2D", ...)`，即优先级为 1 的同一注册 |
#
# 下面直接从活的注册表里找到这些代码：

# %%
for op_type in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"):
    kd = aics.kernel_registry.kernels_for(op_type)[0]
    print(f"{op_type:22s} kernel at {os.path.relpath(kd.location[0])}:{kd.location[1]}")
kernel = aics.kernel_registry.kernels_for("Conv2D")[0].impl
print(inspect.getsource(kernel))
print(inspect.getsource(co.conv2d).split(chr(34) * 3)[-1])
try:
    aics.nn.conv2d(np.zeros((1, 5, 5, 3), np.float32), np.zeros((3, 3, 4, 8), np.float32), 1, "SAME")
except aics.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", str(e)[:300])
else:
    raise AssertionError("a channel mismatch must raise")


# %% [markdown]
# ## 8. 练习：为给定的填充实现 im2col
#
# 实现 `my_im2col(x, kh, kw, stride, padding)`：输入 NHWC 的 `x`，返回形状为 $(N H_o W_o)\times(k_h k_w C)$ 的 im2col 矩阵
# （dtype 与 `x` 相同），行按 $(n, o_h, o_w)$ 排列，列按 $(i, j, c)$ 排列（与 HWIO 卷积核 `reshape(-1, K)` 的行顺序一致）。
# `padding` 可以是 `"SAME"`、`"VALID"` 或显式的 `[(top, bottom), (left, right)]`，`stride` 是高、宽两个方向共同的步长，可以是任意正整数。
#
# 输出尺寸和四个方向的填充要你自己算（本节要练的正是这条规则）：`SAME`、`VALID` 按第 1 节写出的 TensorFlow 规则
# （`SAME` 的总填充为奇数时，多出的一个像素补在**后面**：下方、右方；总填充不会是负数）；显式填充时 $H_o=\lfloor (H+\text{top}+\text{bottom}-k_h)/s\rfloor+1$。
# 补零用 `np.pad`；不要在像素上写 Python 循环（在 $k_h\times k_w$ 个抽头上循环可以；测试会数你的代码执行了多少行 Python）。
# 其余部分请自己用 NumPy 写：调用 aicslib 自己的 im2col 工具（`im2col_view`、`pad_nhwc`、`conv2d_im2col`、`get_windowed_output_size` 等）不得分。

# %% nbgrader={"grade": false, "grade_id": "my_im2col", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_im2col(x, kh, kw, stride, padding):
    """The im2col matrix of the NHWC batch x: shape (N*Ho*Wo, kh*kw*C), rows (n, oh, ow), columns (i, j, c)."""
    N, H, W, C = x.shape
    ph, pw = (padding, padding) if isinstance(padding, str) else padding   # "SAME", "VALID" or (before, after)
    ### BEGIN SOLUTION
    def size_and_pads(n, k, pad):
        if pad == "VALID":
            return -(-(n - k + 1) // stride), 0, 0
        if pad == "SAME":
            out = -(-n // stride)                                # ceil(n / stride)
            total = max((out - 1) * stride + k - n, 0)
            return out, total // 2, total - total // 2          # the odd pixel goes after
        return (n + pad[0] + pad[1] - k) // stride + 1, pad[0], pad[1]

    Ho, pt, pb = size_and_pads(H, kh, ph)
    Wo, pl, pr = size_and_pads(W, kw, pw)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
            for i in range(kh) for j in range(kw)]          # each (N, Ho, Wo, C)
    return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_im2col_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): my_im2col against the reference im2col of workbook.references.im2col (written
# independently of aicslib; the cell after this one compares it with aicslib's im2col_view) on SAME, VALID
# and explicit paddings, strides 1 and 2. Calling aicslib's im2col helpers or the reference fails.
import traceback as _traceback

from workbook.references import im2col as _im2col_ref


def _student_call(call, run, fn, *args):
    """run(fn, *args); an error raised in the student's code is reported with the student's own lines
    (not this cell's), the release stub's NotImplementedError passes through as "not answered"."""
    try:
        return run(fn, *args)
    except grading.CheckFailed:
        raise
    except Exception as exc:
        if isinstance(exc, NotImplementedError) and not exc.args:
            raise
        own = [f for f in _traceback.extract_tb(exc.__traceback__) if f.filename == fn.__code__.co_filename]
        raise grading.CheckFailed(f"{call} raised {type(exc).__name__}: {exc}" + "".join(
            f"\n    in {f.name}, line {f.lineno}: {(f.line or '').strip()}" for f in own)) from None


def _im2col_place(index, Ho, Wo, kw, C):
    """Which output pixel, tap and channel an (row, column) of the im2col matrix is."""
    row, col = index
    n, pixel = divmod(row, Ho * Wo)
    (oh, ow), (tap, c) = divmod(pixel, Wo), divmod(col, C)
    i, j = divmod(tap, kw)
    return f"row {row} is output pixel (n={n}, oh={oh}, ow={ow}); column {col} is tap (i={i}, j={j}), channel {c}"


def _im2col_case(shape, k, stride, padding, seed):
    """Checks my_im2col on one case; returns (the input, the student's matrix)."""
    kh, kw = k
    xe = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    call = f"my_im2col(x of shape {shape}, kh={kh}, kw={kw}, stride={stride}, padding={padding!r})"
    got = _student_call(call, lambda *a: grading.no_library_calls(*a, what="my_im2col"), my_im2col,
                        xe, kh, kw, stride, padding)
    expected = _im2col_ref.im2col(xe, kh, kw, stride, padding)
    Ho, Wo, pads_h, pads_w = _im2col_ref.geometry(shape, kh, kw, stride, padding)
    grading.check(isinstance(got, np.ndarray), f"{call} returned {type(got).__name__}: return the NumPy matrix")
    if got.shape != expected.shape:
        which = ("Ho*Wo (the output size): SAME gives ceil(H/stride) rows of output, VALID ceil((H-kh+1)/stride), "
                 "explicit (H+top+bottom-kh)//stride + 1; the same for W"
                 if got.ndim != 2 or got.shape[0] != expected.shape[0] else "the columns: kh*kw*C, one per (tap, channel)")
        raise grading.CheckFailed(f"{call}: expected shape {expected.shape} = (N*Ho*Wo, kh*kw*C) with Ho={Ho}, "
                                  f"Wo={Wo}, got {got.shape}. Check {which}.")
    grading.check(got.dtype == xe.dtype, f"{call}: expected dtype {xe.dtype} (the input's), got {got.dtype}: "
                                         f"im2col copies values, it does not convert them")
    differ = np.argwhere(got != expected)
    hint = None
    if differ.size:
        hint = (f"{_im2col_place(tuple(differ[0]), Ho, Wo, kw, shape[3])}; it holds the padded input at row "
                f"oh*stride+i, column ow*stride+j (here padding top/bottom {pads_h}, left/right {pads_w}: "
                f"SAME puts the odd pixel after)")
    grading.check_array(got, expected, call, dtype=xe.dtype, hint=hint)
    return xe, got


with grading.exercise("my_im2col"):
    _im2col_case((2, 7, 6, 3), (3, 3), 1, "SAME", 0)
    _im2col_case((1, 8, 8, 2), (3, 2), 2, "SAME", 1)          # H: 1 padding pixel in all, it goes to the bottom
    _im2col_case((1, 7, 9, 1), (3, 3), 2, "SAME", 2)
    _im2col_case((2, 6, 7, 2), (2, 3), 2, "VALID", 3)
    _im2col_case((1, 5, 5, 1), (3, 3), 1, [(2, 0), (1, 1)], 4)
    ### BEGIN HIDDEN TESTS
    _im2col_case((2, 9, 8, 2), (3, 3), 3, "SAME", 5)
    _im2col_case((1, 6, 5, 3), (4, 2), 1, "SAME", 6)          # 3 padding rows: 1 on top, 2 below
    _im2col_case((1, 9, 9, 2), (2, 2), 3, "SAME", 7)          # the window is smaller than the stride: no padding
    _im2col_case((1, 10, 9, 1), (3, 2), 4, "VALID", 8)
    _im2col_case((1, 6, 5, 3), (4, 2), 1, [(0, 3), (2, 0)], 9)
    _im2col_case((1, 5, 5, 1), (5, 5), 1, "VALID", 10)
    # The rule: no Python loop per output pixel (a loop over the kh*kw taps is fine).
    _big = np.random.default_rng(11).standard_normal((1, 48, 48, 2)).astype(np.float32)
    _, _lines = _student_call("my_im2col(x of shape (1, 48, 48, 2), 3, 3, 1, 'SAME')", grading.python_lines, my_im2col,
                              _big, 3, 3, 1, "SAME")
    grading.check(_lines <= 100 + 10 * 3 * 3,
                  f"my_im2col ran {_lines} lines of Python for a 48x48 output with a 3x3 window: that is a loop "
                  f"over output pixels (or rows). Loop over the kh*kw taps at most and slice all pixels at once")
    ### END HIDDEN TESTS

# %% [markdown]
# 用 im2col 矩阵做一次带步长的卷积：一次 GEMM 就是整个卷积，结果与 `aics.nn.conv2d` 相同。下面用你的 `my_im2col`
# （练习还没通过时，用参考实现 `workbook.references.im2col`）：

# %%
from workbook.references import im2col as im2col_reference

im2col_fn = grading.use("my_im2col", my_im2col, im2col_reference.im2col, what="im2col (workbook.references.im2col)")
x_ex = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
w_ex = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
A_ex = im2col_fn(x_ex, 3, 3, 2, "SAME")
y_tf = aics.nn.conv2d(x_ex, w_ex, strides=2, padding="SAME").numpy()
y_ex = (A_ex @ w_ex.reshape(-1, 5)).reshape(y_tf.shape)
print("im2col matrix:", A_ex.shape, "| output:", y_ex.shape, "| max |im2col GEMM - aics.nn.conv2d| =",
      float(np.abs(y_ex - y_tf).max()))
assert np.allclose(y_ex, y_tf, rtol=1e-4, atol=1e-4)
# the reference itself agrees with the definition (one pixel at a time) and with aicslib's strided view
g_ex = c2d.conv_geometry(x_ex.shape, w_ex.shape, (2, 2), "SAME")
A_view = c2d.im2col_view(c2d.pad_nhwc(x_ex, g_ex["pt"], g_ex["pb"], g_ex["pl"], g_ex["pr"]), 3, 3, g_ex["Ho"], g_ex["Wo"],
                         (2, 2)).reshape(-1, 27)
assert np.array_equal(im2col_reference.im2col(x_ex, 3, 3, 2, "SAME"), A_view)
assert np.array_equal(im2col_reference.im2col_brute(x_ex, 3, 3, 2, "SAME"), A_view)

# %% [markdown]
# ## 小结
#
# * 直接卷积就是定义里的七重循环，FLOPs $=2NH_oW_oKCk_hk_w$；它是参考答案，但太慢。
# * im2col 用 `as_strided` 把感受野摊成矩阵的行（视图，不复制），卷积变成**一次** GEMM；NHWC 下 GEMM 的结果就是 NHWC 输出。
#   分块留在缓存里、多线程，是让 NumPy 版本接近 GEMM 峰值的工程手段；GEMM 本身是为本机 CPU 编译的 C SGEMM
#   （寄存器分块的 micro-kernel + 打包），`AICS_GEMM=blas` 换回 NumPy 的 BLAS。
# * Winograd F(2x2,3x3) 用 $B^T, G, A^T$ 三个小矩阵把每个 2x2 输出块的乘法从 36 次降到 16 次，16 个位置各做一个 GEMM；
#   变换本身要花时间，所以只在 3x3、步长 1、通道数和像素数都够多时才划算——这就是 `choose_conv2d_algorithm` 的规则。
# * 反向传播同样是 GEMM：卷积核梯度 = im2col 后一次 GEMM，输入梯度 = 一次 GEMM 后 col2im 累加；`Conv2D` 的梯度函数就是
#   `Conv2DBackpropInput` 和 `Conv2DBackpropFilter` 两个算子，它们彼此又互为梯度。
# * NHWC 与 NCHW 只是内存排列不同，结果必须一致；哪种快取决于 kernel 按哪种布局写。
# * TensorFlow 的 `Conv2DOp::Compute`：检查参数 → `GetWindowedOutputSizeVerbose` 算输出尺寸 → 分配输出 → 按情况调 GEMM、
#   Eigen `SpatialConvolution` 或 cuDNN；aicslib 在同样的位置有同样的步骤。
