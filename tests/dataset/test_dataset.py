"""aics.data.Dataset: sources, transformations (map, filter, shuffle, batch... and reduce,
window, flat_map, interleave, enumerate, concatenate, unbatch), TextLineDataset,
from_generator(args=...), eager iteration and graph iterators (one-shot, initializable,
from_structure) over datasets built from arrays or placeholders.

Expected sequences are the examples in TensorFlow's Dataset docstrings where it has them.
"""
import gzip
import os

import numpy as np
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf1
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


# ---- beyond the basics

Dataset = aics.data.Dataset


def _values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_reduce_docstring_examples():
    assert Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy() == 5
    assert Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y).numpy() == 10
    s, n = Dataset.from_tensor_slices(np.array([1.5, 2.0, 3.5], np.float32)).reduce(
        (np.float32(0), np.int64(0)), lambda st, x: (st[0] + x, st[1] + 1))
    assert s.numpy() == 7.0 and n.numpy() == 3


def test_window_docstring_examples():
    ds = Dataset.range(7)
    assert [_values(w) for w in ds.window(3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [_values(w) for w in ds.window(3, 2, 1, True)] == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert [_values(w) for w in ds.window(3, 1, 2, True)] == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert [_values(w) for w in ds.window(3, 2)] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert [_values(w) for w in ds.window(2, 4)] == [[0, 1], [4, 5]]
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4, 8))).window(2)
    assert [(_values(a), _values(b)) for a, b in pairs] == [([0, 1], [4, 5]), ([2, 3], [6, 7])]
    batched = ds.window(3, 1, 1, True).flat_map(lambda w: w.batch(3))
    assert _values(batched) == [[i, i + 1, i + 2] for i in range(5)]
    with pytest.raises(aics.errors.InvalidArgumentError, match="Window size must be greater than zero"):
        ds.window(0)


def test_flat_map_interleave_filter_enumerate_concatenate_unbatch():
    rows = Dataset.from_tensor_slices(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
    assert _values(rows.flat_map(Dataset.from_tensor_slices)) == list(range(1, 10))
    inter = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                           cycle_length=2, block_length=4)
    assert _values(inter) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                              4, 4, 5, 5, 5, 5, 5, 5]
    small = Dataset.from_tensor_slices(np.array([1, 2, 3]))
    assert _values(small.filter(lambda x: x < 3)) == [1, 2]
    assert _values(small.filter(lambda x: aics.equal(x, 1))) == [1]
    with pytest.raises(TypeError, match="returned a Python bool"):
        small.filter(lambda x: x == 1)
    assert [(int(i), int(v)) for i, v in small.enumerate(start=5).as_numpy_iterator()] == \
        [(5, 1), (6, 2), (7, 3)]
    assert _values(Dataset.range(1, 4).concatenate(Dataset.range(4, 8))) == list(range(1, 8))
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        Dataset.range(3).concatenate(Dataset.from_tensor_slices(np.ones(2, np.float32)))
    assert _values(Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).batch(2).unbatch()) == \
        [[0, 1], [2, 3], [4, 5]]
    assert Dataset.range(5).cardinality().numpy() == -2 and small.cardinality().numpy() == 3


def test_from_generator_args_and_output_signature():
    def gen(stop):
        for i in range(stop):
            yield i
    ds = Dataset.from_generator(gen, args=[3], output_types=aics.int64, output_shapes=())
    assert _values(ds) == [0, 1, 2]

    def pairs():
        yield np.array([1.0, 2.0], np.float32), 0
        yield np.array([3.0], np.float32), 1
    sig = (aics.data.TensorSpec([None], aics.float32), aics.data.TensorSpec([], aics.int32))
    out = list(Dataset.from_generator(pairs, output_signature=sig).as_numpy_iterator())
    assert [a.tolist() for a, _ in out] == [[1.0, 2.0], [3.0]] and [int(b) for _, b in out] == [0, 1]
    with pytest.raises(TypeError, match="must not be specified together"):
        Dataset.from_generator(pairs, output_types=aics.int32, output_signature=sig)


def test_text_line_dataset_plain_gzip_and_several_files(tmp_path):
    a = os.path.join(tmp_path, "a.txt")
    with open(a, "wb") as f:
        f.write(b"first line\nsecond\r\n\nlast without newline")
    b = os.path.join(tmp_path, "b.txt.gz")
    with gzip.open(b, "wb") as f:
        f.write(b"x,1\ny,2\n")
    lines = [v.item() for v in aics.data.TextLineDataset(a).as_numpy_iterator()]
    assert lines == [b"first line", b"second", b"", b"last without newline"]
    gz = [v.item() for v in aics.data.TextLineDataset([b], compression_type="GZIP").as_numpy_iterator()]
    assert gz == [b"x,1", b"y,2"]
    both = aics.data.TextLineDataset([a, a]).reduce(np.int64(0), lambda n, _: n + 1)
    assert both.numpy() == 8
    with pytest.raises(aics.errors.NotFoundError):
        list(aics.data.TextLineDataset(os.path.join(tmp_path, "missing.txt")).as_numpy_iterator())


def test_initializable_iterator_over_placeholders():
    with aics.Graph().as_default():
        x = tf1.placeholder(tf1.float32, [None, 2])
        y = tf1.placeholder(tf1.int64, [None])
        it = tf1.data.Dataset.from_tensor_slices((x, y)).batch(2).make_initializable_iterator()
        nx, ny = it.get_next()
        assert nx.shape.as_list() == [None, 2] and ny.shape.as_list() == [None]
        data = np.arange(6, dtype=np.float32).reshape(3, 2)
        with tf1.Session() as s:
            with pytest.raises(aics.errors.FailedPreconditionError, match="not been initialized"):
                s.run(nx)
            for epoch in range(2):
                s.run(it.initializer, {x: data, y: [1, 2, 3]})
                first = s.run([nx, ny])
                second = s.run([nx, ny])
                with pytest.raises(aics.errors.OutOfRangeError):
                    s.run(nx)
            np.testing.assert_array_equal(first[0], data[:2])
            np.testing.assert_array_equal(second[1], [3])
            s.run(it.initializer, {x: np.ones((1, 2), np.float32), y: [9]})
            assert s.run(ny).tolist() == [9]
            with pytest.raises(aics.errors.InvalidArgumentError, match="same size in dimension 0"):
                s.run(it.initializer, {x: data, y: [1]})
        with pytest.raises(ValueError, match="use make_initializable_iterator"):
            tf1.data.make_one_shot_iterator(tf1.data.Dataset.from_tensor_slices(x))


def test_iterator_from_structure_switches_datasets():
    with aics.Graph().as_default():
        train = Dataset.range(3).map(lambda v: v * 10)
        test = Dataset.range(100, 102)
        it = tf1.data.Iterator.from_structure(tf1.data.get_output_types(train),
                                              tf1.data.get_output_shapes(train))
        nxt = it.get_next()
        init_train, init_test = it.make_initializer(train), it.make_initializer(test)
        with tf1.Session() as s:
            s.run(init_train)
            assert [s.run(nxt) for _ in range(3)] == [0, 10, 20]
            s.run(init_test)
            assert [s.run(nxt) for _ in range(2)] == [100, 101]
        with pytest.raises(TypeError, match="Expected output types"):
            it.make_initializer(Dataset.from_tensor_slices(np.ones(2, np.float32)))
        with pytest.raises(ValueError, match="does not have an initializer"):
            train.make_one_shot_iterator().initializer


def test_dataset_from_graph_constants_is_one_shot():
    with aics.Graph().as_default():
        ds = Dataset.from_tensor_slices(aics.constant([[1.0, 2.0], [3.0, 4.0]]))
        nxt = ds.make_one_shot_iterator().get_next()
        with tf1.Session() as s:
            assert s.run(nxt).tolist() == [1.0, 2.0]
