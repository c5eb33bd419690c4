/* The depthwise kernels for one element type and one instruction set: included by
 * aics_depthwise_version.h once per (T, SUFFIX) in (float, f32), (double, f64), itself included
 * once per version of aics_isa.h (ISA, its name; ISA_ATTR, its target attribute; VEC_BYTES, its
 * vector register; FMA_T and, where the version has one, VFMA: fused multiply-adds).
 * Read aics_depthwise.c first: it explains the layout, the geometry array and the threads.
 *
 * Every loop over channels is cut into chunks of VB_T channels, then VB_TAIL_T, then 1: a
 * chunk function takes its width as an argument and is always called with a constant,
 * so the compiler makes a fixed-width vector version of it per width (a loop with a
 * run-time trip count would keep its accumulators in memory instead of registers).
 */
#define DW_CAT2(a, b, c) a##_##b##_##c
#define DW_CAT(a, b, c) DW_CAT2(a, b, c)
#define DW_FN(name) DW_CAT(name, SUFFIX, ISA)
/* Channels per chunk for this element type (32 float32 or 16 float64 with AVX-512). */
#define VB_T ((int)(VB_BYTES / sizeof(T)))
/* The tail chunk, never wider than a chunk (float64 without AVX: 4). */
#define VB_TAIL_T (VB_TAIL < VB_T ? VB_TAIL : VB_T)

#if DW_HAVE_VECTORS
/* GCC/clang's generic vector type of one register (VEC_BYTES), NV of them per chunk. Used where
 * the auto-vectorizer was measured to reload the same vector once per use as an FMA memory
 * operand, which makes a loop load-bound: here each vector is loaded once into a variable. */
typedef T DW_FN(vec) __attribute__((vector_size(VEC_BYTES)));
#define VEC DW_FN(vec)
#define NV (VB_BYTES / VEC_BYTES)

/* a * b + c rounded once, lane by lane: the version's FMA instruction, or FMA_T per lane. */
ISA_ATTR static INLINE VEC DW_FN(vfma)(VEC a, VEC b, VEC c) {
#ifdef VFMA
    return VFMA(a, b, c);
#else
    VEC r;
    for (int l = 0; l < (int)(VEC_BYTES / sizeof(T)); ++l) r[l] = FMA_T(a[l], b[l], c[l]);
    return r;
#endif
}

ISA_ATTR static INLINE VEC DW_FN(vload)(const T *p) {
    VEC v;
    memcpy(&v, p, sizeof v);                     /* one unaligned vector load */
    return v;
}

/* The value loaded, pinned in a register: GCC otherwise folds the load into every FMA that uses
 * it (one memory operand per use), and the loop becomes load-bound again. The empty asm tells
 * the compiler the register's content is opaque, so it cannot re-read memory instead. */
ISA_ATTR static INLINE VEC DW_FN(vload_reg)(const T *p) {
    VEC v = DW_FN(vload)(p);
    PIN_IN_REGISTER(v);
    return v;
}

ISA_ATTR static INLINE void DW_FN(vstore)(T *p, VEC v) { memcpy(p, &v, sizeof v); }
#endif

/* ---------------------------------------------------------------------------------------------
 * Forward: y[n, oh, ow, c] = sum_{i, j} x[n, oh*sh - pt + i*dh, ow*sw - pl + j*dw, c] * w[i, j, c]
 * ------------------------------------------------------------------------------------------- */

/* One output pixel, channels [c0, c0 + width), taps i in [i_lo, i_hi) and j in [j_lo, j_hi)
 * (those inside the input). x0: offset of the pixel's tap (0, 0), x[n, ih0, iw0, 0], which
 * may lie outside x (only the offsets of taps inside are dereferenced). */
ISA_ATTR static INLINE void DW_FN(forward_pixel_chunk)(const int64_t *g, const T *restrict x, const T *restrict w,
                                              T *restrict yp, int64_t x0, int64_t c0, const int width,
                                              int64_t i_lo, int64_t i_hi, int64_t j_lo, int64_t j_hi) {
    const int64_t W = g[G_W], C = g[G_C], kw = g[G_KW], dh = g[G_DH], dw = g[G_DW];
    T acc[VB_T] = {0};
    for (int64_t i = i_lo; i < i_hi; ++i)
        for (int64_t j = j_lo; j < j_hi; ++j) {
            const T *restrict xp = x + (x0 + (i * dh * W + j * dw) * C + c0);
            const T *restrict wp = w + (i * kw + j) * C + c0;
            for (int c = 0; c < width; ++c) acc[c] = FMA_T(xp[c], wp[c], acc[c]);
        }
    for (int c = 0; c < width; ++c) yp[c0 + c] = acc[c];
}

ISA_ATTR static void DW_FN(forward_pixel)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                 int64_t i_lo, int64_t i_hi, int64_t j_lo, int64_t j_hi) {
    const int64_t C = g[G_C];
    int64_t c0 = 0;
    for (; c0 + VB_T <= C; c0 += VB_T) DW_FN(forward_pixel_chunk)(g, x, w, yp, x0, c0, VB_T, i_lo, i_hi, j_lo, j_hi);
    for (; c0 + VB_TAIL_T <= C; c0 += VB_TAIL_T)
        DW_FN(forward_pixel_chunk)(g, x, w, yp, x0, c0, VB_TAIL_T, i_lo, i_hi, j_lo, j_hi);
    for (; c0 < C; ++c0) DW_FN(forward_pixel_chunk)(g, x, w, yp, x0, c0, 1, i_lo, i_hi, j_lo, j_hi);
}

/* PB neighbouring output pixels whose taps all lie inside the input along W, channels
 * [c0, c0 + width): each filter value feeds PB multiply-adds. The auto-vectorized version,
 * for every filter but the 3-wide ones (forward_3wide_chunk below), for the channels left
 * over, and for all filters where the compiler has no vector types. */
ISA_ATTR static INLINE void DW_FN(forward_pixels_chunk)(const int64_t *g, const T *restrict x, const T *restrict w,
                                               T *restrict yp, int64_t x0, int64_t c0, const int width,
                                               int64_t i_lo, int64_t i_hi,
                                               const int64_t kw, const int64_t sw, const int64_t dw) {
    const int64_t W = g[G_W], C = g[G_C], dh = g[G_DH];
    T acc[PB][VB_T] = {{0}};
    for (int64_t i = i_lo; i < i_hi; ++i) {
        const T *restrict xr = x + (x0 + i * dh * W * C + c0);
        const T *restrict wr = w + i * kw * C + c0;
        for (int64_t j = 0; j < kw; ++j)
            for (int p = 0; p < PB; ++p)
                for (int c = 0; c < width; ++c)
                    acc[p][c] = FMA_T(xr[(p * sw + j * dw) * C + c], wr[j * C + c], acc[p][c]);
    }
    for (int p = 0; p < PB; ++p)
        for (int c = 0; c < width; ++c) yp[p * C + c0 + c] = acc[p][c];
}

ISA_ATTR static INLINE void DW_FN(forward_pixels_k)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                           int64_t i_lo, int64_t i_hi,
                                           const int64_t kw, const int64_t sw, const int64_t dw) {
    const int64_t C = g[G_C];
    int64_t c0 = 0;
    for (; c0 + VB_T <= C; c0 += VB_T)
        DW_FN(forward_pixels_chunk)(g, x, w, yp, x0, c0, VB_T, i_lo, i_hi, kw, sw, dw);
    for (; c0 + VB_TAIL_T <= C; c0 += VB_TAIL_T)
        DW_FN(forward_pixels_chunk)(g, x, w, yp, x0, c0, VB_TAIL_T, i_lo, i_hi, kw, sw, dw);
    for (; c0 < C; ++c0) DW_FN(forward_pixels_chunk)(g, x, w, yp, x0, c0, 1, i_lo, i_hi, kw, sw, dw);
}

#if DW_HAVE_VECTORS
/* np <= PB pixels of a 3-wide filter (dilation 1, stride sw = 1 or 2; np and sw constants),
 * channels [c0, c0 + VB_T): per filter row the 3 filter vectors and each input column the
 * pixels read are loaded once (stride 1, 4 pixels: 3 + 6 loads for 12 multiply-adds) and the
 * np accumulators stay in registers. */
ISA_ATTR static INLINE void DW_FN(forward_3wide_chunk)(const int64_t *g, const T *restrict x, const T *restrict w,
                                              T *restrict yp, int64_t x0, int64_t c0,
                                              int64_t i_lo, int64_t i_hi, const int sw, const int np) {
    const int64_t W = g[G_W], C = g[G_C], dh = g[G_DH];
    const int L = VEC_BYTES / sizeof(T);         /* lanes per vector */
    VEC acc[PB][NV];
    memset(acc, 0, sizeof acc);
    for (int64_t i = i_lo; i < i_hi; ++i) {
        const T *xr = x + (x0 + i * dh * W * C + c0);
        const T *wr = w + i * 3 * C + c0;
        VEC wv[3][NV];
        for (int j = 0; j < 3; ++j)
            for (int v = 0; v < NV; ++v) wv[j][v] = DW_FN(vload_reg)(wr + j * C + v * L);
        for (int q = 0; q < (np - 1) * sw + 3; ++q)        /* input column q of the block */
            for (int v = 0; v < NV; ++v) {
                const VEC xq = DW_FN(vload_reg)(xr + q * C + v * L);
                for (int p = 0; p < np; ++p) {
                    const int j = q - p * sw;                /* the tap of pixel p reading it */
                    if (j >= 0 && j < 3) acc[p][v] = DW_FN(vfma)(xq, wv[j][v], acc[p][v]);
                }
            }
    }
    for (int p = 0; p < np; ++p)
        for (int v = 0; v < NV; ++v) DW_FN(vstore)(yp + p * C + c0 + v * L, acc[p][v]);
}

ISA_ATTR static INLINE void DW_FN(forward_pixels_3wide)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                               int64_t i_lo, int64_t i_hi, const int sw, const int np) {
    const int64_t C = g[G_C];
    int64_t c0 = 0;
    for (; c0 + VB_T <= C; c0 += VB_T) DW_FN(forward_3wide_chunk)(g, x, w, yp, x0, c0, i_lo, i_hi, sw, np);
    if (np == PB) {
        for (; c0 + VB_TAIL_T <= C; c0 += VB_TAIL_T)
            DW_FN(forward_pixels_chunk)(g, x, w, yp, x0, c0, VB_TAIL_T, i_lo, i_hi, 3, sw, 1);
        for (; c0 < C; ++c0) DW_FN(forward_pixels_chunk)(g, x, w, yp, x0, c0, 1, i_lo, i_hi, 3, sw, 1);
    } else {
        for (int p = 0; p < np; ++p) {          /* the channels left over, pixel by pixel */
            int64_t c = c0;
            for (; c + VB_TAIL_T <= C; c += VB_TAIL_T)
                DW_FN(forward_pixel_chunk)(g, x, w, yp + p * C, x0 + p * sw * C, c, VB_TAIL_T, i_lo, i_hi, 0, 3);
            for (; c < C; ++c) DW_FN(forward_pixel_chunk)(g, x, w, yp + p * C, x0 + p * sw * C, c, 1, i_lo, i_hi, 0, 3);
        }
    }
}

/* The specialisations: 3-wide filters at stride 1 and 2 (MobileNet's), for np = PB pixels or
 * the 1 .. PB-1 left at the end of a row, and any other filter (np = PB only). */
#define DW_3WIDE(sw)                                                                               \
    do {                                                                                           \
        if (np == PB) DW_FN(forward_pixels_3wide)(g, x, w, yp, x0, i_lo, i_hi, sw, PB);            \
        else if (np == 1) DW_FN(forward_pixels_3wide)(g, x, w, yp, x0, i_lo, i_hi, sw, 1);         \
        else if (np == 2) DW_FN(forward_pixels_3wide)(g, x, w, yp, x0, i_lo, i_hi, sw, 2);         \
        else DW_FN(forward_pixels_3wide)(g, x, w, yp, x0, i_lo, i_hi, sw, 3);                      \
    } while (0)

ISA_ATTR static void DW_FN(forward_pixels_3s1)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                      int64_t i_lo, int64_t i_hi, int np) {
    DW_3WIDE(1);
}

ISA_ATTR static void DW_FN(forward_pixels_3s2)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                      int64_t i_lo, int64_t i_hi, int np) {
    DW_3WIDE(2);
}
#undef DW_3WIDE
#define DW_FORWARD_TAILS 1
#else
ISA_ATTR static void DW_FN(forward_pixels_3s1)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                      int64_t i_lo, int64_t i_hi, int np) {
    (void)np;
    DW_FN(forward_pixels_k)(g, x, w, yp, x0, i_lo, i_hi, 3, 1, 1);
}

ISA_ATTR static void DW_FN(forward_pixels_3s2)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                      int64_t i_lo, int64_t i_hi, int np) {
    (void)np;
    DW_FN(forward_pixels_k)(g, x, w, yp, x0, i_lo, i_hi, 3, 2, 1);
}
#define DW_FORWARD_TAILS 0
#endif

ISA_ATTR static void DW_FN(forward_pixels_any)(const int64_t *g, const T *x, const T *w, T *yp, int64_t x0,
                                      int64_t i_lo, int64_t i_hi, int np) {
    (void)np;                                    /* always PB */
    DW_FN(forward_pixels_k)(g, x, w, yp, x0, i_lo, i_hi, g[G_KW], g[G_SW], g[G_DW]);
}

/* The output rows r = n*Ho + oh in [r0, r1). The padding pt, pl may be negative here (the
 * backprop-input of a stride-1 conv runs this with the "full" padding of the rotated filter). */
ISA_ATTR static int DW_FN(depthwise_forward)(const int64_t *g, const T *x, const T *w, T *y,
                                   int64_t r0, int64_t r1) {
    if (!geometry_ok(g, 1)) return -1;
    const int64_t H = g[G_H], W = g[G_W], C = g[G_C], kh = g[G_KH], kw = g[G_KW];
    const int64_t sh = g[G_SH], sw = g[G_SW], dh = g[G_DH], dw = g[G_DW];
    const int64_t pt = g[G_PT], pl = g[G_PL], Ho = g[G_HO], Wo = g[G_WO];
    const int three_wide = kw == 3 && dw == 1 && (sw == 1 || sw == 2);
    void (*pixels)(const int64_t *, const T *, const T *, T *, int64_t, int64_t, int64_t, int) =
        !three_wide ? DW_FN(forward_pixels_any) : sw == 1 ? DW_FN(forward_pixels_3s1) : DW_FN(forward_pixels_3s2);
    const int tails = three_wide && DW_FORWARD_TAILS;   /* blocks of fewer than PB pixels */
    int64_t in_lo, in_hi;                        /* output columns with every tap inside */
    column_interior(pl, sw, (kw - 1) * dw, W, Wo, &in_lo, &in_hi);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / Ho, oh = r % Ho, ih0 = oh * sh - pt;
        int64_t i_lo, i_hi;
        tap_range(ih0, dh, kh, H, &i_lo, &i_hi);
        T *yrow = y + r * Wo * C;
        for (int64_t ow = 0; ow < Wo;) {
            const int64_t iw0 = ow * sw - pl, x0 = ((n * H + ih0) * W + iw0) * C;
            if (ow >= in_lo && ow < in_hi && (tails || in_hi - in_lo >= PB)) {
                if (in_hi - ow >= PB) {
                    pixels(g, x, w, yrow + ow * C, x0, i_lo, i_hi, PB);
                    ow += PB;
                } else if (tails) {              /* the last 1 .. PB-1 interior pixels */
                    pixels(g, x, w, yrow + ow * C, x0, i_lo, i_hi, (int)(in_hi - ow));
                    ow = in_hi;
                } else {
                    /* the last block overlaps the one before rather than leaving up to PB - 1
                     * pixels to the one-pixel loop (they are computed twice, alike) */
                    const int64_t start = in_hi - PB;
                    pixels(g, x, w, yrow + start * C, x0 - (ow - start) * sw * C, i_lo, i_hi, PB);
                    ow = in_hi;
                }
            } else {
                int64_t j_lo, j_hi;
                tap_range(iw0, dw, kw, W, &j_lo, &j_hi);
                DW_FN(forward_pixel)(g, x, w, yrow + ow * C, x0, i_lo, i_hi, j_lo, j_hi);
                ow += 1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Backprop-input, strides > 1 (stride 1 is the forward with the rotated filter, see the caller):
 * dx[n, ih, iw, c] = sum of dy[n, oh, ow, c] * w[i, j, c] over the taps with
 * oh*sh - pt + i*dh = ih and ow*sw - pl + j*dw = iw. Each input pixel gathers from the output
 * pixels it fed, so no two threads ever write the same dx.
 * ------------------------------------------------------------------------------------------- */

/* One input pixel, channels [c0, c0 + width). Its taps: rows tap_i[t] reading dy row tap_row[t]
 * (t < nrows), columns j reading dy column col[j] (skipped where -1). */
ISA_ATTR static INLINE void DW_FN(input_pixel_chunk)(const T *restrict dy, const T *restrict w, T *restrict dxp,
                                            int64_t C, int64_t kw, int64_t c0, const int width,
                                            const int64_t *tap_i, const int64_t *tap_row, int64_t nrows,
                                            const int64_t *col) {
    T acc[VB_T] = {0};
    for (int64_t t = 0; t < nrows; ++t)
        for (int64_t j = 0; j < kw; ++j) {
            if (col[j] < 0) continue;
            const T *restrict dp = dy + (tap_row[t] + col[j]) * C + c0;
            const T *restrict wp = w + (tap_i[t] * kw + j) * C + c0;
            for (int c = 0; c < width; ++c) acc[c] = FMA_T(dp[c], wp[c], acc[c]);
        }
    for (int c = 0; c < width; ++c) dxp[c0 + c] = acc[c];
}

#if DW_HAVE_VECTORS
/* K input pixels of one column phase (dx step sw*C), all with the same nt taps, channels
 * [c0, c0 + VB): pixel k reads dy at dy_off[t] + k*C and the filter at w_off[t]. The nt filter
 * vectors are loaded once and pinned in registers for the whole run. */
ISA_ATTR static INLINE void DW_FN(input_run_chunk)(const T *restrict dy, const T *restrict w, T *restrict dxp,
                                          int64_t C, int64_t c0, int64_t K, int64_t dx_step,
                                          const int64_t *dy_off, const int64_t *w_off, const int nt) {
    const int L = VEC_BYTES / sizeof(T);
    VEC wv[MAX_RUN_TAPS][NV];
    for (int t = 0; t < nt; ++t)
        for (int v = 0; v < NV; ++v) wv[t][v] = DW_FN(vload_reg)(w + w_off[t] + c0 + v * L);
    for (int64_t k = 0; k < K; ++k)
        for (int v = 0; v < NV; ++v) {
            VEC acc;                             /* from +0, as input_pixel_chunk: the same bits */
            memset(&acc, 0, sizeof acc);
            for (int t = 0; t < nt; ++t)
                acc = DW_FN(vfma)(DW_FN(vload)(dy + dy_off[t] + k * C + c0 + v * L), wv[t][v], acc);
            DW_FN(vstore)(dxp + k * dx_step + c0 + v * L, acc);
        }
}

/* Every whole chunk of channels of a run (the caller does the channels left over). */
ISA_ATTR static void DW_FN(input_run)(const T *dy, const T *w, T *dxp, int64_t C, int64_t K, int64_t dx_step,
                             const int64_t *dy_off, const int64_t *w_off, int nt) {
    for (int64_t c0 = 0; c0 + VB_T <= C; c0 += VB_T) {
        switch (nt) {                            /* a constant tap count per copy of the loop */
        case 1: DW_FN(input_run_chunk)(dy, w, dxp, C, c0, K, dx_step, dy_off, w_off, 1); break;
        case 2: DW_FN(input_run_chunk)(dy, w, dxp, C, c0, K, dx_step, dy_off, w_off, 2); break;
        case 3: DW_FN(input_run_chunk)(dy, w, dxp, C, c0, K, dx_step, dy_off, w_off, 3); break;
        default: DW_FN(input_run_chunk)(dy, w, dxp, C, c0, K, dx_step, dy_off, w_off, 4); break;
        }
    }
}
#endif

/* The input rows r = n*H + ih in [r0, r1). `cols` is scratch of W*kw int64 (the caller's).
 * Input columns fall into sw phases (iw % sw); inside the image the pixels of one phase all
 * take the same taps, so (with up to MAX_RUN_TAPS taps) they run as one `input_run` with the
 * filter in registers; the other pixels and channels go pixel by pixel. */
ISA_ATTR static int DW_FN(depthwise_backprop_input)(const int64_t *g, const T *dy, const T *w, T *dx,
                                          int64_t r0, int64_t r1, int64_t *cols) {
    if (!geometry_ok(g, 0) || g[G_KH] > MAX_TAPS_1D) return -1;
    const int64_t H = g[G_H], W = g[G_W], C = g[G_C], kh = g[G_KH], kw = g[G_KW];
    const int64_t sh = g[G_SH], sw = g[G_SW], dh = g[G_DH], dw = g[G_DW];
    const int64_t pt = g[G_PT], pl = g[G_PL], Ho = g[G_HO], Wo = g[G_WO];
    /* cols[iw*kw + j]: the output column ow that tap j of input column iw comes from, or -1.
     * Worked out once per call: the divisions would cost more than the arithmetic per pixel. */
    for (int64_t iw = 0; iw < W; ++iw)
        for (int64_t j = 0; j < kw; ++j) {
            const int64_t b = iw + pl - j * dw;
            cols[iw * kw + j] = (b >= 0 && b % sw == 0 && b / sw < Wo) ? b / sw : -1;
        }
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / H, ih = r % H;
        int64_t tap_i[MAX_TAPS_1D], tap_row[MAX_TAPS_1D], nrows = 0;
        for (int64_t i = 0; i < kh; ++i) {
            const int64_t a = ih + pt - i * dh;
            if (a >= 0 && a % sh == 0 && a / sh < Ho) {
                tap_i[nrows] = i;
                tap_row[nrows++] = (n * Ho + a / sh) * Wo;   /* dy row, in pixels */
            }
        }
        /* run_lo[ph] <= iw <= run_hi[ph]: the pixels of phase ph done by a run (whole chunks) */
        int64_t run_lo[MAX_RUN_PHASES], run_hi[MAX_RUN_PHASES];
        const int64_t nphase = sw <= MAX_RUN_PHASES ? sw : 0;
        for (int64_t ph = 0; ph < nphase; ++ph) {
            run_lo[ph] = 0;
            run_hi[ph] = -1;
#if DW_HAVE_VECTORS
            int64_t jset[MAX_RUN_TAPS], nj = 0, nt;
            for (int64_t j = 0; j < kw; ++j)
                if (floor_div(ph + pl - j * dw, sw) * sw == ph + pl - j * dw) {
                    if (nj == MAX_RUN_TAPS) { nj = 0; break; }
                    jset[nj++] = j;
                }
            nt = nj * nrows;
            if (nt == 0 || nt > MAX_RUN_TAPS || C < VB_T) continue;
            /* pixels of this phase whose every tap j reads an output column in [0, Wo) */
            int64_t lo = max64(0, jset[nj - 1] * dw - pl), hi = min64(W - 1, (Wo - 1) * sw + jset[0] * dw - pl);
            lo = ph + ceil_div(lo - ph, sw) * sw;                             /* first iw >= lo in phase */
            if (lo > hi) continue;
            const int64_t K = (hi - lo) / sw + 1;
            int64_t dy_off[MAX_RUN_TAPS], w_off[MAX_RUN_TAPS], t = 0;
            for (int64_t a = 0; a < nrows; ++a)
                for (int64_t b = 0; b < nj; ++b, ++t) {
                    dy_off[t] = (tap_row[a] + (lo + pl - jset[b] * dw) / sw) * C;
                    w_off[t] = (tap_i[a] * kw + jset[b]) * C;
                }
            DW_FN(input_run)(dy, w, dx + (r * W + lo) * C, C, K, sw * C, dy_off, w_off, (int)nt);
            run_lo[ph] = lo;
            run_hi[ph] = lo + (K - 1) * sw;
#endif
        }
        for (int64_t iw = 0; iw < W; ++iw) {
            T *dxp = dx + (r * W + iw) * C;
            const int64_t *col = cols + iw * kw;
            const int64_t ph = nphase ? iw % sw : 0;
            int64_t c0 = nphase && iw >= run_lo[ph] && iw <= run_hi[ph] ? C / VB_T * VB_T : 0;
            for (; c0 + VB_T <= C; c0 += VB_T)
                DW_FN(input_pixel_chunk)(dy, w, dxp, C, kw, c0, VB_T, tap_i, tap_row, nrows, col);
            for (; c0 + VB_TAIL_T <= C; c0 += VB_TAIL_T)
                DW_FN(input_pixel_chunk)(dy, w, dxp, C, kw, c0, VB_TAIL_T, tap_i, tap_row, nrows, col);
            for (; c0 < C; ++c0)
                DW_FN(input_pixel_chunk)(dy, w, dxp, C, kw, c0, 1, tap_i, tap_row, nrows, col);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Backprop-filter: dw[i, j, c] = sum over n, oh, ow of x[n, oh*sh - pt + i*dh, ow*sw - pl + j*dw, c]
 * * dy[n, oh, ow, c]. Along an output row, `ntaps` (JB, or 1) taps j.. of a filter row share each
 * dy value loaded; their sums stay in registers until the row is done.
 * ------------------------------------------------------------------------------------------- */

/* Taps j0 .. j0 + ntaps - 1 over ow in [ow_lo, ow_hi), channels [c0, c0 + width): adds
 * sum_ow xrow[(ow*sw + off + t*dw) * C + c] * dyrow[ow * C + c] to dwp[t*C + c]. */
ISA_ATTR static INLINE void DW_FN(filter_chunk)(int64_t C, int64_t sw, int64_t dw, const T *restrict xrow,
                                       const T *restrict dyrow, int64_t off, int64_t ow_lo, int64_t ow_hi,
                                       T *restrict dwp, int64_t c0, const int width, const int ntaps) {
    T acc[JB][VB_T] = {{0}};
    for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
        const T *restrict xp = xrow + (ow * sw + off) * C + c0;
        const T *restrict dp = dyrow + ow * C + c0;
        for (int c = 0; c < width; ++c) {
            const T d = dp[c];                           /* loaded once, used ntaps times */
            for (int t = 0; t < ntaps; ++t) acc[t][c] = FMA_T(xp[t * dw * C + c], d, acc[t][c]);
        }
    }
    for (int t = 0; t < ntaps; ++t)
        for (int c = 0; c < width; ++c) dwp[t * C + c0 + c] += acc[t][c];
}

#if DW_HAVE_VECTORS
/* filter_chunk for width VB_T, each dy vector loaded once for the ntaps multiply-adds it feeds. */
ISA_ATTR static INLINE void DW_FN(filter_vec_chunk)(int64_t C, int64_t sw, int64_t dw, const T *restrict xrow,
                                           const T *restrict dyrow, int64_t off, int64_t ow_lo,
                                           int64_t ow_hi, T *restrict dwp, int64_t c0, const int ntaps) {
    const int L = VEC_BYTES / sizeof(T);
    VEC acc[JB][NV];
    memset(acc, 0, sizeof acc);
    for (int64_t ow = ow_lo; ow < ow_hi; ++ow) {
        const T *xp = xrow + (ow * sw + off) * C + c0;
        for (int v = 0; v < NV; ++v) {
            const VEC d = DW_FN(vload_reg)(dyrow + ow * C + c0 + v * L);
            for (int t = 0; t < ntaps; ++t)
                acc[t][v] = DW_FN(vfma)(DW_FN(vload)(xp + t * dw * C + v * L), d, acc[t][v]);
        }
    }
    for (int t = 0; t < ntaps; ++t)
        for (int v = 0; v < NV; ++v) {
            T *out = dwp + t * C + c0 + v * L;
            DW_FN(vstore)(out, DW_FN(vload)(out) + acc[t][v]);
        }
}
#endif

ISA_ATTR static INLINE void DW_FN(filter_taps_k)(int64_t C, int64_t sw, int64_t dw, const T *xrow, const T *dyrow,
                                        int64_t off, int64_t ow_lo, int64_t ow_hi, T *dwp, const int ntaps) {
    if (ow_hi <= ow_lo) return;
    int64_t c0 = 0;
#if DW_HAVE_VECTORS
    for (; c0 + VB_T <= C; c0 += VB_T)
        DW_FN(filter_vec_chunk)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, c0, ntaps);
#endif
    for (; c0 + VB_T <= C; c0 += VB_T)
        DW_FN(filter_chunk)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, c0, VB_T, ntaps);
    for (; c0 + VB_TAIL_T <= C; c0 += VB_TAIL_T)
        DW_FN(filter_chunk)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, c0, VB_TAIL_T, ntaps);
    for (; c0 < C; ++c0) DW_FN(filter_chunk)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, c0, 1, ntaps);
}

ISA_ATTR static void DW_FN(filter_tap)(int64_t C, int64_t sw, int64_t dw, const T *xrow, const T *dyrow,
                              int64_t off, int64_t ow_lo, int64_t ow_hi, T *dwp) {
    DW_FN(filter_taps_k)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, 1);
}

ISA_ATTR static void DW_FN(filter_taps)(int64_t C, int64_t sw, int64_t dw, const T *xrow, const T *dyrow,
                               int64_t off, int64_t ow_lo, int64_t ow_hi, T *dwp) {
    DW_FN(filter_taps_k)(C, sw, dw, xrow, dyrow, off, ow_lo, ow_hi, dwp, JB);
}

/* The output rows r = n*Ho + oh in [r0, r1), added into dw_part (kh, kw, C): the calling
 * thread's own partial sum, zeroed by the caller, which adds the threads' parts up. */
ISA_ATTR static int DW_FN(depthwise_backprop_filter)(const int64_t *g, const T *x, const T *dy, T *dw_part,
                                           int64_t r0, int64_t r1) {
    if (!geometry_ok(g, 0)) return -1;
    const int64_t H = g[G_H], W = g[G_W], C = g[G_C], kh = g[G_KH], kw = g[G_KW];
    const int64_t sh = g[G_SH], sw = g[G_SW], dh = g[G_DH], dw = g[G_DW];
    const int64_t pt = g[G_PT], pl = g[G_PL], Ho = g[G_HO], Wo = g[G_WO];
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / Ho, oh = r % Ho, ih0 = oh * sh - pt;
        int64_t i_lo, i_hi;
        tap_range(ih0, dh, kh, H, &i_lo, &i_hi);
        const T *dyrow = dy + r * Wo * C;
        for (int64_t i = i_lo; i < i_hi; ++i) {
            const T *xrow = x + (n * H + ih0 + i * dh) * W * C;
            int64_t j = 0;
            for (; j + JB <= kw; j += JB) {
                /* columns where all JB taps are inside; the few others tap by tap */
                int64_t blo, bhi;
                column_interior(pl - j * dw, sw, (JB - 1) * dw, W, Wo, &blo, &bhi);
                T *dwp = dw_part + (i * kw + j) * C;
                DW_FN(filter_taps)(C, sw, dw, xrow, dyrow, j * dw - pl, blo, bhi, dwp);
                for (int t = 0; t < JB; ++t) {
                    const int64_t off = (j + t) * dw - pl;
                    int64_t lo, hi;
                    tap_range(off, sw, Wo, W, &lo, &hi);    /* columns ow with tap j+t inside */
                    if (bhi <= blo) {
                        DW_FN(filter_tap)(C, sw, dw, xrow, dyrow, off, lo, hi, dwp + t * C);
                    } else {
                        DW_FN(filter_tap)(C, sw, dw, xrow, dyrow, off, lo, min64(hi, blo), dwp + t * C);
                        DW_FN(filter_tap)(C, sw, dw, xrow, dyrow, off, max64(lo, bhi), hi, dwp + t * C);
                    }
                }
            }
            for (; j < kw; ++j) {
                const int64_t off = j * dw - pl;
                int64_t lo, hi;
                tap_range(off, sw, Wo, W, &lo, &hi);
                DW_FN(filter_tap)(C, sw, dw, xrow, dyrow, off, lo, hi, dw_part + (i * kw + j) * C);
            }
        }
    }
    return 0;
}

#undef DW_CAT2
#undef DW_CAT
#undef DW_FN
#undef VEC
#undef NV
#undef VB_T
#undef VB_TAIL_T
#undef DW_FORWARD_TAILS
