"""Reference im2col for notebook 12's exercise ``my_im2col`` (section 8).

``im2col(x, kh, kw, stride, padding)`` turns an NHWC batch into the matrix whose row
``(n, oh, ow)`` is the receptive field of output pixel ``(n, oh, ow)``, flattened in the
order ``(i, j, c)`` (the rows of an HWIO filter reshaped to ``(kh*kw*C, K)``), so that a
convolution is one matrix product: ``im2col(x) @ w.reshape(-1, K)``.

Output size and padding follow TensorFlow (``GetWindowedOutputSizeVerbose``, dilation 1):

- ``"VALID"``: no padding, ``out = ceil((n - k + 1) / stride)``;
- ``"SAME"``: ``out = ceil(n / stride)``; the total padding
  ``max((out - 1) * stride + k - n, 0)`` is split with the smaller half before
  (top/left) and the odd pixel after (bottom/right);
- explicit ``[(top, bottom), (left, right)]``: ``out = (n + before + after - k) // stride + 1``.

Written independently of aicslib (no call into ``aicslib.kernels``), so the locked test compares
the student's answer and aicslib's own im2col with one and the same third implementation.
``im2col_brute`` is the definition itself, one output pixel at a time: slow, for checking
``im2col`` on small inputs.
"""
import numpy as np


def output_size_and_padding(n, k, stride, padding):
    """(out, before, after) of one spatial dimension of size ``n`` for a window ``k``;
    ``padding`` is "SAME", "VALID" or a (before, after) pair."""
    if padding == "VALID":
        return -(-(n - k + 1) // stride), 0, 0
    if padding == "SAME":
        out = -(-n // stride)
        total = max((out - 1) * stride + k - n, 0)
        return out, total // 2, total - total // 2
    before, after = padding
    return (n + before + after - k) // stride + 1, before, after


def _per_dimension(padding):
    return (padding, padding) if isinstance(padding, str) else tuple(padding)


def geometry(x_shape, kh, kw, stride, padding):
    """(Ho, Wo, (top, bottom), (left, right)) for an NHWC input of shape ``x_shape``."""
    _, H, W, _ = x_shape
    ph, pw = _per_dimension(padding)
    Ho, top, bottom = output_size_and_padding(H, kh, stride, ph)
    Wo, left, right = output_size_and_padding(W, kw, stride, pw)
    return Ho, Wo, (top, bottom), (left, right)


def im2col(x, kh, kw, stride, padding):
    """The im2col matrix, shape ``(N*Ho*Wo, kh*kw*C)``, dtype of ``x``: one strided slice per tap."""
    x = np.asarray(x)
    N, _, _, C = x.shape
    Ho, Wo, (top, bottom), (left, right) = geometry(x.shape, kh, kw, stride, padding)
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.empty((N, Ho, Wo, kh, kw, C), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, :, i, j, :] = xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride, :]
    return out.reshape(N * Ho * Wo, kh * kw * C)


def im2col_brute(x, kh, kw, stride, padding):
    """The same matrix from the definition: for every output pixel, every tap, the input pixel
    it reads or 0 where the window hangs over the border."""
    x = np.asarray(x)
    N, H, W, C = x.shape
    Ho, Wo, (top, _), (left, _) = geometry(x.shape, kh, kw, stride, padding)
    out = np.zeros((N, Ho, Wo, kh, kw, C), dtype=x.dtype)
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for i in range(kh):
                    for j in range(kw):
                        r, c = oh * stride + i - top, ow * stride + j - left
                        if 0 <= r < H and 0 <= c < W:
                            out[n, oh, ow, i, j] = x[n, r, c]
    return out.reshape(N * Ho * Wo, kh * kw * C)
