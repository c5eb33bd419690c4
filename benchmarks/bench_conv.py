"""Benchmark of the speed layer's convolution kernels (aicslib/accel: conv_forward.py,
conv_winograd.py, conv_backprop_*.py, depthwise.py); the direct loops are the reference's
(aicslib/kernels).

For ResNet-like layers and MobileNet depthwise layers (batch 8) it times
forward, backprop-input and backprop-filter with every algorithm, and for the
Conv2D layers a whole training step of the layer, ``fwd+bwd``: the forward and
both gradients through ``GradientTape`` (what a model's step pays). It prints
GFLOP/s (FLOPs of the direct convolution, 2*N*Ho*Wo*K*C*kh*kw, so that
algorithms are comparable; 3x that for fwd+bwd) and the ratio to a reference
measured in the same run:

* PyTorch CPU when ``import torch`` works: ``torch.nn.functional.conv2d`` for
  the forward and ``torch.ops.aten.convolution_backward`` (what autograd calls)
  with only the input or only the weight gradient requested (both, after the
  forward, for fwd+bwd). PyTorch runs on
  ``torch.set_num_threads(<cores, at most 2>)``; its time is the better of
  NCHW and channels-last (NHWC) memory formats.
* otherwise NumPy's GEMM (OpenBLAS/MKL sgemm) doing the same FLOPs: the
  ``(N*Ho*Wo, kh*kw*C) @ (kh*kw*C, K)`` product with the operands ready
  (three of them for fwd+bwd; ``(N*Ho*Wo, kh*kw) @ (kh*kw, C*M)`` for a
  depthwise layer), split over the threads as the kernels split theirs.

The summary ends with the geometric means the targets are stated in: fwd+bwd
over the 3x3 and 1x1 Conv2D layers, and each depthwise pass over the
MobileNet depthwise layers. Times are the best of interleaved rounds; on a
shared machine run it a few times and take the median of the ratios.

The direct (loop) algorithm is timed only on a tiny layer: on the real layers
it takes minutes.

    python benchmarks/bench_conv.py            # full run (a few minutes)
    python benchmarks/bench_conv.py --fast     # quick run (also AICS_FAST=1)
    python benchmarks/bench_conv.py --only dw  # the depthwise layers only
    python benchmarks/bench_conv.py --per-core # one thread each, CPU time (a busy machine)
    python benchmarks/bench_conv.py --only issue29  # only the table of issue 29 (below)

It ends with issue 29's table, measured as a user's script measures it: ``aics.nn.conv2d``
on Variables (batch 8, SAME), forward alone and forward + input and filter gradients through
``GradientTape``, against PyTorch's ``F.conv2d`` forward and its forward + ``backward()``
(autograd, both gradients) in the same process; ratio = PyTorch's time / aicslib's
(> 1: aicslib faster). The targets: every row >= 1.0x forward and >= 0.8x forward+backward,
geometric mean of forward+backward >= 1.0x.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from aicslib.accel import conv_backprop_filter as cgf
from aicslib.accel import conv_backprop_input as cgi
from aicslib.accel import conv_forward as co
from aicslib.accel import depthwise as dwc
from aicslib.accel import work_sharder
from aicslib.kernels import conv_2d as c2d
from aicslib.kernels import conv_layout as cl
from aicslib.kernels import conv_ops as reference_conv
from aicslib.kernels import depthwise_conv_op as reference_depthwise

try:
    from aicslib import flags as _flags
except Exception:  # pragma: no cover - flags module missing
    _flags = None

# name, input NHWC (batch set later), filter HWIO, strides, padding, depthwise
LAYERS = [
    ("tiny 10x10x8 3x3", (10, 10, 8), (3, 3, 8, 8), (1, 1), "SAME", False),
    ("56x56x64 3x3 ->64", (56, 56, 64), (3, 3, 64, 64), (1, 1), "SAME", False),
    ("28x28x128 3x3 ->128", (28, 28, 128), (3, 3, 128, 128), (1, 1), "SAME", False),
    ("14x14x256 3x3 ->256", (14, 14, 256), (3, 3, 256, 256), (1, 1), "SAME", False),
    ("7x7x512 3x3 ->512", (7, 7, 512), (3, 3, 512, 512), (1, 1), "SAME", False),
    ("28x28x256 1x1 ->128", (28, 28, 256), (1, 1, 256, 128), (1, 1), "SAME", False),
    ("56x56x64 3x3/2 ->128", (56, 56, 64), (3, 3, 64, 128), (2, 2), "SAME", False),
    # MobileNet v1 depthwise layers (224x224 input)
    ("112x112x32 dw3x3", (112, 112, 32), (3, 3, 32, 1), (1, 1), "SAME", True),
    ("56x56x64 dw3x3", (56, 56, 64), (3, 3, 64, 1), (1, 1), "SAME", True),
    ("56x56x128 dw3x3/2", (56, 56, 128), (3, 3, 128, 1), (2, 2), "SAME", True),
    ("14x14x512 dw3x3", (14, 14, 512), (3, 3, 512, 1), (1, 1), "SAME", True),
    ("7x7x1024 dw3x3", (7, 7, 1024), (3, 3, 1024, 1), (1, 1), "SAME", True),
]


# issue 29's rows: name, (H, W, C), filter HWIO, stride
ISSUE29_ROWS = [
    ("56x56x64->64, 3x3, stride 1", (56, 56, 64), (3, 3, 64, 64), 1),
    ("28x28x128->128, 3x3", (28, 28, 128), (3, 3, 128, 128), 1),
    ("14x14x256->256, 3x3", (14, 14, 256), (3, 3, 256, 256), 1),
    ("56x56x64->128, 1x1", (56, 56, 64), (1, 1, 64, 128), 1),
    ("56x56x64->64, 3x3, stride 2", (56, 56, 64), (3, 3, 64, 64), 2),
]


def issue29_thunks(x, w, stride, torch):
    """(aicslib's, PyTorch's) thunks, each {"forward": f, "fwd+bwd": f}, as users write them."""
    import aicslib as aics
    import torch.nn.functional as F
    xv, wv = aics.Variable(x), aics.Variable(w)
    dy = np.random.default_rng(1).standard_normal(
        aics.nn.conv2d(xv, wv, stride, "SAME").shape, dtype=np.float32)
    dyc = aics.constant(dy)

    def ours_fwd():
        aics.nn.conv2d(xv, wv, stride, "SAME")

    def ours_step():
        with aics.GradientTape() as tape:
            y = aics.nn.conv2d(xv, wv, stride, "SAME")
        tape.gradient(y, [xv, wv], output_gradients=dyc)

    g = c2d.conv_geometry(x.shape, w.shape, (stride, stride), "SAME", (1, 1))
    theirs = {}
    for fmt in (torch.contiguous_format, torch.channels_last):
        xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).contiguous(memory_format=fmt)
        wt = torch.from_numpy(cl.hwio_to_oihw(w)).contiguous(memory_format=fmt)
        xt.requires_grad_(True)
        wt.requires_grad_(True)
        dyt = torch.from_numpy(np.ascontiguousarray(dy.transpose(0, 3, 1, 2))).contiguous(memory_format=fmt)
        sym = g["pt"] == g["pb"] and g["pl"] == g["pr"]     # TF's SAME: torch pads explicitly when odd

        def forward(xt=xt, wt=wt, sym=sym):
            xin = xt if sym else F.pad(xt, (g["pl"], g["pr"], g["pt"], g["pb"]))
            return F.conv2d(xin, wt, None, stride, (g["pt"], g["pl"]) if sym else 0)

        def fwd(forward=forward):
            with torch.no_grad():
                forward()

        def step(forward=forward, xt=xt, wt=wt, dyt=dyt):
            xt.grad = wt.grad = None
            forward().backward(dyt)
        name = "nchw" if fmt == torch.contiguous_format else "nhwc"
        theirs[("forward", name)] = fwd
        theirs[("fwd+bwd", name)] = step
    return {("forward", "aicslib"): ours_fwd, ("fwd+bwd", "aicslib"): ours_step}, theirs


def issue29_table(torch, batch, rounds, min_time, clock, per_core):
    """Issue 29's table: aicslib as a user's script runs it against PyTorch, same process."""
    print(f"\nIssue 29 (aics.nn.conv2d on Variables, batch {batch}, SAME, input and filter gradients "
          f"through GradientTape; ratio = PyTorch's time / aicslib's, > 1: aicslib faster):")
    print("| layer | forward vs PyTorch | forward+backward vs PyTorch | aicslib ms (fwd, fwd+bwd) | "
          "PyTorch ms (fwd, fwd+bwd) |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    ratios = []
    for name, (H, W, C), wshape, stride in ISSUE29_ROWS:
        x = rng.standard_normal((batch, H, W, C), dtype=np.float32)
        w = (rng.standard_normal(wshape, dtype=np.float32) / np.sqrt(np.prod(wshape[:3]))).astype(np.float32)
        ours, theirs = issue29_thunks(x, w, stride, torch)
        if per_core:
            with work_sharder.SingleThreadedBlas():
                best = time_all([theirs, ours], rounds, min_time, clock)
        else:
            best = time_all([theirs, ours], rounds, min_time, clock)
        t_ref = {p: min(best[(p, "nchw")], best[(p, "nhwc")]) for p in ("forward", "fwd+bwd")}
        t_ours = {p: best[(p, "aicslib")] for p in ("forward", "fwd+bwd")}
        r = {p: t_ref[p] / t_ours[p] for p in t_ref}
        ratios.append(r["fwd+bwd"])
        print(f"| {name} | {r['forward']:.2f}x | {r['fwd+bwd']:.2f}x | {t_ours['forward'] * 1e3:.2f}, "
              f"{t_ours['fwd+bwd'] * 1e3:.2f} | {t_ref['forward'] * 1e3:.2f}, {t_ref['fwd+bwd'] * 1e3:.2f} |",
              flush=True)
    print(f"geometric mean forward+backward: {float(np.exp(np.mean(np.log(ratios)))):.2f}x "
          f"(targets: every row >= 1.0x forward, >= 0.8x forward+backward; mean >= 1.0x)")


def torch_reference(x, w, strides, padding, depthwise):
    """Thunks for torch forward, backprop-input, backprop-filter, in NCHW and channels-last."""
    import torch
    import torch.nn.functional as F
    N, H, W, C = x.shape
    kh, kw, _, M = w.shape
    g = c2d.conv_geometry(x.shape, (kh, kw, C, M), strides, padding, (1, 1))
    # torch's padding is symmetric: pad explicitly when TF's SAME is not
    sym = g["pt"] == g["pb"] and g["pl"] == g["pr"]
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    if not sym:
        xt = F.pad(xt, (g["pl"], g["pr"], g["pt"], g["pb"]))
        pad = (0, 0)
    else:
        pad = (g["pt"], g["pl"])
    if depthwise:
        wt = torch.from_numpy(cl.depthwise_hwcm_to_oihw(w))
        groups = C
    else:
        wt = torch.from_numpy(cl.hwio_to_oihw(w))
        groups = 1
    thunks = {}
    for fmt_name, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
        xf, wf = xt.contiguous(memory_format=fmt), wt.contiguous(memory_format=fmt)
        with torch.no_grad():
            y = F.conv2d(xf, wf, None, strides, pad, 1, groups)
        dy = torch.randn(y.shape).contiguous(memory_format=fmt)

        def fwd(xf=xf, wf=wf):
            with torch.no_grad():
                F.conv2d(xf, wf, None, strides, pad, 1, groups)

        def bwd(mask, xf=xf, wf=wf, dy=dy):
            torch.ops.aten.convolution_backward(dy, xf, wf, None, list(strides), list(pad), [1, 1],
                                                False, [0, 0], groups, mask)
        def train_step(xf=xf, wf=wf, dy=dy):
            F.conv2d(xf, wf, None, strides, pad, 1, groups)
            torch.ops.aten.convolution_backward(dy, xf, wf, None, list(strides), list(pad), [1, 1],
                                                False, [0, 0], groups, [True, True, False])
        thunks[("forward", fmt_name)] = fwd
        thunks[("fwd+bwd", fmt_name)] = train_step
        thunks[("backprop_input", fmt_name)] = lambda b=bwd: b([True, False, False])
        thunks[("backprop_filter", fmt_name)] = lambda b=bwd: b([False, True, False])
    return thunks


def gemm_reference(x, w, strides, padding, depthwise=False):
    """Thunks: NumPy sgemm with the same FLOPs as the direct convolution.

    Conv2D: the ``(N*Ho*Wo, kh*kw*C) @ (kh*kw*C, K)`` product; depthwise
    (``(kh, kw, C, M)`` filter): ``(N*Ho*Wo, kh*kw) @ (kh*kw, C*M)``, the same
    multiply-adds as one GEMM. The GEMM runs as aicslib's kernels run theirs
    (``work_sharder.sharded_matmul``: split over the threads, one-thread BLAS
    each), which on a shared machine is far steadier than OpenBLAS's own
    threads and is the peak those kernels can reach.
    """
    kh, kw, C, M = w.shape
    g = c2d.conv_geometry(x.shape, (kh, kw, C, M), strides, padding, (1, 1))
    m = g["N"] * g["Ho"] * g["Wo"]
    k, n = (kh * kw, C * M) if depthwise else (kh * kw * C, M)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    out = np.empty((m, n), np.float32)
    f = lambda: work_sharder.sharded_matmul(a, b, out)  # noqa: E731
    f3 = lambda: (f(), f(), f())  # noqa: E731
    return {("forward", "sgemm"): f, ("backprop_input", "sgemm"): f, ("backprop_filter", "sgemm"): f,
            ("fwd+bwd", "sgemm"): f3}


#: Seconds each side's thunks run untimed before its timed calls in a round (see ``time_all``).
SETTLE_S = 0.02


def time_all(groups, rounds, min_time, clock=time.perf_counter):
    """Best time of every thunk, measured in interleaved rounds.

    ``groups``: dicts of thunks, one per library (the reference, aicslib). The
    machine may be shared: a burst of load then slows every thunk a little in
    some round instead of slowing one thunk a lot, and the best of the rounds
    is what each algorithm can do.

    In each round a group first runs its thunks untimed for ``SETTLE_S``, and
    each thunk is called once untimed before its timed repetitions: a thunk
    would otherwise pay for what ran before it. PyTorch's OpenMP workers keep
    spinning on the cores for milliseconds after a call returns (measured: a
    0.40 ms depthwise forward took 0.84 ms right after PyTorch's, and a 1.1 ms
    one 0.6 ms with PyTorch's workers told not to spin, which slows PyTorch
    itself 2x on small layers), and threads that have slept wake slowly; the
    untimed runs let both pass, for either side alike.
    """
    thunks = {k: fn for g in groups for k, fn in g.items()}
    best = {k: float("inf") for k in thunks}
    for fn in thunks.values():
        fn()                                                    # warm-up
    t_start = time.perf_counter()
    r = 0
    while r < rounds or (time.perf_counter() - t_start < min_time and r < 5 * rounds):
        for group in groups:
            settle_until = time.perf_counter() + SETTLE_S
            while time.perf_counter() < settle_until:
                for k, fn in group.items():
                    if k[1] != "direct":
                        fn()
            for k, fn in group.items():
                reps = 1 if k[1] == "direct" else 2
                if k[1] != "direct":
                    fn()                                        # settles what ran before
                for _ in range(reps):
                    t0 = clock()
                    fn()
                    best[k] = min(best[k], clock() - t0)
        r += 1
    return best


def candidates(x, w, strides, padding, depthwise, tiny):
    """(pass, algorithm, thunk) for every algorithm valid on this layer."""
    dil = (1, 1)
    out = []
    if depthwise:
        y = dwc.depthwise_conv2d(x, w, strides, padding)
        dy = np.random.default_rng(1).standard_normal(y.shape, dtype=np.float32)
        out.append(("forward", "depthwise", lambda: dwc.depthwise_conv2d(x, w, strides, padding)))
        out.append(("backprop_input", "depthwise", lambda: dwc.depthwise_conv2d_backprop_input(
            dy, w, x.shape, strides, padding)))
        out.append(("backprop_filter", "depthwise", lambda: dwc.depthwise_conv2d_backprop_filter(
            x, dy, w.shape, strides, padding)))
        if tiny:
            out.append(("forward", "direct",
                        lambda: reference_depthwise.depthwise_conv2d_direct(x, w, strides, padding)))
        return out
    y = co.conv2d_im2col(x, w, strides, padding, dil)
    dy = np.random.default_rng(1).standard_normal(y.shape, dtype=np.float32)
    wino = w.shape[:2] == (3, 3) and tuple(strides) == (1, 1)
    algos = (["direct"] if tiny else []) + ["im2col"] + (["winograd"] if wino else [])
    for a in algos:
        out.append(("forward", a, lambda a=a: co.conv2d(x, w, strides, padding, dil, algorithm=a)))
    out.append(("forward", "auto", lambda: co.conv2d(x, w, strides, padding, dil, algorithm="auto")))
    strided = tuple(strides) != (1, 1)
    bi_algos = ((["direct"] if tiny else []) + ["gemm"] + (["im2col", "winograd"] if wino else [])
                + (["phases"] if strided else []))
    for a in bi_algos:
        out.append(("backprop_input", a, lambda a=a: cgi.conv2d_backprop_input(
            dy, w, x.shape, strides, padding, dil, algorithm=a)))
    out.append(("backprop_input", "auto", lambda: cgi.conv2d_backprop_input(
        dy, w, x.shape, strides, padding, dil, algorithm="auto")))
    for a in (["direct"] if tiny else []) + ["gemm"] + (["winograd"] if wino else []):
        out.append(("backprop_filter", a, lambda a=a: cgf.conv2d_backprop_filter(
            x, dy, w.shape, strides, padding, dil, algorithm=a)))
    out.append(("backprop_filter", "auto", lambda: cgf.conv2d_backprop_filter(
        x, dy, w.shape, strides, padding, dil, algorithm="auto")))
    out.append(("fwd+bwd", "tape", tape_step(x, w, dy, strides, padding)))
    return out


def tape_step(x, w, dy, strides, padding):
    """The layer's training step as a model runs it: ``tf.nn.conv2d`` under a
    ``GradientTape``, then the gradients of the input and the filter."""
    import aicslib as aics
    xv, wv, dyc = aics.Variable(x), aics.Variable(w), aics.constant(dy)

    def step():
        with aics.GradientTape() as tape:
            y = aics.nn.conv2d(xv, wv, list(strides), padding)
        return tape.gradient(y, [xv, wv], output_gradients=dyc)
    return step


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fast", action="store_true", help="quick run: batch 2, fewer repetitions")
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--no-torch", action="store_true", help="compare with NumPy GEMM even if torch exists")
    p.add_argument("--only", default=None, help="run only layers whose name contains this")
    p.add_argument("--rounds", type=int, default=None,
                   help="interleaved timing rounds per layer (more rounds ride out a busy machine)")
    p.add_argument("--per-core", action="store_true",
                   help="one thread each (aicslib, its BLAS, PyTorch) and CPU time instead of wall time: "
                        "the work each side does, which other processes' load hardly changes")
    args = p.parse_args(argv)
    clock = time.perf_counter
    if args.per_core:
        work_sharder.NUM_THREADS = 1
        clock = time.process_time
    fast = args.fast or bool(getattr(_flags, "FAST", False))
    batch = args.batch or (2 if fast else 8)
    rounds, min_time = (2, 0.0) if fast else (5, 2.0)
    if args.rounds:
        rounds, min_time = args.rounds, 0.0

    torch = None
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(1 if args.per_core else max(1, min(2, os.cpu_count() or 1)))
        except Exception:
            torch = None
    ref_name = f"torch {torch.__version__} (best of NCHW, channels-last)" if torch else "numpy sgemm, same FLOPs"
    print(f"conv benchmark: batch {batch}, float32, {work_sharder.NUM_THREADS} threads, "
          f"reference = {ref_name}{' (fast mode)' if fast else ''}"
          f"{'; per core: CPU time, one thread each' if args.per_core else ''}")
    print("GFLOP/s counts 2*N*Ho*Wo*K*C*kh*kw (direct-convolution FLOPs) for every algorithm;")
    print("times are the best of interleaved rounds. ratio = our GFLOP/s / reference GFLOP/s.")
    header = f"{'layer':<24} {'pass':<16} {'algorithm':<9} {'ms':>8} {'GFLOP/s':>8} {'ref GF/s':>8} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(0)
    summary = []
    for name, (H, W, C), wshape, strides, padding, depthwise in LAYERS:
        if args.only == "issue29":
            break
        if args.only and args.only not in name:
            continue
        tiny = "tiny" in name
        n = 2 if tiny else batch
        x = rng.standard_normal((n, H, W, C), dtype=np.float32)
        w = (rng.standard_normal(wshape, dtype=np.float32)
             / np.sqrt(wshape[0] * wshape[1] * wshape[2])).astype(np.float32)
        flops = reference_conv.conv2d_flops(x.shape, (wshape[0], wshape[1], C, 1), strides, padding) * wshape[3]
        if torch:
            ref = torch_reference(x, w, strides, padding, depthwise)
        else:
            ref = gemm_reference(x, w, strides, padding, depthwise)
        ours = {(pas, algo): fn for pas, algo, fn in candidates(x, w, strides, padding, depthwise, tiny)}
        if args.per_core:
            with work_sharder.SingleThreadedBlas():
                best_t = time_all([ref, ours], rounds, min_time, clock)
        else:
            best_t = time_all([ref, ours], rounds, min_time)
        ref_t = {}
        pass_flops = {"fwd+bwd": 3 * flops}
        for (pas, _), t in best_t.items():
            if (pas, _) in ref:
                ref_t[pas] = min(ref_t.get(pas, float("inf")), t)
        best = {}
        for (pas, algo) in ours:
            t = best_t[(pas, algo)]
            fl = pass_flops.get(pas, flops)
            gf, rgf = fl / t / 1e9, fl / ref_t[pas] / 1e9
            print(f"{name:<24} {pas:<16} {algo:<9} {t * 1e3:8.2f} {gf:8.1f} {rgf:8.1f} {gf / rgf:6.2f}")
            if algo != "direct" and gf > best.get(pas, (0, ""))[0]:
                best[pas] = (gf, algo, gf / rgf)
        for pas, (gf, algo, r) in best.items():
            summary.append((name, pas, algo, gf, r, depthwise))
        print()
    print("Best algorithm per layer and pass (ratio to reference):")
    for name, pas, algo, gf, r, _ in summary:
        print(f"  {name:<24} {pas:<16} {algo:<9} {gf:8.1f} GFLOP/s  {r:5.2f}x")
    print("Geometric means of the ratios (the targets: fwd+bwd >= 0.7x torch over the 3x3/1x1 Conv2D layers,")
    print("each depthwise pass >= 0.5x torch over the MobileNet depthwise layers):")
    groups = {}
    for name, pas, algo, gf, r, depthwise in summary:
        if "tiny" in name or (not depthwise and pas != "fwd+bwd"):
            continue
        groups.setdefault(("depthwise " if depthwise else "conv2d ") + pas, []).append(r)
    for key, rs in groups.items():
        print(f"  {key:<28} {float(np.exp(np.mean(np.log(rs)))):5.2f}x  over {len(rs)} layers")
    if torch and (not args.only or args.only == "issue29"):
        issue29_table(torch, batch, rounds, min_time, clock, args.per_core)


if __name__ == "__main__":
    main()
