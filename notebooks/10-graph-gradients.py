# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10 图上的自动求导：自己写 `gradients(ys, xs, grad_ys)`
#
# **前置章节**：[08 op-registration](08-op-registration.ipynb)。那一章从单个算子出发：用 `@aics.RegisterGradient`
# 给一个算子注册梯度函数（给定输出的梯度，算出输入的梯度），并用数值梯度检查它。这一章把这些梯度函数**串起来**：
# 自己写静态图上的 `gradients(ys, xs, grad_ys)`——`aics.gradients`、`optimizer.minimize` 背后的那一步——再用它训练一个真正的 TF1 程序。
#
# 本章的学习目标：
#
# 1. 找出反向要经过的算子：从 `xs` 能到达、`ys` 又依赖的那些，`stop_gradients` 处截断；
# 2. 按反向拓扑序 (reverse topological order) 处理它们，扇出 (fan-out) 处把几份梯度相加；
# 3. 换上你的实现，让一个 TF1 训练程序照样训练出与库相同的数。
#
# **练习**（自动评分，共 8 分）：第 2 节的 `backward_ops`（3 分）和 `my_gradients`（5 分）。没做完或没通过测试时，
# 后面的单元格改用参考实现（并打印说明），笔记本仍能一直运行到底。运行时间见下面第一个代码单元格的输出（实测）。
#
# > 本章不注册任何算子或梯度；第一个单元格仍用 `aics.experimental.registration_scope()` 记下注册表此刻的状态，
# > 最后一个单元格核对并恢复它，所以同一进程里之后运行的代码看到的注册表与本章开始前一样。

# %%
import numpy as np

import aicslib as aics
from workbook import grading, run_times

run_times.show("graph-gradients")
np.set_printoptions(precision=4, suppress=True)
chapter_scope = aics.experimental.registration_scope()
ops_at_start = len(aics.introspect.list_ops())
print(f"aicslib {aics.__version__}: {ops_at_start} ops registered, "
      f"{len(aics.gradient_registry.differentiable_ops())} with a gradient, AICS_FAST={aics.flags.FAST}")

# %% [markdown]
# ## 1 算法：把单个算子的梯度串起来
#
# [08 op-registration](08-op-registration.ipynb) 里写的都是**单个算子**的梯度函数：给定算子输出的梯度，算出输入的梯度。`aics.gradients(ys, xs)` 要做的是把它们串起来，
# 在图里加上整个反向子图。TensorFlow 的实现在 `tensorflow/python/ops/gradients_util.py`（`_GradientsHelper`），aicslib 的在
# `aicslib/ops/gradients_util.py`。这个实验里你自己写它，然后让一个真正的 TF1 训练程序用你的实现训练。算法只有四个要点：
#
# 1. **哪些算子要反向**：从 `xs` 沿“消费者” (consumer) 向前能到达、并且某个 `y` 依赖它的算子。`stop_gradients` 里的张量当作常数：
#    梯度既不从它流进产生它的算子，也不沿它向前找算子。
# 2. **反向拓扑序 (reverse topological order)**：一个算子的梯度函数要用到它每个输出的**完整**梯度，所以必须等它所有的消费者都处理完
#    才能处理它。
# 3. **扇出累加 (fan-out accumulation)**：一个张量被几个算子使用时，每个消费者各送回一份梯度，它的梯度是这几份之和
#    （$\frac{\partial L}{\partial h} = \sum_k \frac{\partial L}{\partial h}\big|_{\text{经过第 } k \text{ 个消费者}}$，多元链式法则）。
#    所以 $y = h\cdot h + h$ 里 $h$ 的梯度有三份。
# 4. **起点与终点**：`ys` 有几个时求的是 $\sum_i \langle \text{grad\_ys}_i, y_i\rangle$ 的梯度，`grad_ys[i]` 没给（`None`）就用全 1；
#    没有任何梯度到达的 `x` 返回 `None` 而不是 0（TensorFlow 的约定）。`aics.stop_gradient` 生成的 `StopGradient` 算子用
#    `no_gradient` 注册，梯度到它为止。
#
# 单个算子的那一步已经给你：`call_gradient_function(op, out_grads)` 按 `op.type` 查梯度注册表，把值为 `None` 的输出梯度补成 0，
# 调用 `fn(op, *out_grads)`，返回每个输入一个梯度（或 `None`；`no_gradient` 的算子全是 `None`）。先看它在一个菱形 (diamond) 上做什么：

# %%
from aicslib.ops.gradients_util import call_gradient_function   # the per-op step (chapter 08's gradient functions)

g_diamond = aics.Graph()
with g_diamond.as_default():
    x_d = aics.placeholder(aics.float64, [3], name="x")
    h_d = aics.sin(x_d, name="h")
    y_d = aics.add(h_d * h_d, h_d, name="y")         # h has three consumers' worth of gradient: h*h twice, y once
    print("consumers of h:", [op.name for op in h_d.consumers()])
    print("ops of the graph:", [(op.name, op.type) for op in g_diamond.get_operations()])
    mul_op = h_d.consumers()[0]
    print(f"call_gradient_function({mul_op.name}, [ones]) ->",
          [g.op.type for g in call_gradient_function(mul_op, [aics.ones_like(mul_op.outputs[0])])])

# %% [markdown]
# ## 2 实验：分两步写出 `gradients`
#
# ### 2.1 练习：反向要经过哪些算子，按什么顺序（3 分）
#
# 补全 `backward_ops(ys, xs, stop_gradients)`：返回要处理的算子的**列表**，每个算子排在它的所有（在列表里的）消费者之后。
# 用 `x.consumers()`（使用张量 `x` 的算子）、`op.outputs`、`op.inputs`、`t.op`（产生张量 `t` 的算子）就够了。
# 不要用库里现成的遍历（`aics.gradients`、planner 的 `prune` 等）。测试在菱形、带分支的图和随机图上比较算子集合，并检查顺序。

# %% nbgrader={"grade": false, "grade_id": "backward_ops", "locked": false, "schema_version": 3, "solution": true, "task": false}
def backward_ops(ys, xs, stop_gradients=()):
    """The ops a backward pass from ``ys`` to ``xs`` visits, as a list in reverse topological order.

    An op is in it when it is reachable forward from some x (through op.outputs / consumers) and
    some y depends on it; a tensor in ``stop_gradients`` is a constant (no path goes through it).
    Each op must come after every one of its consumers that is in the list.
    """
    ### BEGIN SOLUTION
    stops = set(stop_gradients)
    forward, stack = set(), [op for x in xs if x not in stops for op in x.consumers()]
    while stack:
        op = stack.pop()
        if op not in forward:
            forward.add(op)
            stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
    between, stack = set(), [y.op for y in ys if y not in stops]
    while stack:
        op = stack.pop()
        if op in forward and op not in between:
            between.add(op)
            stack.extend(t.op for t in op.inputs if t not in stops)
    waiting = dict.fromkeys(between, 0)      # how many uses by ops in `between` are not processed yet
    for op in between:
        for t in op.inputs:
            if t.op in between and t not in stops:
                waiting[t.op] += 1
    ready = [op for op in between if waiting[op] == 0]
    order = []
    while ready:
        op = ready.pop()
        order.append(op)
        for t in op.inputs:
            if t.op in between and t not in stops:
                waiting[t.op] -= 1
                if waiting[t.op] == 0:
                    ready.append(t.op)
    return order
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "backward_ops_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): the set of ops against the definition (autodiff.between_brute), the order, no library walk.
from workbook.references import autodiff as _ad


def _check_backward_ops(ys, xs, stops, what):
    got, called = grading.library_calls(backward_ops, ys, xs, stops)
    used = sorted(called & _ad.machinery_names())
    grading.check(not used, f"backward_ops calls the library's graph walk ({', '.join(used)}): write the walk yourself "
                            f"with consumers(), op.inputs and op.outputs")
    grading.check(isinstance(got, (list, tuple)), f"{what}: backward_ops returned {type(got).__name__}, expected a list")
    names = [op.name for op in got]
    grading.check(len(set(names)) == len(names), f"{what}: ops listed twice: {sorted({n for n in names if names.count(n) > 1})}")
    want = {op.name for op in _ad.between_brute(ys, xs, stops)}
    missing, extra = sorted(want - set(names)), sorted(set(names) - want)
    grading.check(not missing and not extra, f"{what}: expected the ops {sorted(want)}; missing {missing}, extra {extra} "
                  f"(an op belongs when an x reaches it and a y depends on it, no stopped tensor on the way)")
    bad_order = _ad.is_reverse_topological(got)
    grading.check(bad_order is None, f"{what}: {bad_order}; each op must come after all its consumers "
                                     f"(its gradient needs every consumer's contribution first)")


with grading.exercise("backward_ops"):
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float64, [3], name="x")
        h = aics.sin(x, name="h")
        y = aics.add(h * h, h, name="y")
        _check_backward_ops([y], [x], (), "the diamond y = h*h + h, h = sin(x)")
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float64, [3], name="x")
        c = aics.cos(aics.constant([1.0, 2.0, 3.0], dtype=aics.float64, name="c"), name="cos_c")  # not from x
        a = aics.tanh(x, name="a")
        aics.exp(a, name="unused")                                                              # no y needs it
        y = aics.multiply(a, c, name="y")
        _check_backward_ops([y], [x], (), "y = tanh(x) * cos(c) with a branch exp(tanh(x)) no y uses")
        s = aics.square(x, name="s")
        y2 = aics.add(aics.sin(s, name="sin_s"), a, name="y2")
        _check_backward_ops([y2], [x], [s], "y2 = sin(s) + tanh(x), s = square(x) in stop_gradients")
        _check_backward_ops([y, y2], [x, a], (), "two ys, xs = [x, tanh(x)]")
    ### BEGIN HIDDEN TESTS
    for _seed in range(8):
        _case = _ad.random_graph(_seed)
        with _case["graph"].as_default():
            _check_backward_ops(_case["ys"], _case["xs"], _case["stops"], _case["describe"])
    ### END HIDDEN TESTS

# %% [markdown]
# ### 2.2 练习：沿反向拓扑序传播并累加梯度（5 分）
#
# 补全 `my_gradients(ys, xs, grad_ys, stop_gradients)`，它的签名就是 `aics.gradients` 背后那个可替换的实现（见
# `aicslib/ops/gradients_impl.py` 的说明）：返回每个 `x` 一个梯度张量，没有梯度到达时是 `None`。步骤：
#
# * 用一个字典记下每个张量收到的梯度**列表**；先放进每个 `y` 的起始梯度（`grad_ys[i]`，或 `aics.ones_like(y)`）；
# * 按 `backward_ops(...)` 的顺序处理每个算子：把它每个输出收到的梯度加起来（`aics.add_n`；一份也没有就是 `None`），
#   若所有输出都没有梯度就跳过它，否则调用 `call_gradient_function(op, out_grads)`，把得到的每个输入梯度记到对应的输入张量上
#   （`None` 和 `stop_gradients` 里的张量除外）；
# * 最后把每个 `x` 收到的梯度加起来返回。
#
# 测试对照的是中心差分（float64）算出的数值梯度：菱形、多个 `ys`、`grad_ys`、`stop_gradient`、不相连的 `x`，
# 隐藏测试还有随机图和梯度注册表里的每一类可微算子。不要调用 `aics.gradients` 或库里的其他求导实现。
# 你的 `backward_ops` 没通过测试时，这里的测试改用参考的 `backward_ops`（并说明），两道题分开计分。

# %% nbgrader={"grade": false, "grade_id": "my_gradients", "locked": false, "schema_version": 3, "solution": true, "task": false}
def my_gradients(ys, xs, grad_ys=None, stop_gradients=()):
    """The gradients of sum_i <grad_ys[i], ys[i]> with respect to each of ``xs``, built in the graph.

    ys, xs: lists of graph Tensors; grad_ys: None or one entry per y (None entries mean ones);
    stop_gradients: tensors no gradient flows through. Returns a list with one Tensor per x, or
    None where no gradient reaches that x.
    """
    ### BEGIN SOLUTION
    stops = set(stop_gradients)
    received = {}                                        # tensor -> the gradients sent back to it
    for i, y in enumerate(ys):
        start = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else aics.ones_like(y)
        received.setdefault(y, []).append(aics.convert_to_tensor(start, dtype=y.dtype))

    def total(t):
        parts = received.get(t, [])
        return None if not parts else parts[0] if len(parts) == 1 else aics.add_n(parts)

    for op in backward_ops(ys, xs, stops):
        out_grads = [total(t) for t in op.outputs]
        if all(g is None for g in out_grads):
            continue
        for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
            if g is not None and t not in stops:
                received.setdefault(t, []).append(g)
    return [total(x) for x in xs]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "my_gradients_test", "locked": true, "points": 5, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): my_gradients against central differences in float64 (workbook.references.autodiff).
from workbook.references import autodiff as _ad

_student_backward_ops = backward_ops
if grading.status("backward_ops") != "passed":
    print("note: backward_ops has not passed its test: my_gradients is checked with the reference backward_ops")
    backward_ops = _ad.backward_ops
_allowed = () if backward_ops is _student_backward_ops else ("backward_ops",)


def _check_gradients(ys, xs, feed, grad_ys=None, grad_ys_values=None, stops=(), stopped=(), what=""):
    """Calls my_gradients as aics.gradients does (in the graph, under the name scope 'gradients'),
    then compares each gradient with central differences; None exactly where no gradient reaches x."""
    stopped = list(stopped) + [s for s in stops if s not in stopped]
    with aics.name_scope("gradients"):
        got, called = grading.library_calls(my_gradients, ys, xs, grad_ys, set(stops))
    used = sorted((called & _ad.machinery_names()) - set(_allowed))
    grading.check(not used, f"my_gradients calls the library's differentiation ({', '.join(used)}): "
                            f"walk backward_ops and call call_gradient_function yourself")
    grading.check(isinstance(got, (list, tuple)) and len(got) == len(xs),
                  f"{what}: expected a list with one entry per x ({len(xs)}), got {got!r}")
    reach = _ad.connected(ys, xs, stopped)
    with aics.Session() as sess:
        gy_values = grad_ys_values or [np.ones(np.shape(v)) for v in sess.run(ys, feed)]
        numeric = _ad.numerical_gradients(sess, ys, xs, feed, gy_values, stopped)
        for x, g, r, n in zip(xs, got, reach, numeric):
            if not r:
                grading.check(g is None, f"{what}: the gradient for '{x.name}' should be None (no y depends on it "
                                         f"along a path without stop_gradient), got {g!r}")
                continue
            grading.check(g is not None, f"{what}: the gradient for '{x.name}' is None, but a y depends on it")
            grading.check_array(sess.run(g, feed), n, f"{what}: d/d {x.name}", rtol=1e-6, atol=1e-7,
                                hint="central differences of sum_i <grad_ys_i, y_i>")


with grading.exercise("my_gradients"):
    _r = np.random.default_rng(7)
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float64, [3], name="x")
        h = aics.sin(x, name="h")
        y = aics.add(h * h, h, name="y")
        _check_gradients([y], [x], {x: _r.uniform(-1, 1, 3)}, what="the diamond y = h*h + h, h = sin(x)")
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float64, [3], name="x")
        z = aics.placeholder(aics.float64, [3], name="z")
        lonely = aics.placeholder(aics.float64, [3], name="lonely")
        a = aics.tanh(x * z, name="a")
        y1 = aics.multiply(a, x, name="y1")
        y2 = aics.exp(a, name="y2")
        gy = aics.placeholder(aics.float64, [3], name="grad_y1")
        feed = {x: _r.uniform(-1, 1, 3), z: _r.uniform(-1, 1, 3), lonely: _r.uniform(-1, 1, 3)}
        gy_value = _r.uniform(-2, 2, 3)
        _check_gradients([y1, y2], [x, z, lonely], {**feed, gy: gy_value}, grad_ys=[gy, None],
                         grad_ys_values=[gy_value, np.ones(3)],
                         what="two ys y1 = tanh(x*z)*x, y2 = exp(tanh(x*z)), grad_ys=[g, None], an unconnected x")
        frozen = aics.stop_gradient(a, name="frozen")
        y3 = aics.add(frozen * x, aics.square(a), name="y3")
        _check_gradients([y3], [x, z], feed, stopped=[frozen], what="y3 = stop_gradient(a)*x + a^2")
        _check_gradients([y3], [x, z], feed, stops=[a], what="y3 with stop_gradients=[a]")
        _check_gradients([aics.sin(frozen, name="only_stopped")], [x], feed, stopped=[frozen],
                         what="y = sin(stop_gradient(a)): nothing reaches x")
    ### BEGIN HIDDEN TESTS
    for _seed in range(8):
        _case = _ad.random_graph(_seed)
        with _case["graph"].as_default():
            _check_gradients(_case["ys"], _case["xs"], _case["feed"], _case["grad_ys"], _case["grad_ys_values"],
                             _case["stops"], _case["stopped"], what=_case["describe"])
    # Every differentiable op of the registry (every 3rd in the quick setting), in its own graph.
    _recipes = sorted(_ad.gradient_recipes().items())
    for _op_type, _recipe in _recipes[::3 if aics.flags.FAST else 1]:
        _case = _ad.registry_case(_op_type, _recipe)
        with _case["graph"].as_default():
            with aics.name_scope("gradients/"):        # (the scope aics.gradients opens)
                _got = my_gradients([_case["loss"]], _case["xs"], None, set())
            grading.check(all(g is not None for g in _got), f"{_op_type}: my_gradients gave None for an input "
                                                            f"the loss depends on")
            with aics.Session() as _sess:
                _err, _scale = _ad.directional_check(_sess, _case["loss"], _case["xs"], _got, _case["feed"],
                                                     _case["delta"], np.random.default_rng(0))
            grading.check(_err <= _case["tolerance"] * _scale,
                          f"a graph with one {_op_type} op: the gradient disagrees with central differences by {_err:.3g}")
    ### END HIDDEN TESTS
backward_ops = _student_backward_ops

# %% [markdown]
# ## 3 用你的 `gradients` 训练一个真正的 TF1 程序
#
# `workbook.engine.compare_engines` 运行 `tests/tf_programs/` 里的一个 TF1 程序（和 TensorFlow 教程一样的写法，只把
# `import` 换成了 aicslib，程序最后自己用 NumPy 核对结果），先用库里的 `gradients`，再在 `student_engine(gradients=...)` 里用你的。
# 程序里的 `optimizer.minimize(loss)` 调用 `aics.gradients`，后者经过 `aics.experimental.use_gradients` 这个接缝 (seam)
# 调用你的 `my_gradients`。两个引擎打印的数应当一致。练习没通过时这里改用参考实现（并说明）。

# %%
from workbook import engine
from workbook.references import autodiff as autodiff_reference

backward_ops = grading.use("backward_ops", backward_ops, autodiff_reference.backward_ops, "backward_ops")
gradients_fn = grading.use("my_gradients", my_gradients, autodiff_reference.gradients, "gradients")
library_numbers, your_numbers = engine.compare_engines("tf1_mlp_dropout_lr_decay", gradients=gradients_fn)
assert all(np.isclose(library_numbers[k], your_numbers[k], rtol=1e-5) for k in library_numbers)

# %% [markdown]
# ## 小结
#
# * 图上的 `gradients(ys, xs, grad_ys)` 只是把单个算子的梯度函数（op-registration 一章注册的那种）串起来：找出 xs 与 ys 之间的算子，
#   按反向拓扑序处理，同一张量收到的多份梯度相加，`stop_gradient` 处截断，没有梯度到达的 x 得到 `None`。
# * 顺序之所以要“反向拓扑”，是因为一个算子的梯度函数需要它每个输出的**完整**梯度，也就是所有消费者都已送回自己那一份。
# * `aics.experimental.use_gradients` 这个接缝让 `aics.gradients`（以及 `optimizer.minimize`）改用你的实现：
#   换上它，真正的 TF1 训练程序照样训练出同样的结果。
#
# 最后核对注册表：本章没有留下任何注册（`chapter_scope.restore()` 把它恢复到本章开始前）。

# %%
chapter_scope.restore()          # nothing was registered here; this makes sure of it
assert len(aics.introspect.list_ops()) == ops_at_start
print("registries as at the start:", len(aics.introspect.list_ops()), "ops")
