"""What ``Session.run`` is asked to trace, and what it reports (TF's RunOptions, RunMetadata
and StepStats protos): per device, per node, when it started, how long it ran, the
shapes it produced, on which executor thread."""


class RunOptions:
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, trace_level=0, timeout_in_ms=0):
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms


class NodeExecStats:
    def __init__(self, node_name, op, device, all_start_micros, all_end_rel_micros, output_shapes):
        self.node_name = node_name
        self.op = op
        self.device = device
        self.all_start_micros = all_start_micros
        self.all_end_rel_micros = all_end_rel_micros
        self.output_shapes = output_shapes
        self.timeline_label = f"{node_name} = {op}()"

    def __repr__(self):
        return (f"NodeExecStats({self.node_name!r}, op={self.op}, device={self.device}, "
                f"start={self.all_start_micros}us, duration={self.all_end_rel_micros}us)")


class DeviceStepStats:
    def __init__(self, device):
        self.device = device
        self.node_stats = []


class StepStats:
    def __init__(self):
        self.dev_stats = []

    def for_device(self, device):
        """This step's stats for ``device`` (made on first use)."""
        for d in self.dev_stats:
            if d.device == device:
                return d
        d = DeviceStepStats(device)
        self.dev_stats.append(d)
        return d


class RunMetadata:
    """Filled by ``run(..., options=RunOptions(trace_level=FULL_TRACE), run_metadata=md)``."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []

    def node_stats(self):
        """All nodes' stats over devices, in execution order."""
        out = [n for d in self.step_stats.dev_stats for n in d.node_stats]
        return sorted(out, key=lambda n: n.all_start_micros)
