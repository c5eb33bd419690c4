"""Keras preprocessing utilities against Keras's documented behaviour."""
import numpy as np
import pytest

from aicslib.keras import backend
from aicslib.keras.applications import imagenet_utils
from aicslib.keras.applications.imagenet_utils import preprocess_input
from aicslib.keras.preprocessing.sequence import pad_sequences
from aicslib.keras.preprocessing.text import Tokenizer, text_to_word_sequence

PIX = np.array([[[255, 0, 128], [10, 20, 30]]], np.uint8)   # 1 x 2 x 3, RGB


def brute_force(x, mode, channels_first=False):
    """Per pixel, from the formulas in Keras's docstring."""
    x = np.asarray(x, np.float64)
    if channels_first:
        x = np.moveaxis(x, -3, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        r, g, b = x[idx]
        if mode == "tf":
            out[idx] = [r / 127.5 - 1, g / 127.5 - 1, b / 127.5 - 1]
        elif mode == "torch":
            out[idx] = [(r / 255 - .485) / .229, (g / 255 - .456) / .224, (b / 255 - .406) / .225]
        else:
            out[idx] = [b - 103.939, g - 116.779, r - 123.68]
    return np.moveaxis(out, -1, -3) if channels_first else out


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
def test_modes_channels_last(mode):
    got = preprocess_input(PIX, mode=mode)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, brute_force(PIX, mode), rtol=1e-5, atol=1e-4)


def test_hand_checked_values():
    caffe = preprocess_input(PIX.copy(), mode="caffe")[0, 0]
    np.testing.assert_allclose(caffe, [128 - 103.939, 0 - 116.779, 255 - 123.68], rtol=1e-6)
    tf = preprocess_input(PIX.copy(), mode="tf")[0, 0]
    np.testing.assert_allclose(tf, [1.0, -1.0, 128 / 127.5 - 1], rtol=1e-6, atol=1e-6)
    torch = preprocess_input(PIX.copy(), mode="torch")[0, 0]
    np.testing.assert_allclose(torch, [(1 - .485) / .229, (0 - .456) / .224, (128 / 255 - .406) / .225],
                               rtol=1e-6)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
@pytest.mark.parametrize("batched", [False, True])
def test_channels_first(mode, batched):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 3, 4, 5) if batched else (3, 4, 5)).astype(np.uint8)
    got = preprocess_input(x, data_format="channels_first", mode=mode)
    np.testing.assert_allclose(got, brute_force(x, mode, channels_first=True), rtol=1e-5, atol=1e-4)
    # channels_last on the transposed array gives the same numbers
    last = preprocess_input(np.moveaxis(x, -3, -1), data_format="channels_last", mode=mode)
    np.testing.assert_allclose(np.moveaxis(got, -3, -1), last, rtol=1e-6)


def test_integer_input_is_converted_not_mutated_float_is_in_place():
    x = PIX.copy()
    y = preprocess_input(x, mode="tf")
    np.testing.assert_array_equal(x, PIX)          # uint8 untouched
    assert y.dtype == np.float32
    f = PIX.astype(np.float32)
    out = preprocess_input(f, mode="tf")
    assert out is f                                # Keras: float arrays are modified in place
    np.testing.assert_allclose(f, brute_force(PIX, "tf"), rtol=1e-6, atol=1e-6)
    f64 = PIX.astype(np.float64)
    assert preprocess_input(f64, mode="torch").dtype == np.float64


def test_default_data_format_follows_backend():
    x = np.arange(2 * 3 * 3 * 4).reshape(2, 3, 3, 4).astype(np.float32)[..., :3]
    assert backend.image_data_format() == "channels_last"
    try:
        backend.set_image_data_format("channels_first")
        y = np.ascontiguousarray(np.moveaxis(x, -1, 1))
        cf = preprocess_input(y.copy())
    finally:
        backend.set_image_data_format("channels_last")
    np.testing.assert_allclose(np.moveaxis(cf, 1, -1), preprocess_input(x.copy()), rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="Expected mode to be one of `caffe`, `tf` or `torch`"):
        preprocess_input(PIX, mode="pytorch")
    with pytest.raises(ValueError, match="Expected data_format"):
        preprocess_input(PIX, data_format="NHWC")


def test_models_by_mode_documented():
    assert "VGG16" in imagenet_utils.MODELS_BY_MODE["caffe"]
    assert "MobileNetV2" in imagenet_utils.MODELS_BY_MODE["tf"]
    assert "DenseNet121" in imagenet_utils.MODELS_BY_MODE["torch"]
    for model in ("VGG16", "InceptionV3", "DenseNet121"):
        assert model in imagenet_utils.__doc__


# --------------------------------------------------------------------------
# pad_sequences (examples from the Keras docstring)
# --------------------------------------------------------------------------

SEQ = [[1], [2, 3], [4, 5, 6]]


def test_pad_sequences_docstring_examples():
    np.testing.assert_array_equal(pad_sequences(SEQ), [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(pad_sequences(SEQ, value=-1), [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(pad_sequences(SEQ, padding="post"), [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(pad_sequences(SEQ, maxlen=2), [[0, 1], [2, 3], [5, 6]])
    assert pad_sequences(SEQ).dtype == np.int32


def test_pad_sequences_truncation_and_padding_combinations():
    seqs = [[1, 2, 3, 4, 5], [6, 7], []]
    for padding in ("pre", "post"):
        for truncating in ("pre", "post"):
            got = pad_sequences(seqs, maxlen=3, padding=padding, truncating=truncating)
            for row, s in zip(got, seqs):          # brute force
                kept = s[-3:] if truncating == "pre" else s[:3]
                fill = [0] * (3 - len(kept))
                assert row.tolist() == (fill + kept if padding == "pre" else kept + fill)
    assert pad_sequences(seqs, maxlen=3)[2].tolist() == [0, 0, 0]   # empty -> all padding


def test_pad_sequences_dtype_value_and_sample_shape():
    out = pad_sequences([[0.5, 1.5], [2.5]], dtype="float32", value=-1.0, padding="post")
    assert out.dtype == np.float32 and out.tolist() == [[0.5, 1.5], [2.5, -1.0]]
    assert pad_sequences([[1.7]]).tolist() == [[1]]               # int32 truncates floats
    vecs = [np.ones((2, 4)), np.zeros((1, 4))]
    assert pad_sequences(vecs, dtype="float32").shape == (2, 2, 4)
    strs = pad_sequences([["a", "b"], ["c"]], dtype=object, value="<pad>")
    assert strs.tolist() == [["a", "b"], ["<pad>", "c"]]


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="Truncating type"):
        pad_sequences(SEQ, maxlen=2, truncating="middle")
    with pytest.raises(ValueError, match="Padding type"):
        pad_sequences(SEQ, padding="both")
    with pytest.raises(ValueError, match="must be a list of iterables"):
        pad_sequences([[1], 2])
    with pytest.raises(ValueError, match="must be iterable"):
        pad_sequences(5)
    with pytest.raises(ValueError, match="not compatible"):
        pad_sequences(SEQ, value="x")
    with pytest.raises(ValueError, match="Shape of sample"):
        pad_sequences([np.ones((2, 3)), np.ones((2, 4))])


# --------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------

TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "my cat"]


def test_text_to_word_sequence():
    assert text_to_word_sequence("Hello, World!  Hi\tthere") == ["hello", "world", "hi", "there"]


def test_tokenizer_word_index_by_frequency():
    tok = Tokenizer()
    tok.fit_on_texts(TEXTS)
    # counts: the 3, cat 2, my 2, then first-appearance order for ties
    assert list(tok.word_index.items())[:3] == [("the", 1), ("cat", 2), ("my", 3)]
    assert tok.word_index["sat"] == 4 and len(tok.word_index) == 9
    assert tok.texts_to_sequences(["the cat ate the fish"]) == [[1, 2, 8, 1]]
    assert tok.document_count == 3 and tok.word_docs["the"] == 2
    assert tok.sequences_to_texts([[1, 2, 8]]) == ["the cat ate"]


def test_tokenizer_num_words_and_oov():
    tok = Tokenizer(num_words=3)
    tok.fit_on_texts(TEXTS)
    assert tok.texts_to_sequences(["the cat sat on my mat"]) == [[1, 2]]   # ids < 3 only
    oov = Tokenizer(num_words=4, oov_token="<OOV>")
    oov.fit_on_texts(TEXTS)
    assert oov.word_index["<OOV>"] == 1 and oov.word_index["the"] == 2
    assert oov.texts_to_sequences(["the cat sat unknown"]) == [[2, 3, 1, 1]]


def test_tokenizer_then_pad_for_rnn():
    tok = Tokenizer(oov_token="<unk>")
    tok.fit_on_texts(TEXTS)
    batch = pad_sequences(tok.texts_to_sequences(TEXTS), maxlen=4)
    assert batch.shape == (3, 4) and batch.dtype == np.int32
    assert batch[2].tolist()[:2] == [0, 0]
