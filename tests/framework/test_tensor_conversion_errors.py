"""Python values that cannot become tensors get TF's errors (issue 29), eagerly and in graphs.

TF 2.21's converter (python/lib/core/py_seq_tensor.cc) refuses a ragged nested list with
``ValueError: Can't convert non-rectangular Python sequence to Tensor.``, a list mixing
numbers with strings or None with ``... Python sequence with mixed types ...``, and a
Python string where numbers are wanted with ``TypeError: Cannot convert 'abc' to
EagerTensor of dtype float`` (eagerly; in a graph, make_tensor_proto's ``Expected
float32, but got abc of type 'str'.``). NumPy alone would raise its own ValueError about
an inhomogeneous shape, or read "1.5" as a number.
"""
import contextlib

import numpy as np
import pytest

import aicslib as aics

RAGGED = "Can't convert non-rectangular Python sequence to Tensor."
MIXED = "Can't convert Python sequence with mixed types to Tensor."

RAGGED_VALUES = [[[1, 2], [3]], [[[1], [2]], [[3]]], [[1], 2], [np.array([1, 2]), [3]],
                 [[1, 2], [3, 4, 5]]]
MIXED_VALUES = [[1, "a"], ["a", 1], [1.5, None], [[1, 2], [3, "a"]], [1, [2]]]


def _conversions():
    return [("constant", lambda v: aics.constant(v)),
            ("constant float32", lambda v: aics.constant(v, dtype=aics.float32)),
            ("convert_to_tensor", lambda v: aics.convert_to_tensor(v)),
            ("op input", lambda v: aics.add(aics.constant(1.0), v))]


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("value", RAGGED_VALUES)
def test_ragged_lists_are_refused_with_tfs_message(value, graph):
    with aics.Graph().as_default() if graph else contextlib.nullcontext():
        for what, convert in _conversions():
            with pytest.raises(ValueError) as info:
                convert(value)
            assert str(info.value) == RAGGED, what


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("value", MIXED_VALUES)
def test_mixed_lists_are_refused_with_tfs_message(value, graph):
    with aics.Graph().as_default() if graph else contextlib.nullcontext():
        with pytest.raises(ValueError) as info:
            aics.constant(value)
        assert str(info.value) == MIXED


def test_a_ragged_variable_feed_or_shape_is_refused():
    with pytest.raises(ValueError, match="non-rectangular"):
        aics.Variable([[1.0, 2.0], [3.0]])
    for make in (lambda: aics.ones([[1, 2], [3]]), lambda: aics.reshape([1., 2.], [[1], [2, 3]])):
        with pytest.raises(ValueError) as info:
            make()
        assert str(info.value) == RAGGED
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float32, [None, None], name="x")
        with aics.Session() as sess:
            with pytest.raises(ValueError) as info:
                sess.run(x, {x: [[1.0, 2.0], [3.0]]})
            assert str(info.value) == RAGGED


@pytest.mark.parametrize("value,dtype,shown", [
    ("abc", aics.float32, "float"), ("abc", aics.int32, "int32"), (b"abc", aics.float32, "float"),
    ("1.5", aics.float64, "double"), ("a", aics.float16, "half"), ("a", aics.bool, "bool"),
    (["abc"], aics.float32, "float")])
def test_python_strings_are_not_numbers(value, dtype, shown):
    with pytest.raises(TypeError) as info:
        aics.constant(value, dtype=dtype)
    assert str(info.value) == f"Cannot convert {value!r} to EagerTensor of dtype {shown}"
    with aics.Graph().as_default():
        with pytest.raises(TypeError) as info:
            aics.constant(value, dtype=dtype)
        text = value[0] if isinstance(value, list) else value
        assert str(info.value) == (f"Expected {dtype.name}, but got {text} of type "
                                   f"'{type(text).__name__}'.")


def test_what_tf_converts_still_converts():
    # rectangular lists mixing lists, tuples and arrays; ints with floats; strings alone
    got = aics.constant([[1, 2], (3, 4), np.array([5, 6])]).numpy()
    np.testing.assert_array_equal(got, [[1, 2], [3, 4], [5, 6]])
    assert aics.constant([1, 2.5]).dtype == aics.float32
    assert aics.constant(["a", b"b"]).numpy().tolist() == [b"a", b"b"]
    # a NumPy array of strings is parsed, as TF parses it: tf.constant(np.array(["1.5"]),
    # dtype=tf.float32) is [1.5]
    np.testing.assert_array_equal(aics.constant(np.array(["1.5"]), dtype=aics.float32).numpy(),
                                  np.array([1.5], np.float32))
    assert aics.constant([[], []]).shape == (2, 0)



@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("value", [[], (), [[], []], [[[]]]])
@pytest.mark.parametrize("dtype", [aics.int32, aics.int64, aics.uint8, aics.bool, aics.float16])
def test_an_empty_sequence_takes_any_dtype(value, dtype, graph):
    # tf.constant([], tf.int32) is an empty int32 tensor: an empty list has no element type
    # (NumPy's float64 default is not the user's), so nothing is lost in the conversion.
    expected = np.array(value, dtype.as_numpy_dtype)
    with aics.Graph().as_default() if graph else contextlib.nullcontext():
        t = aics.constant(value, dtype)
        assert t.dtype == dtype and t.shape == expected.shape
        if not graph:
            assert t.numpy().dtype == expected.dtype and t.numpy().shape == expected.shape
