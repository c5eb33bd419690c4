# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11 Python 调用 C：ctypes、SWIG 与 pybind11
#
# **前置章节 (prerequisites)**：[08 op-registration](08-op-registration.ipynb)、[09 registration-flow](09-registration-flow.ipynb)
#
# **对应习题**：5.8——TensorFlow 用 SWIG (Simplified Wrapper and Interface Generator) 让 Python 调用底层的
# C/C++ 接口。了解 SWIG 的基本原理，在源码中找到与 SWIG 有关的部分，并给出一个使用实例。
#
# **学习目标**
#
# 1. 明白"Python 前端 + C/C++ 内核"的分工：Python 负责构图与调度，计算在编译好的代码里完成，两者之间需要一层**绑定 (binding)**；
# 2. 用三种方式调用同一个 C 函数 `aics_sgemm`（分块的单精度矩阵乘，`aicslib/native/src/aics_gemm.c`）：
#    ctypes（手写函数签名）、SWIG（由接口文件 `.i` **生成**包装代码）、pybind11（用 C++ 写包装代码）；
# 3. 读懂 SWIG 生成了什么：一个 C 的扩展模块 (extension module) `aics_gemm_wrap.c` 和一个 Python 模块 `aics_gemm_swig.py`；
# 4. 了解 TensorFlow 怎样用 SWIG（1.x 的 `tensorflow/python/tensorflow.i`），以及为什么 2.x 改用 pybind11；
# 5. 在 aicslib 里看到 Python 算子 → C 内核的边界：把内核注册到 NATIVE 设备上，用 `aics.introspect` 量出调用路径；
# 6. 测量每种绑定的调用开销 (call overhead) 与吞吐 (throughput)，用小部件比较开销随数组大小的变化；
# 7. 练习：用 ctypes 声明 `argtypes`/`restype`，正确调用一个编译好的 C 函数；再绑定 C 数学库的 `frexp`，
#    它通过指针参数 (output parameter) 把第二个结果写回给调用者。
#
# C 源码随 `aicslib` 一起安装，第一次用到时由系统的 C 编译器（`cc`/`gcc`）编译，结果缓存在
# `~/.cache/aicslib/native`（环境变量 `AICS_NATIVE_CACHE` 可改）；以后直接加载。没有编译器时 ctypes 路径给出一次提示并改用 NumPy。
# SWIG 与 pybind11 在可选依赖 `bindings` 里：`pip install -e '.[bindings]'`。
#
# **运行时间**见下面第一个单元格的输出（编译已缓存时；第一次运行要先编译，pybind11 的 C++ 编译最慢，
# 第 1 节打印每个绑定准备好所用的时间，只编译一次）。
#
# **练习**（自动评分，共 6 分）在第 8 节；没做完时后面的单元格照样运行。

# %%
import ctypes
import os
import threading
import time

import numpy as np
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
import ipywidgets as widgets
from IPython.display import display
from tqdm.auto import tqdm

import aicslib as aics
from aicslib import flags, native
from aicslib.native import timing
from workbook import grading, run_times

run_times.show("python-c-bindings")
FAST = flags.FAST                  # AICS_FAST=1: the quick setting used by CI
rng = np.random.default_rng(0)
print("C compiler:", native.find_compiler("c"))
print("cache folder:", native.cache_dir())

# %% [markdown]
# ## 1. 编译三个绑定（只在第一次真正编译）
#
# `native.load(binding)` 找到编译器、算出"源码 + 编译器 + 编译选项"的哈希、在缓存里找同名文件夹；
# 没有就在临时文件夹里编译，编译完成后**原子地改名** (atomic rename) 放进缓存——两个进程同时第一次使用也不会读到半个库。
# 下面记录每个绑定准备好所用的时间：从缓存加载很快，第一次编译则慢得多（下面打印本机的数字）。

# %%
ready_seconds = {}
for binding in tqdm(native.BINDINGS, desc="build/load"):
    start = time.perf_counter()
    native.load(binding)
    ready_seconds[binding] = time.perf_counter() - start
for binding, seconds in ready_seconds.items():
    print(f"{binding:9s} ready in {seconds:6.2f} s")

# %% [markdown]
# ## 2. C 这一侧：一个头文件
#
# 三种绑定调用的是同一个 C 函数。它只用 C 的基本类型（整数、`float *` 指针），不知道 Python 的存在：
# 矩阵是按行存放 (row-major，即 NumPy 的 C order) 的一段连续内存，`trans_a`/`trans_b` 表示存放的是转置。

# %%
with open(native.source_path("aics_gemm.h")) as f:
    header = f.read()
print(header[header.index("int aics_sgemm"):header.index("#ifdef __cplusplus\n}")])

# %% [markdown]
# ## 3. ctypes：手写函数签名
#
# `ctypes` 是 Python 标准库的外部函数接口 (foreign function interface, FFI)。它 `dlopen` 一个普通的共享库
# (`.so`)，按名字找到符号，调用前把 Python 对象转换成我们**声明**的 C 类型。它看不到头文件：签名写错了不会报错，
# 只会算错或崩溃。所以要自己检查每个数组的 dtype、连续性 (contiguity) 和形状——aicslib 的包装函数
# `aicslib/native/ctypes_binding.py:sgemm` 做的就是这些。

# %%
lib = ctypes.CDLL(native.compile_library())
lib.aics_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
lib.aics_sgemm.restype = ctypes.c_int

a = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal((4, 2)).astype(np.float32)
c = np.empty((3, 2), np.float32)
status = lib.aics_sgemm(0, 0, 3, 2, 4, a.ctypes.data, b.ctypes.data, c.ctypes.data)
print("status", status, "\n", c)
assert status == 0
np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)

# The checked wrapper names the argument that is wrong instead of computing garbage:
for bad in (a.astype(np.float64), np.asfortranarray(a)):
    try:
        native.sgemm(bad, b)
    except (TypeError, ValueError) as e:
        print(type(e).__name__ + ":", e)

# %% [markdown]
# ## 4. SWIG：由接口文件生成包装代码
#
# SWIG 读一个接口文件 (interface file) `.i`：`%module` 给出模块名，`%{ ... %}` 里的代码原样抄进生成的 C 文件，
# `%include "aics_gemm.h"` 让 SWIG 解析头文件里的声明，为每个函数生成一个包装函数。
# SWIG 不认识 NumPy 数组，**类型映射 (typemap)** 教它：任何提供 float32 连续缓冲区 (buffer protocol) 的 Python 对象都可以当作
# `float *` 传进去（NumPy 自带的 `numpy.i` 是同一思路的完整版）。

# %%
with open(native.source_path("aics_gemm.i")) as f:
    interface = f.read()
print(interface[interface.index("%module"):interface.index("/* The output matrix")])

# %% [markdown]
# `swig -python aics_gemm.i` 生成两个文件。先看生成的 C 文件里 `aics_sgemm` 的包装函数：
# 用 `SWIG_Python_UnpackTuple` 拆开参数元组，逐个转换（整数用 `SWIG_AsVal_int`，指针用上面的 typemap），
# 调用真正的 C 函数，再把返回值转换回 Python 对象（`SWIG_From_int`），最后释放缓冲区 (freearg)。

# %%
generated = native.swig_generated_files()
with open(generated["wrapper"]) as f:
    wrapper_lines = f.read().splitlines()
start = next(i for i, line in enumerate(wrapper_lines) if line.startswith("SWIGINTERN PyObject *_wrap_aics_sgemm("))
end = next(i for i in range(start, len(wrapper_lines)) if wrapper_lines[i] == "}")
print(f"{os.path.basename(generated['wrapper'])}: {len(wrapper_lines)} lines generated; _wrap_aics_sgemm is "
      f"lines {start + 1}-{end + 1}:\n")
print("\n".join(wrapper_lines[start:end + 1]))
table = next(i for i, line in enumerate(wrapper_lines) if line.startswith("static PyMethodDef SwigMethods[]"))
print("\n".join(wrapper_lines[table:table + 5]))
assert any("=(int)aics_sgemm(arg1,arg2,arg3" in line.replace(" ", "") for line in wrapper_lines[start:end])

# %% [markdown]
# 生成的 Python 模块很薄：导入编译好的 `_aics_gemm_swig`，每个 C 函数对应一个转发函数。
# TensorFlow 1.x 里的 `pywrap_tensorflow_internal.py` 与 `_pywrap_tensorflow_internal.so` 正是这样一对文件。

# %%
with open(generated["module"]) as f:
    module_source = f.read()
print(module_source[:module_source.index("import builtins")])
print("...")
print(module_source[module_source.index("def aics_sgemm"):])

swig_module = native.load("swig")
c_swig = np.empty((3, 2), np.float32)
assert swig_module.aics_sgemm(0, 0, 3, 2, 4, a, b, c_swig) == 0
np.testing.assert_array_equal(c_swig, c)
try:
    swig_module.aics_sgemm(0, 0, 3, 2, 4, a.astype(np.float64), b, c_swig)   # the typemap refuses it
except TypeError as e:
    print("TypeError:", e)

# %% [markdown]
# ### TensorFlow 怎样用 SWIG，又为什么换掉它
#
# * **TF 1.x**：`tensorflow/python/tensorflow.i` 的注释写着它是"全部 TensorFlow 原生功能的 SWIG 包装"，内容几乎全是
#   `%include`：`python/util/port.i`、`python/lib/core/status.i`、`python/lib/io/py_record_writer.i`、
#   `python/client/events_writer.i`、`python/client/tf_session.i`……每个子系统一个 `.i`。构建时 SWIG 把它们生成为一个巨大的
#   `_pywrap_tensorflow_internal.so` 和 `pywrap_tensorflow_internal.py`；`tf.Session.run` 最终调到的
#   `TF_SessionRun_wrapper` 就是 `tf_session.i` 导出的。`tf_session.i` 里也能看到手写的转换代码（如把 Python 列表转成
#   `std::vector<TF_Output>`，用的是 `SWIG_ConvertPtr`）——与我们第 4 节的 typemap 是一回事。
# * **换成 pybind11**：2019 年 2 月的 RFC "Replace SWIG with pybind11"（tensorflow/community PR #67，
#   `rfcs/20190208-pybind11.md`）提出弃用 SWIG，理由是代码可读性、构建时间、二进制大小和 Python API 的性能，
#   并借此把一个大 `pywrap_tensorflow` 拆成许多小模块（例如 TensorBoard PR #2683 改用 `_pywrap_events_writer`）。
#   负责迁移的工程师在 tensorflow/tensorflow PR #42362（2020-08）中说，SWIG 的编译逻辑在 2.3 前后已全部去掉。
#   今天 TF 2.x 的 eager 算子由 Python 调用 pybind11 模块里的 `TFE_Py_FastPathExecute`（`python/eager/pywrap_tfe.h`）进入 C++。

# %% [markdown]
# ## 5. pybind11：用 C++ 写包装代码
#
# pybind11 是只有头文件的 C++ 库，没有生成步骤：`PYBIND11_MODULE` 里用 `module.def(...)` 列出导出的函数，
# `py::array_t<float, c_style | forcecast>` 负责把 NumPy 数组转换成连续的 float32（必要时复制）。
# 绑定代码本身是普通的 C++，可以抛 `py::value_error`，可以在计算时释放 GIL (`py::gil_scoped_release`)。

# %%
with open(native.source_path("aics_gemm_pybind11.cpp")) as f:
    cpp = f.read()
print(cpp[cpp.index("// C = op(a) @ op(b)"):cpp.index("// The raw C signature")])
print(cpp[cpp.index("PYBIND11_MODULE"):])

pybind_module = native.load("pybind11")
c_pybind = pybind_module.sgemm(a, b)
np.testing.assert_array_equal(c_pybind, c)
print(pybind_module.sgemm.__doc__.splitlines()[0])

# %% [markdown]
# ## 6. 三种绑定 + NumPy：结果一致
#
# 同一个 C 函数，经三条路进入，结果应逐位相同；与 NumPy（BLAS 的求和顺序不同）只在舍入误差内一致。
# 测试 `tests/native/test_native.py` 另外用三重循环 (brute force) 和 hypothesis 随机形状检查它们。

# %%
checked = 0
for m, n, k in [(5, 7, 3), (1, 9, 16), (33, 17, 300)]:
    for transpose_a in (False, True):
        for transpose_b in (False, True):
            x = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
            y = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
            results = {bd: native.sgemm(x, y, transpose_a, transpose_b, binding=bd) for bd in native.BINDINGS}
            reference = native.sgemm(x, y, transpose_a, transpose_b, binding="numpy")
            for bd, got in results.items():
                np.testing.assert_array_equal(got, results["ctypes"])
                np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4)
            checked += 1
print(f"ctypes == swig == pybind11, and all agree with NumPy, for {checked} shape/transpose cases")

# %% [markdown]
# ## 7. 在 aicslib 里：NATIVE 设备与 Python → C 的边界
#
# `aicslib/kernels/native_matmul_op.py` 把这个 C 内核注册为 `MatMul` 在 **NATIVE** 设备上的 float32 kernel
# （与 TF 的 `REGISTER_KERNEL_BUILDER(Name("MatMul").Device(DEVICE_GPU)...)` 同一个机制）。于是
# `with aics.device("/device:NATIVE:0")` 下的 `aics.matmul` 会经过算子包装 → 执行层 → 内核分发，最后穿过 ctypes 进入 C。
# `aics.introspect.native_call_path` 用 `sys.setprofile` 量出这条路径上的 Python 函数，最后一行是它调用的 C 函数。

# %%
print([k for k in aics.introspect.where("MatMul")["kernels"] if k["device"] == "NATIVE"])
x = rng.standard_normal((4, 6)).astype(np.float32)
y = rng.standard_normal((6, 3)).astype(np.float32)


def matmul_on(device):
    def run():
        with aics.device(device):
            return aics.matmul(x, y)
    return run


z = matmul_on("/device:NATIVE:0")()
print(z.device, z.shape)
np.testing.assert_allclose(z.numpy(), x @ y, rtol=1e-5, atol=1e-5)
path = aics.introspect.native_call_path(matmul_on("/device:NATIVE:0"))
for file, line, name, language in path:
    print(f"  {language:6s} {file}:{line}  {name}")
assert path[-1][2] == "aics_sgemm" and path[-1][3] == "C"
assert aics.introspect.native_call_path(matmul_on("/device:CPU:0")) == []   # the NumPy kernel never enters C

# %% [markdown]
# 在 TensorFlow 里，**所有**内核都是 C++，边界更靠前：Python 的算子包装（如 `gen_math_ops.mat_mul`）直接调
# `pywrap_tfe.TFE_Py_FastPathExecute`，之后的执行层、内核查找和内核本身都在 C++ 里。aicslib 把执行层也写成 Python 以便阅读，
# 所以边界落在内核调用处；换到 NATIVE 设备，不改一行算子代码，计算就搬进了 C——这正是"前端与内核分离"的好处。

# %% [markdown]
# ## 8. 练习：用 ctypes 正确调用 C 函数（3 + 3 分）
#
# 编译好的库里还有一个函数（声明见第 2 节的头文件）：
#
# ```c
# float aics_sdot(int64_t n, const float *x, const float *y);   /* sum_i x[i] * y[i] */
# ```
#
# 请实现 `sdot(lib, x, y)`：`lib` 是一个**什么都没声明**的 `ctypes.CDLL`（由 `native.exercise_library()` 得到），
# `x`、`y` 是任意一维数值序列（列表、float64 数组、带步长的切片……）。
#
# * 在 `lib.aics_sdot` 上声明 `argtypes` 与 `restype`，与头文件的原型一致：整数长度 `int64_t` 用 `ctypes.c_int64`
#   （写成 `ctypes.c_int` 对小数组也能算对，但 ctypes 会把实参按声明的 32 位悄悄截断，长度 ≥ $2^{31}$ 时 C 收到的是绕回的数；
#   测试会检查你声明的类型），指针可以用 `ctypes.c_void_p`；
# * 把 `x`、`y` 转成**连续的 float32** 数组再取地址（`arr.ctypes.data`）；长度不同时抛 `ValueError`；
# * 只调用一次 `lib.aics_sdot`，返回 Python 的 `float`。不许用 NumPy 算点积——测试会数 C 函数被调用的次数。
#
# 想想：忘了 `restype` 会怎样？把 float64 数组的地址交给 `const float *` 会怎样？

# %% nbgrader={"grade": false, "grade_id": "ctypes_sdot", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sdot(lib, x, y):
    ### BEGIN SOLUTION
    lib.aics_sdot.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    lib.aics_sdot.restype = ctypes.c_float
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.ascontiguousarray(y, dtype=np.float32)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"sdot: x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    return float(lib.aics_sdot(x.size, x.ctypes.data, y.ctypes.data))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "ctypes_sdot_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): lib.aics_sdot's declared argtypes and restype against the header's
# prototype (int64_t n is a signed 64-bit ctypes type: a c_int would cut lengths of 2^31 and more),
# exactly one call into C per sdot (counted by the library itself), the value against the float32
# products summed in float64, a ValueError for unequal lengths, no call into aicslib or the workbook.
from workbook.references import bindings as _bindings_reference

_counter = native.exercise_library()
_counter.aics_sdot_calls.restype = ctypes.c_int64


def _sdot_case(x, y, what):
    lib = native.exercise_library()                 # a fresh CDLL: nothing declared
    before = _counter.aics_sdot_calls()
    got = grading.no_library_calls(sdot, lib, x, y, what="sdot")
    calls = _counter.aics_sdot_calls() - before
    grading.check(calls == 1, f"sdot({what}) called lib.aics_sdot {calls} times: call it exactly once "
                              f"(the dot product is the C function's job, not NumPy's)")
    problem = _bindings_reference.declaration_problem(lib.aics_sdot)
    grading.check(problem is None, f"sdot({what}): {problem}")
    grading.check(isinstance(got, float), f"sdot({what}) returned {type(got).__name__}: return a Python float")
    want, tol = _bindings_reference.float32_dot(x, y), 1e-5 * _bindings_reference.abs_dot(x, y)
    grading.check(abs(got - want) <= tol,
                  f"sdot({what}) = {got!r}, expected {want!r} (float32 rounding allows {tol:.2g}). Hint: hand C "
                  f"contiguous float32 buffers (np.ascontiguousarray(x, dtype=np.float32)): C reads a float64 "
                  f"buffer or a strided view as other numbers")


def _unequal_lengths_raise():
    try:
        sdot(native.exercise_library(), [1.0, 2.0], [1.0, 2.0, 3.0])
    except ValueError:
        return
    grading.check(False, "sdot(x of length 2, y of length 3) did not raise ValueError: check the lengths "
                         "before calling C, which would read past the end of the shorter array")


_r = np.random.default_rng(11)
_base32 = _r.standard_normal(40).astype(np.float32)
with grading.exercise("ctypes_sdot"):
    _sdot_case([1.5, -2.0, 4.0], [2.0, 0.5, 0.25], "Python lists")
    _sdot_case(_r.standard_normal(25), _r.standard_normal(25), "float64 arrays")
    _sdot_case(_base32[::2], _base32[1::2], "float32 strided views")
    _sdot_case(_r.standard_normal((3, 30))[1], np.arange(30, dtype=np.float32) / 7, "a float64 row, a float32 array")
    _unequal_lengths_raise()
    ### BEGIN HIDDEN TESTS
    _sdot_case([], [], "two empty lists")
    _sdot_case([1, 2, 3], [4, 5, 6], "Python ints")
    _sdot_case(np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1], np.ones(3, np.float32), "a float32 column")
    _sdot_case(_r.standard_normal(100_000).astype(np.float32), _r.standard_normal(100_000), "100000 entries")
    ### END HIDDEN TESTS

# %% [markdown]
# ### 练习：输出参数——绑定 C 数学库的 `frexp`（3 分）
#
# C 函数只能返回一个值；要返回第二个，就让调用者传一个**指针**进来，函数把结果写到指针指向的内存里。
# C 标准库的 `frexp` 就是这样（`<math.h>`）：
#
# ```c
# double frexp(double x, int *exp);   /* 返回 m，并把 e 写进 *exp：x = m * 2^e，0.5 <= |m| < 1（x = 0 时 m = 0、e = 0） */
# ```
#
# 请实现 `frexp(lib, x)`：`lib` 是一个**什么都没声明**的 `ctypes.CDLL`，装的是 C 数学库（`libm`）。
#
# * 在 `lib.frexp` 上声明 `argtypes` 与 `restype`，与上面的原型一致（`int *` 用 `ctypes.POINTER(ctypes.c_int)`）；
# * 准备一个 `ctypes.c_int` 作为 C 写入的地方，用 `ctypes.byref(...)`（或 `ctypes.pointer(...)`）把它的地址传进去；
# * 返回 `(m, e)`：Python 的 `float` 与 `int`（ctypes 对象的值在 `.value` 里）。不要用 Python 的 `math.frexp`、
#   NumPy 的 `np.frexp`，也不要调用 aicslib 或 `workbook` 里的函数——测试会检查你在 `lib.frexp` 上声明的类型。
#
# 想想：`int *` 若声明成指向 64 位整数的指针，C 写了 4 个字节，另外 4 个字节是什么？

# %%
import ctypes.util

LIBM = ctypes.util.find_library("m") or ctypes.util.find_library("c")   # the C maths library
print("C maths library:", LIBM)

# %% nbgrader={"grade": false, "grade_id": "ctypes_frexp", "locked": false, "schema_version": 3, "solution": true, "task": false}
def frexp(lib, x):
    ### BEGIN SOLUTION
    lib.frexp.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int)]
    lib.frexp.restype = ctypes.c_double
    exponent = ctypes.c_int(0)
    mantissa = lib.frexp(x, ctypes.byref(exponent))
    return float(mantissa), exponent.value
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "ctypes_frexp_test", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Autograded check (locked): lib.frexp's declared argtypes and restype against C's prototype
# double frexp(double, int *), and (m, e) against the definition (m * 2**e == x, 0.5 <= |m| < 1)
# for normal, subnormal, negative, zero and integer x; no call into aicslib or the workbook.
def _frexp_case(x):
    lib = ctypes.CDLL(LIBM)                          # a fresh CDLL: nothing declared
    got = grading.no_library_calls(frexp, lib, x, what="frexp", how="through lib.frexp with ctypes")
    problem = _bindings_reference.frexp_declaration_problem(lib.frexp)
    grading.check(problem is None, f"frexp(lib, {x!r}): {problem}")
    grading.check(isinstance(got, tuple) and len(got) == 2,
                  f"frexp(lib, {x!r}) returned {got!r}: expected a tuple (m, e)")
    m, e = got
    grading.check(isinstance(m, float) and isinstance(e, int) and not isinstance(e, bool),
                  f"frexp(lib, {x!r}) returned ({type(m).__name__}, {type(e).__name__}): expected (float, int); "
                  f"a ctypes.c_int holds its value in .value")
    x = float(x)
    ok = (m == 0.0 and e == 0) if x == 0 else (0.5 <= abs(m) < 1 and m * 2.0 ** e == x)
    want_e = 0 if x == 0 else int(np.floor(np.log2(abs(x)))) + 1 if abs(x) >= 2.0 ** -1022 else None
    grading.check(ok, f"frexp(lib, {x!r}) returned m = {m!r}, e = {e!r}; expected 0.5 <= |m| < 1 and m * 2**e == x"
                      + (f" (e = {want_e})" if want_e is not None else "")
                      + ". Hint: the exponent is what C wrote into the int your pointer points to")


with grading.exercise("ctypes_frexp"):
    for _x in (8.0, 1.0 / 3.0, -1e-300):
        _frexp_case(_x)
    ### BEGIN HIDDEN TESTS
    for _hidden_x in (0.0, 7, 5e-324, -2.5e307, 0.75, float(2 ** 40 + 1)):
        _frexp_case(_hidden_x)
    ### END HIDDEN TESTS

# %%
frexp_fn = grading.use("ctypes_frexp", frexp, _bindings_reference.frexp, what="binding workbook.references.bindings.frexp")
for _x in (8.0, 0.1, -3.0, 2.0 ** -1074):
    _m, _e = frexp_fn(ctypes.CDLL(LIBM), _x)
    print(f"frexp({_x!r:>24}) = ({_m!r}, {_e})   check: m * 2**e = {_m * 2.0 ** _e!r}")

# %% [markdown]
# ## 9. 测量：调用开销与吞吐
#
# 每次调用都是"裸"的 C 签名，输出由调用者预先分配（`aicslib/native/timing.py`）：
#
# * 矩阵很小（n = 1, 4）时，乘法只要几纳秒，测到的是**绑定本身的开销**：参数转换、外部调用、返回值转换；
# * 矩阵很大时，C 循环占满时间，三种绑定没有区别；NumPy 调用的是多线程、手工优化的 BLAS，是我们的参照。
#
# 下面测量 n 从 1 到几百的每次调用时间（中位数），画在对数坐标上。机器忙时数字会抖动，看趋势即可。
# `benchmarks/bench_bindings.py` 是同样的测量，打印与 NumPy 的比值。

# %%
SIZES = [1, 4, 16, 64, 128, 256] if FAST else [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
MIN_TIME = 0.005 if FAST else 0.05
COLUMNS = ["numpy", *native.BINDINGS]
sweep = {name: [] for name in COLUMNS}
for size in tqdm(SIZES, desc="sizes"):
    for name, seconds in timing.time_bindings(size, COLUMNS, min_time=MIN_TIME, repeats=3).items():
        sweep[name].append(seconds)

print(f"{'n':>6} " + " ".join(f"{name:>16s}" for name in COLUMNS))
for i, size in enumerate(SIZES):
    print(f"{size:>6} " + " ".join(f"{sweep[name][i] * 1e6:10.2f} us   " for name in COLUMNS))
for name in COLUMNS:
    assert all(t > 0 for t in sweep[name])
print(f"call overhead at n = {SIZES[0]} relative to NumPy's matmul: "
      + ", ".join(f"{name} {sweep[name][0] / sweep['numpy'][0]:.2f}x" for name in native.BINDINGS))

fig, (ax_t, ax_f) = plt.subplots(1, 2, figsize=(11, 4))
for name in COLUMNS:
    ax_t.loglog(SIZES, np.array(sweep[name]) * 1e6, "o-", label=name)
    ax_f.semilogx(SIZES, [2 * s ** 3 / t / 1e9 for s, t in zip(SIZES, sweep[name])], "o-", label=name)
ax_t.set(xlabel="n (n x n float32 matrices)", ylabel="microseconds per call", title="time per call")
ax_f.set(xlabel="n", ylabel="GFLOP/s", title="throughput")
for ax in (ax_t, ax_f):
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
plt.tight_layout()
plt.show()

# %% [markdown]
# 读图：左图最左端的平台就是调用开销（上表第一行，以及它下面打印的与 NumPy 的比值）。在我们测过的机器上
# （`benchmarks/bench_bindings.py`，取中位数），SWIG 的包装最薄（拆一个参数元组、取三个缓冲区），只有 NumPy 调一次 `matmul`
# 的几分之一；ctypes 要为 8 个参数逐一按 `argtypes` 转换，pybind11 的 `py::array_t` 要检查数组的类型与布局，两者与 NumPy
# 自己的调用开销相当。机器忙时比值会变，以你这次打印的数字为准。矩阵变大后曲线按 $n^3$ 上升、
# 合在一起；右图的 GFLOP/s 则显示我们单线程的分块循环与多线程 BLAS 的差距。结论：**绑定开销只对小而频繁的调用有意义**，
# 这正是 TensorFlow 把整个执行层放进 C++、让一次 `Session.run` 或一次 `TFE_Py_FastPathExecute` 做尽量多的事的原因。

# %% [markdown]
# ## 10. 交互：选数组大小与绑定
#
# 拖动滑块选矩阵大小 n，选一种绑定：右边重新测量这一种绑定与 NumPy 的单次调用时间，并在第 9 节的曲线上标出来。

# %%
# continuous_update=False: one measurement when the slider is released, not one per step it passes
size_slider = widgets.SelectionSlider(options=SIZES, value=SIZES[1], description="n", continuous_update=False)
binding_choice = widgets.ToggleButtons(options=list(native.BINDINGS), value="ctypes", description="binding")
setting_out = widgets.Output()             # what the controls set: the same for the same values
widget_out = widgets.Output()
widget_out.add_class("aics-timing")         # what they measure: new numbers on every change


def describe(size, binding):
    with setting_out:
        setting_out.clear_output(wait=True)
        print(f"n = {size}: one {size}x{size} SGEMM ({2 * size ** 3 / 1e6:.3g} MFLOP, "
              f"{3 * 4 * size * size / 1024:.0f} KiB of operands) through {binding} and through NumPy")


# ipykernel 7 may run a widget's callback while a cell runs, in another thread; matplotlib is not
# thread-safe (its mathtext parser breaks when two threads draw at once), so one plot at a time,
# on a Figure of its own: pyplot's figures are redrawn by the hook that runs after every cell
_plot_lock = threading.RLock()


def compare(size, binding):
    with _plot_lock:
        return _compare(size, binding)


def _compare(size, binding):
    times = timing.time_bindings(size, ["numpy", binding], min_time=MIN_TIME / 2, repeats=3)
    fig = Figure(figsize=(6, 3.5))
    ax = fig.subplots()
    ax.loglog(SIZES, np.array(sweep[binding]) * 1e6, "o-", color="C1", alpha=0.5, label=f"{binding} (sweep)")
    ax.loglog(SIZES, np.array(sweep["numpy"]) * 1e6, "o-", color="C0", alpha=0.5, label="numpy (sweep)")
    ax.loglog([size], [times[binding] * 1e6], "*", color="C1", markersize=16, label=f"{binding} now")
    ax.loglog([size], [times["numpy"] * 1e6], "*", color="C0", markersize=16, label="numpy now")
    ax.set(xlabel="n", ylabel="microseconds per call",
           title=f"n={size}: {binding} {times[binding] * 1e6:.2f} us, numpy {times['numpy'] * 1e6:.2f} us "
                 f"({times[binding] / times['numpy']:.2f}x)")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    display(fig)
    return times


def _on_change(_=None):
    describe(size_slider.value, binding_choice.value)
    with widget_out:
        widget_out.clear_output(wait=True)
        compare(size_slider.value, binding_choice.value)


size_slider.observe(_on_change, names="value")
binding_choice.observe(_on_change, names="value")
display(widgets.VBox([size_slider, binding_choice, setting_out, widget_out]))
_on_change()

# %%
_times = compare(SIZES[0], "pybind11")
assert set(_times) == {"numpy", "pybind11"} and all(t > 0 for t in _times.values())

# %% [markdown]
# ## 11. 小结：习题 5.8 的答案
#
# * **SWIG 的原理**：读接口文件（模块名、要原样插入的 C 代码、要包装的声明、类型映射），为每个 C/C++ 函数生成一个
#   按 CPython API 写的包装函数（拆参数 → 转换 → 调用 → 转换返回值 → 清理），再生成加载它的 Python 模块；
#   C 代码和生成的包装代码一起编译成扩展模块。本笔记本第 4 节生成并展示了 `aics_gemm_wrap.c` 与 `aics_gemm_swig.py`。
# * **TensorFlow 中与 SWIG 有关的部分**：TF 1.x 的 `tensorflow/python/tensorflow.i` 把各子系统的 `.i`
#   （`client/tf_session.i`、`lib/core/status.i`、`lib/io/py_record_writer.i`、`client/events_writer.i`……）合成一个
#   `_pywrap_tensorflow_internal` 扩展模块，Python 端通过 `pywrap_tensorflow` 调用。
# * **一个使用实例**：`tf_session.i` 导出的 `TF_SessionRun_wrapper`，`Session.run` 经它进入 C++ 运行时；
#   以及本笔记本的 `aics_gemm.i`：一个 typemap 让 NumPy 数组以 `float *` 进入 C 的 `aics_sgemm`。
# * **之后**：TF 2.x 按 2019 年的 RFC 改用 pybind11（2.3 前后去掉了 SWIG 的构建逻辑），包装代码变成普通 C++，模块也拆小了。
# * **ctypes、SWIG、pybind11 的取舍**：ctypes 不用编译包装代码，但签名全靠手写、写错无人报错；SWIG 从头文件批量生成，
#   适合很大的 C API，但生成代码难读、类型映射难写；pybind11 手写但类型安全、能直接处理 C++ 类型和 NumPy 数组。
#   三者的调用开销都在微秒级，只对小而频繁的调用重要。
