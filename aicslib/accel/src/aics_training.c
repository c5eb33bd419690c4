/* ResourceApplyMomentum in one pass: each element of the variable and its accumulator is read
 * and written once.
 *
 * aicslib/kernels/training_ops.py updates with NumPy, one call per step (accum *= momentum,
 * accum += grad, var -= accum * lr: four passes over the arrays and a temporary); for the MNIST
 * MLP's 784x300 weights that is the largest kernel of the step after the two big products
 * (benchmarks/README.md, "Momentum in one pass").
 *
 * The answers are the NumPy kernel's, bit for bit: the same float operations in the same order,
 * each rounded to float (-ffp-contract=off: no fused multiply-add), so every instruction set
 * (aics_isa.h) gives the same bits too.
 *   accum = accum * momentum + grad
 *   var  -= accum * lr                                         (nesterov = 0)
 *   var  -= grad * lr + accum * (momentum * lr)                (nesterov = 1)
 * var, accum, grad: n contiguous floats.
 */
#include <stdint.h>

#include "aics_isa.h"

AICS_DEFINE_ISA_SELECTION(aics_training)

static AICS_INLINE int apply_momentum_body(float *restrict var, float *restrict accum, const float *restrict grad,
                                           float lr, float momentum, int64_t n, int nesterov) {
    if (n < 0) return 1;
    if (nesterov) {
        const float momentum_lr = momentum * lr;
        for (int64_t i = 0; i < n; ++i) {
            const float a = accum[i] * momentum + grad[i];
            accum[i] = a;
            var[i] = var[i] - (grad[i] * lr + a * momentum_lr);
        }
    } else {
        for (int64_t i = 0; i < n; ++i) {
            const float a = accum[i] * momentum + grad[i];
            accum[i] = a;
            var[i] = var[i] - a * lr;
        }
    }
    return 0;
}

#define MOMENTUM_PARAMS (float *restrict var, float *restrict accum, const float *restrict grad, float lr, \
                         float momentum, int64_t n, int nesterov)
AICS_EXPORT_DISPATCHED(int, aics_apply_momentum_f32, apply_momentum, MOMENTUM_PARAMS,
                       (var, accum, grad, lr, momentum, n, nesterov))
