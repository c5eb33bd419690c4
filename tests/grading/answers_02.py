"""Plausible wrong answers for notebook 02's exercises (``gcd_graph``: Euclid's algorithm as a graph
``while_loop``; the planner lab's ``plan_order``, ``plan_frees`` and ``run_graph``), keyed by
grade_id, and different correct ones. Each wrong answer replaces the body of its function and must
lose the exercise's points (and must terminate: none loops forever); each correct one must score
full marks."""

WRONG_ANSWERS = {
    "gcd_graph": {
        # stops one step early: gcd(5, 3) walks (5,3) -> (3,2) -> (2,1) and answers 2
        "stops_at_b_equal_one": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g, _ = aics.while_loop(lambda x, y: aics.greater(y, 1), lambda x, y: (y, aics.floormod(x, y)), [a, b])
return graph, a, b, g
""",
        # returns the second loop variable, which is 0 when the loop ends
        "returns_the_remainder": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    _, g = aics.while_loop(lambda x, y: aics.not_equal(y, 0), lambda x, y: (y, aics.floormod(x, y)), [a, b])
return graph, a, b, g
""",
        # a fixed number of Euclid steps unrolled with cond: right for small inputs, no loop in the graph
        "unrolled_with_cond": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x
return graph, a, b, g
""",
        # the exact shortcut of the issue: a while_loop that g does not use, beside Euclid unrolled with cond
        "dummy_loop_plus_unrolled_cond": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    aics.while_loop(lambda i: aics.less(i, 1), lambda i: aics.add(i, 1), [aics.constant(0)])
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x
return graph, a, b, g
""",
        # the loop is in g's fan-in (added times 0), the answer comes from 12 unrolled steps: right
        # until an input needs more steps (consecutive Fibonacci numbers)
        "loop_times_zero_plus_unrolled": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    loop, _ = aics.while_loop(lambda x, y: aics.not_equal(y, 0), lambda x, y: (y, aics.floormod(x, y)), [a, b])
    x, y = a, b
    for _ in range(12):
        x, y = aics.cond(aics.not_equal(y, 0), lambda x=x, y=y: (y, aics.floormod(x, y)), lambda x=x, y=y: (x, y))
    g = x + 0 * loop
return graph, a, b, g
""",
        # the test's reference, math.gcd, tabulated into a constant: no loop, small inputs only
        "math_gcd_table": """
import math
n = 64
table = np.array([math.gcd(i, j) for i in range(n) for j in range(n)], np.int32)
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g = aics.gather(aics.constant(table), a * n + b)
return graph, a, b, g
""",
        # the difference instead of the remainder, a bounded number of times (subtractive Euclid cut short)
        "subtraction_bounded": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, [], name="a")
    b = aics.placeholder(aics.int32, [], name="b")
    g, _ = aics.while_loop(lambda x, y: aics.not_equal(y, 0),
                           lambda x, y: (aics.maximum(y, x - y), aics.minimum(y, x - y)), [a, b],
                           maximum_iterations=50)
return graph, a, b, g
""",
    },
}

CORRECT_ANSWERS = {
    "gcd_graph": {
        # AutoGraph turns a Python while on tensors into the same while_loop
        "autograph_python_while": """
def euclid(x, y):
    while y != 0:
        x, y = y, x % y
    return x

concrete = aics.function(euclid).get_concrete_function(aics.constant(0), aics.constant(0))
a, b = concrete.inputs
return concrete.graph, a, b, concrete.outputs[0]
""",
        # the remainder written with floordiv, the loop condition as greater
        "floordiv_remainder": """
graph = aics.Graph()
with graph.as_default():
    a = aics.placeholder(aics.int32, shape=[], name="a")
    b = aics.placeholder(aics.int32, shape=[], name="b")

    def body(x, y):
        return y, x - aics.floordiv(x, y) * y

    g, _ = aics.while_loop(lambda x, y: aics.greater(y, 0), body, (a, b))
return graph, a, b, g
""",
    },
}

# ---- the planner lab (plan_order 4 points, plan_frees 3, run_graph 4)

_DFS = """
order, opened = [], set()
for root in targets:
    if root in opened:
        continue
    opened.add(root)
    stack = [(root, {needs})]
    while stack:
        op, waiting = stack[-1]
        if waiting:
            dep = waiting.pop()
            if dep not in opened:
                opened.add(dep)
                stack.append((dep, {needs_dep}))
        else:
            stack.pop()
            order.append(op)
return order
"""


def _dfs(needs):
    return _DFS.format(needs=needs.format(op="root"), needs_dep=needs.format(op="dep"))


_FREES = """
last = {{}}
for i, op in enumerate(order):
{body}
frees = [[] for _ in order]
for t, i in last.items():
    if {cond}:
        frees[i].append(t)
return frees
"""

_RUN = """
feeds = dict(feed_dict)
targets = list(dict.fromkeys({targets}))
order, free_after = planner(targets, feeds, set(fetches))
values = dict(feeds)
peak = {start}
for op, free in zip(order, free_after):
{check}
    result = kernel_for(op)(*[values[t] for t in op.inputs])
    outputs = (result,) if len(op.outputs) == 1 else result
    for t, v in zip(op.outputs, outputs):
        if t not in feeds:
            values[t] = v
{count}
return [values[t] for t in fetches], peak
"""
_CHECK = """    if op.type == "Placeholder" and op.outputs[0] not in feeds:
        t = op.outputs[0]
        shape = "[" + ",".join("?" if n is None else str(n) for n in t.shape.as_list()) + "]"
        raise aics.errors.InvalidArgumentError(None, op, f"You must feed a value for placeholder tensor "
                                               f"'{op.name}' with dtype {t.dtype.name} and shape {shape}")"""
_COUNT = """    peak = max(peak, sum(v.nbytes for v in values.values()))
    for t in free:
        del values[t]"""
_ALL_FEEDS = "sum(v.nbytes for v in values.values())"


def _run(targets="t.op for t in fetches if t not in feeds", start=_ALL_FEEDS, check=_CHECK, count=_COUNT):
    return _RUN.format(targets=targets, start=start, check=check, count=count)


_NEEDS = "[t.op for t in {op}.inputs if t not in feeds] + list({op}.control_inputs)"

WRONG_ANSWERS.update({
    "plan_order": {
        "calls_the_library_prune": """
from aicslib.framework.planner import prune
return prune(targets, feeds)
""",
        "copies_the_package_reference": """
from workbook.references.planner import reference_order
return reference_order(targets, feeds)
""",
        # feeds do not cut the fan-in: what produced a fed tensor (and an unfed placeholder) runs too
        "ignores_feeds": _dfs("[t.op for t in {op}.inputs] + list({op}.control_inputs)"),
        "ignores_control_inputs": _dfs("[t.op for t in {op}.inputs if t not in feeds]"),
        # the graph's creation order is topological, but nothing is pruned
        "whole_graph_in_creation_order": """
return list(targets[0].graph.get_operations()) if targets else []
""",
        # breadth-first from the targets, reversed: wrong when a value is read both near and far
        "bfs_reversed": """
seen, queue = [], list(targets)
while queue:
    op = queue.pop(0)
    if op not in seen:
        seen.append(op)
        queue.extend([t.op for t in op.inputs if t not in feeds] + list(op.control_inputs))
return seen[::-1]
""",
        # the textbook recursion: right, until the graph is deeper than Python's stack
        "recursive_dfs": """
order, seen = [], set()

def visit(op):
    if op in seen:
        return
    seen.add(op)
    for dep in [t.op for t in op.inputs if t not in feeds] + list(op.control_inputs):
        visit(dep)
    order.append(op)

for op in targets:
    visit(op)
return order
""",
        # each op appended when first met (pre-order): producers end up after their readers
        "preorder": """
order, stack = [], list(targets)[::-1]
while stack:
    op = stack.pop()
    if op not in order:
        order.append(op)
        stack.extend([t.op for t in op.inputs if t not in feeds] + list(op.control_inputs))
return order
""",
    },
    "plan_frees": {
        "calls_the_library_last_uses": """
from aicslib.framework.planner import last_uses
return last_uses(order, keep)
""",
        "copies_the_package_reference": """
from workbook.references.planner import reference_frees
return reference_frees(order, keep)
""",
        # freed after the first reader: a diamond's second reader finds it gone
        "first_reader": _FREES.format(body="""    for t in op.inputs:
        last.setdefault(t, i)""", cond="t not in keep"),
        # the outputs nobody reads are never dropped (split's unused half stays to the end)
        "forgets_unread_outputs": _FREES.format(body="""    for t in op.inputs:
        last[t] = i""", cond="t not in keep"),
        "frees_the_fetches_too": _FREES.format(body="""    for t in op.outputs:
        last.setdefault(t, i)
    for t in op.inputs:
        last[t] = i""", cond="True"),
        # everything dropped once the step is over: correct values, the peak of keeping everything
        "all_at_the_end": """
seen = {t for op in order for t in list(op.inputs) + list(op.outputs) if t not in keep}
return [[] for _ in order[:-1]] + [sorted(seen, key=lambda t: t.name)] if order else []
""",
        # the last reader looked up over the whole graph (t.consumers()): a pruned reader is never run
        "last_consumer_in_the_whole_graph": """
pos = {op: i for i, op in enumerate(order)}
frees = [[] for _ in order]
for i, op in enumerate(order):
    for t in op.outputs:
        if t in keep:
            continue
        readers = t.consumers()
        if not readers:
            frees[i].append(t)
        elif all(r in pos for r in readers):
            frees[max(pos[r] for r in readers)].append(t)
return frees
""",
    },
    "run_graph": {
        "calls_the_session": """
with aics.Session(graph=fetches[0].graph) as sess:
    values = sess.run(list(fetches), feed_dict)
return values, sum(np.asarray(v).nbytes for v in values) + sum(v.nbytes for v in feed_dict.values())
""",
        "copies_the_package_reference": """
from workbook.references.planner import reference_run
return reference_run(fetches, feed_dict, planner)
""",
        # free_after ignored: right values, the peak of keeping everything
        "never_frees": _run(count="    peak = max(peak, sum(v.nbytes for v in values.values()))"),
        # the bytes counted after the frees: the peak comes out too low
        "counts_after_freeing": _run(count="""    for t in free:
        del values[t]
    peak = max(peak, sum(v.nbytes for v in values.values()))"""),
        # the fed arrays are not counted: only what the kernels made
        "forgets_the_feeds": _run(start="0", count="""    made = [v for t, v in values.items() if t not in feeds]
    peak = max(peak, sum(v.nbytes for v in made))
    for t in free:
        del values[t]"""),
        # a fed fetch's producer is planned too: its fan-in runs (an unfed placeholder raises)
        "plans_fed_fetches": _run(targets="t.op for t in fetches"),
        # no check: the Placeholder kernel raises, without the dtype and shape TF's message names
        "lets_the_placeholder_kernel_raise": _run(check="    pass"),
    },
})

CORRECT_ANSWERS.update({
    "plan_order": {
        # Kahn's algorithm: count what each op waits for, run the ready ones (another valid order)
        "kahn": """
def needs(op):
    return [t.op for t in op.inputs if t not in feeds] + list(op.control_inputs)

found, stack = set(), list(targets)
while stack:
    op = stack.pop()
    if op not in found:
        found.add(op)
        stack.extend(needs(op))
waiting = {op: len(set(needs(op))) for op in found}
users = {op: [] for op in found}
for op in found:
    for dep in set(needs(op)):
        users[dep].append(op)
ready = [op for op in found if waiting[op] == 0]
order = []
while ready:
    op = ready.pop()
    order.append(op)
    for user in users[op]:
        waiting[user] -= 1
        if waiting[user] == 0:
            ready.append(user)
return order
""",
        # the inputs visited right to left: a different depth-first order
        "dfs_inputs_reversed": _dfs("(" + _NEEDS + ")[::-1]"),
    },
    "plan_frees": {
        # walked backwards: the first time a tensor is met is its last use; sets, not lists
        "backwards_with_sets": """
seen, frees = set(keep), []
for op in reversed(order):
    mine = set()
    for t in list(op.inputs) + list(op.outputs):
        if t not in seen:
            seen.add(t)
            mine.add(t)
    frees.append(mine)
return frees[::-1]
""",
    },
    "run_graph": {
        # values kept in a list of slots with a running byte count, as aicslib's executor keeps them
        "slots_and_running_total": """
feeds = dict(feed_dict)
targets = []
for t in fetches:
    if t not in feeds and t.op not in targets:
        targets.append(t.op)
order, free_after = planner(targets, feeds, set(fetches))
slot, vals = {}, []
for t, v in feeds.items():
    slot[t] = len(vals)
    vals.append(v)
held = sum(v.nbytes for v in vals)
peak = held
for op, free in zip(order, free_after):
    if op.type == "Placeholder" and op.outputs[0] not in feeds:
        t = op.outputs[0]
        dims = ["?" if n is None else str(n) for n in t.shape.as_list()]
        raise aics.errors.InvalidArgumentError(
            None, op, "You must feed a value for placeholder tensor '%s' with dtype %s and shape [%s]"
            % (op.name, t.dtype.name, ",".join(dims)))
    r = kernel_for(op)(*[vals[slot[t]] for t in op.inputs])
    for t, v in zip(op.outputs, [r] if len(op.outputs) == 1 else list(r)):
        if t in feeds:
            continue
        slot[t] = len(vals)
        vals.append(v)
        held += v.nbytes
    peak = max(peak, held)
    for t in free:
        held -= vals[slot[t]].nbytes
        vals[slot[t]] = None
return [vals[slot[t]] for t in fetches], peak
""",
    },
})
