"""The speed layer's C libraries, declared once: what each is built from and what it exports.

One table serves two readers. ``setup.py`` builds one shared library per entry at install
(``sources``, with ``headers`` as their dependencies, all in ``aicslib/accel/src``) into
``aicslib/accel/lib``, compiled for the architecture's baseline with ``COMPILE_ARGS``;
``native_loader.py`` loads each with ctypes and declares every function of ``functions`` (name
-> restype, argtypes), so a caller never passes an argument ctypes would convert wrongly. Every
library also exports ``<isa_prefix>_select_isa`` and ``<isa_prefix>_isa`` (``src/aics_isa.h``):
the instruction set its functions run, chosen at run time.

This module imports nothing but the standard library: setup.py reads it before numpy (or
aicslib's other dependencies) is installed.
"""
import ctypes
from collections import namedtuple

I64, PTR, INT = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int

#: The instruction sets of ``src/aics_isa.h``, by their codes there.
ISAS = ("baseline", "avx2", "avx512")

#: What setup.py compiles every library with. No -march: one build serves every CPU of the
#: architecture, and the wider versions are picked at run time. -ffp-contract=off: the compiler
#: never fuses a multiply and an add by itself, which is what keeps every version's bits equal.
COMPILE_ARGS = ("-O3", "-std=c11", "-ffp-contract=off", "-fvisibility=hidden", "-pthread")
LINK_ARGS = ("-pthread",)
LIBRARIES_NEEDED = ("m",)

NativeLibrary = namedtuple("NativeLibrary", "name sources headers isa_prefix functions purpose")


def _depthwise_functions():
    # int f(const int64_t *g, const T *a, const T *b, T *out, int64_t r0, int64_t r1[, int64_t *scratch])
    functions = {}
    for suffix in ("f32", "f64"):
        for name, extra in (("forward", []), ("backprop_input", [PTR]), ("backprop_filter", [])):
            functions[f"aics_depthwise_{name}_{suffix}"] = (INT, [PTR, PTR, PTR, PTR, I64, I64] + extra)
    return functions


LIBRARIES = (
    NativeLibrary(
        "libaics_sgemm", ["aics_sgemm_packed.c"], ["aics_isa.h", "aics_sgemm_kernel.h"], "aics_sgemm", {
            # (m, n, k, a, rsa, csa, b, rsb, csb, c, ldc, accumulate)
            "aics_sgemm_packed": (INT, [I64, I64, I64, PTR, I64, I64, PTR, I64, I64, PTR, I64, INT]),
            # (count, m, n, k, a, bsa, rsa, csa, b, bsb, rsb, csb, c, bsc, ldc, accumulate)
            "aics_sgemm_packed_batched": (INT, [I64, I64, I64, I64, PTR, I64, I64, I64, PTR, I64, I64, I64,
                                                PTR, I64, I64, INT]),
            "aics_sgemm_packed_tile": (INT, [ctypes.POINTER(I64), ctypes.POINTER(I64)]),
            # (g, x, w, y, n0, n1, r0, r1)
            "aics_conv2d_implicit": (INT, [PTR, PTR, PTR, PTR, I64, I64, I64, I64]),
        }, "float32 GEMMs run on NumPy's BLAS"),
    NativeLibrary(
        "libaics_depthwise", ["aics_depthwise.c"], ["aics_isa.h", "aics_depthwise_version.h", "aics_depthwise_impl.h"],
        "aics_depthwise",
        _depthwise_functions(), "depthwise convolutions run NumPy's tap loops"),
    NativeLibrary(
        "libaics_output_stage", ["aics_output_stage.c"], ["aics_isa.h", "aics_output_stage.h"],
        "aics_output_stage", {
            # (y, rows, c, ldy, stage, a, s, b, activation)
            "aics_output_stage_f32": (INT, [PTR, I64, I64, I64, INT, PTR, PTR, PTR, INT]),
        }, "fused output stages run NumPy's steps"),
    NativeLibrary(
        "libaics_winograd", ["aics_winograd.c"], ["aics_isa.h", "aics_output_stage.h"], "aics_winograd", {
            # (m, x, xs_n, xs_h, xs_w, H, W, C, nb, row0, col0, nr, tw, V, vs_t, vs_n, vs_r)
            "aics_winograd_input_f32": (INT, [INT, PTR] + [I64] * 11 + [PTR, I64, I64, I64]),
            # (m, M, ms_t, ms_n, ms_r, nb, nr, tw, K, y, ys_n, ys_h, ys_w, stage, a, s, b, activation)
            "aics_winograd_output_f32": (INT, [INT, PTR] + [I64] * 7 + [PTR, I64, I64, I64]
                                         + [INT, PTR, PTR, PTR, INT]),
            # (m, dy, dys_n, dys_h, dys_w, Ho, Wo, K, nb, row0, nr, tw, D, ds_t, ds_n, ds_r)
            "aics_winograd_grad_output_f32": (INT, [INT, PTR] + [I64] * 10 + [PTR, I64, I64, I64]),
            # (m, w, C, K, c0, c1, rotate180, U)
            "aics_winograd_filter_f32": (INT, [INT, PTR, I64, I64, I64, I64, INT, PTR]),
        }, "Winograd transforms run on NumPy"),
    NativeLibrary(
        "libaics_pooling", ["aics_pooling.c"], ["aics_isa.h"], "aics_pooling", {
            # (x, y, g, dx, H, W, C, Ho, Wo, kh, kw, sh, sw, pt, pl, n0, n1)
            "aics_max_pool_grad_f32": (INT, [PTR] * 4 + [I64] * 13),
        }, "MaxPoolGrad runs its NumPy reference kernel"),
    NativeLibrary(
        "libaics_training", ["aics_training.c"], ["aics_isa.h"], "aics_training", {
            # (var, accum, grad, lr, momentum, n, nesterov)
            "aics_apply_momentum_f32": (INT, [PTR, PTR, PTR, ctypes.c_float, ctypes.c_float, I64, INT]),
        }, "optimizer updates run NumPy's steps"),
)

#: The folder of the C sources, and the one of the built libraries, relative to this file's.
SOURCE_DIR = "src"
LIBRARY_DIR = "lib"
