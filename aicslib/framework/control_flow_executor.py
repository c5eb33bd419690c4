"""Running graphs that contain control flow (TF's core/common_runtime/executor.cc, in miniature).

A graph with ``Switch``/``Merge``/``Enter``/``Exit``/``NextIteration`` cannot
be run as a list of steps in topological order: it may contain cycles (a
while loop's back edge), some nodes must not run at all (the untaken branch
of a cond), and the nodes of a loop body run once per iteration. ``Session``
hands such graphs to this executor (it checks once per graph version), so
dataflow graphs without control flow keep the fast step loop.

The executor is *dataflow-driven*, as TF's: every value travels with a tag
(frame, iteration), and a node instance ``(node, frame, iteration)`` becomes
ready when all its inputs for that tag have arrived.

* **Dead tensors.** A ``Switch`` sends its input to one output and ``DEAD`` to
  the other. A node with a dead input (or a dead control input) does not run:
  all its outputs are dead. ``Merge`` is the exception: it runs as soon as one
  live input arrives, and is dead only when all its inputs are.
* **Frames.** ``Enter`` moves a value into a child frame (one frame instance
  per loop *execution*; a nested loop gets a fresh one per outer iteration),
  iteration 0; a constant ``Enter`` feeds every iteration of the frame.
  ``NextIteration`` moves a value to iteration i+1 (a dead one is dropped: that
  is how a loop stops). A loop ``Merge`` takes its Enter input in iteration 0
  and its NextIteration input after that.
* **Exits.** ``Exit`` values leave the frame when it has finished (no work
  left in it): the live one (from the last iteration) if any, else dead (the
  whole loop sat in an untaken branch). Waiting for the frame to finish also
  guarantees that a loop's gradient sees all the values the forward loop
  pushed on its stacks.

Pruning is the planner's (``planner.prune``, loops' back edges allowed) from
the fetches, plus every ``StackPushV2`` whose stack is used (the forward half
of a while-loop gradient: nothing downstream consumes a push, but the pops
need it). Each node runs through the run's step function
(``execute.run_kernel``), as in every executor.
"""
import collections
import time
import weakref

from .dead_tensor import DEAD
from .errors import DeadlineExceededError, InvalidArgumentError
from .execute import run_kernel
from .graph import Operation
from .planner import fetch_targets, prune
from .run_deadline import current_deadline

CONTROL_FLOW_OPS = frozenset(("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "RefSwitch"))



_cache = weakref.WeakKeyDictionary()  # Graph -> (version, has control flow)


def has_control_flow(graph):
    """True if ``graph`` has a control-flow op (cached per graph version)."""
    hit = _cache.get(graph)
    version = graph.version
    if hit is not None and hit[0] == version:
        return hit[1]
    found = any(op.type in CONTROL_FLOW_OPS for op in graph.get_operations())
    _cache[graph] = (version, found)
    return found


# Kinds of nodes the executor treats specially.
_NORMAL, _MERGE, _LOOP_MERGE, _ENTER, _EXIT, _NEXT = range(6)


class _Frame:
    """One execution of a loop (or the root): its iterations, constants and exits."""

    __slots__ = ("parent", "parent_iter", "name", "children", "constants", "iters", "queued", "exits",
                 "enters_seen", "enters_expected", "done")

    def __init__(self, parent, parent_iter, name, enters_expected):
        self.parent = parent
        self.parent_iter = parent_iter
        self.name = name
        self.children = {}
        self.constants = []       # (Enter node index, outputs, dead) fed to every iteration
        self.iters = {0}
        self.queued = 0           # ready node instances in this frame and the frames inside it
        self.exits = {}           # Exit node index -> value (a live one wins)
        self.enters_seen = 0
        self.enters_expected = enters_expected
        self.done = False


class ControlFlowPlan:
    """The pruned graph of one (fetches, feeds) signature, ready to run with frames and deadness."""

    def __init__(self, graph, elements, feeds, kernel_call):
        self.elements = elements
        ops = self._prune(graph, elements, feeds)
        self.ops = ops
        index = {op: i for i, op in enumerate(ops)}
        n = len(ops)
        self.calls = [None] * n
        self.kind = [_NORMAL] * n
        self.n_pending = [0] * n
        self.n_data = [0] * n
        self.fixed = [None] * n           # per node: {input slot: fed tensor}
        self.out_edges = [None] * n       # per node: per output: [(consumer, slot)]
        self.ctrl_edges = [[] for _ in range(n)]
        self.frame_name = [None] * n
        self.is_constant = [False] * n
        self.fed_out = [None] * n
        self.enters_per_frame = collections.Counter()
        for i, op in enumerate(ops):
            if op.type == "Placeholder" and op.outputs[0] not in feeds:
                t = op.outputs[0]
                raise InvalidArgumentError(None, op, f"You must feed a value for placeholder tensor "
                                           f"'{op.name}' with dtype {t.dtype.name}\n\t [[node {op.name}]]")
            self.calls[i] = kernel_call(op)
            self.out_edges[i] = [[] for _ in op.outputs]
            self.fed_out[i] = [t in feeds for t in op.outputs]
            t = op.type
            if t == "Merge":
                loop = any(x.op.type == "NextIteration" for x in op.inputs)
                self.kind[i] = _LOOP_MERGE if loop else _MERGE
            elif t == "Enter":
                self.kind[i] = _ENTER
                self.frame_name[i] = op.get_attr("frame_name")
                self.is_constant[i] = bool(op.get_attr("is_constant"))
                self.enters_per_frame[self.frame_name[i]] += 1
            elif t == "Exit":
                self.kind[i] = _EXIT
            elif t == "NextIteration":
                self.kind[i] = _NEXT
        for i, op in enumerate(ops):
            fixed = {}
            pending = 0
            self.n_data[i] = len(op.inputs)
            for slot, x in enumerate(op.inputs):
                if x in feeds:
                    fixed[slot] = x  # the value is looked up in each run's feeds
                    continue
                self.out_edges[index[x.op]][x.value_index].append((i, slot))
                pending += 1
            for c in op.control_inputs:
                if c in index:
                    self.ctrl_edges[index[c]].append(i)
                    pending += 1
            self.fixed[i] = fixed or None
            self.n_pending[i] = 1 if self.kind[i] == _LOOP_MERGE else pending
        self.sources = [i for i in range(n) if self.n_pending[i] == 0]
        self.fetch_index = []
        for el in elements:
            if isinstance(el, Operation):
                self.fetch_index.append((index[el], None))
            elif el in feeds:
                self.fetch_index.append((None, el))
            else:
                self.fetch_index.append((index[el.op], el.value_index))
        # Target ops (fetched to run, not for a value) may sit inside a loop body: a print in a
        # while loop traced by tf.function runs once per iteration and is done when the loop is.
        self.targets = {i for i, value_index in self.fetch_index if i is not None and value_index is None}

    @staticmethod
    def _prune(graph, elements, feeds):
        """Ancestors of the fetches (cycles allowed), stopping at fed tensors; plus stack pushes."""
        keep = set(prune(fetch_targets(elements, feeds), feeds, allow_cycles=True))
        while True:  # pushes onto kept stacks, and what they need
            more = [op for op in graph.get_operations() if op.type == "StackPushV2" and op not in keep
                    and _stack_of(op) in keep]
            if not more:
                break
            keep.update(prune(more, feeds, allow_cycles=True))
        return [op for op in graph.get_operations() if op in keep]  # creation order: deterministic

    # ---- running
    def execute(self, feeds, step=run_kernel):
        """Runs the plan with ``feeds``; each node through ``step`` (``run_kernel`` or a Tracer)."""
        self.feeds = feeds
        self.step = step
        self.queue = collections.deque()
        self.pending = {}
        self.results = {}
        root = self.root = _Frame(None, 0, "", 0)
        root.done = True  # never "finishes": it has no exits
        for i in self.sources:
            self._enqueue(i, root, 0, self._inputs(i), False)
        queue = self.queue
        deadline = current_deadline()  # RunOptions(timeout_in_ms=...): stops a loop that never ends
        count = 0
        while queue:
            count += 1
            if deadline is not None and count % 256 == 0 and time.monotonic() > deadline:
                raise DeadlineExceededError(None, None, f"Timed out: the step ran past its deadline "
                                            f"(RunOptions.timeout_in_ms) after {count} node executions; "
                                            f"is a while_loop's condition ever false?")
            i, f, it, inputs, dead = queue.popleft()
            if dead:
                outs = [DEAD] * len(self.out_edges[i])
            else:
                outs = self._run(i, inputs)
            self._emit(i, f, it, outs, dead)
            fr = f
            while fr is not None:
                fr.queued -= 1
                if fr.queued == 0 and not fr.done:
                    self._maybe_finish(fr)
                fr = fr.parent
        out = []
        for k, (i, value_index) in enumerate(self.fetch_index):
            if i is None:
                out.append(feeds[self.elements[k]])
                continue
            key = (i, value_index)
            if key not in self.results:
                raise InvalidArgumentError(None, self.ops[i], f"Fetch '{self.elements[k].name}' was not "
                                           f"computed: it is inside a loop or its graph stalled.")
            v = self.results[key]
            if v is DEAD and value_index is not None:  # a dead target op simply did not run (as TF)
                raise InvalidArgumentError(None, self.ops[i], f"Retval[{k}] does not have value: fetch "
                                           f"'{self.elements[k].name}' is dead (on the untaken side of "
                                           f"a Switch).")
            out.append(None if value_index is None else v)
        self.queue = self.pending = self.results = self.root = self.feeds = self.step = None
        return out

    def _inputs(self, i):
        fixed = self.fixed[i]
        inputs = [None] * self.n_data[i]
        if fixed:
            for s, t in fixed.items():
                inputs[s] = self.feeds[t]
        return inputs

    def _run(self, i, inputs):
        k = self.kind[i]
        if k == _MERGE or k == _LOOP_MERGE:
            inputs = [DEAD if v is None else v for v in inputs]
        r = self.step(self.calls[i], inputs, self.ops[i])
        return [r] if len(self.out_edges[i]) == 1 else list(r)

    def _enqueue(self, i, f, it, inputs, dead):
        self.queue.append((i, f, it, inputs, dead))
        fr = f
        while fr is not None:
            fr.queued += 1
            fr = fr.parent

    def _emit(self, i, f, it, outs, dead):
        k = self.kind[i]
        if f is self.root:
            for idx, v in enumerate(outs):
                self.results[(i, idx)] = v
            self.results[(i, None)] = DEAD if dead else True
        elif i in self.targets and self.results.get((i, None)) is not True:
            self.results[(i, None)] = DEAD if dead else True
        if k == _ENTER:
            child = f.children.get((it, self.frame_name[i]))
            if child is None:
                child = f.children[(it, self.frame_name[i])] = _Frame(
                    f, it, self.frame_name[i], self.enters_per_frame[self.frame_name[i]])
            child.enters_seen += 1
            if self.is_constant[i]:
                child.constants.append((i, outs, dead))
                for j in sorted(child.iters):
                    self._deliver(i, outs, dead, child, j)
            else:
                self._deliver(i, outs, dead, child, 0)
        elif k == _EXIT:
            v = outs[0]
            if v is not DEAD or i not in f.exits:
                f.exits[i] = v
        elif k == _NEXT:
            if dead or outs[0] is DEAD:
                return  # a dead value does not start another iteration: the loop ends here
            j = it + 1
            if j not in f.iters:
                f.iters.add(j)
                for ci, couts, cdead in f.constants:
                    self._deliver(ci, couts, cdead, f, j)
            self._deliver(i, outs, dead, f, j)
        else:
            self._deliver(i, outs, dead, f, it)

    def _maybe_finish(self, f):
        if f.enters_seen < f.enters_expected:
            return
        f.done = True
        parent = f.parent
        for i, v in f.exits.items():
            self._deliver(i, [v], v is DEAD, parent, f.parent_iter)
            if parent is self.root:
                self.results[(i, 0)] = v
                self.results[(i, None)] = DEAD if v is DEAD else True
        f.exits = {}
        parent.children.pop((f.parent_iter, f.name), None)

    def _deliver(self, i, outs, dead, f, it):
        for v, edges in zip(outs, self.out_edges[i]):
            for c, slot in edges:
                self._arrive(c, slot, v, f, it)
        ctrl = DEAD if dead else True
        for c in self.ctrl_edges[i]:
            self._arrive(c, -1, ctrl, f, it)

    def _arrive(self, c, slot, v, f, it):
        kind = self.kind[c]
        if kind == _LOOP_MERGE:
            if slot < 0:
                return
            inputs = [None] * self.n_data[c]
            inputs[slot] = v
            self._enqueue(c, f, it, inputs, v is DEAD)
            return
        if kind == _NORMAL and self.n_pending[c] == 1:  # one input: ready at once, no bookkeeping
            inputs = self._inputs(c)
            if slot >= 0:
                inputs[slot] = v
            self._enqueue(c, f, it, inputs, v is DEAD)
            return
        key = (c, f, it)
        inst = self.pending.get(key)
        if inst is None:
            inst = self.pending[key] = [self._inputs(c), self.n_pending[c], False, False]
        if slot >= 0:
            inst[0][slot] = v
        if kind == _MERGE:
            if slot >= 0 and v is not DEAD and not inst[3]:
                inst[3] = True
                self._enqueue(c, f, it, list(inst[0]), False)
            inst[1] -= 1
            if inst[1] == 0:
                del self.pending[key]
                if not inst[3]:
                    self._enqueue(c, f, it, inst[0], True)
            return
        if v is DEAD:
            inst[2] = True
        inst[1] -= 1
        if inst[1] == 0:
            del self.pending[key]
            self._enqueue(c, f, it, inst[0], inst[2])


def _stack_of(push_op):
    """The StackV2 op a push writes to (through the Enters that bring its handle into loops)."""
    op = push_op.inputs[0].op
    while op.type in ("Enter", "Identity", "Switch"):
        op = op.inputs[0].op
    return op
