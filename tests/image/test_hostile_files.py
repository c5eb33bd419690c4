"""Hostile image files (issue 17): structure is validated and the decoded size bounded
before anything is allocated; every failure is TF's error class naming the op.

References: the PNG specification (chunk CRCs, IHDR, IEND), GIF89a's block
structure, JPEG markers, BMP headers; valid files are compared with Pillow's
own decoding of the same bytes.
"""
import io
import struct
import time
import tracemalloc
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PIL import Image

import aicslib as aics
from aicslib.kernels import image_file_checks

Invalid = aics.errors.InvalidArgumentError


def _chunk(ctype, body):
    return struct.pack(">I", len(body)) + ctype + body + \
        struct.pack(">I", zlib.crc32(ctype + body) & 0xFFFFFFFF)


def _png(width, height, idat, color=6, depth=8, iend=True):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat)
    return out + (_chunk(b"IEND", b"") if iend else b"")


def _encoded(fmt, mode="RGB", size=(5, 4), seed=0, **kw):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 256, size=(size[1], size[0], len(mode) if mode != "P" else 1), dtype=np.uint8)
    im = Image.fromarray(arr[..., 0] if mode in ("L", "P") else arr, mode="L" if mode == "P" else mode)
    if mode == "P":
        im = im.convert("P")
    buf = io.BytesIO()
    im.save(buf, format=fmt, **kw)
    return buf.getvalue()


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def test_truncated_png_claiming_11000_squared_pixels_is_refused_fast():
    data = _png(11000, 11000, zlib.compress(bytes(800)))   # ~930 bytes in all
    assert len(data) < 1000
    start = time.perf_counter()

    def decode():
        with pytest.raises(Invalid, match=r"DecodePng: Invalid PNG data, size \d+"):
            aics.io.decode_png(data)
    peak = _peak(decode)
    assert time.perf_counter() - start < 2.0
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB"


def test_png_with_a_bad_idat_crc_is_refused():
    good = _encoded("PNG")
    aics.io.decode_png(good)
    i = good.index(b"IDAT")
    (length,) = struct.unpack(">I", good[i - 4:i])
    crc_at = i + 4 + length
    bad = good[:crc_at] + bytes([good[crc_at] ^ 1]) + good[crc_at + 1:]
    with pytest.raises(Invalid, match="Invalid PNG data.*CRC error in chunk 'IDAT'"):
        aics.io.decode_png(bad)


def test_png_without_iend_is_refused():
    good = _encoded("PNG")
    cut = good[:good.index(b"IEND") - 4]
    with pytest.raises(Invalid, match="Invalid PNG data.*no IEND"):
        aics.image.decode_image(cut)


def test_png_whose_data_is_short_is_refused_without_inflating_it_all():
    # Correct CRCs and IEND, but the zlib stream holds half the scanlines.
    raw = b"".join(b"\0" + bytes(4 * 64) for _ in range(32))
    data = _png(64, 64, zlib.compress(raw))
    with pytest.raises(Invalid, match=r"Invalid PNG data.*of 16448 bytes \(truncated\)"):
        aics.io.decode_png(data)


@pytest.mark.parametrize("fmt,kw", [("PNG", {}), ("PNG", {"mode": "L"}), ("PNG", {"mode": "P"}),
                                    ("PNG", {"mode": "RGBA"}), ("GIF", {}), ("BMP", {}),
                                    ("JPEG", {}), ("BMP", {"mode": "L"})])
def test_valid_files_decode_as_pillow_does(fmt, kw):
    data = _encoded(fmt, size=(7, 5), **kw)
    got = aics.image.decode_image(data, expand_animations=False).numpy()
    ref = Image.open(io.BytesIO(data))
    ref = ref.convert("RGBA" if ref.mode in ("RGBA", "PA") else "RGB" if ref.mode not in ("L",) else "L")
    ref = np.asarray(ref)
    ref = ref[..., None] if ref.ndim == 2 else ref
    np.testing.assert_array_equal(got, ref)


def test_interlaced_png_decodes():
    data = _encoded("PNG", size=(13, 11), interlace=True)
    got = aics.io.decode_png(data).numpy()
    np.testing.assert_array_equal(got, np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))


def test_all_black_bmp_decodes():
    buf = io.BytesIO()
    Image.new("RGB", (6, 2)).save(buf, format="BMP")
    assert aics.io.decode_bmp(buf.getvalue()).numpy().shape == (2, 6, 3)


_FILES = {fmt: _encoded(fmt, size=(9, 6), seed=3) for fmt in ("PNG", "GIF", "BMP", "JPEG")}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(sorted(_FILES)), frac=st.floats(0.0, 0.999))
def test_any_truncation_is_invalid_argument(fmt, frac):
    data = _FILES[fmt]
    cut = data[:int(len(data) * frac)]
    with pytest.raises(Invalid):
        aics.image.decode_image(cut)


@settings(max_examples=120, deadline=None)
@given(fmt=st.sampled_from(sorted(_FILES)), where=st.floats(0.0, 0.999), bit=st.integers(0, 7))
def test_bit_flips_never_leak_raw_errors(fmt, where, bit):
    data = bytearray(_FILES[fmt])
    i = int(len(data) * where)
    data[i] ^= 1 << bit
    try:
        out = aics.image.decode_image(bytes(data), expand_animations=False).numpy()
    except (Invalid, aics.errors.ResourceExhaustedError) as e:
        assert "Decode" in str(e)
    else:
        assert fmt != "PNG", "a flipped PNG byte must fail its CRC or the signature check"
        assert out.dtype == np.uint8 and out.ndim == 3


def _gif_of_frames(n, width=1000, height=1000):
    """n 1x1 frames on a width x height canvas: tiny file, huge decoded tensor."""
    head = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + bytes(6)   # 2-color table
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return head + frame * n + b"\x3b"


def test_gif_of_thousands_of_frames_is_refused_before_allocating():
    data = _gif_of_frames(2000)
    assert len(data) < 40_000
    start = time.perf_counter()

    def decode():
        with pytest.raises(aics.errors.ResourceExhaustedError,
                           match=r"DecodeGif: OOM when allocating tensor with shape\[2000,1000,1000,3\]"):
            aics.io.decode_gif(data)
    peak = _peak(decode)
    assert time.perf_counter() - start < 2.0 and peak < 8 << 20
    # One frame of it is fine.
    assert aics.image.decode_image(data, expand_animations=False).shape == (1000, 1000, 3)


def test_gif_frame_outside_its_canvas_is_refused():
    data = _gif_of_frames(1, width=1, height=1).replace(struct.pack("<HHHH", 0, 0, 1, 1),
                                                        struct.pack("<HHHH", 5, 0, 1, 1))
    with pytest.raises(Invalid, match="Invalid GIF data.*outside the 1x1 canvas"):
        aics.io.decode_gif(data)


def test_bmp_whose_pixels_are_missing_is_refused():
    data = _encoded("BMP", size=(64, 64))
    with pytest.raises(Invalid, match="Incomplete bmp content, requires at least"):
        aics.io.decode_bmp(data[:-100])
    with pytest.raises(Invalid, match="requires at least 54 bytes"):
        aics.io.decode_bmp(data[:40])


def test_jpeg_claiming_a_huge_frame_is_refused_before_allocating(monkeypatch):
    data = bytearray(_encoded("JPEG", size=(8, 8)))
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", 65000, 65000)
    with pytest.raises(aics.errors.ResourceExhaustedError, match=r"shape\[65000,65000,3\]"):
        aics.io.decode_jpeg(bytes(data))


def test_decode_budget_is_the_documented_constant(monkeypatch):
    data = _encoded("PNG", size=(20, 20))
    monkeypatch.setattr(image_file_checks, "MAX_DECODED_BYTES", 20 * 20 * 3 - 1)
    with pytest.raises(aics.errors.ResourceExhaustedError, match=r"shape\[20,20,3\]"):
        aics.io.decode_png(data)
    monkeypatch.setattr(image_file_checks, "MAX_DECODED_BYTES", 20 * 20 * 3)
    assert aics.io.decode_png(data).shape == (20, 20, 3)
