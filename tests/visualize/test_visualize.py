"""aicslib.visualize: the pure graph-layout / pruning helpers against a hand-worked graph."""
import matplotlib

matplotlib.use("Agg")  # tests only; notebooks keep the inline backend

import pytest

import aicslib as aics
from aicslib.visualize import (DEVICE_COLORS, UNNEEDED_COLOR, draw_graph, graph_layout,
                               needed_ops, node_styles, op_depths, plot_timeline, timeline_rows)


def small_graph():
    """Hand-worked graph, depth in brackets (a, b on /cpu:0; s, m on /mlu:0):

        a[0]  b[0]  k[0]  p[0]
          \\  /     |  \\  /
          s[1]      |   q[1]
             \\     |
              m[2]
               :      control edge m -> r
              r[3] = identity(a)
    """
    g = aics.Graph()
    with g.as_default():
        with aics.device("/cpu:0"):
            a = aics.constant(1.0, name="a")
            b = aics.constant(2.0, name="b")
        k = aics.constant(3.0, name="k")
        with aics.device("/mlu:0"):
            s = aics.add(a, b, name="s")
            m = aics.multiply(s, k, name="m")
        p = aics.placeholder(aics.float32, shape=(), name="p")
        q = aics.multiply(p, k, name="q")
        with aics.control_dependencies([m]):
            r = aics.identity(a, name="r")
    return g, dict(a=a, b=b, k=k, s=s, m=m, p=p, q=q, r=r)


def test_needed_ops_follows_data_and_control_inputs():
    g, t = small_graph()
    assert needed_ops(g, t["s"]) == {"a", "b", "s"}
    assert needed_ops(g, t["m"]) == {"a", "b", "k", "s", "m"}
    # r reads only a, but its control input m drags in m's whole subgraph.
    assert needed_ops(g, t["r"]) == {"a", "b", "k", "s", "m", "r"}
    assert needed_ops(g, [t["s"], t["q"]]) == {"a", "b", "s", "p", "k", "q"}
    assert needed_ops(g, None) == {op.name for op in g.get_operations()}


def test_needed_ops_accepts_names_ops_and_nested_fetches():
    g, t = small_graph()
    assert needed_ops(g, "s:0") == needed_ops(g, "s") == needed_ops(g, t["s"].op) == {"a", "b", "s"}
    assert needed_ops(g, {"x": [t["s"]], "y": (t["k"],)}) == {"a", "b", "s", "k"}


def test_needed_ops_stops_at_fed_tensors():
    g, t = small_graph()
    # Feeding s cuts a and b away, as Session pruning does.
    assert needed_ops(g, t["m"], feeds={t["s"]: 5.0}) == {"k", "m"}
    assert needed_ops(g, t["s"], feeds={t["s"]: 5.0}) == set()
    with pytest.raises(TypeError):
        needed_ops(g, t["m"], feeds={t["s"].op: 5.0})


def test_needed_ops_matches_the_session_pruning():
    g, t = small_graph()
    with aics.Session(graph=g) as sess:
        md = aics.RunMetadata()
        sess.run(t["r"], options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
    assert {row.node_name for row in timeline_rows(md)} == needed_ops(g, t["r"])


def test_op_depths_hand_worked():
    g, _ = small_graph()
    assert op_depths(g) == {"a": 0, "b": 0, "k": 0, "s": 1, "m": 2, "p": 0, "q": 1, "r": 3}


def test_op_depths_long_chain_has_no_recursion_limit():
    g = aics.Graph()
    with g.as_default():
        x = aics.constant(0.0, name="x")
        for _ in range(3000):
            x = aics.identity(x)
    depths = op_depths(g)
    assert depths[x.op.name] == 3000


def test_graph_layout_rows_and_centering():
    g, _ = small_graph()
    pos = graph_layout(g, x_spacing=2.0, y_spacing=1.0)
    # depth 0 row, in creation order: a, b, k, p -> centred at -3, -1, 1, 3
    assert [pos[n] for n in ("a", "b", "k", "p")] == [(-3.0, 0.0), (-1.0, 0.0), (1.0, 0.0), (3.0, 0.0)]
    # depth 1 row: s, q -> -1, 1
    assert pos["s"] == (-1.0, -1.0) and pos["q"] == (1.0, -1.0)
    assert pos["m"] == (0.0, -2.0) and pos["r"] == (0.0, -3.0)


def test_node_styles_colour_by_device_and_grey_unneeded():
    g, t = small_graph()
    st = node_styles(g, t["m"])
    assert st["a"].color == DEVICE_COLORS["CPU"] and st["a"].device == "CPU"
    assert st["s"].color == DEVICE_COLORS["MLU"] and st["s"].device == "MLU"
    assert st["k"].color == DEVICE_COLORS[""] and st["k"].needed
    assert st["q"].color == UNNEEDED_COLOR and not st["q"].needed
    assert not st["p"].needed and not st["r"].needed
    # Where the op actually ran (soft placement) overrides the requested device.
    st2 = node_styles(g, t["m"], placement={"s": "/device:CPU:0"})
    assert st2["s"].color == DEVICE_COLORS["CPU"]


def test_timeline_rows_sorted_by_start_and_devices_after_soft_placement():
    g, t = small_graph()
    with aics.Session(graph=g) as sess:
        md = aics.RunMetadata()
        sess.run(t["m"], options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
    rows = timeline_rows(md)
    assert [r.start_us for r in rows] == sorted(r.start_us for r in rows)
    assert all(r.duration_us >= 1 for r in rows)
    # s asked for /mlu:0: it runs there if an MLU kernel for AddV2 is registered, else
    # soft placement moves it to the CPU; a and b asked for the CPU.
    has_mlu = aics.kernel_registry.find("AddV2", "MLU", {"T": aics.float32}) is not None
    devices = {r.node_name: r.device for r in rows}
    assert devices["s"] == ("/device:MLU:0" if has_mlu else "/device:CPU:0")
    assert devices["a"] == devices["b"] == "/device:CPU:0"


def test_draw_graph_and_plot_timeline_smoke():
    import matplotlib.pyplot as plt
    g, t = small_graph()
    ax = draw_graph(g, fetches=t["m"])
    assert len(ax.patches) == len(g.get_operations())
    with aics.Session(graph=g) as sess:
        md = aics.RunMetadata()
        sess.run(t["m"], options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE), run_metadata=md)
    ax2 = plot_timeline(md)
    assert len(ax2.patches) == len(timeline_rows(md))
    plt.close("all")


def test_draw_graph_keeps_whole_names_inside_their_boxes():
    import matplotlib
    matplotlib.use("Agg", force=False)
    import aicslib as aics

    g = aics.Graph()
    with g.as_default():
        with aics.name_scope("a_rather_long_scope"), aics.name_scope("inner_layer"):
            x = aics.compat.v1.placeholder(aics.float32, [2], name="input_features")
            y = aics.identity(x, name="normalised_output")
    ax = draw_graph(g, fetches=y)
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    texts = [t for t in ax.texts if "input_features" in t.get_text().replace("\n", "")]
    assert texts, "the placeholder's whole name is drawn"
    label = texts[0].get_text().replace("\n", "")
    assert label.startswith(y.op.name.rsplit("/", 1)[0].split("/")[0]), label      # nothing cut from the front
    box = texts[0].get_window_extent(renderer)
    patches = [p for p in ax.patches if p.get_window_extent(renderer).contains(*box.get_points().mean(0))]
    assert patches and all(p.get_window_extent(renderer).width >= box.width for p in patches)
