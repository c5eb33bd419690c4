"""aicslib's log lines say what TensorFlow's say, in TF's words, where they log the same event.

The reference is a real TensorFlow 2.21 log recorded once from notebook 14's
program (data/tf_vlog/tf_vlog_level3.txt; how it was made: data/tf_vlog/README.md).
Each test takes TF's line from that file and checks aicslib prints the same
text (exactly, where both describe the same node) or the same form.
"""
import contextlib
import io
import os
import re

import numpy as np

import aicslib as aics
from aicslib import flags
from aicslib.datasets.images import data_dir
from aicslib.framework.node_def_util import summarize_node_def, summarize_tensor

TF_LOG = os.path.join(data_dir(), "tf_vlog", "tf_vlog_level3.txt")
TF_PREFIX = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ ([\w.]+):\d+\] (.*)$")
OUR_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] ([^ ]+):\d+\] (.*)$")
TF_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def tf_messages(source_file):
    with open(TF_LOG, encoding="utf-8") as f:
        return [m.group(2) for m in map(TF_PREFIX.match, f.read().splitlines())
                if m and m.group(1) == source_file]


@contextlib.contextmanager
def vlog(level):
    old = flags.MIN_VLOG_LEVEL
    flags.MIN_VLOG_LEVEL = level
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            yield buf
    finally:
        flags.MIN_VLOG_LEVEL = old


def our_messages(text):
    return [m.group(2) for m in map(OUR_PREFIX.match, text.splitlines()) if m]


def program_graph():
    """Notebook 14's PROGRAM, the graph the TF log was recorded from."""
    g = aics.Graph()
    with g.as_default():
        a = aics.placeholder(aics.float32, shape=[2], name="a")
        b = aics.constant([1.0, 2.0], name="b")
        k = aics.multiply(aics.constant(2.0, name="two"), aics.constant(5.0, name="five"), name="k")
        c = aics.multiply(a, b, name="c")
        c_scaled = aics.identity(c * k, name="c_scaled")
        aics.multiply(aics.add(a, b, name="d"), 3.0, name="e")
    return g, a, c_scaled


def test_node_summaries_are_tfs_word_for_word():
    folded = [m for m in tf_messages("constant_folding.cc") if m.startswith("Folded node: ")]
    generated = [m for m in tf_messages("constant_folding.cc") if m.startswith("Generated constant node: ")]
    assert folded[0] == "Folded node: " + summarize_node_def("k", "Mul", {"T": aics.float32}, ["five", "two"],
                                                             TF_DEVICE)
    assert generated[1] == "Generated constant node: " + summarize_node_def(
        "ConstantFolding/c-folded", "Const", {"dtype": aics.float32, "value": np.array([10, 20], np.float32)}, [])
    ran = [m for m in tf_messages("executor.cc") if m.startswith("Process node: ") and "{{node mul}}" in m][0]
    ours = summarize_node_def("mul", "Mul", {"T": aics.float32, "_XlaHasReferenceVars": False},
                              ["_arg_a_0_0:0", "c:0"], TF_DEVICE)
    assert ran == f"Process node: 4 step 1 {ours} device: {TF_DEVICE}"


def test_tensor_summary_shows_ten_values_then_dots():
    assert summarize_tensor(np.float32(10)) == "Tensor<type: float shape: [] values: 10>"
    assert summarize_tensor(np.arange(12, dtype=np.int32).reshape(3, 4)) == \
        "Tensor<type: int32 shape: [3,4] values: 0 1 2 3 4 5 6 7 8 9...>"


def test_placement_lines_have_tfs_form_and_content():
    g, a, c_scaled = program_graph()
    with vlog(0) as err:
        with aics.Session(graph=g, config=aics.ConfigProto(log_device_placement=True)) as sess:
            sess.run(c_scaled, {a: [3.0, 4.0]})
    info = re.compile(r"^(\S+): \((\w+)\): (\S+)$")               # placer.cc under log_device_placement
    tf = {m.group(1): m.group(2) for m in map(info.match, tf_messages("placer.cc")) if m}
    ours = {m.group(1): (m.group(2), m.group(3)) for m in map(info.match, our_messages(err.getvalue())) if m}
    assert set(ours) == {"b", "c", "k", "mul", "c_scaled"}          # the nodes that run after pruning
    for name, (op, device) in ours.items():
        assert device == "/device:CPU:0"
        assert op == tf[name] or (name == "k" and op == "Const" and tf[name] == "Mul")  # k: folded here


def test_vlog_lines_match_tfs_patterns():
    g, a, c_scaled = program_graph()
    with vlog(3) as log:
        with aics.Session(graph=g) as sess:
            sess.run(c_scaled, {a: [3.0, 4.0]})
    ours = our_messages(log.getvalue())
    patterns = {
        "placer.cc": r"^(\S+)\((\w+)\) placed on: (\S+)$",
        "meta_optimizer.cc": r"^(\w+): Graph size after: \d+ nodes \(-?\d+\), \d+ edges \(-?\d+\), time = [\d.]+ms\.$",
        "constant_folding.cc": r"^Folded node: \{\{node (\S+)\}\} = (\w+)\[.*\]\(.*\)$",
        "executor.cc": r"^Process node: \d+ step \d+ \{\{node (\S+)\}\} = (\w+)\[.*\]\(.*\) device: (\S+)$",
    }
    for source, pattern in patterns.items():
        tf_hits = [m for m in tf_messages(source) if re.match(pattern, m)]
        our_hits = [m for m in ours if re.match(pattern, m)]
        assert tf_hits and our_hits, source
    executed = [re.match(patterns["executor.cc"], m).group(1) for m in ours if re.match(patterns["executor.cc"], m)]
    assert executed == ["b", "c", "k", "mul", "c_scaled"]
    assert any(m.startswith("Folded node: {{node k}} = Mul[T=DT_FLOAT](two, five)") for m in ours)
