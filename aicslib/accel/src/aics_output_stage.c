/* The output stage of fused contractions in one pass: bias or inference batch norm, then
 * the activation, on a block of a Conv2D / MatMul output while it is in cache.
 *
 * aicslib/kernels/fused_eigen_output_kernels.py does the same with NumPy: three or four
 * calls, each a pass over the block. Here each element is read and written once, with the
 * NumPy steps' exact results (aics_output_stage.h says how), whatever the instruction set
 * (aics_isa.h).
 */
#include "aics_output_stage.h"

AICS_DEFINE_ISA_SELECTION(aics_output_stage)

#define output_stage_f32_body output_stage_rows
#define OUTPUT_STAGE_PARAMS (float *y, int64_t rows, int64_t c, int64_t ldy, int stage, const float *restrict a, \
                             const float *restrict s, const float *restrict b, int activation)
AICS_EXPORT_DISPATCHED(int, aics_output_stage_f32, output_stage_f32, OUTPUT_STAGE_PARAMS,
                       (y, rows, c, ldy, stage, a, s, b, activation))
