"""aics.experimental.use_kernel: a kernel put in place of an op's registered ones for a block,
in every mode, and the registered kernel back after it."""
import numpy as np
import pytest

import aicslib as aics


def doubled_relu(features):
    return np.maximum(features, 0) * 2


@pytest.mark.parametrize("mode", ["eager", "session", "function"])
def test_the_kernel_in_place_inside_the_block_and_back_after(mode):
    x = np.array([-1.0, 2.0, 3.0], np.float32)
    if mode == "eager":
        run = lambda: aics.nn.relu(x).numpy()           # noqa: E731
    elif mode == "function":
        fn = aics.function(lambda v: aics.nn.relu(v))
        run = lambda: fn(x).numpy()                     # noqa: E731
    else:
        g = aics.Graph()
        with g.as_default():
            y = aics.nn.relu(aics.constant(x))
        sess = aics.Session(graph=g)
        run = lambda: sess.run(y)                       # noqa: E731
    np.testing.assert_array_equal(run(), [0, 2, 3])
    with aics.experimental.use_kernel("Relu", doubled_relu):
        np.testing.assert_array_equal(run(), [0, 4, 6])
    np.testing.assert_array_equal(run(), [0, 2, 3])


def test_only_the_named_device_and_dtypes():
    with aics.experimental.use_kernel("Relu", doubled_relu, type_constraint={"T": [aics.float64]}):
        assert aics.nn.relu(np.array([1.0], np.float32)).numpy()[0] == 1.0
        assert aics.nn.relu(np.array([1.0], np.float64)).numpy()[0] == 2.0


def test_an_exception_in_the_block_still_restores_the_registered_kernel():
    with pytest.raises(RuntimeError):
        with aics.experimental.use_kernel("Relu", doubled_relu):
            raise RuntimeError("student code failed")
    assert aics.nn.relu(np.array([1.0], np.float32)).numpy()[0] == 1.0
