"""Reference parser of aicslib's VLOG logs, for notebook 14's exercise ``parse_vlog`` (section 3);
the cells after the exercise fall back on it (``workbook.grading.use``) until the student's passes.

A log line is ``YYYY-MM-DD hh:mm:ss.ffffff: I file:line] message`` (TF 1.x's C++ ``LOG``/``VLOG``
prefix). Lines without the prefix are skipped: the program's own printed output when stdout and
stderr are read together (``2>&1``), and the continuation lines of multi-line messages.

``parse_vlog(text)`` describes the **first** ``Session.run`` of the log:

- ``"kept"``, ``"total"``: N and M of its ``Pruning graph for fetches [...] ...: keeping N of M nodes``;
- ``"pruned"``: the names of its ``Pruned (not needed by the fetches): a, b, ...`` line, in the log's
  order (the graph's), ``[]`` when the run pruned nothing;
- ``"placement"``: node name -> device of its ``Placing node 'NAME' (OP) on DEVICE; ...`` lines;
- ``"executed"``: the node names of its ``Executing kernel OP for node 'NAME' on DEVICE: ...`` lines,
  in order.

The first run ends where the next begins: a second pruning line (a run with other fetches or
feeds builds a new plan), or an ``Executing`` line for a node that already ran (a run with the same
fetches reuses the cached plan, so its log has only ``Process node``/``Executing`` lines; within one
run every node executes once).
"""
import re

#: The prefix of one log line; group 1 is the message.
PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] [^ ]+:\d+\] (.*)$")

_KEEPING = re.compile(r"^Pruning graph for fetches .*: keeping (\d+) of (\d+) nodes$")
_PRUNED = "Pruned (not needed by the fetches): "
_PLACING = re.compile(r"^Placing node '([^']+)' \([^)]*\) on ([^;]+);")
_EXECUTING = re.compile(r"^Executing kernel \S+ for node '([^']+)'")


def parse_vlog(text):
    """{"kept", "total", "pruned", "placement", "executed"} of the first run in the log ``text``."""
    result = {"kept": None, "total": None, "pruned": [], "placement": {}, "executed": []}
    for line in text.splitlines():
        m = PREFIX.match(line)
        if m is None:
            continue
        msg = m.group(1)
        if (k := _KEEPING.match(msg)) is not None:
            if result["kept"] is not None:
                break                                   # the next run, with a plan of its own
            result["kept"], result["total"] = int(k.group(1)), int(k.group(2))
        elif msg.startswith(_PRUNED):
            result["pruned"] = [name.strip() for name in msg[len(_PRUNED):].split(",") if name.strip()]
        elif (p := _PLACING.match(msg)) is not None:
            result["placement"][p.group(1)] = p.group(2)
        elif (e := _EXECUTING.match(msg)) is not None:
            if e.group(1) in result["executed"]:
                break                                   # the same plan runs again: the next run
            result["executed"].append(e.group(1))
    return result
