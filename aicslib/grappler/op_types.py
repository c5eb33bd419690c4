"""What grappler needs to know about an op type (TF's ``core/grappler/op_types.cc``).

A pass rewrites only ops it knows to be safe to rewrite: unknown ops are left
alone, and so are ops with side effects or state (variables, queues, random
numbers, printing) and control-flow ops, whose meaning depends on frames and
execution order rather than on their inputs alone.
"""
from ..framework import cwise_table, dtypes
from ..framework.device import device_type
from ..framework.kernel_registry import kernel_registry
from ..framework.op_def import op_def_registry

CONTROL_FLOW = frozenset(("Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                          "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger",
                          "While", "StatelessWhile", "If", "StatelessIf", "Case"))

# Ops whose outputs are not a function of their inputs, even when the op is not marked
# stateful: feeding, reading the session's state, calling functions.
_NOT_PURE = frozenset(("Placeholder", "PlaceholderWithDefault", "PartitionedCall",
                       "StatefulPartitionedCall", "Print", "PrintV2", "Assert", "NoOp", "VarHandleOp",
                       "ReadVariableOp", "VariableV2", "Variable", "FIFOQueueV2", "QueueDequeueV2"))

# One output element from the same-position elements of the inputs (after broadcasting), and
# fusable into a _FusedElementwise program: the fusable rows of framework/cwise_table.py, and
# Add and BiasAdd, which a program runs as AddV2.
ELEMENTWISE_UNARY = frozenset(cwise_table.fusable(1))
ELEMENTWISE_BINARY = frozenset(cwise_table.fusable(2)) | {"Add", "BiasAdd"}
COMMUTATIVE = frozenset(("AddV2", "Add", "Mul", "Maximum", "Minimum", "LogicalAnd", "LogicalOr",
                         "Equal", "NotEqual", "SquaredDifference"))
TRIVIAL = frozenset(("Identity", "StopGradient", "PreventGradient", "Snapshot"))


def op_def(op_type):
    return op_def_registry.get(op_type)


def is_stateful(op_type):
    od = op_def(op_type)
    return od is None or bool(getattr(od, "is_stateful", False))


def is_control_flow(op_type):
    return op_type in CONTROL_FLOW


def is_pure(op_type):
    """True when the op's outputs depend on its inputs and attrs only (safe to merge or fold)."""
    od = op_def(op_type)
    if od is None or op_type in _NOT_PURE or op_type in CONTROL_FLOW or op_type == "Const":
        return False
    if is_stateful(op_type):
        return False
    # A resource or variant handle names state held elsewhere (a variable, an iterator).
    return not any(a.type in (dtypes.resource, dtypes.variant) for a in list(od.input_arg) + list(od.output_arg))


def is_elementwise(op_type):
    return op_type in ELEMENTWISE_UNARY or op_type in ELEMENTWISE_BINARY


def has_kernel(op_type, device, attrs):
    """True when ``op_type`` has a kernel for ``device``'s type (a rewrite must not move a node
    off the device it asked for: the replacement has to run there too)."""
    return kernel_registry.find(op_type, device_type(device) if device else "CPU", attrs) is not None
