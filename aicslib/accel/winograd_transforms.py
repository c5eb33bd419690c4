"""Winograd's transforms, F(2x2, 3x3) and F(4x4, 3x3): NumPy's and the glue to the C ones.

``aicslib/kernels/conv_ops.py`` explains Winograd's algorithm on F(2x2, 3x3)
and computes it plainly, whole tiles at a time. Here are the transforms the
speed layer's driver (``conv_winograd.py``) and filter gradient
(``conv_backprop_filter.py``) run per block of tiles: in C where the library
is built (``c_winograd``: one pass over the tiles each), else in NumPy, as a
column pass and a row pass of whole-array additions, one per non-zero of the
transform matrix (``combine``: B^T and A^T hold only 0 and +-1).

F(4x4, 3x3) works on 6x6 input tiles giving 4x4 output tiles (Lavin & Gray
2016, interpolation points 0, +-1, +-2, inf): 36 multiplies per 16 outputs
instead of 144, i.e. 4x fewer than direct and 1.78x fewer than F(2x2, 3x3).
The price is transform matrices with entries other than 0 and +-1 (more
additions per tile, more float32 rounding: about 1e-5 of the output's largest
value at 256 channels instead of 5e-7; float64 stays exact to 1e-11).
"""
import numpy as np

from ..kernels.conv_ops import WINOGRAD_AT, WINOGRAD_BT, WINOGRAD_G
from . import c_winograd
from .work_sharder import gemm, padded_slab, run_blocks, scratch

__all__ = [
    "WINOGRAD_BT", "WINOGRAD_G", "WINOGRAD_AT", "WINOGRAD_G2",
    "WINOGRAD4_BT", "WINOGRAD4_G", "WINOGRAD4_AT", "WINOGRAD4_G2", "WINOGRAD4_AT2", "WINOGRAD4_A2",
    "combine", "combine_grouped", "transform_filters", "native_winograd_transforms", "c_input_transform",
    "tile_columns",
    "winograd_filter_transform", "winograd_input_transform", "winograd2_output", "grad_output_transform2",
    "winograd4_filter_transform", "winograd4_input_transform", "winograd4_output", "grad_output_transform4",
]

_F32 = np.float32


def combine(coeffs, terms, out):
    """``out[...] = sum_i coeffs[i] * terms[i]``, one row of a transform matrix.

    The Winograd B^T and A^T matrices contain only 0 and +-1, so a row is a
    few additions/subtractions of whole arrays; zero coefficients cost nothing.
    A row whose non-zero entries share one magnitude (G's ``.5, -.5, .5``) is
    done as +-1 additions and a final scaling.
    """
    nz = [(float(c), t) for c, t in zip(coeffs, terms) if c != 0]
    scale = abs(nz[0][0])
    if all(abs(c) == scale for c, _ in nz) and scale != 1:
        combine([c / scale for c, _ in nz], [t for _, t in nz], out)
        return np.multiply(out, scale, out=out)
    (c0, t0), rest = nz[0], nz[1:]
    if rest and c0 == 1 and abs(rest[0][0]) == 1:
        c1, t1 = rest.pop(0)
        (np.add if c1 == 1 else np.subtract)(t0, t1, out=out)
    elif rest and c0 == -1 and rest[0][0] == 1:
        c1, t1 = rest.pop(0)
        np.subtract(t1, t0, out=out)
    elif c0 == 1:
        np.copyto(out, t0)
    else:
        np.multiply(t0, c0, out=out)
    for c, t in rest:
        if c == 1:
            np.add(out, t, out=out)
        elif c == -1:
            np.subtract(out, t, out=out)
        else:
            out += c * t
    return out


#: G (x) G: the 2-D filter transform ``U = G g G^T`` of a flattened 3x3 filter
#: ``g`` is the 16x9 matrix product ``U.flat = (G (x) G) @ g.flat``.
WINOGRAD_G2 = np.kron(WINOGRAD_G, WINOGRAD_G)


def winograd_filter_transform(w, rotate180=False):
    """``U = G g G^T`` for every (c, k): HWIO (3, 3, C, K) -> (16, C, K).

    All C*K filters at once as one GEMM ``(G (x) G) (16, 9) @ w (9, C*K)``,
    done in column blocks that fit in cache. ``rotate180`` transforms the
    filter turned by 180 degrees (used by the input gradient) by reversing
    the 9 columns of ``G (x) G`` instead of copying the filter.
    """
    return transform_filters(w, WINOGRAD_G2, rotate180, 1 << 15, 2)


def transform_filters(w, G2, rotate180, step, m):
    """``G2 (T, 9) @ w (9, C*K)`` in column blocks of ``step`` on the kernel threads; the
    180-degree turn reverses G2's 9 columns instead of copying the filter. A float32 filter
    goes through the C transform of F(m x m, 3x3) where it is built (``G g G^T`` per filter:
    the GEMM's inner dimension of 9 keeps it far below its peak)."""
    _, _, C, K = w.shape
    w = np.ascontiguousarray(w)
    lib = c_winograd.library() if w.dtype == np.float32 else None
    if lib is not None:
        U = np.empty((G2.shape[0], C, K), dtype=w.dtype)
        c_step = max(1, step // max(K, 1))
        run_blocks(lambda b: c_winograd.filter_transform(lib, m, w, U, b[0], b[1], rotate180),
                   [(c0, min(c0 + c_step, C), 0, 0) for c0 in range(0, C, c_step)])
        return U
    G2 = np.ascontiguousarray(G2[:, ::-1] if rotate180 else G2, dtype=w.dtype)
    src = w.reshape(9, C * K)
    U = np.empty((G2.shape[0], C * K), dtype=w.dtype)
    run_blocks(lambda b: gemm(G2, src[:, b[0]:b[1]], U[:, b[0]:b[1]]),
               [(s0, min(s0 + step, C * K), 0, 0) for s0 in range(0, C * K, step)])
    return U.reshape(G2.shape[0], C, K)


def native_winograd_transforms(x):
    """The C library of Winograd's transforms (``src/aics_winograd.c``: one pass over the tiles
    instead of one per non-zero of B^T or A^T) for a float32 input it handles, or None: the
    NumPy transforms below then do the work (where it was not built)."""
    return c_winograd.library() if c_winograd.handles(x) else None


def c_input_transform(m, x, pt, pl, n0, n1, r0, r1, tw, V):
    """F(m x m)'s input transform of the block into ``V`` in C, where it takes ``x``: whether it did."""
    lib = native_winograd_transforms(x)
    if lib is not None:
        c_winograd.input_transform(lib, m, x, m * r0 - pt, -pl, n0, n1, r1 - r0, tw, V)
    return lib is not None


def tile_columns(m, x, pt, pl, n0, n1, r0, r1, tw):
    """``(cols, Tc)``: the ``m+2`` column views of the block's zero-padded input rows
    ``m*r0 .. m*r1+1`` (tile row r reads rows ``m*r .. m*r+m+1``; view ``j`` holds column
    ``m*q + j`` of tile ``q``), and scratch for the column pass's ``m+2`` results."""
    xp = padded_slab(x, n0, n1, m * r0 - pt, m * (r1 - r0) + 2, -pl, m * tw + 2, f"wino{m}_pad")
    cols = [xp[:, :, j: j + m * tw: m] for j in range(m + 2)]
    return cols, scratch(f"wino{m}_T", (m + 2,) + cols[0].shape, x.dtype)


def winograd_input_transform(x, pt, pl, n0, n1, r0, r1, tw, V):
    """``V[a, b] = B^T d B`` for the 4x4 input tiles of images ``n0:n1``, tile rows ``r0:r1``.

    Tile ``(r, q)`` (output pixels ``2r..2r+1, 2q..2q+1``) reads input rows
    ``2r - pt .. 2r + 3 - pt`` and columns ``2q - pl .. 2q + 3 - pl`` (zeros
    outside ``x``). ``V`` has shape ``(4, 4, n1-n0, r1-r0, tw, C)``. Shared by
    the forward and the Winograd filter gradient (conv_backprop_filter.py).
    """
    if c_input_transform(2, x, pt, pl, n0, n1, r0, r1, tw, V):
        return V
    BT, nr = WINOGRAD_BT, r1 - r0
    # columns first: Tc[b] = sum_j BT[b, j] * (column 2q+j), all rows
    cols, Tc = tile_columns(2, x, pt, pl, n0, n1, r0, r1, tw)            # 4 x (nb, 2nr+2, tw, C)
    for bb in range(4):
        combine(BT[bb], cols, out=Tc[bb])
    # then rows: V[a, b] = sum_i BT[a, i] * Tc[b][row 2r+i]   (all four b at once)
    rows = [Tc[:, :, i: i + 2 * nr: 2] for i in range(4)]                 # (4, nb, nr, tw, C)
    for a in range(4):
        combine(BT[a], rows, out=V[a])
    return V


def winograd2_output(M, y):
    """NumPy's F(2x2) output transform: ``y`` (nb, 2*nr, 2*tw, K) from ``M`` (4, 4, nb, nr, tw, K),
    ``Y = A^T M A`` as a row pass (all b at once) then a column pass written into the pixels."""
    _, _, nb, nr, tw, K = M.shape
    AT = WINOGRAD_AT
    S = scratch("wino_S", (2, 4, nb, nr, tw, K), M.dtype)       # S[i] = sum_a AT[i, a] M[a]
    for i in range(2):
        combine(AT[i], [M[a] for a in range(4)], out=S[i])
    y6 = y.reshape(nb, nr, 2, tw, 2, K)                          # Y[i, j] = sum_b AT[j, b] S[i][b]
    for j in range(2):
        combine(AT[j], [S[:, bb] for bb in range(4)], out=y6[:, :, :, :, j].transpose(2, 0, 1, 3, 4))


WINOGRAD4_BT = np.array([[4, 0, -5, 0, 1, 0],
                         [0, -4, -4, 1, 1, 0],
                         [0, 4, -4, -1, 1, 0],
                         [0, -2, -1, 2, 1, 0],
                         [0, 2, -1, -2, 1, 0],
                         [0, 4, 0, -5, 0, 1]], dtype=_F32)     #: input transform B^T (6x6)


WINOGRAD4_G = np.array([[1 / 4, 0, 0],
                        [-1 / 6, -1 / 6, -1 / 6],
                        [-1 / 6, 1 / 6, -1 / 6],
                        [1 / 24, 1 / 12, 1 / 6],
                        [1 / 24, -1 / 12, 1 / 6],
                        [0, 0, 1]])                              #: filter transform G (6x3)


WINOGRAD4_AT = np.array([[1, 1, 1, 1, 1, 0],
                         [0, 1, -1, 2, -2, 0],
                         [0, 1, 1, 4, 4, 0],
                         [0, 1, -1, 8, -8, 1]], dtype=_F32)    #: output transform A^T (4x6)


#: G (x) G (36x9): ``U.flat = WINOGRAD4_G2 @ g.flat`` for a 3x3 filter ``g``.
WINOGRAD4_G2 = np.kron(WINOGRAD4_G, WINOGRAD4_G)


def combine_grouped(coeffs, terms, out, tmp):
    """``out[...] = sum_i coeffs[i] * terms[i]`` for any coefficients.

    Terms whose coefficients share a magnitude are added first and scaled
    once (``-4 d1 - 4 d2 + d3 + d4`` is ``(d3 + d4) - 4 (d1 + d2)``): each
    pass over memory costs as much as the arithmetic. ``tmp`` (the shape of
    ``out``) holds the scaled groups.
    """
    groups = {}
    for c, t in zip(coeffs, terms):
        if c != 0:
            groups.setdefault(abs(float(c)), []).append((c > 0, t))
    order = sorted(groups, key=lambda m: (m != 1, m))        # the unscaled group straight into out
    for n, mag in enumerate(order):
        items = groups[mag]
        pos = [t for p, t in items if p]
        neg = [t for p, t in items if not p]
        scale = mag
        if not pos:
            pos, neg, scale = neg, [], -mag
        if n > 0 and scale == 1:
            for t in pos:
                np.add(out, t, out=out)
            for t in neg:
                np.subtract(out, t, out=out)
            continue
        dst = out if n == 0 else tmp
        if len(pos) == 1 and not neg and scale != 1:
            np.multiply(pos[0], scale, out=dst)
        else:
            if len(pos) >= 2:
                np.add(pos[0], pos[1], out=dst)
                pos = pos[2:]
            elif neg:
                np.subtract(pos[0], neg[0], out=dst)
                pos, neg = [], neg[1:]
            else:
                np.copyto(dst, pos[0])
                pos = []
            for t in pos:
                np.add(dst, t, out=dst)
            for t in neg:
                np.subtract(dst, t, out=dst)
            if scale != 1:
                np.multiply(dst, scale, out=dst)
        if n > 0:
            np.add(out, tmp, out=out)
    return out


def winograd4_filter_transform(w, rotate180=False):
    """``U = G g G^T`` of F(4x4, 3x3) for every (c, k): HWIO (3, 3, C, K) -> (36, C, K).

    As :func:`winograd_filter_transform`: one GEMM ``(G (x) G) (36, 9) @ w (9, C*K)``
    in column blocks; ``rotate180`` reverses the 9 columns instead of the filter.
    """
    return transform_filters(w, WINOGRAD4_G2, rotate180, 1 << 14, 4)


def winograd4_input_transform(x, pt, pl, n0, n1, r0, r1, tw, V):
    """``V[a, b] = B^T d B`` for the 6x6 input tiles of images ``n0:n1``, tile rows ``r0:r1``.

    Tile ``(r, q)`` (output pixels ``4r..4r+3, 4q..4q+3``) reads input rows
    ``4r - pt .. 4r + 5 - pt`` and columns ``4q - pl .. 4q + 5 - pl`` (zeros
    outside ``x``). ``V`` has shape ``(6, 6, n1-n0, r1-r0, tw, C)``.
    """
    if c_input_transform(4, x, pt, pl, n0, n1, r0, r1, tw, V):
        return V
    cols, Tc = tile_columns(4, x, pt, pl, n0, n1, r0, r1, tw)            # 6 x (nb, 4nr+2, tw, C)
    BT, (nb, nr, C) = WINOGRAD4_BT, (n1 - n0, r1 - r0, x.shape[3])
    tmp = scratch("wino4_Ttmp", (nb, 4 * nr + 2, tw, C), x.dtype)
    for bb in range(6):
        combine_grouped(BT[bb], cols, Tc[bb], tmp)
    rows = [Tc[:, :, i: i + 4 * nr: 4] for i in range(6)]                 # (6, nb, nr, tw, C)
    tmp = scratch("wino4_Vtmp", (6, nb, nr, tw, C), x.dtype)
    for a in range(6):
        combine_grouped(BT[a], rows, V[a], tmp)
    return V


#: A^T (x) A^T (16, 36): F(4x4)'s output transform of a flattened 6x6 tile.
WINOGRAD4_AT2 = np.kron(WINOGRAD4_AT, WINOGRAD4_AT)


def winograd4_output(M, y):
    """NumPy's F(4x4) output transform: ``y`` (nb, 4*nr, 4*tw, K) from ``M`` (6, 6, nb, nr, tw, K).

    As one GEMM ``Y(16, tiles*K) = (A^T (x) A^T)(16, 36) @ M(36, tiles*K)``: M is contiguous
    that way, and the 18 scaled additions per row of the separable form cost more here
    (passes over memory with non-unit coefficients: benchmarks/README.md, "Winograd blocks").
    """
    _, _, nb, nr, tw, K = M.shape
    Y = scratch("wino4_Y", (16, nb * nr * tw * K), M.dtype)
    gemm(WINOGRAD4_AT2.astype(M.dtype), M.reshape(36, -1), Y)
    np.copyto(y.reshape(nb, nr, 4, tw, 4, K), Y.reshape(4, 4, nb, nr, tw, K).transpose(2, 3, 0, 4, 1, 5))



def grad_output_transform2(dy, n0, n1, r0, r1, tw, D):
    """NumPy's ``D[a, b] = (A dY A^T)[a, b]`` of F(2x2): a column pass, then a row pass."""
    nb, nr, K = n1 - n0, r1 - r0, dy.shape[3]
    AT = WINOGRAD_AT
    src = padded_slab(dy, n0, n1, 2 * r0, 2 * nr, 0, 2 * tw, "wino_dy")    # zeros past odd edges
    cols = [src[:, :, j::2] for j in range(2)]                          # (nb, 2nr, tw, K)
    Tc = scratch("wino_dyT", (4, nb, 2 * nr, tw, K), dy.dtype)
    for b in range(4):
        combine(AT[:, b], cols, out=Tc[b])
    rows = [Tc[:, :, i::2] for i in range(2)]                           # (4, nb, nr, tw, K)
    for a in range(4):
        combine(AT[:, a], rows, out=D[a])


#: A (x) A (36, 16): F(4x4)'s dY transform of a flattened 4x4 tile (A = (A^T)^T).
WINOGRAD4_A2 = np.kron(WINOGRAD4_AT.T, WINOGRAD4_AT.T)


def grad_output_transform4(dy, n0, n1, r0, r1, tw, D):
    """NumPy's ``D[a, b] = (A dY A^T)[a, b]`` of F(4x4): the tiles gathered, then one GEMM
    ``D(36, tiles*K) = (A (x) A)(36, 16) @ dY(16, tiles*K)`` (cf. winograd4_output)."""
    nb, nr, K = n1 - n0, r1 - r0, dy.shape[3]
    src = padded_slab(dy, n0, n1, 4 * r0, 4 * nr, 0, 4 * tw, "wino4_dy")   # zeros past the edges
    Y = scratch("wino4_dyY", (4, 4, nb, nr, tw, K), dy.dtype)
    np.copyto(Y, src.reshape(nb, nr, 4, tw, 4, K).transpose(2, 4, 0, 1, 3, 5))
    flat = scratch("wino4_dyD", (36, nb * nr * tw * K), dy.dtype)
    gemm(WINOGRAD4_A2.astype(dy.dtype), Y.reshape(16, -1), flat)
    np.copyto(D, flat.reshape(D.shape))

