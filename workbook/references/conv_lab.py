"""The checks of notebook 12's lab "convolution as GEMM, both ways" (section 8), shared by its
locked test cells: each runs one case of a student's function, compares it with the references
(``im2col``, ``conv_backprop`` and their from-the-definition ``*_brute`` versions) and fails with
a message for the student (expected vs got, and where a wrong entry comes from).

Every call goes through ``student_call``: the student's code may not call aicslib or the
references (``grading.no_library_calls``), an error in it is reported with the student's own
lines, and a function that uses another exercise's answer not written yet says so instead of
passing for "not answered".
"""
import contextlib
import traceback

import numpy as np

from workbook import grading

from . import conv_backprop, im2col as im2col_ref


_standing_in = set()      # the references standing in for earlier exercises (not counted as library calls)


def student_call(call, fn, *args, run=None):
    """``run(fn, *args)`` (default: ``grading.no_library_calls``); errors become feedback naming
    ``call``. The release stub's bare NotImplementedError passes through (this exercise is not
    answered) when it is ``fn``'s own; raised by another exercise's function it is reported."""
    run = run or (lambda f, *a: grading.no_library_calls(f, *a, what=fn.__name__, allowed=tuple(_standing_in)))
    try:
        return run(fn, *args)
    except grading.CheckFailed:
        raise
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        if isinstance(exc, NotImplementedError) and not exc.args:
            if frames and frames[-1].name == fn.__name__:
                raise
            raise grading.CheckFailed(f"{call} uses {frames[-1].name}, which is not answered yet: "
                                      f"answer that exercise first") from None
        cell = fn.__code__.co_filename
        own = [f for f in frames if f.filename == cell or "/ipykernel_" in f.filename
               or f.filename.startswith(("<ipython-input-", "<cell"))]
        raise grading.CheckFailed(f"{call} raised {type(exc).__name__}: {exc}" + "".join(
            f"\n    in {f.name}, line {f.lineno}: {(f.line or '').strip()}" for f in own)) from None


def check_output_size(fn, n, k, stride, padding):
    """``fn(n, k, stride, padding)`` must be (out, before, after) as TensorFlow computes them."""
    call = f"my_conv_output_size(n={n}, k={k}, stride={stride}, padding={padding!r})"
    got = student_call(call, fn, n, k, stride, padding)
    expected = im2col_ref.output_size_and_padding(n, k, stride, padding)
    try:
        got = tuple(int(v) for v in got)
    except (TypeError, ValueError):
        raise grading.CheckFailed(f"{call} returned {got!r}: return three integers (out, before, after)") from None
    if got == expected:
        return
    out, before, after = expected
    if padding == "SAME":
        why = (f"SAME: out = ceil(n / stride) = {out}; the total padding max((out - 1)*stride + k - n, 0) = "
               f"{before + after} is split with the smaller half before and the odd pixel after")
    elif padding == "VALID":
        why = f"VALID: no padding, out = ceil((n - k + 1) / stride) = {out}"
    else:
        why = f"explicit padding: the given (before, after), out = (n + before + after - k)//stride + 1 = {out}"
    raise grading.CheckFailed(f"{call}: expected (out, before, after) = {expected}, got {got}. {why}.")


def _decode(index, Ho, Wo, kw, C):
    """Which output pixel, tap and channel an (row, column) of the im2col matrix is."""
    row, col = index
    n, pixel = divmod(row, Ho * Wo)
    (oh, ow), (tap, c) = divmod(pixel, Wo), divmod(col, C)
    i, j = divmod(tap, kw)
    return f"row {row} is output pixel (n={n}, oh={oh}, ow={ow}); column {col} is tap (i={i}, j={j}), channel {c}"


def check_im2col(fn, shape, k, stride, padding, seed, brute=False):
    """``fn(x, kh, kw, stride, padding)`` on one case against the reference im2col (and, with
    ``brute``, the definition one pixel at a time); returns the student's matrix."""
    kh, kw = k
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    call = f"my_im2col(x of shape {shape}, kh={kh}, kw={kw}, stride={stride}, padding={padding!r})"
    got = student_call(call, fn, x, kh, kw, stride, padding)
    expected = (im2col_ref.im2col_brute if brute else im2col_ref.im2col)(x, kh, kw, stride, padding)
    Ho, Wo, pads_h, pads_w = im2col_ref.geometry(shape, kh, kw, stride, padding)
    grading.check(isinstance(got, np.ndarray), f"{call} returned {type(got).__name__}: return the NumPy matrix")
    if got.shape != expected.shape:
        rows_wrong = got.ndim != 2 or got.shape[0] != expected.shape[0]
        which = ("Ho*Wo (the output size, my_conv_output_size's rule)" if rows_wrong
                 else "the columns: kh*kw*C, one per (tap, channel)")
        raise grading.CheckFailed(f"{call}: expected shape {expected.shape} = (N*Ho*Wo, kh*kw*C) with Ho={Ho}, "
                                  f"Wo={Wo}, got {got.shape}. Check {which}.")
    grading.check(got.dtype == x.dtype, f"{call}: expected dtype {x.dtype} (the input's), got {got.dtype}: "
                                        f"im2col copies values, it does not convert them")
    differ = np.argwhere(got != expected)
    hint = None
    if differ.size:
        hint = (f"{_decode(tuple(differ[0]), Ho, Wo, kw, shape[3])}; it holds the padded input at row "
                f"oh*stride+i, column ow*stride+j (here padding top/bottom {pads_h}, left/right {pads_w}: "
                f"SAME puts the odd pixel after)")
    grading.check_array(got, expected, call, dtype=x.dtype, hint=hint)
    return got


def _tolerance(expected):
    # float32 GEMMs summing a few hundred products, against float64 sums: relative to the largest entry
    return 1e-5 * max(float(np.abs(expected).max()), 1.0)


def _case(shape, k, K, stride, padding, seed):
    kh, kw = k
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((kh, kw, shape[3], K)).astype(np.float32)
    Ho, Wo, _, _ = im2col_ref.geometry(shape, kh, kw, stride, padding)
    dy = rng.standard_normal((shape[0], Ho, Wo, K)).astype(np.float32)
    return x, w, dy


def library_backprop(which, x, w, dy, stride, padding):
    """aicslib's Conv2DBackpropFilter / Conv2DBackpropInput on the same operands (TF's op)."""
    import aicslib as aics

    if not isinstance(padding, str):
        raise ValueError("compare explicit paddings with the brute force only")
    strides = [1, stride, stride, 1]
    if which == "filter":
        return aics.nn.conv2d_backprop_filter(x, w.shape, dy, strides, padding).numpy()
    return aics.nn.conv2d_backprop_input(x.shape, w, dy, strides, padding).numpy()


def check_backprop_filter(fn, shape, k, K, stride, padding, seed, against="brute"):
    """``fn(x, dy, filter_shape, stride, padding)`` against the loops of the definition (``brute``)
    or aicslib's Conv2DBackpropFilter (``library``)."""
    x, w, dy = _case(shape, k, K, stride, padding, seed)
    call = (f"my_conv2d_backprop_filter(x of shape {shape}, dy of shape {dy.shape}, filter_shape={w.shape}, "
            f"stride={stride}, padding={padding!r})")
    got = student_call(call, fn, x, dy, w.shape, stride, padding)
    expected = (conv_backprop.conv2d_backprop_filter_brute(x, dy, w.shape, stride, padding) if against == "brute"
                else library_backprop("filter", x, w, dy, stride, padding))
    source = "the sums of the definition" if against == "brute" else "aicslib's Conv2DBackpropFilter"
    grading.check_array(got, expected, f"{call} (compared with {source})", dtype=np.float32,
                        atol=_tolerance(expected), rtol=1e-5,
                        hint="dw[i, j, c, k] sums x[n, oh*stride+i-top, ow*stride+j-left, c] * dy[n, oh, ow, k] over "
                             "every output pixel: cols(x)^T @ dy, with the same padding as the forward; the result "
                             "keeps x's dtype")
    return got


def check_backprop_input(fn, shape, k, K, stride, padding, seed, against="brute"):
    """``fn(dy, w, x_shape, stride, padding)`` against the loops of the definition (``brute``) or
    aicslib's Conv2DBackpropInput (``library``)."""
    x, w, dy = _case(shape, k, K, stride, padding, seed)
    call = (f"my_conv2d_backprop_input(dy of shape {dy.shape}, w of shape {w.shape}, x_shape={shape}, "
            f"stride={stride}, padding={padding!r})")
    got = student_call(call, fn, dy, w, shape, stride, padding)
    expected = (conv_backprop.conv2d_backprop_input_brute(dy, w, shape, stride, padding) if against == "brute"
                else library_backprop("input", x, w, dy, stride, padding))
    source = "the sums of the definition" if against == "brute" else "aicslib's Conv2DBackpropInput"
    _, _, (top, bottom), (left, right) = im2col_ref.geometry(shape, k[0], k[1], stride, padding)
    grading.check_array(got, expected, f"{call} (compared with {source})", dtype=np.float32,
                        atol=_tolerance(expected), rtol=1e-5,
                        hint=f"dcols = dy @ W^T, then every row goes back (+=, windows overlap) to the pixels its "
                             f"window read: padded row oh*stride+i, column ow*stride+j; then cut the padding off "
                             f"(here top/bottom {(top, bottom)}, left/right {(left, right)}); the result keeps dy's "
                             f"dtype")
    return got


def check_no_pixel_loop(fn, args, call, taps):
    """``fn(*args)`` runs at most a few lines of Python per tap, not one per output pixel."""
    _, lines = student_call(call, fn, *args, run=grading.python_lines)
    grading.check(lines <= 100 + 10 * taps,
                  f"{call} ran {lines} lines of Python: that is a loop over output pixels (or rows). "
                  f"Loop over the kh*kw taps at most and slice all pixels at once")


@contextlib.contextmanager
def earlier_exercises_as_reference(namespace, names):
    """Grades one exercise on its own: inside the block each earlier exercise in ``names`` (function
    name -> exercise name) that has not passed its checks is replaced, in the notebook's
    ``namespace``, by the package's reference, saying so; the student's are put back after."""
    stand_ins = {"my_conv_output_size": im2col_ref.output_size_and_padding, "my_im2col": im2col_ref.im2col}
    saved = {}
    for fn_name, exercise in names.items():
        if grading.status(exercise) != "passed" and fn_name in stand_ins:
            saved[fn_name] = namespace.get(fn_name)
            namespace[fn_name] = stand_ins[fn_name]
            _standing_in.add(stand_ins[fn_name].__name__)
            print(f"note: {fn_name} has not passed its own checks: the reference stands in for it here, "
                  f"so this exercise is graded on its own")
    try:
        yield
    finally:
        namespace.update(saved)
        _standing_in.clear()
