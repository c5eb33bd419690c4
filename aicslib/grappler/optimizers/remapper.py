"""Remapper: replace a subgraph by one fused op that computes the same thing.

TF's ``remapper.cc``. The patterns, as TF's CPU remapper matches them:

==========================================  ==========================================
Conv2D + BiasAdd [+ Relu | Relu6 | Elu]     ``_FusedConv2D``
MatMul + BiasAdd [+ Relu | Relu6 | Elu]     ``_FusedMatMul``
DepthwiseConv2dNative + BiasAdd [+ act]     ``_FusedDepthwiseConv2dNative``
Conv2D + FusedBatchNormV3 (inference)       ``_FusedConv2D`` with the batch norm in
  [+ Relu | Relu6 | Elu]                    its output stage (``fused_ops`` =
                                            ["FusedBatchNorm", act])
==========================================  ==========================================

The fused node takes the name of the last node of the pattern (so whoever read
the activation reads the fused op) and lists the fused ops in its
``fused_ops`` attr. A pattern is left alone when an intermediate result is
needed elsewhere — it has another consumer, a control edge, or is fetched or
fed — since the fused op never materializes it, or when the layout is NCHW
(TF's CPU kernels fuse NHWC only), the dtype is not float32/float64, or the
nodes sit on different devices.

Why it pays: the unfused graph writes the convolution's output to memory,
reads it back to add the bias, writes that, reads it back for the ReLU; the
fused kernel does the bias and activation on the output while it is still in
cache (see notebooks/15-operator-fusion).
"""
from ...framework import dtypes
from ...framework import logging as _log
from .. import op_types
from ..graph_view import GraphView, NodeDef

ACTIVATIONS = ("Relu", "Relu6", "Elu")
_FUSED_OP = {"Conv2D": "_FusedConv2D", "MatMul": "_FusedMatMul",
             "DepthwiseConv2dNative": "_FusedDepthwiseConv2dNative"}
_TYPES = (dtypes.float32, dtypes.float64)


def _intermediate_ok(view, node, consumer):
    """``node`` may vanish into a fused op: ``consumer`` is its only reader."""
    if node is None or view.item.is_preserved(node.name):
        return False
    if node.device != consumer.device:
        return False
    return view.has_single_consumer(node.name)


def _match(view, last):
    """(contraction, bias-or-batchnorm node, activation or None) ending at ``last``, or None."""
    act = last if last.op in ACTIVATIONS else None
    mid = view.producer(last.data_inputs()[0]) if act is not None else last
    if mid is None or mid.op not in ("BiasAdd", "FusedBatchNormV3"):
        return None
    if act is not None and not _intermediate_ok(view, mid, act):
        _log.vlog(3, f"remapper: not fusing '{mid.name}' into '{act.name}': its output is needed elsewhere")
        return None
    if mid.op == "FusedBatchNormV3":
        if mid.attr.get("is_training", True) or mid.attr.get("data_format", "NHWC") != "NHWC":
            return None
        # Only the first output (y) may be used: the batch statistics outputs must be unread.
        if any(view.consumers(mid.name, p) for p in range(1, 6)) or (
                act is None and view.control_consumers(mid.name)):
            return None
    elif mid.attr.get("data_format", "NHWC") != "NHWC":
        return None
    if mid.attr.get("T") not in _TYPES:
        return None
    conv = view.producer(mid.data_inputs()[0])
    if conv is None or conv.op not in _FUSED_OP or view.item.is_fed(mid.data_inputs()[0]):
        return None
    if mid.op == "FusedBatchNormV3" and conv.op != "Conv2D":
        return None
    if not op_types.has_kernel(_FUSED_OP[conv.op], (act or mid).device, {"T": mid.attr["T"]}):
        _log.vlog(3, f"remapper: no {_FUSED_OP[conv.op]} kernel on {(act or mid).device}; not fusing")
        return None
    if conv.attr.get("data_format", "NHWC") != "NHWC" or not _intermediate_ok(view, conv, mid):
        _log.vlog(3, f"remapper: not fusing '{conv.name}' ({conv.op}) into '{mid.name}': its output is "
                     f"needed elsewhere or its layout is NCHW")
        return None
    return conv, mid, act


def _fuse(view, conv, mid, act):
    last = act or mid
    fused_ops = ["BiasAdd" if mid.op == "BiasAdd" else "FusedBatchNorm"] + ([act.op] if act else [])
    args = mid.data_inputs()[1:]  # bias, or scale, offset, mean, variance
    control = []
    for n in (conv, mid, last):
        control += [c for c in n.control_inputs() if c not in control]
    attr = dict(conv.attr)
    attr.update({"num_args": len(args), "fused_ops": fused_ops,
                 "epsilon": float(mid.attr.get("epsilon", 1e-4)), "leakyrelu_alpha": 0.2})
    fused = NodeDef(last.name, _FUSED_OP[conv.op], conv.data_inputs() + args + ["^" + c for c in control],
                    attr, last.device, source=last.source)
    _log.vlog(2, f"remapper: fusing {conv.op} '{conv.name}' + {mid.op} '{mid.name}'"
                 + (f" + {act.op} '{act.name}'" if act else "") + f" into {fused.op} '{fused.name}' "
                 f"(fused_ops={fused_ops})")
    item = view.item
    item.nodes[item.nodes.index(last)] = fused
    view.remove([conv.name, mid.name] if act is not None else [conv.name])


def optimize(item):
    view = GraphView(item)
    changes = 0
    for n in list(item.nodes):
        if n.name not in view.nodes or n.op not in ACTIVATIONS + ("BiasAdd", "FusedBatchNormV3"):
            continue
        if not n.data_inputs():
            continue
        m = _match(view, n)
        if m is None and n.op in ACTIVATIONS:
            continue
        if m is None:
            continue
        conv, mid, act = m
        if act is None:
            # A BiasAdd/BatchNorm followed by a fusable activation is fused from the activation.
            readers = view.consumers(mid.name, 0)
            if len(readers) == 1 and readers[0].op in ACTIVATIONS and _match(view, readers[0]) is not None:
                continue
        _fuse(view, conv, mid, act)
        changes += 1
    return changes
