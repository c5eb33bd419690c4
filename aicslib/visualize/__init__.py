"""``aicslib.visualize``: matplotlib views of graphs and traced runs, for the notebooks.

Not imported by ``import aicslib``; matplotlib is imported only when drawing. Use
``from aicslib.visualize import draw_graph, plot_timeline``.
"""
from .graph_plot import (DEVICE_COLORS, UNNEEDED_COLOR, draw_graph, graph_layout, needed_ops,
                         node_styles, op_depths, plot_timeline, timeline_rows)
