"""Running one Session step on several devices at once: a thread per device.

TF's DirectSession partitions a multi-device graph (one partition per device,
Send/Recv pairs on the edges that cross devices) and gives each partition its
own executor; the executors run concurrently and meet only where a value
crosses from one device to another. Here every device is a thread of this
process and a "Send/Recv" is handing over a NumPy array, so the partitions
share one table of values:

* each node waits for the nodes that produce its inputs and its control
  inputs (a count of unfinished dependencies, as TF's executor keeps);
* a node whose count reaches zero joins its device's ready list, in plan
  order; the device's thread takes the first ready node, runs its kernel,
  and releases its consumers;
* a value is freed when its last consumer has run (counted down from the
  plan's ``uses``, since with threads "last" in plan order need not be last
  in time).

Each node runs through the same step function as on one thread
(``execute.run_kernel``, or the run's Tracer), so errors, dtype checks and
traces are the same.

The threads really overlap where the kernels release Python's GIL: NumPy's
BLAS calls (matmul) and loops over large arrays do; small ops mostly do not.
Graphs with TF1 control flow (Switch/Merge) run on the sequential path.
"""
import heapq
import threading
import weakref

from .execute import run_kernel

_SEQUENTIAL_ONLY = frozenset({"Switch", "Merge", "RefSwitch", "RefMerge", "Enter", "RefEnter", "Exit",
                              "RefExit", "NextIteration", "RefNextIteration", "LoopCond"})

_analyses = weakref.WeakKeyDictionary()


class _Analysis:
    """What the threaded run needs per plan, computed once."""

    def __init__(self, plan):
        steps = plan.steps
        self.devices = sorted({s.device for s in steps})
        self.applies = len(self.devices) > 1 and not any(s.op.type in _SEQUENTIAL_ONLY for s in steps)
        if not self.applies:
            return
        producer = {}
        for i, s in enumerate(steps):
            for slot in s.out_slots:
                producer[slot] = i
        index_of_op = {s.op: i for i, s in enumerate(steps)}
        self.consumers = [[] for _ in steps]
        self.dep_counts = [0] * len(steps)
        for i, s in enumerate(steps):
            deps = {producer[slot] for slot in s.in_slots if slot in producer}
            deps |= {index_of_op[c] for c in s.op.control_inputs if c in index_of_op}
            deps.discard(i)
            for d in deps:
                self.consumers[d].append(i)
            self.dep_counts[i] = len(deps)


def analysis(plan):
    a = _analyses.get(plan)
    if a is None:
        a = _analyses[plan] = _Analysis(plan)
    return a


def applies(plan):
    """True when the plan's nodes sit on more than one device and it has no control-flow ops."""
    return analysis(plan).applies


def run(plan, vals, step=run_kernel):
    """Executes ``plan`` into ``vals`` with one thread per device; raises the first error."""
    a = analysis(plan)
    steps = plan.steps
    keep = plan.keep
    remaining = list(a.dep_counts)
    uses = dict(plan.uses)
    ready = {d: [] for d in a.devices}
    for i, n in enumerate(remaining):
        if n == 0:
            heapq.heappush(ready[steps[i].device], i)
    cond = threading.Condition()
    state = {"done": 0, "error": None}
    total = len(steps)

    def worker(device):
        while True:
            with cond:
                while not ready[device] and state["error"] is None and state["done"] < total:
                    cond.wait()
                if state["error"] is not None or state["done"] >= total:
                    return
                i = heapq.heappop(ready[device])
            s = steps[i]
            try:
                r = step(s.call, [vals[j] for j in s.in_slots], s.op)
            except Exception as e:
                with cond:
                    if state["error"] is None:
                        state["error"] = e
                    cond.notify_all()
                return
            outs = r if s.multi else (r,)
            with cond:
                for slot, v in zip(s.out_slots, outs):
                    vals[slot] = v
                for slot in s.out_slots:
                    if slot not in uses and slot not in keep:
                        vals[slot] = None
                for slot in s.in_slots:
                    uses[slot] -= 1
                    if uses[slot] == 0 and slot not in keep:
                        vals[slot] = None
                for c in a.consumers[i]:
                    remaining[c] -= 1
                    if remaining[c] == 0:
                        heapq.heappush(ready[steps[c].device], c)
                state["done"] += 1
                cond.notify_all()

    threads = [threading.Thread(target=worker, args=(d,), name=f"aics-executor {d}", daemon=True)
               for d in a.devices[1:]]
    for t in threads:
        t.start()
    worker(a.devices[0])  # the calling thread serves the first device
    for t in threads:
        t.join()
    if state["error"] is not None:
        raise state["error"]
