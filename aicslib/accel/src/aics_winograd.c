/* Winograd's input and output transforms, F(2x2, 3x3) and F(4x4, 3x3), in one pass each.
 *
 * aicslib/kernels/conv_ops.py explains the algorithm, aicslib/accel/winograd_transforms.py does
 * these transforms with NumPy:
 * one whole-array operation per non-zero of B^T or A^T, so each transform streams its tiles
 * through memory 10-30 times. Here each tile is read once, transformed in registers and L1
 * (a chunk of channels at a time, the loops over channels vectorised by the compiler) and
 * written once, which makes both transforms bound by memory instead of by passes
 * (benchmarks/README.md, "Conv2D algorithm thresholds").
 *
 * The formulas are B^T d B and A^T M A with the matrices of winograd_transforms.py, factored the usual
 * way (common sums first: -4 d1 - 4 d2 + d3 + d4 = (d3 + d4) - 4 (d1 + d2)); the results
 * equal NumPy's up to float32 rounding. The output transform can apply a fused Conv2D's
 * output stage (aics_output_stage.h) to each tile's pixels as it writes them; this file is
 * compiled with -ffp-contract=off, so that the fused result is bit-identical to the same
 * transform followed by the unfused BiasAdd / FusedBatchNorm and activation kernels, and each
 * instruction set's version (aics_isa.h) to the others.
 *
 * Layouts (element strides, channels contiguous):
 *   x: the NHWC input, pixel (n, h, w) at x + n*xs_n + h*xs_h + w*xs_w; the first of the
 *      block's images is at x, and a tile's rows and columns outside 0..H-1, 0..W-1 read zeros;
 *   V: component t of tile (n, r, q), channel c, at V + t*vs_t + n*vs_n + r*vs_r + q*C + c;
 *   M: the same layout with K channels;
 *   y: output pixel (n, i, j) at y + n*ys_n + i*ys_h + j*ys_w, channels contiguous;
 *   w: the HWIO filter (3, 3, C, K), contiguous; U: component t of (c, k) at U + t*C*K + c*K + k.
 */
#include <stdint.h>
#include <stdlib.h>

#include "aics_output_stage.h"

AICS_DEFINE_ISA_SELECTION(aics_winograd)

/* The channel loops read and write distinct rows: no iteration depends on another. */
#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#elif defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define IVDEP
#endif

#define CB 64    /* channels transformed together: a 6x6 tile of them is 9 KiB, in L1 */

/* The F(4x4) input rows B^T: (r0..r5 are one row or column of a 6x6 tile) */
#define B4_0(r0, r1, r2, r3, r4, r5) (4.0f * (r0) - 5.0f * (r2) + (r4))
#define B4_1(r0, r1, r2, r3, r4, r5) (((r3) + (r4)) - 4.0f * ((r1) + (r2)))
#define B4_2(r0, r1, r2, r3, r4, r5) (((r4) - (r3)) + 4.0f * ((r1) - (r2)))
#define B4_3(r0, r1, r2, r3, r4, r5) (((r4) - (r2)) + 2.0f * ((r3) - (r1)))
#define B4_4(r0, r1, r2, r3, r4, r5) (((r4) - (r2)) - 2.0f * ((r3) - (r1)))
#define B4_5(r0, r1, r2, r3, r4, r5) (4.0f * (r1) - 5.0f * (r3) + (r5))

static AICS_INLINE void input_tile_f4(const float *const d[36], int64_t C, float *v, int64_t vs_t) {
    float t[6][6][CB];                      /* t[i][b] = (d B)[i][b]: columns first */
    for (int64_t c0 = 0; c0 < C; c0 += CB) {
        const int64_t cb = C - c0 < CB ? C - c0 : CB;
        for (int i = 0; i < 6; ++i) {
            const float *r0 = d[i * 6] + c0, *r1 = d[i * 6 + 1] + c0, *r2 = d[i * 6 + 2] + c0;
            const float *r3 = d[i * 6 + 3] + c0, *r4 = d[i * 6 + 4] + c0, *r5 = d[i * 6 + 5] + c0;
            IVDEP for (int64_t c = 0; c < cb; ++c) {
                const float a0 = r0[c], a1 = r1[c], a2 = r2[c], a3 = r3[c], a4 = r4[c], a5 = r5[c];
                t[i][0][c] = B4_0(a0, a1, a2, a3, a4, a5);
                t[i][1][c] = B4_1(a0, a1, a2, a3, a4, a5);
                t[i][2][c] = B4_2(a0, a1, a2, a3, a4, a5);
                t[i][3][c] = B4_3(a0, a1, a2, a3, a4, a5);
                t[i][4][c] = B4_4(a0, a1, a2, a3, a4, a5);
                t[i][5][c] = B4_5(a0, a1, a2, a3, a4, a5);
            }
        }
        for (int b = 0; b < 6; ++b) {        /* then rows: V[a][b] = (B^T t)[a][b] */
            float *o0 = v + (0 * 6 + b) * vs_t + c0, *o1 = v + (1 * 6 + b) * vs_t + c0;
            float *o2 = v + (2 * 6 + b) * vs_t + c0, *o3 = v + (3 * 6 + b) * vs_t + c0;
            float *o4 = v + (4 * 6 + b) * vs_t + c0, *o5 = v + (5 * 6 + b) * vs_t + c0;
            IVDEP for (int64_t c = 0; c < cb; ++c) {
                const float a0 = t[0][b][c], a1 = t[1][b][c], a2 = t[2][b][c];
                const float a3 = t[3][b][c], a4 = t[4][b][c], a5 = t[5][b][c];
                o0[c] = B4_0(a0, a1, a2, a3, a4, a5);
                o1[c] = B4_1(a0, a1, a2, a3, a4, a5);
                o2[c] = B4_2(a0, a1, a2, a3, a4, a5);
                o3[c] = B4_3(a0, a1, a2, a3, a4, a5);
                o4[c] = B4_4(a0, a1, a2, a3, a4, a5);
                o5[c] = B4_5(a0, a1, a2, a3, a4, a5);
            }
        }
    }
}

/* The F(2x2) input rows B^T */
static AICS_INLINE void input_tile_f2(const float *const d[16], int64_t C, float *v, int64_t vs_t) {
    float t[4][4][CB];
    for (int64_t c0 = 0; c0 < C; c0 += CB) {
        const int64_t cb = C - c0 < CB ? C - c0 : CB;
        for (int i = 0; i < 4; ++i) {
            const float *r0 = d[i * 4] + c0, *r1 = d[i * 4 + 1] + c0;
            const float *r2 = d[i * 4 + 2] + c0, *r3 = d[i * 4 + 3] + c0;
            IVDEP for (int64_t c = 0; c < cb; ++c) {
                t[i][0][c] = r0[c] - r2[c];
                t[i][1][c] = r1[c] + r2[c];
                t[i][2][c] = r2[c] - r1[c];
                t[i][3][c] = r1[c] - r3[c];
            }
        }
        for (int b = 0; b < 4; ++b) {
            float *o0 = v + (0 * 4 + b) * vs_t + c0, *o1 = v + (1 * 4 + b) * vs_t + c0;
            float *o2 = v + (2 * 4 + b) * vs_t + c0, *o3 = v + (3 * 4 + b) * vs_t + c0;
            IVDEP for (int64_t c = 0; c < cb; ++c) {
                o0[c] = t[0][b][c] - t[2][b][c];
                o1[c] = t[1][b][c] + t[2][b][c];
                o2[c] = t[2][b][c] - t[1][b][c];
                o3[c] = t[1][b][c] - t[3][b][c];
            }
        }
    }
}

/* Pointers to the side x side pixels from (h0, w0) of one image; those outside H x W read zeros. */
static AICS_INLINE void tile_pixels(const float **p, int side, const float *img, int64_t s_h, int64_t s_w,
                               int64_t h0, int64_t w0, int64_t H, int64_t W, const float *zeros) {
    for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j) {
            const int64_t h = h0 + i, w = w0 + j;
            p[i * side + j] = (h < 0 || h >= H || w < 0 || w >= W) ? zeros : img + h * s_h + w * s_w;
        }
}

/* V for the nb x nr x tw tiles of a block; tile (n, r, q) reads the (m+2) x (m+2) pixels from
 * (row0 + m*r, col0 + m*q). Returns 0, -1 for a tile size other than 2 or 4, -2 without memory. */
#define WINOGRAD_INPUT_PARAMS (int m, const float *x, int64_t xs_n, int64_t xs_h, int64_t xs_w, \
    int64_t H, int64_t W, int64_t C, int64_t nb, int64_t row0, int64_t col0, int64_t nr, int64_t tw, \
    float *V, int64_t vs_t, int64_t vs_n, int64_t vs_r)
#define WINOGRAD_INPUT_ARGS (m, x, xs_n, xs_h, xs_w, H, W, C, nb, row0, col0, nr, tw, V, vs_t, vs_n, \
    vs_r)
static AICS_INLINE int winograd_input_f32_body WINOGRAD_INPUT_PARAMS {
    if (m != 2 && m != 4) return -1;
    const int a = m + 2;
    float *zeros = calloc((size_t)(C > 0 ? C : 1), sizeof(float));
    if (zeros == NULL) return -2;
    const float *d[36];
    for (int64_t n = 0; n < nb; ++n)
        for (int64_t r = 0; r < nr; ++r)
            for (int64_t q = 0; q < tw; ++q) {
                tile_pixels(d, a, x + n * xs_n, xs_h, xs_w, row0 + m * r, col0 + m * q, H, W, zeros);
                float *v = V + n * vs_n + r * vs_r + q * C;
                if (m == 4) input_tile_f4(d, C, v, vs_t);
                else input_tile_f2(d, C, v, vs_t);
            }
    free(zeros);
    return 0;
}

/* The F(4x4) output rows A^T */
#define A4_0(m0, m1, m2, m3, m4, m5) ((m0) + ((m1) + (m2)) + ((m3) + (m4)))
#define A4_1(m0, m1, m2, m3, m4, m5) (((m1) - (m2)) + 2.0f * ((m3) - (m4)))
#define A4_2(m0, m1, m2, m3, m4, m5) (((m1) + (m2)) + 4.0f * ((m3) + (m4)))
#define A4_3(m0, m1, m2, m3, m4, m5) (((m1) - (m2)) + 8.0f * ((m3) - (m4)) + (m5))

static AICS_INLINE void output_tile_f4(const float *mt, int64_t ms_t, int64_t K, float *const out[16]) {
    float s[4][6][CB];                      /* s[i][b] = (A^T M)[i][b]: rows first */
    for (int64_t k0 = 0; k0 < K; k0 += CB) {
        const int64_t kb = K - k0 < CB ? K - k0 : CB;
        for (int b = 0; b < 6; ++b) {
            const float *p = mt + b * ms_t + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                const float m0 = p[0 * 6 * ms_t + k], m1 = p[1 * 6 * ms_t + k], m2 = p[2 * 6 * ms_t + k];
                const float m3 = p[3 * 6 * ms_t + k], m4 = p[4 * 6 * ms_t + k], m5 = p[5 * 6 * ms_t + k];
                s[0][b][k] = A4_0(m0, m1, m2, m3, m4, m5);
                s[1][b][k] = A4_1(m0, m1, m2, m3, m4, m5);
                s[2][b][k] = A4_2(m0, m1, m2, m3, m4, m5);
                s[3][b][k] = A4_3(m0, m1, m2, m3, m4, m5);
            }
        }
        for (int i = 0; i < 4; ++i) {        /* then columns: Y[i][j] = (s A)[i][j] */
            float *o0 = out[i * 4] + k0, *o1 = out[i * 4 + 1] + k0;
            float *o2 = out[i * 4 + 2] + k0, *o3 = out[i * 4 + 3] + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                const float m0 = s[i][0][k], m1 = s[i][1][k], m2 = s[i][2][k];
                const float m3 = s[i][3][k], m4 = s[i][4][k], m5 = s[i][5][k];
                o0[k] = A4_0(m0, m1, m2, m3, m4, m5);
                o1[k] = A4_1(m0, m1, m2, m3, m4, m5);
                o2[k] = A4_2(m0, m1, m2, m3, m4, m5);
                o3[k] = A4_3(m0, m1, m2, m3, m4, m5);
            }
        }
    }
}

/* The F(2x2) output rows A^T */
static AICS_INLINE void output_tile_f2(const float *mt, int64_t ms_t, int64_t K, float *const out[4]) {
    float s[2][4][CB];
    for (int64_t k0 = 0; k0 < K; k0 += CB) {
        const int64_t kb = K - k0 < CB ? K - k0 : CB;
        for (int b = 0; b < 4; ++b) {
            const float *p = mt + b * ms_t + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                const float m0 = p[0 * 4 * ms_t + k], m1 = p[1 * 4 * ms_t + k];
                const float m2 = p[2 * 4 * ms_t + k], m3 = p[3 * 4 * ms_t + k];
                s[0][b][k] = m0 + m1 + m2;
                s[1][b][k] = m1 - m2 - m3;
            }
        }
        for (int i = 0; i < 2; ++i) {
            float *o0 = out[i * 2] + k0, *o1 = out[i * 2 + 1] + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                o0[k] = s[i][0][k] + s[i][1][k] + s[i][2][k];
                o1[k] = s[i][1][k] - s[i][2][k] - s[i][3][k];
            }
        }
    }
}

/* The m x m output pixels of the nb x nr x tw tiles of a block from M; tile (n, r, q) gives
 * pixels (m*r + i, m*q + j). Every pixel of every tile is written: y holds whole tiles.
 * stage >= 0: then the output stage (stage, a, s, b, activation) on each pixel's K channels. */
#define WINOGRAD_OUTPUT_PARAMS (int m, const float *M, int64_t ms_t, int64_t ms_n, int64_t ms_r, \
    int64_t nb, int64_t nr, int64_t tw, int64_t K, float *y, int64_t ys_n, int64_t ys_h, int64_t ys_w, \
    int stage, const float *a, const float *s, const float *b, int activation)
#define WINOGRAD_OUTPUT_ARGS (m, M, ms_t, ms_n, ms_r, nb, nr, tw, K, y, ys_n, ys_h, ys_w, stage, a, \
    s, b, activation)
static AICS_INLINE int winograd_output_f32_body WINOGRAD_OUTPUT_PARAMS {
    if (m != 2 && m != 4) return -1;
    if (stage >= 0 && output_stage_rows(y, 0, K, K, stage, a, s, b, activation) != 0) return -2;
    float *out[16];
    for (int64_t n = 0; n < nb; ++n)
        for (int64_t r = 0; r < nr; ++r)
            for (int64_t q = 0; q < tw; ++q) {
                for (int i = 0; i < m; ++i)
                    for (int j = 0; j < m; ++j)
                        out[i * m + j] = y + n * ys_n + (m * r + i) * ys_h + (m * q + j) * ys_w;
                const float *mt = M + n * ms_n + r * ms_r + q * K;
                if (m == 4) output_tile_f4(mt, ms_t, K, out);
                else output_tile_f2(mt, ms_t, K, out);
                if (stage >= 0)
                    for (int p = 0; p < m * m; ++p)
                        output_stage_rows(out[p], 1, K, K, stage, a, s, b, activation);
            }
    return 0;
}

/* The filter transforms G: F(2x2) and F(4x4) */
static const float G2[4][3] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
static const float G4[6][3] = {{1.0f / 4, 0.0f, 0.0f}, {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                               {-1.0f / 6, 1.0f / 6, -1.0f / 6}, {1.0f / 24, 1.0f / 12, 1.0f / 6},
                               {1.0f / 24, -1.0f / 12, 1.0f / 6}, {0.0f, 0.0f, 1.0f}};

/* U = G g G^T for the filters of input channels c0 .. c1-1 and every output channel (k, in
 * chunks: the loops over k are the vector loops); rotate180 transforms g turned by 180
 * degrees (the input gradient's filter). The NumPy version is one GEMM with K = 9, which
 * runs far below the GEMM's peak. */
#define WINOGRAD_FILTER_PARAMS (int m, const float *w, int64_t C, int64_t K, int64_t c0, int64_t c1, \
    int rotate180, float *U)
#define WINOGRAD_FILTER_ARGS (m, w, C, K, c0, c1, rotate180, U)
static AICS_INLINE int winograd_filter_f32_body WINOGRAD_FILTER_PARAMS {
    if (m != 2 && m != 4) return -1;
    const int a = m + 2;
    const float(*G)[3] = m == 4 ? G4 : G2;
    const int64_t ck = C * K;
    float g[3][3][CB], t[6][3][CB];
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t k0 = 0; k0 < K; k0 += CB) {
            const int64_t kb = K - k0 < CB ? K - k0 : CB;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) {
                    const int64_t tap = rotate180 ? (2 - i) * 3 + (2 - j) : i * 3 + j;
                    const float *src = w + tap * ck + c * K + k0;
                    IVDEP for (int64_t k = 0; k < kb; ++k) g[i][j][k] = src[k];
                }
            for (int r = 0; r < a; ++r)           /* t = G g */
                for (int j = 0; j < 3; ++j)
                    IVDEP for (int64_t k = 0; k < kb; ++k)
                        t[r][j][k] = G[r][0] * g[0][j][k] + G[r][1] * g[1][j][k] + G[r][2] * g[2][j][k];
            for (int r = 0; r < a; ++r)           /* U = t G^T */
                for (int b = 0; b < a; ++b) {
                    float *dst = U + (r * a + b) * ck + c * K + k0;
                    IVDEP for (int64_t k = 0; k < kb; ++k)
                        dst[k] = t[r][0][k] * G[b][0] + t[r][1][k] * G[b][1] + t[r][2][k] * G[b][2];
                }
        }
    return 0;
}

/* The filter gradient's transform of the output gradient: D = A dY A^T for each m x m tile of dY
 * (the transpose of the output transform), zeros past Ho x Wo. A = (A^T)^T has the rows below. */
#define GA4_0(y0, y1, y2, y3) (y0)
#define GA4_1(y0, y1, y2, y3) (((y0) + (y2)) + ((y1) + (y3)))
#define GA4_2(y0, y1, y2, y3) (((y0) + (y2)) - ((y1) + (y3)))
#define GA4_3(y0, y1, y2, y3) (((y0) + 4.0f * (y2)) + 2.0f * ((y1) + 4.0f * (y3)))
#define GA4_4(y0, y1, y2, y3) (((y0) + 4.0f * (y2)) - 2.0f * ((y1) + 4.0f * (y3)))
#define GA4_5(y0, y1, y2, y3) (y3)

static AICS_INLINE void grad_output_tile_f4(const float *const e[16], int64_t K, float *D, int64_t ds_t) {
    float t[4][6][CB];                      /* t[i][b] = (dY A^T)[i][b]: columns first */
    for (int64_t k0 = 0; k0 < K; k0 += CB) {
        const int64_t kb = K - k0 < CB ? K - k0 : CB;
        for (int i = 0; i < 4; ++i) {
            const float *p0 = e[i * 4] + k0, *p1 = e[i * 4 + 1] + k0, *p2 = e[i * 4 + 2] + k0, *p3 = e[i * 4 + 3] + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                const float y0 = p0[k], y1 = p1[k], y2 = p2[k], y3 = p3[k];
                t[i][0][k] = GA4_0(y0, y1, y2, y3);
                t[i][1][k] = GA4_1(y0, y1, y2, y3);
                t[i][2][k] = GA4_2(y0, y1, y2, y3);
                t[i][3][k] = GA4_3(y0, y1, y2, y3);
                t[i][4][k] = GA4_4(y0, y1, y2, y3);
                t[i][5][k] = GA4_5(y0, y1, y2, y3);
            }
        }
        for (int b = 0; b < 6; ++b) {        /* then rows: D[a][b] = (A t)[a][b] */
            float *o0 = D + (0 * 6 + b) * ds_t + k0, *o1 = D + (1 * 6 + b) * ds_t + k0;
            float *o2 = D + (2 * 6 + b) * ds_t + k0, *o3 = D + (3 * 6 + b) * ds_t + k0;
            float *o4 = D + (4 * 6 + b) * ds_t + k0, *o5 = D + (5 * 6 + b) * ds_t + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                const float y0 = t[0][b][k], y1 = t[1][b][k], y2 = t[2][b][k], y3 = t[3][b][k];
                o0[k] = GA4_0(y0, y1, y2, y3);
                o1[k] = GA4_1(y0, y1, y2, y3);
                o2[k] = GA4_2(y0, y1, y2, y3);
                o3[k] = GA4_3(y0, y1, y2, y3);
                o4[k] = GA4_4(y0, y1, y2, y3);
                o5[k] = GA4_5(y0, y1, y2, y3);
            }
        }
    }
}

static AICS_INLINE void grad_output_tile_f2(const float *const e[4], int64_t K, float *D, int64_t ds_t) {
    float t[2][4][CB];
    for (int64_t k0 = 0; k0 < K; k0 += CB) {
        const int64_t kb = K - k0 < CB ? K - k0 : CB;
        for (int i = 0; i < 2; ++i) {
            const float *p0 = e[i * 2] + k0, *p1 = e[i * 2 + 1] + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                t[i][0][k] = p0[k];
                t[i][1][k] = p0[k] + p1[k];
                t[i][2][k] = p0[k] - p1[k];
                t[i][3][k] = -p1[k];
            }
        }
        for (int b = 0; b < 4; ++b) {
            float *o0 = D + (0 * 4 + b) * ds_t + k0, *o1 = D + (1 * 4 + b) * ds_t + k0;
            float *o2 = D + (2 * 4 + b) * ds_t + k0, *o3 = D + (3 * 4 + b) * ds_t + k0;
            IVDEP for (int64_t k = 0; k < kb; ++k) {
                o0[k] = t[0][b][k];
                o1[k] = t[0][b][k] + t[1][b][k];
                o2[k] = t[0][b][k] - t[1][b][k];
                o3[k] = -t[1][b][k];
            }
        }
    }
}

/* D for the nb x nr x tw tiles of a block: tile (n, r, q) reads dY pixels (row0 + m*r + i,
 * m*q + j), i, j < m, of image n (dy points at the block's first image), zeros past Ho x Wo.
 * D has the layout of V (component t of tile (n, r, q) at D + t*ds_t + n*ds_n + r*ds_r + q*K). */
#define WINOGRAD_GRAD_OUTPUT_PARAMS (int m, const float *dy, int64_t dys_n, int64_t dys_h, int64_t \
    dys_w, int64_t Ho, int64_t Wo, int64_t K, int64_t nb, int64_t row0, int64_t nr, int64_t tw, float \
    *D, int64_t ds_t, int64_t ds_n, int64_t ds_r)
#define WINOGRAD_GRAD_OUTPUT_ARGS (m, dy, dys_n, dys_h, dys_w, Ho, Wo, K, nb, row0, nr, tw, D, ds_t, \
    ds_n, ds_r)
static AICS_INLINE int winograd_grad_output_f32_body WINOGRAD_GRAD_OUTPUT_PARAMS {
    if (m != 2 && m != 4) return -1;
    float *zeros = calloc((size_t)(K > 0 ? K : 1), sizeof(float));
    if (zeros == NULL) return -2;
    const float *e[16];
    for (int64_t n = 0; n < nb; ++n)
        for (int64_t r = 0; r < nr; ++r)
            for (int64_t q = 0; q < tw; ++q) {
                tile_pixels(e, m, dy + n * dys_n, dys_h, dys_w, row0 + m * r, m * q, Ho, Wo, zeros);
                float *d = D + n * ds_n + r * ds_r + q * K;
                if (m == 4) grad_output_tile_f4(e, K, d, ds_t);
                else grad_output_tile_f2(e, K, d, ds_t);
            }
    free(zeros);
    return 0;
}

/* The entry points: each runs the version of its body for the selected instruction set. */
AICS_EXPORT_DISPATCHED(int, aics_winograd_input_f32, winograd_input_f32, WINOGRAD_INPUT_PARAMS, WINOGRAD_INPUT_ARGS)
AICS_EXPORT_DISPATCHED(int, aics_winograd_output_f32, winograd_output_f32, WINOGRAD_OUTPUT_PARAMS, WINOGRAD_OUTPUT_ARGS)
AICS_EXPORT_DISPATCHED(int, aics_winograd_filter_f32, winograd_filter_f32, WINOGRAD_FILTER_PARAMS, WINOGRAD_FILTER_ARGS)
AICS_EXPORT_DISPATCHED(int, aics_winograd_grad_output_f32, winograd_grad_output_f32, WINOGRAD_GRAD_OUTPUT_PARAMS, WINOGRAD_GRAD_OUTPUT_ARGS)
