"""Bad arguments to ops give TF's error class and message (issue 17), eager and in graphs.

Messages are TensorFlow's (pooling_ops_common.h "Sliding window ksize for dimension 1
was zero.", kernel_shape_util.cc "Stride must be > 0, but got 0", reshape_op.h "Size 0
must be non-negative, not -2", batch_matmul_op_impl.h "In[0] ndims must be >= 2: 1",
sequence_ops.cc "Requires start <= limit when delta > 0: 5/1", unsorted segment sums that drop
negative ids,
gather_op.cc "Expected axis in the range [-2, 2), but got 3", the CPU allocator's
"OOM when allocating tensor with shape[...]"); valid arguments are checked against
NumPy so the new checks cannot reject what TF accepts.
"""
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics

Invalid = aics.errors.InvalidArgumentError


# -- pooling --------------------------------------------------------------------------------

@pytest.mark.parametrize("pool", [aics.nn.max_pool2d, aics.nn.avg_pool2d])
def test_pool_ksize_zero_is_refused(pool):
    x = np.ones([1, 4, 4, 1], np.float32)
    with pytest.raises(Invalid, match="Sliding window ksize for dimension 1 was zero"):
        pool(x, ksize=0, strides=1, padding="VALID")
    with aics.Graph().as_default():
        with pytest.raises(Invalid, match="Sliding window ksize for dimension 1 was zero"):
            pool(aics.placeholder(aics.float32, [None, 4, 4, 1]), ksize=[1, 0, 2, 1],
                 strides=1, padding="VALID")


@pytest.mark.parametrize("pool", [aics.nn.max_pool2d, aics.nn.avg_pool2d])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool_stride_zero_is_refused(pool, padding):
    with pytest.raises(Invalid, match="Stride must be > 0, but got 0"):
        pool(np.ones([1, 4, 4, 1], np.float32), ksize=2, strides=0, padding=padding)


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 6), w=st.integers(1, 6), k=st.integers(1, 3), s=st.integers(1, 3))
def test_valid_max_pool_still_matches_loops(h, w, k, s):
    x = np.random.default_rng(h * 7 + w).standard_normal((1, h, w, 1)).astype(np.float32)
    if k > h or k > w:
        return
    got = aics.nn.max_pool2d(x, ksize=k, strides=s, padding="VALID").numpy()
    ho, wo = (h - k) // s + 1, (w - k) // s + 1
    want = np.array([[x[0, i * s:i * s + k, j * s:j * s + k, 0].max() for j in range(wo)]
                     for i in range(ho)], np.float32)
    np.testing.assert_array_equal(got[0, :, :, 0], want)


# -- reshape, matmul, gather ------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(bad=st.integers(-50, -2), pos=st.integers(0, 1))
def test_reshape_negative_sizes_other_than_minus_one(bad, pos):
    shape = [3, 3]
    shape[pos] = bad
    with pytest.raises(Invalid, match=f"Size {pos} must be non-negative, not {bad}"):
        aics.reshape(np.ones(6, np.float32), shape)
    with aics.Graph().as_default():
        with pytest.raises(Invalid, match=f"Size {pos} must be non-negative, not {bad}"):
            aics.reshape(aics.constant(np.ones(6, np.float32)), shape)


def test_reshape_minus_one_still_infers():
    assert aics.reshape(np.arange(6), [-1, 3]).shape == (2, 3)


@pytest.mark.parametrize("a_shape,b_shape,which", [([3], [2, 3, 4], 0), ([2, 3, 4], [4], 1)])
def test_batch_matmul_rank_below_two_is_refused(a_shape, b_shape, which):
    a, b = np.ones(a_shape, np.float32), np.ones(b_shape, np.float32)
    with pytest.raises(Invalid, match=rf"In\[{which}\] ndims must be >= 2: 1"):
        aics.matmul(a, b)


def test_matmul_of_vectors_is_refused():
    with pytest.raises(Invalid):
        aics.matmul(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(Invalid):
        aics.matmul(np.float32(1.0), np.ones((3, 3), np.float32))


@pytest.mark.parametrize("a_shape,b_shape,which,op", [
    ([], [3, 3], 0, "MatMul"), ([3, 3], [], 1, "MatMul"), ([3], [3, 3], 0, "MatMul"),
    ([2, 3, 3], [], 1, "BatchMatMulV2"), ([], [2, 3, 3], 0, "BatchMatMulV2")])
def test_matmul_of_a_scalar_is_refused_eagerly(a_shape, b_shape, which, op):
    # NumPy scalars (np.float32(1), not only arrays) reach the op: TF's kernel refuses them
    a = np.ones(a_shape, np.float32) if a_shape else np.float32(1.0)
    b = np.ones(b_shape, np.float32) if b_shape else np.float32(1.0)
    rank = len(a_shape if which == 0 else b_shape)
    with pytest.raises(Invalid, match=rf"In\[{which}\] ndims must be >= 2: {rank} \[Op:{op}\]"):
        aics.matmul(a, b)


@pytest.mark.parametrize("a_shape,b_shape,want", [
    ([], [3, 3], "Shape must be rank 2 but is rank 0"),
    ([3, 3], [], "Shape must be rank 2 but is rank 0"),
    ([2, 3, 3], [], "Shape must be at least rank 2 but is rank 0")])
def test_matmul_of_a_scalar_is_refused_when_the_graph_is_built(a_shape, b_shape, want):
    # TF (tf.compat.v1 graph mode): the shape function refuses, raised as ValueError; here it
    # is also the InvalidArgumentError aicslib raised before, naming the node
    with aics.Graph().as_default() as g:
        a, b = aics.ones(a_shape, name="a"), aics.ones(b_shape, name="b")
        with pytest.raises(ValueError, match=want + r" for '\{\{node mm\}\}") as info:
            aics.matmul(a, b, name="mm")
        assert isinstance(info.value, Invalid)
        assert "mm" not in [op.name for op in g.get_operations()]


def test_matmul_of_a_fed_scalar_is_refused_by_the_session():
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float32, None)     # rank unknown: only the kernel can tell
        mm = aics.matmul(x, aics.ones([3, 3]), name="mm")
        with aics.Session() as sess:
            with pytest.raises(Invalid, match=r"In\[0\] ndims must be >= 2: 0"):
                sess.run(mm, {x: 1.0})
            np.testing.assert_array_equal(sess.run(mm, {x: np.eye(3)}), np.ones((3, 3)))


@settings(max_examples=40, deadline=None)
@given(rank=st.integers(1, 3), axis=st.integers(-6, 6))
def test_gather_axis_range(rank, axis):
    params = np.arange(2 ** rank, dtype=np.float32).reshape([2] * rank)
    if -rank <= axis < rank:
        got = aics.gather(params, [1, 0], axis=axis).numpy()
        np.testing.assert_array_equal(got, np.take(params, [1, 0], axis=axis))
    else:
        with pytest.raises(Invalid, match=rf"Expected axis in the range \[{-rank}, {rank}\), "
                                          rf"but got {axis}"):
            aics.gather(params, [0], axis=axis)


@pytest.mark.parametrize("indices,where,bad", [([0, -1], "1", -1), ([[0, 5]], "0,1", 5)])
def test_gather_names_the_index_out_of_range(indices, where, bad):
    # TF 2.21: "indices[0,1] = 5 is not in [0, 3)"
    want = rf"indices\[{where}\] = {bad} is not in \[0, 3\)"
    with pytest.raises(Invalid, match=want):
        aics.gather([1., 2., 3.], indices)
    with aics.Graph().as_default():
        g = aics.gather(aics.constant([1., 2., 3.]), aics.placeholder(aics.int32, None, name="i"))
        with aics.Session() as sess:
            with pytest.raises(Invalid, match=want):
                sess.run(g, {"i:0": indices})


# -- unsorted_segment_sum ----------------------------------------------------------------------

def _segment_sums(data, ids, n):
    """NumPy loops: entries with a negative id are dropped (TF's documented behaviour)."""
    out = np.zeros((n,) + data.shape[ids.ndim:], data.dtype)
    for index in np.ndindex(*ids.shape):
        if ids[index] >= 0:
            out[ids[index]] += data[index]
    return out


@settings(max_examples=30, deadline=None)
@given(ids=st.lists(st.integers(-3, 3), min_size=1, max_size=8), cols=st.integers(1, 3))
def test_unsorted_segment_sum_drops_negative_ids(ids, cols):
    ids = np.array(ids, np.int32)
    data = np.arange(ids.size * cols, dtype=np.float32).reshape(ids.size, cols) + 1
    want = _segment_sums(data, ids, 4)
    np.testing.assert_array_equal(aics.math.unsorted_segment_sum(data, ids, 4).numpy(), want)
    with aics.Graph().as_default():
        out = aics.math.unsorted_segment_sum(aics.constant(data), aics.constant(ids), 4)
        with aics.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), want)


def test_unsorted_segment_sum_of_tf_example():
    # TF 2.21: unsorted_segment_sum([1., 2., 3., 4.], [0, -1, 1, 0], 2) -> [5., 3.]
    got = aics.math.unsorted_segment_sum([1., 2., 3., 4.], [0, -1, 1, 0], 2)
    np.testing.assert_array_equal(got.numpy(), [5., 3.])


def test_dropped_entries_get_no_gradient():
    # TF 2.21: d/dx sum(unsorted_segment_sum(x * x, [0, -1, 1, 0], 2)) = [2, 0, 6, 8]
    x = aics.constant([1., 2., 3., 4.])
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.math.unsorted_segment_sum(x * x, [0, -1, 1, 0], 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2., 0., 6., 8.])
    with aics.Graph().as_default():
        x = aics.constant(np.arange(1., 7., dtype=np.float32).reshape(3, 2))
        y = aics.math.unsorted_segment_sum(x, [-1, 1, -2], 2) * [[1., 2.], [3., 4.]]
        (dx,) = aics.gradients(y, [x])
        with aics.Session() as sess:
            np.testing.assert_array_equal(sess.run(dx), [[0., 0.], [3., 4.], [0., 0.]])


@pytest.mark.parametrize("ids,n,want", [
    ([0, 2, 1, 0], 2, r"segment_ids\[1\] = 2 is out of range \[0, 2\)"),
    ([0, 1], -1, "Input num_segments == -1 must not be negative."),
    ([0, 1, 0, 1, 0], 2, r"data.shape = \[4\] does not start with segment_ids.shape = \[5\]")])
def test_unsorted_segment_sum_bad_ids(ids, n, want):
    with pytest.raises(Invalid, match=want):
        aics.math.unsorted_segment_sum([1., 2., 3., 4.], ids, n)


# -- range ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,want", [
    ((5, 1, 1), "Requires start <= limit when delta > 0: 5/1"),
    ((1, 5, -1), "Requires start >= limit when delta < 0: 1/5"),
    ((1, 5, 0), "Requires delta != 0: 0"),
    ((-3,), "Requires start <= limit when delta > 0: 0/-3"),
    ((5.0, 1.0, 0.5), "Requires start <= limit when delta > 0: 5/1"),
    ((0.0, float("nan"), 1.0), "Requires start <= limit when delta > 0: 0/nan"),
    ((0.0, 1e20, 1.0), r"Requires \(\(limit - start\) / delta\) <= 9223372036854775807")])
def test_range_refuses_what_tf_refuses(args, want):
    with pytest.raises(Invalid, match=want):
        aics.range(*args)
    with aics.Graph().as_default():
        # constant inputs: refused when the graph is built, as TF's shape function does
        with pytest.raises(ValueError, match=r"Requires .* for '\{\{node range\}\}"):
            aics.range(*args)
        # fed inputs: refused by the kernel
        start = aics.placeholder(aics.as_dtype(type(args[0])) if len(args) > 1 else aics.int32, [])
        r = aics.range(start, *args[1:]) if len(args) > 1 else aics.range(0, start)
        with aics.Session() as sess:
            with pytest.raises(Invalid, match=want):
                sess.run(r, {start: args[0]})


@settings(max_examples=40, deadline=None)
@given(start=st.integers(-20, 20), limit=st.integers(-20, 20), delta=st.integers(-5, 5))
def test_valid_int_ranges_are_pythons(start, limit, delta):
    if delta == 0 or (delta > 0 and start > limit) or (delta < 0 and start < limit):
        return
    np.testing.assert_array_equal(aics.range(start, limit, delta).numpy(),
                                  list(range(start, limit, delta)))


def test_float_range_values_are_tfs():
    # TF 2.21 computes start + i * delta: element 3 of range(1.5, 100., 0.7) is 3.5999999 in
    # float32 (np.arange's running sum gives 3.6000001); 141 elements, the last 99.5
    r = aics.range(1.5, 100., 0.7).numpy()
    assert r.dtype == np.float32 and r.shape == (141,)
    assert r[3] == np.float32(3.5999999046325684) and r[-1] == np.float32(99.5)
    assert aics.range(0, 3.5, 1).dtype == aics.float32          # the widest argument's dtype
    assert aics.range(np.int64(3)).dtype == aics.int64


def test_linspace_needs_an_integer_count():
    # TF 2.21 refuses num=2.5 (a float range(0, 2.5) would make three values)
    with pytest.raises(TypeError, match=r"Argument `tensor` \(name: num\) must be of type integer"):
        aics.linspace(0., 1., 2.5)
    with pytest.raises(Invalid, match="Requires start <= limit when delta > 0: 0/-1"):
        aics.linspace(0., 1., -1)
    np.testing.assert_allclose(aics.linspace(0., 1., 5).numpy(), np.linspace(0, 1, 5))


def test_dataset_range_arguments():
    with pytest.raises(Invalid, match="step must be a non-zero integer."):
        aics.data.Dataset.range(0, 10, 0)
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int64"):
        aics.data.Dataset.range(1.5)
    with pytest.raises(ValueError, match="should be between 1 and 3 but was 4"):
        aics.data.Dataset.range(1, 2, 3, 4)
    assert [int(v) for v in aics.data.Dataset.range(5, 1, -2)] == [5, 3]


# -- softmax of inf and NaN rows ----------------------------------------------------------------

INF, NAN = np.inf, np.nan
# TF 2.21's reference (Eigen) kernels, which run Softmax for float64 and every LogSoftmax: a row
# with +inf or NaN turns NaN wherever inf - inf or NaN appears, and that NaN reaches the row's sum
# and so every entry; -inf entries are 0 / -inf. Columns: row, softmax, log_softmax, float32
# softmax. TF's float32 Softmax is oneDNN's (eager and graph, x86): exp(NaN) is +inf there, the
# row sums to +inf and its finite entries give 0 / inf = 0, so softmax([[inf, 1.0]]) is
# [[nan, 0.]] (issue 29's TF 2.21 result).
SOFTMAX_ROWS = [
    ([INF, 1.0], [NAN, NAN], [NAN, NAN], [NAN, 0.0]),
    ([INF, INF], [NAN, NAN], [NAN, NAN], [NAN, NAN]),
    ([-INF, 1.0], [0.0, 1.0], [-INF, 0.0], [0.0, 1.0]),
    ([-INF, -INF], [NAN, NAN], [NAN, NAN], [NAN, NAN]),
    ([NAN, 1.0], [NAN, NAN], [NAN, NAN], [NAN, NAN]),
    ([INF, -INF], [NAN, NAN], [NAN, NAN], [NAN, 0.0]),
    ([-INF, -INF, 1.0], [0.0, 0.0, 1.0], [-INF, -INF, 0.0], [0.0, 0.0, 1.0]),
    ([1.0, INF, 2.0, INF], [NAN] * 4, [NAN] * 4, [0.0, NAN, 0.0, NAN]),
]
SOFTMAX_CASES = ([(np.float64, row, soft, log_soft) for row, soft, log_soft, _ in SOFTMAX_ROWS]
                 + [(np.float32, row, soft32, log_soft) for row, _, log_soft, soft32 in SOFTMAX_ROWS]
                 # finite, but their difference overflows float32
                 + [(np.float32, [3.4e38, -3.4e38], [1.0, 0.0], [0.0, -INF])])


def _softmax_both_modes(x):
    """softmax and log_softmax of x eagerly and in a graph fed through a placeholder (not folded
    as a constant), both without a RuntimeWarning: TF says nothing either."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eager = aics.nn.softmax(x).numpy(), aics.nn.log_softmax(x).numpy()
        with aics.Graph().as_default():
            p = aics.placeholder(aics.as_dtype(x.dtype), x.shape)
            with aics.Session() as sess:
                graph = sess.run([aics.nn.softmax(p), aics.nn.log_softmax(p)], {p: x})
    return eager, graph


@pytest.mark.parametrize("dtype,row,soft,log_soft", SOFTMAX_CASES)
def test_softmax_of_infinite_rows_is_tfs(dtype, row, soft, log_soft):
    x = np.array([row], dtype)
    for got_s, got_ls in _softmax_both_modes(x):
        np.testing.assert_array_equal(got_s, [soft])
        np.testing.assert_array_equal(got_ls, [log_soft])
    with aics.Graph().as_default():       # a constant input, folded or not, gives the same
        with aics.Session() as sess:
            np.testing.assert_array_equal(sess.run(aics.nn.softmax(aics.constant(x))), [soft])


def test_float32_softmax_keeps_finite_rows_beside_an_infinite_one():
    # only the row holding +inf changes; the others are the ordinary softmax, in any rank
    x = np.array([[[INF, 1.0, 0.0], [1.0, 2.0, 3.0]], [[0.5, 0.5, 0.5], [1.0, INF, -INF]]],
                 np.float32)
    e = np.exp(np.float64([1.0, 2.0, 3.0]) - 3.0)
    want = np.array([[[NAN, 0, 0], e / e.sum()], [[1 / 3] * 3, [0, NAN, 0]]], np.float32)
    for got_s, _ in _softmax_both_modes(x):
        np.testing.assert_allclose(got_s, want, rtol=1e-6)
    np.testing.assert_array_equal(aics.nn.softmax(x[0, 0]).numpy(), [NAN, 0, 0])    # rank 1


def test_softmax_needs_a_class_axis():
    for fn, op in ((aics.nn.softmax, "Softmax"), (aics.nn.log_softmax, "LogSoftmax")):
        with pytest.raises(Invalid, match=rf"logits must have >= 1 dimension, got \[\] \[Op:{op}\]"):
            fn(np.float32(1.0))
        with aics.Graph().as_default():
            with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
                fn(aics.constant(1.0))
        # no classes at all: an empty result (TF 2.21), not NumPy's error for max() of nothing
        assert fn(np.zeros((2, 0), np.float32)).shape == (2, 0)
    with pytest.raises(Invalid, match="logits must have >= 1 dimension"):
        aics.nn.softmax_cross_entropy_with_logits(labels=np.float32(1), logits=np.float32(1))


# -- huge allocations ------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: aics.zeros([1 << 20, 1 << 20]),
    lambda: aics.ones([1 << 40, 1 << 20]),
    lambda: aics.fill([1 << 30, 1 << 30], 1.0),
    lambda: aics.tile(np.ones([1 << 10], np.float32), [1 << 30]),
    lambda: aics.broadcast_to(np.ones([1], np.float32), [1 << 30, 1 << 30]),
    lambda: aics.random.normal([1 << 30, 1 << 10]),
    lambda: aics.pad(np.ones([2, 2], np.float32), [[0, 10 ** 11], [0, 0]]),   # issue 29
    lambda: aics.pad(np.ones([2, 2], np.float32), [[0, 2 ** 62], [0, 2 ** 62]]),
    lambda: aics.range(0, 10 ** 12, dtype=aics.int64),
    lambda: aics.eye(10 ** 6),
    lambda: aics.one_hot(np.zeros([10 ** 6], np.int32), 10 ** 6),
    lambda: aics.image.resize(np.ones([1, 2, 2, 1], np.float32), [10 ** 6, 10 ** 6]),
    lambda: aics.math.unsorted_segment_sum(np.ones([1, 1 << 20], np.float32), [0], 2 ** 31 - 1),
    lambda: aics.sparse.to_dense(aics.sparse.SparseTensor([[0, 0]], [1.0], [1 << 30, 1 << 30])),
])
def test_huge_allocations_are_resource_exhausted_before_touching_memory(make):
    start = time.perf_counter()
    with pytest.raises(aics.errors.ResourceExhaustedError,
                       match=r"OOM when allocating tensor with shape\[\d+(,\d+)*\]"):
        make()
    assert time.perf_counter() - start < 1.0


def test_pad_arguments_are_checked_as_tf_checks_them():
    x = np.ones([2, 2], np.float32)
    with pytest.raises(Invalid, match="Paddings must be non-negative: 1 -2"):
        aics.pad(x, [[0, 0], [1, -2]])
    with pytest.raises(Invalid, match=r"The first dimension of paddings must be the rank of "
                                      r"inputs\[1,2\] \[2,2\]"):
        aics.pad(x, [[0, 0]])
    with pytest.raises(Invalid, match=r"paddings must be a matrix with 2 columns: \[2,3\]"):
        aics.raw_ops.Pad(input=x, paddings=[[0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(aics.pad(x, np.array([[0, 1], [2, 0]], np.int64)).numpy(),
                                  np.pad(x, [(0, 1), (2, 0)]))
    with aics.Graph().as_default():
        big = aics.pad(aics.constant(x), [[0, 10 ** 11], [0, 0]], name="big")
        assert big.shape.as_list() == [10 ** 11 + 2, 2]      # as TF's shape function says
        with aics.Session() as sess:
            with pytest.raises(aics.errors.ResourceExhaustedError,
                               match=r"OOM when allocating tensor with shape\[100000000002,2\]"):
                sess.run(big)


def test_huge_allocation_in_a_session_names_the_node():
    with aics.Graph().as_default():
        z = aics.zeros([1 << 20, 1 << 20], name="big")
        with aics.Session() as sess:
            with pytest.raises(aics.errors.ResourceExhaustedError, match=r"OOM.*\n.*node big"):
                sess.run(z)


# -- RunOptions(timeout_in_ms) ---------------------------------------------------------------

def test_run_timeout_ends_a_blocked_dequeue():
    with aics.Graph().as_default():
        q = aics.FIFOQueue(3, aics.float32)
        d = q.dequeue()
        with aics.Session() as sess:
            start = time.perf_counter()
            with pytest.raises(aics.errors.DeadlineExceededError, match="timed out"):
                sess.run(d, options=aics.RunOptions(timeout_in_ms=100))
            assert 0.09 < time.perf_counter() - start < 2.0
            # Without a timeout the step waits for data (put there by another thread).
            enq = q.enqueue([3.0])
            threading.Timer(0.05, lambda: sess.run(enq)).start()
            assert sess.run(d) == 3.0
            # A timeout that is not reached changes nothing.
            sess.run(enq)
            assert sess.run(d, options=aics.RunOptions(timeout_in_ms=5000)) == 3.0
