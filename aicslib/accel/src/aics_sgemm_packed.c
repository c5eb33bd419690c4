/* A packed, register-blocked SGEMM: the GEMM under aicslib's convolution kernels.
 *
 * Why our own: NumPy's OpenBLAS picks its kernels by CPU at load time, and an
 * environment may pin it to an older CPU's (OPENBLAS_CORETYPE=Haswell on the course
 * machines: 256-bit vectors on cores with 512-bit FMA units, half the peak). This file
 * holds a version of the kernel per instruction set (aics_sgemm_kernel.h, once per
 * version: aics_isa.h), and the widest the CPU runs is used. BLAS also gives different
 * bits on different CPUs; every version here gives the same (aics_sgemm_kernel.h says why).
 *
 * How it is fast (the structure of BLIS and of Goto's GEMM):
 *   - the micro-kernel keeps an MR x NR tile of C in registers for the whole inner
 *     dimension: each step loads NR values of B (two vectors), broadcasts MR values of
 *     A, and does 2*MR vector multiply-adds; C is read and written once per KC steps;
 *   - the operands are packed first: a KC x NC panel of B in NR-wide slivers (it lives
 *     in L2/L3 and each sliver in L1 while MC/MR micro-kernels use it) and an MC x KC
 *     block of A in MR-tall slivers (in L2), so the micro-kernel reads both
 *     contiguously whatever the operands' strides; transposed operands are just strides;
 *   - partial tiles at the edges are packed with zeros and written through a buffer.
 *
 * C = A @ B (accumulate = 0) or C += A @ B (accumulate = 1); A is m x k with element
 * (i, p) at a[i * rsa + p * csa], B is k x n with (p, j) at b[p * rsb + j * csb], C is
 * m x n with (i, j) at c[i * ldc + j]. One thread: callers split the work.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aics_isa.h"

#define KC 256          /* a KC x NR sliver of B: 32 KiB with 512-bit vectors, kept in L1 */
#define NC 2048         /* a KC x NC panel of B: 2 MiB, in L3 */
#define AICS_CONV_MAX_CHANNELS 4096  /* aics_conv2d_implicit's input channels, at most */

#define SGEMM_PARAMS (int64_t m, int64_t n, int64_t k, const float *a, int64_t rsa, int64_t csa, \
                      const float *b, int64_t rsb, int64_t csb, float *c, int64_t ldc, int accumulate)

AICS_DEFINE_ISA_SELECTION(aics_sgemm)

/* The packing buffers, one pair per thread, kept from call to call: a fresh multi-MiB
 * buffer costs a page fault per 4 KiB on first touch, as much as packing itself. */
typedef struct { float *data; size_t capacity; } workspace;
static pthread_key_t workspace_key;
static pthread_once_t workspace_once = PTHREAD_ONCE_INIT;

static void free_workspace(void *p) {
    workspace *w = p;
    free(w[0].data);
    free(w[1].data);
    free(w);
}

static void make_workspace_key(void) { pthread_key_create(&workspace_key, free_workspace); }

static float *thread_buffer(int which, size_t floats) {
    pthread_once(&workspace_once, make_workspace_key);
    workspace *w = pthread_getspecific(workspace_key);
    if (w == NULL) {
        w = calloc(2, sizeof(workspace));
        if (w == NULL || pthread_setspecific(workspace_key, w) != 0) {
            free(w);
            return NULL;
        }
    }
    if (w[which].capacity < floats) {
        void *p = NULL;
        if (posix_memalign(&p, 64, floats * sizeof(float)) != 0) return NULL;
        free(w[which].data);
        w[which].data = p;
        w[which].capacity = floats;
    }
    return w[which].data;
}

/* The baseline: no FMA instruction on x86-64 before AVX2, so each lane calls fmaf (libm,
 * correctly rounded: the bits of an FMA instruction, slowly); aarch64 has it in every core. */
#define ISA baseline
#define ISA_ATTR
#define VL 4
#define MR 6
typedef float baseline_lanes __attribute__((vector_size(VL * sizeof(float))));
static AICS_INLINE baseline_lanes fma_lanes(float a, baseline_lanes b, baseline_lanes c) {
    baseline_lanes r;
    for (int l = 0; l < VL; ++l) r[l] = fmaf(a, b[l], c[l]);
    return r;
}
#define VFMA(a, b, c) fma_lanes((a), (b), (c))
#include "aics_sgemm_kernel.h"
#undef ISA
#undef ISA_ATTR
#undef VL
#undef MR
#undef VFMA

#if AICS_X86
#define ISA avx2
#define ISA_ATTR AICS_TARGET_AVX2
#define VL 8
#define MR 6            /* 6 x 2 accumulators of the 16 ymm */
#define VFMA(a, b, c) ((vf)_mm256_fmadd_ps(_mm256_set1_ps(a), (__m256)(b), (__m256)(c)))
#include "aics_sgemm_kernel.h"
#undef ISA
#undef ISA_ATTR
#undef VL
#undef MR
#undef VFMA

#define ISA avx512
#define ISA_ATTR AICS_TARGET_AVX512
#define VL 16
#define MR 12           /* 12 x 2 accumulators + 2 B vectors + 1 broadcast of the 32 zmm */
#define VFMA(a, b, c) ((vf)_mm512_fmadd_ps(_mm512_set1_ps(a), (__m512)(b), (__m512)(c)))
#include "aics_sgemm_kernel.h"
#undef ISA
#undef ISA_ATTR
#undef VL
#undef MR
#undef VFMA
#endif

/* C = A @ B (accumulate = 0) or C += A @ B (1), in the selected version; 0, or -1 for a
 * negative size, -2 without memory for the packing buffers. */
AICS_EXPORT int aics_sgemm_packed SGEMM_PARAMS {
    if (m < 0 || n < 0 || k < 0) return -1;
    if (m == 0 || n == 0) return 0;
    if (k == 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; ++i) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return 0;
    }
#if AICS_X86
    if (aics_isa() == AICS_ISA_AVX512) return sgemm_packed_avx512(m, n, k, a, rsa, csa, b, rsb, csb, c, ldc, accumulate);
    if (aics_isa() == AICS_ISA_AVX2) return sgemm_packed_avx2(m, n, k, a, rsa, csa, b, rsb, csb, c, ldc, accumulate);
#endif
    return sgemm_packed_baseline(m, n, k, a, rsa, csa, b, rsb, csb, c, ldc, accumulate);
}

/* C[i] = A[i] @ B[i] for i < count, the i-th operands at a + i * bsa, b + i * bsb, c + i * bsc.
 * Winograd's 16 or 36 products per block are small (a few hundred rows, K = C = 64 ..):
 * one call for the stack saves a ctypes call per product, which costs as much as the product. */
AICS_EXPORT int aics_sgemm_packed_batched(int64_t count, int64_t m, int64_t n, int64_t k,
                              const float *a, int64_t bsa, int64_t rsa, int64_t csa,
                              const float *b, int64_t bsb, int64_t rsb, int64_t csb,
                              float *c, int64_t bsc, int64_t ldc, int accumulate) {
    for (int64_t i = 0; i < count; ++i) {
        const int status = aics_sgemm_packed(m, n, k, a + i * bsa, rsa, csa, b + i * bsb, rsb, csb,
                                             c + i * bsc, ldc, accumulate);
        if (status != 0) return status;
    }
    return 0;
}

/* Conv2D by the implicit GEMM (aics_sgemm_kernel.h's conv2d_implicit): y (the block's output
 * pixels, contiguous) = the im2col rows of output rows r0 .. r1 of images n0 .. n1 of x, times w.
 * 0, -1 for a bad geometry, -2 without memory. */
AICS_EXPORT int aics_conv2d_implicit(const int64_t *g, const float *x, const float *w, float *y,
                                     int64_t n0, int64_t n1, int64_t r0, int64_t r1) {
    static const float zeros[AICS_CONV_MAX_CHANNELS] __attribute__((aligned(64)));  /* the padding */
    for (int i = 0; i < 14; ++i)
        if (g[i] < 0) return -1;
    if (g[2] > AICS_CONV_MAX_CHANNELS || g[6] < 1 || g[7] < 1 || g[8] < 1 || g[9] < 1 || n0 < 0
        || n1 < n0 || r0 < 0 || r1 < r0 || r1 > g[12])
        return -1;
    if (n1 == n0 || r1 == r0 || g[3] == 0) return 0;
    if (g[2] == 0 || g[4] == 0 || g[5] == 0) {
        for (int64_t i = 0; i < (n1 - n0) * (r1 - r0) * g[13] * g[3]; ++i) y[i] = 0.0f;
        return 0;
    }
#if AICS_X86
    if (aics_isa() == AICS_ISA_AVX512) return conv2d_implicit_avx512(g, x, w, y, n0, n1, r0, r1, zeros);
    if (aics_isa() == AICS_ISA_AVX2) return conv2d_implicit_avx2(g, x, w, y, n0, n1, r0, r1, zeros);
#endif
    return conv2d_implicit_baseline(g, x, w, y, n0, n1, r0, r1, zeros);
}

/* The selected version's micro-kernel tile, for callers that choose their blocking around it. */
AICS_EXPORT int aics_sgemm_packed_tile(int64_t *mr, int64_t *nr) {
    const int isa = aics_isa();
    *mr = isa == AICS_ISA_AVX512 ? 12 : 6;
    *nr = isa == AICS_ISA_AVX512 ? 32 : isa == AICS_ISA_AVX2 ? 16 : 8;
    return 0;
}
