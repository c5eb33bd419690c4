"""Plausible wrong answers for notebook 10 (graph-gradients), and other correct ones.

Each replaces the release stub of one exercise of the graph ``gradients`` lab (split from
notebook 08, op-registration): ``backward_ops`` (the ops a backward pass visits, in reverse
topological order) and ``my_gradients`` (the gradients propagated and summed along that order);
a wrong one must lose its exercise's points inside its locked test cell, a correct one must
score them.
"""

WRONG_ANSWERS = {
    "backward_ops": {
        # forward topological order: each op before its consumers
        "forward_order": """
stops = set(stop_gradients)
seen, order = set(), []
def visit(op):
    if op in seen:
        return
    seen.add(op)
    for t in op.inputs:
        if t not in stops:
            visit(t.op)
    order.append(op)
for y in ys:
    visit(y.op)
reach = set()
stack = [c for x in xs for c in x.consumers()]
while stack:
    op = stack.pop()
    if op not in reach:
        reach.add(op)
        stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
return [op for op in order if op in reach]
""",
        # only the walk back from the ys: also the ops that no x reaches (constants' branches)
        "backward_walk_only": """
stops = set(stop_gradients)
seen, order = set(), []
def visit(op):
    if op in seen:
        return
    seen.add(op)
    for t in op.inputs:
        if t not in stops:
            visit(t.op)
    order.append(op)
for y in ys:
    visit(y.op)
xs_ops = {x.op for x in xs}
return [op for op in reversed(order) if op not in xs_ops]
""",
        # only the walk forward from the xs: also the ops no y needs
        "forward_walk_only": """
stops = set(stop_gradients)
seen, order = set(), []
def visit(op):
    if op in seen:
        return
    seen.add(op)
    for t in op.outputs:
        if t not in stops:
            for c in t.consumers():
                visit(c)
    order.append(op)
for x in xs:
    for c in x.consumers():
        visit(c)
return order
""",
        # stop_gradients ignored
        "ignores_stop_gradients": """
forward, stack = set(), [op for x in xs for op in x.consumers()]
while stack:
    op = stack.pop()
    if op not in forward:
        forward.add(op)
        stack.extend(c for t in op.outputs for c in t.consumers())
seen, order = set(), []
def visit(op):
    if op in seen or op not in forward:
        return
    seen.add(op)
    for t in op.inputs:
        visit(t.op)
    order.append(op)
for y in ys:
    visit(y.op)
return order[::-1]
""",
        # breadth-first from the ys, first visit wins: wrong in a diamond (h before its consumer y)
        "breadth_first_from_ys": """
stops = set(stop_gradients)
forward, stack = set(), [op for x in xs if x not in stops for op in x.consumers()]
while stack:
    op = stack.pop()
    if op not in forward:
        forward.add(op)
        stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
order, queue = [], [y.op for y in ys]
while queue:
    op = queue.pop(0)
    if op in forward and op not in order:
        order.append(op)
        queue.extend(t.op for t in op.inputs if t not in stops)
return order
""",
        # the library's planner does the walk (prune), reversed
        "calls_the_library_prune": """
from aicslib.framework.planner import prune
stops = set(stop_gradients)
order = prune([y.op for y in ys], set(xs) | stops)
forward, stack = set(), [op for x in xs if x not in stops for op in x.consumers()]
while stack:
    op = stack.pop()
    if op not in forward:
        forward.add(op)
        stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
return [op for op in reversed(order) if op in forward]
""",
        # copies the package reference
        "copies_the_reference": """
from workbook.references.autodiff import backward_ops as reference
return reference(ys, xs, stop_gradients)
""",
    },
    "my_gradients": {
        # a tensor used twice keeps only the last contribution: no fan-out accumulation
        "overwrites_instead_of_summing": """
stops = set(stop_gradients)
grad = {}
for i, y in enumerate(ys):
    g = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else aics.ones_like(y)
    grad[y] = aics.convert_to_tensor(g, dtype=y.dtype)
for op in backward_ops(ys, xs, stops):
    out_grads = [grad.get(t) for t in op.outputs]
    if all(g is None for g in out_grads):
        continue
    for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
        if g is not None and t not in stops:
            grad[t] = g
return [grad.get(x) for x in xs]
""",
        # the ops in the wrong order: a consumer's contribution arrives after the op was processed
        "processes_in_forward_order": """
stops = set(stop_gradients)
received = {}
for i, y in enumerate(ys):
    g = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else aics.ones_like(y)
    received.setdefault(y, []).append(aics.convert_to_tensor(g, dtype=y.dtype))
total = lambda t: aics.add_n(received[t]) if received.get(t) else None
for op in reversed(backward_ops(ys, xs, stops)):
    out_grads = [total(t) for t in op.outputs]
    if all(g is None for g in out_grads):
        continue
    for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
        if g is not None and t not in stops:
            received.setdefault(t, []).append(g)
return [total(x) for x in xs]
""",
        # grad_ys ignored: always ones
        "ignores_grad_ys": """
stops = set(stop_gradients)
received = {y: [aics.ones_like(y)] for y in ys}
total = lambda t: aics.add_n(received[t]) if received.get(t) else None
for op in backward_ops(ys, xs, stops):
    out_grads = [total(t) for t in op.outputs]
    if all(g is None for g in out_grads):
        continue
    for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
        if g is not None and t not in stops:
            received.setdefault(t, []).append(g)
return [total(x) for x in xs]
""",
        # zeros instead of None where nothing reaches x (and ops with no incoming gradient not skipped)
        "zeros_for_unconnected": """
stops = set(stop_gradients)
received = {}
for i, y in enumerate(ys):
    g = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else aics.ones_like(y)
    received.setdefault(y, []).append(aics.convert_to_tensor(g, dtype=y.dtype))
total = lambda t: aics.add_n(received[t]) if received.get(t) else None
for op in backward_ops(ys, xs, stops):
    for t, g in zip(op.inputs, call_gradient_function(op, [total(t) for t in op.outputs])):
        if g is not None and t not in stops:
            received.setdefault(t, []).append(g)
return [total(x) if received.get(x) else aics.zeros_like(x) for x in xs]
""",
        # stop_gradients not passed on: the gradient flows through the stopped tensors
        "ignores_stop_gradients": """
received = {}
for i, y in enumerate(ys):
    g = grad_ys[i] if grad_ys is not None and grad_ys[i] is not None else aics.ones_like(y)
    received.setdefault(y, []).append(aics.convert_to_tensor(g, dtype=y.dtype))
total = lambda t: aics.add_n(received[t]) if received.get(t) else None
for op in backward_ops(ys, xs):
    out_grads = [total(t) for t in op.outputs]
    if all(g is None for g in out_grads):
        continue
    for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
        if g is not None:
            received.setdefault(t, []).append(g)
return [total(x) for x in xs]
""",
        # only the first y is differentiated
        "first_y_only": """
stops = set(stop_gradients)
g0 = grad_ys[0] if grad_ys is not None and grad_ys[0] is not None else aics.ones_like(ys[0])
received = {ys[0]: [aics.convert_to_tensor(g0, dtype=ys[0].dtype)]}
total = lambda t: aics.add_n(received[t]) if received.get(t) else None
for op in backward_ops(ys[:1], xs, stops):
    out_grads = [total(t) for t in op.outputs]
    if all(g is None for g in out_grads):
        continue
    for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
        if g is not None and t not in stops:
            received.setdefault(t, []).append(g)
return [total(x) for x in xs]
""",
        # the library's own implementation
        "calls_the_library": """
from aicslib.ops.gradients_util import default_gradients
return default_gradients(ys, xs, grad_ys, set(stop_gradients))
""",
        "copies_the_reference": """
from workbook.references.autodiff import gradients as reference
return reference(ys, xs, grad_ys, stop_gradients)
""",
    },
}

CORRECT_ANSWERS = {
    "backward_ops": {
        # depth-first post-order from the ys (each op after its inputs), reversed
        "dfs_postorder_reversed": """
stops = set(stop_gradients)
reach, stack = set(), [c for x in xs if x not in stops for c in x.consumers()]
while stack:
    op = stack.pop()
    if op not in reach:
        reach.add(op)
        stack.extend(c for t in op.outputs if t not in stops for c in t.consumers())
seen, post = set(), []
def visit(op):
    if op in seen or op not in reach:
        return
    seen.add(op)
    for t in op.inputs:
        if t not in stops:
            visit(t.op)
    post.append(op)
for y in ys:
    if y not in stops:
        visit(y.op)
return post[::-1]
""",
    },
    "my_gradients": {
        # contributions summed pairwise with + as they arrive, in another order
        "running_sum_with_plus": """
stops = set(stop_gradients)
acc = {}
def send(t, g):
    acc[t] = g if t not in acc else g + acc[t]
for i, y in enumerate(ys):
    start = None if grad_ys is None else grad_ys[i]
    send(y, aics.ones_like(y) if start is None else aics.convert_to_tensor(start, dtype=y.dtype))
for op in backward_ops(ys, xs, stops):
    out_grads = [acc.get(t) for t in op.outputs]
    if any(g is not None for g in out_grads):
        for t, g in zip(op.inputs, call_gradient_function(op, out_grads)):
            if g is not None and t not in stops:
                send(t, g)
return [acc.get(x) for x in xs]
""",
    },
}
