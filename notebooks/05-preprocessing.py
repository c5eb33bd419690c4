# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 图像预处理：与 TensorFlow / Keras 逐位一致
#
# **前置章节 (prerequisites)**：[00 framework-tour](00-framework-tour.ipynb)、[03 training-workflow](03-training-workflow.ipynb)
#
# **对应习题**：习题 5.4（在 TensorFlow 源码的 `python/keras` 中找到 ImageNet 数据预处理的代码，
# 学习常用的数据预处理方法，并列举 Keras 实现的预处理方法）；**第三次作业 第 1 题**（从 ImageNet
# 验证集选一张图，先调整到 256×256 再居中裁剪到 224×224；另一种做法是先居中裁剪到 0.875 倍宽高，再调整到 224×224）。
#
# **学习目标**
#
# 1. 用 `aics.io.read_file` + `aics.image.decode_image` 把图像文件读成 `uint8` 张量 (tensor)，用
#    `convert_image_dtype` 按 dtype（而不是按某个像素的值）换算到 $[0, 1]$；
# 2. 完成作业第 1 题的两条流水线 (pipeline)：resize→crop 与 crop→resize，比较结果，解释 0.875 = 224/256 的来历；
# 3. 弄清 `tf.image.resize` 的精确算术：半像素中心 (half-pixel centers)、TF1 的 `align_corners`、抗混叠 (antialias)；
# 4. 掌握 Keras `preprocess_input` 的三种模式 (`caffe` / `tf` / `torch`)、各自对应的模型，以及用错模式时输入统计量的变化；
# 5. 自己用 NumPy 写出与 `tf.image.resize` 一致的双线性插值。
#
# 下一章 `06-input-pipeline.ipynb` 接着本章：把这些算子搭成训练用的输入流水线（在线数据增强、序列填充、交互控件），
# 并练习 ImageNet 评测的“短边缩放到 256、再居中裁剪 224”。
#
# **运行时间**见下面第一个单元格的输出。
#
# **练习**（自动评分，共 3 分）：第 5 节手写双线性插值。没做完也能一直运行到底（测试单元格会说明哪里没通过）。
#
# 本章代码在 `aicslib/ops/image_ops.py`（算子定义与 Python API，对应 TF 的 `core/ops/image_ops.cc` 和
# `python/ops/image_ops_impl.py`）、`aicslib/kernels/resize_ops.py`、`colorspace_ops.py`、`decode_image_op.py`（NumPy kernel，对应
# `core/kernels/image/*.cc`）以及 `aicslib/keras/`（与 Keras 的模块路径相同）。

# %%
import pathlib
import random

import numpy as np
import matplotlib.pyplot as plt

import aicslib as aics
from aicslib import flags
from aicslib.kernels import resize_ops              # the raw NumPy kernel, for a cross-check
from aicslib.keras.applications import imagenet_utils
from aicslib.keras.applications.imagenet_utils import preprocess_input
from workbook import grading, run_times

run_times.show("preprocessing")
SEED = 2022
np.random.seed(SEED)
aics.random.set_seed(SEED)
# The sample photographs live in the repository's data/images; the path is resolved from the aicslib
# package (not from the working directory), so the notebook runs from any folder (nbgrader's too).
DATA = pathlib.Path(aics.datasets.images.default_path())
FILES = aics.datasets.images.image_files()
print("aicslib", aics.__version__, "| FAST:", flags.FAST, "| images:", [f.name for f in FILES])

# %% [markdown]
# ## 1. 读入一张图：先修好作业原代码里的两个隐患
#
# 作业原代码选图用的是
#
# ```python
# chosen = img_list[random.randint(0, len(img_list))]
# ```
#
# Python 的 `random.randint(a, b)` **包含两端**，所以有 $1/(n+1)$ 的概率取到 `len(img_list)`，越界抛出
# `IndexError`。NumPy 的 `Generator.integers(low, high)` 不含 `high`，`random.randrange(n)` 也不含，二者都正确。
# 下面先数一数原写法越界的频率，再用带种子的 `np.random.default_rng` 选图（可复现）。

# %%
n = len(FILES)
rnd = random.Random(0)
draws = [rnd.randint(0, n) for _ in range(10_000)]
out_of_range = sum(d == n for d in draws) / len(draws)
print(f"random.randint(0, {n}) returns {n} (out of range) in {out_of_range:.1%} of draws; expected {1/(n+1):.1%}")
assert abs(out_of_range - 1 / (n + 1)) < 0.02
try:
    FILES[n]
except IndexError as e:
    print("the seed homework would crash with: IndexError:", e)


def choose_image(files, seed):
    """Uniform choice with an exclusive upper bound, reproducible through the seed."""
    rng = np.random.default_rng(seed)
    return files[int(rng.integers(0, len(files)))]


chosen = choose_image(FILES, SEED)
raw = aics.io.read_file(str(chosen))              # scalar string tensor: the file's bytes
img_u8 = aics.image.decode_image(raw, channels=3)  # uint8 [H, W, 3]
print(chosen.name, raw.dtype, len(raw.numpy()), "bytes ->", img_u8.shape, img_u8.dtype)
assert img_u8.dtype == aics.uint8 and img_u8.shape.as_list()[-1] == 3

# %% [markdown]
# 第二个隐患是判断取值范围的方式：
#
# ```python
# img_reshape = tf.image.resize(img_tensor, [256, 256])
# if img_tensor[0][0][0] > 1:
#     img_reshape /= 255
# ```
#
# 它只看**左上角一个像素的红色通道**。`tf.image.resize` 对 `uint8` 输入返回的是 $[0, 255]$ 的 `float32`，
# 只要左上角恰好是黑色（ImageNet 里加了黑边的 letterbox 图片很常见），就不会除以 255，
# `plt.imshow` 拿到 $[0,255]$ 的浮点数就会把几乎整张图截成白色。正确的做法是**看 dtype**：
# `convert_image_dtype(uint8 → float32)` 恒定地乘以 $1/255$。

# %%
h, w = img_u8.shape.as_list()[:2]
letterbox = aics.image.pad_to_bounding_box(img_u8, 20, 0, h + 40, w)   # black bars top and bottom


def seed_homework_reshape(img_tensor):          # the homework's code, verbatim logic
    img_reshape = aics.image.resize(img_tensor, [256, 256])
    if img_tensor[0][0][0] > 1:
        img_reshape /= 255
    return img_reshape


def to_float(img):                              # decide by dtype, not by a pixel value
    return aics.image.convert_image_dtype(img, aics.float32)


bad = seed_homework_reshape(letterbox).numpy()
good = aics.image.resize(to_float(letterbox), [256, 256]).numpy()
print("seed code on a letterboxed image: range", bad.min(), bad.max())
print("convert_image_dtype first:         range", good.min(), good.max())
assert bad.max() > 1.0 and good.max() <= 1.0
fig, ax = plt.subplots(1, 2, figsize=(8, 3.5))
ax[0].imshow(np.clip(bad, 0, 1)); ax[0].set_title("seed code: not divided by 255")
ax[1].imshow(good); ax[1].set_title("convert_image_dtype: [0, 1]")
for a in ax: a.axis("off")
plt.show()


# %% [markdown]
# ## 2. 作业第 1 题：resize→crop 与 crop→resize
#
# * **流水线 A**：`resize` 到 256×256，再 `central_crop`/`resize_with_crop_or_pad` 居中裁剪到 224×224；
# * **流水线 B**：先居中裁剪出宽、高各 0.875 倍的区域，再 `resize` 到 224×224。
#
# 两条流水线都先用 `convert_image_dtype` 转成 $[0,1]$ 的 `float32`。`aics.image.resize` 与 TF2 的
# `tf.image.resize` 一样：双线性插值 (bilinear)、半像素中心，输出 `float32`。

# %%
def pipeline_resize_then_crop(img, size=256, crop=224):
    x = aics.image.resize(to_float(img), [size, size])
    return aics.image.resize_with_crop_or_pad(x, crop, crop)


def pipeline_crop_then_resize(img, fraction=0.875, out=224):
    x = aics.image.central_crop(to_float(img), fraction)
    return aics.image.resize(x, [out, out])


a = pipeline_resize_then_crop(img_u8).numpy()
b = pipeline_crop_then_resize(img_u8).numpy()
diff = np.abs(a - b)
print("A:", a.shape, a.dtype, "| B:", b.shape, b.dtype)
print(f"mean |A - B| = {diff.mean():.4f}, max = {diff.max():.3f}")
assert a.shape == b.shape == (224, 224, 3) and a.dtype == b.dtype == np.float32
assert 0.0 <= a.min() and a.max() <= 1.0 and 0.0 <= b.min() and b.max() <= 1.0
assert diff.mean() < 0.05          # same field of view: only resampling differs

fig, ax = plt.subplots(1, 4, figsize=(15, 4))
ax[0].imshow(img_u8.numpy()); ax[0].set_title(f"original {h}x{w}")
ax[1].imshow(a); ax[1].set_title("A: resize 256 -> crop 224")
ax[2].imshow(b); ax[2].set_title("B: crop 0.875 -> resize 224")
im = ax[3].imshow(diff.mean(-1), cmap="magma"); ax[3].set_title("|A - B| (mean over RGB)")
plt.colorbar(im, ax=ax[3], fraction=0.046)
for x_ in ax: x_.axis("off")
plt.show()

# %% [markdown]
# **哪一种保留了更多的物体？** 两者看到的是原图**同一块中央区域**：A 在 256 的边长上裁掉两边各 16 像素，
# 留下 $224/256 = 0.875$；B 直接在原图上留下中央 0.875。所以两者都丢掉了原图四周各 $(1-0.875)/2$ 的内容，
# 物体保留得一样多；差别只来自重采样：
#
# * A 先把**整张图**缩小再裁剪，B 先裁剪再缩小。双线性插值不抗混叠时，两次采样网格对齐到不同的原点；
# * B 的裁剪框要取整：TF 的 `central_crop` 用 `start = int((h - h·0.875)/2)`，保留 `h - 2·start` 行，
#   比 $0.875h$ 最多多出 1 行（下一个单元格验证）；
# * 两者都把非正方形的原图**压扁**成正方形（纵横比改变）。ImageNet 评测的标准做法是**按短边**缩放到 256、
#   保持纵横比，再居中裁 224——下一章 `06-input-pipeline.ipynb` 的练习就实现它。
#
# **为什么是 0.875？** 224/256 = 0.875：AlexNet/VGG/ResNet 的评测协议“短边缩放到 256，中心裁 224”，
# 等价于保留中央 87.5%；TF-slim 的 Inception 预处理 `central_crop(image, central_fraction=0.875)`、
# PyTorch/timm 的 `crop_pct=0.875` 说的都是同一个比例。作业的两种写法正是同一协议的两种实现顺序。

# %%
# B's crop box in original pixels vs. A's (16/256 .. 240/256 of each side)
hs, ws = int((h - h * 0.875) / 2), int((w - w * 0.875) / 2)
box_b = (hs, h - hs, ws, w - ws)
box_a = (h * 16 / 256, h * 240 / 256, w * 16 / 256, w * 240 / 256)
print("B keeps rows %d..%d, cols %d..%d" % box_b)
print("A keeps rows %.2f..%.2f, cols %.2f..%.2f (in original coordinates)" % box_a)
print(f"A crops {(256 - 224) // 2} pixels off each side of 256, keeping {224 / 256} of each side: "
      f"both pipelines lose {(1 - 224 / 256) / 2:.2%} of the original on every side")
assert all(abs(p - q) < 1.0 for p, q in zip(box_a, box_b))

# %% [markdown]
# 同一条流水线也可以写成 TF1 风格的静态图：文件名是占位符，图像的高和宽在构图时未知（形状 `[?, ?, 3]`），
# `central_crop` 用形状算子在运行时计算裁剪框，`resize` 之后形状又变成确定的 `[224, 224, 3]`。
# 一个图、一个会话，就能处理所有图片，结果与立即执行完全相同。

# %%
g_hw = aics.Graph()
with g_hw.as_default():
    filename = aics.placeholder(aics.string, [], name="filename")
    decoded = aics.image.decode_image(aics.io.read_file(filename), channels=3, expand_animations=False)
    b_graph = aics.image.resize(aics.image.central_crop(to_float(decoded), 0.875), [224, 224])
print("decoded:", decoded.shape, "-> pipeline B:", b_graph.shape)
with aics.Session(graph=g_hw) as sess:
    outs = {f.name: sess.run(b_graph, {filename: str(f)}) for f in FILES}
assert b_graph.shape.as_list() == [224, 224, 3]
np.testing.assert_array_equal(outs[chosen.name], b)
print({k: v.shape for k, v in outs.items()})

# %% [markdown]
# ## 3. `resize` 的精确算术：半像素中心、`align_corners` 与抗混叠
#
# 输出像素 $i$ 从输入坐标 $x$ 处插值，$s=\text{in}/\text{out}$：
#
# | 约定 | 采样坐标 $x$ | 在哪里 |
# |---|---|---|
# | TF1 默认（legacy） | $i\cdot s$ | `aics.compat.v1.image.resize_bilinear(...)` |
# | TF1 `align_corners=True` | $i\cdot(\text{in}-1)/(\text{out}-1)$ | 同上，四角像素中心对齐 |
# | TF2（半像素中心） | $(i+0.5)\cdot s-0.5$ | `aics.image.resize`，即 `tf.image.resize` |
#
# TF1 默认的采样坐标 $i\cdot s$ 比半像素中心的 $(i+0.5)\cdot s-0.5$ 小 $(s-1)/2$：采样网格向左上偏了 $(s-1)/2$
# 个输入像素（缩小时 $s>1$），于是输出里的**图像内容向右下**移动了同样的距离，这是 TF2 改默认值的原因。缩小图像时，双线性插值只看
# 最近的 2×2 个像素，其余像素被跳过，高频纹理会产生混叠 (aliasing)；`antialias=True` 改用
# `ScaleAndTranslate` 核，把三角形核放宽 $s$ 倍，让每个输入像素都参与，相当于先低通滤波。下面把一条 8 像素的斜坡缩放到 5 像素，
# 并核对：`aics` 的结果与本库的 NumPy kernel 完全相同；PyTorch 的 `F.interpolate(align_corners=False)`
# 用的是与 TF2 相同的采样位置和权重，只差 float32 运算顺序带来的舍入（交叉验证见 `tests/image/test_image_ops.py`）。
# 最后把一幅波带片 (zone plate，圆环频率随半径增大) 缩小 4 倍：不抗混叠时，超过新奈奎斯特频率的外圈变成
# 莫尔纹 (Moiré pattern)；抗混叠后那里是平坦的灰色。

# %%
ramp = np.arange(8, dtype=np.float32).reshape(1, 1, 8, 1)
v1 = aics.compat.v1.image
rows = {
    "TF1 legacy": v1.resize_bilinear(ramp, [1, 5]).numpy().ravel(),
    "TF1 align_corners": v1.resize_bilinear(ramp, [1, 5], align_corners=True).numpy().ravel(),
    "TF2 half-pixel": aics.image.resize(ramp, [1, 5]).numpy().ravel(),
    "TF2 antialias": aics.image.resize(ramp, [1, 5], antialias=True).numpy().ravel(),
}
for k, v in rows.items():
    print(f"{k:18s}", np.round(v, 4))
s = 8 / 5
np.testing.assert_allclose(rows["TF2 half-pixel"], (np.arange(5) + 0.5) * s - 0.5, rtol=1e-6)
np.testing.assert_allclose(rows["TF1 legacy"], np.minimum(np.arange(5) * s, 7), rtol=1e-6)
np.testing.assert_allclose(rows["TF1 align_corners"], np.arange(5) * 7 / 4, rtol=1e-6)
np.testing.assert_array_equal(aics.image.resize(img_u8, [100, 150]).numpy(), resize_ops.resize_bilinear(img_u8.numpy()[None], [100, 150], half_pixel_centers=True)[0])

# aliasing: a zone plate (rings whose frequency grows with the radius) shrunk 4x
yy, xx = np.mgrid[-128:128, -128:128] + 0.5
zone = (0.5 + 0.5 * np.cos(np.pi * (xx ** 2 + yy ** 2) / 256)).astype(np.float32)[..., None]
small = {aa: aics.image.resize(zone, [64, 64], antialias=aa).numpy()[..., 0] for aa in (False, True)}
r_small = np.hypot(*(np.mgrid[-32:32, -32:32] + 0.5))
outer = r_small > 16            # beyond the new Nyquist frequency: should be flat grey
fig, ax = plt.subplots(1, 3, figsize=(11, 3.8))
ax[0].imshow(zone[..., 0], cmap="gray"); ax[0].set_title("zone plate 256x256")
for a_, aa in zip(ax[1:], (False, True)):
    a_.imshow(small[aa], cmap="gray", vmin=0, vmax=1)
    a_.set_title(f"64x64 antialias={aa}\nouter std {small[aa][outer].std():.3f}")
for a_ in ax: a_.axis("off")
plt.show()
print("outer-ring std without / with antialias:", small[False][outer].std(), small[True][outer].std())
assert small[True][outer].std() < 0.5 * small[False][outer].std()   # Moire rings suppressed

# %% [markdown]
# ## 4. 习题 5.4：Keras 的 ImageNet 预处理 `preprocess_input`
#
# TF 源码里它在 `tensorflow/python/keras/applications/imagenet_utils.py`（独立 Keras 仓库中是
# `keras/applications/imagenet_utils.py`），本库在同名路径 `aicslib/keras/applications/imagenet_utils.py`。
# 三种模式对应预训练权重来自哪个框架：
#
# | `mode` | 做什么 | 用它的模型 |
# |---|---|---|
# | `caffe` | RGB→BGR，每个通道减 ImageNet 均值 `[103.939, 116.779, 123.68]`（B, G, R），不缩放 | VGG16/19、ResNet50/101/152 (v1) |
# | `tf` | $x/127.5-1$，缩放到 $[-1, 1]$ | InceptionV3、InceptionResNetV2、Xception、MobileNet/V2、NASNet、ResNet V2 |
# | `torch` | $x/255$，再按通道 $(x-[0.485,0.456,0.406])/[0.229,0.224,0.225]$ | DenseNet121/169/201 |
#
# EfficientNet、ConvNeXt、MobileNetV3 把缩放做进了模型本身。`data_format` 为 `channels_first` 时通道在第 0（3-D）或第 1（4-D）维。

# %%
batch_u8 = np.stack([aics.image.resize(aics.image.decode_image(aics.io.read_file(str(f)), channels=3), [224, 224])
                     .numpy().round().astype(np.uint8) for f in FILES])
stats = {}
for mode in ("caffe", "tf", "torch"):
    y = preprocess_input(batch_u8, mode=mode)          # uint8 input: converted, not modified
    stats[mode] = y
    print(f"{mode:6s} dtype={y.dtype} range=[{y.min():8.3f}, {y.max():8.3f}] "
          f"channel means={np.round(y.mean(axis=(0, 1, 2)), 3)}")
assert stats["tf"].min() >= -1 and stats["tf"].max() <= 1
np.testing.assert_allclose(stats["caffe"][..., 0], batch_u8[..., 2] - 103.939, rtol=1e-6, atol=1e-4)   # B first
np.testing.assert_allclose(stats["torch"][..., 1], (batch_u8[..., 1] / 255 - 0.456) / 0.224, rtol=1e-5, atol=1e-5)
assert batch_u8.dtype == np.uint8
print("models by mode:", imagenet_utils.MODELS_BY_MODE)

# %% [markdown]
# **用错模式会怎样？** 不会报错——数值只是落在错误的范围里。例如给 MobileNetV2（训练时输入在 $[-1,1]$）
# 喂了 `caffe` 模式的数据，第一层卷积看到的数落在上面打印的 `caffe` 那一行的值域里，标准差比 `tf` 模式大得多
# （下面打印这个倍数），激活值随之放大，准确率会悄无声息地崩掉。
# 下面把三种模式的输入分布画在一起，并与 `tf` 模式期望的范围比较；另外注意 Keras 的一个细节：
# **浮点数组会被原地修改**（整数数组先转换成 `float32`，所以不受影响）。

# %%
fig, ax = plt.subplots(1, 3, figsize=(13, 3))
for a_, (mode, y) in zip(ax, stats.items()):
    a_.hist(y.ravel(), bins=60, color="tab:blue")
    a_.axvspan(-1, 1, color="tab:green", alpha=0.2, label="what a 'tf' model expects")
    a_.set_title(f"mode={mode}: mean {y.mean():.2f}, std {y.std():.2f}")
    a_.legend(fontsize=8)
plt.tight_layout(); plt.show()
ratio = stats["caffe"].std() / stats["tf"].std()
print(f"feeding caffe input to a 'tf' model: std is {ratio:.0f}x too large")
assert ratio > 50

f = batch_u8.astype(np.float32)
out = preprocess_input(f, mode="tf")
u8_copy = batch_u8.copy()
preprocess_input(batch_u8, mode="caffe")
print("float input modified in place:", out is f,
      "| uint8 input untouched:", np.array_equal(batch_u8, u8_copy))
assert out is f and f.min() >= -1 and np.array_equal(batch_u8, u8_copy)
try:
    preprocess_input(batch_u8, mode="pytorch")
except ValueError as e:
    print("ValueError:", e)
# the same function on tensors, eagerly and in a graph
np.testing.assert_allclose(preprocess_input(aics.constant(batch_u8), mode="caffe").numpy(), stats["caffe"], rtol=1e-5, atol=1e-4)


# %% [markdown]
# **Keras 里实现的其它预处理方法**（习题 5.4 的列举部分；TF 1.15 的 `python/keras/preprocessing/` 转调独立的
# `keras_preprocessing` 包，TF 2.x 增加了预处理层 `keras/layers/preprocessing/`）：
#
# | 模块 | 方法 |
# |---|---|
# | `applications.imagenet_utils` | `preprocess_input`（caffe/tf/torch），`decode_predictions`（类别 id → 标签） |
# | `preprocessing.image` | `load_img`、`img_to_array`、`array_to_img`；`ImageDataGenerator`：`rescale`、`featurewise_center`/`samplewise_center`、`featurewise_std_normalization`、`zca_whitening`、`rotation_range`、`width_shift_range`/`height_shift_range`、`shear_range`、`zoom_range`、`channel_shift_range`、`brightness_range`、`horizontal_flip`/`vertical_flip`、`fill_mode`；`random_rotation`、`random_shift`、`random_shear`、`random_zoom`、`apply_affine_transform` |
# | `preprocessing.sequence` | `pad_sequences`、`skipgrams`、`make_sampling_table`、`TimeseriesGenerator` |
# | `preprocessing.text` | `Tokenizer`、`text_to_word_sequence`、`one_hot`、`hashing_trick` |
# | 预处理层 (TF2) | `Rescaling`、`Normalization`、`Resizing`、`CenterCrop`、`RandomCrop`、`RandomFlip`、`RandomRotation`、`RandomZoom`、`RandomContrast`、`TextVectorization`、`StringLookup`、`IntegerLookup`、`CategoryEncoding` |
#
# `tf.image` 本身提供的（本库的 `aics.image` 已实现）：`resize`、`central_crop`、`resize_with_crop_or_pad`、
# `crop_to_bounding_box`、`pad_to_bounding_box`、`random_crop`、`flip_left_right`/`flip_up_down` 及随机版、
# `rot90`、`adjust_brightness/contrast/saturation/hue` 及随机版、`per_image_standardization`、`convert_image_dtype`。

# %% [markdown]
# ### 练习：自己写 `caffe` 模式（2 分）
#
# 写 `my_caffe_preprocess(images)`：输入是通道在最后 (channels-last) 的 RGB 图像（uint8 或 float，任意批维），
# 输出 float32：通道顺序变成 BGR，再逐通道减去 ImageNet 均值 `[103.939, 116.779, 123.68]`（B, G, R 的顺序），不缩放。
# 用 NumPy 写，不调用 `preprocess_input`。

# %% nbgrader={"grade": false, "grade_id": "caffe_preprocess", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_caffe_preprocess(images):
    """RGB (..., 3) -> BGR minus ImageNet's per-channel mean, float32."""
    ### BEGIN SOLUTION
    x = np.asarray(images, np.float32)[..., ::-1]
    return x - np.array([103.939, 116.779, 123.68], np.float32)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "caffe_preprocess_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): against Keras's rule written out in the package (and, hidden, aicslib's
# preprocess_input), on uint8 and float input, one image and a batch.
from workbook.references import image_resize as _resize_reference


def _caffe_case(images, what):
    got = grading.no_library_calls(my_caffe_preprocess, images, what="my_caffe_preprocess")
    grading.check(np.asarray(got).dtype == np.float32, f"{what}: dtype {np.asarray(got).dtype}, expected float32")
    grading.check_array(got, _resize_reference.caffe_preprocess(images), what, ulps=1,
                        hint="the channels reversed first (RGB -> BGR), then the mean in B, G, R order subtracted")


with grading.exercise("caffe_preprocess"):
    _rng5 = np.random.default_rng(5)
    _caffe_case(_rng5.integers(0, 256, (4, 5, 3), dtype=np.uint8), "one uint8 image")
    _caffe_case(_rng5.uniform(0, 255, (2, 3, 3, 3)).astype(np.float32), "a float32 batch")
    ### BEGIN HIDDEN TESTS
    _caffe_case(np.array([[[255, 0, 0]]], np.uint8), "a pure red pixel")
    _caffe_case(batch_u8[:2], "two photos")
    grading.check_array(my_caffe_preprocess(batch_u8[:1]), preprocess_input(batch_u8[:1], mode="caffe"),
                        "against aicslib's preprocess_input(mode='caffe')", rtol=1e-6, atol=1e-4)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 5. 练习：自己写一个与 `tf.image.resize` 一致的双线性插值
#
# 用 NumPy 实现 `my_resize_bilinear(images, out_h, out_w)`，输入 `[N, H, W, C]`，输出 `float32` 的 `[N, out_h, out_w, C]`，
# 要与 `aics.image.resize(images, [out_h, out_w])`（TF2：半像素中心、不抗混叠）一致。提示：
#
# * 输出行 $i$ 的采样坐标 $y=(i+0.5)\cdot H/\text{out\_h}-0.5$，上邻居 $\max(\lfloor y\rfloor, 0)$，
#   下邻居 $\min(\lceil y\rceil, H-1)$，权重 $y-\lfloor y\rfloor$（列同理）；
# * 先沿 $x$ 插值得到上、下两行，再沿 $y$ 插值。
#
# 规则（测试会检查）：
#
# * 只用 NumPy，不要调用 `aicslib`（它自己的 resize）；
# * 用整个下标数组一次取出所有行、列的邻居，不要写逐像素（或逐行、逐列）的 Python 循环；对 2×2 个邻居循环可以；
# * 误差以 float32 的 ulp (unit in the last place，最后一位的单位) 计：TF 用 float32 计算采样坐标和插值，换一种插值写法
#   （如 $(1-w)a + wb$）或全程用 float64 计算再转成 float32，结果只差舍入，都算对；允许的误差是像素最大值的
#   几个 ulp，加上采样坐标在 float32 中的舍入（约为图像边长的一个 ulp）乘以相邻像素之差。
#
# 写完后运行下面锁定的测试单元格，它会说明哪一项检查没通过、在哪个位置、期望什么、得到了什么。

# %% nbgrader={"grade": false, "grade_id": "my_resize_bilinear", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_resize_bilinear(images, out_h, out_w):
    images = np.asarray(images)
    ### BEGIN SOLUTION
    x = images.astype(np.float32)
    _, H, W, _ = x.shape

    def weights(in_size, out_size):
        s = np.float32(in_size) / np.float32(out_size)
        src = ((np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * s - np.float32(0.5)).astype(np.float32)
        lo = np.maximum(np.floor(src).astype(int), 0)
        hi = np.minimum(np.ceil(src).astype(int), in_size - 1)
        return lo, hi, (src - np.floor(src)).astype(np.float32)

    y0, y1, ly = weights(H, out_h)
    x0, x1, lx = weights(W, out_w)
    lx = lx[None, None, :, None]
    top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
    bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
    return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float32)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_resize_bilinear_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): against aics.image.resize (TF2's float32 arithmetic) within a tolerance in
# float32 ulps, and (hidden) against the definition computed exactly in float64 (workbook.references.
# image_resize); NumPy only (calling aicslib's resize or the reference fails), no Python loop per pixel.
_RESIZE_HINT = ("sample output row i at y = (i + 0.5) * H / out_h - 0.5 (half-pixel centres), between input rows "
                "max(floor(y), 0) and min(ceil(y), H - 1) with weight y - floor(y) on the second; columns alike")


def _resize_tolerance(imgs):
    """4 ulps of the largest pixel value, plus what TF's float32 sampling coordinate may be off (about one
    ulp of the image's size; 3 allowed) times the step between neighbours (at most the largest value)."""
    top = np.float32(max(float(np.abs(imgs).max()), 1.0))
    size = np.float32(max(imgs.shape[1], imgs.shape[2]))
    return float(4 * np.spacing(top) + 3 * np.spacing(size) * top)


def _resized(imgs, size):
    got = grading.no_library_calls(my_resize_bilinear, imgs, *size, what="my_resize_bilinear")
    grading.check(isinstance(got, np.ndarray), f"my_resize_bilinear must return a NumPy array, got {type(got).__name__}")
    grading.check(got.dtype == np.float32, f"my_resize_bilinear must return float32 (astype(np.float32)), got {got.dtype}")
    return got


def _check_resize(shape, size, seed, expected=None):
    imgs = np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)
    got = _resized(imgs, size)
    if expected is None:
        expected = aics.image.resize(imgs, list(size)).numpy()
    grading.check_array(got, expected(imgs, *size) if callable(expected) else expected,
                        f"resizing {shape[1]}x{shape[2]} images (batch {shape[0]}, {shape[3]} channels) to {size[0]}x{size[1]}",
                        atol=_resize_tolerance(imgs), hint=_RESIZE_HINT)


def _check_no_loop_per_pixel(shape, size, seed):
    imgs = np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)
    _, lines = grading.python_lines(my_resize_bilinear, imgs, *size)
    grading.check(lines <= 150, f"my_resize_bilinear ran {lines} lines of Python to make one {size[0]}x{size[1]} image: "
                                f"no Python loop per output pixel, row or column; index with whole arrays of rows and "
                                f"columns (a loop over the 2 x 2 neighbours is fine)")


with grading.exercise("my_resize_bilinear"):
    for _k, (_shape, _size) in enumerate([((1, 5, 7, 1), (3, 4)), ((2, 5, 7, 3), (11, 13)), ((1, 6, 6, 2), (6, 6)),
                                          ((3, 9, 4, 3), (2, 9))]):
        _check_resize(_shape, _size, 7 + _k)
    _check_no_loop_per_pixel((1, 40, 30, 3), (120, 100), 1)
    ### BEGIN HIDDEN TESTS
    from workbook.references.image_resize import bilinear_brute as _exact_bilinear
    _check_resize((2, 17, 10, 3), (7, 23), 99)
    _check_resize((1, 1, 8, 2), (4, 3), 98)
    _check_resize((1, 31, 45, 3), (64, 50), 97)
    for _k, (_shape, _size) in enumerate([((2, 5, 7, 3), (11, 13)), ((1, 31, 45, 3), (64, 50)), ((1, 13, 3, 1), (5, 8))]):
        _check_resize(_shape, _size, 50 + _k, expected=_exact_bilinear)
    _check_no_loop_per_pixel((1, 60, 90, 3), (150, 130), 2)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 小结
#
# | 主题 | 要点 | `aicslib` / Keras API |
# |---|---|---|
# | 读图 | 读字节→按文件头解码；值域按 **dtype** 换算，别按像素值猜 | `aics.io.read_file`、`aics.image.decode_image`、`convert_image_dtype` |
# | 作业 1 | resize→crop 与 crop→resize 看到同一块中央 87.5%（224/256），差异只来自重采样和取整；保持纵横比应按短边缩放到 256 再居中裁 224（`06-input-pipeline.ipynb` 的练习） | `resize`、`central_crop`、`resize_with_crop_or_pad` |
# | resize 算术 | TF2 半像素中心；TF1 legacy/`align_corners` 会平移或改变比例；缩小用 `antialias=True` 防混叠 | `aics.image.resize`、`aics.compat.v1.image.resize_bilinear` |
# | ImageNet 归一化 | caffe（BGR−均值）/ tf（$[-1,1]$）/ torch（均值方差）必须与模型匹配，用错不报错只掉精度 | `keras.applications.imagenet_utils.preprocess_input` |
# | 双线性插值（练习） | 半像素中心的采样坐标、边界夹紧、先沿 $x$ 再沿 $y$ 插值；用下标数组一次取所有邻居，误差按 float32 的 ulp 计 | NumPy；对照 `aics.image.resize` |
#
# 下一章 `06-input-pipeline.ipynb`：把这些算子接成训练用的输入流水线（在线数据增强、序列填充），用交互控件调参数，
# 并练习 ImageNet 评测的“短边缩放 + 居中裁剪”。
#
# 源码对照：`aicslib/kernels/{resize_ops,colorspace_ops,decode_image_op}.py` ↔ `tensorflow/core/kernels/image/`，`aicslib/ops/image_ops.py` ↔
# `tensorflow/python/ops/image_ops_impl.py`，`aicslib/keras/` ↔ `keras/applications`、`keras/preprocessing`。
