"""The fused elementwise kernel's output shape (kernels/cwise_ops_fused.output_shape), cached per
input shapes: the cache gives NumPy's broadcast shape and never remembers a refusal."""
import numpy as np
import pytest

from aicslib.framework.errors import InvalidArgumentError
from aicslib.kernels.cwise_ops_fused import output_shape


def test_output_shape_is_numpys_broadcast_and_refusals_repeat():
    a, b = np.zeros((4, 1, 3)), np.zeros((5, 1))
    assert output_shape([a, b]) == np.broadcast_shapes(a.shape, b.shape) == (4, 5, 3)
    assert output_shape([a, b]) == (4, 5, 3)
    assert output_shape([np.zeros(())]) == ()
    for _ in range(2):
        with pytest.raises(InvalidArgumentError, match=r"incompatible shapes \[\[4, 1, 3\], \[2\]\]"):
            output_shape([a, np.zeros(2)])
