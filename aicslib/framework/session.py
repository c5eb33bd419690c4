"""Session: runs the part of a graph that the fetches need.

``Session.run(fetches, feed_dict)`` does what TF's DirectSession does, in
miniature:

1. **prune** the graph to the ops the fetches depend on (stopping at fed
   tensors), and order them topologically (a cycle is an error);
2. **place** each node: the device it asked for if a kernel exists there,
   else the CPU (soft placement, logged), else an error;
3. build an **execution plan**: per node a ``KernelCall`` (``execute.py``,
   the same object eager execution uses), its input slots and output slots,
   and the slots to free after it (values whose last consumer it is);
   cached per (fetches, feeds) signature;
4. **execute** the plan: a loop over the nodes calling ``KernelCall.compute``.

VLOG levels (AICS_MIN_VLOG_LEVEL): 1 pruning, 2 placement, 3 every kernel run
(placement and kernel lines also in TF's own words: ``x(Mul) placed on: ...``,
``Process node: ...``; TF logs those at its VLOG 1).
"""
import itertools
import threading
import time

import numpy as np

from . import context, control_flow_executor, dtypes, logging as _log
from .errors import InvalidArgumentError, OpError, ResourceExhaustedError
from .run_deadline import run_deadline
from . import device as _device, parallel_executor
from .execute import KernelCall
from .node_def_util import summarize_node_def
from .ops import Operation, Tensor, get_default_graph, to_numpy
from .python_sequences import MIXED_TYPES, NON_RECTANGULAR


class ConfigProto:
    """Session options: soft placement, device counts, logging of placement."""

    def __init__(self, allow_soft_placement=True, log_device_placement=False, device_count=None,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, graph_options=None):
        from .graph_options import GraphOptions
        self.graph_options = graph_options if graph_options is not None else GraphOptions()  # Grappler's switches
        self.allow_soft_placement = allow_soft_placement
        self.log_device_placement = log_device_placement
        self.device_count = dict(device_count or {})
        self.inter_op_parallelism_threads = inter_op_parallelism_threads
        self.intra_op_parallelism_threads = intra_op_parallelism_threads


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

    def _for_device(self, device):
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


# --------------------------------------------------------------------------
# Fetch structures: nested lists/tuples/dicts/namedtuples mirrored in the result.

class _FetchMapper:
    def __init__(self, graph, fetches):
        self.graph = graph
        self.elements = []      # unique graph elements, in first-seen order
        self._index = {}
        self.template = self._map(fetches)

    def _element(self, fetch):
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        try:
            el = self.graph.as_graph_element(fetch)
        except TypeError:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a "
                            f"string or Tensor. (Can not convert a {type(fetch).__name__} into a "
                            f"Tensor or Operation.)") from None
        except (KeyError, ValueError) as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})") from None
        i = self._index.get(el)
        if i is None:
            i = self._index[el] = len(self.elements)
            self.elements.append(el)
        return i

    def _map(self, f):
        if isinstance(f, (list,)):
            return ("list", [self._map(x) for x in f])
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            return ("namedtuple", type(f), [self._map(x) for x in f])
        if isinstance(f, tuple):
            return ("tuple", [self._map(x) for x in f])
        if isinstance(f, dict):
            return ("dict", type(f), [(k, self._map(v)) for k, v in f.items()])
        return ("el", self._element(f))

    def build(self, values, template=None):
        t = self.template if template is None else template
        kind = t[0]
        if kind == "el":
            v = values[t[1]]   # a scalar is fetched as a NumPy scalar (np.float32(1.0)), a string as bytes, as in TF
            return v[()] if type(v) is np.ndarray and v.ndim == 0 else v
        if kind == "list":
            return [self.build(values, x) for x in t[1]]
        if kind == "tuple":
            return tuple(self.build(values, x) for x in t[1])
        if kind == "namedtuple":
            return t[1](*[self.build(values, x) for x in t[2]])
        d = t[1]()
        for k, v in t[2]:
            d[k] = self.build(values, v)
        return d


# --------------------------------------------------------------------------

class _Step:
    __slots__ = ("op", "compute", "in_slots", "out_slots", "device", "multi")


class _Plan:
    def __init__(self, steps, num_slots, feed_slots, fetch_slots):
        self.steps = steps
        self.num_slots = num_slots
        self.feed_slots = feed_slots      # list of (tensor, slot)
        self.fetch_slots = fetch_slots    # per fetch element: slot or None (an op)
        self.free_after = self._release_points(steps, fetch_slots)
        # What the untraced loop needs per step, unpacked once here rather than per run.
        self.loop = [(s.compute, s.in_slots, s.out_slots if s.multi else s.out_slots[0], s.multi, free)
                     for s, free in zip(steps, self.free_after)]

    @staticmethod
    def _release_points(steps, fetch_slots):
        """Per step, the slots to drop once it has run: values whose last consumer it is.

        As TF's executor, an intermediate is freed as soon as nothing else needs it,
        so a long graph holds only its live values, not every result of the step.
        """
        keep = {s for s in fetch_slots if s is not None}
        last = {}
        for i, step in enumerate(steps):
            for slot in step.in_slots:
                last[slot] = i
        free = [[] for _ in steps]
        for i, step in enumerate(steps):
            for slot in step.out_slots:
                if slot not in last and slot not in keep:
                    free[i].append(slot)  # produced but never consumed (e.g. an unused output)
        for slot, i in last.items():
            if slot not in keep:
                free[i].append(slot)
        return [tuple(f) or None for f in free]


_SCRATCH = object()  # plan slot key for outputs that are computed but overridden by a feed


def _input_names(op):
    """A node's inputs as a NodeDef lists them: "x:1", then "^y" for each control input."""
    return [getattr(t, "name", str(t)) for t in op._inputs] + [f"^{c.name}" for c in op._control_inputs]


_STEP_IDS = itertools.count(1)  # "step N" in the VLOG 3 lines, as TF's executor numbers its steps


class Session:
    """Runs graphs. ``Session(target='', graph=None, config=None)``, as TF1."""

    def __init__(self, target="", graph=None, config=None):
        if target not in ("", None):
            raise ValueError(f"Only the in-process target '' is supported, got {target!r}.")
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config or ConfigProto()
        self._closed = False
        self._plans = {}
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
        mapper = _FetchMapper(self._graph, fetches)
        feeds = self._normalize_feeds(feed_dict)
        trace = options is not None and options.trace_level >= RunOptions.SOFTWARE_TRACE
        key = (tuple(mapper.elements), tuple(feeds), self._graph._version)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                if control_flow_executor.has_control_flow(self._graph):  # Switch/Merge/Enter...
                    plan = control_flow_executor.ControlFlowPlan(self._graph, mapper.elements, feeds,
                                                                 self._make_step, self._wrap_error)
                else:
                    plan = self._build_plan(mapper.elements, feeds)
                self._plans[key] = plan
        with run_deadline(getattr(options, "timeout_in_ms", 0)):   # honoured by blocking kernels
            values = self._execute(plan, feeds, trace, run_metadata)
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
        target_ops = []
        for el in elements:
            if isinstance(el, Operation):
                target_ops.append(el)
            elif el not in feeds:
                target_ops.append(el.op)
        order = self._prune(target_ops, feeds)
        if _log.vlog_is_on(1):
            kept = {op.name for op in order}
            pruned = [op.name for op in graph.get_operations() if op.name not in kept]
            _log.vlog(1, f"Pruning graph for fetches [{', '.join(_el_name(e) for e in elements)}]"
                         f" feeds [{', '.join(t.name for t in feeds)}]: keeping {len(order)} of "
                         f"{len(graph.get_operations())} nodes")
            if pruned:
                _log.vlog(1, f"Pruned (not needed by the fetches): {', '.join(pruned)}")
        # Grappler (aicslib/grappler) rewrites the pruned graph; untouched ops come back as they were.
        from ..grappler.optimizers.meta_optimizer import optimize_for_session
        order = optimize_for_session(order, elements, feeds, self._config)
        slots = {}
        feed_slots = []
        for t in feeds:
            slots[t] = len(slots)
            feed_slots.append((t, slots[t]))
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
            step = self._make_step(op, slots)
            if any(t in feeds for t in op.outputs):
                # An op that runs although one of its outputs is fed (for another output, or
                # a control edge): the fed value wins, the computed one goes to a scratch slot.
                step.out_slots = tuple(scratch if t in feeds else slots[t] for t in op.outputs)
            steps.append(step)
        fetch_slots = [None if isinstance(el, Operation) else slots[el] for el in elements]
        return _Plan(steps, len(slots), feed_slots, fetch_slots)

    def _prune(self, target_ops, feeds):
        fed_ops_outputs = feeds
        order, state = [], {}
        for root in target_ops:
            if state.get(root) == 2:
                continue
            stack = [(root, iter(self._deps(root, fed_ops_outputs)))]
            state[root] = 1
            while stack:
                op, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[op] = 2
                    order.append(op)
                    continue
                st = state.get(nxt)
                if st == 1:
                    raise InvalidArgumentError(None, nxt, f"Graph contains a cycle: node '{nxt.name}' "
                                               f"depends on itself (through '{op.name}').")
                if st is None:
                    state[nxt] = 1
                    stack.append((nxt, iter(self._deps(nxt, fed_ops_outputs))))
        return order

    @staticmethod
    def _deps(op, feeds):
        for t in op._inputs:
            if t not in feeds:
                yield t.op
        yield from op._control_inputs

    def _make_step(self, op, slots):
        call = self._node_calls.get(op)
        if call is None:
            placed = self._place(op)
            call = KernelCall(op.op_def, op._attrs, placed, op._input_lengths, op.name,
                              self.resources, self)
            if call.device != placed and op.device \
                    and not self._config.allow_soft_placement:
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
                             f"{_short(file)}:{line}")
        s = _Step()
        s.op = op
        s.compute = call.compute
        s.in_slots = tuple(slots[t] for t in op._inputs)
        s.out_slots = tuple(slots[t] for t in op.outputs)
        s.device = call.device
        s.multi = len(op.outputs) != 1
        return s

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
    def _execute(self, plan, feeds, trace, run_metadata):
        if type(plan) is not _Plan:  # a graph with control flow: frames and dead tensors
            return plan.execute(feeds)
        vals = [None] * plan.num_slots
        for t, slot in plan.feed_slots:
            vals[slot] = feeds[t]
        if parallel_executor.applies(plan):
            parallel_executor.run(plan, vals, trace, run_metadata, self._wrap_error)
        elif not trace and not _log.vlog_is_on(3):
            step = 0
            try:
                for step, (compute, ins, out, multi, free) in enumerate(plan.loop):
                    r = compute(*[vals[i] for i in ins])
                    if multi:
                        for s, v in zip(out, r or ()):
                            vals[s] = v
                    else:
                        vals[out] = r
                    if free:
                        for s in free:
                            vals[s] = None
            except Exception as e:  # name the failing node in the message
                raise self._wrap_error(plan.steps[step].op, e,
                                       [vals[i] for i in plan.steps[step].in_slots]) from None
        else:
            self._execute_slow(plan, vals, trace, run_metadata)
        out = []
        for slot in plan.fetch_slots:
            if slot is None:
                out.append(None)
                continue
            v = vals[slot]
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                v = v.copy()
            out.append(v)
        return out

    def _execute_slow(self, plan, vals, trace, run_metadata):
        t0 = time.perf_counter()
        verbose = _log.vlog_is_on(3)
        step_id = next(_STEP_IDS)
        for node_id, (s, free) in enumerate(zip(plan.steps, plan.free_after)):
            args = [vals[i] for i in s.in_slots]
            if verbose:  # TF's executor.cc line (its VLOG(1)); the node as SummarizeNodeDef prints it
                _log.vlog(3, f"Process node: {node_id} step {step_id} "
                             f"{summarize_node_def(s.op.name, s.op.type, s.op._attrs, _input_names(s.op))}"
                             f" device: {s.device}")
            start = time.perf_counter()
            try:
                r = s.compute(*args)
            except Exception as e:
                raise self._wrap_error(s.op, e, args) from None
            end = time.perf_counter()
            outs = (r or ()) if s.multi else (r,)
            for slot, v in zip(s.out_slots, outs):
                vals[slot] = v
            if verbose:
                _log.vlog(3, f"Executing kernel {s.op.type} for node '{s.op.name}' on {s.device}: "
                             f"inputs [{', '.join(_describe(a) for a in args)}] -> "
                             f"[{', '.join(_describe(v) for v in outs)}] in "
                             f"{(end - start) * 1e6:.1f}us")
            if trace and run_metadata is not None:
                ds = run_metadata.step_stats._for_device(s.device)
                ds.node_stats.append(NodeExecStats(
                    s.op.name, s.op.type, s.device, int((start - t0) * 1e6),
                    max(1, int((end - start) * 1e6)), [tuple(np.shape(v)) for v in outs]))
            if free:
                for slot in free:
                    vals[slot] = None

    @staticmethod
    def _wrap_error(op, err, args):
        where = op.traceback[-1] if op.traceback else None
        loc = f" (defined at {_short(where.filename)}:{where.lineno})" if where else ""
        if isinstance(err, OpError):
            if err.op is None:
                err.op = op
                err.message = f"{err.message}\n\t [[node {op.name}{loc}]]"
                err.args = (err.message,)
            return err
        if isinstance(err, MemoryError):   # TF's allocator reports OOM as ResourceExhaustedError
            return ResourceExhaustedError(None, op, f"OOM when allocating tensor in node '{op.name}'"
                                          f"{loc}: {err}\n\t [[node {op.name}]]")
        if isinstance(err, (ValueError, IndexError, TypeError, ArithmeticError, np.linalg.LinAlgError)):
            shapes = ", ".join(_describe(a) for a in args)
            return InvalidArgumentError(None, op, f"{op.type} node '{op.name}'{loc} failed on "
                                        f"inputs [{shapes}]: {err}\n\t [[node {op.name}]]")
        return err

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


def get_default_session():
    st = context.thread_state().session_stack
    return st[-1] if st else None


def get_default_session_or_raise(what):
    sess = get_default_session()
    if sess is None:
        raise ValueError(f"Cannot {what}: no default session is registered. Use `with "
                         f"sess.as_default()` or pass an explicit session.")
    return sess


def _shape_str(shape):
    if shape.rank is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape.dims) + \
        ("," if shape.rank == 1 else "") + ")"


def _shape_list_str(shape):
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _describe(v):
    if isinstance(v, (np.ndarray, np.generic)):
        return f"{v.dtype}{list(np.shape(v))}"
    return type(v).__name__


def _el_name(e):
    return e.name


def _short(path):
    i = path.replace("\\", "/").rfind("/aicslib/")
    return path[i + 1:] if i >= 0 else path
