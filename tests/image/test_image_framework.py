"""aics.image / aics.io / aics.compat.v1.image: the ops wired into the framework.

The arithmetic is tested against TF in test_image_ops.py (kernels); here: the
same numbers come out eagerly and from a Session, shapes are inferred in
graphs, errors surface as TF's exception types, randomness is seeded,
gradients flow.
"""
import pathlib

import numpy as np
import pytest

import aicslib as aics
from aicslib.kernels import colorspace_ops, decode_image_op, io_ops, resize_ops
import image_reference as R   # NumPy versions of tf.image's composite functions

IMAGES = pathlib.Path(__file__).resolve().parents[2] / "data" / "images"


@pytest.fixture(autouse=True)
def _eager():
    aics.enable_eager_execution()
    yield
    aics.enable_eager_execution()


def rand_img(shape, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, shape).astype(dtype)


def test_read_and_decode_sample_images():
    for f in sorted(IMAGES.iterdir()):
        raw = aics.io.read_file(str(f))
        assert raw.dtype == aics.string
        img = aics.image.decode_image(raw, channels=3)
        assert img.dtype == aics.uint8 and img.shape.rank == 3 and img.shape[-1] == 3
        np.testing.assert_array_equal(img.numpy(), decode_image_op.decode_image(io_ops.read_file(str(f)), 3))
    jpg = aics.io.read_file(str(IMAGES / "rocket.jpg"))
    assert aics.image.decode_jpeg(jpg).shape[-1] == 3
    f = aics.image.decode_image(jpg, dtype=aics.float32)
    assert f.dtype == aics.float32 and float(aics.reduce_max(f).numpy()) <= 1.0


def test_decode_errors_are_invalid_argument():
    with pytest.raises(aics.errors.InvalidArgumentError, match="Unknown image file format"):
        aics.image.decode_image(b"GARBAGE DATA")
    png = aics.io.read_file(str(IMAGES / "coffee.png")).numpy()   # bytes, as in TF
    with pytest.raises(aics.errors.InvalidArgumentError, match="Invalid PNG data"):
        aics.image.decode_png(png[:100])
    with pytest.raises(aics.errors.NotFoundError):
        aics.io.read_file(str(IMAGES / "missing.png"))


def test_eager_matches_kernels():
    x = rand_img((2, 9, 7, 3))
    for method in ("bilinear", "nearest", "bicubic", "area", "lanczos3"):
        for aa in (False, True):
            got = aics.image.resize(x, [5, 11], method=method, antialias=aa)
            np.testing.assert_array_equal(got.numpy(), R.resize(x, [5, 11], method, antialias=aa))
    np.testing.assert_array_equal(aics.image.resize(x[0], [4, 4]).numpy(), R.resize(x[0], [4, 4]))
    assert aics.image.resize(x, [4, 4], method="nearest").dtype == aics.uint8
    assert aics.image.resize(x[0], [5, 100], preserve_aspect_ratio=True).shape.as_list() == [5, 4, 3]
    for fn, args in [("central_crop", (0.6,)), ("resize_with_crop_or_pad", (5, 12)),
                     ("crop_to_bounding_box", (1, 2, 3, 4)), ("pad_to_bounding_box", (1, 2, 11, 10)),
                     ("flip_left_right", ()), ("flip_up_down", ()), ("rot90", (1,)), ("rot90", (3,)),
                     ("transpose", ()), ("adjust_brightness", (0.2,)), ("adjust_contrast", (1.7,)),
                     ("adjust_saturation", (0.4,)), ("adjust_hue", (-0.3,)),
                     ("per_image_standardization", ()), ("rgb_to_grayscale", ())]:
        for img in (x, x[0]):
            got = getattr(aics.image, fn)(img, *args).numpy()
            want = getattr(R, fn)(img, *args)
            assert got.dtype == want.dtype, fn
            np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=1e-6, atol=1e-5,
                                       err_msg=fn)
    f = x.astype(np.float32) / 255
    np.testing.assert_array_equal(aics.image.rgb_to_hsv(f).numpy(), colorspace_ops.rgb_to_hsv(f))
    np.testing.assert_array_equal(aics.image.hsv_to_rgb(f).numpy(), colorspace_ops.hsv_to_rgb(f))
    for src, dst, sat in [(np.uint8, np.float32, False), (np.float32, np.uint8, True),
                          (np.uint8, np.int32, False), (np.int32, np.uint8, False), (np.float32, np.uint8, False)]:
        v = x.astype(src) if src != np.float32 else f * 1.2 - 0.1
        np.testing.assert_array_equal(aics.image.convert_image_dtype(v, dst, saturate=sat).numpy(),
                                      R.convert_image_dtype(v, dst, saturate=sat))


def test_compat_v1_resize():
    x = rand_img((1, 4, 6, 2)).astype(np.float32)
    v1 = aics.compat.v1.image
    np.testing.assert_array_equal(v1.resize_bilinear(x, [3, 5]).numpy(), resize_ops.resize_bilinear(x, [3, 5]))
    np.testing.assert_array_equal(v1.resize_bilinear(x, [3, 5], align_corners=True).numpy(),
                                  resize_ops.resize_bilinear(x, [3, 5], align_corners=True))
    np.testing.assert_array_equal(v1.resize_nearest_neighbor(x, [7, 7]).numpy(),
                                  resize_ops.resize_nearest_neighbor(x, [7, 7]))
    # TF1 default vs TF2 differ (the legacy grid is shifted)
    assert not np.allclose(v1.resize_bilinear(x, [3, 5]).numpy(), aics.image.resize(x, [3, 5]).numpy())
    np.testing.assert_array_equal(v1.resize_bilinear(x, [3, 5], half_pixel_centers=True).numpy(),
                                  aics.image.resize(x, [3, 5]).numpy())
    with pytest.raises(aics.errors.InvalidArgumentError, match="align_corners must be False"):
        v1.resize_bilinear(x, [3, 5], align_corners=True, half_pixel_centers=True)


def test_graph_mode_shapes_and_session():
    x = rand_img((2, 9, 7, 3))
    with aics.Graph().as_default():
        p = aics.placeholder(aics.uint8, [None, 9, 7, 3], name="x")
        r = aics.image.resize(p, [5, 4])
        assert r.shape.as_list() == [None, 5, 4, 3] and r.dtype == aics.float32
        c = aics.image.central_crop(p, 0.5)
        assert c.shape.as_list() == [None, 5, 5, 3]   # starts int(2.25)=2, int(1.75)=1
        fl = aics.image.flip_left_right(p)
        std = aics.image.per_image_standardization(p)
        hue = aics.image.adjust_hue(p, 0.1)
        contents = aics.placeholder(aics.string, [], name="contents")
        dec = aics.image.decode_png(contents, channels=3)
        assert dec.shape.as_list() == [None, None, 3]
        with aics.Session() as sess:
            out = sess.run([r, c, fl, std, hue], {p: x})
            img = sess.run(dec, {contents: (IMAGES / "coffee.png").read_bytes()})
    np.testing.assert_array_equal(out[0], R.resize(x, [5, 4]))
    np.testing.assert_array_equal(out[1], R.central_crop(x, 0.5))
    np.testing.assert_array_equal(out[2], x[:, :, ::-1])
    np.testing.assert_allclose(out[3], R.per_image_standardization(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[4], R.adjust_hue(x, 0.1))
    assert img.shape[-1] == 3


def test_graph_mode_static_errors():
    with aics.Graph().as_default():
        p = aics.placeholder(aics.float32, [4, 4, 3])
        with pytest.raises(ValueError, match="height must be >= target \\+ offset"):
            aics.image.crop_to_bounding_box(p, 2, 0, 3, 2)
        with pytest.raises(ValueError, match=r"within \(0, 1\]"):
            aics.image.central_crop(p, 1.5)
        with pytest.raises(ValueError, match="3 or 4 dimensions"):
            aics.image.flip_left_right(aics.placeholder(aics.float32, [4, 4]))
        # decode_image's rank is unknown in a graph (GIFs are 4-D), as in TF
        img = aics.image.decode_image(aics.placeholder(aics.string, []))
        assert img.shape.rank is None
        with pytest.raises(ValueError, match="expand_animations=False"):
            aics.image.resize(img, [4, 4])
        img3 = aics.image.decode_image(aics.placeholder(aics.string, []), channels=3, expand_animations=False)
        assert aics.image.resize(img3, [4, 4]).shape.as_list() == [4, 4, 3]


def test_random_ops_seeded_and_fair():
    x = np.arange(2 * 4 * 6 * 1, dtype=np.float32).reshape(2, 4, 6, 1)
    aics.random.set_seed(3)
    a = [aics.image.random_flip_left_right(x).numpy() for _ in range(20)]
    aics.random.set_seed(3)
    b = [aics.image.random_flip_left_right(x).numpy() for _ in range(20)]
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    flips = [bool((r[i] == x[i, :, ::-1]).all() and not (r[i] == x[i]).all()) for r in a for i in range(2)]
    assert 8 <= sum(flips) <= 32          # each image independently, p = 1/2
    for r in a:
        for i in range(2):
            assert (r[i] == x[i]).all() or (r[i] == x[i, :, ::-1]).all()
    crops = {tuple(aics.image.random_crop(x[0], [2, 3, 1], seed=s).numpy().ravel()) for s in range(30)}
    assert len(crops) > 5
    for c in crops:
        c = np.array(c).reshape(2, 3)
        i, j = np.argwhere(x[0, :, :, 0] == c[0, 0])[0]
        np.testing.assert_array_equal(c, x[0, i:i + 2, j:j + 3, 0])
    with pytest.raises(aics.errors.InvalidArgumentError, match="Need value.shape >= size"):
        aics.image.random_crop(x[0], [5, 3, 1])
    u8 = rand_img((4, 4, 3))
    br = aics.image.random_brightness(u8, 0.2, seed=1).numpy()
    assert br.dtype == np.uint8
    ct = aics.image.random_contrast(u8, 0.5, 1.5, seed=2).numpy()
    assert ct.shape == u8.shape
    with pytest.raises(ValueError, match="upper must be > lower"):
        aics.image.random_contrast(u8, 1.0, 0.5)
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        aics.image.random_brightness(u8, -0.1)


def test_random_ops_in_graph_new_value_each_run():
    x = np.arange(6 * 6, dtype=np.float32).reshape(6, 6, 1)
    with aics.Graph().as_default():
        aics.random.set_seed(0)
        crop = aics.image.random_crop(aics.constant(x), [3, 3, 1])
        with aics.Session() as sess:
            vals = {float(sess.run(crop)[0, 0, 0]) for _ in range(15)}
    assert len(vals) > 2


def test_gradients_through_preprocessing():
    x = aics.constant(np.random.default_rng(0).random((1, 6, 6, 3)).astype(np.float32))
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.image.resize(aics.image.flip_left_right(aics.image.central_crop(x, 0.5)), [6, 6])
        loss = aics.reduce_sum(y)
    g = tape.gradient(loss, x).numpy()
    # the centre 3x3 (crop of 6 at 0.5: start 1, size 4 -> rows 1..4) gets all the gradient
    assert g[0, 0].sum() == 0 and g[0, :, 0].sum() == 0
    np.testing.assert_allclose(g.sum(), 6 * 6 * 3, rtol=1e-5)   # bilinear weights sum to 1


def test_keras_preprocess_input_on_tensors():
    from aicslib.keras.applications.imagenet_utils import preprocess_input
    x = rand_img((2, 3, 4, 3))
    for mode in ("caffe", "tf", "torch"):
        want = preprocess_input(x.copy(), mode=mode)
        got = preprocess_input(aics.constant(x), mode=mode)
        assert got.dtype == aics.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)
        cf = np.ascontiguousarray(np.moveaxis(x, -1, 1))
        got_cf = preprocess_input(aics.constant(cf), data_format="channels_first", mode=mode)
        np.testing.assert_allclose(got_cf.numpy(), np.moveaxis(want, -1, 1), rtol=1e-5, atol=1e-4)
    with aics.Graph().as_default():
        p = aics.placeholder(aics.float32, [None, 3, 4, 3])
        y = preprocess_input(p, mode="caffe")
        with aics.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {p: x.astype(np.float32)}),
                                       preprocess_input(x.copy(), mode="caffe"), rtol=1e-5, atol=1e-4)


def test_crops_and_pads_with_dynamic_sizes_in_graphs():
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 256, (h, w, 3)).astype(np.uint8) for h, w in [(300, 301, 3)[:2], (7, 4), (5, 9)]]
    with aics.Graph().as_default():
        p = aics.placeholder(aics.uint8, [None, None, 3], name="img")
        cc = aics.image.central_crop(p, 0.875)
        cp = aics.image.resize_with_crop_or_pad(p, 6, 6)
        assert cp.shape.as_list() == [6, 6, 3]
        crop = aics.image.crop_to_bounding_box(p, 1, 2, 3, 2)
        assert crop.shape.as_list() == [3, 2, 3]
        pad = aics.image.pad_to_bounding_box(p, 1, 1, 400, 400)
        assert pad.shape.as_list() == [400, 400, 3]
        with aics.Session() as sess:
            for im in imgs:
                got = sess.run([cc, cp, crop, pad], {p: im})
                np.testing.assert_array_equal(got[0], R.central_crop(im, 0.875))
                np.testing.assert_array_equal(got[1], R.resize_with_crop_or_pad(im, 6, 6))
                np.testing.assert_array_equal(got[2], R.crop_to_bounding_box(im, 1, 2, 3, 2))
                np.testing.assert_array_equal(got[3], R.pad_to_bounding_box(im, 1, 1, 400, 400))
            with pytest.raises(aics.errors.InvalidArgumentError):
                sess.run(crop, {p: np.zeros((2, 2, 3), np.uint8)})     # box outside the image
