/* The output stage of fused contractions (bias or inference batch norm, then the activation),
 * shared by aics_output_stage.c (a block of a Conv2D / MatMul output) and aics_winograd.c
 * (each tile's pixels as its output transform writes them).
 *
 * The results are bit-identical to the NumPy steps (and so to the unfused kernels): the same
 * float operations in the same order, each rounded to float (every accel file is compiled with
 * -ffp-contract=off, so (y - mean) * scale + offset is not turned into a fused multiply-add),
 * and the activations keep NumPy's answers for NaN and -0.0:
 *   np.maximum(y, 0): NaN stays NaN, -0.0 becomes +0.0;
 *   np.clip(y, 0, 6): NaN stays NaN, -0.0 stays -0.0.
 *
 * y is rows x c with rows ldy floats apart; the per-channel vectors have c entries.
 */
#ifndef AICS_OUTPUT_STAGE_H
#define AICS_OUTPUT_STAGE_H
#include <stdint.h>

#include "aics_isa.h"

enum { STAGE_BIAS = 0, STAGE_BATCH_NORM = 1 };
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU6 = 2 };

static AICS_INLINE float activate(float v, int activation) {
    if (activation == ACT_RELU) return (v > 0.0f || v != v) ? v : 0.0f;
    if (activation == ACT_RELU6) return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    return v;
}

/* Written out per (stage, activation) so that each inner loop has no branches and vectorizes. */
#define ROWS_LOOP(EXPR, ACT)                                              \
    for (int64_t r = 0; r < rows; ++r) {                                  \
        float *restrict row = y + r * ldy;                                \
        for (int64_t j = 0; j < c; ++j) row[j] = activate((EXPR), (ACT)); \
    }

#define BIAS_EXPR (row[j] + a[j])
#define BATCH_NORM_EXPR (((row[j] - a[j]) * s[j]) + b[j])

static AICS_INLINE int output_stage_rows(float *y, int64_t rows, int64_t c, int64_t ldy, int stage,
                                    const float *restrict a, const float *restrict s,
                                    const float *restrict b, int activation) {
    if (rows < 0 || c < 0 || ldy < c) return -1;
    if (activation < ACT_NONE || activation > ACT_RELU6) return -2;
    if (stage == STAGE_BIAS) {
        switch (activation) {
            case ACT_NONE: ROWS_LOOP(BIAS_EXPR, ACT_NONE) break;
            case ACT_RELU: ROWS_LOOP(BIAS_EXPR, ACT_RELU) break;
            default: ROWS_LOOP(BIAS_EXPR, ACT_RELU6) break;
        }
    } else if (stage == STAGE_BATCH_NORM) {
        if (s == 0 || b == 0) return -3;
        switch (activation) {
            case ACT_NONE: ROWS_LOOP(BATCH_NORM_EXPR, ACT_NONE) break;
            case ACT_RELU: ROWS_LOOP(BATCH_NORM_EXPR, ACT_RELU) break;
            default: ROWS_LOOP(BATCH_NORM_EXPR, ACT_RELU6) break;
        }
    } else {
        return -3;
    }
    return 0;
}

#endif
