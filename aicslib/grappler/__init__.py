"""Grappler: graph rewrites applied before a graph runs (TF's ``core/grappler``).

Grappler plugs into the Session as a registered graph rewriter: importing this
package registers :func:`meta_optimizer.optimize_for_session`, which every
Session runs when it builds a plan (once per fetch/feed signature; the result
is cached with the plan);
``aics.grappler.optimize(graph_def, fetches, config)`` runs the same passes on a
GraphDef and returns the rewritten GraphDef, for inspection.

==============================  ==================================================
``grappler_item.py``            the graph being optimized: nodes, fetches, feeds
``graph_view.py``               nodes by name, their consumers, rewiring helpers
``op_types.py``                 what an op is (elementwise, stateful, control flow)
``optimizers/meta_optimizer``   runs the passes in TF's order, logs each result
``optimizers/model_pruner``     drops what the fetches do not need, trivial Identity
``optimizers/common_subgraph_elimination``  merges identical nodes
``optimizers/constant_folding`` computes nodes whose inputs are all constants
``optimizers/arithmetic_optimizer``  x*1, x+0, --x, x*x -> Square, a+(-b) -> a-b
``optimizers/generic_layout_optimizer``  NHWC<->NCHW (a logged no-op on CPU)
``optimizers/remapper``         Conv2D/MatMul/Depthwise + BiasAdd + activation fusion
``optimizers/elementwise_fusion``  chains of elementwise ops -> one pass over memory
``optimizers/dependency_optimizer``  redundant control edges, NoOp forwarding
==============================  ==================================================

VLOG levels (AICS_MIN_VLOG_LEVEL): 1 per-pass results in TF 2.21's form
(``constant_folding: Graph size after: 4 nodes (-4), ...``), 2 every rewrite
(constant folding as TF's ``Folded node: {{node k}} = Mul[...](two, five)``),
3 skipped candidates and why.
"""
from ..framework.graph_options import GraphOptions, OptimizerOptions, RewriterConfig
from ..framework.session import register_graph_rewriter
from .optimizers.meta_optimizer import optimize, optimize_for_session

register_graph_rewriter(optimize_for_session)

__all__ = ["optimize", "RewriterConfig", "GraphOptions", "OptimizerOptions"]
