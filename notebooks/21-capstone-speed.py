# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 21 综合实验 (capstone)：让风格迁移的一步更快，结果不变
#
# **前置章节 (prerequisites)**：[07 style-transfer](07-style-transfer.ipynb)、[12 convolution-internals](12-convolution-internals.ipynb)、[15 operator-fusion](15-operator-fusion.ipynb)、[17 mixed-precision](17-mixed-precision.ipynb)、[18 sparse-training](18-sparse-training.ipynb)
#
# 第 07 章的风格迁移每一步都做同一件事：对当前图像 $x$ 求总损失
# $\alpha L_\text{content} + \beta L_\text{style}$ 及其对 $x$ 的梯度。本章给出这一步最直接的写法
# `naive_step`：每次调用都重新计算内容目标与风格目标，并且为损失的两项各把图像送进网络一次（第一版代码常常这样写）。
# 你的任务是写一个**结果相同、速度更快**的版本。
#
# 课程里学过的办法都可以用：
#
# * **把不变的计算提出循环**：内容图与风格图在训练中不变，它们的特征与 Gram 矩阵只需算一次（与第 14 章的常量折叠是同一个想法）；
# * **同一个值只算一次**：两项损失用的是同一次前向传播的不同层（Grappler 的公共子表达式消除 (CSE) 做的就是这件事）；
# * **整图执行**：`aics.function` 把一步追踪成图，省去逐个 op 的 Python 开销，图优化器可以融合算子（第 15 章）；
# * **卷积算法**：im2col + GEMM、Winograd 各有适用的形状（第 12 章）；
# * **更低的精度、稀疏**（第 17 章、第 18 章）：只要结果仍在容差之内。
#
# 评分分两部分：先写一个**正确的计时函数**（3 分），再写更快的一步（7 分：对新图像、新的内容/风格对结果一致，
# 且在同一次运行里测得的加速比不低于 `REQUIRED_SPEEDUP`）。`make autograde` 把每个人测得的加速比写进
# `grades/grades_by_exercise.csv` 的 leaderboard 一列和 `grades/leaderboard.csv` 排行榜（排行不计分）。

# %%
import statistics
import time

import numpy as np
import matplotlib.pyplot as plt

import aicslib as aics
from aicslib import flags
from aicslib.models import style_transfer, vgg19
from workbook import grading, run_times
from workbook.references import capstone as capstone_reference

run_times.show("capstone-speed")
FAST = flags.FAST
SIZE = 32 if FAST else 96          # side of the square images
ROUNDS = 3 if FAST else 7          # timed rounds per measurement
REQUIRED_SPEEDUP = 1.25            # the faster step must beat the naive one by this factor
weights = vgg19.random_weights(seed=0)   # He-normal VGG19 (chapter 12): the speed and the maths do not depend on trained weights


def random_images(seed, size=SIZE):
    """(image, content, style): three (1, size, size, 3) float32 images in VGG19's pixel range."""
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-120.0, 120.0, (1, size, size, 3)).astype(np.float32) for _ in range(3))


image, content, style = random_images(seed=1)
naive_step = capstone_reference.naive_step
loss, grad = naive_step(image, content, style, weights)
print(f"images {image.shape}; naive step: loss = {loss:.6g}, |grad| = {np.linalg.norm(grad):.6g}")

# %% [markdown]
# ## 1. 先学会计时 (3 分)
#
# 比较两个函数谁快，测量本身就容易出错：
#
# * **第一次调用不算**：第一次调用要追踪图、分配内存、填缓存，比之后的每次都慢；
# * **交替测量**：一轮里先测参考版、再测你的版本，重复 `rounds` 轮；机器偶尔变慢时两者都受影响，而不是全落在其中一个上；
# * **取中位数**：偶尔一次被打断的慢调用会把平均值拉偏，中位数不受影响；
# * 加速比 = 参考版的中位时间 / 你的版本的中位时间（大于 1 表示你的更快）；
# * 计时用传进来的 `timer`（默认 `time.perf_counter`）：测试会传入一个假时钟来检查你的做法。
#
# 写 `my_speedup(reference, candidate, rounds, timer)`：`reference()` 与 `candidate()` 都不带参数。

# %% nbgrader={"grade": false, "grade_id": "capstone_speedup", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_speedup(reference, candidate, rounds=5, timer=time.perf_counter):
    """median time of reference() / median time of candidate(): one untimed warm-up call each,
    then `rounds` rounds, each timing one call of reference and one of candidate."""
    ### BEGIN SOLUTION
    reference()
    candidate()
    ref_times, cand_times = [], []
    for _ in range(rounds):
        t0 = timer()
        reference()
        ref_times.append(timer() - t0)
        t0 = timer()
        candidate()
        cand_times.append(timer() - t0)
    return float(np.median(ref_times) / np.median(cand_times))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "capstone_speedup_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): a fake clock that only moves when the scripted functions run, so each
# rule (warm-up, interleaving, median, the ratio's direction, the timer given) changes the answer.
class _FakeClock:
    def __init__(self):
        self.now, self.calls = 0.0, []

    def __call__(self):
        return self.now

    def function(self, name, durations):
        durations = list(durations)

        def run():
            n = sum(1 for c in self.calls if c == name)
            if n >= len(durations):
                raise AssertionError(f"{name}() was called {n + 1} times; expected {len(durations)} "
                                     f"(one warm-up call and one per round)")
            self.calls.append(name)
            self.now += durations[n]
        return run


def _speedup_case(ref_durations, cand_durations, rounds, what):
    clock = _FakeClock()
    ref, cand = clock.function("reference", ref_durations), clock.function("candidate", cand_durations)
    got = grading.no_library_calls(my_speedup, ref, cand, rounds=rounds, timer=clock, what="my_speedup",
                                   how="with the timer you are given")
    timed = lambda d: d[1:]
    expected = statistics.median(timed(ref_durations)) / statistics.median(timed(cand_durations))
    grading.check(clock.calls.count("reference") == rounds + 1 and clock.calls.count("candidate") == rounds + 1,
                  f"{what}: reference() ran {clock.calls.count('reference')} times and candidate() "
                  f"{clock.calls.count('candidate')} times; expected {rounds + 1} each (one warm-up, one per round)")
    after = clock.calls[2:] if sorted(clock.calls[:2]) == ["candidate", "reference"] else clock.calls[1:]
    pairs = [sorted(after[i:i + 2]) for i in range(0, len(after), 2)]
    grading.check(all(p == ["candidate", "reference"] for p in pairs),
                  f"{what}: the timed calls ran in the order {clock.calls}; each round should time one "
                  f"call of each, after one warm-up call of each")
    grading.check(got is not None and abs(float(got) - expected) <= 1e-9 * expected,
                  f"{what}: expected a speedup of {expected:.6g} (median reference time / median candidate "
                  f"time, warm-up calls left out), got {got!r}")


with grading.exercise("capstone_speedup"):
    _speedup_case([9.0, 2.0, 2.0, 2.0], [7.0, 1.0, 1.0, 1.0], 3, "reference 2 s, candidate 1 s, slow first calls")
    _speedup_case([5.0, 1.0, 3.0, 2.0, 2.0, 30.0], [5.0, 4.0, 4.0, 4.0, 4.0, 4.0], 5,
                  "one slow spell in the reference's last round (a median ignores it)")
    ### BEGIN HIDDEN TESTS
    _speedup_case([1.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0], [50.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0], 7,
                  "seven rounds, a very slow warm-up")
    _speedup_case([2.0, 1.0, 1.0], [2.0, 4.0, 4.0], 2, "a slower candidate (speedup below 1)")
    _speedup_case([3.0, 5.0, 1.0, 9.0, 2.0], [3.0, 1.0, 1.0, 1.0, 1.0], 4, "an even number of rounds")
    ### END HIDDEN TESTS

# %%
speedup = grading.use("capstone_speedup", my_speedup, capstone_reference.speedup,
                      what="workbook.references.capstone.speedup")

# %% [markdown]
# ## 2. 更快的一步 (7 分)
#
# 写 `make_fast_step(content, style, weights)`：它可以做任何准备工作（只做一次），然后返回一个函数 `step(image)`，
# 返回 `(loss, grad)`，与 `naive_step(image, content, style, weights)` 相同：`loss` 的相对误差不超过 `1e-4`，
# `grad` 的相对误差（二范数）不超过 `1e-3`。测试会用新的图像、新的内容/风格对检查结果（只缓存一次结果不行），
# 再在同一次运行里测加速比（参考实现的计时函数，`ROUNDS` 轮），要求不低于 `REQUIRED_SPEEDUP`。
# 计时用 `time.process_time`：本进程（所有线程）用掉的 CPU 时间，而不是墙上时间。评分时同一台机器上往往同时跑着
# 别的学生的笔记本，墙上时间会跟着别人的负载起伏，CPU 时间衡量的是这一步自己做了多少工作，基本不受影响；
# 代价是多线程带来的加速在这里看不到（线程越多，CPU 时间只会更多）。
#
# 提示：`capstone_reference.features(x, weights)` 给出 VGG19 各层特征，`style_transfer.gram_matrix`、
# `style_transfer.total_loss(features, targets)` 是第 07 章的损失；`naive_step` 的源码在
# `workbook/references/capstone.py`。

# %% nbgrader={"grade": false, "grade_id": "capstone_fast_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def make_fast_step(content, style, weights):
    """Returns step(image) -> (loss: float, grad: ndarray), equal to naive_step(image, content, style, weights)."""
    ### BEGIN SOLUTION
    targets = capstone_reference.targets(content, style, weights)

    def step(image):
        x = aics.constant(image)
        with aics.GradientTape() as tape:
            tape.watch(x)
            total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), targets)
        return float(total), tape.gradient(total, x).numpy()
    return step
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "capstone_fast_step_test", "locked": true, "points": 7, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): the same loss and gradient as naive_step on new images and a new
# content/style pair, then the speedup over naive_step measured here (the leaderboard's figure).
_naive_results = globals().setdefault("_capstone_naive_results", {})   # the naive step's results, once per case


def _same_as_naive(step, case, image, content, style, what):
    if case not in _naive_results:
        _naive_results[case] = naive_step(image, content, style, weights)
    expected_loss, expected_grad = _naive_results[case]
    got = step(image)
    grading.check(isinstance(got, tuple) and len(got) == 2, f"{what}: step(image) should return (loss, grad), got {type(got).__name__}")
    got_loss, got_grad = float(got[0]), np.asarray(got[1])
    grading.check(got_grad.shape == expected_grad.shape, f"{what}: grad has shape {got_grad.shape}, expected {expected_grad.shape}")
    loss_error = abs(got_loss - expected_loss) / abs(expected_loss)
    grading.check(loss_error <= 1e-4, f"{what}: loss {got_loss:.8g}, expected {expected_loss:.8g} "
                                      f"(relative error {loss_error:.2e} > 1e-4)")
    grad_error = capstone_reference.relative_error(got_grad, expected_grad)
    grading.check(grad_error <= 1e-3, f"{what}: the gradient's relative error is {grad_error:.2e} > 1e-3 "
                                      f"(same loss, different gradient: check what the tape watches)")


with grading.exercise("capstone_fast_step"):
    _step = make_fast_step(content, style, weights)
    _same_as_naive(_step, 1, image, content, style, "the chapter's image")
    ### BEGIN HIDDEN TESTS
    _image2, _content2, _style2 = random_images(seed=2)
    _same_as_naive(_step, 2, _image2, content, style, "a new image")
    _same_as_naive(make_fast_step(_content2, _style2, weights), 3, _image2, _content2, _style2, "a new content/style pair")
    ### END HIDDEN TESTS
    _, _called = grading.library_calls(_step, image)
    grading.check("naive_step" not in _called, "step(image) calls naive_step: that is the step to beat, not a way to do it")
    _measured = capstone_reference.speedup(lambda: naive_step(image, content, style, weights),
                                           lambda: _step(image), rounds=ROUNDS, timer=time.process_time)
    print(f"speedup over naive_step: {_measured:.2f}x ({ROUNDS} rounds, {SIZE}x{SIZE} images)")
    grading.leaderboard("style-transfer step speedup", _measured, "x")
    grading.check(_measured >= REQUIRED_SPEEDUP,
                  f"your step is {_measured:.2f}x as fast as naive_step; at least {REQUIRED_SPEEDUP}x is required "
                  f"(what does naive_step compute that never changes, or twice?)")

# %% [markdown]
# ## 3. 每种办法各快多少
#
# 下面用你的计时函数（还没通过测试时用参考实现）比较几种写法，各自相对 `naive_step` 的加速比：
# 只把目标提出循环；再加上 `aics.function` 整图执行；以及你的 `make_fast_step`。
# 数字是这台机器此刻测得的，每次运行会有起伏。

# %%
passed = grading.status("capstone_fast_step") == "passed"
if not passed:
    print("note: make_fast_step has not passed its checks yet: it is left out of the comparison below.")
_targets = capstone_reference.targets(content, style, weights)


@aics.function
def _traced(x):
    with aics.GradientTape() as tape:
        tape.watch(x)
        total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), _targets)
    return total, tape.gradient(total, x)


def hoisted_step(img):
    x = aics.constant(img)
    with aics.GradientTape() as tape:
        tape.watch(x)
        total, _, _ = style_transfer.total_loss(capstone_reference.features(x, weights), _targets)
    return float(total), tape.gradient(total, x).numpy()


variants = {"targets hoisted": hoisted_step,
            "hoisted + aics.function": lambda img: tuple(v.numpy() for v in _traced(aics.constant(img)))}
if passed:
    variants["your make_fast_step"] = make_fast_step(content, style, weights)
ratios = {}
for k, (name, fn) in enumerate(variants.items(), 1):
    print(f"measuring {k} of {len(variants)}: {name} ...", flush=True)
    ratios[name] = speedup(lambda: naive_step(image, content, style, weights), lambda: fn(image), rounds=ROUNDS,
                           timer=time.process_time)
fig, ax = plt.subplots(figsize=(6, 2.4))
ax.barh(list(ratios), list(ratios.values()), color="tab:blue")
ax.axvline(1.0, color="gray", lw=1, ls="--", label="naive_step")
ax.axvline(REQUIRED_SPEEDUP, color="tab:red", lw=1, ls=":", label=f"required {REQUIRED_SPEEDUP}x")
ax.set_xlabel("speedup over naive_step (x, higher is faster)")
ax.legend(loc="lower right", fontsize=8)
ax.set_title(f"one style-transfer step, {SIZE}x{SIZE}, median of {ROUNDS} rounds")
plt.tight_layout()
plt.show()
for name, r in ratios.items():
    print(f"{name:28s} {r:5.2f}x")
