"""String tensors with TF semantics (issues 10 and 17): values are bytes, NUL bytes kept.

Expected values are TensorFlow's documented results (the docstrings of
tf.strings.*, python/ops/string_ops.py) or independent Python references
(bytes methods, printf-style formatting, int()/float()).
"""
import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import aicslib as aics

S = aics.strings
_bytes = st.binary(max_size=12)


def _graph_run(build):
    with aics.Graph().as_default():
        fetches = build()
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            return sess.run(fetches)


# -- bytes are bytes -----------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(value=_bytes)
def test_constant_keeps_every_byte_eager_and_graph(value):
    assert aics.constant(value).numpy() == value          # TF: .numpy() of a scalar is bytes
    assert type(aics.constant(value).numpy()) is bytes
    assert _graph_run(lambda: aics.constant(value)) == value


def test_trailing_nul_bytes_survive():
    assert aics.constant(b"xy\0\0").numpy() == b"xy\x00\x00"
    arr = aics.constant([b"a\0", b"", b"\0\0\0"]).numpy()
    assert arr.dtype == object and list(arr) == [b"a\0", b"", b"\0\0\0"]
    assert _graph_run(lambda: aics.constant([[b"\0"]]))[0, 0] == b"\0"


def test_str_is_utf8_encoded_and_feeds_keep_bytes():
    assert aics.constant("héllo").numpy() == "héllo".encode()

    def build():
        p = aics.placeholder(aics.string, [None])
        return p, S.length(p)
    with aics.Graph().as_default():
        p = aics.placeholder(aics.string, [None])
        n = S.length(p)
        with aics.Session() as sess:
            got, lengths = sess.run([p, n], {p: [b"q\0", "é"]})
    assert list(got) == [b"q\0", "é".encode()] and list(lengths) == [2, 2]


def test_non_string_elements_are_refused():
    with pytest.raises(TypeError, match="not bytes or str"):
        aics.constant([b"a", 3], dtype=aics.string)


@settings(max_examples=25, deadline=None)
@given(value=_bytes)
def test_write_file_read_file_round_trip_keeps_nuls(tmp_path_factory, value):
    path = str(tmp_path_factory.mktemp("wf") / "f.bin")
    aics.io.write_file(path, value)
    assert open(path, "rb").read() == value
    assert aics.io.read_file(path).numpy() == value


def test_all_black_bmp_decodes():
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (0, 0, 0)).save(buf, format="BMP")
    data = buf.getvalue()
    assert data.endswith(b"\0\0")   # the pixels are NUL bytes at the end of the file
    img = aics.image.decode_bmp(aics.constant(data)).numpy()
    assert img.shape == (3, 4, 3) and not img.any()


def test_string_variables_eager_and_graph():
    v = aics.Variable(b"abc\0")
    assert v.numpy() == b"abc\0" and v.dtype == aics.string
    v.assign("dé")
    assert v.numpy() == "dé".encode()

    def build():
        w = aics.Variable([b"x", b"y\0"], name="names")
        return w.read_value() + b"!"
    assert list(_graph_run(build)) == [b"x!", b"y\0!"]


# -- + on strings ----------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(a=st.lists(_bytes, min_size=1, max_size=4), b=_bytes)
def test_plus_concatenates_with_broadcasting(a, b):
    got = (aics.constant(a) + aics.constant(b)).numpy()
    assert list(got) == [x + b for x in a]
    got = (b + aics.constant(a)).numpy()   # reflected, a Python bytes on the left
    assert list(got) == [b + x for x in a]


def test_plus_in_a_graph_is_tf_add_op():
    with aics.Graph().as_default():
        c = aics.constant("ab") + "cd"
        assert c.op.type == "Add" and c.dtype == aics.string   # TF: gen_math_ops.add for strings
        x = aics.constant(1.0) + 2.0
        assert x.op.type == "AddV2"
        with aics.Session() as sess:
            assert sess.run(c) == b"abcd"


def test_plus_string_and_number_is_a_type_error():
    with pytest.raises((TypeError, aics.errors.InvalidArgumentError)):
        aics.constant("a") + 1


# -- aics.strings, against TF's documented results -------------------------------------------

def _text(value):
    """``value`` (str or bytes items) as an array ``run_op`` makes a string tensor of."""
    return np.array(value, dtype=object)


def test_join(run_op):
    # tf.strings.join docstring: join([['abc','123'], ['def','456']], separator=' ')
    got, broadcast = run_op(lambda x, y, a, bc: [S.join([x, y], separator=" "), S.join([a, bc], "-")],
                            _text(["abc", "123"]), _text(["def", "456"]), _text("a"), _text(["b", "c"]))
    assert list(got) == [b"abc def", b"123 456"]
    assert list(broadcast) == [b"a-b", b"a-c"]   # scalars broadcast
    with pytest.raises(aics.errors.InvalidArgumentError, match="shapes do not match"):
        S.join([["a", "b"], ["c", "d", "e"]])


def test_reduce_join_docstring_examples(run_op):
    x = _text([["abc", "123"], ["def", "456"]])
    whole, by_0, by_1, dotted, kept = run_op(lambda x: [
        S.reduce_join(x), S.reduce_join(x, 0), S.reduce_join(x, 1), S.reduce_join(x, -1, separator="."),
        S.reduce_join(x, 1, keepdims=True)], x)
    assert whole == b"abc123def456"
    assert list(by_0) == [b"abcdef", b"123456"]
    assert list(by_1) == [b"abc123", b"def456"]
    assert list(dotted) == [b"abc.123", b"def.456"]
    assert kept.shape == (2, 1) and list(kept[:, 0]) == [b"abc123", b"def456"]
    with pytest.raises(aics.errors.InvalidArgumentError, match="Invalid reduction dimension 2"):
        S.reduce_join(x, 2)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_reduce_join_matches_loops(shape, data):
    n = int(np.prod(shape))
    items = data.draw(st.lists(st.binary(max_size=3), min_size=n, max_size=n))
    x = np.empty(shape, dtype=object)
    x.reshape(-1)[:] = items if n else []
    axis = data.draw(st.integers(0, len(shape) - 1))
    got = S.reduce_join(aics.constant(x, dtype=aics.string), axis, separator=",").numpy()
    got = np.asarray(got, dtype=object)   # a scalar result is bytes
    out_shape = tuple(shape[:axis] + shape[axis + 1:])
    assert got.shape == out_shape
    for idx in np.ndindex(*out_shape):
        row = [x[idx[:axis] + (k,) + idx[axis:]] for k in range(shape[axis])]
        assert got[idx] == b",".join(row)


def test_length_bytes_and_utf8_chars(run_op):
    # tf.strings.length docstring: ['Hello','TensorFlow', '🙂'] -> [5, 10, 4] bytes; [5, 10, 1] chars
    strings = _text(["Hello", "TensorFlow", "\U0001F642"])
    in_bytes, in_chars, nuls = run_op(lambda s, nul: [S.length(s), S.length(s, unit="UTF8_CHAR"), S.length(nul)],
                                      strings, _text(b"a\0\0"))
    assert list(in_bytes) == [5, 10, 4]
    assert list(in_chars) == [5, 10, 1]
    assert nuls == 3
    assert in_bytes.dtype == np.int32


@settings(max_examples=40, deadline=None)
@given(s=_bytes, pos=st.integers(-15, 15), n=st.integers(0, 15))
def test_substr_matches_python_slicing(s, pos, n):
    if pos > len(s) or pos < -len(s):
        with pytest.raises(aics.errors.InvalidArgumentError, match=f"pos {pos} out of range"):
            S.substr(s, pos, n)
    else:
        start = pos % len(s) if pos < 0 else pos
        assert S.substr(s, pos, n).numpy() == s[start:start + n]


def test_substr_docstring_example(run_op):
    # tf.strings.substr docstring: input [b'Hello', b'World'], pos 1, len 3 -> [b'ell', b'orl']
    same, each, chars = run_op(lambda w, h: [S.substr(w, 1, 3), S.substr(w, [1, 2], [3, 2]),
                                             S.substr(h, 1, 2, unit="UTF8_CHAR")],
                               _text([b"Hello", b"World"]), _text("héllo"))
    assert list(same) == [b"ell", b"orl"]
    assert list(each) == [b"ell", b"rl"]
    assert chars == "él".encode()


def test_split_scalar_and_ragged_refusal():
    # tf.strings.split docstring: tf.strings.split('hello world') -> [b'hello', b'world']
    assert list(S.split("hello world").numpy()) == [b"hello", b"world"]
    assert list(S.split("a,b,,c", ",").numpy()) == [b"a", b"b", b"", b"c"]
    assert list(S.split("a b c", maxsplit=1).numpy()) == [b"a", b"b c"]
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        S.split(["hello world", "a b c"])


@settings(max_examples=40, deadline=None)
@given(s=st.binary(max_size=20), sep=st.sampled_from([None, b",", b"ab", b" "]))
def test_split_matches_python(s, sep):
    want = s.split() if sep is None else s.split(sep)
    assert list(S.split(s, sep).numpy()) == want


def test_as_string_printf_semantics():
    assert S.as_string(3.5).numpy() == b"3.500000"               # %f by default
    assert list(S.as_string([1, 22]).numpy()) == [b"1", b"22"]
    assert list(S.as_string([True, False]).numpy()) == [b"true", b"false"]
    assert S.as_string(3.14159, precision=2).numpy() == b"3.14"
    assert S.as_string(7, width=4, fill="0").numpy() == b"0007"
    assert S.as_string(1234567.0, shortest=True).numpy() == b"%g" % 1234567.0
    assert S.as_string(0.5, scientific=True).numpy() == b"5.000000e-01"
    with pytest.raises(aics.errors.InvalidArgumentError, match="both scientific and shortest"):
        S.as_string(1.0, scientific=True, shortest=True)
    with pytest.raises(aics.errors.InvalidArgumentError, match="Fill argument not supported"):
        S.as_string(1, fill="x")


@settings(max_examples=40, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False, width=32), prec=st.integers(-1, 8))
def test_as_string_matches_printf(x, prec):
    spec = "%f" if prec < 0 else f"%.{prec}f"
    assert S.as_string(np.float32(x), precision=prec).numpy() == (spec % float(np.float32(x))).encode()


def test_to_number():
    # tf.strings.to_number docstring: to_number("1.55") -> 1.55 (float32); out_type=int32
    assert S.to_number("1.55").numpy() == np.float32(1.55)
    assert S.to_number("1.55").dtype == aics.float32
    assert S.to_number("-7", out_type=aics.int32).numpy() == -7
    assert np.isinf(S.to_number("inf").numpy())
    with pytest.raises(aics.errors.InvalidArgumentError,
                       match="StringToNumberOp could not correctly convert string: abc"):
        S.to_number(["1", "abc"])
    with pytest.raises(aics.errors.InvalidArgumentError, match="could not correctly convert"):
        S.to_number("3000000000", out_type=aics.int32)   # out of int32's range
    with pytest.raises(aics.errors.InvalidArgumentError, match="could not correctly convert"):
        S.to_number("1_000", out_type=aics.int64)        # Python accepts it, TF does not


@settings(max_examples=40, deadline=None)
@given(v=st.integers(-2**63, 2**63 - 1))
def test_to_number_int64_round_trips(v):
    assert S.to_number(str(v), out_type=aics.int64).numpy() == v


def test_regex_replace(run_op):
    # tf.strings.regex_replace docstring: remove non-alphanumeric characters
    got, first, whole = run_op(lambda html, abc, ab: [
        S.regex_replace(html, "<[^>]+>", " "), S.regex_replace(abc, "(b)(c)", r"\2\1", replace_global=False),
        S.regex_replace(ab, "a", r"\0\0")],
        _text("Text with tags.<br /><b>contains html</b>"), _text("abc abc"), _text("ab"))
    assert got == b"Text with tags.  contains html "
    assert first == b"acb abc"
    assert whole == b"aab"         # RE2: \0 = whole match
    with pytest.raises(aics.errors.InvalidArgumentError, match="Invalid pattern"):
        S.regex_replace("ab", "(", "x")


def test_upper_lower(run_op):
    ascii_only, utf8, lower = run_op(lambda s, words: [S.upper(s), S.upper(s, encoding="utf-8"), S.lower(words)],
                                     _text("abc é"), _text(["CamelCase", "ÀB"]))
    assert ascii_only == "ABC é".encode()        # ASCII only by default
    assert utf8 == "ABC É".encode()
    assert list(lower) == [b"camelcase", "Àb".encode()]


def test_format():
    # tf.strings.format docstring: format("tensor: {}, suffix", tensor) with tensor [1 .. 10]
    got = S.format("tensor: {}, suffix", aics.range(1, 11), summarize=3).numpy()
    assert got == b"tensor: [1 2 3 ... 8 9 10], suffix"
    assert S.format("x={} y={}", [aics.constant([1, 2]), aics.constant(2.5)]).numpy() == b"x=[1 2] y=2.5"
    with pytest.raises(ValueError, match="expects 2 tensors"):
        S.format("{} {}", [aics.constant(1)])


def test_string_ops_in_a_graph():
    def build():
        x = aics.placeholder(aics.string, [2])
        return x, S.upper(S.join([x, "!"]))
    with aics.Graph().as_default():
        x = aics.placeholder(aics.string, [2])
        y = S.upper(S.join([x, "!"]))
        assert y.shape.as_list() == [2]
        with aics.Session() as sess:
            assert list(sess.run(y, {x: ["a", "b\0"]})) == [b"A!", b"B\0!"]


def test_np_asarray_of_a_string_scalar_keeps_bytes():
    assert np.asarray(aics.constant(b"ab\0")).item() == b"ab\0"
    assert np.asarray(aics.Variable(b"x\0")).item() == b"x\0"


@settings(max_examples=15, deadline=None)
@given(values=st.lists(_bytes, min_size=0, max_size=5), scalar=_bytes)
def test_string_variables_survive_checkpoints(tmp_path_factory, values, scalar):
    folder = tmp_path_factory.mktemp("ck")
    vec = aics.Variable(np.array(values, dtype=object).reshape(len(values)) if values
                        else np.zeros(0, dtype=object), dtype=aics.string, name="vec")
    one = aics.Variable(scalar, name="one")
    path = aics.train.Saver([vec, one]).save(None, str(folder / "m"))
    vec.assign(np.array([b"?"] * len(values), dtype=object).reshape(len(values)) if values
               else np.zeros(0, dtype=object))
    one.assign(b"changed")
    aics.train.Saver([vec, one]).restore(None, path)
    assert list(vec.numpy()) == values and one.numpy() == scalar


def test_string_variable_checkpoint_in_a_graph(tmp_path):
    with aics.Graph().as_default():
        g = aics.Variable(b"graph\0", name="g")
        with aics.Session() as sess:
            sess.run(aics.global_variables_initializer())
            saver = aics.train.Saver()
            path = saver.save(sess, str(tmp_path / "g"))
            sess.run(g.assign(b"other"))
            saver.restore(sess, path)
            assert sess.run(g) == b"graph\0"
