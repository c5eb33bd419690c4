"""Image kernels, and the NumPy versions of tf.image's composite functions
(tests/image/image_reference.py), against TensorFlow's arithmetic.

Two kinds of reference: values printed in TensorFlow's own docstrings and
kernel tests (quoted next to each test), and brute-force per-pixel loops
written here from the C++ kernels' formulas (slow, obvious, float32).
"""
import io
import math
import pathlib

import numpy as np
import pytest

from aicslib.framework import errors
from aicslib.kernels import colorspace_ops, decode_image_op, io_ops, resize_ops
import image_reference as R   # NumPy versions of tf.image's composite functions

f32 = np.float32


def rand_img(shape, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 256, shape).astype(dtype)
    return rng.random(shape).astype(dtype)


# --------------------------------------------------------------------------
# brute-force references (one output pixel at a time)
# --------------------------------------------------------------------------

def ref_scale(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        return f32(in_size - 1) / f32(out_size - 1)
    return f32(in_size) / f32(out_size)


def ref_bilinear(x, oh, ow, align_corners=False, half_pixel_centers=False):
    n, h, w, c = x.shape
    sy, sx = ref_scale(h, oh, align_corners), ref_scale(w, ow, align_corners)
    out = np.zeros((n, oh, ow, c), f32)

    def src(i, s):
        v = (f32(i) + f32(0.5)) * s - f32(0.5) if half_pixel_centers else f32(i) * s
        lo = max(int(math.floor(v)), 0)
        return v, lo, f32(v - f32(math.floor(v)))

    for b in range(n):
        for y in range(oh):
            vy, y0, ly = src(y, sy)
            y1 = min(int(math.ceil(vy)), h - 1)
            for xx in range(ow):
                vx, x0, lx = src(xx, sx)
                x1 = min(int(math.ceil(vx)), w - 1)
                for ch in range(c):
                    tl, tr = f32(x[b, y0, x0, ch]), f32(x[b, y0, x1, ch])
                    bl, br = f32(x[b, y1, x0, ch]), f32(x[b, y1, x1, ch])
                    top = f32(tl + f32(f32(tr - tl) * lx))
                    bot = f32(bl + f32(f32(br - bl) * lx))
                    out[b, y, xx, ch] = f32(top + f32(f32(bot - top) * ly))
    return out


def ref_nearest(x, oh, ow, align_corners=False, half_pixel_centers=False):
    n, h, w, c = x.shape
    sy, sx = ref_scale(h, oh, align_corners), ref_scale(w, ow, align_corners)

    def idx(i, s, size):
        v = f32(f32(i) + f32(0.5)) * s if half_pixel_centers else f32(i) * s
        j = int(math.floor(v + 0.5)) if align_corners else int(math.floor(v))  # roundf
        j = min(j, size - 1)
        return max(j, 0) if half_pixel_centers else j

    out = np.zeros((n, oh, ow, c), x.dtype)
    for y in range(oh):
        for xx in range(ow):
            out[:, y, xx] = x[:, idx(y, sy, h), idx(xx, sx, w)]
    return out


def ref_area(x, oh, ow):
    """resize_area_op.cc, literally."""
    n, h, w, c = x.shape
    hs, ws = f32(h) / f32(oh), f32(w) / f32(ow)
    scale = f32(1.0 / float(f32(hs * ws)))
    out = np.zeros((n, oh, ow, c), f32)

    def cells(o, s, size):
        lo, hi = f32(o) * s, f32(o + 1) * s
        res = []
        for i in range(int(math.floor(lo)), int(math.ceil(hi))):
            if i < lo:
                w_ = s if i + 1 > hi else f32(i + 1) - lo
            else:
                w_ = hi - f32(i) if i + 1 > hi else f32(1)
            res.append((min(size - 1, max(0, i)), f32(w_)))
        return res

    for b in range(n):
        for y in range(oh):
            for xx in range(ow):
                for ch in range(c):
                    s = f32(0)
                    for iy, wy in cells(y, hs, h):
                        sy = f32(0)
                        for ix, wx in cells(xx, ws, w):
                            sy = f32(sy + f32(f32(x[b, iy, ix, ch]) * wx))
                        s = f32(s + f32(sy * wy))
                    out[b, y, xx, ch] = f32(s * scale)
    return out


def keys_cubic(t, a=-0.5):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


def ref_bicubic(x, oh, ow, half_pixel_centers=True):
    """Cubic convolution evaluated exactly (no 1024-entry table)."""
    n, h, w, c = x.shape
    a = -0.5 if half_pixel_centers else -0.75

    def taps(o, in_size, out_size):
        s = in_size / out_size
        v = (o + 0.5) * s - 0.5 if half_pixel_centers else o * s
        base = math.floor(v)
        res = []
        for k in range(-1, 3):
            i = base + k
            wt = keys_cubic(v - i, a)
            if half_pixel_centers and not 0 <= i < in_size:
                continue  # outside: weight dropped, rest renormalised
            res.append((min(max(i, 0), in_size - 1), wt))
        tot = sum(wt for _, wt in res)
        return [(i, wt / tot) for i, wt in res] if half_pixel_centers else res

    out = np.zeros((n, oh, ow, c))
    for y in range(oh):
        for xx in range(ow):
            for iy, wy in taps(y, h, oh):
                for ix, wx in taps(xx, w, ow):
                    out[:, y, xx] += wy * wx * x[:, iy, ix].astype(np.float64)
    return out


def triangle(t):
    return max(0.0, 1 - abs(t))


def ref_scale_and_translate(x, oh, ow, kernel, radius, antialias=True):
    """Resampling with the kernel widened by 1/scale when downsampling."""
    n, h, w, c = x.shape

    def weights(o, in_size, out_size):
        s = out_size / in_size
        ks = max(1 / s, 1.0) if antialias else 1.0
        centre = (o + 0.5) / s
        lo = max(0, math.ceil(centre - radius * ks - 0.5))
        hi = min(in_size - 1, math.floor(centre + radius * ks - 0.5))
        ws = [(i, kernel((i + 0.5 - centre) / ks)) for i in range(lo, hi + 1)]
        tot = sum(v for _, v in ws)
        return [(i, v / tot) for i, v in ws]

    out = np.zeros((n, oh, ow, c))
    for y in range(oh):
        for xx in range(ow):
            for iy, wy in weights(y, h, oh):
                for ix, wx in weights(xx, w, ow):
                    out[:, y, xx] += wy * wx * x[:, iy, ix].astype(np.float64)
    return out


SIZES = [((1, 4, 4, 1), (2, 2)), ((1, 3, 5, 2), (7, 4)), ((2, 5, 7, 3), (3, 11)),
         ((3, 6, 6, 3), (6, 6)), ((1, 1, 1, 3), (3, 2)), ((1, 9, 4, 1), (2, 9))]


# --------------------------------------------------------------------------
# resize: bilinear / nearest / bicubic / area / antialias
# --------------------------------------------------------------------------

def test_resize_docstring_example():
    # tf.image.resize docstring (TF 2.x)
    image = np.eye(5, dtype=np.int32)[None, :, :, None]
    out = R.resize(image, [3, 5])
    assert out.dtype == np.float32 and out.shape == (1, 3, 5, 1)
    np.testing.assert_allclose(out[0, :, :, 0], [
        [0.6666667, 0.3333333, 0., 0., 0.],
        [0., 0., 1., 0., 0.],
        [0., 0., 0., 0.3333335, 0.6666665]], rtol=0, atol=1e-7)
    assert R.resize(image, [3, 5], preserve_aspect_ratio=True).shape == (1, 3, 3, 1)
    assert R.resize(image, [10, 10], preserve_aspect_ratio=True).shape == (1, 10, 10, 1)


@pytest.mark.parametrize("shape,size", SIZES)
@pytest.mark.parametrize("mode", ["half", "legacy", "align"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_resize_bilinear_bitexact(shape, size, mode, dtype):
    x = rand_img(shape, dtype)
    kw = {"half": dict(half_pixel_centers=True), "legacy": {},
          "align": dict(align_corners=True)}[mode]
    got = resize_ops.resize_bilinear(x, size, **kw)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, ref_bilinear(x, *size, **kw))


def test_resize_bilinear_known_values():
    # resize_bilinear_op_test.cc: TestBilinear2x2To1x1 (legacy) gives the top-left pixel,
    # half-pixel centres give the mean.
    x = np.array([1, 2, 3, 4], f32).reshape(1, 2, 2, 1)
    assert resize_ops.resize_bilinear(x, [1, 1])[0, 0, 0, 0] == 1.0
    assert resize_ops.resize_bilinear(x, [1, 1], half_pixel_centers=True)[0, 0, 0, 0] == 2.5
    # TestBilinear2x2To3x3 (legacy): 1, 5/3, 2 / 7/3, 3, 10/3 / 3, 11/3, 4
    out = resize_ops.resize_bilinear(x, [3, 3])[0, :, :, 0]
    np.testing.assert_allclose(out, [[1, 5 / 3, 2], [7 / 3, 3, 10 / 3], [3, 11 / 3, 4]], rtol=1e-6)
    # align_corners 2x2 -> 3x3: corners kept, centre is the mean
    out = resize_ops.resize_bilinear(x, [3, 3], align_corners=True)[0, :, :, 0]
    np.testing.assert_allclose(out, [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]])


def test_resize_bilinear_large_batch_fast_path_matches_reference():
    x = rand_img((3, 64, 48, 3), seed=4)
    for size in [(32, 24), (17, 50), (64, 48), (100, 7)]:
        np.testing.assert_array_equal(resize_ops.resize_bilinear(x, size, half_pixel_centers=True),
                                      ref_bilinear(x, *size, half_pixel_centers=True))
    # non-contiguous input and 4+ channels take the generic path
    y = rand_img((2, 9, 9, 5), np.float32)[:, ::2]
    np.testing.assert_array_equal(resize_ops.resize_bilinear(y, (4, 6), half_pixel_centers=True),
                                  ref_bilinear(y, 4, 6, half_pixel_centers=True))


@pytest.mark.parametrize("shape,size", SIZES)
@pytest.mark.parametrize("mode", ["half", "legacy", "align"])
def test_resize_nearest(shape, size, mode):
    x = rand_img(shape, np.int32)
    kw = {"half": dict(half_pixel_centers=True), "legacy": {},
          "align": dict(align_corners=True)}[mode]
    got = resize_ops.resize_nearest_neighbor(x, size, **kw)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref_nearest(x, *size, **kw))


def test_resize_nearest_known_values():
    # resize_nearest_neighbor_op_test.cc: 3x3 -> 2x2 legacy picks rows/cols 0 and 1,
    # half-pixel picks floor((i + .5) * 1.5) = 0, 2; align_corners picks 0 and 2.
    x = np.arange(1, 10).reshape(1, 3, 3, 1)
    assert resize_ops.resize_nearest_neighbor(x, [2, 2])[0, :, :, 0].tolist() == [[1, 2], [4, 5]]
    hp = resize_ops.resize_nearest_neighbor(x, [2, 2], half_pixel_centers=True)
    assert hp[0, :, :, 0].tolist() == [[1, 3], [7, 9]]
    assert resize_ops.resize_nearest_neighbor(x, [2, 2], align_corners=True)[0, :, :, 0].tolist() == [[1, 3], [7, 9]]
    # tf.image.resize(method="nearest") keeps the dtype
    assert R.resize(x[0].astype(np.uint8), [5, 5], method="nearest").dtype == np.uint8


@pytest.mark.parametrize("shape,size", SIZES)
def test_resize_bicubic_keys(shape, size):
    x = rand_img(shape, np.float32) * 255
    got = resize_ops.resize_bicubic(x, size, half_pixel_centers=True)
    # The kernel rounds the fractional position to 1/1024: |error| <= max|x| * ~1e-3
    np.testing.assert_allclose(got, ref_bicubic(x, *size), rtol=0, atol=255 * 2e-3)


def test_resize_bicubic_table_positions_exact():
    # Upsampling by 2 puts samples at fractions .25/.75, exactly on the table.
    x = rand_img((2, 5, 6, 3), np.float32)
    np.testing.assert_allclose(resize_ops.resize_bicubic(x, (10, 12), half_pixel_centers=True),
                               ref_bicubic(x, 10, 12), rtol=0, atol=2e-6)
    # legacy (a = -0.75, borders clamped, no renormalisation): integer scale positions
    np.testing.assert_allclose(resize_ops.resize_bicubic(x, (10, 12)), ref_bicubic(x, 10, 12, False),
                               rtol=0, atol=2e-6)
    # constant image stays constant
    np.testing.assert_allclose(resize_ops.resize_bicubic(np.full((1, 4, 7, 1), 3.0, f32), (9, 5),
                                                half_pixel_centers=True), 3.0, rtol=1e-6)


@pytest.mark.parametrize("shape,size", SIZES)
def test_resize_area(shape, size):
    x = rand_img(shape, np.uint8)
    np.testing.assert_array_equal(resize_ops.resize_area(x, size), ref_area(x, *size))


def test_resize_area_known_values():
    # Comment in resize_area_op.cc: in[4] -> out[3]:
    # out0 = (in0 + in1/3) * .75, out1 = (in1 * 2/3 + in2 * 2/3) * .75, out2 = (in2/3 + in3) * .75
    x = np.array([1, 2, 4, 8], f32).reshape(1, 1, 4, 1)
    out = resize_ops.resize_area(x, [1, 3])[0, 0, :, 0]
    np.testing.assert_allclose(out, [(1 + 2 / 3) * .75, (2 * 2 / 3 + 4 * 2 / 3) * .75,
                                     (4 / 3 + 8) * .75], rtol=1e-6)
    # 2x2 block averages on exact halving
    y = rand_img((1, 4, 6, 2), np.float32)
    np.testing.assert_allclose(resize_ops.resize_area(y, [2, 3]),
                               y.reshape(1, 2, 2, 3, 2, 2).mean(axis=(2, 4)), rtol=1e-6)


@pytest.mark.parametrize("shape,size", [((1, 8, 8, 1), (3, 5)), ((2, 7, 5, 3), (14, 10)),
                                        ((1, 20, 9, 2), (4, 9)), ((1, 5, 5, 1), (5, 5))])
def test_resize_antialias_bilinear_is_triangle_filter(shape, size):
    x = rand_img(shape, np.float32)
    got = R.resize(x, size, antialias=True)
    np.testing.assert_allclose(got, ref_scale_and_translate(x, *size, triangle, 1.0),
                               rtol=0, atol=3e-6)


def test_resize_antialias_bicubic_and_lanczos():
    x = rand_img((1, 12, 10, 1), np.float32)
    np.testing.assert_allclose(R.resize(x, (5, 4), "bicubic", antialias=True),
                               ref_scale_and_translate(x, 5, 4, keys_cubic, 2.0), atol=3e-6)

    def lanczos3(t):
        t = abs(t)
        if t > 3:
            return 0.0
        if t <= 1e-3:
            return 1.0
        return 3 * math.sin(math.pi * t) * math.sin(math.pi * t / 3) / (math.pi ** 2 * t * t)

    # tf.image.resize passes `antialias` on: without it the kernel is not widened
    np.testing.assert_allclose(R.resize(x, (5, 4), "lanczos3", antialias=True),
                               ref_scale_and_translate(x, 5, 4, lanczos3, 3.0), atol=1e-5)
    np.testing.assert_allclose(R.resize(x, (5, 4), "lanczos3"),
                               ref_scale_and_translate(x, 5, 4, lanczos3, 3.0, antialias=False),
                               atol=1e-5)


def test_antialias_changes_downsampling_only():
    x = rand_img((1, 16, 16, 1), np.float32)
    down, down_aa = R.resize(x, (4, 4)), R.resize(x, (4, 4), antialias=True)
    assert not np.allclose(down, down_aa)     # a low-pass filter, not 2 of 16 pixels
    # a wide kernel averages more: smaller spread of the result
    assert down_aa.std() < down.std()
    # upsampling: triangle == bilinear with half-pixel centres
    np.testing.assert_allclose(R.resize(x, (32, 40)), R.resize(x, (32, 40), antialias=True), atol=1e-6)


def test_resize_3d_and_4d_and_methods():
    x = rand_img((7, 5, 3))
    for method in ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                   "gaussian", "mitchellcubic"]:
        y3 = R.resize(x, [4, 9], method=method)
        y4 = R.resize(x[None], [4, 9], method=method)
        assert y3.shape == (4, 9, 3) and y4.shape == (1, 4, 9, 3)
        np.testing.assert_array_equal(y3, y4[0])
        assert y3.dtype == (np.uint8 if method == "nearest" else np.float32)


def test_preserve_aspect_ratio_rounds_half_to_even():
    x = np.zeros((10, 15, 1), f32)
    assert R.resize(x, [4, 4], preserve_aspect_ratio=True).shape == (3, 4, 1)  # 2.666 -> 3
    assert R.resize(x, [5, 100], preserve_aspect_ratio=True).shape == (5, 8, 1)  # 7.5 -> 8
    assert R.resize(np.zeros((4, 10, 1)), [1, 5], preserve_aspect_ratio=True).shape == (1, 2, 1)  # 2.5 -> 2
    assert R.resize(np.zeros((4, 14, 1)), [1, 5], preserve_aspect_ratio=True).shape == (1, 4, 1)  # 3.5 -> 4


def test_resize_errors():
    x = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        R.resize(np.zeros((4, 4)), [2, 2])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        R.resize(x, [2, 2, 2])
    with pytest.raises(ValueError, match="not implemented"):
        R.resize(x, [2, 2], method="cubic-spline")
    with pytest.raises(errors.InvalidArgumentError, match="output dimensions must be positive"):
        R.resize(x, [0, 2])
    with pytest.raises(errors.InvalidArgumentError, match="must be 4-dimensional"):
        resize_ops.resize_bilinear(x, [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match="align_corners must be False"):
        resize_ops.resize_bilinear(x[None], [2, 2], align_corners=True, half_pixel_centers=True)
    with pytest.raises(TypeError):
        R.resize(x, [2.5, 2])


# --------------------------------------------------------------------------
# crops, pads, flips
# --------------------------------------------------------------------------

def test_central_crop_box_rounding():
    x = rand_img((300, 301, 3))
    y = R.central_crop(x, 0.875)
    # start = int((300 - 262.5) / 2) = 18 -> 264 rows; int((301 - 263.375)/2) = 18 -> 265
    assert y.shape == (264, 265, 3)
    np.testing.assert_array_equal(y, x[18:282, 18:283])
    assert R.central_crop(rand_img((256, 256, 3)), 0.875).shape == (224, 224, 3)
    assert R.central_crop(rand_img((2, 4, 4, 3)), 0.5).shape == (2, 2, 2, 3)
    assert R.central_crop(x, 1.0) is not None and R.central_crop(x, 1.0).shape == x.shape
    for bad in (0.0, -0.1, 1.01):
        with pytest.raises(ValueError, match=r"within \(0, 1\]"):
            R.central_crop(x, bad)


@pytest.mark.parametrize("h,w,th,tw", [(5, 5, 2, 2), (5, 4, 8, 9), (6, 3, 3, 6), (1, 1, 4, 3),
                                       (7, 7, 7, 7)])
def test_resize_with_crop_or_pad_where_the_odd_pixel_goes(h, w, th, tw):
    x = rand_img((2, h, w, 1), np.int32)
    y = R.resize_with_crop_or_pad(x, th, tw)
    assert y.shape == (2, th, tw, 1)
    # brute force: output (i, j) takes input (i + dy, j + dx) where dy = (h - th) // 2 floor
    dy = (h - th) // 2 if th < h else -((th - h) // 2)
    dx = (w - tw) // 2 if tw < w else -((tw - w) // 2)
    for i in range(th):
        for j in range(tw):
            si, sj = i + dy, j + dx
            want = x[:, si, sj, 0] if 0 <= si < h and 0 <= sj < w else 0
            np.testing.assert_array_equal(y[:, i, j, 0], want)


def test_resize_with_crop_or_pad_known():
    x = np.arange(1, 6).reshape(1, 5, 1) * np.ones((5, 1, 1), int)
    # crop 5 -> 2: offset (5-2)//2 = 1 -> columns 1, 2
    assert R.resize_with_crop_or_pad(x, 5, 2)[0, :, 0].tolist() == [2, 3]
    # pad 2 -> 5: one zero left, two right
    y = R.resize_with_crop_or_pad(np.ones((1, 2, 1)), 1, 5)
    assert y[0, :, 0].tolist() == [0, 1, 1, 0, 0]
    with pytest.raises(ValueError, match="target_width must be > 0"):
        R.resize_with_crop_or_pad(x, 3, 0)


def test_crop_and_pad_to_bounding_box():
    x = rand_img((2, 6, 7, 3))
    np.testing.assert_array_equal(R.crop_to_bounding_box(x, 1, 2, 3, 4), x[:, 1:4, 2:6])
    np.testing.assert_array_equal(R.crop_to_bounding_box(x[0], 0, 0, 6, 7), x[0])
    p = R.pad_to_bounding_box(x[0], 2, 1, 9, 10)
    assert p.shape == (9, 10, 3) and p.dtype == np.uint8
    np.testing.assert_array_equal(p[2:8, 1:8], x[0])
    assert p.sum() == x[0].astype(int).sum()
    for args, msg in [((-1, 0, 2, 2), "offset_height must be >= 0"),
                      ((0, -1, 2, 2), "offset_width must be >= 0"),
                      ((0, 0, 0, 2), "target_height must be > 0"),
                      ((0, 0, 2, 0), "target_width must be > 0"),
                      ((5, 0, 2, 2), "height must be >= target \\+ offset"),
                      ((0, 4, 2, 4), "width must be >= target \\+ offset")]:
        with pytest.raises(ValueError, match=msg):
            R.crop_to_bounding_box(x, *args)
    for args, msg in [((0, 0, 5, 9), "height must be <= target - offset"),
                      ((0, 3, 6, 9), "width must be <= target - offset"),
                      ((-1, 0, 8, 8), "offset_height must be >= 0")]:
        with pytest.raises(ValueError, match=msg):
            R.pad_to_bounding_box(x, *args)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        R.crop_to_bounding_box(np.zeros((3, 3)), 0, 0, 1, 1)


def test_random_crop_is_a_window_and_seeded():
    x = np.arange(10 * 12 * 3).reshape(10, 12, 3)
    a = R.random_crop(x, [4, 5, 3], seed=7)
    b = R.random_crop(x, [4, 5, 3], seed=7)
    np.testing.assert_array_equal(a, b)
    i, j = np.argwhere(x[..., 0] == a[0, 0, 0])[0]
    np.testing.assert_array_equal(a, x[i:i + 4, j:j + 5])
    seen = {R.random_crop(x, [4, 5, 3], seed=s)[0, 0, 0] for s in range(40)}
    assert len(seen) > 10
    with pytest.raises(errors.InvalidArgumentError, match="Need value.shape >= size"):
        R.random_crop(x, [11, 5, 3])


def test_flips_and_rot90():
    x = rand_img((2, 3, 4, 1), np.int32)
    np.testing.assert_array_equal(R.flip_left_right(x), x[:, :, ::-1])
    np.testing.assert_array_equal(R.flip_up_down(x[0]), x[0, ::-1])
    r = R.rot90(x[0])
    # counter-clockwise: out[i, j] = in[j, W - 1 - i]
    assert r.shape == (4, 3, 1)
    for i in range(4):
        for j in range(3):
            assert r[i, j, 0] == x[0, j, 3 - i, 0]
    np.testing.assert_array_equal(R.rot90(x, 4), x)
    np.testing.assert_array_equal(R.rot90(x, -1), R.rot90(x, 3))
    np.testing.assert_array_equal(R.rot90(R.rot90(x, 1), 3), x)
    np.testing.assert_array_equal(R.transpose(x[0])[..., 0], x[0, ..., 0].T)


# --------------------------------------------------------------------------
# convert_image_dtype
# --------------------------------------------------------------------------

def test_convert_image_dtype_rules():
    u8 = np.array([0, 1, 127, 128, 254, 255], np.uint8)
    f = R.convert_image_dtype(u8, np.float32)
    np.testing.assert_array_equal(f, u8.astype(f32) * f32(1 / 255))   # multiply by reciprocal
    assert f[-1] == 1.0
    back = R.convert_image_dtype(f, np.uint8)                          # x * 255.5, truncated
    np.testing.assert_array_equal(back, u8)
    np.testing.assert_array_equal(R.convert_image_dtype(np.array([0.5, 0.999], f32), np.uint8), [127, 255])
    # int widening / narrowing
    np.testing.assert_array_equal(R.convert_image_dtype(u8, np.uint16), u8.astype(np.uint16) * 256)
    np.testing.assert_array_equal(R.convert_image_dtype(np.array([65535, 256, 255], np.uint16), np.uint8), [255, 1, 0])
    np.testing.assert_array_equal(R.convert_image_dtype(np.array([127, -128], np.int8), np.int32),
                                  [127 * 2 ** 24, -128 * 2 ** 24])
    # saturate
    over = np.array([-0.5, 0.2, 1.5], f32)
    np.testing.assert_array_equal(R.convert_image_dtype(over, np.uint8, saturate=True), [0, 51, 255])
    # TF docstring: int8 [1, 2, 3] -> float16 x / 127
    x8 = np.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], np.int8)
    h = R.convert_image_dtype(x8, np.float16)
    assert h.dtype == np.float16
    np.testing.assert_allclose(h.astype(f32)[0, 0], [0.00787, 0.01575, 0.02362], atol=1e-5)
    # same dtype: unchanged copy; float <-> float: plain cast
    np.testing.assert_array_equal(R.convert_image_dtype(u8, np.uint8), u8)
    assert R.convert_image_dtype(np.array([2.0], np.float64), f32).tolist() == [2.0]
    with pytest.raises(AttributeError):
        R.convert_image_dtype(u8, np.complex64)


# --------------------------------------------------------------------------
# colour adjustments (values from TF docstrings)
# --------------------------------------------------------------------------

X_DOC = np.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]], f32)


def test_adjust_brightness():
    np.testing.assert_allclose(R.adjust_brightness(X_DOC, 0.1), X_DOC + f32(0.1))
    u8 = np.array([[[0, 100, 250]]], np.uint8)
    y = R.adjust_brightness(u8, 0.1)   # +25.5/255, then x * 255.5 truncated, saturated
    assert y.dtype == np.uint8
    expect = np.clip((u8 * f32(1 / 255) + f32(0.1)) * f32(255.5), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(y, expect)
    assert y.tolist() == [[[25, 125, 255]]]
    assert R.adjust_brightness(u8, -1.0).tolist() == [[[0, 0, 0]]]


def test_adjust_contrast():
    # tf.image.adjust_contrast docstring, factor 2
    np.testing.assert_allclose(R.adjust_contrast(X_DOC, 2.0), [
        [[-3.5, -2.5, -1.5], [2.5, 3.5, 4.5]], [[8.5, 9.5, 10.5], [14.5, 15.5, 16.5]]])
    # per image, per channel mean (batched)
    b = rand_img((3, 4, 5, 3), np.float32)
    got = R.adjust_contrast(b, 0.3)
    m = b.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, (b - m) * 0.3 + m, rtol=1e-5, atol=1e-6)
    assert R.adjust_contrast(np.array([[[0, 255, 128]], [[255, 0, 128]]], np.uint8), 3.0).tolist() == \
        [[[0, 255, 128]], [[255, 0, 128]]]   # 128 is the mean: (128/255) * 255.5 -> 128


def test_adjust_saturation():
    # docstring: factor 0.5
    np.testing.assert_allclose(R.adjust_saturation(X_DOC, 0.5), [
        [[2., 2.5, 3.], [5., 5.5, 6.]], [[8., 8.5, 9.], [11., 11.5, 12.]]], rtol=1e-6)
    x = rand_img((2, 3, 4, 3), np.float32)
    np.testing.assert_allclose(R.adjust_saturation(x, 1.0), x, atol=1e-6)
    gray = R.adjust_saturation(x, 0.0)
    np.testing.assert_allclose(gray, np.repeat(x.max(-1, keepdims=True), 3, -1), atol=1e-6)


def test_adjust_hue_docstring_values():
    np.testing.assert_array_equal(R.adjust_hue(X_DOC, 0.2), np.array([
        [[2.3999996, 1., 3.], [5.3999996, 4., 6.]], [[8.4, 7., 9.], [11.4, 10., 12.]]], f32))
    ints = np.arange(1, 19, dtype=np.int32).reshape(3, 2, 3)
    assert R.adjust_hue(ints, 0.2).tolist() == [[[2, 1, 3], [5, 4, 6]], [[8, 7, 9], [11, 10, 12]],
                                                [[14, 13, 15], [17, 16, 18]]]
    x = rand_img((2, 5, 5, 3), np.float32)
    np.testing.assert_allclose(R.adjust_hue(x, 1.0), x, atol=1e-6)
    np.testing.assert_allclose(R.adjust_hue(R.adjust_hue(x, 0.3), -0.3), x, atol=1e-5)
    # pure red rotated by 1/3 becomes pure green
    np.testing.assert_allclose(R.adjust_hue(np.array([[[1.0, 0, 0]]], f32), 1 / 3), [[[0, 1, 0]]], atol=1e-6)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        R.adjust_hue(x, 1.5)
    with pytest.raises(errors.InvalidArgumentError, match="3 channels"):
        R.adjust_hue(np.zeros((2, 2, 4), f32), 0.1)


def ref_hsv(r, g, b):
    mx, mn = max(r, g, b), min(r, g, b)
    v, d = mx, mx - mn
    s = d / mx if mx > 0 else 0
    if d == 0:
        h = 0
    elif mx == r:
        h = ((g - b) / d / 6) % 1
    elif mx == g:
        h = ((b - r) / d + 2) / 6
    else:
        h = ((r - g) / d + 4) / 6
    return h, s, v


def test_rgb_hsv_round_trip_and_reference():
    x = rand_img((4, 5, 3), np.float32, seed=3)
    hsv = colorspace_ops.rgb_to_hsv(x)
    for i in range(4):
        for j in range(5):
            np.testing.assert_allclose(hsv[i, j], ref_hsv(*x[i, j].astype(float)), atol=1e-6)
    np.testing.assert_allclose(colorspace_ops.hsv_to_rgb(hsv), x, atol=1e-6)
    with pytest.raises(TypeError):
        colorspace_ops.rgb_to_hsv(np.zeros((2, 2, 3), np.uint8))


def test_grayscale():
    g = R.rgb_to_grayscale(X_DOC)
    assert g.shape == (2, 2, 1)
    np.testing.assert_allclose(g[0, 0, 0], 0.2989 * 1 + 0.5870 * 2 + 0.1140 * 3, rtol=1e-6)
    assert R.grayscale_to_rgb(g).shape == (2, 2, 3)


def test_per_image_standardization():
    # docstring values
    np.testing.assert_allclose(R.per_image_standardization(X_DOC), [
        [[-1.593255, -1.3035723, -1.0138896], [-0.7242068, -0.4345241, -0.1448414]],
        [[0.1448414, 0.4345241, 0.7242068], [1.0138896, 1.3035723, 1.593255]]], rtol=1e-6)
    # uniform image: stddev floor 1/sqrt(N) -> zeros, no NaN
    z = R.per_image_standardization(np.full((2, 3, 4, 3), 7, np.uint8))
    assert z.dtype == np.float32 and not np.isnan(z).any() and (z == 0).all()
    b = rand_img((3, 4, 4, 3))
    s = R.per_image_standardization(b)
    np.testing.assert_allclose(s.mean(axis=(1, 2, 3)), 0, atol=1e-6)
    np.testing.assert_allclose(s.std(axis=(1, 2, 3)), 1, atol=1e-5)


# --------------------------------------------------------------------------
# decoding
# --------------------------------------------------------------------------

def encode(arr, fmt, mode=None, **kw):
    from PIL import Image
    im = Image.fromarray(arr, mode) if mode else Image.fromarray(arr)
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def test_decode_png_modes_and_channels():
    rgb = rand_img((5, 7, 3))
    data = encode(rgb, "PNG")
    np.testing.assert_array_equal(decode_image_op.decode_image(data), rgb)
    np.testing.assert_array_equal(decode_image_op.decode_png(data, channels=3), rgb)
    rgba = decode_image_op.decode_png(data, channels=4)
    assert rgba.shape == (5, 7, 4) and (rgba[..., 3] == 255).all()
    gray = decode_image_op.decode_png(data, channels=1)
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    np.testing.assert_array_equal(gray[..., 0], (6968 * r + 23434 * g + 2366 * b + 16384) >> 15)

    L = rand_img((4, 6))
    out = decode_image_op.decode_image(encode(L, "PNG"))
    assert out.shape == (4, 6, 1)
    np.testing.assert_array_equal(out[..., 0], L)
    assert decode_image_op.decode_image(encode(L, "PNG"), channels=3).shape == (4, 6, 3)

    rgba_in = rand_img((3, 3, 4))
    np.testing.assert_array_equal(decode_image_op.decode_png(encode(rgba_in, "PNG")), rgba_in)
    np.testing.assert_array_equal(decode_image_op.decode_png(encode(rgba_in, "PNG"), channels=3), rgba_in[..., :3])

    la = rand_img((3, 3, 2))
    assert decode_image_op.decode_png(encode(la, "PNG", "LA")).shape == (3, 3, 2)


def test_decode_palette_and_16bit():
    from PIL import Image
    rgb = rand_img((6, 6, 3)) // 64 * 64
    im = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    out = decode_image_op.decode_png(buf.getvalue())
    assert out.shape == (6, 6, 3)
    np.testing.assert_array_equal(out, np.asarray(im.convert("RGB")))
    buf = io.BytesIO()
    im.save(buf, "PNG", transparency=0)
    assert decode_image_op.decode_png(buf.getvalue()).shape == (6, 6, 4)

    deep = (np.arange(12, dtype=np.uint16) * 5000).reshape(3, 4)
    buf = io.BytesIO()
    Image.fromarray(deep).save(buf, "PNG")
    out16 = decode_image_op.decode_png(buf.getvalue(), dtype=np.uint16)
    assert out16.dtype == np.uint16 and out16.shape == (3, 4, 1)
    np.testing.assert_array_equal(out16[..., 0], deep)
    np.testing.assert_array_equal(decode_image_op.decode_png(buf.getvalue())[..., 0], deep >> 8)


def test_decode_jpeg_gif_bmp():
    yy, xx = np.mgrid[0:16, 0:24]
    rgb = np.stack([yy * 15, xx * 10, 255 - yy * 8 - xx * 5], -1).astype(np.uint8)  # smooth
    j = decode_image_op.decode_jpeg(encode(rgb, "JPEG", quality=95))
    assert j.shape == (16, 24, 3) and j.dtype == np.uint8
    assert np.abs(j.astype(int) - rgb).mean() < 4
    assert decode_image_op.decode_jpeg(encode(rgb, "JPEG"), channels=1).shape == (16, 24, 1)
    # decode_png / decode_jpeg accept each other's data as in TF
    assert decode_image_op.decode_png(encode(rgb, "JPEG")).shape == (16, 24, 3)
    np.testing.assert_array_equal(decode_image_op.decode_image(encode(rgb, "BMP")), rgb)
    # animated GIF -> 4-D, or the first frame
    from PIL import Image
    frames = [Image.fromarray(np.full((4, 5, 3), v, np.uint8)) for v in (0, 128, 255)]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    g = decode_image_op.decode_image(buf.getvalue())
    assert g.shape == (3, 4, 5, 3)
    assert decode_image_op.decode_gif(buf.getvalue()).shape == (3, 4, 5, 3)
    assert decode_image_op.decode_image(buf.getvalue(), expand_animations=False).shape == (4, 5, 3)
    assert decode_image_op.decode_image(encode(rgb, "PNG"), dtype=np.float32).max() <= 1.0


def test_decode_errors():
    with pytest.raises(errors.InvalidArgumentError, match="Unknown image file format"):
        decode_image_op.decode_image(b"this is not an image")
    png = encode(rand_img((8, 8, 3)), "PNG")
    with pytest.raises(errors.InvalidArgumentError, match="Invalid PNG data"):
        decode_image_op.decode_png(png[:40])
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        decode_image_op.decode_jpeg(b"\xff\xd8\xff" + b"\x00" * 20)
    with pytest.raises(errors.InvalidArgumentError, match="channels must be 0, 1, 3, or 4"):
        decode_image_op.decode_image(png, channels=2)
    with pytest.raises(errors.InvalidArgumentError, match="Expected a GIF"):
        decode_image_op.decode_gif(png)


def test_sample_images_decode(tmp_path):
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2] / "data" / "images"
    files = sorted(root.iterdir())
    assert files
    for f in files:
        img = decode_image_op.decode_image(io_ops.read_file(str(f)), channels=3)
        assert img.ndim == 3 and img.shape[-1] == 3 and img.dtype == np.uint8
    with pytest.raises(errors.NotFoundError):
        io_ops.read_file(str(tmp_path / "missing.png"))


# --------------------------------------------------------------------------
# property test: the optimised bilinear path equals the per-pixel reference
# --------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 2), h=st.integers(1, 9), w=st.integers(1, 9), c=st.sampled_from([1, 3, 4]),
       oh=st.integers(1, 12), ow=st.integers(1, 12), mode=st.sampled_from(["half", "legacy", "align"]),
       dtype=st.sampled_from([np.uint8, np.float32, np.int32]))
def test_bilinear_property(n, h, w, c, oh, ow, mode, dtype):
    x = rand_img((n, h, w, c), dtype, seed=h * 31 + w)
    kw = {"half": dict(half_pixel_centers=True), "legacy": {}, "align": dict(align_corners=True)}[mode]
    np.testing.assert_array_equal(resize_ops.resize_bilinear(x, (oh, ow), **kw), ref_bilinear(x, oh, ow, **kw))
    np.testing.assert_array_equal(resize_ops.resize_nearest_neighbor(x, (oh, ow), **kw), ref_nearest(x, oh, ow, **kw))


# --------------------------------------------------------------------------
# independent cross-check: PyTorch's F.interpolate uses the same conventions as TF2 for bilinear
# (half-pixel, no antialias; it evaluates the lerp as w0*a + w1*b instead of TF's a + (b - a)*w,
# so results agree to float32 rounding) and for antialiased bilinear/bicubic (Keys a=-0.5 kernel
# widened by the scale, weights renormalised at the border). Its outputs are recorded in
# tests/data/torch_interpolate.npz by tests/data/record_torch_interpolate.py (torch 2.13.0 CPU).
# --------------------------------------------------------------------------

TORCH_CASES = [(16, 16, 5, 7), (9, 13, 4, 4), (20, 11, 20, 3), (8, 8, 16, 12)]


@pytest.fixture(scope="module")
def torch_outputs():
    path = pathlib.Path(__file__).resolve().parents[1] / "data" / "torch_interpolate.npz"
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("h,w,oh,ow", TORCH_CASES)
def test_matches_pytorch_interpolate(h, w, oh, ow, torch_outputs):
    x = rand_img((2, h, w, 3), np.float32, seed=h + w)
    ref = {name: torch_outputs[f"{h}x{w}_to_{oh}x{ow}/{name}"]
           for name in ("bilinear", "bilinear_u8", "bilinear_aa", "bicubic_aa")}
    np.testing.assert_allclose(R.resize(x, [oh, ow]), ref["bilinear"], atol=1e-6)
    u8 = (x * 255).astype(np.uint8)
    np.testing.assert_allclose(R.resize(u8, [oh, ow]), ref["bilinear_u8"], rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(R.resize(x, [oh, ow], antialias=True), ref["bilinear_aa"], atol=1e-6)
    np.testing.assert_allclose(R.resize(x, [oh, ow], "bicubic", antialias=True), ref["bicubic_aa"], atol=1e-6)
