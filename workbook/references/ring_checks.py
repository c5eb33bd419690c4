"""The checks of notebook 19's ring-allreduce lab (section 6), kept out of the notebook's cells.

- ``check_step_function(fn, phase, p, n, seed)``: a student's one-step function for
  reduce-scatter or allgather, run step by step on simulated ranks; every rank's buffer is
  compared after **every** step with the state the ring algorithm has then
  (``ring_allreduce.state``, from the definition), so doing a whole phase in its first step fails.
- ``check_rank_program(fn, p, n, seed)``: a student's per-rank ring-allreduce, run on ``p``
  threads that talk through ``ThreadComm`` (mpi4py's ``Get_rank``/``Get_size``/``Sendrecv``/
  ``Send``/``Recv`` on NumPy buffers, nothing else): every message a rank sends is compared with
  the chunk the ring sends at that step, then every rank's result with NumPy's sum.

Every failure is a ``grading.CheckFailed`` saying what was expected and what came.
"""
import os
import queue
import sys
import threading
import traceback

import numpy as np

import aicslib
import workbook
from workbook import grading

from . import ring_allreduce as ref

ALLOWED = {"chunk_bounds"}                              # aicslib's chunk helper may be used
COMM_METHODS = {"Get_rank", "Get_size", "Sendrecv", "Send", "Recv"}


def _own_frames(exc, fn):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == fn.__code__.co_filename]
    return "".join(f"\n    in {f.name}, line {f.lineno}: {(f.line or '').strip()}" for f in frames)


def student_call(call, fn, run):
    """``run()``; an error raised in the student's code is reported with the student's own lines,
    the release stub's bare NotImplementedError passes through as "not answered"."""
    try:
        return run()
    except grading.CheckFailed:
        raise
    except Exception as exc:
        if isinstance(exc, NotImplementedError) and not exc.args:
            raise
        raise grading.CheckFailed(f"{call} raised {type(exc).__name__}: {exc}{_own_frames(exc, fn)}") from None


def _inputs(p, n, seed):
    g = np.random.default_rng(seed)     # small integers: every order of additions gives the same sum
    return [g.integers(-9, 10, size=n).astype(np.float64) for _ in range(p)]


def _step_hint(phase, p, n, step, rank, got, before, expected):
    """What the first wrong element of rank's buffer says about the mistake."""
    i = int(np.flatnonzero(got != expected)[0])
    c, receives, left = ref.chunk_of(i, n, p), ref.received_chunk(phase, p, rank, step), (rank - 1) % p
    if c != receives:
        return (f"element {i} is in chunk {c}, but at {phase} step {step} rank {rank} receives only chunk "
                f"{receives} (from rank {left}); every other chunk of its buffer stays as it was")
    if got[i] == before[i]:
        return f"chunk {c} did not change: rank {rank} receives rank {left}'s chunk {c} at this step"
    if phase == ref.PHASES[0]:
        return (f"chunk {c} is the one rank {rank} receives at step {step}: add rank {left}'s chunk {c} as it was "
                f"before this step (all messages of a step travel at the same time), once")
    return (f"chunk {c} is the one rank {rank} receives at step {step}: overwrite it with rank {left}'s "
            f"chunk {c} as it was before this step (a complete sum: adding counts ranks twice)")


def check_step_function(fn, phase, p, n, seed, name):
    """Runs ``fn(buffers, step)`` for every step of ``phase`` and checks all buffers after each."""
    arrays = _inputs(p, n, seed)
    bufs = [b.copy() for b in (arrays if phase == ref.PHASES[0] else ref.reduce_scatter_state(arrays, p - 1))]
    originals = list(bufs)
    shown = f" (the ranks' inputs: {[a.tolist() for a in arrays]})" if p * n <= 40 else ""
    for step in range(p - 1):
        call = f"{name}(buffers, step={step}) with p={p} ranks of n={n} elements"
        before = [b.copy() for b in bufs]
        student_call(call, fn, lambda: grading.no_library_calls(fn, bufs, step, allowed=ALLOWED, what=name))
        grading.check(len(bufs) == p and all(b is o for b, o in zip(bufs, originals)),
                      f"{call}: the list of buffers changed: update each rank's own array in place "
                      f"(buffers[r][lo:hi] ...= ...), do not replace it")
        expected = ref.state(phase, arrays, step + 1)
        for rank in range(p):
            hint = None
            if bufs[rank].shape == expected[rank].shape and not np.array_equal(bufs[rank], expected[rank]):
                hint = _step_hint(phase, p, n, step, rank, bufs[rank], before[rank], expected[rank])
            grading.check_array(bufs[rank], expected[rank], f"{call}: rank {rank}'s buffer after {phase} step "
                                f"{step}{shown}", hint=hint)
    from aicslib.distribute import ring

    swap = {"reduce_scatter" if phase == ref.PHASES[0] else "allgather": fn}
    full = student_call(f"a whole ring-allreduce with {name} (p={p}, n={n})", fn,
                        lambda: ring.simulate_ring_allreduce(arrays, **swap))
    for rank in range(p):
        grading.check_array(full[rank], np.sum(arrays, axis=0), f"a whole ring-allreduce with {name} (p={p}, "
                            f"n={n}): rank {rank}'s result", hint="after both phases every rank holds the sum")


class _World:
    def __init__(self, p, timeout):
        self.p, self.timeout = p, timeout
        self.channels = {(a, b): queue.Queue() for a in range(p) for b in range(p)}
        self.sent = [[] for _ in range(p)]           # per rank: (dest, copy of the message)
        self.done = [False] * p
        self.failed = threading.Event()


class RankError(Exception):
    """A rank misused the communicator (a wrong peer, a message that never comes, a collective)."""


class ThreadComm:
    """One rank's end of an in-process ring of ``p`` ranks, with mpi4py's point-to-point calls on
    NumPy buffers. Collectives (``Allreduce``, ``bcast``, ...) are refused: the exercise is to
    build one from messages."""

    def __init__(self, world, rank):
        self._world, self._rank = world, rank

    def Get_rank(self):
        return self._rank

    def Get_size(self):
        return self._world.p

    def _peer(self, peer, what):
        if not isinstance(peer, (int, np.integer)) or not 0 <= peer < self._world.p:
            raise RankError(f"rank {self._rank}: {what}={peer!r} is not a rank (0..{self._world.p - 1})")
        return int(peer)

    def Send(self, buf, dest, tag=0):
        dest = self._peer(dest, "dest")
        data = np.array(buf, copy=True)
        self._world.sent[self._rank].append((dest, data))
        self._world.channels[(self._rank, dest)].put(data)

    def Recv(self, buf, source, tag=0, status=None):
        source = self._peer(source, "source")
        if not isinstance(buf, np.ndarray):
            raise RankError(f"rank {self._rank}: the receive buffer must be a NumPy array, got {type(buf).__name__}")
        channel, waited = self._world.channels[(source, self._rank)], 0.0
        while True:
            try:
                data = channel.get(timeout=0.02)
                break
            except queue.Empty:
                waited += 0.02
                if self._world.failed.is_set():
                    raise RankError("stopped: another rank failed") from None
                if (self._world.done[source] and channel.empty()) or waited > self._world.timeout:
                    raise RankError(f"rank {self._rank} waits for a message from rank {source} that never comes "
                                    f"(rank {source} sent {len(self._world.sent[source])} messages in all): every "
                                    f"rank must make the same number of Sendrecv calls, in the same order") from None
        if data.size != buf.size:
            raise RankError(f"rank {self._rank} received {data.size} elements from rank {source} into a buffer of "
                            f"{buf.size}: the receive buffer must have the size of the chunk that arrives")
        buf[...] = data.reshape(buf.shape)

    def Sendrecv(self, sendbuf, dest, sendtag=0, recvbuf=None, source=None, recvtag=None, status=None):
        if recvbuf is None or source is None:
            raise RankError(f"rank {self._rank}: Sendrecv needs recvbuf= (a NumPy array) and source= (the rank "
                            f"it receives from)")
        self.Send(sendbuf, dest)
        self.Recv(recvbuf, source)

    def __getattr__(self, name):
        raise RankError(f"comm.{name} is not available here: build the allreduce from point-to-point messages "
                        f"(comm.Sendrecv, or comm.Send/comm.Recv; comm.Get_rank, comm.Get_size)")


def run_ranks(fn, arrays, timeout=2.0):
    """Runs ``fn(comm, arrays[r])`` on one thread per rank; returns (results, messages sent per
    rank, aicslib/workbook functions called). The first rank's error is raised as CheckFailed."""
    p = len(arrays)
    world = _World(p, timeout)
    results, called, errors = [None] * p, [set() for _ in range(p)], [None] * p

    def rank_main(r):
        # grading.library_calls, keeping what was called when the answer raises (a library call
        # that reaches for comm.Irecv should be reported as the library call it is)
        dirs = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (aicslib, workbook))

        def profiler(frame, event, arg):
            if event == "call" and frame.f_code.co_filename.startswith(dirs):
                caller = frame.f_back
                if (caller is None or not caller.f_code.co_filename.startswith(dirs)) \
                        and not frame.f_code.co_name.startswith("<"):
                    called[r].add(frame.f_code.co_name)

        sys.setprofile(profiler)      # per thread: this rank's calls only
        try:
            results[r] = fn(ThreadComm(world, r), arrays[r])
        except BaseException as exc:
            errors[r] = exc
            world.failed.set()
        finally:
            sys.setprofile(None)
            world.done[r] = True

    threads = [threading.Thread(target=rank_main, args=(r,), daemon=True) for r in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 5)
    first = next((e for e in errors if e is not None and not str(e).startswith("stopped:")), None)
    first = first or next((e for e in errors if e is not None), None)
    if first is not None:
        first.called = set().union(*called)
        raise first
    if any(t.is_alive() for t in threads):
        raise grading.CheckFailed(f"the ranks did not finish within {timeout + 5:g} s")
    return results, [[m for _, m in s] for s in world.sent], set().union(*called)


def check_rank_program(fn, p, n, seed, name, dtype=np.float64):
    """Runs the per-rank program on ``p`` ranks of ``n`` elements and checks every message and result."""
    arrays = [a.astype(dtype) for a in _inputs(p, n, seed)]
    given = [a.copy() for a in arrays]
    call = f"{name}(comm, x) on p={p} ranks of n={n} elements"
    def no_library(called):
        extra = sorted(called - ALLOWED - COMM_METHODS - {"__getattr__"})
        grading.check(not extra, f"{name} calls the library ({', '.join(extra)}): write the ring yourself with "
                      f"comm.Sendrecv (allowed: ring.chunk_bounds)")

    def attempt():
        try:
            return run_ranks(fn, arrays)
        except Exception as exc:
            no_library(getattr(exc, "called", set()))    # a library call is what to report
            if isinstance(exc, RankError):
                raise grading.CheckFailed(f"{call}: {exc}{_own_frames(exc, fn)}") from None
            raise

    results, sent, called = student_call(call, fn, attempt)
    no_library(called)
    for r in range(p):
        grading.check_array(arrays[r], given[r], f"{call}: rank {r}'s input x after the call",
                            hint="work on a copy (buf = x.copy().reshape(-1)): x belongs to the caller")
    bounds = ref.chunk_bounds(n, p)
    for r in range(p):
        grading.check(len(sent[r]) == 2 * (p - 1), f"{call}: rank {r} sent {len(sent[r])} messages; the ring "
                      f"sends 2(p-1) = {2 * (p - 1)}: one chunk per step, p-1 reduce-scatter steps then p-1 "
                      f"allgather steps")
        for k, msg in enumerate(sent[r]):
            phase, step = (ref.PHASES[0], k) if k < p - 1 else (ref.PHASES[1], k - (p - 1))
            c = ref.sent_chunk(phase, p, r, step)
            lo, hi = bounds[c]
            expected = ref.state(phase, arrays, step)[r][lo:hi]
            grading.check_array(msg.reshape(-1), expected, f"{call}: the message rank {r} sends at {phase} step "
                                f"{step} (its chunk {c}, elements {lo}..{hi - 1}, as the ring has it then)",
                                hint=f"at {phase} step {step} rank {r} sends chunk {c} to rank {(r + 1) % p}")
    total = np.sum(given, axis=0)
    for r in range(p):
        grading.check_array(results[r], total.astype(dtype), f"{call}: rank {r}'s result", dtype=dtype,
                            hint="after reduce-scatter and allgather every rank holds the sum of all inputs")
