"""DTypes: names, NumPy storage, numeric limits, as_dtype, cast, bfloat16 and float16 rounding.

References: NumPy's finfo/iinfo, TensorFlow's documented dtype table, and an
independent bfloat16 rounding written here from the format's definition
(8 significant bits, float32's exponent range, round half to even).
"""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

import aicslib as aics


# ---------------------------------------------------------------------------
# An independent bfloat16 reference: round a float32 to 8 significant bits.

def bf16_reference(x):
    """Nearest bfloat16 to the float32 value ``x`` (ties to even), as a Python float.

    Written from the format: 1 sign bit, 8 exponent bits (float32's range),
    7 stored mantissa bits, i.e. 8 significant bits for normal numbers and a
    fixed spacing of 2**-133 for subnormals. Not derived from the library's
    bit trick.
    """
    x = float(np.float32(x))
    if math.isnan(x) or math.isinf(x) or x == 0.0:
        return x
    _, e = math.frexp(x)            # x = m * 2**e, 0.5 <= |m| < 1
    quantum = 2.0 ** max(e - 8, -133)
    r = round(x / quantum) * quantum  # Python's round() on a float is half-to-even
    if abs(r) >= 2.0 ** 128:        # past the largest finite bfloat16
        return math.copysign(math.inf, x)
    return r


def _bits_to_f32(bits):
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


class TestBfloat16Reference:
    """Sanity of the reference itself on hand-computed cases."""

    def test_hand_cases(self):
        assert bf16_reference(1.0) == 1.0
        assert bf16_reference(1 + 2 ** -8) == 1.0               # exact tie: even (1.0) wins
        assert bf16_reference(1 + 3 * 2 ** -8) == 1 + 2 ** -6   # tie: rounds up to even mantissa
        assert bf16_reference(1 + 2 ** -8 + 2 ** -20) == 1 + 2 ** -7
        assert bf16_reference(_bits_to_f32(0x7F7F0000)) == (2 - 2 ** -7) * 2.0 ** 127
        assert bf16_reference(_bits_to_f32(0x7F7F8000)) == math.inf   # tie with the next (even) pattern 0x7F80 = inf
        assert bf16_reference(2.0 ** -133) == 2.0 ** -133              # smallest subnormal kept
        assert bf16_reference(2.0 ** -135) == 0.0                      # below half the spacing


# ---------------------------------------------------------------------------

class TestDTypeProperties:
    @pytest.mark.parametrize("dt,name,np_type", [
        (aics.float16, "float16", np.float16), (aics.bfloat16, "bfloat16", ml_dtypes.bfloat16),
        (aics.float32, "float32", np.float32), (aics.float64, "float64", np.float64),
        (aics.int8, "int8", np.int8), (aics.int16, "int16", np.int16),
        (aics.int32, "int32", np.int32), (aics.int64, "int64", np.int64),
        (aics.uint8, "uint8", np.uint8), (aics.bool, "bool", np.bool_)])
    def test_name_and_numpy_type(self, dt, name, np_type):
        assert dt.name == name
        assert dt.as_numpy_dtype is np_type

    @pytest.mark.parametrize("dt", [aics.float16, aics.bfloat16, aics.float32, aics.float64])
    def test_floating(self, dt):
        assert dt.is_floating

    @pytest.mark.parametrize("dt", [aics.int8, aics.int16, aics.int32, aics.int64, aics.uint8, aics.bool])
    def test_not_floating(self, dt):
        assert not dt.is_floating

    @pytest.mark.parametrize("dt,np_type", [(aics.float16, np.float16), (aics.float32, np.float32),
                                            (aics.float64, np.float64)])
    def test_float_limits_match_finfo(self, dt, np_type):
        assert dt.max == float(np.finfo(np_type).max)
        assert dt.min == float(np.finfo(np_type).min)

    @pytest.mark.parametrize("dt,np_type", [(aics.int8, np.int8), (aics.int16, np.int16),
                                            (aics.int32, np.int32), (aics.int64, np.int64),
                                            (aics.uint8, np.uint8)])
    def test_int_limits_match_iinfo(self, dt, np_type):
        assert dt.max == int(np.iinfo(np_type).max)
        assert dt.min == int(np.iinfo(np_type).min)

    def test_bfloat16_limits(self):
        # Largest finite bfloat16: (2 - 2**-7) * 2**127 (bits 0x7F7F).
        assert aics.bfloat16.max == (2 - 2 ** -7) * 2.0 ** 127
        assert aics.bfloat16.max == _bits_to_f32(0x7F7F0000)
        assert aics.bfloat16.min == -aics.bfloat16.max

    def test_half_and_double_aliases(self):
        assert aics.half is aics.float16
        assert aics.double is aics.float64

    def test_bool_limits(self):
        assert aics.bool.max is True and aics.bool.min is False


class TestAsDtype:
    @pytest.mark.parametrize("value,expected", [
        ("float32", aics.float32), ("float", aics.float32), ("DT_FLOAT", aics.float32),
        ("half", aics.float16), ("double", aics.float64), ("bfloat16", aics.bfloat16),
        (np.float32, aics.float32), (np.dtype("int64"), aics.int64), (np.bool_, aics.bool),
        (np.uint8, aics.uint8), (1, aics.float32), (3, aics.int32), (14, aics.bfloat16)])
    def test_accepts_names_numpy_and_enums(self, value, expected):
        assert aics.as_dtype(value) == expected

    def test_identity_on_dtype(self):
        assert aics.as_dtype(aics.int16) is aics.int16

    @pytest.mark.parametrize("bad", ["float33", "tensor", 9999, object()])
    def test_rejects_unknown(self, bad):
        with pytest.raises(TypeError):
            aics.as_dtype(bad)

    def test_equality_with_strings_and_hash(self):
        assert aics.float32 == "float32"
        assert aics.float32 != aics.float64
        assert len({aics.float32, aics.as_dtype("float"), aics.as_dtype(np.float32)}) == 1


class TestCast:
    def test_float_to_int_truncates_toward_zero(self):
        # TF documents tf.cast([1.8, 2.2, -1.7], tf.int32) == [1, 2, -1].
        x = np.array([1.8, 2.2, -1.7, -0.5], np.float32)
        got = aics.cast(x, aics.int32)
        assert got.dtype == aics.int32
        np.testing.assert_array_equal(got.numpy(), [1, 2, -1, 0])

    def test_to_bool_and_back(self):
        got = aics.cast(np.array([0.0, 2.5, -1.0], np.float32), aics.bool)
        np.testing.assert_array_equal(got.numpy(), [False, True, True])
        back = aics.cast(got, aics.float32)
        np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 1.0])

    def test_int_widening(self):
        got = aics.cast(np.array([-128, 127], np.int8), aics.int64)
        assert got.numpy().dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), [-128, 127])

    def test_cast_in_graph(self):
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float64, [3])
            y = aics.cast(p, aics.int32)
            assert y.dtype == aics.int32
            with aics.Session() as s:
                np.testing.assert_array_equal(s.run(y, {p: [2.9, -2.9, 0.1]}), [2, -2, 0])

    @given(st.lists(st.floats(-1e4, 1e4, allow_nan=False, width=32), min_size=1, max_size=20))
    def test_float16_cast_matches_numpy(self, values):
        x = np.array(values, np.float32)
        got = aics.cast(x, aics.float16).numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, x.astype(np.float16))


class TestBfloat16Rounding:
    """bfloat16 is stored as ml_dtypes' 2-byte bfloat16, rounded RNE to 8 significant bits."""

    @given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=30))
    def test_cast_matches_reference(self, values):
        x = np.array(values, np.float32)
        got = aics.cast(x, aics.bfloat16)
        assert got.dtype == aics.bfloat16
        arr = got.numpy()
        assert arr.dtype == ml_dtypes.bfloat16 and arr.itemsize == 2
        expected = [bf16_reference(v) for v in x]
        np.testing.assert_array_equal(arr.astype(np.float64), np.array(expected, np.float64))

    @given(st.integers(0, 2 ** 32 - 1))
    def test_every_bit_pattern_matches_reference(self, bits):
        x = _bits_to_f32(bits)
        got = float(aics.cast(np.array([x], np.float32), aics.bfloat16).numpy()[0])
        ref = bf16_reference(x)
        if math.isnan(ref):
            assert math.isnan(got)
        else:
            assert got == ref

    def test_ties_to_even_explicit(self):
        x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 2 ** -130 + 2 ** -134], np.float32)
        got = aics.cast(x, aics.bfloat16).numpy()
        np.testing.assert_array_equal(got, np.array([1.0, 1 + 2 ** -6, -1.0, 2 ** -130], np.float32))

    def test_overflow_to_inf_and_nan_kept(self):
        x = np.array([3.4e38, -3.4e38, np.nan, np.inf], np.float32)
        got = aics.cast(x, aics.bfloat16).numpy()
        assert got[0] == np.inf and got[1] == -np.inf
        assert np.isnan(got[2]) and got[3] == np.inf

    def test_results_of_bfloat16_ops_are_rounded(self):
        a = aics.constant([1.0, 3.0], dtype=aics.bfloat16)
        b = aics.constant([2 ** -8, 3 * 2 ** -8], dtype=aics.bfloat16)  # exactly representable
        got = (a + b).numpy()
        expected = [bf16_reference(1 + 2 ** -8), bf16_reference(3 + 3 * 2 ** -8)]
        np.testing.assert_array_equal(got, np.array(expected, np.float32))
        assert got[0] == 1.0  # 1 + 2**-8 is a tie that rounds to 1.0

    def test_graph_bfloat16_ops_are_rounded(self):
        with aics.Graph().as_default():
            p = aics.placeholder(aics.float32, [2])
            y = aics.cast(p, aics.bfloat16) * aics.constant(1.0 + 2 ** -7, dtype=aics.bfloat16)
            with aics.Session() as s:
                got = s.run(y, {p: [1.0, 1.0 + 2 ** -7]})
        x = np.array([1.0, 1.0 + 2 ** -7]) * (1.0 + 2 ** -7)
        np.testing.assert_array_equal(got, np.array([bf16_reference(v) for v in x], np.float32))

    def test_constant_of_bfloat16_is_rounded(self):
        c = aics.constant([1.00390625, 1.01171875], dtype=aics.bfloat16)
        np.testing.assert_array_equal(c.numpy(), [bf16_reference(1.00390625), bf16_reference(1.01171875)])

    def test_size_is_two_bytes(self):
        assert aics.bfloat16.size == 2
        assert aics.float16.size == 2
        assert aics.float32.size == 4


class TestFloat16:
    def test_arithmetic_in_float16(self):
        a = np.array([1000.0, 0.1, 65504.0], np.float16)
        b = np.array([0.5, 0.2, 1.0], np.float16)
        got = aics.add(a, b)
        assert got.dtype == aics.float16
        np.testing.assert_array_equal(got.numpy(), a + b)

    @pytest.mark.filterwarnings("ignore:overflow")
    def test_overflow_to_inf(self):
        a = np.array([65504.0], np.float16)
        got = aics.multiply(a, np.array([2.0], np.float16)).numpy()
        assert got.dtype == np.float16 and np.isinf(got[0])
