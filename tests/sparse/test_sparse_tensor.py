"""aics.sparse: SparseTensor, to_dense / from_dense / reorder / sparse_dense_matmul and CSR,
checked against dense NumPy and brute-force loops; TF's error messages."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics
from aicslib.framework.errors import InvalidArgumentError
from aicslib.framework.execute import apply_op
from aicslib.eager.gradient_checker import compute_gradient


def _random_sparse(rng, shape, density, dtype=np.float32):
    dense = rng.normal(size=shape).astype(dtype)
    dense[rng.random(shape) > density] = 0
    return dense


def _coo(dense):
    idx = [i for i in np.ndindex(dense.shape) if dense[i] != 0]   # row-major by construction
    return np.array(idx, np.int64).reshape(-1, dense.ndim), np.array([dense[i] for i in idx],
                                                                     dense.dtype)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), density=st.floats(0, 1),
       seed=st.integers(0, 10 ** 6))
def test_from_dense_and_to_dense_round_trip(shape, density, seed):
    dense = _random_sparse(np.random.default_rng(seed), shape, density)
    sp = aics.sparse.from_dense(dense)
    idx, vals = _coo(dense)
    np.testing.assert_array_equal(sp.indices.numpy(), idx)
    np.testing.assert_array_equal(sp.values.numpy(), vals)
    np.testing.assert_array_equal(sp.dense_shape.numpy(), shape)
    assert sp.indices.dtype == aics.int64 and sp.shape.as_list() == list(shape)
    np.testing.assert_array_equal(aics.sparse.to_dense(sp).numpy(), dense)


def test_to_dense_default_value_and_documented_example():
    sp = aics.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1., 2.], dense_shape=[3, 4])
    np.testing.assert_array_equal(aics.sparse.to_dense(sp).numpy(),
                                  [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(aics.sparse.to_dense(sp, default_value=-1.).numpy(),
                                  [[1, -1, -1, -1], [-1, -1, 2, -1], [-1, -1, -1, -1]])


@pytest.mark.parametrize("indices, message", [
    ([[0, 2], [0, 1]], r"indices\[1\] = \[0,1\] is out of order. Many sparse ops require sorted "
                       r"indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy."),
    ([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
    ([[0, 1], [3, 0]], r"indices\[1\] = \[3,0\] is out of bounds: need 0 <= index < \[3,4\]"),
    ([[0, 1], [1, -1]], r"indices\[1\] = \[1,-1\] is out of bounds"),
])
def test_to_dense_validation_errors_are_tfs(indices, message):
    sp = aics.sparse.SparseTensor(indices, [1., 2.], [3, 4])
    with pytest.raises(InvalidArgumentError, match=message):
        aics.sparse.to_dense(sp)


def test_reorder_sorts_row_major_and_then_to_dense_works():
    rng = np.random.default_rng(0)
    dense = _random_sparse(rng, (5, 4, 3), 0.4)
    idx, vals = _coo(dense)
    perm = rng.permutation(len(vals))
    sp = aics.sparse.SparseTensor(idx[perm], vals[perm], dense.shape)
    with pytest.raises(InvalidArgumentError, match="out of order"):
        aics.sparse.to_dense(sp)
    r = aics.sparse.reorder(sp)
    np.testing.assert_array_equal(r.indices.numpy(), idx)
    np.testing.assert_array_equal(r.values.numpy(), vals)
    np.testing.assert_array_equal(aics.sparse.to_dense(r).numpy(), dense)


def test_constructor_static_checks_are_tfs():
    with pytest.raises(ValueError, match=r"Shape \(2,\) must have rank 2"):
        aics.sparse.SparseTensor([0, 1], [1.], [3])
    with pytest.raises(ValueError, match="Dimensions 2 and 1 are not compatible"):
        aics.sparse.SparseTensor([[0, 0], [1, 1]], [1.], [3, 3])
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        aics.sparse.SparseTensor([[0, 0]], [1.], [3, 3, 3])
    with pytest.raises(TypeError, match="Input must be a SparseTensor"):
        aics.sparse.to_dense(np.eye(2))


def _brute_matmul(idx, vals, shape, b, adj_a, adj_b):
    a = np.zeros(shape, vals.dtype)
    for (i, j), v in zip(idx, vals):
        a[i, j] += v
    a = a.T if adj_a else a
    b = b.T if adj_b else b
    out = np.zeros((a.shape[0], b.shape[1]), np.float64)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = sum(float(a[i, k]) * float(b[k, j]) for k in range(a.shape[1]))
    return out


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 7), n=st.integers(0, 5), density=st.floats(0, 1),
       adj_a=st.booleans(), adj_b=st.booleans(), shuffle=st.booleans(), seed=st.integers(0, 10 ** 6))
def test_sparse_dense_matmul_matches_brute_force(m, k, n, density, adj_a, adj_b, shuffle, seed):
    rng = np.random.default_rng(seed)
    a = _random_sparse(rng, (k, m) if adj_a else (m, k), density)
    idx, vals = _coo(a)
    if shuffle:   # the matmul accepts any order (TF's kernel does)
        perm = rng.permutation(len(vals))
        idx, vals = idx[perm], vals[perm]
    b = rng.normal(size=(n, k) if adj_b else (k, n)).astype(np.float32)
    sp = aics.sparse.SparseTensor(idx, vals, a.shape)
    out = aics.sparse.sparse_dense_matmul(sp, b, adjoint_a=adj_a, adjoint_b=adj_b).numpy()
    assert out.shape == (m, n) and out.dtype == np.float32
    np.testing.assert_allclose(out, _brute_matmul(idx, vals, a.shape, b, adj_a, adj_b),
                               rtol=1e-5, atol=1e-5)


def test_sparse_dense_matmul_errors_are_tfs():
    sp = aics.sparse.SparseTensor([[0, 1], [1, 2]], [1., 2.], [2, 3])
    with pytest.raises(InvalidArgumentError, match=(
            r"Cannot multiply A and B because inner dimension does not match: 3 vs. 4.  Did you "
            r"forget a transpose\?  Dimensions of A: \[2, 3\).  Dimensions of B: \[4,5\]")):
        aics.sparse.sparse_dense_matmul(sp, np.ones((4, 5), np.float32))
    bad_k = aics.sparse.SparseTensor([[0, 1], [1, 7]], [1., 2.], [2, 3])
    with pytest.raises(InvalidArgumentError, match=r"k \(7\) from index\[1,1\] out of bounds \(>=3\)"):
        aics.sparse.sparse_dense_matmul(bad_k, np.ones((3, 2), np.float32))
    bad_m = aics.sparse.SparseTensor([[5, 1]], [1.], [2, 3])
    with pytest.raises(InvalidArgumentError, match=r"m \(5\) from index\[0,0\] out of bounds \(>=2\)"):
        aics.sparse.sparse_dense_matmul(bad_m, np.ones((3, 2), np.float32))


def test_sparse_dense_matmul_in_a_graph_with_gradients():
    rng = np.random.default_rng(1)
    a = _random_sparse(rng, (4, 5), 0.5)
    idx, vals = _coo(a)
    b = rng.normal(size=(5, 3)).astype(np.float32)
    up = rng.normal(size=(4, 3)).astype(np.float32)
    with aics.Graph().as_default():
        v = aics.placeholder(aics.float32, [len(vals)])
        bt = aics.constant(b)
        out = aics.sparse.sparse_dense_matmul(aics.sparse.SparseTensor(idx, v, [4, 5]), bt)
        assert out.shape.as_list() == [4, 3]
        loss = aics.reduce_sum(out * up)
        gv, gb = aics.gradients(loss, [v, bt])
        with aics.Session() as sess:
            o, gv, gb = sess.run([out, gv, gb], {v: vals})
    np.testing.assert_allclose(o, a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, a.T @ up, rtol=1e-5, atol=1e-6)           # dL/dB = A^T G
    np.testing.assert_allclose(gv, [(up[i] * b[j]).sum() for i, j in idx], rtol=1e-5, atol=1e-6)


def test_sparse_dense_matmul_gradient_numerically_with_adjoints():
    rng = np.random.default_rng(2)
    a = _random_sparse(rng, (3, 4), 0.6).astype(np.float64)
    idx, vals = _coo(a)
    b = rng.normal(size=(2, 3))
    sp = aics.sparse.SparseTensor(idx, vals, a.shape)
    theoretical, numerical = compute_gradient(
        lambda bb: aics.sparse.sparse_dense_matmul(sp, bb, adjoint_a=True, adjoint_b=True), [b])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 8), k=st.integers(1, 8), n=st.integers(1, 4), density=st.floats(0, 1),
       seed=st.integers(0, 10 ** 6))
def test_csr_conversion_and_matmul(m, k, n, density, seed):
    rng = np.random.default_rng(seed)
    a = _random_sparse(rng, (m, k), density)
    csr = aics.sparse.CSRMatrix.from_dense(a)
    # brute-force CSR: walk the rows
    ptr, cols, vals = [0], [], []
    for i in range(m):
        for j in range(k):
            if a[i, j] != 0:
                cols.append(j)
                vals.append(a[i, j])
        ptr.append(len(cols))
    assert csr.row_ptr.tolist() == ptr and csr.col_ind.tolist() == cols
    np.testing.assert_array_equal(csr.values, np.array(vals, np.float32))
    np.testing.assert_array_equal(csr.to_dense(), a)
    b = rng.normal(size=(k, n)).astype(np.float32)
    np.testing.assert_allclose(csr.matmul(b), a @ b, rtol=1e-5, atol=1e-5)
    # through a shuffled SparseTensor and back
    idx, v = _coo(a)
    perm = rng.permutation(len(v))
    csr2 = aics.sparse.CSRMatrix.from_sparse_tensor(aics.sparse.SparseTensor(idx[perm], v[perm], a.shape))
    assert csr2.row_ptr.tolist() == ptr and csr2.col_ind.tolist() == cols
    np.testing.assert_array_equal(aics.sparse.to_dense(csr2.to_sparse_tensor()).numpy(), a)


def test_csr_rejects_bad_structure():
    with pytest.raises(ValueError, match="row_ptr must have 3 entries"):
        aics.sparse.CSRMatrix([0, 1], [0], [1.], (2, 2))
    with pytest.raises(ValueError, match=r"column indices must be in \[0, 2\)"):
        aics.sparse.CSRMatrix([0, 1, 1], [5], [1.], (2, 2))
    with pytest.raises(ValueError, match="cannot multiply"):
        aics.sparse.CSRMatrix.from_dense(np.eye(2)).matmul(np.ones((3, 1)))


def test_csr_matmul_processes_large_matrices_in_blocks():
    # Large enough that the kernel splits the rows into several cache-sized blocks, with
    # empty rows at block edges.
    rng = np.random.default_rng(5)
    a = _random_sparse(rng, (300, 784), 0.5)
    a[rng.choice(300, 40, replace=False)] = 0
    b = rng.normal(size=(784, 64)).astype(np.float32)
    csr = aics.sparse.CSRMatrix.from_dense(a)
    assert csr.nnz * 64 * 4 > 4 * (1 << 19)     # at least four blocks of products
    np.testing.assert_allclose(csr.matmul(b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    sp = aics.sparse.from_dense(a)
    np.testing.assert_allclose(aics.sparse.sparse_dense_matmul(sp, b).numpy(),
                               a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


# ---------------------------------------------------------------------------
# Gradients of SparseToDense and SparseReorder (TF's sparse_grad.py), against central
# differences of the forward op.

def _numerical_check(fn, inputs):
    theoretical, numerical = compute_gradient(fn, inputs)
    assert all(np.any(t != 0) for t in theoretical)
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, rtol=1e-6, atol=1e-8)


def _to_dense_op(indices, shape):
    return lambda values, default: aics.sparse.to_dense(
        aics.sparse.SparseTensor(indices, values, shape), default)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).filter(lambda s: np.prod(s) > 1),
       density=st.floats(0.05, 1), seed=st.integers(0, 10 ** 6))
def test_to_dense_gradient_numerically(shape, density, seed):
    rng = np.random.default_rng(seed)
    dense = _random_sparse(rng, shape, density, np.float64)
    dense.flat[0] = 1.0                                   # at least one entry
    idx, vals = _coo(dense)
    if idx.shape[0] == int(np.prod(shape)):               # keep one default position
        idx, vals = idx[1:], vals[1:]
    _numerical_check(_to_dense_op(idx, shape), [vals, np.array(0.25)])


def test_to_dense_gradient_scalar_value_and_vector_indices():
    # A scalar sparse value is broadcast to every entry: its gradient is the sum over them.
    # 1-D indices with a 1-D shape list N positions (TF's GatherNd form mishandles both).
    up = np.arange(1.0, 6.0)
    theoretical, numerical = compute_gradient(
        lambda v, d: _raw_to_dense(np.array([1, 3], np.int64), np.array([5], np.int64), v, d),
        [np.array(2.0), np.array(-1.0)])
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, rtol=1e-6, atol=1e-8)
    # by hand: dense = [d, v, d, v, d]; dL/dv = up[1] + up[3], dL/dd = up[0] + up[2] + up[4]
    v, d = aics.constant(2.0, aics.float64), aics.constant(-1.0, aics.float64)
    with aics.GradientTape(persistent=True) as tape:
        tape.watch([v, d])
        loss = aics.reduce_sum(up * _raw_to_dense(np.array([1, 3], np.int64), np.array([5], np.int64), v, d))
    assert tape.gradient(loss, v).numpy() == up[1] + up[3]
    assert tape.gradient(loss, d).numpy() == up[0] + up[2] + up[4]


def _raw_to_dense(indices, shape, values, default):
    return apply_op("SparseToDense", [indices, shape, values, default])


def test_reorder_gradient_numerically_and_in_a_graph():
    rng = np.random.default_rng(5)
    idx = np.array([[2, 1], [0, 3], [1, 0], [0, 0], [2, 0]], np.int64)
    vals = rng.normal(size=5)
    _numerical_check(lambda v: aics.sparse.reorder(aics.sparse.SparseTensor(idx, v, [3, 4])).values,
                     [vals])
    # reorder then to_dense (the usual pair): the value gradient is the upstream gradient at
    # each entry's own position, whatever order the entries came in.
    up = rng.normal(size=(3, 4))
    with aics.Graph().as_default():
        v = aics.placeholder(aics.float64, [5])
        dense = aics.sparse.to_dense(aics.sparse.reorder(aics.sparse.SparseTensor(idx, v, [3, 4])))
        (gv,) = aics.gradients(aics.reduce_sum(dense * up), [v])
        with aics.Session() as s:
            got = s.run(gv, {v: vals})
    np.testing.assert_array_equal(got, [up[i, j] for i, j in idx])
