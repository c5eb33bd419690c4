"""Plausible wrong answers for notebook 15 (operator fusion), keyed by grade_id.

Each replaces the body of its exercise's function (``bias_act_inplace``); each must lose exactly
that exercise's points. The remapper lab that followed is now its own chapter (answers_16.py)."""

WRONG_ANSWERS = {
    "bias_act_inplace": {
        # right values, but a new array: nothing happens in place, and y + b is a y-sized temporary
        "returns_a_new_array": """
out = y + bias
return np.maximum(out, 0) if activation == "relu" else np.clip(out, 0, 6)
""",
        # in place in the end, but through a y-sized temporary (what fusion is meant to avoid)
        "assigns_through_a_temporary": """
if activation == "relu":
    y[...] = np.maximum(y + bias, y.dtype.type(0))
else:
    y[...] = np.clip(y + bias, y.dtype.type(0), y.dtype.type(6))
return y
""",
        # activation before the bias: relu(y) + b is not relu(y + b)
        "activation_before_bias": """
if activation == "relu":
    np.maximum(y, y.dtype.type(0), out=y)
else:
    np.clip(y, y.dtype.type(0), y.dtype.type(6), out=y)
np.add(y, bias, out=y)
return y
""",
        # ReLU6 clamps at 6 but forgets the 0 below
        "relu6_without_lower_bound": """
np.add(y, bias, out=y)
if activation == "relu":
    np.maximum(y, y.dtype.type(0), out=y)
else:
    np.minimum(y, y.dtype.type(6), out=y)
return y
""",
        # the library's own output stage: the shortcut the test rejects
        "library_output_stage": """
from aicslib.kernels.fused_eigen_output_kernels import apply_output_stage
return apply_output_stage(y, ["BiasAdd", "Relu" if activation == "relu" else "Relu6"], [bias], 0.0)
""",
        # in place and bit-exact, but y < 0 is a boolean mask of y: y.size bytes of temporary
        # (a quarter of a float32 y, an eighth of a float64 one)
        "boolean_mask_assignment": """
np.add(y, bias, out=y)
y[y < 0] = 0
if activation == "relu6":
    y[y > 6] = 6
return y
""",
        # multiplies by the mask: the boolean temporary again (and a float copy of it)
        "multiplies_by_a_mask": """
y += bias
y *= (y > 0)
if activation == "relu6":
    np.minimum(y, y.dtype.type(6), out=y)
return y
""",
        # in place, no temporary, but a Python loop over every pixel (minutes on a real layer)
        "python_loop_per_pixel": """
flat = y.reshape(-1, y.shape[-1])
for row in flat:
    np.add(row, bias, out=row)
    np.maximum(row, 0, out=row)
    if activation == "relu6":
        np.minimum(row, 6, out=row)
return y
""",
        # the package's reference written out: a new array, then copied back
        "copies_the_package_reference": """
from workbook.references.fusion import bias_act
y[...] = bias_act(y, bias, activation)
return y
""",
    },
}

CORRECT_ANSWERS = {
    "bias_act_inplace": {
        # augmented assignment and Python numbers as bounds (NumPy keeps y's dtype)
        "augmented_assignment_python_bounds": """
y += bias
if activation == "relu":
    np.maximum(y, 0, out=y)
else:
    np.clip(y, 0, 6, out=y)
return y
""",
        # a Python loop over the channels (views of y, no temporary), then min/max in place
        "loop_over_channels": """
for c in range(y.shape[-1]):
    y[..., c] += bias[c]
np.maximum(y, 0, out=y)
if activation == "relu6":
    np.minimum(y, 6, out=y)
return y
""",
    },
}

WRONG_ANSWERS["chain_estimate"] = {
    # counts only the reads
    "reads_only": """
bytes_moved = 4 * n if fused else 4 * n * n_ops
return bytes_moved, max(n * n_ops / (peak_gflops * 1e9), bytes_moved / (bw_gbs * 1e9))
""",
    # fused still pays every op's traffic
    "fusion_saves_nothing": """
bytes_moved = 8 * n * n_ops
return bytes_moved, max(n * n_ops / (peak_gflops * 1e9), bytes_moved / (bw_gbs * 1e9))
""",
    # the shorter of the two times: an upper bound on speed read backwards
    "min_not_max": """
bytes_moved = 8 * n if fused else 8 * n * n_ops
return bytes_moved, min(n * n_ops / (peak_gflops * 1e9), bytes_moved / (bw_gbs * 1e9))
""",
    # compute and memory added, as if they never overlapped
    "adds_the_two_times": """
bytes_moved = 8 * n if fused else 8 * n * n_ops
return bytes_moved, n * n_ops / (peak_gflops * 1e9) + bytes_moved / (bw_gbs * 1e9)
""",
    # GiB for a GB/s figure
    "binary_gigabytes": """
bytes_moved = 8 * n if fused else 8 * n * n_ops
return bytes_moved, max(n * n_ops / (peak_gflops * 2**30), bytes_moved / (bw_gbs * 2**30))
""",
}
CORRECT_ANSWERS.setdefault("chain_estimate", {})["intensity_form"] = """
traffic = (4 + 4) * n * (1 if fused else n_ops)
intensity = n * n_ops / traffic
attainable = min(peak_gflops * 1e9, intensity * bw_gbs * 1e9)
return traffic, n * n_ops / attainable
"""
WRONG_ANSWERS["chain_estimate"]["copies_the_package_reference"] = """
from workbook.references.fusion import chain_estimate
return chain_estimate(n, n_ops, fused, peak_gflops, bw_gbs)
"""
