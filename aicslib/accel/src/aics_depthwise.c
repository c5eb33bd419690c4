/* Depthwise convolution in portable C: forward and both backprops, NHWC, one filter per channel.
 *
 * Built at install (setup.py) and called through ctypes from aicslib/accel/depthwise.py (the
 * NumPy tap loops there are the fallback; aicslib/kernels/depthwise_conv_op.py holds the
 * reference). A depth multiplier M > 1 is handled on the Python side by repeating the
 * input channels, so every function here sees a filter of shape (kh, kw, C): output
 * channel c reads input channel c only.
 *
 * Why C at all: per output pixel and channel a 3x3 depthwise conv does 9 multiply-adds
 * and no channel sum, so there is no GEMM to hand the work to, and NumPy's one pass
 * over memory per tap (9 passes per conv) moves 9x the bytes the arithmetic needs. Here
 * every output pixel is finished in one go: the loops run over output pixels, then
 * taps, with the channel dimension innermost. Channels are contiguous in NHWC, so the
 * innermost loop is a plain vector loop that gcc/clang -O3 vectorize without intrinsics,
 * and a chunk of channels (VB_BYTES) of the result stays in registers while the taps add up.
 *
 * Borders: the taps that fall into the zero padding are skipped by narrowing the tap
 * range per output row and column (no padded copy, no per-element branch).
 *
 * Register blocking: a core issues about as many vector loads as multiply-adds per cycle,
 * so a loop doing 2 loads per multiply-add (an input and a filter value) runs at half
 * speed. In the forward, PB neighbouring output pixels share each filter vector loaded and
 * (3-wide filters) each input column loaded; in the backprop-filter, JB taps of a filter
 * row share each dy vector loaded; in the strided backprop-input, the input pixels of one
 * column phase share the filter vectors of their taps. Those loops use GCC/clang vector
 * types with the reused values pinned in registers (PIN_IN_REGISTER): the auto-vectorized loops
 * re-read them from memory once per use and ran slower (benchmarks/README.md, "Depthwise").
 *
 * Versions: every kernel is compiled once per instruction set (aics_isa.h) with that version's
 * vector width, and each multiply-add is an explicit fused one (FMA_T, VFMA), so that every
 * version adds the same rounded terms in the same order: the same bits on every CPU.
 *
 * Threads: each function computes a range [r0, r1) of rows of its result (forward:
 * output rows n*Ho + oh; backprop-input: input rows n*H + ih; backprop-filter: output
 * rows, accumulated into the caller's private partial sum). The caller runs disjoint
 * ranges on its worker threads (ctypes releases the GIL during the call), so the C code
 * needs no threading library.
 *
 * Geometry: g[] = {N, H, W, C, kh, kw, sh, sw, dh, dw, pt, pl, Ho, Wo} (int64), the input
 * padded by pt rows on top and pl columns on the left (bottom/right padding is implied
 * by Ho, Wo). Every function returns 0, or -1 for a geometry it cannot handle.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "aics_isa.h"

/* Bytes of channels per chunk (VB_BYTES, two of the version's vector registers of VEC_BYTES):
 * the accumulators of a chunk (PB or JB of them) must fit in the vector registers, 32 of 64
 * bytes with AVX-512, 16 of 32 bytes with AVX2; two registers' worth ran the forward faster
 * than one (benchmarks/README.md, "Depthwise convolution"). */
#define VB_BYTES (2 * VEC_BYTES)
/* The narrower chunk for the channels left over (C % VB), before one by one. */
#define VB_TAIL 8
/* Output pixels per register block in the forward (PB x VB accumulators). */
#ifndef PB
#define PB 4
#endif
/* Taps of a filter row summed together in the backprop-filter (JB x VB accumulators). */
#ifndef JB
#define JB 3
#endif
/* backprop-input: runs of same-phase pixels keep up to MAX_RUN_TAPS filter vectors in registers
 * (3x3 at stride 2 needs 4); strides up to MAX_RUN_PHASES have runs. */
#define MAX_RUN_TAPS 4
#define MAX_RUN_PHASES 8
/* GCC's and clang's vector extension (vector_size): the hot loops load each vector once. */
#define DW_HAVE_VECTORS 1
/* The chunk functions are called with constant widths: inlined, each call gets its own
 * fixed-width vector code. */
#define INLINE AICS_INLINE
/* backprop-input lists an input row's taps on the stack: filters up to 64 rows (else -1). */
#define MAX_TAPS_1D 64

enum { G_N, G_H, G_W, G_C, G_KH, G_KW, G_SH, G_SW, G_DH, G_DW, G_PT, G_PL, G_HO, G_WO, G_LEN };

static inline int64_t floor_div(int64_t a, int64_t b) {  /* b > 0 */
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static inline int64_t ceil_div(int64_t a, int64_t b) {  /* b > 0 */
    return -floor_div(-a, b);
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The t in [0, k) with 0 <= origin + t*d < size, as [*lo, *hi). */
static inline void tap_range(int64_t origin, int64_t d, int64_t k, int64_t size, int64_t *lo, int64_t *hi) {
    *lo = max64(0, ceil_div(-origin, d));
    *hi = min64(k, floor_div(size - 1 - origin, d) + 1);
    if (*hi < *lo) *hi = *lo;
}

/* Output columns ow in [0, Wo) whose taps ow*sw - pl .. ow*sw - pl + span all lie in [0, W). */
static inline void column_interior(int64_t pl, int64_t sw, int64_t span, int64_t W, int64_t Wo,
                                   int64_t *lo, int64_t *hi) {
    *lo = min64(Wo, max64(0, ceil_div(pl, sw)));
    *hi = min64(Wo, floor_div(W - 1 - span + pl, sw) + 1);
    if (*hi < *lo) *hi = *lo;
}

/* Sizes must be >= 0 and strides/dilations >= 1; the padding may be negative only where the
 * function allows it. */
static int geometry_ok(const int64_t *g, int negative_padding) {
    for (int k = 0; k < G_LEN; ++k)
        if (g[k] < 0 && !(negative_padding && (k == G_PT || k == G_PL))) return 0;
    return g[G_SH] > 0 && g[G_SW] > 0 && g[G_DH] > 0 && g[G_DW] > 0;
}

AICS_DEFINE_ISA_SELECTION(aics_depthwise)

/* One version per instruction set (aics_depthwise_version.h: both element types). */
#define ISA baseline
#define ISA_ATTR
#define VEC_BYTES 16
#include "aics_depthwise_version.h"

#if AICS_X86
#define ISA avx2
#define ISA_ATTR AICS_TARGET_AVX2
#define VEC_BYTES 32
#include "aics_depthwise_version.h"

#define ISA avx512
#define ISA_ATTR AICS_TARGET_AVX512
#define VEC_BYTES 64
#include "aics_depthwise_version.h"
#endif

/* The entry points: aics_depthwise_<pass>_<f32|f64>, each running the selected version. */
#if AICS_X86
#define DW_DISPATCH(name, args) \
    (aics_isa() == AICS_ISA_AVX512 ? name##_avx512 args : aics_isa() == AICS_ISA_AVX2 ? name##_avx2 args : name##_baseline args)
#else
#define DW_DISPATCH(name, args) (name##_baseline args)
#endif
#define DW_EXPORTS(T, SFX)                                                                           \
    AICS_EXPORT int aics_depthwise_forward_##SFX(const int64_t *g, const T *x, const T *w, T *y,      \
                                                 int64_t r0, int64_t r1) {                           \
        return DW_DISPATCH(depthwise_forward_##SFX, (g, x, w, y, r0, r1));                           \
    }                                                                                                \
    AICS_EXPORT int aics_depthwise_backprop_input_##SFX(const int64_t *g, const T *dy, const T *w,   \
                                                        T *dx, int64_t r0, int64_t r1, int64_t *cols) { \
        return DW_DISPATCH(depthwise_backprop_input_##SFX, (g, dy, w, dx, r0, r1, cols));            \
    }                                                                                                \
    AICS_EXPORT int aics_depthwise_backprop_filter_##SFX(const int64_t *g, const T *x, const T *dy,  \
                                                         T *dw_part, int64_t r0, int64_t r1) {       \
        return DW_DISPATCH(depthwise_backprop_filter_##SFX, (g, x, dy, dw_part, r0, r1));            \
    }
DW_EXPORTS(float, f32)
DW_EXPORTS(double, f64)
