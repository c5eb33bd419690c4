# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 12 卷积的内部实现：直接卷积、im2col + GEMM、Winograd、反向传播
#
# **前置章节 (prerequisites)**：[08 op-registration](08-op-registration.ipynb)、[11 python-c-bindings](11-python-c-bindings.ipynb)
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
# 7. 实验（第 8 节）：自己算出输出尺寸和 SAME/VALID 填充，实现 im2col、卷积核梯度 (GEMM) 和输入梯度 (GEMM + col2im)，
#    再把它们装进引擎，让一个 TF1 的 CNN 程序用你的卷积训练。
#
# **实验**（自动评分，4 个练习共 12 分）在第 8 节；没做完也能一直运行到底（实验后面用到你的代码的单元格，在对应练习通过之前用参考实现，并打印说明）。
# 本章的实测运行时间由下面第一个代码单元格打印；第 6 节的算法计时最长，有进度条。
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
from workbook import grading, run_times

FAST = flags.FAST   # AICS_FAST=1 (CI): smaller layers and fewer repeats, same code path
rng = np.random.default_rng(0)
aics.random.set_seed(0)
print("AICS_FAST:", FAST, "| threads used by the conv kernels:", work_sharder.NUM_THREADS)
run_times.show("convolution-internals")

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
#
# 下面只打印 aicslib 这两个函数的签名和说明：函数体正是第 8 节实验要你自己写的，写完再去对照 `aicslib/kernels/` 里的源码。

# %%
# only the signatures and docstrings here: the bodies are what the lab in section 8 asks you to write
for fn in (cgi.conv2d_backprop_input_gemm, cgf.conv2d_backprop_filter_gemm):
    doc = "\n".join("    " + line for line in inspect.getdoc(fn).splitlines())
    print(f"{fn.__module__}.{fn.__name__}{inspect.signature(fn)}\n{doc}\n")

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
# | 4. 选算法 | `Compute` 先试 `LaunchDeepConvOp`：这是 TensorFlow 自带的 CPU Winograd（`deep_conv2d.cc` 的 `DeepConv2D`，用 `WinogradTransform`；只用于 NHWC、3x3、步长 1，按它的代价模型比直接卷积省时才用，而且只在环境变量 `TF_USE_DEEP_CONV2D=1` 时启用，默认关闭）；不用时进 `LaunchConv2DOp<CPUDevice>`：1x1、步长 1 的卷积，或 VALID 且卷积核和输入一样大时，直接 `MatMulConvFunctor`（一次 GEMM）；否则 Eigen 的 `SpatialConvolution`（im2col + 张量缩并 = GEMM）。编译时打开 `TENSORFLOW_USE_LIBXSMM_CONVOLUTIONS` 时，`Compute` 在这一切之前还先试一条 libxsmm 路径 `LaunchXsmmConvOp`（题目里引用的代码就带着它）。自 TF 2.9 起，x86 Linux 的官方包默认走 oneDNN 的卷积（`_MklConv2D`，由图改写换上），上面这些是关掉 oneDNN（`TF_ENABLE_ONEDNN_OPTS=0`）时的路径；GPU 上交给 cuDNN 自己挑算法（包括 Winograd、FFT） | 加速层的 `conv_forward.conv2d` + `conv_policy.choose_conv2d_algorithm`：1x1 步长 1 直接 GEMM；3x3 步长 1 且通道、tile 够多时 Winograd；否则 im2col + GEMM。参考 kernel `kernels/conv_ops.py` 只有 im2col + GEMM（和教学用的直接循环） |
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
# ## 8. 实验：卷积就是 GEMM，前向、反向都是
#
# 第 2、4 节看的是 aicslib 的实现，这一节你自己把它们写出来，最后把你的代码装进引擎 (engine)，让一个真正的 TF1 程序用它训练。
# 思路只有一条：设 $\mathrm{cols}=\mathrm{im2col}(X)$（每个输出像素一行），前向 $Y=\mathrm{cols}\cdot W$ 是一次 GEMM；
# 对它求导，$\partial W=\mathrm{cols}^T\,\partial Y$ 又是一次 GEMM；$\partial\,\mathrm{cols}=\partial Y\,W^T$ 也是一次 GEMM，
# 只是 $\mathrm{cols}$ 的每一行都是输入的一个窗口，所以还要 col2im：把每一行**加回**（scatter-add，窗口重叠时累加）
# 它读过的那些（补零后的）输入像素，再把补零的边切掉。
#
# 四个练习（共 12 分），后一个用前一个：
#
# | 练习 | 你写的 | 分 |
# |---|---|---|
# | 8.1 `my_conv_output_size` | 一个方向上的输出尺寸与两侧填充（TensorFlow 的 SAME/VALID 规则） | 2 |
# | 8.2 `my_im2col` | im2col 矩阵（用 8.1） | 3 |
# | 8.3 `my_conv2d_backprop_filter` | 卷积核梯度 = im2col + 一次 GEMM（即 `Conv2DBackpropFilter`） | 3 |
# | 8.4 `my_conv2d_backprop_input` | 输入梯度 = 一次 GEMM + col2im（即 `Conv2DBackpropInput`） | 4 |
#
# 规则：只用 NumPy。可以在 $k_h\times k_w$ 个抽头 (tap) 上循环，不要在像素上写 Python 循环（测试会数你的代码执行了多少行 Python）；
# 调用 aicslib 自己的卷积工具（`get_windowed_output_size`、`im2col_view`、`pad_nhwc`、`conv2d_backprop_*` 等）或
# `workbook.references` 里的参考实现不得分。测试把你的结果和按定义逐像素求和的循环（brute force）比较，步长 1–3、奇偶尺寸、
# SAME 和 VALID 都有，还和 aicslib 的 `Conv2DBackpropInput`/`Conv2DBackpropFilter` 算子比较。
#
# ### 8.1 输出尺寸与填充
#
# `my_conv_output_size(n, k, stride, padding)` 对一个方向（高或宽）返回 `(out, before, after)`：输出尺寸、前面（上/左）和后面（下/右）的填充。
# `padding` 是 `"SAME"`、`"VALID"` 或显式的 `(before, after)`。`SAME`、`VALID` 按第 1 节写出的 TensorFlow 规则
# （`GetWindowedOutputSizeVerbose`，空洞为 1）：总填充为奇数时，多出的一个像素补在**后面**；总填充不会是负数。
# 显式填充时 $\text{out}=\lfloor (n+\text{before}+\text{after}-k)/s\rfloor+1$。

# %% nbgrader={"grade": false, "grade_id": "my_conv_output_size", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_conv_output_size(n, k, stride, padding):
    """(out, before, after) of one spatial dimension of size n, window k: TensorFlow's rule."""
    ### BEGIN SOLUTION
    if padding == "VALID":
        return -(-(n - k + 1) // stride), 0, 0
    if padding == "SAME":
        out = -(-n // stride)                                    # ceil(n / stride)
        total = max((out - 1) * stride + k - n, 0)
        return out, total // 2, total - total // 2              # the odd pixel goes after
    before, after = padding
    return (n + before + after - k) // stride + 1, before, after
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_conv_output_size_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): my_conv_output_size against TensorFlow's rule (workbook.references.im2col, which
# the unit tests compare with aicslib's get_windowed_output_size) for strides 1-3, odd and even sizes.
from workbook.references import conv_lab as _lab

with grading.exercise("my_conv_output_size"):
    for _args in [(7, 3, 1, "SAME"), (8, 3, 2, "SAME"), (7, 3, 2, "SAME"), (6, 2, 1, "SAME"), (9, 3, 3, "SAME"),
                  (7, 3, 2, "VALID"), (8, 3, 3, "VALID"), (5, 3, 1, (2, 0))]:
        _lab.check_output_size(my_conv_output_size, *_args)
    ### BEGIN HIDDEN TESTS
    for _stride in (1, 2, 3, 4):
        for _k in (1, 2, 3, 4, 5):
            for _n in range(_k, 13):
                for _pad in ("SAME", "VALID", (1, 2), (0, 0)):
                    _lab.check_output_size(my_conv_output_size, _n, _k, _stride, _pad)
    ### END HIDDEN TESTS

# %% [markdown]
# ### 8.2 im2col
#
# 实现 `my_im2col(x, kh, kw, stride, padding)`：输入 NHWC 的 `x`，返回形状为 $(N H_o W_o)\times(k_h k_w C)$ 的 im2col 矩阵
# （dtype 与 `x` 相同），行按 $(n, o_h, o_w)$ 排列，列按 $(i, j, c)$ 排列（与 HWIO 卷积核 `reshape(-1, K)` 的行顺序一致）。
# `padding` 是 `"SAME"`、`"VALID"` 或 `[(top, bottom), (left, right)]`，`stride` 是高、宽两个方向共同的步长。
# 尺寸和填充用你在 8.1 写的 `my_conv_output_size`，补零用 `np.pad`。

# %% nbgrader={"grade": false, "grade_id": "my_im2col", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_im2col(x, kh, kw, stride, padding):
    """The im2col matrix of the NHWC batch x: shape (N*Ho*Wo, kh*kw*C), rows (n, oh, ow), columns (i, j, c)."""
    N, H, W, C = x.shape
    ph, pw = (padding, padding) if isinstance(padding, str) else padding   # "SAME", "VALID" or (before, after)
    ### BEGIN SOLUTION
    Ho, pt, pb = my_conv_output_size(H, kh, stride, ph)
    Wo, pl, pr = my_conv_output_size(W, kw, stride, pw)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
            for i in range(kh) for j in range(kw)]          # each (N, Ho, Wo, C)
    return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_im2col_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): my_im2col against the reference im2col of workbook.references.im2col (written
# independently of aicslib; the cell after the lab compares it with aicslib's im2col_view) and against
# the definition, one pixel at a time, on SAME, VALID and explicit paddings, strides 1-3.
with _lab.earlier_exercises_as_reference(globals(), {'my_conv_output_size': 'my_conv_output_size'}):
    with grading.exercise("my_im2col"):
        _lab.check_im2col(my_im2col, (2, 7, 6, 3), (3, 3), 1, "SAME", 0)
        _lab.check_im2col(my_im2col, (1, 8, 8, 2), (3, 2), 2, "SAME", 1)     # H: 1 padding pixel in all, at the bottom
        _lab.check_im2col(my_im2col, (1, 7, 9, 1), (3, 3), 2, "SAME", 2)
        _lab.check_im2col(my_im2col, (2, 6, 7, 2), (2, 3), 2, "VALID", 3)
        _lab.check_im2col(my_im2col, (1, 5, 5, 1), (3, 3), 1, [(2, 0), (1, 1)], 4)
        ### BEGIN HIDDEN TESTS
        _lab.check_im2col(my_im2col, (2, 9, 8, 2), (3, 3), 3, "SAME", 5, brute=True)
        _lab.check_im2col(my_im2col, (1, 6, 5, 3), (4, 2), 1, "SAME", 6)     # 3 padding rows: 1 on top, 2 below
        _lab.check_im2col(my_im2col, (1, 9, 9, 2), (2, 2), 3, "SAME", 7)     # the window is smaller than the stride
        _lab.check_im2col(my_im2col, (1, 10, 9, 1), (3, 2), 3, "VALID", 8, brute=True)
        _lab.check_im2col(my_im2col, (1, 6, 5, 3), (4, 2), 1, [(0, 3), (2, 0)], 9)
        _lab.check_im2col(my_im2col, (1, 5, 5, 1), (5, 5), 1, "VALID", 10)
        _big = np.random.default_rng(11).standard_normal((1, 48, 48, 2)).astype(np.float32)
        _lab.check_no_pixel_loop(my_im2col, (_big, 3, 3, 1, "SAME"), "my_im2col(x of shape (1, 48, 48, 2), 3, 3, 1, 'SAME')", 9)
        ### END HIDDEN TESTS

# %% [markdown]
# ### 8.3 卷积核梯度：im2col + 一次 GEMM
#
# `my_conv2d_backprop_filter(x, dy, filter_shape, stride, padding)`：前向是 `y = conv2d(x, w)`，`dy` 是损失对 `y` 的梯度
# （形状同 `y`），返回损失对 `w` 的梯度，形状 `filter_shape`（HWIO），dtype 同 `x`。
# 因为 $Y=\mathrm{cols}\cdot W$，按矩阵乘的求导规则 $\partial W=\mathrm{cols}^T\,\partial Y$（`dy` 摊成 $(N H_o W_o)\times K$）。用你的 `my_im2col`。

# %% nbgrader={"grade": false, "grade_id": "my_conv2d_backprop_filter", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_conv2d_backprop_filter(x, dy, filter_shape, stride, padding):
    """dL/dw of y = conv2d(x, w, stride, padding), given dy = dL/dy: shape filter_shape (kh, kw, C, K)."""
    kh, kw, C, K = filter_shape
    ### BEGIN SOLUTION
    cols = my_im2col(x, kh, kw, stride, padding)                 # (N*Ho*Wo, kh*kw*C)
    return (cols.T @ dy.reshape(-1, K)).reshape(filter_shape)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_conv2d_backprop_filter_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): against the sums of the definition (workbook.references.conv_backprop, one output
# pixel and tap at a time) for strides 1-3, SAME and VALID, odd and even sizes; against aicslib's
# Conv2DBackpropFilter op.
with _lab.earlier_exercises_as_reference(globals(), {'my_conv_output_size': 'my_conv_output_size', 'my_im2col': 'my_im2col'}):
    with grading.exercise("my_conv2d_backprop_filter"):
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (2, 7, 7, 3), (3, 3), 4, 1, "SAME", 20)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (1, 8, 8, 2), (3, 3), 3, 2, "SAME", 21)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (2, 7, 6, 2), (3, 2), 2, 2, "VALID", 22)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (1, 9, 8, 2), (3, 3), 2, 3, "SAME", 23)
        ### BEGIN HIDDEN TESTS
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (1, 10, 10, 2), (3, 3), 2, 3, "VALID", 24)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (2, 6, 5, 3), (4, 2), 2, 1, "SAME", 25)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (1, 7, 7, 2), (3, 3), 2, 1, [(0, 2), (1, 1)], 26)
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (2, 9, 7, 3), (3, 3), 4, 2, "SAME", 27, against="library")
        _lab.check_backprop_filter(my_conv2d_backprop_filter, (1, 11, 10, 2), (2, 3), 3, 3, "VALID", 28, against="library")
        _big = np.random.default_rng(29).standard_normal((1, 48, 48, 2)).astype(np.float32)
        _lab.check_no_pixel_loop(my_conv2d_backprop_filter, (_big, np.ones((1, 48, 48, 3), np.float32), (3, 3, 2, 3), 1,
                                                             "SAME"), "my_conv2d_backprop_filter(x of shape (1, 48, 48, 2), ...)", 9)
        ### END HIDDEN TESTS

# %% [markdown]
# ### 8.4 输入梯度：一次 GEMM + col2im
#
# `my_conv2d_backprop_input(dy, w, x_shape, stride, padding)`：返回损失对 `x` 的梯度，形状 `x_shape`，dtype 同 `dy`。
# 先一次 GEMM 得到 $\partial\,\mathrm{cols}=\partial Y\,W^T$（$(N H_o W_o)\times(k_h k_w C)$），再 col2im：
# 建一个补零后大小的全零数组，对每个抽头 $(i,j)$，把 $\partial\,\mathrm{cols}$ 中这一抽头的那块 $(N, H_o, W_o, C)$
# **加到**（`+=`）它在前向读过的位置——补零后的第 $o_h s+i$ 行、第 $o_w s+j$ 列（一个带步长的切片）；最后切掉填充。
# 尺寸和填充用 `my_conv_output_size`。

# %% nbgrader={"grade": false, "grade_id": "my_conv2d_backprop_input", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_conv2d_backprop_input(dy, w, x_shape, stride, padding):
    """dL/dx of y = conv2d(x, w, stride, padding), given dy = dL/dy: shape x_shape (N, H, W, C)."""
    N, H, W, C = x_shape
    kh, kw, _, K = w.shape
    ph, pw = (padding, padding) if isinstance(padding, str) else padding
    ### BEGIN SOLUTION
    Ho, pt, pb = my_conv_output_size(H, kh, stride, ph)
    Wo, pl, pr = my_conv_output_size(W, kw, stride, pw)
    dcols = (dy.reshape(-1, K) @ w.reshape(-1, K).T).reshape(N, Ho, Wo, kh, kw, C)
    dxp = np.zeros((N, H + pt + pb, W + pl + pr, C), dtype=dcols.dtype)
    for i in range(kh):
        for j in range(kw):                                       # col2im: scatter-add, one tap at a time
            dxp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride] += dcols[:, :, :, i, j]
    return dxp[:, pt:pt + H, pl:pl + W]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_conv2d_backprop_input_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): against the sums of the definition for strides 1-3, SAME and VALID, odd and even
# sizes (overlapping windows, rows a VALID stride never reads), and against aicslib's Conv2DBackpropInput op.
with _lab.earlier_exercises_as_reference(globals(), {'my_conv_output_size': 'my_conv_output_size'}):
    with grading.exercise("my_conv2d_backprop_input"):
        _lab.check_backprop_input(my_conv2d_backprop_input, (2, 7, 7, 3), (3, 3), 4, 1, "SAME", 30)
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 8, 8, 2), (3, 3), 3, 2, "SAME", 31)
        _lab.check_backprop_input(my_conv2d_backprop_input, (2, 7, 6, 2), (3, 2), 2, 2, "VALID", 32)
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 9, 8, 2), (3, 3), 2, 3, "SAME", 33)
        ### BEGIN HIDDEN TESTS
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 10, 10, 2), (3, 3), 2, 3, "VALID", 34)
        _lab.check_backprop_input(my_conv2d_backprop_input, (2, 6, 5, 3), (4, 2), 2, 1, "SAME", 35)
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 8, 7, 2), (2, 2), 3, 1, "SAME", 36)
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 7, 7, 2), (3, 3), 2, 1, [(0, 2), (1, 1)], 37)
        _lab.check_backprop_input(my_conv2d_backprop_input, (2, 9, 7, 3), (3, 3), 4, 2, "SAME", 38, against="library")
        _lab.check_backprop_input(my_conv2d_backprop_input, (1, 11, 10, 2), (2, 3), 3, 3, "VALID", 39, against="library")
        _lab.check_no_pixel_loop(my_conv2d_backprop_input, (np.ones((1, 48, 48, 3), np.float32),
                                                            np.ones((3, 3, 2, 3), np.float32), (1, 48, 48, 2), 1, "SAME"),
                                 "my_conv2d_backprop_input(dy of shape (1, 48, 48, 3), ...)", 9)
        ### END HIDDEN TESTS

# %% [markdown]
# ### 8.5 用你的代码算卷积、求梯度、训练一个 TF1 程序
#
# 先在一个带步长的例子上对照：前向（你的 im2col 加一次 GEMM）、两个梯度和 `aics.GradientTape` 的自动求导、按定义的循环比较。
# 练习还没通过时，这里用 `workbook.references` 里的参考实现（会打印说明）。

# %%
from workbook.references import conv_backprop as conv_backprop_reference, im2col as im2col_reference

size_fn = grading.use("my_conv_output_size", my_conv_output_size, im2col_reference.output_size_and_padding)
im2col_fn = grading.use("my_im2col", my_im2col, im2col_reference.im2col, what="im2col (workbook.references.im2col)")
grad_filter_fn = grading.use("my_conv2d_backprop_filter", my_conv2d_backprop_filter,
                             conv_backprop_reference.conv2d_backprop_filter)
grad_input_fn = grading.use("my_conv2d_backprop_input", my_conv2d_backprop_input,
                            conv_backprop_reference.conv2d_backprop_input)
LAB = ("my_conv_output_size", "my_im2col", "my_conv2d_backprop_filter", "my_conv2d_backprop_input")
yours = "yours" if all(grading.status(name) == "passed" for name in LAB) else "lab code"   # (references in part)
x_ex = rng.standard_normal((2, 9, 8, 3)).astype(np.float32)
w_ex = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
xt_ex, wt_ex = aics.constant(x_ex), aics.constant(w_ex)
with aics.GradientTape() as tape:
    tape.watch([xt_ex, wt_ex])
    y_tf = aics.nn.conv2d(xt_ex, wt_ex, strides=2, padding="SAME")
    dy_ex = rng.standard_normal(y_tf.shape).astype(np.float32)
    loss_ex = aics.reduce_sum(y_tf * dy_ex)
gx_ex, gw_ex = [g.numpy() for g in tape.gradient(loss_ex, [xt_ex, wt_ex])]
y_ex = (im2col_fn(x_ex, 3, 3, 2, "SAME") @ w_ex.reshape(-1, 5)).reshape(y_tf.shape)
dw_ex = grad_filter_fn(x_ex, dy_ex, w_ex.shape, 2, "SAME")
dx_ex = grad_input_fn(dy_ex, w_ex, x_ex.shape, 2, "SAME")
loops = {"forward": conv_backprop_reference.conv2d_brute(x_ex, w_ex, 2, "SAME"),
         "dw": conv_backprop_reference.conv2d_backprop_filter_brute(x_ex, dy_ex, w_ex.shape, 2, "SAME"),
         "dx": conv_backprop_reference.conv2d_backprop_input_brute(dy_ex, w_ex, x_ex.shape, 2, "SAME")}
for name, mine, lib in [("forward", y_ex, y_tf.numpy()), ("dw", dw_ex, gw_ex), ("dx", dx_ex, gx_ex)]:
    print(f"{name:8s} shape {str(mine.shape):15s} max |{yours} - aicslib| = {np.abs(mine - lib).max():.2e}, "
          f"max |{yours} - loops| = {np.abs(mine - loops[name]).max():.2e}")
    assert np.allclose(mine, lib, rtol=1e-4, atol=1e-4) and np.allclose(mine, loops[name], rtol=1e-4, atol=1e-4)
# the reference itself agrees with aicslib's strided view
g_ex = c2d.conv_geometry(x_ex.shape, w_ex.shape, (2, 2), "SAME")
A_view = c2d.im2col_view(c2d.pad_nhwc(x_ex, g_ex["pt"], g_ex["pb"], g_ex["pl"], g_ex["pr"]), 3, 3, g_ex["Ho"], g_ex["Wo"],
                         (2, 2)).reshape(-1, 27)
assert np.array_equal(im2col_reference.im2col(x_ex, 3, 3, 2, "SAME"), A_view)

# %% [markdown]
# 现在把这三个函数包成 kernel：kernel 收到的是算子的输入和 TensorFlow 的属性（`strides=[1, s, s, 1]`、`padding`、
# `data_format` ……，和第 7 节注册的 kernel 一样），`workbook.engine.student_engine(kernels=...)`
# （内部就是 `aics.experimental.use_kernel`）在 `with` 块里把它们放在所有注册的 kernel 之上。
# 然后用两个引擎各跑一次 `tests/tf_programs/tf1_raw_cnn_seeded.py`：一个按 TensorFlow 教程写法的 TF1 CNN
# （`tf.nn.conv2d` 两层 5x5 SAME、Adam，MNIST 的 32 张图），程序自己检查每步的损失与 TensorFlow 2.21 打印的相同。
# 一个细节：Session 的图优化（Grappler 的 remapper，第 15 章）会把 `Conv2D + BiasAdd + Relu` 融合成一个 `_FusedConv2D` 节点；
# 参考的融合 kernel 先调用注册表里 `Conv2D` 的 kernel（`with` 块里就是你的），再加偏置、做 ReLU，所以把它也放到最上面。

# %%
from aicslib.kernels import conv_ops_fused_impl
from workbook import engine

kernel_calls = {}


def _lab_attrs(op_type, strides, padding, explicit_paddings, data_format, dilations):
    """TF's attrs -> (stride, padding) as the lab's functions take them (NHWC, one stride, no dilation)."""
    if data_format != "NHWC" or list(dilations) != [1, 1, 1, 1] or strides[1] != strides[2]:
        raise NotImplementedError(f"{op_type}: the lab's kernel takes NHWC, equal strides and no dilation")
    kernel_calls[op_type] = kernel_calls.get(op_type, 0) + 1
    p = list(explicit_paddings)
    return strides[1], padding if padding != "EXPLICIT" else [(p[2], p[3]), (p[4], p[5])]


def lab_conv2d(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    s, pad = _lab_attrs("Conv2D", strides, padding, explicit_paddings, data_format, dilations)
    kh, kw, _, K = filter.shape
    ph, pw = (pad, pad) if isinstance(pad, str) else pad
    Ho, Wo = size_fn(input.shape[1], kh, s, ph)[0], size_fn(input.shape[2], kw, s, pw)[0]
    return (im2col_fn(input, kh, kw, s, pad) @ filter.reshape(-1, K)).reshape(input.shape[0], Ho, Wo, K)


def lab_backprop_filter(input, filter_sizes, out_backprop, strides, padding, explicit_paddings, data_format,
                        dilations):
    s, pad = _lab_attrs("Conv2DBackpropFilter", strides, padding, explicit_paddings, data_format, dilations)
    return grad_filter_fn(input, out_backprop, tuple(int(v) for v in np.ravel(filter_sizes)), s, pad)


def lab_backprop_input(input_sizes, filter, out_backprop, strides, padding, explicit_paddings, data_format,
                       dilations):
    s, pad = _lab_attrs("Conv2DBackpropInput", strides, padding, explicit_paddings, data_format, dilations)
    return grad_input_fn(out_backprop, filter, tuple(int(v) for v in np.ravel(input_sizes)), s, pad)


lab_kernels = {"Conv2D": lab_conv2d, "Conv2DBackpropFilter": lab_backprop_filter,
               "Conv2DBackpropInput": lab_backprop_input,
               # Grappler's remapper turns Conv2D+BiasAdd+Relu into _FusedConv2D; the reference fused
               # kernel runs the registered Conv2D kernel (yours, inside the block), then bias and ReLU
               "_FusedConv2D": conv_ops_fused_impl._fused_conv2d}
library_run = engine.run_program("tf1_raw_cnn_seeded")
yours_run = engine.run_program("tf1_raw_cnn_seeded", engine.student_engine(kernels=lab_kernels))
print(f"calls into the lab's kernels ({yours}):", kernel_calls)
print("tf1_raw_cnn_seeded, loss before each Adam step:")
print(f"  {'step':>4s} {'library':>14s} {'lab kernels':>14s}")
for step, (a, b) in enumerate(zip(library_run["losses"], yours_run["losses"])):
    print(f"  {step:4d} {a:14.6f} {b:14.6f}")
assert set(kernel_calls) == {"Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput"}, "all three must have run"
np.testing.assert_allclose(yours_run["losses"], library_run["losses"], rtol=1e-5)

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
# * 第 8 节的实验里这三样（im2col、卷积核梯度、输入梯度）都是你写的：包成 kernel，用 `workbook.engine.student_engine`
#   放到注册表最上面，一个 TF1 程序就在你的卷积上训练，每步的损失由上面的单元格和库的并排打印。
# * NHWC 与 NCHW 只是内存排列不同，结果必须一致；哪种快取决于 kernel 按哪种布局写。
# * TensorFlow 的 `Conv2DOp::Compute`：检查参数 → `GetWindowedOutputSizeVerbose` 算输出尺寸 → 分配输出 → 按情况调 GEMM、
#   Eigen `SpatialConvolution`（默认关闭的 `DeepConv2D` Winograd、编译时选用的 libxsmm 之外）；x86 Linux 的官方包自 TF 2.9 起
#   默认换成 oneDNN 的卷积，GPU 上是 cuDNN；aicslib 在同样的位置有同样的步骤。
