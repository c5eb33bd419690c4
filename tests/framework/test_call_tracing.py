"""aics.introspect.call_path and aics.test.library_calls, against calls whose path is known."""
import numpy as np

import aicslib as aics

ADD_KERNEL = aics.kernel_registry.find("AddV2", "CPU", {"T": aics.float32}).impl


def test_call_path_from_wrapper_to_kernel():
    x = aics.constant(np.ones(3, np.float32))
    aics.add(x, x)  # cached: the path below is the steady-state one
    path = aics.introspect.call_path(lambda: aics.add(x, x), ADD_KERNEL)
    names = [name for _, _, name in path]
    assert names[0] == "add" and names[-1] == ADD_KERNEL.__name__
    assert path[0][0].replace("\\", "/") == "aicslib/ops/math_ops.py"
    assert "execute" in names and "run_eager" in names
    assert all(p.replace("\\", "/").startswith("aicslib/") for p, _, _ in path)


def test_call_path_is_empty_when_the_target_is_not_reached():
    x = aics.constant(np.ones(3, np.float32))
    assert aics.introspect.call_path(lambda: aics.multiply(x, x), ADD_KERNEL) == []


def test_library_calls_reports_direct_calls_only():
    def numpy_only(a):
        return np.maximum(a, 0)

    def uses_library(a):
        return aics.nn.relu(aics.constant(a)).numpy()

    a = np.array([-1.0, 2.0], np.float32)
    result, called = aics.test.library_calls(numpy_only, a)
    assert called == set() and result.tolist() == [0.0, 2.0]
    result, called = aics.test.library_calls(uses_library, a)
    assert result.tolist() == [0.0, 2.0]
    # relu and constant are called from outside; what they call inside aicslib is not listed
    assert {"relu", "constant"} <= called and "execute" not in called


def test_library_calls_leaves_out_finalizers_the_garbage_collector_runs():
    import gc

    session = aics.Session(graph=aics.Graph())
    session.cycle = session                 # only the collector can free it: Session.__del__ then runs
    del session

    def collects(a):
        gc.collect()
        return a * 2

    result, called = aics.test.library_calls(collects, np.float32(2))
    assert result == 4 and called == set()
