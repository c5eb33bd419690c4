/* MaxPoolGrad in one pass: each window's gradient goes to its first maximum (TF's CPU rule).
 *
 * aicslib/kernels/pooling_ops.py computes the same with NumPy, one masked copy per window tap
 * over strided views; NumPy's masked copies and np.where run element by element there (the
 * slowest kernel of a small CNN's training step: benchmarks/README.md, "MaxPoolGrad").
 * Here each output pixel's window is visited once, a chunk of channels at a time.
 *
 * The answers are the NumPy kernel's: a tap "hits" where the input equals the pooled
 * output and no earlier tap (row-major) has hit; taps in the padding read -inf, as the forward's
 * padding does, and a hit there sends the gradient nowhere (it is cropped away). NaN never equals
 * anything, so a window whose maximum is NaN passes no gradient. Windows that do not overlap copy
 * their gradients (bit for bit NumPy's: -0.0 stays -0.0); overlapping windows add theirs to +0.0,
 * window by window as TF's CPU kernel does (NumPy adds them tap by tap: sums of three or more
 * may round differently).
 *
 * x, dx: N x H x W x C; y, g: N x Ho x Wo x C; all contiguous. dx must hold zeros on entry.
 * Images n0 .. n1-1 are done (threads split the batch). Compares and copies only: every
 * instruction set (aics_isa.h) gives the same bits.
 */
#include <math.h>
#include <stdint.h>

#include "aics_isa.h"

#define CB 64

AICS_DEFINE_ISA_SELECTION(aics_pooling)

#define POOL_PARAMS (const float *x, const float *y, const float *g, float *dx, int64_t H, int64_t W, \
                     int64_t C, int64_t Ho, int64_t Wo, int64_t kh, int64_t kw, int64_t sh, int64_t sw, \
                     int64_t pt, int64_t pl, int64_t n0, int64_t n1)
#define POOL_ARGS (x, y, g, dx, H, W, C, Ho, Wo, kh, kw, sh, sw, pt, pl, n0, n1)

static AICS_INLINE int max_pool_grad_f32_body POOL_PARAMS {
    if (C < 0 || kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0) return -1;
    unsigned char taken[CB];
    const int overlapping = sh < kh || sw < kw;
    for (int64_t n = n0; n < n1; ++n)
        for (int64_t oh = 0; oh < Ho; ++oh)
            for (int64_t ow = 0; ow < Wo; ++ow) {
                const float *yp = y + ((n * Ho + oh) * Wo + ow) * C;
                const float *gp = g + ((n * Ho + oh) * Wo + ow) * C;
                for (int64_t c0 = 0; c0 < C; c0 += CB) {
                    const int64_t cb = C - c0 < CB ? C - c0 : CB;
                    for (int64_t c = 0; c < cb; ++c) taken[c] = 0;
                    for (int64_t i = 0; i < kh; ++i) {
                        const int64_t h = oh * sh + i - pt;
                        for (int64_t j = 0; j < kw; ++j) {
                            const int64_t w = ow * sw + j - pl;
                            if (h < 0 || h >= H || w < 0 || w >= W) {      /* padding: -inf */
                                for (int64_t c = 0; c < cb; ++c)
                                    taken[c] |= (unsigned char)(yp[c0 + c] == -INFINITY);
                                continue;
                            }
                            const float *xp = x + ((n * H + h) * W + w) * C + c0;
                            float *dp = dx + ((n * H + h) * W + w) * C + c0;
                            if (overlapping)
                                for (int64_t c = 0; c < cb; ++c) {
                                    const unsigned char hit = (unsigned char)(xp[c] == yp[c0 + c]) & (unsigned char)!taken[c];
                                    dp[c] += hit ? gp[c0 + c] : 0.0f;
                                    taken[c] |= hit;
                                }
                            else                /* one window per pixel: the gradient is copied, -0.0 too */
                                for (int64_t c = 0; c < cb; ++c) {
                                    const unsigned char hit = (unsigned char)(xp[c] == yp[c0 + c]) & (unsigned char)!taken[c];
                                    dp[c] = hit ? gp[c0 + c] : dp[c];
                                    taken[c] |= hit;
                                }
                        }
                    }
                }
            }
    return 0;
}

AICS_EXPORT_DISPATCHED(int, aics_max_pool_grad_f32, max_pool_grad_f32, POOL_PARAMS, POOL_ARGS)
