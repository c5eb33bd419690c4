"""The MNIST and sample-image loaders: shapes, checksums, failure messages."""
import gzip
import os
import shutil

import numpy as np
import pytest

from aicslib.datasets import images, mnist


@pytest.fixture(scope="module")
def data():
    return mnist.load_data()


def test_shapes_and_dtypes(data):
    (x_train, y_train), (x_test, y_test) = data
    assert x_train.shape == (60000, 28, 28) and x_train.dtype == np.uint8
    assert y_train.shape == (60000,) and y_train.dtype == np.uint8
    assert x_test.shape == (10000, 28, 28) and x_test.dtype == np.uint8
    assert y_test.shape == (10000,) and y_test.dtype == np.uint8
    for a in (x_train, y_train, x_test, y_test):
        assert a.flags.c_contiguous and a.flags.writeable


def test_values(data):
    (x_train, y_train), (x_test, y_test) = data
    assert y_train.min() == 0 and y_train.max() == 9
    assert y_test.min() == 0 and y_test.max() == 9
    # The well-known class counts of the training and test sets.
    assert np.bincount(y_train).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265,
                                             5851, 5949]
    assert np.bincount(y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028,
                                            974, 1009]
    assert x_train.max() == 255 and x_train.min() == 0
    # First training labels, as in every MNIST tutorial: 5 0 4 1 9 2 1 3 1 4.
    assert y_train[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert y_test[:5].tolist() == [7, 2, 1, 0, 4]
    # Digits sit in the middle: the border rows are blank in almost all images.
    assert x_train[:, 0, :].mean() < 0.01


def test_cached_calls_return_independent_copies(data):
    (x_train, _), _ = data
    (x2, y2), _ = mnist.load_data()
    assert np.array_equal(x2, x_train)
    x2[0, 0, 0] = 77
    (x3, _), _ = mnist.load_data()
    assert x3[0, 0, 0] == 0


def _copy_mnist(dst):
    for name in mnist.FILES:
        shutil.copy(os.path.join(mnist.default_path(), name + ".gz"), dst / (name + ".gz"))


def test_explicit_path(tmp_path):
    _copy_mnist(tmp_path)
    (_, y_train), (_, y_test) = mnist.load_data(path=tmp_path)
    assert y_train.shape == (60000,) and y_test.shape == (10000,)


def test_missing_file_names_file_and_fix(tmp_path):
    _copy_mnist(tmp_path)
    os.remove(tmp_path / "t10k-labels-idx1-ubyte.gz")
    with pytest.raises(mnist.MNISTDataError) as info:
        mnist.load_data(path=str(tmp_path))
    msg = str(info.value)
    assert "t10k-labels-idx1-ubyte.gz" in msg
    assert "missing" in msg
    assert "../shared/data/mnist" in msg and "re-clone" in msg


def test_missing_folder(tmp_path):
    with pytest.raises(mnist.MNISTDataError, match="folder not found"):
        mnist.load_data(path=tmp_path / "nowhere")


def test_checksum_failure_on_corrupted_copy(tmp_path):
    _copy_mnist(tmp_path)
    # Flip one label and recompress: a valid gzip and a valid IDX file, wrong content.
    name = "train-labels-idx1-ubyte"
    with gzip.open(tmp_path / (name + ".gz"), "rb") as f:
        raw = bytearray(f.read())
    raw[100] = (raw[100] + 1) % 10
    with gzip.open(tmp_path / (name + ".gz"), "wb") as f:
        f.write(bytes(raw))
    with pytest.raises(mnist.MNISTDataError) as info:
        mnist.load_data(path=tmp_path)
    msg = str(info.value)
    assert name in msg and "corrupted" in msg and "MD5" in msg
    assert mnist.MD5[name] in msg
    # Without verification the (wrong) data load: the checksum is what caught it.
    (_, y), _ = mnist.load_data(path=tmp_path, verify=False)
    assert y.shape == (60000,)


def test_truncated_gzip(tmp_path):
    _copy_mnist(tmp_path)
    name = "t10k-images-idx3-ubyte.gz"
    blob = (tmp_path / name).read_bytes()
    (tmp_path / name).write_bytes(blob[: len(blob) // 2])
    with pytest.raises(mnist.MNISTDataError) as info:
        mnist.load_data(path=tmp_path)
    msg = str(info.value)
    assert name in msg and "truncated or corrupted" in msg


def test_not_a_gzip_file(tmp_path):
    _copy_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(b"this is not gzip data at all")
    with pytest.raises(mnist.MNISTDataError, match="t10k-labels-idx1-ubyte.gz"):
        mnist.load_data(path=tmp_path)


def _idx(magic, dims, payload):
    return bytes(magic) + b"".join(int(d).to_bytes(4, "big") for d in dims) + payload


def test_parse_idx_valid():
    arr = mnist.parse_idx(_idx([0, 0, 8, 2], [2, 3], bytes(range(6))))
    assert arr.shape == (2, 3) and arr.dtype == np.uint8
    assert arr.tolist() == [[0, 1, 2], [3, 4, 5]]
    big = mnist.parse_idx(_idx([0, 0, 0x0C, 1], [2], np.array([1, -2], ">i4").tobytes()))
    assert big.tolist() == [1, -2] and big.dtype == np.int32


@pytest.mark.parametrize("blob, match", [
    (b"\x00\x00", "too short"),
    (_idx([1, 0, 8, 1], [3], b"abc"), "bad IDX magic"),
    (_idx([0, 0, 0x42, 1], [3], b"abc"), "unknown IDX type"),
    (_idx([0, 0, 8, 0], [], b""), "0 dimensions"),
    (_idx([0, 0, 8, 3], [2], b""), "truncated IDX header"),
    (_idx([0, 0, 8, 2], [2, 3], b"12345"), r"declares shape \(2, 3\)"),
    (_idx([0, 0, 8, 1], [3], b"1234"), "holds 4 data bytes"),
])
def test_parse_idx_rejects_bad_headers(blob, match):
    with pytest.raises(mnist.MNISTDataError, match=match):
        mnist.parse_idx(blob, name="x.idx")


def test_wrong_shape_with_valid_checksum_disabled(tmp_path):
    _copy_mnist(tmp_path)
    # A well-formed IDX file of the wrong size, checksums off: the shape check catches it.
    with gzip.open(tmp_path / "t10k-labels-idx1-ubyte.gz", "wb") as f:
        f.write(_idx([0, 0, 8, 1], [5], bytes([1, 2, 3, 4, 5])))
    with pytest.raises(mnist.MNISTDataError, match=r"shape \(5,\), expected \(10000,\)"):
        mnist.load_data(path=tmp_path, verify=False)


# -- sample images ----------------------------------------------------------------

def test_list_images():
    assert images.list_images() == ["astronaut", "chelsea", "coffee", "rocket"]


@pytest.mark.parametrize("name, shape", [
    ("astronaut", (512, 512, 3)), ("chelsea", (300, 451, 3)),
    ("coffee", (400, 600, 3)), ("rocket.jpg", (427, 640, 3)),
])
def test_load_image(name, shape):
    img = images.load_image(name)
    assert img.shape == shape and img.dtype == np.uint8 and img.flags.c_contiguous
    assert 20 < img.mean() < 235  # a real photograph, not blank


def test_unknown_image_lists_available():
    with pytest.raises(images.ImageDataError) as info:
        images.load_image("dog")
    msg = str(info.value)
    assert "'dog'" in msg and "astronaut, chelsea, coffee, rocket" in msg


def test_corrupted_image(tmp_path):
    blob = open(images.image_path("chelsea"), "rb").read()
    (tmp_path / "chelsea.png").write_bytes(blob[:1000])
    assert images.list_images(tmp_path) == ["chelsea"]
    with pytest.raises(images.ImageDataError, match="chelsea.png.*truncated or corrupted"):
        images.load_image("chelsea", path=tmp_path)


def test_grayscale_converted_to_rgb(tmp_path):
    from PIL import Image
    Image.fromarray(np.arange(12, dtype=np.uint8).reshape(3, 4)).save(tmp_path / "g.png")
    img = images.load_image("g", path=tmp_path)
    assert img.shape == (3, 4, 3)
    assert np.array_equal(img[..., 0], img[..., 2])


def test_missing_image_folder(tmp_path):
    with pytest.raises(images.ImageDataError, match="folder not found"):
        images.list_images(tmp_path / "nope")


def test_data_paths_do_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    """The data files (MNIST, the sample images) are found from the installed package, so a
    student's notebook copy in any folder (the release, a course folder) finds them."""
    import pathlib

    import aicslib
    monkeypatch.chdir(tmp_path)
    files = aicslib.datasets.images.image_files()
    assert files and all(f.is_file() for f in files)
    assert pathlib.Path(aicslib.datasets.images.data_dir()) == pathlib.Path(__file__).resolve().parents[2] / "data"
