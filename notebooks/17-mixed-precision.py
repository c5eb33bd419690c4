# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 17 混合精度训练：fp32 / fp16 / bf16 / fp8、损失缩放、逐层位宽
#
# **前置章节 (prerequisites)**：[04 mnist-mlp](04-mnist-mlp.ipynb)
#
# **对应习题**：习题 5.9（前半部分）——调研混合精度 (mixed precision) 训练的具体实现：前向与反向用半精度
# (half precision) 计算，同时保存一份单精度 (single precision) 的权重。后半部分（借鉴这一思想训练稀疏网络）
# 在第 18 章。
#
# **学习目标**
#
# 1. 读懂 fp32、fp16、bf16 与两种 fp8（E4M3、E5M2）的位布局 (bit layout)：符号、指数、尾数各几位，
#    各自的表示范围与精度；输入一个数，看它在每种格式里被舍入 (rounding) 成什么；
# 2. 看**这个网络真实的梯度**：多少落在 fp16 最小的次正规数 (subnormal) $2^{-24}$ 以下、一转成 fp16 就变成 0（下溢, underflow）；
# 3. 理解混合精度的三件事：fp32 主权重 (master weights)、低精度计算（图里插入的 `Cast` 节点）、
#    损失缩放 (loss scaling)；写出动态损失缩放 (dynamic loss scaling) 的更新规则；
# 4. 在 MNIST 上比较 fp32、fp16（不缩放 / 静态缩放 / 动态缩放）与 bf16 的准确率、内存与损失缩放的变化轨迹；
# 5. 用 int8 量化-反量化 (quantize-dequantize) 验证课上的结论：每一层都有自己保持精度所需的最低位宽。
#
# 低精度类型是真实的 1、2 字节 NumPy 类型（来自 `ml_dtypes`，TensorFlow 与 JAX 用的同一个库），
# 所以这里看到的舍入、下溢与内存都是真的；只是 CPU 上没有 Tensor Core，fp16 不会更快。
#
# 第一个代码单元格打印本章实测的运行时间（完整设置：60000 张训练图，五种配置各训练 3 轮；`AICS_FAST=1`：5000 张图、
# 每种配置 100 步）。每个训练循环都有进度条。
#
# **练习**（自动评分，共 9 分）是第 4 节的实验“能救活一次训练的损失缩放”，分三步：状态机、fp32 中的反缩放与检查、
# 一步完整的带缩放训练。没做完时后面的单元格照常运行（改用参考实现并说明）。

# %%
import time
import warnings

import ml_dtypes
import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib import mixed_precision as mp
from workbook import grading, mnist_mlp, run_times

run_times.show("mixed-precision")

FAST = flags.FAST                        # AICS_FAST=1: the quick setting used by CI
SEED = 0
np.random.seed(SEED)
TRAIN_N = 5000 if FAST else 60000        # training images used
STEPS = 100 if FAST else 3 * 60000 // 128  # training steps per configuration (3 epochs in full)
BATCH = 128
LR, MOMENTUM = 0.1, 0.9
GROWTH_STEPS = 40 if FAST else 400       # dynamic loss scale: finite steps before doubling
print(f"FAST={FAST}: {TRAIN_N} training images, {STEPS} steps per configuration, batch {BATCH}")

# %% [markdown]
# ## 1. 浮点格式：位布局、范围与精度
#
# 一个二进制浮点数 = 符号位 (sign) + 指数 (exponent) + 尾数 (mantissa / fraction)。指数位数决定**范围**，
# 尾数位数决定**精度**。指数全 0 时是次正规数：它们填补 0 与最小正规数之间的空隙，最小的一个是
# $2^{1-\text{bias}-\text{尾数位数}}$。
#
# | 格式 | 用途 |
# |---|---|
# | fp32 (float32) | 主权重、损失、softmax 等对精度敏感的计算 |
# | fp16 (float16, half) | GPU Tensor Core 的传统输入格式；范围小，需要损失缩放 |
# | bf16 (bfloat16) | fp32 的高 16 位：范围与 fp32 相同、精度只有 8 个有效二进制位（含隐含的 1 位，约 2–3 位十进制有效数字）；通常不需要损失缩放 |
# | fp8 E4M3 (`float8_e4m3fn`) | 前向的权重与激活（精度多一位，范围到 448，没有无穷大） |
# | fp8 E5M2 (`float8_e5m2`) | 反向的梯度（范围更大，到 57344） |
#
# 下表的数字都由 `ml_dtypes.finfo` 从格式定义算出。

# %%
FORMATS = {  # name: (aicslib dtype, sign bits, exponent bits, mantissa bits)
    "float32": (aics.float32, 1, 8, 23),
    "float16": (aics.float16, 1, 5, 10),
    "bfloat16": (aics.bfloat16, 1, 8, 7),
    "float8_e4m3fn": (aics.float8_e4m3fn, 1, 4, 3),
    "float8_e5m2": (aics.float8_e5m2, 1, 5, 2),
}

print(f"{'format':>14} {'bytes':>5} {'s/e/m':>7} {'max':>11} {'min normal':>11} {'min subnormal':>14} {'eps':>9}")
for name, (dt, s, e, m) in FORMATS.items():
    fi = ml_dtypes.finfo(dt.as_numpy_dtype)
    assert dt.size * 8 == s + e + m == np.dtype(dt.as_numpy_dtype).itemsize * 8
    print(f"{name:>14} {dt.size:>5} {f'{s}/{e}/{m}':>7} {float(fi.max):>11.4g} "
          f"{float(fi.smallest_normal):>11.4g} {float(fi.smallest_subnormal):>14.4g} {float(fi.eps):>9.3g}")
FP16_MIN_SUBNORMAL = float(ml_dtypes.finfo(np.float16).smallest_subnormal)
assert FP16_MIN_SUBNORMAL == 2.0 ** -24

# %% [markdown]
# ### 输入一个数，看它在每种格式里的位与舍入
#
# `aics.cast` 把数转换到每种格式（与 TensorFlow 一样：就近舍入，平局取偶 (round to nearest, ties to even)；
# 超出范围的 fp16/bf16/E5M2 变成 inf，E4M3 没有 inf、变成 NaN）。每行列出存储的位
# （符号 | 指数 | 尾数）、存下来的值和相对误差。可以在输入框里输入任意数，或从下拉框里挑一个有代表性的。

# %%
def bits_of(value, name):
    """(bit string 'sign|exponent|mantissa', stored value) of ``value`` in format ``name``."""
    dt, s, e, m = FORMATS[name]
    with np.errstate(over="ignore"):     # out of range: inf (or NaN in E4M3), reported as "overflow" below
        stored = aics.cast(aics.constant(np.float64(value)), dt).numpy()
    raw = int(np.asarray(stored).reshape(1).view(f"uint{8 * dt.size}")[0])
    b = format(raw, f"0{s + e + m}b")
    return f"{b[:s]}|{b[s:s + e]}|{b[s + e:]}", float(stored)


def describe(value):
    lines = [f"input {value!r}"]
    for name in FORMATS:
        bits, stored = bits_of(value, name)
        if np.isfinite(stored) and value != 0:
            err = f"{abs(stored - value) / abs(value):.2e}"
        else:
            err = "-" if np.isfinite(stored) else "overflow"
        lines.append(f"{name:>14}  {bits:<36} stored {stored:<14.8g} relative error {err}")
    return "\n".join(lines)


assert bits_of(1.0, "float16") == ("0|01111|0000000000", 1.0)
assert bits_of(-2.0, "bfloat16") == ("1|10000000|0000000", -2.0)
assert bits_of(2.0 ** -24, "float16")[0] == "0|00000|0000000001"     # the smallest subnormal
assert bits_of(1e-8, "float16")[1] == 0.0 and bits_of(1e-8, "bfloat16")[1] != 0.0
print(describe(0.1))

# %%
number_box = widgets.FloatText(value=0.1, description="number")
presets = widgets.Dropdown(options=[("0.1", 0.1), ("3.14159265", 3.14159265), ("65520 (fp16 overflow)", 65520.0),
                                    ("1e-8 (fp16 underflow)", 1e-8), ("300 (fp8 E4M3 spacing 32)", 300.0),
                                    ("1 + 2^-8 (a bf16 tie)", 1 + 2 ** -8)],
                           value=0.1, description="preset")
format_out = widgets.Output()


def show_number(_=None):
    with format_out:
        format_out.clear_output(wait=True)
        print(describe(float(number_box.value)))


def use_preset(change):
    number_box.value = change["new"]


presets.observe(use_preset, "value")
number_box.observe(show_number, "value")
display(widgets.VBox([widgets.HBox([number_box, presets]), format_out]))
show_number()

# %% [markdown]
# ## 2. 数据与网络：784-300-100-10 多层感知机
#
# 与第 04 章同一个三层全连接网络，这次用带**数据类型策略 (dtype policy)** 的 `aics.keras.layers.Dense` 搭建。
# `Policy("mixed_float16")` 有两个类型：`variable_dtype = float32`（权重，即主权重）与
# `compute_dtype = float16`（计算）。层在调用时把输入和每个权重 `Cast` 成 fp16，再做矩阵乘；
# `Cast` 的梯度把梯度再转回 fp32，所以优化器更新的始终是 fp32 主权重。softmax 交叉熵在 fp32 中计算
# （先把 logits 转回 fp32），这也是 Keras 的建议。

# %%
x_train, y_train, x_test, y_test = mnist_mlp.load(TRAIN_N)    # the MLP chapters' shared data
print(x_train.shape, x_test.shape)


def build_mlp(policy, scaling="none", initial_scale=2.0 ** 15, seed=SEED):
    """The MLP under ``policy`` with momentum SGD; ``scaling``: none, static or dynamic."""
    graph = aics.Graph()
    with graph.as_default():
        aics.set_random_seed(seed)
        x = aics.placeholder(aics.float32, [None, 784], name="x")
        y = aics.placeholder(aics.int64, [None], name="y")
        init = mnist_mlp.init_params(seed)                 # the same weights as chapter 04 starts from
        n = len(mnist_mlp.SIZES) - 1
        layers = [aics.keras.layers.Dense(mnist_mlp.SIZES[i], "relu" if i < n else None, dtype=policy,
                                          name=f"fc{i}",
                                          kernel_initializer=aics.keras.initializers.Constant(init[f"W{i}"]))
                  for i in range(1, n + 1)]
        acts, h = [], x
        for layer in layers:
            h = layer(h)
            acts.append(h)
        logits32 = aics.cast(acts[-1], aics.float32)
        loss = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits32))
        opt = aics.train.MomentumOptimizer(LR, MOMENTUM)
        if scaling == "static":
            opt = mp.LossScaleOptimizer(opt, dynamic=False, initial_scale=initial_scale)
        elif scaling == "dynamic":
            opt = mp.LossScaleOptimizer(opt, initial_scale=initial_scale, dynamic_growth_steps=GROWTH_STEPS)
        weights = [w for layer in layers for w in layer.trainable_weights]
        grads_and_vars = opt.compute_gradients(loss, var_list=weights)
        train_op = opt.apply_gradients(grads_and_vars)
        # Gradients of the loss (scaled, if scaling is on) with respect to each layer's output,
        # in the layer's compute dtype: what the backward pass really carries.
        scaled = opt.get_scaled_loss(loss) if scaling != "none" else loss
        act_grads = aics.gradients(scaled, acts)
        scale = opt.loss_scale if scaling != "none" else None   # a tensor of this graph
        accuracy = aics.reduce_mean(aics.cast(aics.equal(aics.argmax(logits32, axis=1), y), aics.float32))
        sess = aics.Session(graph=graph)
        sess.run(aics.global_variables_initializer())
    return dict(graph=graph, sess=sess, x=x, y=y, loss=loss, train=train_op, opt=opt, acts=acts,
                act_grads=act_grads, grads=[g for g, _ in grads_and_vars], weights=weights,
                accuracy=accuracy, layers=layers, scale=scale)


with aics.Graph().as_default() as demo_graph:
    mp.set_global_policy("mixed_float16")            # what the layers below pick up by default
    demo_layer = aics.keras.layers.Dense(3)
    demo_out = demo_layer(aics.placeholder(aics.float32, [None, 4], name="x"))
    mp.set_global_policy(None)                       # back to float32 for everything else
print("policy:", demo_layer.dtype_policy, "| compute", demo_layer.compute_dtype,
      "| variables", [w.dtype.name for w in demo_layer.weights], "| output", demo_out.dtype.name)
print("Cast nodes the policy inserted:",
      [(op.name, op.get_attr("DstT").name) for op in demo_graph.get_operations() if op.type == "Cast"])
assert demo_out.dtype == aics.float16 and all(w.dtype == aics.float32 for w in demo_layer.weights)

# %% [markdown]
# ## 3. 这个网络真实的梯度有多小？
#
# 先用 fp32 训练。训练中每隔一段取一批数据，记下两类梯度：**权重梯度** $\partial L/\partial W$ 和
# **激活梯度** $\partial L/\partial h$（反向传播中真正在层间流动的量）。把它们的 $\log_2|g|$ 画成直方图，
# 与 fp16 能表示的范围比较：小于 $2^{-25}$（最小次正规数 $2^{-24}$ 的一半）的值转成 fp16 后变成 0。
#
# Micikevicius 等人的混合精度论文 (*Mixed Precision Training*, ICLR 2018, arXiv 1710.03740) 里有两个不同的测量，论证的是两件不同的事：
#
# * “约 5% 的权重梯度指数小于 $-24$”来自**一个**普通话语音识别模型训练中的权重梯度直方图（论文 3.1 节、图 2b）；
#   论文用它说明为什么要保留 **fp32 主权重**：这些小梯度在优化器里乘上学习率后，若更新在 fp16 中进行就变成 0、损害准确率，
#   用单精度副本做更新就能避免（3.1 节给的另一个原因是权重比更新大 2048 倍以上时，fp16 的加法会把更新整个舍掉）；
# * **损失缩放**的论证（论文 3.2 节、图 3）用的是 Multibox SSD 检测网络 fp32 训练中、所有层的**激活梯度**直方图：
#   fp16 能表示的范围有很大一部分没用到，而许多值低于 fp16 的最小值、转成 fp16 就成了 0。不缩放时这个网络发散；
#   把梯度放大 8 倍（指数加 3）就足以达到 fp32 训练的精度——论文由此推断低于 $2^{-27}$ 的激活梯度对训练无关紧要，
#   而 $[2^{-27}, 2^{-24})$ 里的值必须保住。
#
# 这些是他们的网络上的测量，不是我们的。下面量的是**这个 MNIST 网络**的两类梯度。

# %%
def train(model, steps=STEPS, desc="", probe_every=None, record_scale=False):
    """Momentum SGD on random batches; returns a history dict (loss per step, probes, scales)."""
    rng = np.random.default_rng(SEED)            # the same batches for every configuration
    sess, hist = model["sess"], dict(loss=[], probes=[], scale=[], time=0.0)
    t0 = time.perf_counter()
    for step in tqdm(range(steps), desc=desc, leave=False):
        idx = rng.integers(0, len(x_train), BATCH)
        feed = {model["x"]: x_train[idx], model["y"]: y_train[idx]}
        if probe_every and step % probe_every == 0:
            wg, ag = sess.run([model["grads"], model["act_grads"]], feed)
            hist["probes"].append((step, wg, ag))
        _, loss = sess.run([model["train"], model["loss"]], feed)
        hist["loss"].append(float(loss))
        if record_scale:
            hist["scale"].append(float(sess.run(model["scale"])))
    hist["time"] = time.perf_counter() - t0
    hist["accuracy"] = float(sess.run(model["accuracy"], {model["x"]: x_test, model["y"]: y_test}))
    return hist


fp32_model = build_mlp(mp.Policy("float32"))
fp32_hist = train(fp32_model, desc="float32", probe_every=max(STEPS // 5, 1))
print(f"float32: test accuracy {fp32_hist['accuracy']:.4f} after {STEPS} steps ({fp32_hist['time']:.1f} s)")
# full setting measured 96.90% (2 BLAS threads) and 97.19% (1 thread): the summation order moves it
assert fp32_hist["accuracy"] > (0.85 if FAST else 0.96)

# %%
def flat_nonzero(arrays):
    v = np.concatenate([np.abs(np.asarray(a, np.float64)).ravel() for a in arrays])
    return v[v > 0]


def underflow_fraction(values):
    """Fraction of nonzero values that become 0 when rounded to float16 (the real cast)."""
    v = np.asarray(values, np.float32)
    return float(np.mean(aics.cast(v, aics.float16).numpy() == 0))


weight_grads = flat_nonzero([g for _, wg, _ in fp32_hist["probes"] for g in wg])
act_grads = flat_nonzero([g for _, _, ag in fp32_hist["probes"] for g in ag])
fig, ax = plt.subplots(figsize=(9, 3.2))
bins = np.arange(-50, 2, 1.0)
ax.hist(np.log2(weight_grads), bins=bins, alpha=0.6, label="weight gradients dL/dW")
ax.hist(np.log2(act_grads), bins=bins, alpha=0.6, label="activation gradients dL/dh")
for x_, label, c in ((-24, "fp16 min subnormal $2^{-24}$", "C3"), (-14, "fp16 min normal $2^{-14}$", "C1")):
    ax.axvline(x_, color=c, ls="--", label=label)
ax.set_yscale("log"); ax.set_xlabel("log2 |g|"); ax.set_ylabel("count"); ax.legend(fontsize=8)
ax.set_title("real gradients of the fp32 MLP (sampled during training)")
plt.show()
frac_w, frac_a = underflow_fraction(weight_grads), underflow_fraction(act_grads)
print(f"weight gradients that underflow to 0 in fp16: {100 * frac_w:.3f}%  "
      f"(below 2^-14, i.e. subnormal, losing precision: {100 * np.mean(weight_grads < 2.0 ** -14):.2f}%)")
print(f"activation gradients that underflow to 0 in fp16: {100 * frac_a:.3f}%  "
      f"(subnormal: {100 * np.mean(act_grads < 2.0 ** -14):.2f}%)")
assert 0 <= frac_w <= 1 and 0 <= frac_a <= 1
assert np.all(aics.cast(np.float32([2.0 ** -26]), aics.float16).numpy() == 0)

# %% [markdown]
# 还有一种更常见的损失：**更新**本身太小。若权重也存成 fp16，$w - \eta g$ 中的 $\eta g$ 比 $w$ 的最低位的一半还小时，
# 更新被舍入掉、权重根本不变。这就是混合精度要保留 fp32 主权重的原因。下面用最后一次取样的梯度数一数：

# %%
last_w = fp32_model["sess"].run(fp32_model["weights"])
last_g = fp32_hist["probes"][-1][1]
lost, total = 0, 0
for w, g in zip(last_w, last_g):
    w16 = w.astype(np.float16)
    step16 = (LR * g).astype(np.float16)
    changed = (w16 - step16) != w16
    lost += int(np.sum(~changed & (g != 0)))
    total += int(np.sum(g != 0))
print(f"updates lost if the weights were stored in fp16: {lost} of {total} ({100 * lost / total:.1f}%)")

# %% [markdown]
# ### 损失缩放：把梯度整体搬进 fp16 的范围
#
# 损失乘以 $S$，反向传播里每个梯度都乘以 $S$（链式法则是线性的）；更新前再除以 $S$（在 fp32 中）。
# 拖动滑块改变 $S = 2^k$，看这些真实的激活梯度乘以 $S$ 之后有多少仍下溢（$< 2^{-25}$）、多少上溢（$> 65504$，fp16 的最大值）。

# %%
scale_slider = widgets.IntSlider(value=0, min=0, max=30, description="log2 S")
scale_out = widgets.Output()
log_act = np.log2(act_grads)


def show_scale(_=None):
    k = scale_slider.value
    shifted = log_act + k
    under = float(np.mean(shifted < -25))
    over = float(np.mean(shifted > np.log2(65504)))
    with scale_out:
        scale_out.clear_output(wait=True)
        fig, ax = plt.subplots(figsize=(8, 2.6))
        ax.hist(shifted, bins=np.arange(-45, 30, 1.0), color="C1")
        ax.axvspan(-24, np.log2(65504), color="C2", alpha=0.15, label="representable in fp16")
        ax.set_xlabel("log2 |S * g|"); ax.set_ylabel("count (log scale)"); ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title(f"S = 2^{k}: {100 * under:.3f}% underflow, {100 * over:.3f}% overflow")
        plt.show()
    return under, over


scale_slider.observe(show_scale, "value")
display(widgets.VBox([scale_slider, scale_out]))
u0, o0 = show_scale()
assert o0 == 0.0    # without scaling nothing overflows

# %% [markdown]
# ## 4. 实验：能救活一次训练的损失缩放（自动评分，9 分）
#
# 上面的 MNIST 网络在 fp16 里不缩放也能训练：它的梯度大多在 fp16 的范围之内。Micikevicius 等人 (2018) 在 SSD 检测网络上
# 看到的情况不同：许多激活梯度 (activation gradients) 小于 $2^{-24}$，转成 fp16 就变成 0，不缩放时网络发散；
# 把损失乘以 $S$（他们用 8）之后同一个网络就能训练到 fp32 的精度（论文 3.2 节）。这里造一个同样的情形：损失乘上一个很小的权重
# $\lambda$（`LOSS_WEIGHT`；例如多任务里权重很小的一项，或者“对很大的全局批次求和再除以批次大小”），优化器用 Adam。
# Adam 的更新 $m/(\sqrt{v}+\epsilon)$ 几乎不随梯度的整体大小变化（这里把 $\epsilon$ 设得很小），所以 fp32 中
# 乘不乘 $\lambda$ 训练得一样；但在 fp16 里，$\lambda$ 把反向传播中的梯度推到 $2^{-24}$ 以下，它们变成 0——下面会看到训练停在原地。
#
# **动态损失缩放** (dynamic loss scaling) 就是 Keras `LossScaleOptimizer` 的默认做法：用当前的 $S$ 算出“缩放后损失”的梯度，
# 在 **fp32** 中除以 $S$（在 fp16 里除又会下溢），然后：
#
# * 如果有任何一个梯度不是有限数 (inf 或 NaN)：$S$ 太大、溢出了。**这一步不更新权重**，$S$ 减半（浮点除法：3 变成 1.5），
#   但不小于 1；计数器清零；
# * 否则正常更新权重，计数器加 1；计数器达到 `growth_steps` 时 $S$ 翻倍、计数器清零。
#   $S$ 本身是一个 float32：翻倍后若在 float32 中溢出成 inf，就保持原值（计数器照样清零）。
#
# 分三步写（只用 Python 或 NumPy，不要调用 aicslib，测试会检查）：**(a)** 状态机 `update_loss_scale`（3 分）；
# **(b)** `unscale_and_check`：在 fp32 中除以 $S$ 并检查是否全部有限（2 分）；**(c)** `loss_scaled_step`：
# 一步完整的带缩放训练（4 分），测试会用它真的训练下面的 fp16 网络，并检查训练被救活了。
# 没做完也不影响后面的单元格：它们会改用 `workbook/references/loss_scale.py` 里的参考实现并说明。
#
# ### (a) 状态机：`update_loss_scale(scale, counter, grads_finite, growth_steps)` → `(new_scale, new_counter, apply_step)`

# %% nbgrader={"grade": false, "grade_id": "loss_scale_rule", "locked": false, "schema_version": 3, "solution": true, "task": false}
def update_loss_scale(scale, counter, grads_finite, growth_steps=2000):
    """One step of dynamic loss scaling: returns (new_scale, new_counter, apply_step)."""
    ### BEGIN SOLUTION
    if not grads_finite:
        return max(scale / 2.0, 1.0), 0, False
    if counter + 1 >= growth_steps:
        doubled = scale * 2.0
        return (doubled if doubled <= float(np.finfo(np.float32).max) else scale), 0, True
    return scale, counter + 1, True
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "loss_scale_rule_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): hand cases, then long random sequences against Keras's rule.
def _pure(*args):
    return grading.no_library_calls(update_loss_scale, *args, what="update_loss_scale")


def _as_tuple(r):
    grading.check(isinstance(r, tuple) and len(r) == 3,
                  f"update_loss_scale must return (new_scale, new_counter, apply_step), got {r!r}")
    s, c, a = r
    return float(s), int(c), bool(a)


def _case(args, expected, why):
    got = _as_tuple(_pure(*args))
    grading.check(got == expected, f"update_loss_scale{args}: expected {expected}, got {got} ({why})")


with grading.exercise("loss_scale_rule"):
    _case((1024.0, 5, False, 10), (512.0, 0, False), "an overflow halves S, resets the counter, skips the step")
    _case((1024.0, 5, True, 10), (1024.0, 6, True), "a finite step counts")
    _case((1024.0, 9, True, 10), (2048.0, 0, True), "the growth_steps-th finite step doubles S")
    _case((1.0, 3, False, 10), (1.0, 0, False), "S never goes below 1")
    ### BEGIN HIDDEN TESTS
    _case((1.5, 0, False, 10), (1.0, 0, False), "S never goes below 1")
    _case((3.0, 0, False, 10), (1.5, 0, False), "S is halved as a float, not floor-divided")
    _case((2.0 ** 127, 0, True, 1), (2.0 ** 127, 0, True), "a doubling that overflows float32 keeps S")

    def _keras(scale, counter, finite, growth):
        if not finite:
            return max(scale / 2, 1.0), 0, False
        if counter + 1 >= growth:
            return (scale * 2 if scale * 2 <= float(np.finfo(np.float32).max) else scale), 0, True
        return scale, counter + 1, True

    _rng = np.random.default_rng(7)
    for _trial in range(20):
        _growth = int(_rng.integers(1, 6))
        _s = _t = (float(2.0 ** _rng.integers(0, 20)), 0)
        for _step, _finite in enumerate(_rng.random(60) < 0.8):
            _s = _as_tuple(_pure(_s[0], _s[1], bool(_finite), _growth))
            _t = _keras(_t[0], _t[1], bool(_finite), _growth)
            grading.check(_s == _t, f"step {_step} of a random sequence (growth_steps={_growth}): "
                                    f"expected {_t}, got {_s}")
            _s, _t = _s[:2], _t[:2]
    ### END HIDDEN TESTS

# %% [markdown]
# ### 实验用的 fp16 网络
#
# 一个小一些的 784-64-10 网络（`workbook.mnist_mlp` 的同一种初始化），`mixed_float16` 策略，损失乘以 `LOSS_WEIGHT`，
# Adam（$\epsilon = 10^{-12}$）。`LabModel.scaled_grads(S, x, y)` 返回 $S\cdot\lambda\cdot L$ 对各权重的梯度：
# 反向传播在 fp16 中进行，最后由 `Cast` 的梯度转回 fp32；`LabModel.apply(grads)` 用 Adam 应用给定的 fp32 梯度。
# 先看不缩放时（$S = 1$）这些梯度有多少恰好是 0：

# %%
LAB_SIZES = (784, 64, 10)
LOSS_WEIGHT = 1e-5
LAB_STEPS = 60 if FAST else 400
LAB_GROWTH = 20 if FAST else 200


class LabModel:
    """The lab's MLP under a dtype policy: scaled gradients out, fp32 gradients in (Adam)."""

    def __init__(self, policy, seed=SEED):
        init = mnist_mlp.init_params(seed, LAB_SIZES)
        self.graph = aics.Graph()
        with self.graph.as_default():
            self.x = aics.placeholder(aics.float32, [None, 784], name="x")
            self.y = aics.placeholder(aics.int64, [None], name="y")
            self.scale = aics.placeholder(aics.float32, [], name="loss_scale")
            h, n = self.x, len(LAB_SIZES) - 1
            for i in range(1, n + 1):
                h = aics.keras.layers.Dense(
                    LAB_SIZES[i], "relu" if i < n else None, dtype=mp.Policy(policy), name=f"fc{i}",
                    kernel_initializer=aics.keras.initializers.Constant(init[f"W{i}"]))(h)
            logits = aics.cast(h, aics.float32)
            xent = aics.reduce_mean(aics.nn.sparse_softmax_cross_entropy_with_logits(labels=self.y, logits=logits))
            self.loss = LOSS_WEIGHT * xent
            self.xent = xent
            self.weights = aics.trainable_variables()
            self.grads = aics.gradients(self.loss * self.scale, self.weights)
            self.grad_in = [aics.placeholder(aics.float32, w.shape) for w in self.weights]
            self.train_op = aics.train.AdamOptimizer(1e-3, epsilon=1e-12).apply_gradients(
                zip(self.grad_in, self.weights))
            self.accuracy = aics.reduce_mean(aics.cast(aics.equal(aics.argmax(logits, 1), self.y), aics.float32))
            self.sess = aics.Session(graph=self.graph)
            self.sess.run(aics.global_variables_initializer())

    def scaled_grads(self, scale, x, y):
        return [np.asarray(g, np.float32) for g in self.sess.run(
            self.grads, {self.x: x, self.y: y, self.scale: np.float32(scale)})]

    def apply(self, grads):
        self.sess.run(self.train_op, dict(zip(self.grad_in, grads)))

    def cross_entropy(self, x, y):
        return float(self.sess.run(self.xent, {self.x: x, self.y: y}))

    def test_accuracy(self):
        return float(self.sess.run(self.accuracy, {self.x: x_test, self.y: y_test}))


def lab_batches(steps, seed=SEED):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, len(x_train), BATCH) for _ in range(steps)]


_probe = lab_batches(1)[0]
for policy in ("float32", "mixed_float16"):
    _g = LabModel(policy).scaled_grads(1.0, x_train[_probe], y_train[_probe])
    _zero = np.mean(np.concatenate([(g == 0).ravel() for g in _g]))
    print(f"{policy:>14}, S = 1: {100 * _zero:.1f}% of the weight-gradient entries are exactly 0")

# %% [markdown]
# ### (b) `unscale_and_check(scaled_grads, scale)` → `(grads, all_finite)`
#
# 把每个梯度（NumPy 数组）在 **float32** 中除以 `scale`，返回 float32 数组的列表，以及“所有梯度的所有元素都是有限数”
# （inf 和 NaN 都算不有限）。

# %% nbgrader={"grade": false, "grade_id": "unscale_and_check", "locked": false, "schema_version": 3, "solution": true, "task": false}
def unscale_and_check(scaled_grads, scale):
    """Returns ([g / scale in float32 for each g], whether every entry of every gradient is finite)."""
    ### BEGIN SOLUTION
    grads = [np.asarray(g, np.float32) / np.float32(scale) for g in scaled_grads]
    return grads, all(bool(np.all(np.isfinite(g))) for g in grads)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "unscale_and_check_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): float32 results (the gradients of a float16 backward pass, scaled by up to
# 2^20), inf and NaN found in any gradient. Plain NumPy: calling aicslib or the workbook's reference fails.
def _unscale(grads, scale):
    out = grading.no_library_calls(unscale_and_check, grads, scale, what="unscale_and_check")
    grading.check(isinstance(out, tuple) and len(out) == 2,
                  f"unscale_and_check must return (grads, all_finite), got {type(out).__name__}")
    return out


def _check_unscale(grads, scale, finite, what):
    got, ok = _unscale([g.copy() for g in grads], scale)
    grading.check(bool(ok) is finite, f"{what}: all_finite should be {finite}, got {ok}")
    grading.check(len(got) == len(grads), f"{what}: expected {len(grads)} gradients back, got {len(got)}")
    for i, (g_got, g_in) in enumerate(zip(got, grads)):
        grading.check(np.asarray(g_got).dtype == np.float32,
                      f"{what}: gradient {i} should be float32, got {np.asarray(g_got).dtype}")
        with np.errstate(invalid="ignore"):      # inf - inf where both are inf: equal, not a difference
            grading.check_array(g_got, g_in.astype(np.float64) / scale, f"{what}: gradient {i} / {scale}",
                                ulps=1, hint="divide in float32: in float16, g / S underflows again")


_rng_u = np.random.default_rng(3)
_g16 = [(_rng_u.standard_normal((5, 4)) * 2.0 ** _rng_u.integers(-10, 5, (5, 4))).astype(np.float16).astype(np.float32)
        for _ in range(2)]
with grading.exercise("unscale_and_check"):
    _check_unscale(_g16, 2.0 ** 20, True, "finite gradients scaled by 2^20")
    _check_unscale(_g16 + [np.array([1.0, np.inf], np.float32)], 2.0 ** 10, False, "an inf in the last gradient")
    ### BEGIN HIDDEN TESTS
    _check_unscale(_g16, 3.0, True, "an odd scale")
    _check_unscale([np.array([np.nan, 1.0], np.float32)] + _g16, 1024.0, False, "a NaN in the first gradient")
    _check_unscale([np.float32([65504.0, -65504.0])], 1.0, True, "the largest float16 values, scale 1")
    ### END HIDDEN TESTS

# %% [markdown]
# ### (c) `loss_scaled_step(compute_scaled_grads, apply_gradients, state, growth_steps)`
#
# 一步带动态损失缩放的训练。`state` 是字典 `{"scale": S, "counter": c}`，**就地**更新；
# `compute_scaled_grads(S)` 返回用缩放 $S$ 算出的梯度列表，`apply_gradients(grads)` 用 fp32 梯度更新权重。
# 用你的 (a)(b)：算梯度 → 除以 $S$ 并检查 → 有限才应用 → 更新 $S$ 与计数器。返回这一步是否应用了梯度。
# （测试 (c) 时用参考版的 (a)(b)，所以 (c) 的得分只看这一步本身。）

# %% nbgrader={"grade": false, "grade_id": "loss_scaled_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def loss_scaled_step(compute_scaled_grads, apply_gradients, state, growth_steps):
    """One training step with dynamic loss scaling; updates state {"scale", "counter"}; returns applied."""
    ### BEGIN SOLUTION
    scale = state["scale"]
    grads, finite = unscale_and_check(compute_scaled_grads(scale), scale)
    if finite:
        apply_gradients(grads)
    state["scale"], state["counter"], _ = update_loss_scale(scale, state["counter"], finite, growth_steps)
    return finite
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "loss_scaled_step_test", "locked": true, "points": 4, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked), with the reference update_loss_scale and unscale_and_check in place of (a) and
# (b): a scripted sequence of gradients (overflows included) checked call by call against Keras's rule, then
# the rescue itself: the lab's fp16 network, which does not train without scaling, must train with it.
from workbook.references import loss_scale as _ls_ref


class _Script:
    """compute_scaled_grads / apply_gradients stand-ins that record what the step did."""

    def __init__(self, overflow_at, seed):
        self.overflow_at, self.rng, self.calls, self.misuse = set(overflow_at), np.random.default_rng(seed), [], None

    def compute(self, scale):
        g = [self.rng.standard_normal((3, 2)).astype(np.float32) * np.float32(scale)]
        if len(self.calls) in self.overflow_at:
            g[0][1, 1] = np.inf if len(self.calls) % 2 else np.nan
        self.calls.append(["compute", float(scale), g, None])
        return g

    def apply(self, grads):            # checked after the step (a check here would count as a library call)
        if not self.calls or self.calls[-1][3] is not None:
            self.misuse = "apply_gradients was called twice in one step, or before compute_scaled_grads"
        else:
            self.calls[-1][3] = [np.array(g) for g in grads]


def _run_script(overflow_at, growth, start, steps, seed):
    script, state = _Script(overflow_at, seed), {"scale": start, "counter": 0}
    exp_scale, exp_counter = start, 0
    for step in range(steps):
        applied, called = grading.library_calls(loss_scaled_step, script.compute, script.apply, state, growth)
        extra = sorted(called - {"update_loss_scale", "unscale_and_check"})
        grading.check(not extra, f"loss_scaled_step calls the library ({', '.join(extra)}): write the step "
                                 f"with your update_loss_scale and unscale_and_check")
        grading.check(script.misuse is None, f"step {step}: {script.misuse}")
        grading.check(len(script.calls) == step + 1,
                      f"step {step}: compute_scaled_grads should be called once per step, it was called "
                      f"{len(script.calls) - step} times")
        _, used_scale, scaled, applied_grads = script.calls[-1]
        finite = step not in overflow_at
        where = f"step {step} (growth_steps={growth}, S={exp_scale:g}, {'finite' if finite else 'overflow'})"
        grading.check(used_scale == exp_scale,
                      f"{where}: compute_scaled_grads got scale {used_scale:g}, expected the current S {exp_scale:g}")
        grading.check(bool(applied) is finite, f"{where}: should return {finite}, returned {applied!r}")
        if finite:
            grading.check(applied_grads is not None, f"{where}: apply_gradients was not called")
            grading.check_array(applied_grads[0], scaled[0].astype(np.float64) / exp_scale,
                                f"{where}: the gradient given to apply_gradients", ulps=1,
                                hint="apply the unscaled gradients (divided by the S they were computed with)")
        else:
            grading.check(applied_grads is None, f"{where}: apply_gradients was called on an overflowed step "
                                                 f"(the step must be skipped, not applied with zeros)")
        exp_scale, exp_counter, _ = _ls_ref.update_loss_scale(exp_scale, exp_counter, finite, growth)
        grading.check((float(state.get("scale", -1)), int(state.get("counter", -1))) == (exp_scale, exp_counter),
                      f"{where}: state after the step should be scale {exp_scale:g}, counter {exp_counter}; "
                      f"got {state}")


def _rescue(steps, threshold):
    model, batches = LabModel("mixed_float16"), lab_batches(steps)
    state = {"scale": 2.0 ** 15, "counter": 0}
    first = model.cross_entropy(x_train[batches[0]], y_train[batches[0]])
    for idx in batches:
        loss_scaled_step(lambda s: model.scaled_grads(s, x_train[idx], y_train[idx]), model.apply, state, LAB_GROWTH)
    last = np.mean([model.cross_entropy(x_train[i], y_train[i]) for i in batches[-5:]])
    grading.check(last < threshold * first,
                  f"the fp16 network with your loss_scaled_step: cross-entropy {first:.3f} -> {last:.3f} after {steps} "
                  f"steps; expected below {threshold:.0%} of the start, as the reference rescue reaches")


_saved = update_loss_scale, unscale_and_check
update_loss_scale, unscale_and_check = _ls_ref.update_loss_scale, _ls_ref.unscale_and_check
try:
    with grading.exercise("loss_scaled_step"):
        _run_script(overflow_at={2, 3}, growth=3, start=8.0, steps=10, seed=0)
        _rescue(steps=25, threshold=0.6)
        ### BEGIN HIDDEN TESTS
        _run_script(overflow_at={0, 1, 2, 7, 8}, growth=2, start=3.0, steps=14, seed=1)
        _run_script(overflow_at=set(), growth=1, start=2.0 ** 126, steps=4, seed=2)
        ### END HIDDEN TESTS
finally:
    update_loss_scale, unscale_and_check = _saved

# %% [markdown]
# ### 救活了吗？三次训练的损失曲线
#
# 同样的初始权重、同样的批次：fp32；fp16 不缩放；fp16 加**你的**动态损失缩放（从 $S = 2^{15}$ 开始，
# 每 `LAB_GROWTH` 步没有溢出就翻倍）。右图是你的缩放器记录下的 $S$。

# %%
_lab_names = ("loss_scale_rule", "unscale_and_check", "loss_scaled_step")
if all(grading.status(n) == "passed" for n in _lab_names):
    lab_step = loss_scaled_step
else:
    print(f"note: exercises {', '.join(n for n in _lab_names if grading.status(n) != 'passed')} have not passed "
          f"their checks: the run below uses the reference loss scaler (workbook/references/loss_scale.py).")
    lab_step = _ls_ref.loss_scaled_step

lab_runs, lab_scales, lab_batches_used = {}, [], lab_batches(LAB_STEPS)
for k, label in enumerate(("fp32", "fp16, no scaling", "fp16, your dynamic scaling"), start=1):
    model = LabModel("float32" if label == "fp32" else "mixed_float16")
    state, losses = {"scale": 2.0 ** 15, "counter": 0}, []
    for step, idx in enumerate(tqdm(lab_batches_used, desc=f"run {k} of 3: {label}", leave=False)):
        xb, yb = x_train[idx], y_train[idx]
        losses.append(model.cross_entropy(xb, yb))
        if label.endswith("dynamic scaling"):
            lab_step(lambda s: model.scaled_grads(s, xb, yb), model.apply, state, LAB_GROWTH)
            lab_scales.append(state["scale"])
        else:
            model.apply(model.scaled_grads(1.0, xb, yb))
    lab_runs[label] = (losses, model.test_accuracy())
    print(f"run {k} of 3, {label:>27}: cross-entropy {np.mean(losses[:5]):.3f} -> {np.mean(losses[-5:]):.3f}, "
          f"test accuracy {lab_runs[label][1]:.2%}")

fig, (ax_l, ax_s) = plt.subplots(1, 2, figsize=(12, 3.4))
for label, (losses, acc) in lab_runs.items():
    ax_l.plot(losses, lw=1, label=f"{label} (test acc. {acc:.1%})")
ax_l.set_xlabel("step"); ax_l.set_ylabel("cross-entropy (without λ)"); ax_l.legend(fontsize=8)
ax_l.set_title(f"loss weight λ = {LOSS_WEIGHT:g}, Adam")
ax_s.step(range(len(lab_scales)), lab_scales, where="post")
ax_s.set_yscale("log", base=2); ax_s.set_xlabel("step"); ax_s.set_ylabel("loss scale S")
ax_s.set_title("your dynamic loss scale")
plt.tight_layout(); plt.show()
_no, _yes = lab_runs["fp16, no scaling"][0], lab_runs["fp16, your dynamic scaling"][0]
assert np.mean(_yes[-5:]) < 0.6 * np.mean(_no[-5:]), "loss scaling should rescue the fp16 run"

# %% [markdown]
# ## 5. MNIST：fp32 vs 混合 fp16（不缩放 / 静态 / 动态缩放）vs 混合 bf16
#
# 同样的初始化、同样的数据批次、同样的优化器（动量 SGD），只改数据类型策略和损失缩放：
#
# * `mixed_float16`，不缩放；
# * `mixed_float16`，静态缩放 $S = 2^{10}$（`LossScaleOptimizer(dynamic=False, initial_scale=1024)`）；
# * `mixed_float16`，动态缩放。Keras 的默认初值 $S = 2^{15}$ 对这个小网络从不溢出（$S$ 只会一路翻倍），
#   为了看到“溢出 → 跳过 → 减半”，这里故意从过大的 $S = 2^{28}$ 开始；
# * `mixed_bfloat16`，不缩放（bf16 的范围与 fp32 相同）。
#
# 在静态图里，`LossScaleOptimizer` 的训练算子自己完成“跳过这一步”：内层优化器的更新建在
# `aics.cond(梯度全部有限, 更新, no_op)` 的一个分支里（条件分支 (conditional)，与 TF 相同），溢出时更新算子根本不执行，
# 权重、动量等槽变量 (slot) 和 `global_step` 都保持原值（TF1 的 `MixedPrecisionLossScaleOptimizer` 如此；
# Keras 的 `LossScaleOptimizer` 则仍把 `optimizer.iterations` 加一），只有 $S$ 减半。

# %%
CONFIGS = {  # label: (policy, scaling, initial scale)
    "fp16, no scaling": ("mixed_float16", "none", None),
    "fp16, static 2^10": ("mixed_float16", "static", 2.0 ** 10),
    "fp16, dynamic": ("mixed_float16", "dynamic", 2.0 ** 28),
    "bf16, no scaling": ("mixed_bfloat16", "none", None),
}
results = {"fp32": (fp32_model, fp32_hist)}
for k, (label, (policy, scaling, s0)) in enumerate(CONFIGS.items(), start=2):
    print(f"config {k} of {len(CONFIGS) + 1}: {label} ...")        # fp32 (config 1) was trained above
    model = build_mlp(mp.Policy(policy), scaling, initial_scale=s0 or 2.0 ** 15)
    # NumPy warns when a float16 value overflows (to inf) and when inf meets inf or 0 (NaN): that is what a
    # too-large loss scale does. Caught here, and said in plain words below.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        hist = train(model, desc=f"config {k} of {len(CONFIGS) + 1}: {label}", probe_every=max(STEPS // 5, 1),
                     record_scale=scaling != "none")
    overflow_notes = sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})
    if overflow_notes:
        print(f"  NumPy warned {len(caught)} time(s) during this run ({'; '.join(overflow_notes)}): with the scale "
              f"at S = 2^{np.log2(s0 or 2.0 ** 15):.0f} the scaled gradients exceed float16's 65504 and become inf, and inf - inf or inf * 0 gives "
              f"NaN. These are the non-finite gradients the loss scaler detects: those steps are skipped and S halves.")
    results[label] = (model, hist)
    print(f"{label:>18}: test accuracy {hist['accuracy']:.4f} ({hist['time']:.1f} s)")
for label, (_, hist) in results.items():
    assert abs(hist["accuracy"] - fp32_hist["accuracy"]) < 0.03, label

# %%
def activation_and_weight_bytes(model):
    """Bytes of one batch's layer outputs (real arrays) and of the weights the step keeps."""
    acts = model["sess"].run(model["acts"], {model["x"]: x_train[:BATCH]})
    master = sum(w.nbytes for w in model["sess"].run(model["weights"]))
    compute = np.dtype(aics.as_dtype(model["layers"][0].compute_dtype).as_numpy_dtype)
    copies = 0 if compute == np.float32 else master // 4 * compute.itemsize   # the low-precision copies
    return sum(a.nbytes for a in acts), master, copies


fig = plt.figure(figsize=(12, 7.5))        # the curves across the top, accuracy and memory below
axes = [fig.add_subplot(2, 1, 1), fig.add_subplot(2, 2, 3), fig.add_subplot(2, 2, 4)]
for label, (_, hist) in results.items():
    loss = np.convolve(hist["loss"], np.ones(10) / 10, mode="valid")
    axes[0].plot(loss, lw=1, label=label)
axes[0].set_yscale("log"); axes[0].set_xlabel("step"); axes[0].set_ylabel("training loss (10-step mean)")
axes[0].legend(fontsize=8); axes[0].set_title("training loss of the five configurations")
labels = list(results)
axes[1].bar(range(len(labels)), [100 * results[k][1]["accuracy"] for k in labels], color="C0")
axes[1].set_xticks(range(len(labels))); axes[1].set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
lo = min(100 * h["accuracy"] for _, h in results.values())
axes[1].set_ylim(lo - 2, 100); axes[1].set_ylabel("test accuracy (%)"); axes[1].set_title("test accuracy")
mem = {k: activation_and_weight_bytes(results[k][0]) for k in labels}
bottom = np.zeros(len(labels))
for i, part in enumerate(("activations (batch 128)", "fp32 master weights", "low-precision weight copies")):
    vals = np.array([mem[k][i] for k in labels]) / 2 ** 20
    axes[2].bar(range(len(labels)), vals, bottom=bottom, label=part)
    bottom += vals
axes[2].set_xticks(range(len(labels))); axes[2].set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
axes[2].set_ylabel("memory (MiB)"); axes[2].legend(fontsize=7); axes[2].set_title("memory of one training step")
plt.tight_layout(); plt.show()
for k in labels:
    print(f"{k:>18}: activations {mem[k][0] / 1024:.0f} KiB, master weights {mem[k][1] / 1024:.0f} KiB, "
          f"low-precision copies {mem[k][2] / 1024:.0f} KiB")
assert mem["fp16, dynamic"][0] * 2 == mem["fp32"][0]     # the activations really take half the bytes

# %% [markdown]
# ### 动态损失缩放的轨迹
#
# 从 $2^{28}$ 开始：若梯度溢出，这一步被跳过、$S$ 减半；之后每连续 `GROWTH_STEPS` 步没有溢出就翻倍。
# 下面把 `LossScaleOptimizer` 在训练中记录的 $S$ 画出来；红点是被跳过的步。再用**你写的** `update_loss_scale`
# 在同样的“是否溢出”序列上重放一遍，与真实轨迹比较（练习未完成时跳过这一比较）。

# %%
DYN_START = CONFIGS["fp16, dynamic"][2]
dyn = results["fp16, dynamic"][1]["scale"]
before = [DYN_START] + dyn[:-1]
skipped = [i for i in range(len(dyn)) if dyn[i] < before[i]]      # the scale only drops on overflow
fig, ax = plt.subplots(figsize=(9, 2.8))
ax.step(range(len(dyn)), dyn, where="post", label="dynamic loss scale")
ax.plot(skipped, [dyn[i] for i in skipped], "o", color="C3", label="skipped step (overflow)")
ax.axhline(2.0 ** 10, color="C2", ls="--", label="static scale 2^10")
ax.set_yscale("log", base=2); ax.set_xlabel("step"); ax.set_ylabel("loss scale S"); ax.legend(fontsize=8)
plt.show()
print(f"{len(skipped)} skipped steps of {len(dyn)}; final S = 2^{np.log2(dyn[-1]):.0f}")
assert skipped and skipped[0] == 0 and dyn[0] == DYN_START / 2   # 2^28 overflows at once
try:
    s, c, replay = DYN_START, 0, []
    for i in range(len(dyn)):
        s, c, _ = update_loss_scale(s, c, i not in skipped, GROWTH_STEPS)
        replay.append(float(s))
    print("your update_loss_scale replays the trajectory exactly:", replay == dyn)
except NotImplementedError:
    print("(update_loss_scale is not written yet: replay skipped)")

# %% [markdown]
# 没有缩放时 fp16 丢了多少梯度？比较各配置在同一批数据上取样的**权重梯度**中恰好为 0 的比例（ReLU 关闭的单元
# 在 fp32 中也给出 0，所以要与 fp32 对比）：

# %%
for label, (_, hist) in results.items():
    zero = np.mean(np.concatenate([(np.asarray(g) == 0).ravel() for _, wg, _ in hist["probes"] for g in wg]))
    print(f"{label:>18}: {100 * zero:.2f}% of weight-gradient entries are exactly 0")

# %% [markdown]
# ## 6. 每一层都有自己的最低位宽：int8 量化-反量化
#
# 课上的表格显示，把权重与激活都换成 int8、梯度大多用 int16，分类、检测、分割网络的精度几乎不变；并且
# “每层数据都有其保持网络收敛的最低位宽需求，与数据分布有关”。在训练好的 fp32 网络上验证：
# 对称的逐张量量化 $q = \mathrm{round}(x / \Delta)$，$\Delta = \max|x| / (2^{b-1}-1)$，再乘回 $\Delta$（量化-反量化），
# 先把所有层的权重和激活都做成 int8，再**一次只改一层**的位宽，看测试准确率。

# %%
W = fp32_model["sess"].run(fp32_model["weights"])      # kernel, bias per layer (float32)
kernels, biases = W[0::2], W[1::2]


def fake_quant(x, bits):
    if bits is None:
        return x
    step = np.max(np.abs(x)) / (2 ** (bits - 1) - 1)
    return np.clip(np.round(x / step), -(2 ** (bits - 1) - 1), 2 ** (bits - 1) - 1) * step


def quantized_accuracy(weight_bits, act_bits):
    """Test accuracy with layer i's kernel in weight_bits[i] and its input in act_bits[i] bits."""
    h = x_test
    for i, (k, b) in enumerate(zip(kernels, biases)):
        h = fake_quant(h, act_bits[i]) @ fake_quant(k, weight_bits[i]) + b
        if i < 2:
            h = np.maximum(h, 0)
    return float(np.mean(h.argmax(axis=1) == y_test))


acc32 = quantized_accuracy([None] * 3, [None] * 3)
acc8 = quantized_accuracy([8] * 3, [8] * 3)
print(f"fp32: {acc32:.4f}   int8 weights + int8 activations in every layer: {acc8:.4f}")
assert abs(acc32 - fp32_hist["accuracy"]) < 1e-3 and acc8 > acc32 - 0.01

BITS = list(range(2, 9))
curves = {}
for i, name in enumerate(["fc1", "fc2", "fc3"]):
    for kind in ("weights", "activations"):
        accs = []
        for bits in BITS:
            wb, ab = [8] * 3, [8] * 3
            (wb if kind == "weights" else ab)[i] = bits
            accs.append(quantized_accuracy(wb, ab))
        curves[(name, kind)] = accs

fig, axes = plt.subplots(1, 2, figsize=(11, 3.2), sharey=True)
for ax, kind in zip(axes, ("weights", "activations")):
    for name in ("fc1", "fc2", "fc3"):
        ax.plot(BITS, [100 * a for a in curves[(name, kind)]], "o-", label=name)
    ax.axhline(100 * (acc32 - 0.005), color="gray", ls=":", label="fp32 - 0.5 pt")
    ax.set_xlabel(f"bits for one layer's {kind} (others int8)"); ax.set_title(kind); ax.legend(fontsize=8)
axes[0].set_ylabel("test accuracy (%)")
plt.show()
minimal = {key: next((b for b, a in zip(BITS, accs) if a >= acc32 - 0.005), None) for key, accs in curves.items()}
for (name, kind), b in minimal.items():
    x_ = kernels[int(name[-1]) - 1] if kind == "weights" else None
    extra = f", max|w|/std(w) = {np.max(np.abs(x_)) / np.std(x_):.1f}" if x_ is not None else ""
    print(f"{name} {kind:>11}: minimal bits within 0.5 pt of fp32 = {b}{extra}")
assert all(curves[key][-1] >= acc32 - 0.01 for key in curves)   # 8 bits is enough everywhere

# %% [markdown]
# ## 小结
#
# * 低精度格式用更少的位换取范围或精度：fp16 范围小（最小次正规数 $2^{-24}$，最大 65504），bf16 与 fp32 同范围、精度低，
#   fp8 两种格式分别偏向精度（E4M3，前向）与范围（E5M2，反向）。这里的低精度张量是真实的 1、2 字节数组。
# * 混合精度 = fp32 主权重 + 低精度计算（策略在图里插入 `Cast`）+ 损失缩放；矩阵乘与卷积在 fp32 中累加、最后舍入一次。
# * 上面测得：这个小网络的梯度大多在 fp16 的范围内（下溢的比例见第 3 节打印的数值），在 MNIST 上 fp16 不缩放也能训练到
#   与 fp32 相当的准确率；但把权重本身存成 fp16 会丢掉相当一部分更新——这正是保留 fp32 主权重的理由。
#   动态损失缩放在溢出时跳过一步并减半，之后慢慢翻倍，$S$ 在溢出边界附近来回。
# * 在 CPU 上低精度不会更快（NumPy 没有 fp16 的矩阵乘单元，这里的 fp16 矩阵乘先转成 fp32 再算）；省下的是激活的内存，
#   主权重 + 低精度副本反而比纯 fp32 多占 50% 的权重内存。GPU 的 Tensor Core 才让 fp16/bf16 的矩阵乘快数倍。
# * 量化实验复现了课上的结论：int8 权重 + int8 激活对每一层都够；再往下，各层（以及同一层的权重与激活）
#   能承受的最低位宽不同，与数据的分布有关——例如第一层的输入是 $[0, 1]$ 中多为 0 或 1 的像素，位宽可以很低。
