"""Reference convolution gradients for notebook 12's lab (section 8): the filter gradient as one
GEMM, the input gradient as one GEMM and a col2im, and both from the definition, one output pixel
and one tap at a time (``*_brute``), which the locked tests grade against.

With ``Y = cols(X) @ W`` (``cols`` the im2col matrix of ``workbook.references.im2col``, ``W`` the
HWIO filter reshaped to ``(kh*kw*C, K)``) and ``dY`` the gradient of the loss with respect to the
NHWC output:

- ``Conv2DBackpropFilter``: ``dW = cols(X)^T @ dY`` (one GEMM);
- ``Conv2DBackpropInput``: ``dcols = dY @ W^T`` (one GEMM), then ``col2im`` adds each row of
  ``dcols`` back onto the input pixels its receptive field read (windows overlap, so it adds) and
  drops what landed on the padding.

Like ``im2col``, written without a call into ``aicslib``; stride is one integer for both
directions, padding "SAME", "VALID" or ``[(top, bottom), (left, right)]`` (TensorFlow's rule).
"""
import numpy as np

from .im2col import geometry, im2col


def col2im(cols, x_shape, kh, kw, stride, padding):
    """The adjoint of ``im2col``: ``cols`` of shape (N*Ho*Wo, kh*kw*C) scattered back and summed
    onto an array of ``x_shape``; one strided slice per tap, no loop over pixels."""
    N, H, W, C = x_shape
    Ho, Wo, (top, bottom), (left, right) = geometry(x_shape, kh, kw, stride, padding)
    blocks = np.asarray(cols).reshape(N, Ho, Wo, kh, kw, C)
    xp = np.zeros((N, H + top + bottom, W + left + right, C), dtype=blocks.dtype)
    for i in range(kh):
        for j in range(kw):
            xp[:, i:i + stride * (Ho - 1) + 1:stride, j:j + stride * (Wo - 1) + 1:stride, :] += blocks[:, :, :, i, j, :]
    return xp[:, top:top + H, left:left + W, :]


def conv2d_backprop_filter(x, dy, filter_shape, stride, padding):
    """dL/dw for ``y = conv2d(x, w)``: im2col, then one GEMM."""
    kh, kw, _, K = filter_shape
    cols = im2col(x, kh, kw, stride, padding)
    return (cols.T @ np.asarray(dy).reshape(-1, K)).reshape(filter_shape)


def conv2d_backprop_input(dy, w, x_shape, stride, padding):
    """dL/dx for ``y = conv2d(x, w)``: one GEMM, then col2im."""
    kh, kw, _, K = w.shape
    dcols = np.asarray(dy).reshape(-1, K) @ np.asarray(w).reshape(-1, K).T
    return col2im(dcols, tuple(x_shape), kh, kw, stride, padding)


def conv2d_brute(x, w, stride, padding):
    """The forward convolution from its definition (for checking the two GEMM forms)."""
    N, H, W, C = x.shape
    kh, kw, _, K = w.shape
    Ho, Wo, (top, _), (left, _) = geometry(x.shape, kh, kw, stride, padding)
    y = np.zeros((N, Ho, Wo, K), dtype=np.float64)
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for i in range(kh):
                    for j in range(kw):
                        r, c = oh * stride + i - top, ow * stride + j - left
                        if 0 <= r < H and 0 <= c < W:
                            y[n, oh, ow] += x[n, r, c].astype(np.float64) @ w[i, j].astype(np.float64)
    return y


def conv2d_backprop_filter_brute(x, dy, filter_shape, stride, padding):
    """dw[i, j, c, k] = sum over (n, oh, ow) of x[n, oh*s+i-top, ow*s+j-left, c] * dy[n, oh, ow, k],
    in float64: the chain rule applied to the definition, pixel by pixel."""
    N, H, W, _ = x.shape
    kh, kw, _, _ = filter_shape
    Ho, Wo, (top, _), (left, _) = geometry(x.shape, kh, kw, stride, padding)
    dw = np.zeros(filter_shape, dtype=np.float64)
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for i in range(kh):
                    for j in range(kw):
                        r, c = oh * stride + i - top, ow * stride + j - left
                        if 0 <= r < H and 0 <= c < W:
                            dw[i, j] += np.outer(x[n, r, c], dy[n, oh, ow])
    return dw


def conv2d_backprop_input_brute(dy, w, x_shape, stride, padding):
    """dx[n, r, c] = sum over the (output pixel, tap) pairs that read input pixel (r, c) of
    w[i, j] @ dy[n, oh, ow], in float64."""
    N, H, W, _ = x_shape
    kh, kw, _, _ = w.shape
    Ho, Wo, (top, _), (left, _) = geometry(x_shape, kh, kw, stride, padding)
    dx = np.zeros(x_shape, dtype=np.float64)
    for n in range(N):
        for oh in range(Ho):
            for ow in range(Wo):
                for i in range(kh):
                    for j in range(kw):
                        r, c = oh * stride + i - top, ow * stride + j - left
                        if 0 <= r < H and 0 <= c < W:
                            dx[n, r, c] += w[i, j].astype(np.float64) @ dy[n, oh, ow].astype(np.float64)
    return dx
