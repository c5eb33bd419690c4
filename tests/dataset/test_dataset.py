"""aics.data.Dataset: sources, transformations, eager iteration and graph iterators."""
import numpy as np
import pytest

import aicslib as aics
from aicslib.framework.errors import InvalidArgumentError, OutOfRangeError

X = np.arange(20, dtype=np.float32).reshape(10, 2)
Y = np.arange(10, dtype=np.int64)


def _numpy(ds):
    return list(ds.as_numpy_iterator())


def test_from_tensor_slices_eager():
    ds = aics.data.Dataset.from_tensor_slices((X, Y))
    spec = ds.element_spec
    assert spec[0].shape.as_list() == [2] and spec[0].dtype == aics.float32
    assert spec[1].shape.as_list() == [] and spec[1].dtype == aics.int64
    items = list(ds)
    assert len(items) == 10
    x, y = items[3]
    assert isinstance(x, aics.EagerTensor)
    np.testing.assert_array_equal(x.numpy(), [6, 7])
    assert int(y) == 3


def test_python_values_get_tf_dtypes_and_dicts():
    ds = aics.data.Dataset.from_tensor_slices({"a": [1.0, 2.0], "b": [[1, 2], [3, 4]]})
    assert ds.element_spec["a"].dtype == aics.float32
    assert ds.element_spec["b"].dtype == aics.int32
    out = _numpy(ds)
    assert out[1]["a"] == 2.0 and out[1]["b"].tolist() == [3, 4]
    with pytest.raises(ValueError, match="same size in dimension 0"):
        aics.data.Dataset.from_tensor_slices((X, Y[:3]))
    with pytest.raises(ValueError, match="scalar"):
        aics.data.Dataset.from_tensor_slices(3.0)


def test_batch_and_remainder():
    ds = aics.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    assert ds.element_spec[0].shape.as_list() == [None, 2]
    sizes = [len(y) for _, y in _numpy(ds)]
    assert sizes == [4, 4, 2]
    ds2 = aics.data.Dataset.from_tensor_slices((X, Y)).batch(4, drop_remainder=True)
    assert ds2.element_spec[0].shape.as_list() == [4, 2]
    assert [len(y) for _, y in _numpy(ds2)] == [4, 4]


def test_batch_ragged_error():
    ds = aics.data.Dataset.from_generator(lambda: iter([np.zeros(2), np.zeros(3)]),
                                          aics.float64, [None]).batch(2)
    with pytest.raises(InvalidArgumentError, match="different shapes in component 0"):
        _numpy(ds)


def test_map_traced_with_aicslib_ops():
    ds = aics.data.Dataset.from_tensor_slices((X, Y)).map(
        lambda x, y: (aics.reduce_sum(x * 2.0), aics.cast(y, aics.float32) + 0.5))
    assert ds.element_spec[0].dtype == aics.float32 and ds.element_spec[0].shape.as_list() == []
    out = _numpy(ds)
    assert out[2][0] == pytest.approx(2 * (4 + 5)) and out[2][1] == pytest.approx(2.5)
    single = aics.data.Dataset.from_tensor_slices(Y).map(lambda y: y * 3)
    assert [int(v) for v in _numpy(single)][:3] == [0, 3, 6]
    passthrough = aics.data.Dataset.from_tensor_slices((X, Y)).map(lambda x, y: (y, x))
    assert _numpy(passthrough)[1][0] == 1


def test_shuffle_seeded_and_uniform():
    ds = aics.data.Dataset.from_tensor_slices(Y).shuffle(10, seed=3)
    first = [int(v) for v in _numpy(ds)]
    second = [int(v) for v in _numpy(ds)]
    assert sorted(first) == list(range(10)) and first != list(range(10))
    assert first != second                     # reshuffled each iteration
    again = [int(v) for v in _numpy(aics.data.Dataset.from_tensor_slices(Y).shuffle(10, seed=3))]
    assert again == first                      # same seed, same first epoch
    fixed = aics.data.Dataset.from_tensor_slices(Y).shuffle(10, seed=3,
                                                            reshuffle_each_iteration=False)
    assert _numpy(fixed) == _numpy(fixed)
    # A small buffer only mixes locally: element 9 cannot come out first.
    small = [int(v) for v in _numpy(aics.data.Dataset.from_tensor_slices(Y).shuffle(2, seed=0))]
    assert small[0] in (0, 1) and sorted(small) == list(range(10))


def test_repeat_take_skip_range_zip():
    ds = aics.data.Dataset.range(3).repeat(2)
    assert [int(v) for v in _numpy(ds)] == [0, 1, 2, 0, 1, 2]
    assert [int(v) for v in _numpy(aics.data.Dataset.range(10).repeat().take(12))][-2:] == [0, 1]
    assert [int(v) for v in _numpy(aics.data.Dataset.range(5).skip(3))] == [3, 4]
    z = aics.data.Dataset.zip((aics.data.Dataset.range(3), aics.data.Dataset.range(10, 13)))
    assert [(int(a), int(b)) for a, b in _numpy(z)] == [(0, 10), (1, 11), (2, 12)]
    assert _numpy(aics.data.Dataset.from_tensors(X))[0].shape == (10, 2)


def test_prefetch_preserves_order_and_errors():
    ds = aics.data.Dataset.range(100).prefetch(3)
    assert [int(v) for v in _numpy(ds)] == list(range(100))

    def bad():
        yield 1.0
        raise RuntimeError("generator failed")
    ds = aics.data.Dataset.from_generator(bad, aics.float32).prefetch(2)
    with pytest.raises(RuntimeError, match="generator failed"):
        _numpy(ds)
    # Abandoning an infinite prefetching iterator must not hang.
    it = iter(aics.data.Dataset.range(5).repeat().prefetch(2))
    next(it)
    it.close()


def test_pipeline_epoch_covers_everything():
    ds = (aics.data.Dataset.from_tensor_slices((X, Y)).shuffle(10, seed=0)
          .map(lambda x, y: (x / 2.0, y)).batch(3).prefetch(2))
    ys = np.concatenate([y for _, y in _numpy(ds)])
    assert sorted(ys.tolist()) == list(range(10))


def test_graph_one_shot_iterator():
    with aics.Graph().as_default():
        ds = aics.data.Dataset.from_tensor_slices((X, Y)).batch(4)
        it = ds.make_one_shot_iterator()
        nx, ny = it.get_next()
        assert it.get_next()[0] is nx
        assert nx.shape.as_list() == [None, 2] and ny.dtype == aics.int64
        total = aics.reduce_sum(nx)
        with aics.Session() as sess:
            got = []
            with pytest.raises(OutOfRangeError, match="End of sequence"):
                while True:
                    a, b, t = sess.run([nx, ny, total])   # one advance per run
                    assert t == pytest.approx(a.sum())
                    got.extend(b.tolist())
            assert got == list(range(10))
            with pytest.raises(OutOfRangeError):
                sess.run(nx)
        with aics.Session() as sess2:                     # a new session starts over
            assert sess2.run(ny).tolist() == [0, 1, 2, 3]


def test_graph_iterator_single_component_and_mapped():
    with aics.Graph().as_default():
        ds = aics.data.Dataset.from_tensor_slices(Y).map(lambda y: y * 2).batch(5)
        nxt = aics.data.make_one_shot_iterator(ds).get_next()
        with aics.Session() as sess:
            assert sess.run(nxt).tolist() == [0, 2, 4, 6, 8]


def test_eager_one_shot_iterator_and_graph_iter_error():
    it = aics.data.Dataset.range(2).make_one_shot_iterator()
    assert int(it.get_next()) == 0 and int(it.get_next()) == 1
    with pytest.raises(OutOfRangeError):
        it.get_next()
    with aics.Graph().as_default():
        with pytest.raises(RuntimeError, match="eager"):
            iter(aics.data.Dataset.range(2)).__next__()


def test_mnist_sized_pipeline():
    x = np.zeros((6000, 784), np.float32)
    y = np.arange(6000, dtype=np.int64)
    ds = aics.data.Dataset.from_tensor_slices((x, y)).shuffle(1000, seed=0).batch(128)
    ys = np.concatenate([b for _, b in ds.as_numpy_iterator()])
    assert sorted(ys.tolist()) == list(range(6000))
