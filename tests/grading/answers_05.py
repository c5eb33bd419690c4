"""Plausible wrong answers for notebook 05 (convolution-internals).

Each replaces the release stub of its solution cell and must lose exactly that exercise's points.
"""

WRONG_ANSWERS = {
    "my_im2col": {
        "library_call": """
import sys as _sys
_mods = [m for n, m in list(_sys.modules.items()) if n.startswith("aicslib.kernels") and m is not None]
_pad = next(getattr(m, "pad_nhwc") for m in _mods if hasattr(m, "pad_nhwc"))
_view = next(getattr(m, "im2col_view") for m in _mods if hasattr(m, "im2col_view"))
xp = _pad(x, pt, pb, pl, pr)
return np.ascontiguousarray(_view(xp, kh, kw, Ho, Wo, (stride, stride))).reshape(N * Ho * Wo, kh * kw * C)
""",
        "channel_major_columns": """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=-1).reshape(N * Ho * Wo, kh * kw * C)
""",
        "symmetric_padding": """
xp = np.pad(x, ((0, 0), (pb, pb), (pr, pr), (0, 0)))
taps = [xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride]
        for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
""",
        "stride_ignored": """
xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
taps = [xp[:, i:i + Ho, j:j + Wo] for i in range(kh) for j in range(kw)]
return np.stack(taps, axis=3).reshape(N * Ho * Wo, kh * kw * C)
""",
    },
}
