# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 输入流水线：在线数据增强、序列填充与 ImageNet 评测裁剪
#
# **前置章节 (prerequisites)**：[05 preprocessing](05-preprocessing.ipynb)
#
# **承接** `05-preprocessing.ipynb`：那一章把单张图读成张量、比较了作业第 1 题的两条流水线（resize→crop 与 crop→resize），
# 弄清了 `resize` 的算术和 Keras 的 `preprocess_input`。本章把这些算子接成**训练时**的输入流水线，
# 也补上习题 5.4 里的序列预处理。
#
# **学习目标**
#
# 1. 搭建一个“边读边增强”的输入流水线：随机裁剪、翻转、颜色抖动 (color jitter)，随机数有种子 (seed)、可复现；
#    同一段增强代码既能立即执行，也能放进静态图；
# 2. 用 `Tokenizer` + `pad_sequences` 准备 RNN 的输入，理解 pre/post 填充 (padding) 与截断 (truncating)；
# 3. 用交互控件调流水线的参数，实时看结果和张量统计量；
# 4. 实现 ImageNet 评测的标准预处理：按短边缩放到 256（保持纵横比），再居中裁剪 224。
#
# **运行时间**见下面第一个单元格的输出。
#
# **练习**（自动评分，3 分）：第 4 节“短边缩放到 256、再居中裁剪 224”。练习之后的图在测试通过后用你的函数，
# 此前用参考实现，所以没做完也能一直运行到底。
#
# 本章代码在 `aicslib/ops/image_ops.py`（`random_*`、`adjust_*` 等图像算子）、`aicslib/data/`（`Dataset`，对应 `tf.data`）
# 和 `aicslib/keras/preprocessing/`（`Tokenizer`、`pad_sequences`）。

# %%
import numpy as np
import matplotlib.pyplot as plt
import ipywidgets as widgets
from IPython.display import display, clear_output

import aicslib as aics
from aicslib import flags
from aicslib.keras.preprocessing.sequence import pad_sequences
from aicslib.keras.preprocessing.text import Tokenizer
from workbook import grading, run_times

run_times.show("input-pipeline")
SEED = 2022
np.random.seed(SEED)
aics.random.set_seed(SEED)
# The sample photographs (the repository's data/images), found through the aicslib package so the
# notebook runs from any folder.
FILES = aics.datasets.images.image_files()
print("aicslib", aics.__version__, "| FAST:", flags.FAST, "| images:", [f.name for f in FILES])


def to_float(img):
    """uint8 [0, 255] -> float32 [0, 1], decided by the dtype (05-preprocessing, section 1)."""
    return aics.image.convert_image_dtype(img, aics.float32)


img_u8 = aics.image.decode_image(aics.io.read_file(str(FILES[0])), channels=3)   # uint8 [H, W, 3]
print(FILES[0].name, img_u8.shape, img_u8.dtype)

# %% [markdown]
# ## 1. 数据增强 (data augmentation)：边读边增强的输入流水线
#
# 训练时每个 epoch 看到同一张图的**不同变体**：随机裁剪 (random crop)、水平翻转、亮度/对比度/饱和度/色调抖动。
# 增强必须**在线 (on the fly)** 进行——在流水线里每取一个 batch 重新抽随机数，而不是预先存好几份。
# 下面用 `aics.data.Dataset`（即 `tf.data`）搭流水线：文件名 → 打乱 (shuffle) → `map`（读文件、解码、增强）→
# 组批 (batch)。`augment` 全部由 `aics.image` 的算子组成，所以同一段代码可以立即执行、放进 `map`，也可以放进
# 静态图里每次 `sess.run` 取出新的增强结果。每个随机算子都有自己的 `seed`，与全局种子一起决定随机数，结果可复现。

# %%
def augment(image_f32, seed=SEED):
    """Standard ImageNet-style training augmentation on a float32 [0,1] image.

    Each random op gets its own op seed (seed, seed+1, ...): two ops with the same
    (global seed, op seed) pair would draw the same random numbers.
    """
    x = aics.image.resize(image_f32, [256, 256])
    x = aics.image.random_crop(x, [224, 224, 3], seed=seed)
    x = aics.image.random_flip_left_right(x, seed=seed + 1)
    x = aics.image.random_brightness(x, 0.15, seed=seed + 2)
    x = aics.image.random_contrast(x, 0.7, 1.3, seed=seed + 3)
    x = aics.image.random_saturation(x, 0.6, 1.4, seed=seed + 4)
    x = aics.image.random_hue(x, 0.05, seed=seed + 5)
    return aics.clip_by_value(x, 0.0, 1.0)


def load(filename):
    img = aics.image.decode_image(aics.io.read_file(filename), channels=3, expand_animations=False)
    return to_float(img)


def input_pipeline(files, batch_size, seed):
    """tf.data style: file names -> shuffle -> read+decode+augment (on the fly) -> batch."""
    aics.random.set_seed(seed)
    ds = aics.data.Dataset.from_tensor_slices([str(f) for f in files])
    ds = ds.shuffle(len(files), seed=seed).repeat()
    ds = ds.map(lambda f: augment(load(f), seed=seed))
    return ds.batch(batch_size)


it = iter(input_pipeline(FILES, batch_size=4, seed=SEED))
batches = [next(it).numpy() for _ in range(2)]
gallery = np.concatenate(batches)
assert gallery.shape == (8, 224, 224, 3) and gallery.dtype == np.float32
assert gallery.min() >= 0 and gallery.max() <= 1
assert not np.array_equal(batches[0], batches[1])    # fresh randomness every epoch
fig, ax = plt.subplots(2, 4, figsize=(13, 6.5))
for a_, im in zip(ax.ravel(), gallery):
    a_.imshow(im); a_.axis("off")
fig.suptitle("two batches from the on-the-fly augmentation pipeline (aics.data)")
plt.show()

# reproducible: the same seeds give the same augmented batches
again = next(iter(input_pipeline(FILES, batch_size=4, seed=SEED))).numpy()
np.testing.assert_array_equal(again, batches[0])

# %% [markdown]
# 同样的增强放进 TF1 风格的静态图：占位符 (placeholder) 喂入原图，每次 `sess.run` 随机算子都会抽新的随机数。

# %%
g = aics.Graph()
with g.as_default():
    aics.random.set_seed(SEED)
    x_in = aics.placeholder(aics.float32, [None, None, 3], name="image")
    aug = augment(x_in)
    print("static shape of the augmented image:", aug.shape)
picture = to_float(img_u8).numpy()
with aics.Session(graph=g) as sess:
    runs = [sess.run(aug, {x_in: picture}) for _ in range(3)]
assert all(r.shape == (224, 224, 3) for r in runs)
assert not np.array_equal(runs[0], runs[1])          # new randomness on every run

# %% [markdown]
# ## 2. 序列预处理：`Tokenizer` + `pad_sequences`
#
# RNN 按批 (batch) 计算时要求同一批序列等长。`Tokenizer` 按词频给词编号（从 1 开始，0 留给填充），
# `pad_sequences` 把序列补齐或截断到 `maxlen`：
#
# * `padding="pre"`（默认）在**前面**补 0：RNN 最后读到的是真实的词，最终状态离它们最近；
# * `truncating="pre"`（默认）截掉**前面**的部分，保留序列末尾。

# %%
texts = ["the framework builds a graph",
         "eager mode runs every op at once",
         "a session runs the graph",
         "kernels run on the cpu or the mlu"]
tok = Tokenizer(oov_token="<unk>")
tok.fit_on_texts(texts)
seqs = tok.texts_to_sequences(texts + ["the gpu runs an unknown graph"])
print("word_index:", dict(list(tok.word_index.items())[:8]), "...")
print("sequences:", seqs)
variants = {
    "pre / pre (default)": pad_sequences(seqs, maxlen=6),
    "post / pre": pad_sequences(seqs, maxlen=6, padding="post"),
    "pre / post": pad_sequences(seqs, maxlen=6, truncating="post"),
    "post / post": pad_sequences(seqs, maxlen=6, padding="post", truncating="post"),
}
assert tok.word_index["<unk>"] == 1 and tok.word_index["the"] == 2
assert variants["pre / pre (default)"][0].tolist() == [0] + seqs[0]
assert variants["post / pre"][0].tolist() == seqs[0] + [0]
assert variants["pre / pre (default)"][1].tolist() == seqs[1][-6:]
assert variants["pre / post"][1].tolist() == seqs[1][:6]
fig, ax = plt.subplots(1, 4, figsize=(15, 2.8))
for a_, (name, m) in zip(ax, variants.items()):
    a_.imshow(m, cmap="viridis")
    for (r, c), v in np.ndenumerate(m):
        a_.text(c, r, v, ha="center", va="center", color="w", fontsize=8)
    a_.set_title(f"padding / truncating = {name}", fontsize=9); a_.set_xticks([]); a_.set_yticks([])
plt.show()

# %% [markdown]
# ### 练习：自己写 `pad_sequences`（2 分）
#
# 写 `my_pad_sequences(sequences, maxlen, padding="pre", truncating="pre", value=0)`：返回 `(len(sequences), maxlen)` 的
# int32 数组，规则与 Keras 相同（默认在前面补、截掉前面）。不调用库里的 `pad_sequences`。

# %% nbgrader={"grade": false, "grade_id": "pad_sequences", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_pad_sequences(sequences, maxlen, padding="pre", truncating="pre", value=0):
    """Pads or truncates each integer sequence to maxlen, as keras.preprocessing.sequence.pad_sequences."""
    ### BEGIN SOLUTION
    out = np.full((len(sequences), maxlen), value, np.int32)
    for i, seq in enumerate(sequences):
        kept = list(seq)[-maxlen:] if truncating == "pre" else list(seq)[:maxlen]
        if kept:
            if padding == "pre":
                out[i, maxlen - len(kept):] = kept
            else:
                out[i, :len(kept)] = kept
    return out
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "pad_sequences_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): every padding/truncating pair against Keras's rule written out one sequence
# at a time (workbook/references/sequences.py), short, long, exact and empty sequences.
from workbook.references import sequences as _seq_reference


def _pad_case(seqs, maxlen, **kw):
    got = grading.no_library_calls(my_pad_sequences, seqs, maxlen, **kw, what="my_pad_sequences", how="with NumPy or lists")
    call = f"my_pad_sequences({seqs}, maxlen={maxlen}{''.join(f', {k}={v!r}' for k, v in kw.items())})"
    grading.check(np.asarray(got).dtype == np.int32, f"{call}: dtype {np.asarray(got).dtype}, expected int32")
    grading.check_array(got, _seq_reference.pad(seqs, maxlen, **kw), call,
                        hint="Keras pads and truncates at the front ('pre') unless told 'post'")


with grading.exercise("pad_sequences"):
    _pad_case([[1, 2], [3, 4, 5, 6, 7]], 4)
    _pad_case([[1, 2], [3, 4, 5, 6, 7]], 4, padding="post", truncating="post")
    ### BEGIN HIDDEN TESTS
    _pad_case([[1, 2], [3, 4, 5, 6, 7]], 4, padding="post")
    _pad_case([[1, 2], [3, 4, 5, 6, 7]], 4, truncating="post")
    _pad_case([[], [9], [1, 2, 3]], 3, value=-1)
    _pad_case([[5, 6, 7]], 3)
    _pad_case(seqs, 6)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 3. 交互：选图、选流水线、调参数，实时看结果和张量统计量
#
# `run_pipeline` 调用的都是真实的 `aics.image` 算子；改动任何控件都会重新执行流水线。

# %%
NAMES = [f.name for f in FILES]
DECODED = {f.name: aics.image.decode_image(aics.io.read_file(str(f)), channels=3) for f in FILES}


def run_pipeline(name, pipeline="resize→crop", fraction=0.875, size=224, method="bilinear",
                 antialias=False, brightness=0.0, contrast=1.0, saturation=1.0, hue=0.0, flip=False, seed=0):
    x = to_float(DECODED[name])
    if pipeline == "resize→crop":
        side = int(round(size / fraction))
        x = aics.image.resize(x, [side, side], method=method, antialias=antialias)
        x = aics.image.resize_with_crop_or_pad(x, size, size)
    elif pipeline == "crop→resize":
        x = aics.image.central_crop(x, fraction)
        x = aics.image.resize(x, [size, size], method=method, antialias=antialias)
    else:  # "random augment"
        aics.random.set_seed(seed)
        x = aics.image.resize(x, [int(round(size / fraction))] * 2, method=method, antialias=antialias)
        x = aics.image.random_crop(x, [size, size, 3])
        x = aics.image.random_flip_left_right(x)
    if flip:
        x = aics.image.flip_left_right(x)
    x = aics.image.adjust_brightness(x, brightness)
    x = aics.image.adjust_contrast(x, contrast)
    x = aics.image.adjust_saturation(x, saturation)
    x = aics.image.adjust_hue(x, hue)
    return aics.cast(x, aics.float32).numpy()


def tensor_stats(x):
    return {"shape": x.shape, "dtype": str(x.dtype), "min": float(x.min()), "max": float(x.max()),
            "mean_rgb": np.round(x.mean(axis=(0, 1)), 4).tolist(), "std": round(float(x.std()), 4)}


out = widgets.Output()


def show(name, pipeline, fraction, size, method, antialias, brightness, contrast, saturation, hue, flip, seed):
    y = run_pipeline(name, pipeline, fraction, size, method, antialias, brightness, contrast,
                     saturation, hue, flip, seed)
    with out:
        clear_output(wait=True)
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        ax[0].imshow(DECODED[name].numpy()); ax[0].set_title(name); ax[0].axis("off")
        ax[1].imshow(np.clip(y, 0, 1)); ax[1].set_title(pipeline); ax[1].axis("off")
        plt.show()
        print(tensor_stats(y))


pipeline_choice = widgets.ToggleButtons(options=["resize→crop", "crop→resize", "random augment"])
# The seed only drives the random crop/flip of "random augment": the slider is disabled for the other two.
seed_choice = widgets.IntSlider(value=0, min=0, max=20, description="seed", disabled=True)


def _seed_enabled(change=None):
    seed_choice.disabled = pipeline_choice.value != "random augment"
    seed_choice.tooltip = ("seed of the random crop and flip" if not seed_choice.disabled
                           else "only used by the 'random augment' pipeline")


pipeline_choice.observe(_seed_enabled, names="value")
_seed_enabled()

ui = widgets.interactive(
    show,
    name=widgets.Dropdown(options=NAMES, value=NAMES[0], description="image"),
    pipeline=pipeline_choice,
    fraction=widgets.FloatSlider(value=0.875, min=0.5, max=1.0, step=0.025, description="fraction"),
    size=widgets.IntSlider(value=224, min=64, max=320, step=16, description="size"),
    method=widgets.Dropdown(options=["bilinear", "nearest", "bicubic", "area", "lanczos3"], description="method"),
    antialias=widgets.Checkbox(value=False, description="antialias"),
    brightness=widgets.FloatSlider(value=0.0, min=-0.5, max=0.5, step=0.05, description="brightness"),
    contrast=widgets.FloatSlider(value=1.0, min=0.2, max=3.0, step=0.1, description="contrast"),
    saturation=widgets.FloatSlider(value=1.0, min=0.0, max=3.0, step=0.1, description="saturation"),
    hue=widgets.FloatSlider(value=0.0, min=-0.5, max=0.5, step=0.02, description="hue"),
    flip=widgets.Checkbox(value=False, description="flip left-right"),
    seed=seed_choice,
)
display(ui, out)

# %%
# What the widget computes, checked: identity adjustments keep resize->crop exact,
# and the statistics react to the sliders.
base = run_pipeline(NAMES[0], "resize→crop")
resize_then_crop = aics.image.resize_with_crop_or_pad(aics.image.resize(to_float(DECODED[NAMES[0]]), [256, 256]),
                                                      224, 224)   # pipeline A of 05-preprocessing
np.testing.assert_allclose(base, resize_then_crop.numpy(), atol=1e-6)
brighter = run_pipeline(NAMES[0], "resize→crop", brightness=0.2)
gray = run_pipeline(NAMES[0], "crop→resize", saturation=0.0)
assert tensor_stats(brighter)["mean_rgb"][0] > tensor_stats(base)["mean_rgb"][0]
np.testing.assert_allclose(gray.std(axis=-1), 0, atol=1e-6)     # saturation 0: R = G = B
assert run_pipeline(NAMES[1], "random augment", size=128, seed=3).shape == (128, 128, 3)
# The seed slider is live only for "random augment", where it changes the crop/flip.
assert seed_choice.disabled and pipeline_choice.value != "random augment"
pipeline_choice.value = "random augment"
assert not seed_choice.disabled
pipeline_choice.value = "resize→crop"
seeded = [run_pipeline(NAMES[1], "random augment", fraction=0.5, size=128, seed=k) for k in range(4)]
assert any(not np.array_equal(seeded[0], other) for other in seeded[1:])      # different seeds, different crops
np.testing.assert_array_equal(seeded[0], run_pipeline(NAMES[1], "random augment", fraction=0.5, size=128, seed=0))
print(tensor_stats(base))


# %% [markdown]
# ## 4. 练习：按短边缩放到 256，再居中裁剪 224
#
# `05-preprocessing.ipynb` 第 2 节（作业第 1 题）的两条流水线都把图像压成了正方形。ImageNet 评测的标准做法保持纵横比：
#
# 1. 先用 `convert_image_dtype` 把 `uint8` 图像转成 $[0,1]$ 的 `float32`；
# 2. 按**短边**缩放：短边变成 `short`（256），长边按同样的比例缩放并四舍五入：
#    `new_long = int(long * short / short_side + 0.5)`；用 `aics.image.resize`（双线性、半像素中心）；
# 3. 居中裁剪出 `crop`×`crop`（224×224）：上边（左边）裁掉 `(new_size - crop) // 2` 行（列）。
#
# 补全 `resize_short_side_then_crop(img_u8, short=256, crop=224)`，输入 `[H, W, 3]` 的 `uint8`（NumPy 数组或张量），
# 返回 `[crop, crop, 3]` 的 `float32` NumPy 数组。可以用 `aics.image` 的算子，也可以切片；不要写逐像素（或逐行）的
# Python 循环（测试会检查）。测试在横图、竖图和其它尺寸上，把你的结果与按定义用 float64 精确计算的参考实现比较，
# 只允许舍入量级的误差（与 `05-preprocessing.ipynb` 的双线性插值练习相同：值的几个 ulp，加上 float32 采样坐标的舍入乘以相邻像素之差）。
# 写完后运行下面锁定的测试单元格；再下面的图在测试通过后显示你的结果。

# %% nbgrader={"grade": false, "grade_id": "short_side_crop", "locked": false, "schema_version": 3, "solution": true, "task": false}
def resize_short_side_then_crop(img_u8, short=256, crop=224):
    """Resize so the short side is `short` (aspect ratio kept), then centre-crop crop x crop; float32 [0, 1]."""
    ### BEGIN SOLUTION
    x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
    h, w = x.shape.as_list()[:2]
    if h <= w:
        new_h, new_w = short, int(w * short / h + 0.5)
    else:
        new_h, new_w = int(h * short / w + 0.5), short
    x = aics.image.resize(x, [new_h, new_w])
    top, left = (new_h - crop) // 2, (new_w - crop) // 2
    return x.numpy()[top:top + crop, left:left + crop, :]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "short_side_crop_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): against the definition computed exactly in float64 (short side -> 256 with the
# aspect ratio kept, bilinear with half-pixel centres, centre crop: workbook.references.image_resize), on
# landscape, portrait and square images; aics.image ops are allowed, calling the reference is not, nor a
# Python loop per pixel or row.
import inspect

from workbook.references import image_resize as _ref_image_resize

_REFERENCE_FUNCTIONS = {name for name, f in vars(_ref_image_resize).items()
                        if inspect.isfunction(f) and f.__module__ == _ref_image_resize.__name__}


def _short_side_tolerance(img):
    """4 ulps of 1.0 (the largest value), plus what a float32 sampling coordinate may be off (about one ulp
    of the image's size; 3 allowed) times the step between neighbours (at most 1.0)."""
    return float(4 * np.spacing(np.float32(1)) + 3 * np.spacing(np.float32(max(img.shape[:2]))))


def _short_side_hint(got, img):
    if got.max() > 1.5:
        return "values above 1: convert the uint8 image to [0, 1] first (aics.image.convert_image_dtype)"
    return (f"a {img.shape[0]}x{img.shape[1]} image: scale the short side to `short` and the long one by the same "
            f"factor, int(long * short / short_side + 0.5), keeping the aspect ratio; then cut (new - crop) // 2 "
            f"rows (columns) off the top (left)")


def _check_short_side(img, short=256, crop=224):
    got, called = grading.library_calls(resize_short_side_then_crop, img, short, crop)
    grading.check(not called & _REFERENCE_FUNCTIONS,
                  f"resize_short_side_then_crop calls the reference ({', '.join(sorted(called & _REFERENCE_FUNCTIONS))}): "
                  f"write it yourself with aics.image ops or NumPy")
    grading.check(isinstance(got, np.ndarray),
                  f"return a NumPy array (a tensor's .numpy()), got {type(got).__name__}")
    grading.check(got.dtype == np.float32, f"return float32, got {got.dtype}")
    grading.check_array(got, _ref_image_resize.short_side_crop(img, short, crop),
                        f"the {crop}x{crop} crop of a {img.shape[0]}x{img.shape[1]} image (short side {short})",
                        atol=_short_side_tolerance(img), hint=_short_side_hint(got, img))
    _, lines = grading.python_lines(resize_short_side_then_crop, img, short, crop)
    grading.check(lines <= 100, f"resize_short_side_then_crop ran {lines} lines of Python for one image: no Python loop "
                                f"per pixel or row (aics.image.resize and slicing work on the whole image)")


with grading.exercise("short_side_crop"):
    _check_short_side(aics.datasets.images.load_image("chelsea"))                       # landscape
    _rng_s = np.random.default_rng(3)
    _check_short_side(_rng_s.integers(0, 256, (330, 260, 3)).astype(np.uint8))          # portrait
    ### BEGIN HIDDEN TESTS
    _check_short_side(_rng_s.integers(0, 256, (257, 301, 3)).astype(np.uint8))          # odd margins
    _check_short_side(_rng_s.integers(0, 256, (120, 90, 3)).astype(np.uint8), 64, 48)   # other sizes
    _check_short_side(_rng_s.integers(0, 256, (100, 100, 3)).astype(np.uint8), 128, 96)  # square, upsampling
    ### END HIDDEN TESTS

# %%
# The figure shows your function once its test above passed, until then the reference
# (workbook.references.image_resize.short_side_crop).
short_side_fn = grading.use("short_side_crop", resize_short_side_then_crop, _ref_image_resize.short_side_crop,
                            what="short-side resize and crop (workbook.references.image_resize)")
fig, ax = plt.subplots(1, len(FILES), figsize=(4 * len(FILES), 4))
for a_, f in zip(ax, FILES):
    a_.imshow(short_side_fn(DECODED[f.name]))
    a_.set_title(f"{f.name}: {DECODED[f.name].shape[0]}x{DECODED[f.name].shape[1]} -> 224x224", fontsize=9)
    a_.axis("off")
plt.show()

# %% [markdown]
# ## 小结
#
# | 主题 | 要点 | `aicslib` / Keras API |
# |---|---|---|
# | 数据增强 | 在线（每取一批重新抽随机数）、带种子；同一段算子代码可立即执行、放进 `Dataset.map`，也可进静态图 | `aics.data.Dataset`、`random_crop`、`random_flip_left_right`、`random_brightness/contrast/saturation/hue` |
# | 序列 | 词频编号（0 留给填充）；pre 填充让 RNN 最后读到真实词，pre 截断保留序列末尾 | `Tokenizer`、`pad_sequences` |
# | 评测裁剪（练习） | 按短边缩放到 256、保持纵横比，再居中裁 224；与 `05-preprocessing.ipynb` 的两条流水线看到同样比例的中央区域，但不压扁图像 | `resize`、切片或 `crop_to_bounding_box` |
#
# 源码对照：`aicslib/ops/image_ops.py` ↔ `tensorflow/python/ops/image_ops_impl.py`，`aicslib/data/` ↔ `tensorflow/python/data/`，
# `aicslib/keras/preprocessing/` ↔ `keras/preprocessing`。
