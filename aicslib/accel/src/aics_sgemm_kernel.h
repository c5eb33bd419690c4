/* The SGEMM's micro-kernel, packing and blocking for one instruction set: included by
 * aics_sgemm_packed.c once per version (aics_isa.h), with
 *   ISA       the version's name (names here get it as a suffix),
 *   ISA_ATTR  its target attribute (empty for the baseline),
 *   VL, MR    floats per vector register and rows of A per micro-kernel (NR = 2 * VL columns),
 *   VFMA(a, b, c)  a * b + c rounded once (a a float, b and c vectors of VL floats).
 * Read aics_sgemm_packed.c first: it explains the algorithm.
 *
 * Whatever VL and MR, each element of C is the same sum in the same order: A[i, p] * B[p, j]
 * fused into the running sum for p = p0 .. p0 + kc - 1, one KC block after another, each
 * block's sum (started at zero) added to C. So every version gives the same bits.
 */
#define SG_CAT2(a, b) a##_##b
#define SG_CAT(a, b) SG_CAT2(a, b)
#define SG(name) SG_CAT(name, ISA)
#define NR (2 * VL)
#define MC (MR * 20)    /* an MC x KC block of A: 240 KiB with MR = 12, kept in L2 */

typedef float SG(vf) __attribute__((vector_size(VL * sizeof(float))));
typedef float SG(vf_unaligned) __attribute__((vector_size(VL * sizeof(float)), aligned(4)));
#define vf SG(vf)
#define vf_unaligned SG(vf_unaligned)

/* acc[i] += A[i, p] * b_sliver[p, :] for p < kc, A[i, p] at ap[i * ras + p * kas]; then the C
 * tile (+)= acc. Inlined into two callers with constant strides, so each gets its own loop. */
ISA_ATTR static AICS_INLINE void
SG(micro_kernel_strided)(int64_t kc, const float *restrict ap, int64_t ras, int64_t kas,
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
            acc0[i] = VFMA(ai, b0, acc0[i]);
            acc1[i] = VFMA(ai, b1, acc1[i]);
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
ISA_ATTR static void SG(micro_kernel)(int64_t kc, const float *restrict ap, const float *restrict bp,
                         float *restrict c, int64_t ldc, int accumulate) {
    SG(micro_kernel_strided)(kc, ap, 1, MR, bp, c, ldc, accumulate);
}

/* A read where it lies, rows lda apart with unit column stride: when B has only a few
 * NR-wide slivers, packing A would cost about as much as the multiply-adds it feeds. */
ISA_ATTR static void SG(micro_kernel_rows)(int64_t kc, const float *restrict ap, int64_t lda,
                              const float *restrict bp, float *restrict c, int64_t ldc, int accumulate) {
    SG(micro_kernel_strided)(kc, ap, lda, 1, bp, c, ldc, accumulate);
}

/* packed[(j / NR) * kc * NR + p * NR + j % NR] = B[p0 + p, j0 + j], zero past nc. */
ISA_ATTR static void SG(pack_b)(const float *b, int64_t rsb, int64_t csb, int64_t p0, int64_t kc,
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
ISA_ATTR static void SG(pack_a)(const float *a, int64_t rsa, int64_t csa, int64_t i0, int64_t mc,
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

ISA_ATTR static int SG(sgemm_packed) SGEMM_PARAMS {
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
            SG(pack_b)(b, rsb, csb, p0, kc, j0, nc, bpack);
            for (int64_t i0 = 0; i0 < m; i0 += MC) {
                const int64_t mc = m - i0 < MC ? m - i0 : MC;
                const int64_t full = mc / MR * MR;      /* rows in whole MR-tall slivers */
                const int direct = csa == 1 && nc <= (4 * NR);
                if (direct)             /* only the last, partial sliver is packed (zero rows) */
                    SG(pack_a)(a, rsa, csa, i0 + full, mc - full, p0, kc, apack + full * kc);
                else
                    SG(pack_a)(a, rsa, csa, i0, mc, p0, kc, apack);
                for (int64_t js = 0; js < nc; js += NR) {
                    const int64_t w = nc - js < NR ? nc - js : NR;
                    for (int64_t is = 0; is < mc; is += MR) {
                        const int64_t h = mc - is < MR ? mc - is : MR;
                        float *ct = c + (i0 + is) * ldc + j0 + js;
                        const float *a_rows = a + (i0 + is) * rsa + p0;
                        if (w == NR && h == MR) {
                            if (direct)
                                SG(micro_kernel_rows)(kc, a_rows, rsa, bpack + js * kc, ct, ldc, acc);
                            else
                                SG(micro_kernel)(kc, apack + is * kc, bpack + js * kc, ct, ldc, acc);
                            continue;
                        }
                        /* an edge tile: compute it whole into a buffer, write its valid part */
                        if (direct && h == MR)
                            SG(micro_kernel_rows)(kc, a_rows, rsa, bpack + js * kc, edge, NR, 0);
                        else
                            SG(micro_kernel)(kc, apack + is * kc, bpack + js * kc, edge, NR, 0);
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

#undef vf
#undef vf_unaligned
#undef NR
#undef MC
