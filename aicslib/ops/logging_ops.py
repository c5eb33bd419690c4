"""Printing from inside a graph (TF's core/ops/logging_ops.cc).

In a graph, ``print`` only adds a node: it prints when a Session runs it,
which is the debugging difference exercise 5.2 asks about.
"""
import sys

from ..framework.op_def import register_op
from ..framework.execute import apply_op

register_op("PrintV2").input("inputs: T").attr("T: list(type) >= 0").attr("summarize: int = 3") \
    .attr("output_stream: string = 'stdout'").attr("end: string = '\n'").set_is_stateful()
register_op("Print").input("input: T").input("data: U").output("output: T") \
    .attr("T: {half, bfloat16, float, double, int8, int16, int32, int64, uint8, bool}") \
    .attr("U: list(type) >= 0").attr("message: string = ''").attr("summarize: int = 3").set_is_stateful() \
    .set_shape_fn(lambda ctx: ctx.input_shape(0))


def print(*inputs, summarize=3, output_stream=sys.stdout, end="\n", name=None):
    """Prints its inputs when executed (at once eagerly; when run, in a graph).

    ``output_stream``: ``sys.stdout``, ``sys.stderr``, or ``"file://PATH"`` to append to a file,
    as TF's ``tf.print``."""
    if isinstance(output_stream, str):
        if not output_stream.startswith("file://"):
            raise ValueError(f"Unsupported output stream {output_stream!r}: pass sys.stdout, "
                             f"sys.stderr or a 'file://' path.")
        stream = output_stream
    else:
        stream = "stderr" if output_stream is sys.stderr else "stdout"
    return apply_op("PrintV2", [list(inputs)], {"summarize": summarize, "output_stream": stream,
                                               "end": end}, name=name)


def Print(input_, data, message=None, summarize=3, name=None):
    """Identity on ``input_`` that prints ``message`` and ``data`` when evaluated (TF1)."""
    return apply_op("Print", [input_, list(data)], {"message": message or "", "summarize": summarize},
                    name=name)
