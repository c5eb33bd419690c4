"""The device-lane plot of a traced step, shared by two chapters: the towers of
``19-distributed-training`` and the GPipe pipeline of ``20-parallelism-models`` draw their
``RunMetadata.step_stats`` with it (kept here so neither chapter copies it)."""
import matplotlib.pyplot as plt
from matplotlib.patches import Patch


def plot_timeline(step_stats, title, style):
    """One lane per device, one bar per node over time (µs since the step started), coloured by
    ``style(node_name) -> (legend label, colour)``: the bars are too narrow to carry their op names,
    so the colours say what the work is (forward, backward, averaging ...)."""
    devs = sorted(step_stats.dev_stats, key=lambda d: d.device)
    legend = {}
    _, ax = plt.subplots(figsize=(9, 0.6 * len(devs) + 1.3))
    for lane, d in enumerate(devs):
        for ns in d.node_stats:
            label, color = style(ns.node_name)
            legend[label] = color
            ax.broken_barh([(ns.all_start_micros, max(ns.all_end_rel_micros, 1))], (lane - 0.4, 0.8),
                           facecolors=color, edgecolors="black", linewidth=0.2)
    ax.set_yticks(range(len(devs)))
    ax.set_yticklabels([d.device for d in devs])
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel("time since step start (µs)")
    ax.set_ylabel("device")
    labels = sorted(legend)
    ax.legend([Patch(facecolor=legend[k], edgecolor="black") for k in labels], labels, fontsize=7,
              loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title, fontsize=10)
    return ax
