"""Plausible wrong answers for notebook 14 (graph pruning and VLOG logs), and other correct ones, keyed
by grade_id.

Each replaces the body of ``parse_vlog`` between ``result = {...}`` and ``return result`` (or the
body of ``prune_graph_def``); a wrong one must lose the exercise's 3 points inside its locked test
cell, a correct one must score them. Most wrong answers are a right answer with one mistake, so each
is caught for its own reason."""

# A right parser: the first run only (it ends at a second pruning line or where a node executes again).
_RIGHT = """
for line in text.splitlines():
    m = PREFIX.match(line)
    if m is None:
        continue
    msg = m.group(1)
    p = re.search(r"keeping (\\d+) of (\\d+) nodes$", msg)
    if msg.startswith("Pruning graph for fetches") and p:
        if result["kept"] is not None:
            break
        result["kept"], result["total"] = int(p.group(1)), int(p.group(2))
    elif msg.startswith("Pruned (not needed by the fetches): "):
        result["pruned"] = [s.strip() for s in msg.split(": ", 1)[1].split(",")]
    elif msg.startswith("Placing node '"):
        p = re.match(r"Placing node '([^']+)' \\([^)]*\\) on ([^;]+);", msg)
        result["placement"][p.group(1)] = p.group(2)
    elif msg.startswith("Executing kernel "):
        name = re.match(r"Executing kernel \\S+ for node '([^']+)'", msg).group(1)
        if name in result["executed"]:
            break
        result["executed"].append(name)
"""


def _with(old, new):
    assert old in _RIGHT, old
    return _RIGHT.replace(old, new)


# A right pruning, with the steps a wrong answer changes in braces.
_PRUNE = """
def split(name):
    if name.startswith("^"):
        return name[1:], None
    node, sep, port = name.rpartition(":")
    return (node, int(port)) if sep and port.isdigit() else (name, 0)
nodes = {{n["name"]: n for n in graph_def["node"]}}
fed = {FED}
needed = set()
stack = {START}
while stack:
    name = stack.pop()
    if name in needed:
        continue
    needed.add(name)
    for inp in nodes[name]["input"]:
        src, port = split(inp)
        if {FOLLOW}:
            stack.append(src)
return {RESULT}
"""
_PRUNE_RIGHT = dict(FED="{split(t) for t in feeds}",
                    START='[split(f)[0] for f in fetches if not (":" in f and split(f) in fed)]',
                    FOLLOW="port is None or (src, port) not in fed",
                    RESULT='[n["name"] for n in graph_def["node"] if n["name"] in needed]')


def _prune(**wrong):
    return _PRUNE.format(**{**_PRUNE_RIGHT, **wrong})


WRONG_ANSWERS = {
    "prune_graph_def": {
        # data edges only: a node needed through a control edge (^x) is pruned
        "ignores_control_edges": _prune(FOLLOW="port is not None and (src, port) not in fed"),
        # feeds ignored: the fed placeholder (and everything above a fed tensor) is kept
        "ignores_feeds": _prune(FED="set()"),
        # a fed tensor cuts its whole node: split is dropped though split:0 is still read
        "cuts_the_whole_node": _prune(FED="{split(t)[0] for t in feeds}",
                                      START="[split(f)[0] for f in fetches if split(f)[0] not in fed]",
                                      FOLLOW="port is None or src not in fed"),
        # compares input strings with feed names: "n3" never equals "n3:0", so nothing is cut
        "feed_names_compared_as_strings": _prune(FED="set(feeds)",
                                                 START="[split(f)[0] for f in fetches if f not in fed]",
                                                 FOLLOW="inp.lstrip('^') not in fed"),
        # a fetch that is itself fed still runs its producer
        "runs_a_fed_fetch": _prune(START="[split(f)[0] for f in fetches]"),
        # the right set, alphabetical: graph_def's order is lost
        "sorted_not_graph_order": _prune(RESULT="sorted(needed)"),
        # the runtime's own pruning, called
        "calls_the_library": """
import aicslib as aics
from aicslib.visualize import needed_ops as _needed
g = aics.Graph()
with g.as_default():
    aics.import_graph_def(graph_def, name="")
needed = _needed(g, list(fetches), feeds={g.get_tensor_by_name(t): 0.0 for t in feeds})
return [n["name"] for n in graph_def["node"] if n["name"] in needed]
""",
        "copies_the_package_reference": """
from workbook.references.graph_prune import prune_graph_def as _reference
return _reference(graph_def, fetches, feeds)
""",
    },
    "parse_vlog": {
        # the kernels' order is what 5.10 asks about; sorting it loses the topological order
        "execution_order_sorted": _RIGHT + """
result["executed"].sort()
""",
        # sorted names: the log's order (the graph's) is lost; the log above is not alphabetical
        "pruned_sorted": _with('result["pruned"] = [s.strip() for s in msg.split(": ", 1)[1].split(",")]',
                               'result["pruned"] = sorted(s.strip() for s in msg.split(": ", 1)[1].split(","))'),
        # \\w+ stops at the '/' of a name scope: 'layer/h' is read as 'layer'
        "names_without_scopes": """
for line in text.splitlines():
    m = PREFIX.match(line)
    if m is None:
        continue
    msg = m.group(1)
    p = re.search(r"keeping (\\d+) of (\\d+) nodes$", msg)
    if msg.startswith("Pruning graph for fetches") and p:
        if result["kept"] is not None:
            break
        result["kept"], result["total"] = int(p.group(1)), int(p.group(2))
    elif msg.startswith("Pruned (not needed by the fetches): "):
        result["pruned"] = re.findall(r"\\w+", msg.split(": ", 1)[1])
    elif msg.startswith("Placing node '"):
        p = re.match(r"Placing node '(\\w+)", msg)
        result["placement"][p.group(1)] = msg.split(" on ")[1].split(";")[0]
    elif msg.startswith("Executing kernel "):
        name = re.search(r"node '(\\w+)", msg).group(1)
        if name in result["executed"]:
            break
        result["executed"].append(name)
""",
        # a log read with 2>&1 also holds the program's own printed lines, which carry no prefix
        "every_line_has_a_prefix": _with("""    m = PREFIX.match(line)
    if m is None:
        continue
    msg = m.group(1)""", """    msg = line.split("] ", 1)[1]"""),
        # the requested device instead of where the node was placed (soft placement moved it)
        "placement_from_the_graph_not_the_log": _with("""    elif msg.startswith("Placing node '"):
        p = re.match(r"Placing node '([^']+)' \\([^)]*\\) on ([^;]+);", msg)
        result["placement"][p.group(1)] = p.group(2)
""", "") + """
for name in result["executed"]:
    result["placement"][name] = "/device:MLU:0" if name.startswith("layer/s") else "/device:CPU:0"
""",
        # every run's kernels: the old rule, right on a log with one run only
        "all_runs_executed": _with("""        if name in result["executed"]:
            break
""", "").replace("""        if result["kept"] is not None:
            break
""", ""),
        # the first run ends at the next pruning line only: a second run of the same plan has none
        "stops_only_at_a_pruning_line": _with("""        if name in result["executed"]:
            break
""", ""),
        # the last run's plan: every pruning line starts the result afresh, every kernel line counts
        "last_run_wins": _with("""        if result["kept"] is not None:
            break
""", """        result["pruned"], result["placement"], result["executed"] = [], {}, []
""").replace("""        if name in result["executed"]:
            break
""", ""),
        # the package's reference parser, called
        "package_reference": """
from workbook.references.vlog import parse_vlog as _reference
return _reference(text)
""",
    },
}

CORRECT_ANSWERS = {
    "prune_graph_def": {
        # recursion over the consumers' inputs with a memo, fed tensors as "name:port" strings
        "recursive_with_port_strings": """
nodes = {n["name"]: n for n in graph_def["node"]}
fed = {t if ":" in t else t + ":0" for t in feeds}
needed = set()
def visit(name):
    if name in needed:
        return
    needed.add(name)
    for inp in nodes[name]["input"]:
        if inp.startswith("^"):
            visit(inp[1:])
        elif (inp if ":" in inp else inp + ":0") not in fed:
            visit(inp.split(":")[0])
for f in fetches:
    if ":" in f and f in fed:
        continue
    visit(f.split(":")[0])
order = [n["name"] for n in graph_def["node"]]
return sorted(needed, key=order.index)
""",
    },
    "parse_vlog": {
        # runs told apart by the step id of the 'Process node: ID step N' lines
        "step_ids": """
first_step = None
for line in text.splitlines():
    m = PREFIX.match(line)
    if not m:
        continue
    msg = m.group(1)
    step = re.match(r"Process node: \\d+ step (\\d+) ", msg)
    if step:
        first_step = first_step or step.group(1)
        if step.group(1) != first_step:
            break
        continue
    kept = re.match(r"Pruning graph for fetches .*: keeping (\\d+) of (\\d+) nodes$", msg)
    if kept:
        if result["total"] is not None:
            break
        result["kept"], result["total"] = map(int, kept.groups())
        continue
    if msg.startswith("Pruned (not needed by the fetches):"):
        result["pruned"] = [n for n in re.split(r",\\s*", msg.partition(":")[2].strip()) if n]
    elif placed := re.match(r"Placing node '(.+?)' \\(\\w+\\) on (\\S+);", msg):
        result["placement"][placed.group(1)] = placed.group(2)
    elif ran := re.match(r"Executing kernel \\w+ for node '(.+?)' on ", msg):
        result["executed"].append(ran.group(1))
""",
        # two passes: the messages of the first run first, then one regex per key over them
        "cut_the_first_run_then_parse": """
msgs = [m.group(1) for m in map(PREFIX.match, text.splitlines()) if m]
end, seen, prunings = len(msgs), set(), 0
for i, msg in enumerate(msgs):
    ran = re.match(r"Executing kernel \\S+ for node '([^']+)'", msg)
    if msg.startswith("Pruning graph for fetches"):
        prunings += 1
    if prunings > 1 or (ran and ran.group(1) in seen):
        end = i
        break
    if ran:
        seen.add(ran.group(1))
first = "\\n".join(msgs[:end])
kept = re.search(r"^Pruning graph for fetches .*: keeping (\\d+) of (\\d+) nodes$", first, re.M)
if kept:
    result["kept"], result["total"] = int(kept.group(1)), int(kept.group(2))
pruned = re.search(r"^Pruned \\(not needed by the fetches\\): (.*)$", first, re.M)
if pruned:
    result["pruned"] = pruned.group(1).split(", ")
result["placement"] = dict(re.findall(r"^Placing node '([^']+)' \\([^)]*\\) on ([^;]+);", first, re.M))
result["executed"] = re.findall(r"^Executing kernel \\S+ for node '([^']+)'", first, re.M)
""",
    },
}
