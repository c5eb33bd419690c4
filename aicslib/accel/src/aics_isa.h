/* Which instruction set the kernels of one library run: chosen at run time, the same bits on each.
 *
 * The libraries are compiled once, at install, for the baseline of the architecture (x86-64
 * or aarch64 as the compiler targets it by default), so one build (a wheel) runs on every CPU
 * of that architecture. Each hot function is compiled again for AVX2+FMA and for AVX-512 (GCC
 * and clang's target attribute, x86 only) and every call goes through the version this
 * process selected: the widest the CPU has (__builtin_cpu_supports), or the one asked for
 * through <prefix>_select_isa (aicslib.accel.set_isa, AICS_ACCEL_ISA).
 *
 * The versions give bit-identical results, because nothing they compute depends on the vector
 * width: every file is compiled with -ffp-contract=off (the compiler never fuses a multiply and
 * an add on its own, so a wider version cannot round differently), the order of every sum is
 * fixed by the C source (no reassociation: no -ffast-math), and where a kernel wants fused
 * multiply-adds (the SGEMM and depthwise inner loops) it asks for them explicitly in every
 * version: FMA instructions on AVX2 / AVX-512 and aarch64, libm's fmaf / fma (correctly rounded,
 * in software on an x86-64 without FMA: slow but the same bits) on the x86-64 baseline.
 */
#ifndef AICS_ISA_H
#define AICS_ISA_H

enum { AICS_ISA_BASELINE = 0, AICS_ISA_AVX2 = 1, AICS_ISA_AVX512 = 2, AICS_ISA_COUNT = 3 };

#if defined(_WIN32)
#define AICS_EXPORT __declspec(dllexport)
#else
#define AICS_EXPORT __attribute__((visibility("default")))
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define AICS_X86 1
#include <immintrin.h>
#define AICS_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define AICS_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#else
#define AICS_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define AICS_INLINE inline __attribute__((always_inline))
#else
#define AICS_INLINE inline
#endif

/* Whether this CPU (and its operating system: the compiler's runtime checks XCR0) runs isa. */
static int aics_isa_supported(int isa) {
    if (isa == AICS_ISA_BASELINE) return 1;
#if AICS_X86
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == AICS_ISA_AVX2) return avx2;
    if (isa == AICS_ISA_AVX512)
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
               && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
    return 0;
}

static int aics_isa_best(void) {
    for (int isa = AICS_ISA_COUNT - 1; isa > 0; --isa)
        if (aics_isa_supported(isa)) return isa;
    return AICS_ISA_BASELINE;
}

/* -1 until the first call picks the best: threads racing there all store the same value. */
static int aics_isa_selected = -1;

static AICS_INLINE int aics_isa(void) {
    int isa = aics_isa_selected;
    if (isa < 0) aics_isa_selected = isa = aics_isa_best();
    return isa;
}

/* prefix##_select_isa(isa): run isa from now on (-1: the best this CPU has); returns the isa
 * selected, or -1 when this CPU cannot run the one asked for (the selection is then unchanged).
 * prefix##_isa(): the isa the calls run. One pair per library, each library its own choice. */
#define AICS_DEFINE_ISA_SELECTION(prefix)                              \
    AICS_EXPORT int prefix##_select_isa(int isa) {                     \
        if (isa < 0) isa = aics_isa_best();                            \
        else if (isa >= AICS_ISA_COUNT || !aics_isa_supported(isa)) return -1; \
        aics_isa_selected = isa;                                       \
        return isa;                                                    \
    }                                                                  \
    AICS_EXPORT int prefix##_isa(void) { return aics_isa(); }

/* A function body written once (name##_body, static AICS_INLINE, no target attribute) compiled
 * once per instruction set: each version inlines the body, so its loops are vectorized for that
 * version's registers. AICS_DISPATCH(name, args) calls the selected one. */
#if AICS_X86
#define AICS_VERSIONS(ret, name, params, args)                          \
    static ret name##_baseline params { return name##_body args; }      \
    AICS_TARGET_AVX2 static ret name##_avx2 params { return name##_body args; } \
    AICS_TARGET_AVX512 static ret name##_avx512 params { return name##_body args; }
#define AICS_DISPATCH(name, args)                                       \
    (aics_isa() == AICS_ISA_AVX512 ? name##_avx512 args                 \
     : aics_isa() == AICS_ISA_AVX2 ? name##_avx2 args : name##_baseline args)
#else
#define AICS_VERSIONS(ret, name, params, args)                          \
    static ret name##_baseline params { return name##_body args; }
#define AICS_DISPATCH(name, args) (name##_baseline args)
#endif

/* The versions of name##_body and the exported function that dispatches to them. */
#define AICS_EXPORT_DISPATCHED(ret, exported, name, params, args) \
    AICS_VERSIONS(ret, name, params, args)                          \
    AICS_EXPORT ret exported params { return AICS_DISPATCH(name, args); }

#endif
