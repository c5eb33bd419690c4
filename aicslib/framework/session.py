"""Session: runs the part of a graph that the fetches need.

``Session.run(fetches, feed_dict)`` does what TF's DirectSession does, in
miniature:

1. **plan**: the planner (``planner.py``; the seam ``planner`` below) prunes
   the graph to the ops the fetches need (stopping at fed tensors), orders
   them topologically (a cycle is an error) and says after which op each
   value can be freed;
2. **rewrite**: registered graph rewriters (Grappler, ``aicslib/grappler``,
   registers itself) optimize the planned ops;
3. **place** each node: the device it asked for if a kernel exists there,
   else the CPU (soft placement, logged), else an error;
4. **execute** the plan (``executor.py``): per node a ``KernelCall``
   (``execute.py``, the same object eager execution uses) run through the
   one step function ``execute.run_kernel``; on one thread, or one per device
   (``parallel_executor.py``); a graph with TF1 control flow runs on the
   frame executor (``control_flow_executor.py``), pruned by the same planner
   module. Plans are cached per (fetches, feeds, graph version, planner).

VLOG levels (AICS_MIN_VLOG_LEVEL): 1 pruning, 2 placement, 3 every kernel run
(placement and kernel lines also in TF's own words: ``x(Mul) placed on: ...``,
``Process node: ...``; TF logs those at its VLOG 1).
"""
import threading

import numpy as np

from . import context, device as _device, dtypes, logging as _log
from .context import get_default_session, get_default_session_or_raise  # noqa: F401  (TF's names here)
from .control_flow_executor import ControlFlowPlan, has_control_flow
from .default_graph import get_default_graph
from .errors import InvalidArgumentError
from .execute import KernelCall, run_kernel, short_path
from .executor import Plan, Step, Tracer, run_plan
from .kernel_registry import kernel_registry
from .fetch_mapper import FetchMapper
from .graph import Operation, Tensor
from .graph_options import GraphOptions
from .planner import default_planner, fetch_targets, last_uses
from .python_sequences import MIXED_TYPES, NON_RECTANGULAR
from .run_metadata import RunMetadata, RunOptions  # noqa: F401  (TF's names here)
from .run_deadline import run_deadline
from .seam import Seam
from .tensor_util import to_numpy

#: The seam every Session plans its steps with (``planner.py`` has the contract); another
#: planner takes its place for a ``with`` block through ``aics.experimental.use_planner(fn)``.
planner = Seam("planner", default_planner, "planner(targets, feeds, keep) -> (order, free_after)")
use_planner = planner.use


_graph_rewriters = []


def register_graph_rewriter(fn):
    """Adds ``fn(ops, fetch_elements, feeds, config) -> ops`` to what runs on every new plan's
    ordered ops (Grappler registers its meta-optimizer). It returns ``ops`` itself when it
    changes nothing, else the rewritten ops in an order that runs."""
    if fn not in _graph_rewriters:
        _graph_rewriters.append(fn)
    return fn


class ConfigProto:
    """Session options: soft placement, device counts, logging of placement."""

    def __init__(self, allow_soft_placement=True, log_device_placement=False, device_count=None,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, graph_options=None):
        self.graph_options = graph_options if graph_options is not None else GraphOptions()  # Grappler's switches
        self.allow_soft_placement = allow_soft_placement
        self.log_device_placement = log_device_placement
        self.device_count = dict(device_count or {})
        self.inter_op_parallelism_threads = inter_op_parallelism_threads
        self.intra_op_parallelism_threads = intra_op_parallelism_threads


_SCRATCH = object()  # plan slot key for outputs that are computed but overridden by a feed


class Session:
    """Runs graphs. ``Session(target='', graph=None, config=None)``, as TF1."""

    def __init__(self, target="", graph=None, config=None):
        if target not in ("", None):
            raise ValueError(f"Only the in-process target '' is supported, got {target!r}.")
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config or ConfigProto()
        self._closed = False
        self._plans = {}
        self._kernels_version = kernel_registry.version
        self._node_calls = {}
        self.resources = {}  # variables, queues and random streams of this session
        self._lock = threading.RLock()
        self._default_ctx = None
        # Devices per type (ConfigProto.device_count under AICS_VISIBLE_DEVICES); >1 device:
        # nodes placed on different devices run concurrently (parallel_executor.py).
        self._device_count = _device.session_device_count(self._config.device_count)

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    # ---- lifetime and default session
    def close(self):
        if not self._closed:
            self._closed = True
            for r in list(self.resources.values()):
                closer = getattr(r, "_session_closed", None)
                if closer is not None:
                    closer()
            self.resources.clear()
            self._plans.clear()
            self._node_calls.clear()

    def __enter__(self):
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._default_ctx.__exit__(*exc)
        self._default_ctx = None
        self.close()
        return False

    def as_default(self):
        return _DefaultSession(self)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- run
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._graph is None:
            raise RuntimeError("The Session graph is empty.")
        mapper = FetchMapper(self._graph, fetches)
        feeds = self._normalize_feeds(feed_dict)
        if self._kernels_version != kernel_registry.version:   # a kernel put in place or taken out
            self._plans.clear()
            self._node_calls.clear()
            self._kernels_version = kernel_registry.version
        key = (tuple(mapper.elements), tuple(feeds), self._graph.version, planner.current)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                if has_control_flow(self._graph):  # Switch/Merge/Enter...: frames and dead tensors
                    plan = ControlFlowPlan(self._graph, mapper.elements, feeds, self._kernel_call)
                else:
                    plan = self._build_plan(mapper.elements, feeds)
                self._plans[key] = plan
        trace = options is not None and options.trace_level >= RunOptions.SOFTWARE_TRACE
        with run_deadline(getattr(options, "timeout_in_ms", 0)):   # honoured by blocking kernels
            values = self._execute(plan, feeds, run_metadata if trace else None)
        return mapper.build(values)

    def _normalize_feeds(self, feed_dict):
        if not feed_dict:
            return {}
        feeds = {}
        for k, v in feed_dict.items():
            try:
                t = self._graph.as_graph_element(k)
            except (TypeError, KeyError, ValueError) as e:
                raise TypeError(f"Cannot interpret feed_dict key {k!r} as a Tensor: {e}") from None
            if isinstance(t, Operation):
                raise TypeError(f"Cannot feed an Operation ('{t.name}'); feed one of its output tensors.")
            feeds[t] = self._check_feed(t, v)
        return feeds

    def _check_feed(self, t, value):
        if type(value) is np.ndarray and value.dtype.kind != "O" and value.dtype == t.dtype.as_numpy_dtype \
                and t.shape.accepts(value.shape):
            return value    # the common feed: an array of the tensor's dtype and a shape that fits
        if t.dtype in (dtypes.resource, dtypes.variant):
            return value
        if isinstance(value, (Tensor,)):
            raise TypeError(f"The value of a feed cannot be a aics.Tensor object ('{value.name}'). "
                            f"Acceptable feed values include Python scalars, strings, lists, "
                            f"numpy ndarrays.")
        if hasattr(value, "numpy"):
            value = value.numpy()
        try:
            arr = to_numpy(value, t.dtype, what=f"feed value for Tensor '{t.name}'")
        except (TypeError, ValueError) as e:
            if str(e) in (NON_RECTANGULAR, MIXED_TYPES):
                raise           # no dtype to name: the value is not an array at all
            src = np.asarray(value).dtype if not isinstance(value, np.ndarray) else value.dtype
            raise TypeError(f"Cannot feed value of dtype {src} for Tensor '{t.name}', which has "
                            f"dtype {t.dtype.name}. ({e})") from None
        if not t.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot feed value of shape {tuple(arr.shape)} for Tensor "
                             f"'{t.name}', which has shape {_shape_str(t.shape)}")
        return arr

    # ---- planning
    def _build_plan(self, elements, feeds):
        graph = self._graph
        keep = {el for el in elements if isinstance(el, Tensor)}
        order, free = planner(fetch_targets(elements, feeds), feeds, keep)
        order = list(order)
        if _log.vlog_is_on(1):
            kept = {op.name for op in order}
            pruned = [op.name for op in graph.get_operations() if op.name not in kept]
            _log.vlog(1, f"Pruning graph for fetches [{', '.join(e.name for e in elements)}]"
                         f" feeds [{', '.join(t.name for t in feeds)}]: keeping {len(order)} of "
                         f"{len(graph.get_operations())} nodes")
            if pruned:
                _log.vlog(1, f"Pruned (not needed by the fetches): {', '.join(pruned)}")
        for rewrite in _graph_rewriters:
            rewritten = rewrite(order, elements, feeds, self._config)
            if rewritten is not order:  # new nodes: their values' last uses are new too
                order, free = rewritten, last_uses(rewritten, keep)
        slots = {}
        feed_slots = []
        for t in feeds:
            slots[t] = len(slots)
            feed_slots.append((t, slots[t]))
        # An op that runs although one of its outputs is fed (for another output, or a control
        # edge): the fed value wins, the computed one goes to a scratch slot.
        scratch = slots[_SCRATCH] = len(slots)
        steps = []
        for op in order:
            if op.type == "Placeholder" and op.outputs[0] not in feeds:
                t = op.outputs[0]
                raise InvalidArgumentError(None, op, f"You must feed a value for placeholder tensor "
                                           f"'{op.name}' with dtype {t.dtype.name} and shape "
                                           f"{_shape_list_str(t.shape)}\n\t [[node {op.name}]]")
            for t in op.outputs:
                if t not in slots:
                    slots[t] = len(slots)
            out_slots = tuple(scratch if t in feeds else slots[t] for t in op.outputs)
            steps.append(Step(op, self._kernel_call(op), tuple(slots[t] for t in op.inputs), out_slots))
        fetch_slots = [None if isinstance(el, Operation) else slots[el] for el in elements]
        free_slots = [tuple(slots[t] for t in f) or None for f in free]
        return Plan(steps, len(slots), feed_slots, fetch_slots, free_slots,
                    memoize_shapes=planner.current is planner.default)

    def _kernel_call(self, op):
        """The node's KernelCall on its placed device, made once per node and session."""
        call = self._node_calls.get(op)
        if call is not None:
            return call
        placed = self._place(op)
        call = KernelCall(op.op_def, op.attrs, placed, op.input_lengths, op.name, self.resources, self)
        if call.device != placed and op.device and not self._config.allow_soft_placement:
            raise InvalidArgumentError(None, op, f"Cannot assign a device for operation '{op.name}': "
                                       f"no {op.device} kernel for {op.type} and soft placement "
                                       f"is disabled (ConfigProto(allow_soft_placement=False)).")
        self._node_calls[op] = call
        if self._config.log_device_placement:
            _log.info(f"{op.name}: ({op.type}): {call.device}")  # TF's placer.cc line, word for word
        if _log.vlog_is_on(2):
            file, line = call.kernel.location
            _log.vlog(2, f"{op.name}({op.type}) placed on: {call.device}")  # TF's placer.cc VLOG line
            _log.vlog(2, f"Placing node '{op.name}' ({op.type}) on {call.device}; kernel registered at "
                         f"{short_path(file)}:{line}")
        return call

    def _place(self, op):
        """The local device for ``op``'s requested one (``device.resolve``); a device this
        session does not have goes to CPU:0 under soft placement, else is TF's error."""
        placed, why = _device.resolve(op.device, self._device_count)
        if why is not None:
            if not self._config.allow_soft_placement:
                have = ", ".join(_device.local_devices(self._device_count))
                raise InvalidArgumentError(None, op, f"Cannot assign a device for operation {op.name}: "
                                           f"Could not satisfy explicit device specification "
                                           f"'{op.device}' because no devices matching that "
                                           f"specification are registered in this process ({why}); "
                                           f"available devices: {have}")
            _log.vlog(1, f"Soft placement: '{op.name}' asked for {op.device}, {why}; placing it on {placed}")
        return placed

    # ---- execution
    @staticmethod
    def _execute(plan, feeds, run_metadata):
        """The plan's fetched values; traced into ``run_metadata`` when given, logged at VLOG 3."""
        verbose = _log.vlog_is_on(3)
        step = Tracer(plan.ops, run_metadata, verbose) if run_metadata is not None or verbose else run_kernel
        try:
            if type(plan) is ControlFlowPlan:
                values = plan.execute(feeds, step)
            else:
                values = run_plan(plan, feeds, step)
        finally:
            if step is not run_kernel:
                step.finish()
        # A read-only array (a constant's value, a shared scalar) is the caller's to change.
        return [v.copy() if type(v) is np.ndarray and not v.flags.writeable else v for v in values]

    def list_devices(self):
        """This session's devices, as TF1's ``Session.list_devices()`` (name, device_type, ...)."""
        configured = {k.upper(): int(v) for k, v in self._config.device_count.items()}
        return _device.session_devices(self._device_count, configured)

    # ---- partial helpers used by Tensor.eval / make_callable
    def make_callable(self, fetches, feed_list=None):
        feed_list = list(feed_list or [])

        def call(*feed_values):
            return self.run(fetches, feed_dict=dict(zip(feed_list, feed_values)))
        return call


class InteractiveSession(Session):
    """A Session that installs itself as the default on construction (for notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()

    def close(self):
        if self._default_ctx is not None:
            try:
                self._default_ctx.__exit__(None, None, None)
            except Exception:
                pass
            self._default_ctx = None
        super().close()


class _DefaultSession:
    def __init__(self, sess):
        self._sess = sess

    def __enter__(self):
        context.thread_state().session_stack.append(self._sess)
        return self._sess

    def __exit__(self, *exc):
        st = context.thread_state().session_stack
        if st and st[-1] is self._sess:
            st.pop()
        elif self._sess in st:
            st.remove(self._sess)
        return False


def _shape_str(shape):
    if shape.rank is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape.dims) + \
        ("," if shape.rank == 1 else "") + ")"


def _shape_list_str(shape):
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"
