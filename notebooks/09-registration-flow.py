# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 09 算子注册的流程：从 spec 字符串到 kernel 查找、设备放置和一次调用
#
# **前置章节 (prerequisites)**：[08 op-registration](08-op-registration.ipynb)
#
# **对应习题**：5.6（在 `core/ops` 中找到卷积算子的注册代码，简述算子注册流程）。
#
# 上一章 [08 op-registration](08-op-registration.ipynb) 从使用者的角度注册了梯度和一个新算子 `PowerDifference`：
# 写下 OpDef、kernel 和梯度，它就能在 eager、Session 和 `aics.function` 里运行。这一章打开注册表，看这三样东西
# 登记之后框架怎样用它们：
#
# 1. 用活的对象一步步走完注册流程：spec 字符串 → `OpDefBuilder` → `OpDef` → 注册表 (registry)；kernel 按设备和 dtype 注册、运行时查找；
# 2. 另一种设备 MLU 与软放置 (soft placement)；练习（自动评分，2 分）：自己写放置规则——一个节点最终在哪个设备上运行，或者报什么错；
# 3. 对照 TensorFlow 的 Conv2D 注册代码，并跟踪一次真实调用从 `aics.nn.conv2d(...)` 走到 NumPy kernel 的路径；
# 4. 练习（自动评分，2 分）：给故意没有梯度的 `Tan` 注册梯度，并通过数值检查。
#
# 本章用上一章的 `PowerDifference` 做例子。为了让本章在一个新启动的 Jupyter 内核里也能独立运行，下面第二个代码单元格用参考实现
# （`workbook/references/power_difference.py`，和上一章练习的答案做同样的事）重新注册它。
# 练习之后的单元格不依赖你的答案，没做完也能一直运行到底。运行时间见下面第一个代码单元格的输出（实测）。
#
# > 注册表是**进程级全局**的。本章开头用 `aics.experimental.registration_scope()` 记下注册表此刻的状态，本章最后一个单元格把它原样恢复；各个注册单元格都可以反复运行。

# %%
import inspect
import os

import numpy as np
import ipywidgets as widgets
from IPython.display import display

import aicslib as aics
from aicslib.framework.op_def import OpDefBuilder, parse_arg_spec, parse_attr_spec
from workbook import grading, run_times
from workbook.references import power_difference as pd_reference

np.set_printoptions(precision=4, suppress=True)
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aics.__file__)))
run_times.show("registration-flow")
print(f"aicslib {aics.__version__}: {len(aics.introspect.list_ops())} ops registered, "
      f"AICS_FAST={aics.flags.FAST}")

# %%
# PowerDifference as chapter 08 left it: z = (x - y)^pow, its OpDef, a float32/float64 CPU kernel and
# its gradient. Everything this chapter registers ends with the chapter: its last cell calls
# chapter_scope.restore().
OP = "PowerDifference"
chapter_scope = aics.experimental.registration_scope()
kernel_fn, grad_fn = pd_reference.register()
xv = np.array([[1., 2., 3.], [4., 5., 6.]], dtype=np.float32)
yv = np.array([0.5, 1.0, 1.5], dtype=np.float32)
x, y = aics.constant(xv), aics.constant(yv)
print(aics.introspect.summary(OP))
assert np.allclose(aics.raw_ops.PowerDifference(x=x, y=y, pow=3).numpy(), (xv - yv) ** 3)

# %% [markdown]
# ## 1 习题 5.6：算子注册的流程，一步一步
#
# TensorFlow 中一个算子从“写下定义”到“在某个设备上执行”，大致经过这些步骤：
#
# 1. **写 spec**：`REGISTER_OP("Conv2D")` 展开成一个静态的 `OpDefBuilderWrapper` 对象，链式调用 `.Input("input: T")`、`.Attr("T: {...}")`、
#    `.SetShapeFn(...)` 把 spec 字符串和形状函数存进其中的 `OpDefBuilder`；
# 2. **解析成 OpDef**：程序加载时（C++ 静态初始化阶段）这个 builder 被交给全局注册表 `OpRegistry::Global()`；注册表在第一次被查询之前调用
#    `OpDefBuilder::Finalize`，逐条解析 spec 字符串，得到 `OpDef` protobuf 并做合法性检查，连同形状函数一起保存；
# 3. **登记 kernel**：`REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU).TypeConstraint<float>("T"), Conv2DOp<CPUDevice, float>)`
#    生成一个 `KernelDef`（算子名 + 设备类型 + 类型约束）和一个创建 `OpKernel` 对象的工厂函数，放进全局 kernel 注册表；
# 4. **Python 接口**：构建 TensorFlow 时根据 OpDef 自动生成 `gen_nn_ops.py` 这类包装函数（以及 `tf.raw_ops`）；梯度在 Python 端用 `@ops.RegisterGradient` 另外登记；
# 5. **运行时查找**：放置器 (placer) 为每个节点选设备——所请求的设备上有匹配的 kernel 才放上去，否则在允许软放置时退到有 kernel 的设备（通常是 CPU）；
#    执行时按“算子名 + 设备类型 + 节点的属性”在 kernel 注册表里找到匹配的 `KernelDef`，用工厂函数创建 `OpKernel`，调用它的 `Compute(OpKernelContext*)`。
#
# aicslib 里每一步都有对应的 Python 对象，下面逐个拿出来看。

# %% [markdown]
# ### 1.1 spec 字符串 → `AttrDef` / `ArgDef`
#
# 属性 spec 的语法是 `name: type[ >= 最小值][ = 默认值]`，类型可以是 `int`、`float`、`bool`、`string`、`type`、`list(...)`，
# 或 `{...}` 列出的允许值集合；输入输出 spec 是 `name: 类型或类型属性`，还可以是 `N * T`（N 个同类型张量）。`parse_attr_spec`
# 和 `parse_arg_spec` 就是 `OpDefBuilder` 用来解析每一条 spec 的函数：

# %%
attr_specs = ["T: {half, float, double}",
              "pow: int = 2",
              "ksize: list(int) >= 4",
              "padding: {'SAME', 'VALID'}",
              "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
              "use_cudnn_on_gpu: bool = true"]
for spec in attr_specs:
    print(f"{spec!r:42} -> {parse_attr_spec(spec).to_dict()}")
print()
for spec in ["x: T", "values: N * T", "shape: int32"]:
    print(f"{spec!r:42} -> {parse_arg_spec(spec, {}, is_output=False).to_dict()}")

assert parse_attr_spec("pow: int = 2").default_value == 2
assert parse_attr_spec("ksize: list(int) >= 4").minimum == 4
assert parse_arg_spec("values: N * T", {}, is_output=False).number_attr == "N"

# %% [markdown]
# 写错的 spec 在**写下它的那一次调用**就报错，而不是等到算子运行时：

# %%
for bad in ["pow: integer = 2", "T: {float, 'x'}", "pow: int = two"]:
    try:
        parse_attr_spec(bad)
    except ValueError as e:
        print(f"{bad!r:20} -> ValueError: {e}")
    else:
        raise AssertionError(f"{bad!r} should have been rejected")

# %% [markdown]
# ### 1.2 `OpDefBuilder` → `OpDef`
#
# `aics.register_op(name)` 做的事情就是“新建一个 `OpDefBuilder` 并把它放进注册表”。这里先不注册，单独建一个 builder 观察它。
# 和 TensorFlow 一样，输入可以引用稍后才声明的属性 `T`；在读取 OpDef 时 `check_complete()` 检查所有被引用的属性都已声明。
# `str(op_def)` 按 TensorFlow 的 protobuf 文本格式 (text format) 打印，和在 TensorFlow 里 `print` 一个 `OpDef` protobuf 看到的格式相同。

# %%
builder = OpDefBuilder("PowerDifferenceDemo", ("<notebook>", 0))
builder.input("x: T").input("y: T").output("z: T")      # T is not declared yet: fine for now
builder.attr("T: {float, double}").attr("pow: int = 2")
builder.check_complete()
op_def = builder.op_def
print(type(op_def).__name__, "->", [a.name for a in op_def.input_arg], [a.name for a in op_def.attr])
print(op_def)
assert 'name: "PowerDifferenceDemo"' in str(op_def) and "i: 2" in str(op_def)
assert "PowerDifferenceDemo" not in aics.op_def_registry       # only register_op puts it there

broken = OpDefBuilder("Broken", ("<notebook>", 0)).input("x: T").output("y: T")
try:
    broken.check_complete()
except ValueError as e:
    print("\nValueError:", e)
else:
    raise AssertionError("an undeclared attr must be rejected")

# %% [markdown]
# ### 1.3 注册表：按名字存取 OpDef
#
# 注册表是一个按算子名索引的字典：`get` 查不到时返回 `None`（同 TF 的 `op_def_registry.get`），`lookup` 则抛出 `NotFoundError`；
# 同名重复注册抛出 `KeyError`，并指出第一次注册的位置——这正是 [08 op-registration](08-op-registration.ipynb) 第 2.4 节的注册单元格（和本章开头的 `pd_reference.register`）要先注销再注册的原因。

# %%
od = aics.op_def_registry.get(OP)
print(f"{od.name}: registered at {os.path.basename(od.registered_at[0])}:{od.registered_at[1]}, "
      f"attrs {[a.name for a in od.attr]}")
try:
    aics.register_op(OP)
except KeyError as e:
    print("KeyError:", e)
else:
    raise AssertionError("duplicate registration must fail")
try:
    aics.op_def_registry.lookup("PowerDiff")
except aics.errors.NotFoundError as e:
    print("NotFoundError:", e.message)
assert aics.op_def_registry.get("PowerDiff") is None
assert od is aics.op_def_registry.get(OP)

# %% [markdown]
# ### 1.4 kernel：按设备和 dtype 注册，运行时查找
#
# kernel 注册表的键是 (算子名, 设备类型, 类型约束)。运行时用节点的属性（例如 `T=float32`）去匹配：`kernel_registry.find`
# 返回匹配的 `KernelDef` 或 `None`。注意两层检查的区别：
#
# * `int32` 不在 OpDef 允许的 `T` 里 → 建节点时就被 OpDef 拒绝（`TypeError`）；
# * `half` 是 OpDef 允许的，但我们没有为它注册 kernel → 通过 OpDef 检查，到**查找 kernel** 时才失败（`NotFoundError`，消息里列出已注册的 kernel）。

# %%
for entry in aics.introspect.list_kernels(OP):
    print(entry)
kd = aics.kernel_registry.find(OP, "CPU", {"T": aics.float32, "pow": 2})
print(kd, "| registered at", os.path.basename(kd.location[0]), "line", kd.location[1])
assert kd.impl is kernel_fn
assert aics.kernel_registry.find(OP, "CPU", {"T": aics.float16, "pow": 2}) is None

half = aics.constant([1.0, 2.0], dtype=aics.float16)
try:
    aics.raw_ops.PowerDifference(x=half, y=half)
except aics.errors.NotFoundError as e:
    print("\nNotFoundError:", e.message)
else:
    raise AssertionError("no float16 kernel is registered")

try:
    aics.raw_ops.PowerDifference(x=aics.constant([1, 2]), y=aics.constant([3, 4]))
except TypeError as e:
    print("\nTypeError:", e)
else:
    raise AssertionError("int32 is not allowed by the OpDef")


# %% [markdown]
# ### 1.5 另一种设备：MLU 与软放置
#
# 课程使用的加速器是寒武纪 MLU，设备名 `/mlu:0`。在 aicslib 里可以为 MLU 注册 kernel（它实际上在 CPU 上运行，
# 但会像 MLU 节点一样被放置、记录日志和追踪）。我们只为 `float32` 注册 MLU kernel，然后在 `/mlu:0` 上建两个节点：
#
# * `float32` 节点：MLU 上有 kernel → 放在 `/device:MLU:0`；
# * `float64` 节点：MLU 上没有 kernel → 软放置退回 `/device:CPU:0`。
#
# `ConfigProto(log_device_placement=True)` 让 Session 打印每个节点的放置结果（写到 stderr，格式同 TensorFlow 的 C++ 日志），
# `RunMetadata` 则让我们在代码里断言放置结果。

# %%
def _power_difference_mlu(x, y, pow):
    # A real MLU kernel would launch a BANG C kernel here; aicslib runs it on the host.
    return np.power(x - y, pow).astype(x.dtype, copy=False)

# Registering the same (op, device, constraint) twice raises KeyError, so re-running this cell checks first.
if aics.kernel_registry.find(OP, "MLU", {"T": aics.float32}) is None:
    aics.register_kernel(OP, device="MLU", type_constraint={"T": [aics.float32]})(_power_difference_mlu)
print(aics.introspect.list_kernels(OP))

g_mlu = aics.Graph()
with g_mlu.as_default():
    a = aics.constant(xv, name="a")
    b = aics.constant(yv, name="b")
    a64, b64 = aics.cast(a, aics.float64), aics.cast(b, aics.float64)
    with aics.device("/mlu:0"):
        z_f32 = aics.raw_ops.PowerDifference(x=a, y=b, name="pd_f32")
        z_f64 = aics.raw_ops.PowerDifference(x=a64, y=b64, name="pd_f64")
print("requested:", z_f32.op.device, z_f64.op.device)

run_md = aics.RunMetadata()
with aics.Session(graph=g_mlu, config=aics.ConfigProto(log_device_placement=True)) as sess:
    r32, r64 = sess.run([z_f32, z_f64], options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                        run_metadata=run_md)
placed = {n.node_name: n.device for n in run_md.node_stats()}
print("placed:   ", placed)
assert placed["pd_f32"] == "/device:MLU:0"
assert placed["pd_f64"] == "/device:CPU:0"
assert np.allclose(r32, (xv - yv) ** 2) and np.allclose(r64, (xv - yv) ** 2)

# %% [markdown]
# 关掉软放置 (`allow_soft_placement=False`) 时，没有 MLU kernel 的节点就无法放置，Session 报 `InvalidArgumentError`。
# eager 模式走的是同一套查找逻辑：结果张量的 `.device` 说明 kernel 实际在哪里运行；把 VLOG 级别调到 1 还能看到软放置的日志。

# %%
with aics.Session(graph=g_mlu, config=aics.ConfigProto(allow_soft_placement=False)) as sess:
    print("float32 on MLU:", sess.run(z_f32)[0])
    try:
        sess.run(z_f64)
    except aics.errors.InvalidArgumentError as e:
        print("InvalidArgumentError:", e.message)
    else:
        raise AssertionError("pd_f64 has no MLU kernel")

x64_e, y64_e = aics.cast(x, aics.float64), aics.cast(y, aics.float64)
saved_vlog = aics.flags.MIN_VLOG_LEVEL
aics.flags.MIN_VLOG_LEVEL = 1          # like TF_CPP_MIN_VLOG_LEVEL=1
try:
    with aics.device("/mlu:0"):
        e32 = aics.raw_ops.PowerDifference(x=x, y=y, pow=3)
        e64 = aics.raw_ops.PowerDifference(x=x64_e, y=y64_e, pow=3)
finally:
    aics.flags.MIN_VLOG_LEVEL = saved_vlog
print("eager:", e32.device, e64.device)
assert e32.device == "/device:MLU:0" and e64.device == "/device:CPU:0"


# %% [markdown]
# ### 1.6 练习：一个节点在哪里运行（2 分）
#
# 把 1.4、1.5 两节看到的规则自己写出来。补全 `place_node(op_type, device, attrs, allow_soft_placement)`：
# `device` 是请求的设备（规范形式，例如 `"/device:MLU:0"`），`attrs` 是节点的属性（例如 `{"T": aics.float32, "pow": 2}`）。
#
# 1. 请求的设备**类型**（`"/device:MLU:0"` 的 `MLU`）上有与 `attrs` 匹配的 kernel（`aics.kernel_registry.find(op_type, 设备类型, attrs)`
#    不是 `None`）：返回 `device`；
# 2. 否则，CPU 上有匹配的 kernel：允许软放置时返回 `"/device:CPU:0"`；不允许时抛出 `aics.errors.InvalidArgumentError(None, None, 消息)`；
# 3. 哪里都没有匹配的 kernel：抛出 `aics.errors.NotFoundError(None, None, 消息)`。
#
# 只能用 `aics.kernel_registry` 的 `find`/`lookup`（和 `aics.op_def_registry.get`）；调用框架自己做放置的函数不算。
# 测试把各种算子、dtype 和设备的组合建成节点，真的交给 `Session` 运行（开、关软放置各一次），用 `RunMetadata`
# 读出每个节点实际被放到哪里（或 `Session` 报了什么错），再与你的函数比较。

# %% nbgrader={"grade": false, "grade_id": "place_node", "locked": false, "schema_version": 3, "solution": true, "task": false}
def place_node(op_type, device, attrs, allow_soft_placement=True):
    """The device a node of `op_type` with `attrs` that asked for `device` runs on; raises
    InvalidArgumentError (no kernel there, soft placement off) or NotFoundError (no kernel anywhere)."""
    ### BEGIN SOLUTION
    kind = device.split(":")[1].upper()
    if aics.kernel_registry.find(op_type, kind, attrs) is not None:
        return device
    if kind != "CPU" and aics.kernel_registry.find(op_type, "CPU", attrs) is not None:
        if allow_soft_placement:
            return "/device:CPU:0"
        raise aics.errors.InvalidArgumentError(None, None, f"no {kind} kernel for {op_type} and soft placement is off")
    raise aics.errors.NotFoundError(None, None, f"no kernel for {op_type} with {attrs} on {kind} or CPU")
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "place_node_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Autograded checks (locked): for each (op, dtype, requested device, soft placement) the node is built
# and run by a Session, and RunMetadata says where it ran (or the Session's error type is kept); your
# place_node must say the same, using the kernel registry only.
_PLACE_ALLOWED = ("find", "lookup", "get", "__init__")
_ERRORS = (aics.errors.InvalidArgumentError, aics.errors.NotFoundError)


def _session_placement(build, device, soft):
    """(where a Session ran the node build[0] makes under aics.device(device), fed build[1]'s arrays
    through placeholders (no constant folding), or the Session's error class; the node's attrs)."""
    graph = aics.Graph()
    with graph.as_default():
        arrays = build[1]()
        inputs = [aics.placeholder(aics.as_dtype(v.dtype), v.shape) for v in arrays]
        with aics.device(device):
            out = build[0](*inputs)
    metadata = aics.RunMetadata()
    try:
        with aics.Session(graph=graph, config=aics.ConfigProto(allow_soft_placement=soft)) as sess:
            sess.run(out, dict(zip(inputs, arrays)), options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                     run_metadata=metadata)
    except _ERRORS as e:
        return type(e), dict(out.op.attrs)
    return {n.node_name: n.device for n in metadata.node_stats()}[out.op.name], dict(out.op.attrs)


def _student_place(op_type, device, attrs, soft):
    try:
        return grading.no_library_calls(place_node, op_type, device, attrs, soft, allowed=_PLACE_ALLOWED,
                                        what="place_node", how="with aics.kernel_registry.find")
    except grading.CheckFailed:
        raise
    except _ERRORS as e:
        return type(e)
    except Exception as e:
        if isinstance(e, NotImplementedError) and not e.args:
            raise                                  # the release stub: "not answered yet"
        raise grading.CheckFailed(f"place_node({op_type!r}, {device!r}, soft={soft}) raised {type(e).__name__}: {e}; "
                                  f"only InvalidArgumentError and NotFoundError are expected") from None


def _name(result):
    return result.__name__ if isinstance(result, type) else repr(result)


def _check_placements(cases):
    for op_type, build, dtype_name, device in cases:
        for soft in (True, False):
            want, attrs = _session_placement(build, device, soft)
            got = _student_place(op_type, device, attrs, soft)
            grading.check(got == want, f"{op_type} on {dtype_name} inputs, asked for {device}, soft placement "
                                       f"{'on' if soft else 'off'}: the Session gives {_name(want)}, place_node "
                                       f"gives {_name(got)}")


def _pd(dtype):
    return (lambda a, b: aics.raw_ops.PowerDifference(x=a, y=b, pow=3),
            lambda: (xv.astype(dtype), yv.astype(dtype)))


def _unary(fn, dtype):
    return (fn, lambda: (xv.astype(dtype),))


with grading.exercise("place_node"):
    _check_placements([
        ("PowerDifference", _pd(np.float32), "float32", "/device:MLU:0"),    # an MLU kernel: stays on the MLU
        ("PowerDifference", _pd(np.float64), "float64", "/device:MLU:0"),    # only a CPU kernel: soft placement
        ("PowerDifference", _pd(np.float16), "float16", "/device:MLU:0"),    # allowed by the OpDef, no kernel at all
        ("PowerDifference", _pd(np.float64), "float64", "/device:CPU:0"),
    ])
    ### BEGIN HIDDEN TESTS
    _hidden_cases = [
        ("PowerDifference", _pd(np.float16), "float16", "/device:CPU:0"),
        ("MatMul", (lambda a: aics.matmul(a, a, transpose_b=True), lambda: (xv,)), "float32",
         "/device:MLU:0"),
        ("MatMul", (lambda a: aics.matmul(a, a, transpose_b=True), lambda: (xv.astype(np.float64),)),
         "float64", "/device:MLU:0"),
        ("Tanh", _unary(aics.tanh, np.float32), "float32", "/device:MLU:0"),
        ("Tanh", _unary(aics.tanh, np.float64), "float64", "/device:MLU:0"),
    ]
    _check_placements(_hidden_cases)
    ### END HIDDEN TESTS

# %% [markdown]
# 用你的 `place_node` 预测上面 `g_mlu` 里两个节点的去处，再与 `Session` 实际的放置（`placed`）对照；练习没有完成时，
# 这里用参考实现（会打印说明）。

# %%
from workbook.references import placement as placement_reference

place_fn = grading.use("place_node", place_node, placement_reference.place_node, what="placement rule")
for node in (z_f32.op, z_f64.op):
    predicted = place_fn(node.type, node.device, dict(node.attrs), True)
    print(f"{node.name}: asked for {node.device}, predicted {predicted}, the Session placed it on {placed[node.name]}")
    assert predicted == placed[node.name]

# %% [markdown]
# ### 1.7 对照 TensorFlow：Conv2D 的 `REGISTER_OP` 与 `REGISTER_KERNEL_BUILDER`
#
# `tensorflow/core/ops/nn_ops.cc`（TF 2.x）中 Conv2D 的定义：
#
# ```cpp
# REGISTER_OP("Conv2D")
#     .Input("input: T")
#     .Input("filter: T")
#     .Output("output: T")
#     .Attr("T: {half, bfloat16, float, double, int32}")
#     .Attr("strides: list(int)")
#     .Attr("use_cudnn_on_gpu: bool = true")
#     .Attr(GetPaddingAttrStringWithExplicit())
#     .Attr(GetExplicitPaddingsAttrString())
#     .Attr(GetConvnetDataFormatAttrString())
#     .Attr("dilations: list(int) = [1, 1, 1, 1]")
#     .SetShapeFn(shape_inference::Conv2DShapeWithExplicitPadding);
# ```
#
# `GetPaddingAttrStringWithExplicit()` 等函数返回的也只是 spec 字符串，例如 `"padding: {'SAME', 'VALID', 'EXPLICIT'}"` 和
# `"data_format: {'NHWC', 'NCHW'} = 'NHWC'"`。
#
# `tensorflow/core/kernels/conv_ops.cc` 中 CPU kernel 的注册（用宏对每个 dtype 展开一次；具体列出哪些类型随版本略有不同）：
#
# ```cpp
# #define REGISTER_CPU(T)                                         \
#   REGISTER_KERNEL_BUILDER(                                      \
#       Name("Conv2D").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
#       Conv2DOp<CPUDevice, T>);
#
# TF_CALL_half(REGISTER_CPU);
# TF_CALL_float(REGISTER_CPU);
# TF_CALL_double(REGISTER_CPU);
# TF_CALL_int32(REGISTER_CPU);
# ```
#
# 其中 `TF_CALL_float(REGISTER_CPU)` 展开后就是
# `REGISTER_KERNEL_BUILDER(Name("Conv2D").Device(DEVICE_CPU).TypeConstraint<float>("T"), Conv2DOp<CPUDevice, float>)`：
# `Name(...)` 给出算子名，`Device(...)` 给出设备类型，`TypeConstraint<float>("T")` 是类型约束，最后的 `Conv2DOp<CPUDevice, float>`
# 是实现 `Compute(OpKernelContext*)` 的 `OpKernel` 子类（卷积的具体实现是习题 5.7 的内容）。逐项对应：
#
# | TensorFlow (C++) | aicslib (Python) |
# |---|---|
# | `REGISTER_OP("Conv2D")`，静态初始化时执行 | `aics.register_op("Conv2D")`，`import aicslib` 时执行 |
# | `.Input("input: T")` / `.Output(...)` / `.Attr(...)` | `.input("input: T")` / `.output(...)` / `.attr(...)`，spec 语法相同 |
# | `.SetShapeFn(shape_inference::...)` | `.set_shape_fn(fn)`，`fn(ctx)` 返回输出形状 |
# | `OpRegistry::Global()` | `aics.op_def_registry` |
# | `REGISTER_KERNEL_BUILDER(Name(...).Device(DEVICE_CPU).TypeConstraint<float>("T"), ...)` | `@aics.register_kernel("Conv2D", device="CPU", type_constraint={"T": [aics.float32, ...]})` |
# | `OpKernel::Compute(OpKernelContext*)` | kernel 函数体（NumPy） |
# | 构建时生成的 `gen_nn_ops.conv2d` / `tf.raw_ops.Conv2D` | 首次访问时生成的 `aics.raw_ops.Conv2D` |
# | `python/ops/nn_grad.py` 中的 `@ops.RegisterGradient("Conv2D")` | `aicslib/ops/nn_grad.py` 中的 `@aics.RegisterGradient("Conv2D")` |
#
# aicslib 自己的 Conv2D 三处注册如下。`source_at` 按 `where` 给出的行号读出源码。Conv2D 和它的反向算子 `Conv2DBackpropInput`、`Conv2DBackpropFilter`
# 共用一个构造 OpDef 的辅助函数 `_conv_op`，记录下来的是写着算子名、调用这个辅助函数的那一行；kernel 的位置就是 kernel 函数本身
# （`aicslib/kernels/conv_ops.py`，前向；两个反向 kernel 在 `conv_grad_input_ops.py` 和 `conv_grad_filter_ops.py`）。

# %%
def source_at(location, max_lines=14):
    # The source from 'path:line' (as aics.introspect.where reports it) up to the next blank line.
    path, line = location.rsplit(":", 1)
    path = path if os.path.isabs(path) else os.path.join(REPO_ROOT, path)
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()[int(line) - 1:]
    out = []
    for text in lines[:max_lines]:
        if out and not text.strip():
            break
        out.append(text)
    return "\n".join(out)


print(aics.introspect.summary("Conv2D"))
w_conv = aics.introspect.where("Conv2D")
print("\n# the op definition, recorded at", w_conv["op"])
print(source_at(w_conv["op"], max_lines=1))
print("\n# the helper it calls, with the arguments and attrs the Conv2D family shares:")
from aicslib.ops import nn_ops as nn_ops_source
print(inspect.getsource(nn_ops_source._conv_op))
print("# the CPU kernel, recorded at", w_conv["kernels"][0]["location"])
print(source_at(w_conv["kernels"][0]["location"], max_lines=8))
print("\n# the gradient, recorded at", w_conv["gradient"])
print(source_at(w_conv["gradient"], max_lines=10))
assert w_conv["op"].startswith("aicslib/ops/nn_ops.py") and '"Conv2D"' in source_at(w_conv["op"], max_lines=1)
assert w_conv["kernels"][0]["location"].startswith("aicslib/kernels/conv_ops.py")
assert "def _conv2d_kernel" in source_at(w_conv["kernels"][0]["location"], max_lines=3)
assert any(k["device"] == "CPU" and "float32" in k["type_constraint"]["T"] for k in w_conv["kernels"])
assert aics.gradient_registry.is_differentiable("Conv2D")


# %% [markdown]
# ### 1.8 一次调用走过的路：从 `aics.nn.conv2d(...)` 到 NumPy kernel
#
# 三处注册都登记好之后，真正调用算子时框架要做的事很少。eager 模式和 Session 共用同一个执行层
# `aicslib/framework/execute.py`：每个（算子, 设备, 输入 dtype, attrs）组合只创建一次 `KernelCall`
# 对象，之后的调用都直接用它。eager 模式下 `aics.nn.conv2d(x, w, 1, "SAME")` 依次经过：
#
# 1. **Python API 包装函数** `conv2d`（`aicslib/ops/nn_ops.py`）：整理 strides、padding、data_format 等参数，
#    调用 `apply_op("Conv2D", [x, w], attrs)`。对应 TensorFlow 构建时生成的 `gen_nn_ops.conv2d`。
# 2. **`apply_op`**（`execute.py`）：按名字取出 OpDef；eager 模式交给 `execute`，静态图模式交给
#    `op_def_library.apply_op_helper`，在图里加一个节点。
# 3. **`execute`**：用（算子, 设备, 输入 dtype, attrs）作键查缓存。只有第一次调用才走完整流程：
#    `op_def_library.prepare_inputs` 转换输入、推断并检查 attrs（TensorFlow 的 `op_def_library` 做同样的事），
#    按设备和 dtype 选 kernel，创建 `KernelCall`。Python 标量（如 `x + 1.0` 里的 `1.0`）按值和 dtype 缓存成常量张量。
# 4. **`KernelCall.run_eager`**：取出输入的 NumPy 数组，调用 `compute`，检查输出 dtype，包装成 `EagerTensor`；
#    若有 `GradientTape` 正在记录，就把这次调用记到磁带上。
# 5. **`compute`**：kernel 函数本身，外加这个算子需要的适配——按关键字传入 kernel 签名里的 attrs，需要时先传
#    `OpKernelContext`，列表输入分组、列表输出展平、bfloat16 输出舍入（`execute.bind_kernel`）。
# 6. **kernel**（`aicslib/kernels/conv_ops.py`）：纯 NumPy 计算。
#
# 静态图里第 3 步在 `Session` 建执行计划时对每个节点做一次；之后每次 `sess.run` 只是一个循环，对计划中的每个节点调用
# 它的 `compute`（第 5、6 步）。TensorFlow 的 eager 路径结构相同，只是第 2–4 步在 C++ 里：
# `TFE_Py_FastPathExecute` → `EagerExecute` → `KernelAndDevice::Run` → `Conv2DOp::Compute`。
#
# 下面不是手写的列表，而是 `aics.introspect.call_path` 用 `sys.setprofile` 记录下的一次真实调用经过的 aicslib 函数，
# eager 和 Session 各一次：

# %%
x_img = aics.constant(np.random.default_rng(0).random((1, 8, 8, 3), dtype=np.float32))
w_img = aics.constant(np.random.default_rng(1).random((3, 3, 3, 4), dtype=np.float32))
conv_kernel = aics.kernel_registry.find("Conv2D", "CPU", {"T": aics.float32}).impl
aics.nn.conv2d(x_img, w_img, 1, "SAME")                      # first call: builds and caches the KernelCall
eager_path = aics.introspect.call_path(lambda: aics.nn.conv2d(x_img, w_img, 1, "SAME"), conv_kernel)
print("eager: aics.nn.conv2d(x, w, 1, 'SAME')")
for i, (path, line, fn_name) in enumerate(eager_path, 1):
    print(f"  {i}. {path}:{line}  {fn_name}")

g_path = aics.Graph()
with g_path.as_default():
    y_img = aics.nn.conv2d(aics.constant(x_img.numpy()), aics.constant(w_img.numpy()), 1, "SAME")
    sess_path = aics.Session()
    sess_path.run(y_img)                                     # first run: prunes, places, builds the plan
    session_path = aics.introspect.call_path(lambda: sess_path.run(y_img), conv_kernel)
    sess_path.close()
print("Session: sess.run(y)")
for i, (path, line, fn_name) in enumerate(session_path, 1):
    print(f"  {i}. {path}:{line}  {fn_name}")

assert eager_path[-1][2] == session_path[-1][2] == conv_kernel.__name__   # one kernel serves both modes
assert any(p.endswith("framework/execute.py") for p, _, _ in eager_path)
assert len(eager_path) <= 8, eager_path

# %% [markdown]
# ## 2 小工具：查看任意已注册算子
#
# 从下拉框里选一个算子，下面显示它的 OpDef（文本格式）、定义和各个 kernel 的注册位置，以及梯度函数的源码。
# 下拉框的选项在创建时取自 `aics.introspect.list_ops()`，之后注册的算子需要重新运行这个单元格才会出现。

# %%
def describe_op(op_type):
    # Everything the registries know about one op type, as text.
    parts = [aics.introspect.summary(op_type)]
    if aics.gradient_registry.function(op_type) is not None:
        parts += ["", "gradient source:", aics.introspect.gradient_source(op_type)]
    elif aics.gradient_registry.is_registered(op_type):
        parts += ["", "marked not differentiable with aics.no_gradient"]
    else:
        parts += ["", "no gradient registered: differentiating through it raises LookupError"]
    return "\n".join(parts)


op_picker = widgets.Dropdown(options=aics.introspect.list_ops(), value="Sin", description="op type")
op_view = widgets.Output(layout=widgets.Layout(max_height="480px", overflow="auto", border="1px solid #ddd"))


def show_op(change=None):
    text = describe_op(op_picker.value)
    op_view.outputs = ()            # replace, don't append (works with and without a front end)
    op_view.append_stdout(text + "\n")
    return text


op_picker.observe(show_op, names="value")
display(widgets.VBox([op_picker, op_view]))

# %% [markdown]
# 没有前端（例如在 CI 中）时不会有人去点下拉框，所以这里直接调用一次更新函数，并检查它显示的内容：

# %%
text = show_op()
assert 'name: "Sin"' in text and "_sin_grad" in text
op_picker.value = OP                         # what a click does: the observer re-renders
shown = op_view.outputs[0]["text"]
assert 'name: "PowerDifference"' in shown and grad_fn.__name__ in shown and "MLU" in shown
op_picker.value = "Sin"
print(shown[:400], "...")

# %% [markdown]
# ## 3 练习：为 Tan 注册梯度
#
# aicslib 故意没有给 `Tan` 注册梯度（见 `aicslib/ops/math_grad.py` 里的注释）。先确认现状：对 `tan` 求导会抛出 `LookupError`，消息里点出算子类型。

# %%
aics.gradient_registry.unregister("Tan")     # the state aicslib ships in (also when this cell is re-run)
print("Tan without gradient:", "Tan" in aics.introspect.ops_without_gradient())
x_tan = aics.constant([0.1, 0.5, 1.0])
try:
    with aics.GradientTape() as tape:
        tape.watch(x_tan)
        y_tan = aics.tan(x_tan)
    tape.gradient(y_tan, x_tan)
except LookupError as e:
    print("LookupError:", e)
else:
    raise AssertionError("Tan should have no gradient yet")

# %% [markdown]
# **任务**：在下面的单元格里补全 `_tan_grad`。
#
# $$\frac{d}{dx}\tan x = 1 + \tan^2 x = \frac{1}{\cos^2 x}$$
#
# 要求：
#
# * 用 aicslib 的算子写（例如 `aics.cos`、`aics.square`、`aics.reciprocal`，或者直接用前向输出 `op.outputs[0]`，它就是 $\tan x$），不要用 NumPy，这样梯度才能同时用于 eager、静态图和高阶导数；
# * 记得乘上上游梯度 `grad`（链式法则）；
# * 写出上面的公式本身，不要借别的算子已注册的梯度来求导（在梯度函数里调用 `aics.gradients`、`GradientTape` 或 `aics.gradient_registry.function(...)` 不得分）。
#
# 单元格开头的 `unregister` 让它可以反复运行。写完后运行后面的测试单元格：它在 eager 模式下用 `aics.test.compute_gradient`
# 比较雅可比矩阵与 $1/\cos^2 x$，再分别在 eager 和静态图（`aics.gradients` 的 `grad_ys`）里给一个不为 1 的上游梯度检查链式法则。
# 没通过时它在 stderr 上说明期望什么、得到什么（0 分），不会中断 Run All。

# %% nbgrader={"grade": false, "grade_id": "tan_gradient", "locked": false, "schema_version": 3, "solution": true, "task": false}
aics.gradient_registry.unregister("Tan")    # makes re-running this cell safe


@aics.RegisterGradient("Tan")
def _tan_grad(op, grad):
    ### BEGIN SOLUTION
    y = op.outputs[0]                        # tan(x), already computed by the forward pass
    return grad * (1.0 + aics.square(y))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "tan_gradient_test", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Test cell (locked): the Tan gradient against 1/cos^2 x, eagerly (the whole Jacobian) and with an
# upstream gradient other than 1 (the chain rule) in eager and in graph mode.
import traceback as _traceback

_TAN_HINT = "d/dx tan x = 1 + tan^2 x = 1/cos^2 x, multiplied by the upstream gradient `grad`"


def _student_call(what, thunk, hint=""):
    """thunk(); an error raised in the registered Tan gradient is reported with the student's own lines
    (not this cell's), the release stub's NotImplementedError passes through as "not answered"."""
    try:
        return thunk()
    except grading.CheckFailed:
        raise
    except Exception as exc:
        if isinstance(exc, NotImplementedError) and not exc.args:
            raise
        code = getattr(aics.gradient_registry.function("Tan"), "__code__", None)
        own = [f for f in _traceback.extract_tb(exc.__traceback__) if code and f.filename == code.co_filename]
        raise grading.CheckFailed(f"{what}: your gradient raised {type(exc).__name__}: {exc}{hint}" + "".join(
            f"\n    in {f.name}, line {f.lineno}: {(f.line or '').strip()}" for f in own)) from None


def _eager_tan_grad(x, upstream=None):
    """d tan/dx (times upstream) by a GradientTape, as a NumPy array."""
    xt = aics.constant(x)
    with aics.GradientTape() as tape:
        tape.watch(xt)
        yt = aics.tan(xt)
    g = _student_call("tape.gradient(tan(x), x)", lambda: tape.gradient(
        yt, xt, output_gradients=None if upstream is None else aics.constant(upstream)))
    grading.check(g is not None, "tape.gradient(tan(x), x) gave None: return the gradient tensor")
    return g.numpy()


def _graph_tan_grad(x, upstream):
    """(d tan/dx * upstream, computed by a Session from aics.gradients(..., grad_ys=...); the aicslib
    functions the registered Tan gradient called directly while the graph was built)."""
    with aics.Graph().as_default():
        ph = aics.placeholder(aics.float64, [None], name="x")
        gy = aics.placeholder(aics.float64, [None], name="grad_y")
        y = aics.tan(ph)
        numpy_hint = (". Write it with aicslib ops (aics.cos, aics.square, op.outputs[0], ...), not NumPy: "
                      "graph tensors have no values while the graph is built")
        (d,) = _student_call("in graph mode, aics.gradients(tan(x), [x], grad_ys=...)",
                             lambda: aics.gradients(y, [ph], grad_ys=[gy]), numpy_hint)
        _, called = grading.library_calls(aics.gradient_registry.function("Tan"), y.op, gy)
        grading.check(d is not None, "aics.gradients(tan(x), [x]) gave None: return the gradient tensor")
        with aics.Session() as sess:
            return sess.run(d, {ph: x, gy: upstream}), called


with grading.exercise("tan_gradient"):
    grading.check(aics.gradient_registry.is_differentiable("Tan"),
                  "no gradient is registered for 'Tan': run the cell above (@aics.RegisterGradient(\"Tan\"))")
    _xs = np.linspace(-1.2, 1.2, 9)          # stays away from the poles at +-pi/2
    _sec2 = 1.0 / np.cos(_xs) ** 2
    _jac = np.asarray(_student_call("aics.test.compute_gradient(aics.tan, [x])",
                                    lambda: aics.test.compute_gradient(aics.tan, [_xs]))[0][0])
    if _jac.shape == (9, 9) and np.any(_jac - np.diag(np.diag(_jac))):
        raise grading.CheckFailed(
            f"the Jacobian of tan has entries off its diagonal (row 0: {np.round(_jac[0, :4], 4)}...): row i is "
            f"computed with an upstream gradient that is 1 at i and 0 elsewhere, so multiply by `grad` (the chain rule)")
    grading.check_array(_jac, np.diag(_sec2), "the Jacobian of tan at x = linspace(-1.2, 1.2, 9) "
                        "(eager; row i: the upstream gradient is 1 at i, 0 elsewhere)", rtol=1e-9, hint=_TAN_HINT)
    # The chain rule: an upstream gradient other than 1 must be multiplied in.
    _up = np.array([2.0, -3.0, 0.5, 1.5, -0.25, 4.0, 1.0, -1.0, 0.75])
    grading.check_array(_eager_tan_grad(_xs, _up), _up * _sec2,
                        "d tan/dx times the upstream gradient [2, -3, 0.5, ...] (eager)", rtol=1e-9, hint=_TAN_HINT)
    _graph_grad, _called = _graph_tan_grad(_xs, _up)
    grading.check_array(_graph_grad, _up * _sec2, "d tan/dx times the upstream gradient, in a graph "
                        "(aics.gradients with grad_ys, run by a Session)", rtol=1e-9, hint=_TAN_HINT)
    ### BEGIN HIDDEN TESTS
    # The rule: the formula itself, not another op's registered gradient.
    _machinery = sorted(n for n in _called if n in {"gradients", "gradient", "watch", "function"} or n.endswith("_grad"))
    grading.check(not _machinery, f"_tan_grad calls the gradient machinery ({', '.join(_machinery)}): write "
                                  f"1 + tan^2 x (or 1/cos^2 x) with ops instead of differentiating other ops")
    # Written with ops, the gradient is itself differentiable: d2/dx2 tan x = 2 tan x / cos^2 x.
    _xt = aics.constant(_xs)
    with aics.GradientTape() as _outer:
        _outer.watch(_xt)
        with aics.GradientTape() as _inner:
            _inner.watch(_xt)
            _yt = aics.tan(_xt)
        _first = _student_call("tape.gradient(tan(x), x)", lambda: _inner.gradient(_yt, _xt))
    _second = _student_call("the second derivative (a GradientTape inside another)",
                            lambda: _outer.gradient(_first, _xt))
    grading.check(_second is not None, "the second derivative of tan is None: build the gradient from ops")
    grading.check_array(_second.numpy(), 2 * np.tan(_xs) * _sec2, "d2 tan/dx2 (a GradientTape inside another)",
                        rtol=1e-8, hint="the gradient must be built from differentiable ops")
    # Other points, and float32 stays float32.
    _x32 = np.random.default_rng(4).uniform(-1.4, 1.4, 16).astype(np.float32)
    grading.check_array(_eager_tan_grad(_x32), 1.0 / np.cos(_x32.astype(np.float64)) ** 2, "d tan/dx for float32 x",
                        dtype=np.float32, rtol=1e-5, hint="keep the input's dtype: " + _TAN_HINT)
    ### END HIDDEN TESTS

# %% [markdown]
# ## 小结
#
# * 注册流程：spec 字符串由 `OpDefBuilder` 逐条解析成 `AttrDef`/`ArgDef`，组成 `OpDef` 存入注册表；kernel 以 (算子, 设备, 类型约束) 为键注册，
#   运行时按节点属性查找——OpDef 不允许的类型在建节点时被拒绝（`TypeError`），允许但没有 kernel 的类型在查找时失败（`NotFoundError`），
#   请求的设备上没有 kernel 时可以软放置回 CPU，关掉软放置则是 `InvalidArgumentError`（练习里你自己写了这条规则）。
# * TensorFlow 的 `REGISTER_OP` / `REGISTER_KERNEL_BUILDER` 和 aicslib 的 `register_op` / `register_kernel` 一一对应；一次调用从 Python 包装函数
#   经 `apply_op`、`execute`、`KernelCall` 走到 NumPy kernel，eager 和 Session 共用同一个 kernel。
# * `Tan` 的梯度 $1 + \tan^2 x$ 用算子写成，于是它在 eager、静态图里都能用，还能再求导。
# * 这些单个算子的梯度函数怎样串成图上的 `aics.gradients`，是下一章 [10 graph-gradients](10-graph-gradients.ipynb) 的实验。
#
# 最后用本章开头的 `chapter_scope.restore()` 把全局注册表恢复到本章开始前（去掉 Tan 的梯度、`PowerDifference` 和它的 MLU kernel），不影响同一进程里之后运行的代码。

# %%
chapter_scope.restore()          # what this chapter registered is gone, what it unregistered is back
assert not aics.gradient_registry.is_registered("Tan")
assert OP not in aics.introspect.list_ops() and not aics.introspect.list_kernels(OP)
print("registries restored:", len(aics.introspect.list_ops()), "ops")
