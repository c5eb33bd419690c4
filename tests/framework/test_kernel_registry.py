"""Kernel registry: lookup by (op, device, dtype), error listing, kernel forms, placement."""
import itertools

import numpy as np
import pytest

import aicslib as aics
from aicslib import flags
from aicslib.framework.execute import invalidate_caches

_counter = itertools.count()


@pytest.fixture
def new_op(op_name):
    """Registers ``KrTestN: x: T -> y: T`` with T in {float, double, int32}; removed afterwards."""
    def make(extra=None):
        n = op_name("KrTest")
        b = aics.register_op(n).input("x: T").output("y: T").attr("T: {float, double, int32}")
        if extra:
            extra(b)
        return n
    return make


def _run_graph(fn, config=None, trace=False):
    g = aics.Graph()
    with g.as_default():
        fetch = fn()
        with aics.Session(config=config) as s:
            if trace:
                md = aics.RunMetadata()
                out = s.run(fetch, options=aics.RunOptions(trace_level=aics.RunOptions.FULL_TRACE),
                            run_metadata=md)
                return out, md
            return s.run(fetch)


class TestLookup:
    def test_find_by_op_device_dtype(self, new_op):
        kr = aics.kernel_registry
        kd = kr.find("MatMul", "CPU", {"T": aics.float32})
        assert kd is not None and kd.op_type == "MatMul" and kd.device == "CPU"
        assert aics.float32 in kd.type_constraint["T"]
        assert kr.find("MatMul", "CPU", {"T": aics.bool}) is None
        n = new_op()
        cpu = aics.register_kernel(n, type_constraint={"T": [aics.float32, aics.float64]})(lambda x: x)
        mlu = aics.register_kernel(n, device="MLU", type_constraint={"T": [aics.float32]})(lambda x: x)
        assert kr.find(n, "CPU", {"T": aics.float64}).impl is cpu
        assert kr.find(n, "MLU", {"T": aics.float32}).impl is mlu
        assert kr.find(n, "MLU", {"T": aics.float64}) is None
        assert kr.find(n, "GPU", {"T": aics.float32}) is None
        assert kr.find(n, "CPU", {"T": aics.int32}) is None

    def test_lookup_error_lists_registered_kernels(self):
        with pytest.raises(aics.errors.NotFoundError) as ei:
            aics.kernel_registry.lookup("MatMul", "CPU", {"T": aics.int8}, node_name="mm")
        msg = str(ei.value)
        assert "No registered 'MatMul' OpKernel for 'CPU' devices" in msg
        assert "node 'mm'" in msg and "T=int8" in msg
        assert "device='CPU'; T in [float16, bfloat16, float32, float64, int32, int64]" in msg

    def test_missing_dtype_kernel_eager(self, new_op):
        n = new_op()

        @aics.register_kernel(n, type_constraint={"T": [aics.float32]})
        def _k(x):
            return x + np.float32(1)

        assert float(getattr(aics.raw_ops, n)(x=np.float32(1.0))) == 2.0
        with pytest.raises(aics.errors.NotFoundError) as ei:
            getattr(aics.raw_ops, n)(x=np.int32(1))
        assert f"No registered '{n}' OpKernel" in str(ei.value)
        assert "T=int32" in str(ei.value) and "T in [float32]" in str(ei.value)

    def test_missing_dtype_kernel_graph_fails_at_run(self, new_op):
        n = new_op()

        @aics.register_kernel(n, type_constraint={"T": [aics.float32]})
        def _k(x):
            return x

        with aics.Graph().as_default():
            y = getattr(aics.raw_ops, n)(x=aics.constant(3, dtype=aics.int32), name="node_y")
            with aics.Session() as s:
                with pytest.raises(aics.errors.NotFoundError, match="node 'node_y'"):
                    s.run(y)

    def test_op_without_any_kernel(self, new_op):
        n = new_op()
        with pytest.raises(aics.errors.NotFoundError, match="no registered kernels"):
            getattr(aics.raw_ops, n)(x=np.float32(1.0))

    def test_duplicate_registration_raises(self, new_op):
        n = new_op()
        aics.register_kernel(n, type_constraint={"T": [aics.float32]})(lambda x: x)
        with pytest.raises(KeyError, match="already registered"):
            aics.register_kernel(n, type_constraint={"T": [aics.float32]})(lambda x: x)
        # A different dtype set on the same device is a separate kernel.
        aics.register_kernel(n, type_constraint={"T": [aics.float64]})(lambda x: x)
        assert len(aics.kernel_registry.kernels_for(n)) == 2

    def test_unknown_device_type(self, new_op):
        with pytest.raises(ValueError, match="TPU"):
            aics.register_kernel(new_op(), device="TPU")

    def test_devices_for(self, new_op):
        n = new_op()
        aics.register_kernel(n, device="CPU")(lambda x: x)
        aics.register_kernel(n, device="mlu")(lambda x: x)
        assert aics.kernel_registry.devices_for(n) == ["CPU", "MLU"]


class TestKernelForms:
    def test_attrs_passed_by_keyword_only_when_named(self, new_op):
        seen = {}
        n = new_op(lambda b: b.attr("alpha: float = 2.0").attr("tag: string = 'x'"))

        @aics.register_kernel(n)
        def _k(x, alpha):
            seen["alpha"] = alpha
            return (x * alpha).astype(x.dtype)

        assert float(getattr(aics.raw_ops, n)(x=np.float32(3.0))) == 6.0
        assert seen == {"alpha": 2.0}

    def test_var_keyword_kernel_gets_all_attrs(self, new_op):
        seen = {}
        n = new_op(lambda b: b.attr("alpha: float = 2.0"))

        @aics.register_kernel(n)
        def _k(x, **attrs):
            seen.update(attrs)
            return x

        getattr(aics.raw_ops, n)(x=np.float64(1.0), alpha=0.5)
        assert seen == {"T": aics.float64, "alpha": 0.5}

    def test_ctx_form(self, new_op):
        seen = []
        n = new_op()

        @aics.register_kernel(n)
        def _k(ctx, x):
            seen.append((ctx.node_name, ctx.op_type, ctx.device))
            return x

        with aics.Graph().as_default():
            y = getattr(aics.raw_ops, n)(x=aics.constant(1.0), name="my_node")
            with aics.Session() as s:
                s.run(y)
        assert seen == [("my_node", n, "/device:CPU:0")]

    def test_class_form_is_instantiated_once_per_node(self, new_op):
        n = new_op()
        instances = []

        @aics.register_kernel(n)
        class Counter:
            def __init__(self, attrs):
                self.count = 0
                self.attrs = attrs
                instances.append(self)

            def compute(self, ctx, x):
                self.count += 1
                return x + np.asarray(self.count, x.dtype)

        with aics.Graph().as_default():
            a = getattr(aics.raw_ops, n)(x=aics.constant(0.0), name="a")
            b = getattr(aics.raw_ops, n)(x=aics.constant(10.0), name="b")
            with aics.Session() as s:
                assert s.run(a) == 1.0
                assert s.run(a) == 2.0
                assert s.run(b) == 11.0  # its own instance
                assert s.run(a) == 3.0
        assert len(instances) == 2
        assert instances[0].attrs["T"] == aics.float32

    def test_multiple_outputs_as_tuple(self):
        n = f"KrTwoOut{next(_counter)}"
        aics.register_op(n).input("x: float").output("lo: float").output("hi: float")
        try:
            @aics.register_kernel(n)
            def _k(x):
                return np.floor(x), np.ceil(x)

            lo, hi = getattr(aics.raw_ops, n)(x=np.float32([1.5, -1.5]))
            np.testing.assert_array_equal(lo.numpy(), [1.0, -2.0])
            np.testing.assert_array_equal(hi.numpy(), [2.0, -1.0])
            with aics.Graph().as_default():
                lo, hi = getattr(aics.raw_ops, n)(x=aics.constant([2.5]))
                with aics.Session() as s:
                    assert s.run([lo, hi]) == [[2.0], [3.0]]
        finally:
            aics.op_def_registry.unregister(n)
            aics.kernel_registry.unregister(n)
            invalidate_caches(n)


class TestPlacement:
    def _two_device_op(self, new_op):
        n = new_op()
        aics.register_kernel(n, device="CPU")(lambda x: x + np.asarray(1, x.dtype))
        aics.register_kernel(n, device="MLU", type_constraint={"T": [aics.float32]})(
            lambda x: x + np.asarray(100, x.dtype))
        return n

    def test_mlu_kernel_used_in_mlu_scope(self, new_op):
        n = self._two_device_op(new_op)

        def build():
            with aics.device("/mlu:0"):
                y = getattr(aics.raw_ops, n)(x=aics.constant(1.0), name="y")
            assert y.op.device == "/device:MLU:0"
            return y
        out, md = _run_graph(build, trace=True)
        assert out == 101.0
        stats = {s.node_name: s.device for s in md.node_stats()}
        assert stats["y"] == "/device:MLU:0"

    def test_mlu_kernel_eager(self, new_op):
        n = self._two_device_op(new_op)
        with aics.device("/mlu:0"):
            y = getattr(aics.raw_ops, n)(x=np.float32(1.0))
        assert float(y) == 101.0
        assert y.device == "/device:MLU:0"
        assert float(getattr(aics.raw_ops, n)(x=np.float32(1.0))) == 2.0

    def test_soft_placement_to_cpu(self, new_op, monkeypatch, capfd):
        n = self._two_device_op(new_op)
        monkeypatch.setenv("AICS_MIN_VLOG_LEVEL", "1")
        flags.reload()
        try:
            def build():
                with aics.device("/mlu:0"):
                    # float64 has no MLU kernel: soft-placed on the CPU.
                    return getattr(aics.raw_ops, n)(x=aics.constant(1.0, dtype=aics.float64), name="z")
            out, md = _run_graph(build, trace=True)
        finally:
            monkeypatch.delenv("AICS_MIN_VLOG_LEVEL")
            flags.reload()
        assert out == 2.0
        assert {s.node_name: s.device for s in md.node_stats()}["z"] == "/device:CPU:0"
        err = capfd.readouterr().err
        assert "Soft placement" in err and "'z'" in err

    def test_op_without_mlu_kernel_is_soft_placed(self, new_op):
        n = new_op()
        aics.register_kernel(n)(lambda x: x * np.asarray(2, x.dtype))

        def build():
            with aics.device("/mlu:0"):
                return getattr(aics.raw_ops, n)(x=aics.constant(1.5), name="twice")
        out, md = _run_graph(build, trace=True)
        assert out == 3.0
        assert {s.node_name: s.device for s in md.node_stats()}["twice"] == "/device:CPU:0"

    def test_soft_placement_off_is_an_error(self, new_op):
        n = new_op()
        aics.register_kernel(n)(lambda x: x)

        def build():
            a = aics.constant(1.0)
            with aics.device("/mlu:0"):
                return getattr(aics.raw_ops, n)(x=a, name="cpu_only")
        with pytest.raises(aics.errors.InvalidArgumentError,
                           match="Cannot assign a device for operation 'cpu_only'"):
            _run_graph(build, config=aics.ConfigProto(allow_soft_placement=False))

    def test_soft_placement_off_fine_when_kernel_exists(self, new_op):
        n = self._two_device_op(new_op)

        def build():
            c = aics.constant(1.0)
            with aics.device("/mlu:0"):
                return getattr(aics.raw_ops, n)(x=c)
        assert _run_graph(build, config=aics.ConfigProto(allow_soft_placement=False)) == 101.0

    def test_device_names_canonicalised(self):
        with aics.Graph().as_default():
            with aics.device("/cpu:0"):
                a = aics.constant(1.0)
            with aics.device("/device:GPU:1"):
                b = aics.constant(1.0)
            with aics.device("/job:localhost/replica:0/task:0/device:MLU:0"):
                c = aics.constant(1.0)
            assert (a.device, b.device, c.device) == ("/device:CPU:0", "/device:GPU:1", "/device:MLU:0")
            with pytest.raises(ValueError):
                with aics.device("/tpu:0"):
                    pass
