"""Plausible wrong answers for notebook 06 (the input pipeline: ImageNet's evaluation crop, on-the-fly
augmentation, sequence padding), and different correct ones.

Each wrong answer replaces the release stub of its solution cell and must lose exactly that
exercise's points; each correct one must score full marks.
"""

_SHORT_SIDE_SIZE = """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
h, w = x.shape.as_list()[:2]
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)
"""

WRONG_ANSWERS = {
    "short_side_crop": {
        "squashed_to_square": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
x = aics.image.resize(x, [short, short])
return aics.image.resize_with_crop_or_pad(x, crop, crop).numpy()
""",
        # the library's own aspect-ratio option: fits the long side, not the short one
        "long_side_fitted": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
x = aics.image.resize(x, [short, short], preserve_aspect_ratio=True)
return aics.image.resize_with_crop_or_pad(x, crop, crop).numpy()
""",
        "top_left_crop": _SHORT_SIDE_SIZE + """
return aics.image.resize(x, [new_h, new_w]).numpy()[:crop, :crop, :]
""",
        "not_scaled_to_unit_range": """
x = aics.cast(aics.convert_to_tensor(img_u8), aics.float32)
h, w = x.shape.as_list()[:2]
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)
x = aics.image.resize(x, [new_h, new_w]).numpy()
top, left = (new_h - crop) // 2, (new_w - crop) // 2
return x[top:top + crop, left:left + crop, :]
""",
        # the long side truncated instead of rounded: 451 * 256 / 300 = 384.85 becomes 384
        "long_side_truncated": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
h, w = x.shape.as_list()[:2]
new_h, new_w = (short, int(w * short / h)) if h <= w else (int(h * short / w), short)
x = aics.image.resize(x, [new_h, new_w]).numpy()
top, left = (new_h - crop) // 2, (new_w - crop) // 2
return x[top:top + crop, left:left + crop, :]
""",
        # the odd pixel of the margin cut at the top/left instead of the bottom/right
        "crop_offset_rounded_up": _SHORT_SIDE_SIZE + """
x = aics.image.resize(x, [new_h, new_w]).numpy()
top, left = (new_h - crop + 1) // 2, (new_w - crop + 1) // 2
return x[top:top + crop, left:left + crop, :]
""",
        # the package's reference, called
        "calls_the_package_reference": """
from workbook.references.image_resize import short_side_crop
return short_side_crop(img_u8, short, crop).astype(np.float32)
""",
        # the package's reference, copied: right values, one Python iteration per output row
        "copies_the_package_reference": """
import math
img = np.asarray(img_u8, np.float64) / 255.0
h, w, c = img.shape
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)
top, left = (new_h - crop) // 2, (new_w - crop) // 2

def neighbours(i, in_size, out_size, offset):
    src = (offset + i + 0.5) * in_size / out_size - 0.5
    return max(math.floor(src), 0), min(math.ceil(src), in_size - 1), src - math.floor(src)

cols = [neighbours(j, w, new_w, left) for j in range(crop)]
x0 = np.array([lo for lo, _, _ in cols])
x1 = np.array([hi for _, hi, _ in cols])
wx = np.array([wt for _, _, wt in cols])[:, None]
out = np.zeros((crop, crop, c))
for i in range(crop):
    y0, y1, wy = neighbours(i, h, new_h, top)
    upper = img[y0, x0] * (1 - wx) + img[y0, x1] * wx
    lower = img[y1, x0] * (1 - wx) + img[y1, x1] * wx
    out[i] = upper * (1 - wy) + lower * wy
return out.astype(np.float32)
""",
    },
}

CORRECT_ANSWERS = {
    "short_side_crop": {
        # resized as uint8 (float32 in [0, 255]), scaled to [0, 1] afterwards, cut with crop_to_bounding_box
        "resize_uint8_then_scale": """
h, w = np.shape(img_u8)[:2]
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)
x = aics.image.resize(img_u8, [new_h, new_w]) / 255.0
x = aics.image.crop_to_bounding_box(x, (new_h - crop) // 2, (new_w - crop) // 2, crop, crop)
return x.numpy().astype(np.float32)
""",
        # NumPy only, float64: the kept rows and columns' neighbours gathered with index arrays
        "numpy_float64_gather": """
img = np.asarray(img_u8, np.float64) / 255.0
h, w = img.shape[:2]
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)

def taps(in_size, out_size, first):
    src = (first + np.arange(crop) + 0.5) * in_size / out_size - 0.5
    lo = np.maximum(np.floor(src).astype(int), 0)
    hi = np.minimum(np.ceil(src).astype(int), in_size - 1)
    return lo, hi, src - np.floor(src)

y0, y1, wy = taps(h, new_h, (new_h - crop) // 2)
x0, x1, wx = taps(w, new_w, (new_w - crop) // 2)
wx, wy = wx[None, :, None], wy[:, None, None]
top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
return (top * (1 - wy) + bottom * wy).astype(np.float32)
""",
    },
}

WRONG_ANSWERS["pad_sequences"] = {
    # pads at the end by default: Keras pads at the front
    "pads_at_the_end": """
out = np.full((len(sequences), maxlen), value, np.int32)
for i, seq in enumerate(sequences):
    kept = list(seq)[-maxlen:] if truncating == "pre" else list(seq)[:maxlen]
    out[i, :len(kept)] = kept
return out
""",
    # truncates from the end whatever `truncating` says
    "always_keeps_the_start": """
out = np.full((len(sequences), maxlen), value, np.int32)
for i, seq in enumerate(sequences):
    kept = list(seq)[:maxlen]
    if kept:
        if padding == "pre":
            out[i, maxlen - len(kept):] = kept
        else:
            out[i, :len(kept)] = kept
return out
""",
    # `value` ignored: pads with zeros
    "ignores_value": """
out = np.zeros((len(sequences), maxlen), np.int32)
for i, seq in enumerate(sequences):
    kept = list(seq)[-maxlen:] if truncating == "pre" else list(seq)[:maxlen]
    if kept:
        if padding == "pre":
            out[i, maxlen - len(kept):] = kept
        else:
            out[i, :len(kept)] = kept
return out
""",
    # int64, NumPy's default integer: Keras returns int32
    "int64_result": """
out = np.full((len(sequences), maxlen), value, np.int64)
for i, seq in enumerate(sequences):
    kept = list(seq)[-maxlen:] if truncating == "pre" else list(seq)[:maxlen]
    if kept:
        if padding == "pre":
            out[i, maxlen - len(kept):] = kept
        else:
            out[i, :len(kept)] = kept
return out
""",
    # the shortcut: the library's function
    "calls_the_library": """
return pad_sequences(sequences, maxlen=maxlen, padding=padding, truncating=truncating, value=value)
""",
    # the package's reference
    "copies_the_package_reference": """
from workbook.references.sequences import pad
return pad(sequences, maxlen, padding, truncating, value)
""",
}
CORRECT_ANSWERS["pad_sequences"] = {
    # list arithmetic, then one array
    "lists_then_array": """
rows = []
for seq in sequences:
    seq = list(seq)
    kept = seq[max(len(seq) - maxlen, 0):] if truncating == "pre" else seq[:maxlen]
    fill = [value] * (maxlen - len(kept))
    rows.append(fill + kept if padding == "pre" else kept + fill)
return np.array(rows, dtype=np.int32).reshape(len(sequences), maxlen)
""",
}
