"""The speed layer's MatMul (aicslib/accel/matmul.py): for two float matrices it takes a short
path to the same GEMM (np.matmul for large outputs); every other case goes through the
reference's steps. Either way the result is the reference kernel's, bit for bit, and so are
the errors."""
import numpy as np
import pytest

from aicslib.accel import matmul as fast
from aicslib.framework.errors import InvalidArgumentError
from aicslib.kernels import matmul_op as reference


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
# the third in the one-thread band; the last with an output past MATMUL_FROM (np.matmul, not np.dot)
@pytest.mark.parametrize("m, k, n", [(3, 5, 2), (128, 100, 10), (64, 128, 96), (256, 64, 160)])
def test_same_bits_as_the_reference(dtype, transpose_a, transpose_b, m, k, n):
    rng = np.random.default_rng(m * k + n)
    a = (rng.standard_normal((k, m) if transpose_a else (m, k)) * 4).astype(dtype)
    b = (rng.standard_normal((n, k) if transpose_b else (k, n)) * 4).astype(dtype)
    got = fast.matmul_kernel(a, b, transpose_a, transpose_b)
    want = reference._matmul(a, b, transpose_a, transpose_b)
    assert got.dtype == want.dtype and got.shape == (m, n)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("a, b, message", [
    (np.float32(2), np.ones((2, 2), np.float32), "In\\[0\\] ndims must be >= 2: 0"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2), np.float32), "In\\[0\\] ndims must be == 2: 3"),
    (np.ones((2, 3), np.float32), np.ones((2, 3), np.float32), "Matrix size-incompatible"),
])
def test_same_errors_as_the_reference(a, b, message):
    for kernel in (fast.matmul_kernel, reference._matmul):
        with pytest.raises(InvalidArgumentError, match=message):
            kernel(np.asarray(a), np.asarray(b))
