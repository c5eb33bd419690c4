"""Notebook 02 (graph execution), the Session's planner lab: references and the random graphs the
locked tests plan.

The planner's contract is aicslib's (``aicslib/framework/planner.py``, the seam
``aics.experimental.use_planner``): ``planner(targets, feeds, keep) -> (order, free_after)``.
These references are written apart from the library's (Kahn's algorithm here, a depth-first walk
there), so a test that compares a student's plan with both checks the library too.

``reference_run`` is the small executor of the lab's third exercise: it holds every value in a
dict, counts the bytes it holds after each node has run, and frees what the planner said.
"""
import functools
import heapq

import numpy as np

import aicslib as aics
from aicslib.framework.errors import InvalidArgumentError
from aicslib.framework.execute import KernelCall, run_kernel

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _needs(op, feeds):
    """The ops ``op`` waits for: producers of its inputs that are not fed, and its control inputs."""
    return [t.op for t in op.inputs if t not in feeds] + list(op.control_inputs)


def reference_order(targets, feeds):
    """The ops ``targets`` need (feeds cut their fan-in), producers first: Kahn's algorithm over
    the pruned set (found first with an explicit stack: no recursion, any depth)."""
    needed, stack = set(), list(targets)
    while stack:
        op = stack.pop()
        if op not in needed:
            needed.add(op)
            stack.extend(_needs(op, feeds))
    waiting = {op: len(set(_needs(op, feeds))) for op in needed}
    users = {op: [] for op in needed}
    for op in needed:
        for dep in set(_needs(op, feeds)):
            users[dep].append(op)
    # among the ready ops the one created first runs first: the order depends on the set alone
    ready = [(op._id, op) for op, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, op = heapq.heappop(ready)
        order.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (user._id, user))
    if len(order) != len(needed):
        stuck = sorted(op.name for op, n in waiting.items() if n > 0)
        raise InvalidArgumentError(None, None, f"Graph contains a cycle through {', '.join(stuck[:5])}")
    return order


def reference_frees(order, keep):
    """Per op of ``order``: the tensors nothing later reads (walked backwards: the first reader met
    is the last one), and the outputs nobody reads; never a tensor of ``keep``."""
    seen, frees = set(keep), [[] for _ in order]
    for i in range(len(order) - 1, -1, -1):
        op = order[i]
        for t in list(op.inputs) + list(op.outputs):
            if t not in seen:
                seen.add(t)
                frees[i].append(t)
    return frees


def reference_planner(targets, feeds, keep):
    order = reference_order(targets, feeds)
    return order, reference_frees(order, keep)


def kernel_call(op):
    """``compute(*input arrays)`` with the registry's CPU kernel for ``op``: one array, or a tuple
    for an op with several outputs."""
    call = KernelCall(op.op_def, op.attrs, CPU, op.input_lengths, op.name, None)
    return lambda *args: run_kernel(call, args, op)


def shape_str(shape):
    """A shape as TF's messages write it: [?,3]."""
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def unfed_message(op):
    t = op.outputs[0]
    return (f"You must feed a value for placeholder tensor '{op.name}' with dtype {t.dtype.name} "
            f"and shape {shape_str(t.shape)}")


def reference_run(fetches, feed_dict, planner=reference_planner, kernel=kernel_call):
    """(fetched values, peak bytes held): the bytes of every value held (fed ones included), counted
    after each node has stored its outputs and before its frees."""
    feeds = dict(feed_dict)
    targets = list(dict.fromkeys(t.op for t in fetches if t not in feeds))
    order, free_after = planner(targets, feeds, set(fetches))
    values = dict(feeds)
    peak = sum(v.nbytes for v in values.values())
    for op, free in zip(order, free_after):
        if op.type == "Placeholder" and op.outputs[0] not in feeds:
            raise InvalidArgumentError(None, op, unfed_message(op))
        out = kernel(op)(*[values[t] for t in op.inputs])
        outs = out if len(op.outputs) != 1 else (out,)
        for t, v in zip(op.outputs, outs):
            if t not in feeds:           # a fed value wins over a computed one
                values[t] = v
        peak = max(peak, sum(v.nbytes for v in values.values()))
        for t in free:
            values.pop(t, None)
    return [values[t] for t in fetches], peak


def simulate_peak(order, free_after, feeds, nbytes):
    """The peak bytes a plan holds, from each tensor's size (``nbytes(t)``), counted as
    ``reference_run`` counts them; no kernel runs."""
    live = {t: nbytes(t) for t in feeds}
    peak = sum(live.values())
    for op, free in zip(order, free_after):
        for t in op.outputs:
            live.setdefault(t, nbytes(t))
        peak = max(peak, sum(live.values()))
        for t in free:
            live.pop(t, None)
    return peak


def static_nbytes(t):
    return int(np.prod(t.shape.as_list(), dtype=np.int64)) * np.dtype(t.dtype.as_numpy_dtype).itemsize


# ---- random graphs for the tests

SHAPES = [(4, 4), (8, 4), (2, 4)]


@functools.lru_cache(maxsize=64)   # a test cell runs once per answer it grades: build each graph once
def random_graph(seed, n_ops=30):
    """A random float32 graph: (graph, fetches, feed_dict, unfed placeholders).

    Diamonds (values read by several ops), a split whose second half is sometimes unused,
    control edges, two to three fetches, a fed intermediate whose fan-in holds a placeholder
    nobody feeds, and a placeholder only an unfetched branch needs.
    """
    rng = np.random.default_rng(seed)
    graph = aics.Graph()
    with graph.as_default():
        pool = {s: [] for s in SHAPES}
        fed = {}
        placeholders = [aics.placeholder(aics.float32, SHAPES[0], name=f"x{i}") for i in range(2)]
        for p in placeholders:
            fed[p] = rng.standard_normal(SHAPES[0]).astype(np.float32)
            pool[SHAPES[0]].append(p)
        hidden = aics.placeholder(aics.float32, SHAPES[0], name="unfed")   # only behind a fed value
        pool[SHAPES[0]].append(aics.constant(rng.standard_normal(SHAPES[0]).astype(np.float32), name="c"))
        behind = aics.tanh(hidden + pool[SHAPES[0]][0], name="behind_feed")
        cut = aics.multiply(behind, 2.0, name="fed_intermediate")
        fed[cut] = rng.standard_normal(SHAPES[0]).astype(np.float32)
        pool[SHAPES[0]].append(cut)
        ops = []

        def pick(shape):
            return pool[shape][int(rng.integers(len(pool[shape])))]

        for i in range(n_ops):
            kind = rng.choice(["unary", "binary", "binary", "concat", "split", "reduce", "control"])
            shape = SHAPES[int(rng.integers(len(SHAPES)))]
            if not pool[shape]:
                shape = SHAPES[0]
            a = pick(shape)
            if kind == "unary":
                out = [[aics.tanh, aics.negative, aics.square, aics.nn.relu][int(rng.integers(4))](a)]
            elif kind == "binary":
                out = [[aics.add, aics.multiply, aics.subtract, aics.maximum][int(rng.integers(4))](a, pick(shape))]
            elif kind == "concat" and shape == (4, 4):
                out = [aics.concat([a, pick(shape)], 0)]
            elif kind == "split" and shape in ((8, 4), (4, 4)):
                halves = aics.split(a, 2, axis=0)
                out = halves if rng.random() < 0.5 else halves[:1]     # the second half sometimes unused
            elif kind == "reduce":
                out = [aics.add(a, aics.reduce_sum(a, axis=0, keepdims=True))]
            else:
                with graph.control_dependencies([ops[int(rng.integers(len(ops)))].op] if ops else []):
                    out = [aics.identity(a)]
            for t in out:
                pool[tuple(t.shape.as_list())].append(t)
            ops.extend(out)
        lonely = aics.placeholder(aics.float32, SHAPES[0], name="not_needed")
        aics.add(lonely, ops[-1] if tuple(ops[-1].shape.as_list()) == SHAPES[0] else lonely, name="unfetched_branch")
        late = ops[len(ops) // 2:]
        picks = rng.choice(len(late), size=min(len(late), int(rng.integers(2, 4))), replace=False)
        fetches = [late[int(i)] for i in sorted(picks)]
        if rng.random() < 0.5:
            fetches.append(cut)      # a fed tensor fetched: its value is the fed one
    return graph, fetches, fed, [hidden, lonely]


@functools.lru_cache(maxsize=4)
def deep_chain(depth):
    """(graph, fetch, feed_dict): x -> tanh -> tanh ... ``depth`` ops deep."""
    graph = aics.Graph()
    with graph.as_default():
        x = aics.placeholder(aics.float32, [3], name="x")
        y = x
        for _ in range(depth):
            y = aics.tanh(y)
    return graph, y, {x: np.array([0.5, -1.0, 2.0], np.float32)}
