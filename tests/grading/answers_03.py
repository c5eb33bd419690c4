"""Plausible wrong answers for notebook 03 (preprocessing).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "my_resize_bilinear": {
        "library_call": """
return aics.image.resize(images, [out_h, out_w]).numpy()
""",
        "no_half_pixel_centres": """
x = images.astype(np.float32)
_, H, W, _ = x.shape

def weights(in_size, out_size):
    src = np.arange(out_size, dtype=np.float32) * np.float32(in_size / out_size)
    lo = np.minimum(np.floor(src).astype(int), in_size - 1)
    hi = np.minimum(lo + 1, in_size - 1)
    return lo, hi, (src - np.floor(src)).astype(np.float32)

y0, y1, ly = weights(H, out_h)
x0, x1, lx = weights(W, out_w)
lx = lx[None, None, :, None]
top = x[:, y0][:, :, x0] + (x[:, y0][:, :, x1] - x[:, y0][:, :, x0]) * lx
bottom = x[:, y1][:, :, x0] + (x[:, y1][:, :, x1] - x[:, y1][:, :, x0]) * lx
return (top + (bottom - top) * ly[None, :, None, None]).astype(np.float32)
""",
        "nearest_neighbour": """
_, H, W, _ = images.shape
rows = np.minimum(((np.arange(out_h) + 0.5) * H / out_h).astype(int), H - 1)
cols = np.minimum(((np.arange(out_w) + 0.5) * W / out_w).astype(int), W - 1)
return images[:, rows][:, :, cols].astype(np.float32)
""",
    },
    "short_side_crop": {
        "squashed_to_square": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
x = aics.image.resize(x, [short, short])
return aics.image.resize_with_crop_or_pad(x, crop, crop).numpy()
""",
        "long_side_fitted": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
x = aics.image.resize(x, [short, short], preserve_aspect_ratio=True)
return aics.image.resize_with_crop_or_pad(x, crop, crop).numpy()
""",
        "top_left_crop": """
x = aics.image.convert_image_dtype(aics.convert_to_tensor(img_u8), aics.float32)
h, w = x.shape.as_list()[:2]
new_h, new_w = (short, int(w * short / h + 0.5)) if h <= w else (int(h * short / w + 0.5), short)
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
    },
}
