"""Print kernels (TF's core/kernels/logging_ops.cc)."""
import sys

import numpy as np

from ..framework.kernel_registry import register_kernel


def _fmt(v, summarize):
    if isinstance(v, np.ndarray) and v.dtype.kind == "O" and v.ndim == 0:
        v = v[()]
    if isinstance(v, bytes):   # string tensors hold bytes; TF prints their text
        return v.decode("utf-8", "backslashreplace")
    with np.printoptions(threshold=max(summarize, 1) * 2, edgeitems=max(summarize, 1)):
        return str(np.asarray(v)) if not isinstance(v, str) else v


@register_kernel("PrintV2")
def _print_v2(inputs, summarize=3, output_stream="stdout", end="\n"):
    text = " ".join(_fmt(v, summarize) for v in inputs)
    if output_stream.startswith("file://"):
        with open(output_stream[len("file://"):], "a", encoding="utf-8") as f:
            f.write(text + end)
        return
    print(text, end=end, file=sys.stderr if output_stream == "stderr" else sys.stdout)


@register_kernel("Print")
def _print(input, data, message="", summarize=3):
    print(message + "".join("[" + _fmt(v, summarize) + "]" for v in data), file=sys.stderr)
    return input
