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

/* The implicit-GEMM convolution's micro-kernel: an MR x NR tile of C (MR output pixels, NR
 * output channels) summed over ntaps filter taps of kc input channels each, A's row i for tap t
 * being the kc floats at rows[t * MR + i] (an input pixel's channels, or zeros for the padding).
 * The sum of each element runs over the taps in order, then the channels: one sum from zero,
 * added to C or stored, the same in every version. */
ISA_ATTR static void SG(micro_kernel_taps)(int64_t ntaps, int64_t kc, const float *const *rows,
                              const float *restrict bp, float *restrict c, int64_t ldc, int accumulate) {
    vf acc0[MR], acc1[MR];
    for (int i = 0; i < MR; ++i) {
        acc0[i] = (vf){0};
        acc1[i] = (vf){0};
    }
    for (int64_t t = 0; t < ntaps; ++t) {
        const float *r[MR];
        for (int i = 0; i < MR; ++i) r[i] = rows[t * MR + i];
        for (int64_t p = 0; p < kc; ++p) {
            const vf b0 = *(const vf *)bp, b1 = *(const vf *)(bp + VL);
            for (int i = 0; i < MR; ++i) {
                const float ai = r[i][p];
                acc0[i] = VFMA(ai, b0, acc0[i]);
                acc1[i] = VFMA(ai, b1, acc1[i]);
            }
            bp += NR;
        }
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

/* A's rows for the implicit GEMM's next tile of h output pixels (MR with the rows past h
 * reading zeros), each tap's at rows[t * MR + i], from the pixel pos = {img, oh, ow} on; pos is
 * moved past them. Counted along without divisions: this runs once per MR x K outputs and must
 * stay small beside their kh*kw*C*MR*K multiply-adds. With prefetch, the rows' cache lines are
 * asked for too: a strided conv reads few multiply-adds' worth of input per cache line, and the
 * tile computed meanwhile hides the wait for memory that would otherwise stall it. */
ISA_ATTR static void SG(implicit_rows)(const int64_t *g, const float *x, int64_t r0, int64_t r1, int64_t h,
                          int64_t *pos, const float **rows, const float *zeros, int prefetch) {
    const int64_t H = g[0], W = g[1], C = g[2], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
    const int64_t dh = g[8], dw = g[9], pt = g[10], pl = g[11], Wo = g[13];
    for (int64_t i = 0; i < MR; ++i) {
        const float *image = x + pos[0] * H * W * C;
        for (int64_t ki = 0, t = 0; ki < kh; ++ki) {
            const int64_t ih = pos[1] * sh + ki * dh - pt;
            const int row_inside = i < h && ih >= 0 && ih < H;
            for (int64_t kj = 0; kj < kw; ++kj, ++t) {
                const int64_t iw = pos[2] * sw + kj * dw - pl;
                const float *r = row_inside && iw >= 0 && iw < W ? image + (ih * W + iw) * C : zeros;
                rows[t * MR + i] = r;
                if (prefetch && r != zeros)
                    for (int64_t c = 0; c < C; c += 16) __builtin_prefetch(r + c, 0, 2);
            }
        }
        if (i < h && ++pos[2] == Wo) {
            pos[2] = 0;
            if (++pos[1] == r1) {
                pos[1] = r0;
                ++pos[0];
            }
        }
    }
}

/* Conv2D of the NHWC float32 x (N, H, W, C) with the HWIO filter w (kh*kw*C rows of K), output
 * rows r0 .. r1 of images n0 .. n1 into y, contiguous (that block's pixels, K floats each):
 * the GEMM of the im2col matrix with w, its rows of A read where they lie in x instead of from
 * a copy (an "indirect" GEMM, as XNNPACK's convolutions). g = {H, W, C, K, kh, kw, sh, sw,
 * dh, dw, pt, pl, Ho, Wo}. */
ISA_ATTR static int SG(conv2d_implicit)(const int64_t *g, const float *x, const float *w, float *y,
                           int64_t n0, int64_t n1, int64_t r0, int64_t r1, const float *zeros) {
    const int64_t C = g[2], K = g[3], taps = g[4] * g[5], k = taps * C, m = (n1 - n0) * (r1 - r0) * g[13];
    const int64_t nc_max = K < NC ? (K + NR - 1) / NR * NR : NC;
    float *bpack = thread_buffer(0, (size_t)(k * nc_max));
    const float **rows = malloc((size_t)(2 * taps * MR) * sizeof(*rows));   /* this tile's, the next's */
    if (bpack == NULL || rows == NULL) {
        free(rows);
        return -2;
    }
    float edge[MR * NR] __attribute__((aligned(64)));
    for (int64_t j0 = 0; j0 < K; j0 += NC) {
        const int64_t nc = K - j0 < NC ? K - j0 : NC;
        SG(pack_b)(w, K, 1, 0, k, j0, nc, bpack);
        int64_t pos[3] = {n0, r0, 0};
        const float **cur = rows, **next = rows + taps * MR;
        SG(implicit_rows)(g, x, r0, r1, m < MR ? m : MR, pos, cur, zeros, 0);
        for (int64_t m0 = 0; m0 < m; m0 += MR) {
            const int64_t h = m - m0 < MR ? m - m0 : MR;
            if (m0 + MR < m) {
                const int64_t h_next = m - m0 - MR < MR ? m - m0 - MR : MR;
                SG(implicit_rows)(g, x, r0, r1, h_next, pos, next, zeros, j0 == 0);
            }
            for (int64_t js = 0; js < nc; js += NR) {
                const int64_t wd = nc - js < NR ? nc - js : NR;
                float *ct = y + m0 * K + j0 + js;
                if (wd == NR && h == MR) {
                    SG(micro_kernel_taps)(taps, C, cur, bpack + js * k, ct, K, 0);
                    continue;
                }
                SG(micro_kernel_taps)(taps, C, cur, bpack + js * k, edge, NR, 0);
                for (int64_t i = 0; i < h; ++i)
                    for (int64_t j = 0; j < wd; ++j) ct[i * K + j] = edge[i * NR + j];
            }
            const float **t = cur;
            cur = next;
            next = t;
        }
    }
    free(rows);
    return 0;
}

#undef vf
#undef vf_unaligned
#undef NR
#undef MC
