/* A packed, register-blocked SGEMM: the GEMM under aicslib's convolution kernels.
 *
 * Why our own: NumPy's OpenBLAS picks its kernels by CPU at load time, and an
 * environment may pin it to an older CPU's (OPENBLAS_CORETYPE=Haswell on the course
 * machines: 256-bit vectors on cores with 512-bit FMA units, half the peak). This file
 * is compiled with -march=native on the machine that runs it, so its inner loop uses
 * the widest vectors the CPU has.
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
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#define VL 16           /* floats per vector register */
#define MR 12           /* 12 x 2 accumulators + 2 B vectors + 1 broadcast of the 32 zmm */
#elif defined(__AVX__)
#define VL 8
#define MR 6            /* 6 x 2 accumulators of the 16 ymm */
#else
#define VL 4
#define MR 6
#endif
#define NR (2 * VL)
#define KC 256          /* a KC x NR sliver of B: 32 KiB with 512-bit vectors, kept in L1 */
#define MC (MR * 20)    /* an MC x KC block of A: 240 KiB with MR = 12, kept in L2 */
#define UNPACKED_A_MAX_N (4 * NR)   /* up to this many columns, A is read unpacked */
#define NC 2048         /* a KC x NC panel of B: 2 MiB, in L3 */

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
typedef float vf_unaligned __attribute__((vector_size(VL * sizeof(float)), aligned(4)));

/* acc[i] += A[i, p] * b_sliver[p, :] for p < kc, A[i, p] at ap[i * ras + p * kas]; then the C
 * tile (+)= acc. Inlined into two callers with constant strides, so each gets its own loop. */
static inline __attribute__((always_inline)) void
micro_kernel_strided(int64_t kc, const float *restrict ap, int64_t ras, int64_t kas,
                     const float *restrict bp, float *restrict c, int64_t ldc, int accumulate) {
    vf acc0[MR], acc1[MR];
    for (int i = 0; i < MR; ++i) {
        acc0[i] = (vf){0};
        acc1[i] = (vf){0};
    }
    for (int64_t p = 0; p < kc; ++p) {
        const vf b0 = *(const vf *)bp, b1 = *(const vf *)(bp + VL);
        for (int i = 0; i < MR; ++i) {
            const float ai = ap[i * ras];
            acc0[i] += ai * b0;
            acc1[i] += ai * b1;
        }
        ap += kas;
        bp += NR;
    }
    for (int i = 0; i < MR; ++i) {
        vf_unaligned *c0 = (vf_unaligned *)(c + i * ldc), *c1 = (vf_unaligned *)(c + i * ldc + VL);
        if (accumulate) {
            *c0 += acc0[i];
            *c1 += acc1[i];
        } else {
            *c0 = acc0[i];
            *c1 = acc1[i];
        }
    }
}

/* A from a packed MR-tall sliver: a[p * MR + i]. */
static void micro_kernel(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, int64_t ldc, int accumulate) {
    micro_kernel_strided(kc, ap, 1, MR, bp, c, ldc, accumulate);
}

/* A read where it lies, rows lda apart with unit column stride: when B has only a few
 * NR-wide slivers, packing A would cost about as much as the multiply-adds it feeds. */
static void micro_kernel_rows(int64_t kc, const float *restrict ap, int64_t lda,
                              const float *restrict bp, float *restrict c, int64_t ldc, int accumulate) {
    micro_kernel_strided(kc, ap, lda, 1, bp, c, ldc, accumulate);
}

/* packed[(j / NR) * kc * NR + p * NR + j % NR] = B[p0 + p, j0 + j], zero past nc. */
static void pack_b(const float *b, int64_t rsb, int64_t csb, int64_t p0, int64_t kc,
                   int64_t j0, int64_t nc, float *restrict packed) {
    for (int64_t js = 0; js < nc; js += NR) {
        const int64_t w = nc - js < NR ? nc - js : NR;
        float *restrict dst = packed + js * kc;
        for (int64_t p = 0; p < kc; ++p) {
            const float *src = b + (p0 + p) * rsb + (j0 + js) * csb;
            if (csb == 1 && w == NR) {
                memcpy(dst + p * NR, src, NR * sizeof(float));
            } else {
                int64_t j = 0;
                for (; j < w; ++j) dst[p * NR + j] = src[j * csb];
                for (; j < NR; ++j) dst[p * NR + j] = 0.0f;
            }
        }
    }
}

/* packed[(i / MR) * kc * MR + p * MR + i % MR] = A[i0 + i, p0 + p], zero past mc. */
static void pack_a(const float *a, int64_t rsa, int64_t csa, int64_t i0, int64_t mc,
                   int64_t p0, int64_t kc, float *restrict packed) {
    for (int64_t is = 0; is < mc; is += MR) {
        const int64_t h = mc - is < MR ? mc - is : MR;
        float *restrict dst = packed + is * kc;
        if (rsa == 1) {         /* A stored transposed: a column of the sliver is contiguous */
            for (int64_t p = 0; p < kc; ++p) {
                const float *src = a + (i0 + is) + (p0 + p) * csa;
                int64_t i = 0;
                for (; i < h; ++i) dst[p * MR + i] = src[i];
                for (; i < MR; ++i) dst[p * MR + i] = 0.0f;
            }
        } else {
            for (int64_t i = 0; i < MR; ++i) {
                if (i < h) {
                    const float *src = a + (i0 + is + i) * rsa + p0 * csa;
                    for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = src[p * csa];
                } else {
                    for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = 0.0f;
                }
            }
        }
    }
}

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

int aics_sgemm_packed(int64_t m, int64_t n, int64_t k,
                      const float *a, int64_t rsa, int64_t csa,
                      const float *b, int64_t rsb, int64_t csb,
                      float *c, int64_t ldc, int accumulate) {
    if (m < 0 || n < 0 || k < 0) return -1;
    if (m == 0 || n == 0) return 0;
    if (k == 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; ++i) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return 0;
    }
    const int64_t nc_max = n < NC ? (n + NR - 1) / NR * NR : NC;
    const int64_t kc_max = k < KC ? k : KC;
    const int64_t mc_max = m < MC ? (m + MR - 1) / MR * MR : MC;
    float *bpack = thread_buffer(0, (size_t)(kc_max * nc_max));
    float *apack = thread_buffer(1, (size_t)(kc_max * mc_max));
    if (bpack == NULL || apack == NULL) return -2;
    float edge[MR * NR] __attribute__((aligned(64)));
    for (int64_t j0 = 0; j0 < n; j0 += NC) {
        const int64_t nc = n - j0 < NC ? n - j0 : NC;
        for (int64_t p0 = 0; p0 < k; p0 += KC) {
            const int64_t kc = k - p0 < KC ? k - p0 : KC;
            const int acc = accumulate || p0 > 0;
            pack_b(b, rsb, csb, p0, kc, j0, nc, bpack);
            for (int64_t i0 = 0; i0 < m; i0 += MC) {
                const int64_t mc = m - i0 < MC ? m - i0 : MC;
                const int64_t full = mc / MR * MR;      /* rows in whole MR-tall slivers */
                const int direct = csa == 1 && nc <= UNPACKED_A_MAX_N;
                if (direct)             /* only the last, partial sliver is packed (zero rows) */
                    pack_a(a, rsa, csa, i0 + full, mc - full, p0, kc, apack + full * kc);
                else
                    pack_a(a, rsa, csa, i0, mc, p0, kc, apack);
                for (int64_t js = 0; js < nc; js += NR) {
                    const int64_t w = nc - js < NR ? nc - js : NR;
                    for (int64_t is = 0; is < mc; is += MR) {
                        const int64_t h = mc - is < MR ? mc - is : MR;
                        float *ct = c + (i0 + is) * ldc + j0 + js;
                        const float *a_rows = a + (i0 + is) * rsa + p0;
                        if (w == NR && h == MR) {
                            if (direct)
                                micro_kernel_rows(kc, a_rows, rsa, bpack + js * kc, ct, ldc, acc);
                            else
                                micro_kernel(kc, apack + is * kc, bpack + js * kc, ct, ldc, acc);
                            continue;
                        }
                        /* an edge tile: compute it whole into a buffer, write its valid part */
                        if (direct && h == MR)
                            micro_kernel_rows(kc, a_rows, rsa, bpack + js * kc, edge, NR, 0);
                        else
                            micro_kernel(kc, apack + is * kc, bpack + js * kc, edge, NR, 0);
                        for (int64_t i = 0; i < h; ++i)
                            for (int64_t j = 0; j < w; ++j)
                                ct[i * ldc + j] = acc ? ct[i * ldc + j] + edge[i * NR + j] : edge[i * NR + j];
                    }
                }
            }
        }
    }
    return 0;
}

/* C[i] = A[i] @ B[i] for i < count, the i-th operands at a + i * bsa, b + i * bsb, c + i * bsc.
 * Winograd's 16 or 36 products per block are small (a few hundred rows, K = C = 64 ..):
 * one call for the stack saves a ctypes call per product, which costs as much as the product. */
int aics_sgemm_packed_batched(int64_t count, int64_t m, int64_t n, int64_t k,
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

/* The micro-kernel's tile, for callers that want to choose their blocking around it. */
int aics_sgemm_packed_tile(int64_t *mr, int64_t *nr) {
    *mr = MR;
    *nr = NR;
    return 0;
}
