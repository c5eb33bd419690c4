"""CPU threads for kernels: a thread pool, BLAS thread control, work cut into blocks.

TF's counterpart is ``Shard`` (core/util/work_sharder.cc), which cuts a
kernel's work into pieces and runs them on the device's intra-op thread pool.
Here the speed layer's convolution kernels cut a batch into blocks of a few MiB
(``BLOCK_BYTES``) so that a block's patch matrix stays in cache while its
GEMM reads it, and run the blocks on ``NUM_THREADS`` threads, each with a
one-thread BLAS: NumPy's element-wise work (patch copies, Winograd
transforms, col2im) uses one core while a GEMM uses all (benchmarks/README.md). Scratch buffers are reused between
calls instead of being allocated (and page-faulted) each time. Splitting a
GEMM into row blocks does not change it: ``[A1; A2] @ B = [A1 @ B; A2 @ B]``.

=========================  ============================================================
``run_blocks``             ``[fn(b) for b in blocks]`` on the pool, BLAS single-threaded
``run_blocks_overlapping`` the same, with a value the blocks share computed meanwhile
``gemm``                   ``out[...] = a @ b`` on this thread: the C SGEMM (float32) or BLAS
``batched_gemm``           ``out[i] = a[i] @ b[i]`` for 3-D stacks: one C SGEMM call, or one :func:`gemm` each
``split_blocks``           cut ``n_images x n_rows`` work into cache-sized blocks
``sharded_matmul``         ``out[...] = a @ b``, split over the threads when big
``matmul``                 ``a @ b`` (new array): one BLAS thread when small, else sharded
``scratch``                a per-thread workspace array, reused from call to call
``padded_slab``            one block's window of an NHWC input, zero-padded in scratch
``SingleThreadedBlas``     context manager: OpenBLAS on one thread meanwhile
=========================  ============================================================
"""
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import flags
from . import c_sgemm

__all__ = [
    "NUM_THREADS", "BLOCK_BYTES", "MIN_GEMM_ROWS", "SPLIT_GEMM_FLOPS", "INNER_SPLIT_RATIO",
    "SINGLE_THREAD_GEMM_FLOPS", "executor", "find_blas_thread_control", "SingleThreadedBlas", "in_worker",
    "run_blocks", "run_blocks_overlapping", "split_blocks", "sharded_matmul", "matmul", "scratch", "gemm",
    "padded_slab",
    "batched_gemm",
    "GEMM_CHOICES", "native_gemm_library",
]

#: Target size in bytes of one block's scratch matrices (patches / transforms).
BLOCK_BYTES = 4 << 20
#: Threads used to run blocks concurrently (NumPy's element-wise ops use one core).
NUM_THREADS = max(1, min(2, os.cpu_count() or 1))
#: A block's GEMM keeps at least this many rows (smaller ones run far below peak).
MIN_GEMM_ROWS = 256


_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def executor():
    """The pool of ``NUM_THREADS`` worker threads (one per process)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():   # a forked child needs its own threads
            _pool = ThreadPoolExecutor(max_workers=NUM_THREADS, thread_name_prefix="aics-conv")
            _pool_pid = os.getpid()
        return _pool


def find_blas_thread_control():
    """``(get_num_threads, set_num_threads)`` of the OpenBLAS NumPy is linked with, or None."""
    import ctypes
    import glob
    libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    candidates = sorted(glob.glob(os.path.join(libdir, "*openblas*")))
    names = [("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
             ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
             ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
             ("openblas_get_num_threads", "openblas_set_num_threads")]
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in names:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                get, set_ = getattr(lib, get_name), getattr(lib, set_name)
                get.restype, set_.restype = ctypes.c_int, None
                set_.argtypes = [ctypes.c_int]
                return get, set_
    return None


_blas_control = None
_blas_users = 0
_blas_saved = None
_blas_lock = threading.Lock()


class SingleThreadedBlas:
    """While blocks run on our own threads, each GEMM runs on one BLAS thread.

    Otherwise two Python threads each start a 2-thread OpenBLAS GEMM on 2
    cores, and OpenBLAS's spinning helper threads steal the cores from the
    NumPy element-wise work of the other thread (slower and erratic:
    benchmarks/README.md, "Work sharder"). Nested or concurrent users are
    counted; the last one restores.
    """

    def __enter__(self):
        global _blas_control, _blas_users, _blas_saved
        with _blas_lock:
            if _blas_control is None:
                _blas_control = find_blas_thread_control() or False
            if _blas_control:
                if _blas_users == 0:
                    _blas_saved = _blas_control[0]()
                    _blas_control[1](1)
                _blas_users += 1
        return self

    def __exit__(self, *exc):
        global _blas_users
        with _blas_lock:
            if _blas_control:
                _blas_users -= 1
                if _blas_users == 0:
                    _blas_control[1](_blas_saved)
        return False


def in_worker():
    """Whether the calling thread is one of the pool's, or the caller's thread running a block
    of its own (``run_blocks_overlapping``): work it starts then runs inline."""
    return threading.current_thread().name.startswith("aics-conv") or getattr(_tls, "in_block", False)


def run_blocks(fn, blocks):
    """``[fn(b) for b in blocks]``, on ``NUM_THREADS`` threads when there are several blocks.

    BLAS runs single-threaded meanwhile, even for a single block: a 2-thread
    OpenBLAS GEMM advances in lockstep, and on a machine shared with other
    processes one descheduled helper thread makes it many times slower
    (benchmarks/README.md); our own threads work on independent blocks instead. A block
    that is one big GEMM splits it over the threads with ``sharded_matmul``.
    """
    if NUM_THREADS <= 1 or len(blocks) < 2 or in_worker():
        with SingleThreadedBlas():
            return [fn(b) for b in blocks]
    with SingleThreadedBlas():
        return list(executor().map(fn, blocks))


def run_blocks_overlapping(prepare, fn, blocks):
    """``[fn(b, get) for b in blocks]``, where ``get()`` returns ``prepare()``, computed once on
    the calling thread while the pool's threads wake up and begin their blocks.

    For work whose blocks need a shared value only part-way (a Winograd conv's blocks transform
    their input tiles before they need the transformed filters): waking a pool thread takes
    about as long as a small block's input transform (benchmarks/README.md). With no more blocks
    than threads, the calling thread then runs the first block itself instead of waiting.
    """
    if NUM_THREADS <= 1 or len(blocks) < 2 or in_worker():
        value = prepare()
        with SingleThreadedBlas():
            return [fn(b, lambda: value) for b in blocks]
    ready, box = threading.Event(), {}

    def get():
        ready.wait()
        if "error" in box:
            raise RuntimeError("the value these blocks share could not be computed") from box["error"]
        return box["value"]

    own = blocks[:1] if len(blocks) <= NUM_THREADS else []
    with SingleThreadedBlas():
        futures = [executor().submit(fn, b, get) for b in blocks[len(own):]]
        try:
            try:
                box["value"] = prepare()
            except BaseException as e:
                box["error"] = e
                raise
            finally:
                ready.set()
            _tls.in_block = True
            try:
                results = [fn(b, get) for b in own]
            finally:
                _tls.in_block = False
        finally:
            for f in futures:
                f.exception()           # every block has finished before this returns or raises
        return results + [f.result() for f in futures]


#: What AICS_GEMM may say: auto (the C SGEMM where it is built, else BLAS), native, blas.
GEMM_CHOICES = ("auto", "native", "blas")


def native_gemm_library():
    """The C SGEMM library the float32 GEMMs here run on, or None for NumPy's BLAS (AICS_GEMM).

    ``native`` where the library was not built is an error naming the reason.
    """
    choice = flags.GEMM
    if choice == "blas":
        return None
    if choice not in GEMM_CHOICES:
        raise ValueError(f"AICS_GEMM must be one of {', '.join(GEMM_CHOICES)}, got {choice!r}")
    lib = c_sgemm.library()
    if lib is None and choice == "native":
        raise RuntimeError(f"AICS_GEMM=native, but aicslib's C SGEMM was not built: "
                           f"{c_sgemm.fallback_reason()}")
    return lib


def gemm(a, b, out, accumulate=False):
    """``out[...] = a @ b`` (``+=`` when ``accumulate``) for 2-D operands, on the calling thread.

    float32 products run on aicslib's C SGEMM (``src/aics_sgemm_packed.c``, built at install)
    unless AICS_GEMM=blas or it was not built; anything else runs on
    NumPy's BLAS with one thread. Either way it is one thread's work: callers split it.
    """
    lib = native_gemm_library() if a.dtype == np.float32 else None
    if lib is not None and c_sgemm.usable(a, b, out):
        return c_sgemm.sgemm(lib, a, b, out, accumulate)
    with SingleThreadedBlas():
        if accumulate:
            out += np.matmul(a, b)
            return out
        return np.matmul(a, b, out=out)


def batched_gemm(a, b, out, accumulate=False):
    """``out[i] = a[i] @ b[i]`` (``+=`` when ``accumulate``) for stacks of matrices (3-D): one C
    call for a float32 stack on the C SGEMM, else one :func:`gemm` per matrix."""
    lib = native_gemm_library() if a.dtype == np.float32 and a.shape[0] else None
    if lib is not None and c_sgemm.usable_batched(a, b, out):
        return c_sgemm.sgemm_batched(lib, a, b, out, accumulate)
    for i in range(a.shape[0]):
        gemm(a[i], b[i], out[i], accumulate)
    return out


#: A GEMM with fewer flops than this is not worth splitting over threads.
SPLIT_GEMM_FLOPS = 20e6


def sharded_matmul(a, b, out):
    """``out[...] = a @ b`` for 2-D operands; split over the threads when big.

    Called from a worker thread (one block among several) it is one
    single-threaded BLAS call; called from the caller's thread it cuts the
    GEMM along its longer side (rows of ``a`` or columns of ``b``), which
    gives the same numbers: each output element is still one dot product.
    A product with a long inner dimension (``k >= INNER_SPLIT_RATIO * max(m, n)``)
    is cut along ``k`` instead and the partial products added (rounding then
    differs from one BLAS call, as it does between BLAS builds).
    """
    m, k = a.shape
    n = b.shape[1]
    if NUM_THREADS <= 1 or in_worker() or 2.0 * m * n * k < SPLIT_GEMM_FLOPS:
        return gemm(a, b, out)
    if k >= INNER_SPLIT_RATIO * max(m, n):
        return _inner_split_matmul(a, b, out)
    parts = 2 * NUM_THREADS
    if m >= n:
        step = -(-m // parts)
        run_blocks(lambda r: gemm(a[r[0]:r[1]], b, out[r[0]:r[1]]),
                   [(r, min(r + step, m), 0, 0) for r in range(0, m, step)])
    else:
        step = -(-n // parts)
        run_blocks(lambda c: gemm(a, b[:, c[0]:c[1]], out[:, c[0]:c[1]]),
                   [(c, min(c + step, n), 0, 0) for c in range(0, n, step)])
    return out


#: A product whose inner dimension is this many times its larger outer one (a Gram
#: matrix ``F^T F``, a 1x1 filter gradient ``X^T dY``) is split along the inner dimension.
INNER_SPLIT_RATIO = 4


def _inner_split_matmul(a, b, out):
    """``out[...] = a @ b`` as a sum of ``NUM_THREADS`` partial products over slices of the
    inner dimension, one per thread. Splitting the small outer dimensions instead would make
    every thread stream all of the long operand (``F^T F`` with ``F`` of 50176 x 64: each
    thread re-reading 12.8 MB for a 16-row slice of a 64 x 64 result)."""
    k = a.shape[1]
    step = -(-k // NUM_THREADS)
    cuts = [(c, min(c + step, k), 0, 0) for c in range(0, k, step)]
    parts = [out] + [np.empty_like(out) for _ in cuts[1:]]
    run_blocks(lambda c: gemm(a[:, c[0]:c[1]], b[c[0]:c[1]], parts[c[0] // step]), cuts)
    for p in parts[1:]:
        out += p
    return out


#: Below this many flops a plain product runs on one BLAS thread (cf. matmul_op.py).
SINGLE_THREAD_GEMM_FLOPS = 5e6


def matmul(a, b):
    """``a @ b`` for 2-D float operands (a new array), the way the conv kernels run their GEMMs.

    Small products run on one BLAS thread; big ones are cut by :func:`sharded_matmul` over
    this module's threads, each with a one-thread BLAS. OpenBLAS's own threads spin-wait in
    lockstep: on a machine whose cores are busy with other processes a 2-thread OpenBLAS
    product is many times slower than its idle time (benchmarks/README.md: a VGG19
    style-transfer step's Gram matrices), while the same product on our threads slows down
    only by the load.
    """
    out = np.empty((a.shape[0], b.shape[1]), dtype=np.result_type(a, b))
    if 2.0 * a.shape[0] * a.shape[1] * b.shape[1] < SINGLE_THREAD_GEMM_FLOPS:
        return gemm(a, b, out)
    return sharded_matmul(a, b, out)


_tls = threading.local()


def scratch(slot, shape, dtype=np.float32):
    """A float32 scratch array of ``shape``, reused from call to call (one set per thread).

    Fresh multi-MiB temporaries cost a page fault per 4 KiB on first touch
    (glibc hands big blocks back to the OS on free), which costs as much as
    the arithmetic here; a workspace that lives on avoids it (cuDNN and Eigen
    use workspaces for the same reason). Never return a scratch array.
    """
    n = math.prod(shape)
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    key = (slot, np.dtype(dtype).char)
    buf = bufs.get(key)
    if buf is None or buf.size < n:
        buf = bufs[key] = np.empty(n, dtype=dtype)
    return buf[:n].reshape(shape)


def split_blocks(n_images, n_rows, bytes_per_row, block_bytes=None, gemm_rows_per_row=None, min_gemm_rows=None):
    """Cut ``n_images x n_rows`` work into ``(n0, n1, r0, r1)`` blocks of about ``block_bytes``.

    Whole images are grouped while they fit; a large image is cut into row
    ranges. There are at least ``NUM_THREADS`` blocks when possible. When the
    caller says how many GEMM rows one row of work gives, a block keeps at
    least ``min_gemm_rows`` (default ``MIN_GEMM_ROWS``) of them (a thin GEMM is an
    inefficient one), and work too small to split stays one block (BLAS then uses
    all the threads).
    """
    budget = block_bytes or BLOCK_BYTES
    min_rows = MIN_GEMM_ROWS if min_gemm_rows is None else min_gemm_rows
    if n_rows == 0 or n_images == 0:
        return [(0, n_images, 0, n_rows)]
    if gemm_rows_per_row:
        if n_images * n_rows * gemm_rows_per_row < NUM_THREADS * min_rows:
            return [(0, n_images, 0, n_rows)]
        budget = max(budget, -(-min_rows // gemm_rows_per_row) * bytes_per_row)
    per_image = max(1, n_rows * bytes_per_row)
    if per_image <= budget:
        nb = max(1, min(budget // per_image, -(-n_images // NUM_THREADS)))
        return [(n, min(n + nb, n_images), 0, n_rows) for n in range(0, n_images, nb)]
    rows = max(1, budget // max(1, bytes_per_row))
    return [(n, n + 1, r, min(r + rows, n_rows))
            for n in range(n_images) for r in range(0, n_rows, rows)]


def padded_slab(x, n0, n1, h0, nh, w0, nw, slot):
    """``x[n0:n1, h0:h0+nh, w0:w0+nw]`` with zeros where the window leaves ``x``.

    ``h0``/``w0`` may be negative (top/left padding) and the window may run
    past the bottom/right edge. Returns a view of ``x`` when no padding is
    involved, otherwise a scratch array: padding is done block by block,
    so the padded copy of the whole batch is never materialised.
    """
    N, H, W, C = x.shape
    if h0 >= 0 and w0 >= 0 and h0 + nh <= H and w0 + nw <= W:
        return x[n0:n1, h0:h0 + nh, w0:w0 + nw]
    out = scratch(slot, (n1 - n0, nh, nw, C), x.dtype)
    i0, i1 = min(max(0, -h0), nh), max(min(nh, H - h0), 0)
    j0, j1 = min(max(0, -w0), nw), max(min(nw, W - w0), 0)
    i1, j1 = max(i1, i0), max(j1, j0)
    out[:, :i0] = 0
    out[:, i1:] = 0
    out[:, i0:i1, :j0] = 0
    out[:, i0:i1, j1:] = 0
    out[:, i0:i1, j0:j1] = x[n0:n1, h0 + i0:h0 + i1, w0 + j0:w0 + j1]
    return out

