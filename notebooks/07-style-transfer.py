# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 第 3 章的驱动范例：VGG19 推理与图像风格迁移
#
# **前置章节 (prerequisites)**：[00 framework-tour](00-framework-tour.ipynb)、[03 training-workflow](03-training-workflow.ipynb)、[05 preprocessing](05-preprocessing.ipynb)
#
# **对应内容**：教材第 3 章“编程框架使用”贯穿全章的驱动范例 (driving example)——先逐层搭建 VGG19
# (`build_vgg19`：卷积、池化两个基本单元，权重从模型文件读入)，做一次推理 (inference)；再用同一个网络实现
# 图像风格迁移 (neural style transfer)：内容损失 + 基于 Gram 矩阵的风格损失，`AdamOptimizer(2.0)` 对**输入图像**
# 做优化，`sess.run(train_op)` 循环训练，每隔若干步打印一次代价 (cost)。
#
# **学习目标**
#
# 1. 按讲义的写法逐层搭出 VGG19（NHWC，层名 `conv1_1` … `pool5`），数清参数量（卷积部分与带全连接层时各有多少）；
# 2. 用静态图 + 会话 (Session) 完成一次推理，测出前向传播的时间、每一层的激活内存与权重内存；
# 3. 写出风格迁移的三个损失：内容损失、Gram 矩阵 (Gram matrix)、风格损失（**练习**，自动评分）；
# 4. 照讲义的 `train_vgg` 用 TF1 方式训练：`AdamOptimizer(2.0).minimize(total_loss)`，训练变量是输入图像本身；
# 5. 用 TF2 方式（`GradientTape` + `aics.function`）再做一遍，验证两种方式在同一随机种子下结果一致；
# 6. 用 `RunMetadata` 把一步训练的时间按层的类型（卷积 / ReLU / 池化 / 损失 / 优化器）拆开；
# 7. 用小部件 (widget) 改变内容与风格的权重比 α/β，体会讲义里“α/β 越大，内容越具象”。
#
# **关于权重**：讲义读入在 ImageNet 上训练好的 `vgg19.npy`（含全连接层的全部参数，个数见第 1 节的输出，每个 4 字节）。仓库里不能附带、运行时也不能下载，
# 所以没有权重文件时，本章用**随机初始化**的 VGG19（He 正态初始化，见第 1 节）。这会改变什么，要说清楚：
# 随机的多尺度卷积特征仍能刻画纹理的统计量（Ustyuzhaninov 等 2017 证明了用随机浅层网络也能合成自然纹理），
# 所以风格迁移照样能跑、能看出颜色与笔触的迁移；但随机特征不“认识”物体，内容只能以边缘和色块的形式保留，
# 效果明显弱于 ImageNet 权重。若你有 `vgg19.npy` 或 `.npz`，放到 `data/vgg19/`，笔记本会自动使用它（见第 1 节）。
#
# **运行时间**见下面第一个单元格的输出（完整设置：128×128 图像、200 步，α/β 的 5 个比值各 100 步、64×64；
# `AICS_FAST=1` 时图像更小、步数很少，代码路径完全相同；机器上同时有别的任务时会慢好几倍）。
#
# **练习**（自动评分，共 6 分）：第 2 节数清 VGG19 卷积部分的乘加与浮点运算次数，第 3 节用 aicslib 的算子写出
# 一层的风格损失。没做完也不影响后面的单元格（改用参考实现，并说明）。

# %%
import collections
import glob
import os
import time

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags
from aicslib.datasets import images
from aicslib.models import style_transfer, vgg19
from workbook import grading, run_times

run_times.show("style-transfer")
FAST = flags.FAST               # AICS_FAST=1: the quick setting used by CI (same code path)
SEED = 0
np.random.seed(SEED)
aics.random.set_seed(SEED)

SIZE = 32 if FAST else 128      # side of the square content/style images for training
STEPS = 12 if FAST else 200     # training steps (the lecture runs 3000 at 224x224)
REPORT = 4 if FAST else 50      # print the cost every REPORT steps (the lecture: every 100)
WIDGET_SIZE, WIDGET_STEPS = (24, 16) if FAST else (64, 100)
print(f"FAST={FAST}: {SIZE}x{SIZE} images, {STEPS} steps; widget: {WIDGET_SIZE}x{WIDGET_SIZE}, "
      f"{WIDGET_STEPS} steps per ratio")

# %% [markdown]
# ## 1. 读入图像与权重
#
# 讲义的 `load_image` 用 OpenCV 读图、缩放到 224×224。这里用预处理一章 (03) 的函数：
# `aics.image.resize_with_crop_or_pad` 先居中裁成正方形，`aics.image.resize`（双线性、半像素中心）缩放，
# 再用 `vgg19.preprocess_input`——与 `keras.applications.vgg19.preprocess_input` 相同的 Caffe 约定：
# RGB→BGR，减去 ImageNet 均值 `[103.939, 116.779, 123.68]`，**不除以 255**。
# 像素保持 0–255 的量级，这也是讲义的学习率 2.0 合理的原因：每步每个像素最多改变约 2 个灰度级。
#
# 内容图用 `chelsea`（猫），风格图用 `coffee`（咖啡杯的颜色与纹理）。

# %%
def load_image(name, size):
    """data/images/<name> -> (1, size, size, 3) float32 in VGG19's caffe convention."""
    img = images.load_image(name)                                   # uint8 RGB (H, W, 3)
    side = min(img.shape[:2])
    square = aics.image.resize_with_crop_or_pad(img, side, side)    # centre crop
    resized = aics.image.resize(square, [size, size]).numpy()       # float32 in [0, 255]
    return vgg19.preprocess_input(resized[None].copy())


CONTENT_NAME, STYLE_NAME = "chelsea", "coffee"
img_content = load_image(CONTENT_NAME, SIZE)
img_style = load_image(STYLE_NAME, SIZE)
print("content:", img_content.shape, img_content.dtype, "range", img_content.min().round(1),
      img_content.max().round(1))
assert img_content.shape == img_style.shape == (1, SIZE, SIZE, 3)
assert np.array_equal(vgg19.deprocess_image(vgg19.preprocess_input(np.full((1, 2, 2, 3), 7.0, np.float32))),
                      np.full((2, 2, 3), 7, np.uint8))

fig, axes = plt.subplots(1, 2, figsize=(5, 2.6))
for ax, img, title in zip(axes, (img_content, img_style), ("content", "style")):
    ax.imshow(vgg19.deprocess_image(img)); ax.set_title(title); ax.axis("off")
plt.show()

# %% [markdown]
# 权重：`data/vgg19/` 里若有 `vgg19.npz`（或 `vgg19.npy`、MatConvNet 的 `.mat`）就读入，否则用随机初始化。
#
# * `vgg19.npy` 是讲义代码读的格式：一个用 pickle 序列化的字典 `{层名: [W, b]}`，读它要 `allow_pickle=True`。
#   **反序列化 pickle 可以执行文件里藏的任意代码**，所以 `vgg19.load_weights` 默认拒绝，报错说明原因；
#   只有你信任文件来源时才把下面的 `TRUST_PICKLE` 改成 `True`（更好的办法：转存一次 `.npz`，以后不再需要 pickle）。
# * 形状不对或缺层时报错会指出文件和层名，例如 `vgg19.npz: layer 'conv3_2' W has shape (3, 3, 128, 256), expected (3, 3, 256, 256)`。
# * 随机初始化 `vgg19.random_weights(seed)`：$W\sim\mathcal N(0,\,2/\text{fan\_in})$（He 正态），偏置为 0。
#   ReLU 把激活的二阶矩减半，因子 2 正好补回来，所以 16 层卷积之后激活仍与输入同一量级（下面验证）。

# %%
TRUST_PICKLE = False
weight_files = sorted(glob.glob(os.path.join(images.data_dir(), "vgg19", "*.np[yz]"))
                      + glob.glob(os.path.join(images.data_dir(), "vgg19", "*.mat")))
if weight_files:
    weights = vgg19.load_weights(weight_files[0], allow_pickle=TRUST_PICKLE, include_top=False)
    WEIGHTS_KIND = f"ImageNet weights from {os.path.basename(weight_files[0])}"
else:
    weights = vgg19.random_weights(seed=SEED)
    WEIGHTS_KIND = "random He-normal weights (no weights file in data/vgg19/)"
print("using", WEIGHTS_KIND)
print(f"parameters: conv part {vgg19.count_params(False):,}, with fc6-fc8 {vgg19.count_params(True):,}")
assert vgg19.count_params(False) == 20_024_384 and vgg19.count_params(True) == 143_667_240

# %% [markdown]
# ## 2. 逐层搭建 VGG19 并推理（讲义第 3、4 步）
#
# 讲义的 `build_vggnet` 一行一层：`models['conv1_1'] = basic_calc('conv', models['input'], read_wb(path, 'conv1_1'))`。
# 两种基本单元在 `aicslib.models.vgg19` 里：
#
# * `conv_layer(x, (W, b), name)`：`relu(conv2d(x, W, 步长 1, SAME) + b)`；
# * `pool_layer(x, name)`：2×2 窗口、步长 2 的池化（VGG19 本身用最大池化；风格迁移时 Gatys 等人改用平均池化，
#   梯度更平滑，后面用 `pooling="avg"`）。
#
# 下面照讲义的样子把 19 个权重层中的 16 个卷积层和 5 个池化层写出来（输入 `net['input']` 是一个 `Variable`），
# 再与库函数 `vgg19.build_vgg19` 的结果比较。

# %%
def build_vgg19_by_hand(weights, height, width):
    net = {}
    net["input"] = aics.Variable(np.zeros((1, height, width, 3), np.float32), name="input")
    net["conv1_1"] = vgg19.conv_layer(net["input"], weights["conv1_1"], "conv1_1")
    net["conv1_2"] = vgg19.conv_layer(net["conv1_1"], weights["conv1_2"], "conv1_2")
    net["pool1"] = vgg19.pool_layer(net["conv1_2"], "pool1")
    net["conv2_1"] = vgg19.conv_layer(net["pool1"], weights["conv2_1"], "conv2_1")
    net["conv2_2"] = vgg19.conv_layer(net["conv2_1"], weights["conv2_2"], "conv2_2")
    net["pool2"] = vgg19.pool_layer(net["conv2_2"], "pool2")
    net["conv3_1"] = vgg19.conv_layer(net["pool2"], weights["conv3_1"], "conv3_1")
    net["conv3_2"] = vgg19.conv_layer(net["conv3_1"], weights["conv3_2"], "conv3_2")
    net["conv3_3"] = vgg19.conv_layer(net["conv3_2"], weights["conv3_3"], "conv3_3")
    net["conv3_4"] = vgg19.conv_layer(net["conv3_3"], weights["conv3_4"], "conv3_4")
    net["pool3"] = vgg19.pool_layer(net["conv3_4"], "pool3")
    net["conv4_1"] = vgg19.conv_layer(net["pool3"], weights["conv4_1"], "conv4_1")
    net["conv4_2"] = vgg19.conv_layer(net["conv4_1"], weights["conv4_2"], "conv4_2")
    net["conv4_3"] = vgg19.conv_layer(net["conv4_2"], weights["conv4_3"], "conv4_3")
    net["conv4_4"] = vgg19.conv_layer(net["conv4_3"], weights["conv4_4"], "conv4_4")
    net["pool4"] = vgg19.pool_layer(net["conv4_4"], "pool4")
    net["conv5_1"] = vgg19.conv_layer(net["pool4"], weights["conv5_1"], "conv5_1")
    net["conv5_2"] = vgg19.conv_layer(net["conv5_1"], weights["conv5_2"], "conv5_2")
    net["conv5_3"] = vgg19.conv_layer(net["conv5_2"], weights["conv5_3"], "conv5_3")
    net["conv5_4"] = vgg19.conv_layer(net["conv5_3"], weights["conv5_4"], "conv5_4")
    net["pool5"] = vgg19.pool_layer(net["conv5_4"], "pool5")
    return net


# The lecture's step 4: a Session, assign the image to net['input'], run net['pool5'].
with aics.Graph().as_default():
    net = build_vgg19_by_hand(weights, SIZE, SIZE)
    lib_net = vgg19.build_vgg19(weights, image_shape=(SIZE, SIZE))
    with aics.Session() as sess:
        sess.run(aics.global_variables_initializer())
        sess.run([net["input"].assign(img_content), lib_net["input"].assign(img_content)])
        res, lib_res = sess.run([net["pool5"], lib_net["pool5"]])
        acts = sess.run({k: v for k, v in net.items() if k != "input"})
print("pool5:", res.shape, "| same as vgg19.build_vgg19:", np.array_equal(res, lib_res))
assert np.array_equal(res, lib_res) and res.shape == (1, SIZE // 32, SIZE // 32, 512)

rms_in = np.sqrt(np.mean(img_content ** 2))
rms = [np.sqrt(np.mean(a ** 2)) / rms_in for a in acts.values()]
plt.figure(figsize=(9, 2.4))
plt.bar(range(len(rms)), rms); plt.xticks(range(len(rms)), list(acts), rotation=90, fontsize=7)
plt.ylabel("RMS / input RMS"); plt.title(f"activation scale per layer ({WEIGHTS_KIND.split(' (')[0]})")
plt.show()
if not weight_files:
    assert all(0.2 < r < 10 for r in rms), "He init should keep activations on the input's scale"

# %% [markdown]
# ### 前向传播：时间与每层内存（224×224）
#
# 用 `RunOptions(trace_level=FULL_TRACE)` 跑一次 224×224 的推理，`RunMetadata.step_stats` 里有每个节点的耗时，
# 按层名（名字作用域 `conv1_1/…`）汇总；每层的激活内存 = 输出元素数 × 4 字节，权重内存 = 参数个数 × 4 字节。
# 浅层激活大（224×224 个位置、64 个通道），深层权重大（512×512 个 3×3 卷积核），下面打印了各自最大的一层；
# 训练时反向传播要用到前向的激活，所以要一直留着它们，激活内存才是训练时的大头。
# 下面第一张图里蓝色柱是卷积层（卷积 + 偏置 + ReLU），绿色柱是池化层：池化几乎不花时间。
#
# 浮点运算数：一个 3×3 卷积层的每个输出元素要做 $3\times3\times C_{in}$ 次乘加 (multiply-add, MAC)，
# 一次乘加算 2 次浮点运算 (FLOP)。He et al.（ResNet 论文，2016）写 VGG-19 有 "19.6 billion FLOPs"，并注明数的是乘加；
# 按浮点运算数要翻一倍——下面打印两者（本节末的练习让你自己数一遍）。

# %%
img224 = load_image(CONTENT_NAME, 224)          # (eagerly, before entering the graph)
with aics.Graph().as_default():
    net224 = vgg19.build_vgg19(weights, image_shape=(224, 224))
    with aics.Session() as sess:
        sess.run(aics.global_variables_initializer())
        sess.run(net224["input"].assign(img224))
        sess.run(net224["pool5"])                                   # warm-up
        md = aics.RunMetadata()
        t0 = time.perf_counter()
        pool5 = sess.run(net224["pool5"], options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                         run_metadata=md)
        forward_s = time.perf_counter() - t0
    shapes224 = {k: tuple(v.shape.as_list()) for k, v in net224.items() if k != "input"}

layer_ms = collections.Counter()
for node in md.node_stats():
    layer_ms[node.node_name.split("/")[0]] += node.all_end_rel_micros / 1000
layers = list(shapes224)
act_mb = [np.prod(shapes224[k]) * 4 / 2 ** 20 for k in layers]
w_mb = [(np.prod(vgg19.WEIGHT_SHAPES[k][0]) + np.prod(vgg19.WEIGHT_SHAPES[k][1])) * 4 / 2 ** 20
        if k in vgg19.WEIGHT_SHAPES else 0 for k in layers]
flops = sum(2 * np.prod(shapes224[k]) * 9 * vgg19.WEIGHT_SHAPES[k][0][2] for k in vgg19.CONV_LAYERS)
print(f"224x224 forward (conv part): {forward_s * 1000:.0f} ms, {flops / 1e9:.1f} GFLOP "
      f"({flops / 2 / 1e9:.2f} G multiply-adds, 2 FLOPs each) -> {flops / forward_s / 1e9:.1f} GFLOP/s")
print(f"activations {sum(act_mb):.1f} MB, weights {sum(w_mb):.1f} MB")
_big_act, _big_w = int(np.argmax(act_mb)), int(np.argmax(w_mb))
print(f"largest activation: {layers[_big_act]} {shapes224[layers[_big_act]]} = {act_mb[_big_act]:.1f} MB; "
      f"largest weights: {layers[_big_w]} = {w_mb[_big_w]:.1f} MB")
assert pool5.shape == (1, 7, 7, 512) and abs(sum(w_mb) - 20_024_384 * 4 / 2 ** 20) < 1e-6

fig, (a0, a1) = plt.subplots(2, 1, figsize=(10, 5), sharex=True)
x = np.arange(len(layers))
a0.bar(x, [layer_ms.get(k, 0) for k in layers], color=["C0" if k.startswith("conv") else "C2" for k in layers])
a0.legend(handles=[Patch(color="C0", label="conv layer (conv + bias + ReLU)"), Patch(color="C2", label="pooling layer")],
          loc="upper right", fontsize=8)
a0.set_ylabel("time (ms)"); a0.set_title(f"VGG19 forward at 224x224: {forward_s * 1000:.0f} ms in total")
a1.bar(x - 0.2, act_mb, 0.4, label="activations"); a1.bar(x + 0.2, w_mb, 0.4, label="weights")
a1.set_yscale("log"); a1.set_ylim(top=100); a1.set_ylabel("MB"); a1.legend(loc="upper center", ncol=2)
a1.set_xticks(x)
a1.set_xticklabels(layers, rotation=90, fontsize=7)
plt.tight_layout(); plt.show()

# %% [markdown]
# ### 练习：数清 VGG19 卷积部分的运算量（3 分）
#
# 补全 `vgg19_conv_cost(size)`：输入是 `(1, size, size, 3)` 的图像，返回 VGG19 的 16 个卷积层（不含偏置、ReLU、池化与
# 全连接层）一次前向的 `(multiply_adds, flops)`，两个 Python 整数，`flops = 2 * multiply_adds`。
#
# * 层名按顺序在 `vgg19.CONV_LAYERS` 里（`"conv1_1"` … `"conv5_4"`），每层卷积核的形状是 `vgg19.WEIGHT_SHAPES[name][0]`，
#   即 `(3, 3, C_in, C_out)`；卷积步长 1、`SAME` 填充，输出与输入同样大小；
# * 第 $b$ 段（`conv{b}_*`）之前经过了 $b-1$ 次池化，每次 2×2 窗口、步长 2、**`SAME` 填充**（`vgg19.pool_layer`）——
#   边长为奇数时想一想输出是多大；
# * 只用 Python 的算术（或 NumPy），不要搭网络、不要调用 aicslib 或 `workbook` 里的函数。

# %% nbgrader={"grade": false, "grade_id": "vgg19_conv_cost", "locked": false, "schema_version": 3, "solution": true, "task": false}
def vgg19_conv_cost(size):
    ### BEGIN SOLUTION
    macs = 0
    for name in vgg19.CONV_LAYERS:
        kh, kw, c_in, c_out = vgg19.WEIGHT_SHAPES[name][0]
        side = size
        for _ in range(int(name[4]) - 1):        # conv{b}_i: b - 1 SAME poolings before it
            side = -(-side // 2)
        macs += side * side * c_out * kh * kw * c_in
    return macs, 2 * macs
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "vgg19_conv_cost_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): against the shapes a built VGG19 graph infers for each layer (an
# independent count), for even and odd sizes (SAME pooling rounds up); Python ints; no call into
# aicslib or the workbook.
from workbook.references import style as _style_reference


def _cost_case(size):
    got = grading.no_library_calls(vgg19_conv_cost, size, what="vgg19_conv_cost",
                                   how="from vgg19.CONV_LAYERS and vgg19.WEIGHT_SHAPES with Python's arithmetic")
    grading.check(isinstance(got, tuple) and len(got) == 2,
                  f"vgg19_conv_cost({size}) returned {got!r}: expected a tuple (multiply_adds, flops)")
    grading.check(all(isinstance(v, (int, np.integer)) for v in got),
                  f"vgg19_conv_cost({size}) returned {tuple(type(v).__name__ for v in got)}: expected two integers")
    want = _style_reference.conv_cost_from_graph(size)
    grading.check(int(got[0]) == want[0],
                  f"vgg19_conv_cost({size}): expected {want[0]:,} multiply-adds, got {int(got[0]):,} "
                  f"({int(got[0]) / want[0]:.4g} times). Hint: per layer H*W*C_out*3*3*C_in, with H = W = the side "
                  f"after b-1 SAME 2x2 poolings (each rounds an odd side up)")
    grading.check(int(got[1]) == want[1], f"vgg19_conv_cost({size}): expected {want[1]:,} FLOPs, got "
                                          f"{int(got[1]):,}. Hint: one multiply-add is 2 floating-point operations")


with grading.exercise("vgg19_conv_cost"):
    _cost_case(32)
    _cost_case(224)
    ### BEGIN HIDDEN TESTS
    _cost_case(100)      # 100 -> 50 -> 25 -> 13 -> 7: SAME pooling rounds up
    _cost_case(37)
    _cost_case(1)
    grading.check(vgg19_conv_cost(224)[1] == flops,
                  f"vgg19_conv_cost(224) gives {vgg19_conv_cost(224)[1]:,} FLOPs; the traced 224x224 network above "
                  f"gives {int(flops):,}")
    ### END HIDDEN TESTS

# %%
cost_fn = grading.use("vgg19_conv_cost", vgg19_conv_cost, _style_reference.conv_cost,
                      what="count workbook.references.style.conv_cost")
macs224, flops224 = cost_fn(224)
print(f"VGG19 conv part at 224x224: {macs224 / 1e9:.2f} G multiply-adds = {flops224 / 1e9:.1f} GFLOP; "
      f"the forward pass above ran at {flops224 / forward_s / 1e9:.1f} GFLOP/s")


# %% [markdown]
# ## 3. 风格迁移的损失（讲义第 2 步：定义损失函数）
#
# 记生成图像在某一层的特征为 $F$（把 $H\times W\times C$ 的输出摊成 $M=HW$ 行、$N=C$ 列的矩阵），
# 内容图在同一层的特征为 $P$，风格图的 Gram 矩阵为 $A$：
#
# * 内容损失（`conv4_2` 层）：$L_{content}=\frac12\sum_{ij}(F_{ij}-P_{ij})^2$；
# * Gram 矩阵：$G=F^\top F$，$G_{ij}$ 是通道 $i$ 与 $j$ 在所有位置上的内积——哪些特征一起出现，与出现在哪里无关，
#   所以它描述纹理 (texture) 而丢掉了布局；
# * 一层的风格损失：$E_l=\frac{1}{4N_l^2M_l^2}\sum_{ij}(G_{ij}-A_{ij})^2$，
#   总风格损失 $L_{style}=\sum_l w_lE_l$，取 `conv1_1`、`conv2_1`、`conv3_1`、`conv4_1`、`conv5_1` 五层，$w_l=1/5$；
# * 总损失 $L_{total}=\alpha L_{content}+\beta L_{style}$。
#
# ### 练习：一层的风格损失
#
# 补全 `my_style_layer_loss(features, target_gram)`：`features` 是形状 `(1, H, W, C)` 的 float32 张量，`target_gram`
# 是 `(C, C)` 的风格 Gram 矩阵 $A$，返回 float32 的标量张量 $E_l$。只用 aicslib 的算子（`aics.reshape`、`aics.matmul`
# （参数 `transpose_a`）、`aics.square`、`aics.reduce_sum` …），这样它在动态图和静态图里都能用、能求导。
# 形状从 `features.shape.as_list()` 取。不要调用 `aicslib.models.style_transfer` 里的现成实现。

# %% nbgrader={"grade": false, "grade_id": "style_layer_loss", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_style_layer_loss(features, target_gram):
    ### BEGIN SOLUTION
    _, h, w, c = features.shape.as_list()
    f = aics.reshape(features, [h * w, c])                 # F: M x N
    gram = aics.matmul(f, f, transpose_a=True)             # G = F^T F: N x N
    return aics.reduce_sum(aics.square(gram - target_gram)) / float(4 * c * c * (h * w) ** 2)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "style_layer_loss_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): a float32 scalar tensor equal, within float32 rounding, to the float64
# NumPy formula (workbook.references.style), eagerly and inside a graph (features fed through a
# placeholder, so a value computed with NumPy beside the graph fails); no call into
# aicslib.models.style_transfer's own functions (gram_matrix, style_layer_loss, ...) or the workbook's.
import inspect as _inspect

from workbook.references import style as _style_reference

_FORBIDDEN = {name for _module in (style_transfer, _style_reference) for name, obj in vars(_module).items()
              if _inspect.isfunction(obj) and obj.__module__ == _module.__name__}
_HINT = ("F is the (H*W) x C matrix of the feature map, G = F^T F is C x C (channels against channels); "
         "E_l = sum of (G - A)^2 over i and j, divided by 4 N^2 M^2 with N = C channels and M = H*W positions")


def _loss_tensor(features, target, what):
    out, called = grading.library_calls(my_style_layer_loss, features, target)
    used = sorted(called & _FORBIDDEN)
    grading.check(not used, f"my_style_layer_loss calls {', '.join(used)}: build the loss yourself from "
                            f"aicslib's ops (reshape, matmul, square, reduce_sum, ...)")
    grading.check(aics.is_tensor(out), f"my_style_layer_loss {what} returned {type(out).__name__}: return a "
                                       f"tensor built with aicslib's ops")
    grading.check(out.shape.as_list() == [], f"my_style_layer_loss {what} returned a tensor of shape "
                                             f"{out.shape.as_list()}: E_l is a scalar (summed over i and j)")
    grading.check(out.dtype == aics.float32, f"my_style_layer_loss {what} returned a {out.dtype.name} tensor: "
                                             f"keep it float32 like the features (the total loss adds it to "
                                             f"float32 losses)")
    return out


def _check_value(got, f, a, what):
    want = _style_reference.layer_loss(f, a)
    ratio = f" ({float(got) / want:.6g} times the expected value)" if want and np.isfinite(got) else ""
    grading.check(abs(float(got) - want) <= 1e-4 * abs(want),
                  f"E_l {what}: expected {want!r}, got {float(got)!r}{ratio}. Hint: {_HINT}")


def _check_eager(h, w, c, seed, relu_scale=None):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((1, h, w, c))
    a = rng.standard_normal((c, c))
    if relu_scale:         # like a VGG layer: ReLU outputs, and a style Gram of the same kind
        f = np.maximum(f, 0) * relu_scale
        g = np.maximum(rng.standard_normal((h * w, c)), 0) * relu_scale
        a = g.T @ g
    f, a = f.astype(np.float32), a.astype(np.float32)
    what = f"for features of shape {f.shape} (eager)"
    out = _loss_tensor(aics.constant(f), aics.constant(a), what)
    _check_value(float(out.numpy()), f, a, what)


with grading.exercise("style_layer_loss"):
    _check_eager(3, 4, 2, 0)
    _check_eager(5, 5, 3, 1)
    with aics.Graph().as_default():
        _ph = aics.placeholder(aics.float32, shape=(1, 4, 6, 3), name="features")
        _a = np.random.default_rng(2).standard_normal((3, 3)).astype(np.float32)
        _loss = _loss_tensor(_ph, aics.constant(_a), "on a (1, 4, 6, 3) placeholder (graph)")
        grading.check(_loss.graph is _ph.graph, "my_style_layer_loss must build the loss in the placeholder's "
                                                "graph, with aicslib's ops")
        with aics.Session() as _s:
            for _seed in (3, 4):
                _f = np.random.default_rng(_seed).standard_normal((1, 4, 6, 3)).astype(np.float32)
                _check_value(_s.run(_loss, {_ph: _f}), _f, _a, f"fed through a placeholder (graph, seed {_seed})")
    ### BEGIN HIDDEN TESTS
    _check_eager(1, 7, 5, 5)          # M = 7, N = 5: the normalisation must use N = C and M = H*W
    _check_eager(6, 2, 1, 6)          # one channel: F F^T (M x M) broadcasts against A and must still fail
    _check_eager(16, 16, 64, 7, relu_scale=30.0)
    _rng = np.random.default_rng(7)
    _f = _rng.standard_normal((1, 3, 3, 4)).astype(np.float32)
    _a = (_f.reshape(9, 4).T @ _f.reshape(9, 4)).astype(np.float32)
    _zero = float(_loss_tensor(aics.constant(_f), aics.constant(_a), "with A the features' own Gram").numpy())
    grading.check(abs(_zero) < 1e-6, f"E_l with A = the features' own Gram matrix: expected 0, got {_zero}")
    ### END HIDDEN TESTS


# %% [markdown]
# 库里的参考实现 `style_transfer.gram_matrix` / `style_layer_loss` / `content_loss` 与上面的公式相同
# （`tests/models/test_vgg19.py` 用 NumPy 逐元素检查）。后面的训练用它们，所以即使练习还没做完，也能一直运行到底。

# %%
f_demo = aics.constant(np.random.default_rng(8).standard_normal((1, 4, 5, 3)).astype(np.float32))
g_demo = style_transfer.gram_matrix(f_demo).numpy()
print("Gram matrix of a (1, 4, 5, 3) feature map:", g_demo.shape, "| symmetric:", np.allclose(g_demo, g_demo.T))
assert g_demo.shape == (3, 3) and np.allclose(g_demo, g_demo.T, atol=1e-5)

# %% [markdown]
# ## 4. TF1：讲义的 `train_vgg`
#
# 和讲义一样：先建网络（输入是 `Variable`，权重是常量，所以**唯一的可训练变量就是输入图像**）；用 `sess.run`
# 分别求内容图与风格图的特征，作为损失里的常量目标；`AdamOptimizer(2.0).minimize(total_loss)` 得到 `train_op`；
# 把初始图像（讲义的 `get_random_img`：噪声与内容图按 0.6 : 0.4 混合）赋给输入；循环 `sess.run(train_op)`，
# 每 `REPORT` 步打印代价、记下中间图像。
#
# 注意：讲义建的是整个 VGG19（到 `pool5`），而损失只用到 `conv5_1`。会话运行 `train_op` 时只执行它依赖的节点，
# `conv5_2` 之后的层被剪枝 (prune) 掉，不花时间。

# %%
ALPHA, BETA = 1.0, 10.0      # the content/style ratio alpha/beta = 0.1 (see section 7)

graph = aics.Graph()
with graph.as_default():
    models = vgg19.build_vgg19(weights, image_shape=(SIZE, SIZE), pooling="avg")
    sess = aics.Session(graph=graph)
    sess.run(aics.global_variables_initializer())
    # Targets (the lecture's loss(sess, models, img_content, img_style)): run the net on the
    # content image for its conv4_2 features, on the style image for its Gram matrices.
    sess.run(models["input"].assign(img_content))
    content_feats = sess.run({n: models[n] for n, _ in style_transfer.CONTENT_LAYERS})
    sess.run(models["input"].assign(img_style))
    style_grams = sess.run({n: style_transfer.gram_matrix(models[n]) for n, _ in style_transfer.STYLE_LAYERS})
    targets = {"content": content_feats, "gram": style_grams}
    total_loss, content_loss, style_loss = style_transfer.total_loss(models, targets, ALPHA, BETA)
    optimizer = aics.train.AdamOptimizer(2.0)
    train_op = optimizer.minimize(total_loss)
    img_random = style_transfer.initial_image(img_content, seed=SEED, noise_ratio=0.6)
    sess.run(aics.global_variables_initializer())
    sess.run(models["input"].assign(img_random))
    print("trainable variables:", [v.name for v in aics.trainable_variables()])
    assert [v.name for v in aics.trainable_variables()] == ["input:0"]

costs, snapshots = [], [(0, img_random.copy())]
t0 = time.perf_counter()
for i in tqdm(range(STEPS), desc="style transfer (Session)"):
    sess.run(train_op)
    if i % REPORT == 0 or i == STEPS - 1:
        img_transfer = sess.run(models["input"])
        cost = sess.run(total_loss)
        print(f"Iteration {i}  cost: {cost:.4g}")
        costs.append((i, cost))
        snapshots.append((i + 1, img_transfer))
train_s = time.perf_counter() - t0
print(f"{STEPS} steps in {train_s:.1f} s ({train_s / STEPS * 1000:.0f} ms/step at {SIZE}x{SIZE})")
assert costs[-1][1] < costs[0][1], "the cost must go down"

fig, axes = plt.subplots(1, len(snapshots), figsize=(1.8 * len(snapshots), 2.2))
for ax, (step, img) in zip(axes, snapshots):
    ax.imshow(vgg19.deprocess_image(img)); ax.set_title(f"step {step}", fontsize=8); ax.axis("off")
plt.show()
plt.figure(figsize=(4, 2.4)); plt.plot(*zip(*costs), "o-"); plt.yscale("log")
plt.xlabel("step"); plt.ylabel("total loss"); plt.show()

# %% [markdown]
# ## 5. TF2：`GradientTape` + `aics.function`
#
# 动态图写法：图像是一个 `aics.Variable`；前向与损失写成 Python 函数，用 `aics.function` 追踪 (trace) 成图，
# 之后每次调用直接运行图；`GradientTape` 记录这次调用，`tape.gradient` 求出对图像的梯度，
# 同一个 `AdamOptimizer(2.0)` 用 `apply_gradients` 更新图像。`EagerStyleTransfer` 就是这样写的。
# 同样的种子、同样的初始图像，几步之后两种方式的图像应当一致（只差浮点舍入）。
# TF1 这边用库里的 `SessionStyleTransfer`（把第 4 节的代码收进一个类）；它第一步之后的图像应与第 4 节记下的逐位相同。

# %%
CHECK_STEPS = 3
tf1 = style_transfer.SessionStyleTransfer(img_content, img_style, weights, alpha=ALPHA, beta=BETA, seed=SEED)
tf2 = style_transfer.EagerStyleTransfer(img_content, img_style, weights, alpha=ALPHA, beta=BETA, seed=SEED)
for step in range(CHECK_STEPS):
    tf1.step()
    if step == 0:
        assert snapshots[1][0] == 1 and np.array_equal(tf1.image(), snapshots[1][1]), \
            "SessionStyleTransfer should repeat section 4's first step exactly"
    t0 = time.perf_counter()
    tf2.step()
    print(f"step {step}: eager {time.perf_counter() - t0:.2f} s (the first call traces the function), "
          f"max |TF1 - TF2| = {np.abs(tf1.image() - tf2.image()).max():.2e}")
assert np.allclose(tf1.image(), tf2.image(), atol=1e-3)
print("losses (total, content, style): TF1", np.round(tf1.losses(), 1), " TF2", np.round(tf2.losses(), 1))

# %% [markdown]
# ## 6. 一步训练的时间花在哪里
#
# 用 `RunMetadata` 记录一次 `sess.run(train_op)`，把每个节点按名字作用域和算子类型归类：卷积（前向 `Conv2D` 与反向
# `Conv2DBackpropInput`，含偏置）、ReLU、池化、损失（Gram 矩阵的矩阵乘等）、Adam 更新；名字以 `gradients/`
# 开头的是反向传播。（若图优化把卷积、偏置和 ReLU 融合成一个 `_FusedConv2D`，它算作卷积。）

# %%
def layer_type(node):
    scope = node.node_name.split("/")
    backward = scope[0] == "gradients"
    head = scope[1] if backward and len(scope) > 1 else scope[0]
    if head.startswith("Adam") or node.op.startswith("ResourceApply"):
        kind = "adam"
    elif head.startswith("pool"):
        kind = "pool"
    elif head.endswith("_loss"):
        kind = "loss"
    elif head.startswith("conv"):
        kind = "relu" if "Relu" in node.op else "conv"
    else:
        kind = "other"
    return kind, "backward" if backward else "forward"


sess.run(train_op)                                    # warm-up
md_step = aics.RunMetadata()
t0 = time.perf_counter()
sess.run(train_op, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md_step)
step_s = time.perf_counter() - t0
split = collections.defaultdict(float)
for node in md_step.node_stats():
    split[layer_type(node)] += node.all_end_rel_micros / 1000
kinds = ["conv", "relu", "pool", "loss", "adam", "other"]
fwd = [split[(k, "forward")] for k in kinds]
bwd = [split[(k, "backward")] for k in kinds]
for k, a, b in zip(kinds, fwd, bwd):
    print(f"{k:6s} forward {a:8.2f} ms   backward {b:8.2f} ms")
print(f"one training step at {SIZE}x{SIZE}: {step_s * 1000:.0f} ms wall, "
      f"{sum(fwd) + sum(bwd):.0f} ms in kernels")
assert split[("conv", "forward")] > 0 and split[("conv", "backward")] > 0 and split[("loss", "forward")] > 0
plt.figure(figsize=(6, 2.6))
plt.bar(kinds, fwd, label="forward"); plt.bar(kinds, bwd, bottom=fwd, label="backward")
plt.ylabel("ms"); plt.title(f"one training step by layer type ({SIZE}x{SIZE})"); plt.legend(); plt.show()

# %% [markdown]
# ## 7. 动手试一试：α/β 越大，内容越具象
#
# 讲义用 $10^{-4}$ 到 $10^{-1}$ 四个比值说明：内容损失的权重 α 相对风格权重 β 越大，结果越像内容图；越小，越像风格图的纹理。
# 这里先为几个比值各训练一张小图（`AICS_FAST` 时 24×24、几步），并排显示。
# 几个比值共用一张图：α、β 是图里不可训练的变量，`reset(alpha, beta)` 重新初始化输入图像与 Adam 的状态后再训练。
# 随机权重下各损失的量级与 ImageNet 权重不同，所以“起作用”的比值区间也会平移：这里取 $10^{-2}$ 到 $10^{2}$。
# 训练结束时，α/β 越大，内容损失越小、风格损失越大（下面用断言检查）。

# %%
RATIOS = [1e-2, 1e-1, 1.0, 10.0, 100.0]
w_content = load_image(CONTENT_NAME, WIDGET_SIZE)
w_style = load_image(STYLE_NAME, WIDGET_SIZE)
results = {}
run = style_transfer.SessionStyleTransfer(w_content, w_style, weights, seed=SEED)   # one graph for all
for r in tqdm(RATIOS, desc="alpha/beta ratios"):
    run.reset(alpha=r, beta=1.0)            # same start image, fresh Adam state, new alpha/beta
    run.run(WIDGET_STEPS)
    results[r] = (vgg19.deprocess_image(run.image()), run.losses())
run.close()
for r in RATIOS:
    print(f"alpha/beta = {r:<6g} content loss {results[r][1][1]:10.4g}   style loss {results[r][1][2]:10.4g}")
assert results[RATIOS[-1]][1][1] < results[RATIOS[0]][1][1], "larger alpha/beta: closer to the content"
assert results[RATIOS[-1]][1][2] > results[RATIOS[0]][1][2], "smaller alpha/beta: closer to the style"
fig, axes = plt.subplots(1, len(RATIOS) + 2, figsize=(1.7 * (len(RATIOS) + 2), 2.3))
axes[0].imshow(vgg19.deprocess_image(w_content)); axes[0].set_title("content", fontsize=8)
axes[1].imshow(vgg19.deprocess_image(w_style)); axes[1].set_title("style", fontsize=8)
for ax, r in zip(axes[2:], RATIOS):
    ax.imshow(results[r][0]); ax.set_title(f"α/β={r:g}", fontsize=8)
for ax in axes:
    ax.set_xticks([]); ax.set_yticks([])
plt.show()

# %% [markdown]
# 上面一排是预先算好的几个比值。下面的小部件对**任意**比值现算：滑块每停在一个新的 α/β 上，就从同一张初始图像、
# 新的 Adam 状态出发，以这个权重比训练 `LIVE_STEPS` 步（小图，几秒钟），显示得到的图像，并画出加权后的两项损失
# $\alpha L_{content}$ 与 $\beta L_{style}$ 的大小（对数坐标）——开始时与训练后，标题给出内容项在总损失中的占比。
# 大的那一项主导梯度：
# 风格项占优时图像先学纹理与颜色，内容项占优时图像留在内容图附近。同一个比值再选一次，显示的是同一次计算的结果。

# %%
LIVE_SIZE, LIVE_STEPS = 24, (4 if FAST else 12)
live_content = load_image(CONTENT_NAME, LIVE_SIZE)
live = style_transfer.SessionStyleTransfer(live_content, load_image(STYLE_NAME, LIVE_SIZE), weights, seed=SEED)
live_results = {}            # alpha/beta -> (image, weighted terms at the start, after LIVE_STEPS steps)


def weighted_terms(r):
    _, content, style = live.losses()
    return np.array([r * content, style])          # alpha * L_content, beta * L_style (beta = 1)


def train_at(r):
    if r not in live_results:
        live.reset(alpha=r, beta=1.0)              # same start image, fresh Adam state
        start = weighted_terms(r)
        live.run(LIVE_STEPS)
        live_results[r] = (vgg19.deprocess_image(live.image()), start, weighted_terms(r))
    return live_results[r]


out = widgets.Output()
ratio = widgets.FloatLogSlider(value=1.0, base=10, min=-2, max=2, step=0.25, readout_format=".3g",
                               description="α/β (content weight / style weight)",
                               style={"description_width": "initial"}, layout=widgets.Layout(width="480px"))


def show_ratio(_=None):
    r = float(ratio.value)
    with out:
        out.clear_output(wait=True)
        print(f"training {LIVE_STEPS} steps at α/β = {r:.3g} ({LIVE_SIZE}x{LIVE_SIZE}) ...")
        img, start, end = train_at(r)
        out.clear_output(wait=True)
        fig, axes = plt.subplots(1, 4, figsize=(11, 2.6), gridspec_kw={"width_ratios": [1, 1, 1, 2.4]})
        for ax, im, title in zip(axes, (vgg19.deprocess_image(live_content), vgg19.deprocess_image(live.init), img),
                                 ("content", "start image", f"after {LIVE_STEPS} steps")):
            ax.imshow(im); ax.set_title(title, fontsize=8); ax.set_xticks([]); ax.set_yticks([])
        ax = axes[3]
        xs = np.arange(2)
        ax.bar(xs - 0.2, start, 0.4, color="0.6", label="start image")
        ax.bar(xs + 0.2, end, 0.4, color="C0", label=f"after {LIVE_STEPS} steps")
        ax.set_yscale("log"); ax.set_xticks(xs, ["α·L_content", "β·L_style"]); ax.set_ylabel("weighted loss term")
        ax.set_ylim(top=max(start.max(), end.max()) * 30)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
        ax.set_title(f"α/β = {r:.3g}: the content term is {start[0] / start.sum():.1%} of the total at the start",
                     fontsize=8)
        plt.tight_layout(); plt.show()
        print(f"α/β = {r:.3g}: α·L_content {start[0]:.3g} -> {end[0]:.3g}, β·L_style {start[1]:.3g} -> {end[1]:.3g}")


ratio.observe(show_ratio, "value")
display(widgets.VBox([ratio, out]))
show_ratio()

# %%
_img_lo, _, _end_lo = train_at(0.01)
_img_hi, _, _end_hi = train_at(100.0)
assert _end_hi[0] / _end_hi.sum() > _end_lo[0] / _end_lo.sum(), "a larger alpha/beta gives the content term more weight"

# %% [markdown]
# ## 小结
#
# * VGG19 按讲义的写法逐层搭出，层名 `conv1_1` … `pool5`；参数量见第 1 节的输出。
#   权重可从 `vgg19.npy`（pickle，须显式信任）、`.npz`、MatConvNet `.mat`（需要 SciPy）读入；没有文件时用 He 正态随机初始化。
# * 224×224 的一次前向的浮点运算数 (FLOPs) 见第 2 节的输出；浅层的激活最占内存，深层的权重最占内存。
# * 风格迁移训练的是**输入图像**：内容损失比较特征本身，风格损失比较 Gram 矩阵（纹理统计量）；
#   TF1（`Session` + `AdamOptimizer(2.0).minimize`）与 TF2（`GradientTape` + `aics.function`）两种写法结果一致。
# * 一步训练里，卷积的前向与反向占绝大部分时间；损失里的 Gram 矩阵乘在小图上也不可忽略。
# * 随机权重能迁移颜色与纹理，但内容只剩边缘与色块；换上 ImageNet 权重（放到 `data/vgg19/`）效果会好得多。
# * 速度（`benchmarks/bench_vgg19.py`，224×224，批大小 1，2 核 CPU，机器有其他负载时测得，仅供参考）：
#   卷积部分前向 aicslib 约 0.35 s（Session 与动态图相同），是 NumPy im2col + GEMM 参考实现吞吐量的约 3.5 倍
#   （aicslib 对 3×3 卷积选 Winograd 并多线程分块）；一步风格迁移 Session 约 1.7 s（NumPy 参考的 2.2 倍），
#   动态图约 3.1 s——`aics.function` 的梯度函数会把前向再算一遍。装了 PyTorch 时脚本改与 PyTorch CPU 比较（目标 ≥ 0.7 倍）。
