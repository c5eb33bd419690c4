"""TensorFlow's random number generator, so that seeded programs draw TF's numbers.

TF's random kernels (core/kernels/random_op.cc) draw from Philox4x32-10
(lib/random/philox_random.h), a counter-based generator: the 64-bit ``seed``
is the key, ``seed2`` the upper half of a 128-bit counter, and output number
``i`` is ten rounds of multiply-and-xor applied to counter ``base + i``. So any
output can be computed directly, which here means all at once with NumPy.
The distributions (lib/random/random_distributions.h) then turn each output
(four uint32) into numbers: a uniform float takes 23 random mantissa bits, a
normal pair comes from Box-Muller on two uint32, a truncated normal keeps the
Box-Muller values inside two standard deviations.

One kernel keeps one ``PhiloxStream``: each run reserves ``256 * n`` outputs for
its ``n`` numbers (TF's ``ReserveRandomOutputs(n, 256)``), so the next run (or the
next eager call with the same seeds) continues where TF's would.
"""
import os

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = 0xFFFFFFFF
_LOW32 = np.uint64(_MASK32)
_SHIFT32 = np.uint64(32)


def _u64(value):
    """A (possibly negative) int64 seed as TF's uint64 cast sees it."""
    return int(value) & 0xFFFFFFFFFFFFFFFF


class PhiloxStream:
    """A Philox generator's key and 128-bit counter (TF's ``GuardedPhiloxRandom``)."""

    def __init__(self, seed, seed2):
        if seed == 0 and seed2 == 0:  # unseeded: random seeds, as TF's random::New64()
            seed, seed2 = (int.from_bytes(os.urandom(8), "little") for _ in range(2))
        seed, seed2 = _u64(seed), _u64(seed2)
        self.key = (seed & _MASK32, seed >> 32)
        self.counter = seed2 << 64  # counter words 2 and 3; words 0 and 1 start at 0

    def reserve(self, count):
        """The counter to draw ``count`` outputs from; the stream moves past them."""
        start = self.counter
        self.counter = (self.counter + count) % (1 << 128)
        return start


def philox(key, start, n):
    """Outputs ``start .. start + n - 1`` of the generator with ``key``: uint32 array ``[n, 4]``."""
    return philox_at(key, start, np.arange(n, dtype=np.uint64))


def philox_at(key, start, offsets):
    """Outputs number ``start + offsets`` (a uint64 array): ten Philox rounds on each counter."""
    base = np.uint64(start & 0xFFFFFFFFFFFFFFFF)
    lo64 = base + offsets  # wraps modulo 2**64: the carry goes into the high words
    hi64 = np.uint64((start >> 64) & 0xFFFFFFFFFFFFFFFF) + (lo64 < base).astype(np.uint64)
    c0, c1 = lo64 & _LOW32, lo64 >> _SHIFT32
    c2, c3 = hi64 & _LOW32, hi64 >> _SHIFT32
    k0, k1 = key
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        n0 = (p1 >> _SHIFT32) ^ c1 ^ np.uint64(k0)
        n2 = (p0 >> _SHIFT32) ^ c3 ^ np.uint64(k1)
        c0, c1, c2, c3 = n0, p1 & _LOW32, n2, p0 & _LOW32
        k0, k1 = (k0 + _W0) & _MASK32, (k1 + _W1) & _MASK32
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def uint32_to_float(x):
    """[0, 1) from 23 random mantissa bits: 1.mantissa - 1, as TF's Uint32ToFloat."""
    return ((x & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)


def uint64_to_double(x0, x1):
    man = ((x0 & np.uint32(0xFFFFF)).astype(np.uint64) << _SHIFT32) | x1.astype(np.uint64)
    return (man | np.uint64(1023 << 52)).view(np.float64) - 1.0


def box_muller_float(x0, x1):
    """Two float32 normals from two uint32 arrays (TF's BoxMullerFloat)."""
    u1 = np.maximum(uint32_to_float(x0), np.float32(1.0e-7))
    # 2.0f * M_PI is a double product, rounded to float when stored in v1
    v1 = (2.0 * np.pi * uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    # logf, sinf and cosf rounded from double: glibc's are (nearly always) correctly rounded,
    # NumPy's float32 loops may differ from them in the last bit
    u2 = np.sqrt(np.float32(-2.0) * np.log(u1.astype(np.float64)).astype(np.float32))
    v = v1.astype(np.float64)
    return np.sin(v).astype(np.float32) * u2, np.cos(v).astype(np.float32) * u2


def box_muller_double(x0, x1, x2, x3):
    u1 = np.maximum(uint64_to_double(x0, x1), 1.0e-7)
    v1 = 2 * np.pi * uint64_to_double(x2, x3)
    u2 = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


def _groups(stream, size, per_group):
    """The uint32 outputs of the ``ceil(size / per_group)`` groups of one fixed-cost draw."""
    start = stream.reserve(size * 256)
    return philox(stream.key, start, -(-size // per_group))


def uniform(stream, size, dtype):
    """``size`` numbers in [0, 1) of ``dtype`` (float16, bfloat16, float32, float64)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        s = _groups(stream, size, 2)
        out = uint64_to_double(s[:, [0, 2]], s[:, [1, 3]])
    elif dtype.itemsize == 2:  # half or bfloat16: 1.mantissa - 1 from the low 16 bits
        s = _groups(stream, size, 4) & np.uint32(0xFFFF)
        if dtype == np.float16:
            bits = ((s & np.uint32(0x3FF)) | np.uint32(15 << 10)).astype(np.uint16)
            out = bits.view(np.float16) - np.float16(1.0)
        else:
            f32 = (((s & np.uint32(0x7F)) | np.uint32(127 << 7)) << np.uint32(16)).view(np.float32)
            out = (f32 - np.float32(1.0)).astype(dtype)
    else:
        out = uint32_to_float(_groups(stream, size, 4)).astype(dtype, copy=False)
    return out.reshape(-1)[:size]


def normal(stream, size, dtype):
    """``size`` standard normals of ``dtype`` (float16/bfloat16 are float32 draws rounded)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        s = _groups(stream, size, 2)
        f0, f1 = box_muller_double(s[:, 0], s[:, 1], s[:, 2], s[:, 3])
        out = np.stack([f0, f1], axis=1)
    else:
        s = _groups(stream, size, 4)
        a0, a1 = box_muller_float(s[:, 0], s[:, 1])
        b0, b1 = box_muller_float(s[:, 2], s[:, 3])
        out = np.stack([a0, a1, b0, b1], axis=1).astype(dtype, copy=False)
    return out.reshape(-1)[:size]


def truncated_normal(stream, size, dtype):
    """``size`` standard normals inside (-2, 2). Group ``g`` of 4 numbers (2 for float64) reads
    Box-Muller values from its own stretch of outputs (``256`` per number, from ``g`` times
    that), in order, keeping those inside, as TF's TruncatedNormalDistribution."""
    dtype = np.dtype(dtype)
    per_group = 2 if dtype == np.float64 else 4
    n_groups = -(-size // per_group)
    start = stream.reserve(size * 256)
    stretch = np.uint64(per_group * 256 // 4)
    out = np.empty((n_groups, per_group), np.float64 if dtype == np.float64 else np.float32)
    todo = np.arange(n_groups, dtype=np.uint64)
    calls = 2  # Philox outputs tried per group first: enough for almost every group
    while todo.size:
        offsets = (todo[:, None] * stretch + np.arange(calls, dtype=np.uint64)[None, :]).reshape(-1)
        words = philox_at(stream.key, start, offsets).reshape(todo.size, -1)
        if dtype == np.float64:
            d0, d1 = box_muller_double(words[:, 0::4], words[:, 1::4], words[:, 2::4], words[:, 3::4])
        else:
            d0, d1 = box_muller_float(words[:, 0::2], words[:, 1::2])
        cand = np.stack([d0, d1], axis=2).reshape(todo.size, -1)
        keep = np.abs(cand) < 2.0
        rank = np.cumsum(keep, axis=1)
        done = rank[:, -1] >= per_group
        first = keep & (rank <= per_group) & done[:, None]  # each finished row's first values
        out[todo[done].astype(np.int64)] = cand[first].reshape(-1, per_group)
        todo = todo[~done]
        calls *= 2  # the rest read further into their stretch (the prefix is the same)
    return out.reshape(-1)[:size].astype(dtype, copy=False)


def uniform_int(stream, size, lo, hi, dtype):
    """``size`` integers in [lo, hi): ``lo + bits % (hi - lo)`` (32 bits for int32, 64 for int64)."""
    dtype = np.dtype(dtype)
    span = int(hi) - int(lo)
    if dtype == np.int64:
        s = _groups(stream, size, 2)
        bits = s[:, [0, 2]].astype(np.uint64) | (s[:, [1, 3]].astype(np.uint64) << _SHIFT32)
        vals = (bits % np.uint64(span)).astype(object) + int(lo)
    else:
        s = _groups(stream, size, 4)
        vals = (s.astype(np.uint64) % np.uint64(span)).astype(object) + int(lo)
    return np.asarray(vals.reshape(-1)[:size].tolist(), dtype=dtype)


def shuffle_permutation(stream, n):
    """The order TF's RandomShuffle gives ``n`` rows: a Fisher-Yates pass with ``x % (n - i)``."""
    perm = np.arange(n)
    if n < 2:
        return perm
    start = stream.reserve((n - 1 + 3) // 4)
    draws = philox(stream.key, start, (n - 1 + 3) // 4).reshape(-1)[:n - 1].astype(np.uint64)
    for i in range(n - 1):
        j = i + int(draws[i] % np.uint64(n - i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm
