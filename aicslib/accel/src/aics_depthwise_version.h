/* The depthwise kernels of one instruction-set version, for float32 and float64: included by
 * aics_depthwise.c once per version with ISA (its name), ISA_ATTR (its target attribute) and
 * VEC_BYTES (its vector register), which this file undefines at its end.
 *
 * Every multiply-add is a fused one, rounded once, in every version (aics_isa.h): FMA_T for a T,
 * VFMA for a vector of them where the version has the instruction; the baseline's vectors do
 * FMA_T lane by lane (libm's fmaf / fma on an x86-64 without FMA: the same bits, slowly).
 */
#if AICS_X86 && VEC_BYTES == 64
#define PIN_IN_REGISTER(v) __asm__("" : "+v"(v))
#define VFMA_F32(a, b, c) ((VEC)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define VFMA_F64(a, b, c) ((VEC)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#elif AICS_X86 && VEC_BYTES == 32
#define PIN_IN_REGISTER(v) __asm__("" : "+x"(v))
#define VFMA_F32(a, b, c) ((VEC)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define VFMA_F64(a, b, c) ((VEC)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#elif AICS_X86
#define PIN_IN_REGISTER(v) __asm__("" : "+x"(v))
#else
#define PIN_IN_REGISTER(v) ((void)0)
#endif

#define T float
#define SUFFIX f32
#define FMA_T __builtin_fmaf
#ifdef VFMA_F32
#define VFMA VFMA_F32
#endif
#include "aics_depthwise_impl.h"
#undef T
#undef SUFFIX
#undef FMA_T
#undef VFMA

#define T double
#define SUFFIX f64
#define FMA_T __builtin_fma
#ifdef VFMA_F64
#define VFMA VFMA_F64
#endif
#include "aics_depthwise_impl.h"
#undef T
#undef SUFFIX
#undef FMA_T
#undef VFMA

#undef VFMA_F32
#undef VFMA_F64
#undef PIN_IN_REGISTER
#undef ISA
#undef ISA_ATTR
#undef VEC_BYTES
