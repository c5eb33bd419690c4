"""The ``run_op`` fixture: one op-level test, run in every execution mode.

A test asks for ``run_op`` and calls ``run_op(fn, *args)``: ``fn`` builds ops
from its arguments and returns a tensor (or a list, tuple or dict of them);
the result comes back as NumPy values. The fixture is parametrized, so the
test runs three times:

* ``eager``: ``fn`` on EagerTensors, op by op;
* ``session``: ``fn`` on placeholders in a fresh Graph, run by a Session fed
  the arrays (placeholders, not constants, so Grappler cannot fold the ops
  away before they run);
* ``function``: ``fn`` traced by ``aics.function`` and called with
  EagerTensors (a FuncGraph run by the function's own Session).

Each NumPy array among ``args`` becomes a tensor of its dtype and shape in the
mode's form (an array of bytes or str a string tensor); any other argument (a Python number, a list of axes, a dtype)
reaches ``fn`` as it is. With ``static_shapes=True`` the graph modes also check
that the shape inferred while building is fully defined and is the shape that
ran. ``run_op.mode`` names the mode, for the rare expectation that differs.

Registered in ``tests/conftest.py`` (``pytest_plugins``).
"""
import numpy as np
import pytest

import aicslib as aics

MODES = ("eager", "session", "function")


class OpRunner:
    """Runs op-building functions in one execution mode (see the module docstring)."""

    def __init__(self, mode):
        self.mode = mode

    def __repr__(self):
        return f"OpRunner({self.mode!r})"

    def __call__(self, fn, *args, static_shapes=False):
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
        arrays = [args[i] for i in tensor_positions]

        def build(*tensors):
            full = list(args)
            for i, t in zip(tensor_positions, tensors):
                full[i] = t
            return fn(*full)

        if self.mode == "eager":
            return _to_numpy(build(*[aics.constant(a, _dtype_of(a)) for a in arrays]))
        if self.mode == "session":
            with aics.Graph().as_default():
                phs = [aics.placeholder(_dtype_of(a), a.shape) for a in arrays]
                out = build(*phs)
                with aics.Session() as sess:
                    result = sess.run(out, dict(zip(phs, arrays)))
            if static_shapes:
                _check_static_shapes(out, result)
            return result
        function = aics.function(build, autograph=False)
        inputs = [aics.constant(a, _dtype_of(a)) for a in arrays]
        result = _to_numpy(function(*inputs))
        if static_shapes:
            _check_static_shapes(function.get_concrete_function(*inputs).structured_outputs, result)
        return result


def _dtype_of(array):
    """The tensor dtype for an argument array: its own, or string for text (bytes or str items)."""
    return aics.string if array.dtype.kind in "OSU" else aics.as_dtype(array.dtype)


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _flat(v)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flat(x[k])]
    return [x]


def _to_numpy(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x.numpy() if hasattr(x, "numpy") else x


def _check_static_shapes(tensors, values):
    """The static shape inferred when the graph was built must agree with what ran."""
    for t, v in zip(_flat(tensors), _flat(values)):
        static = t.shape
        assert static.is_fully_defined() and static.as_list() == list(np.shape(v)), (t, static, np.shape(v))


@pytest.fixture(params=MODES, scope="session")
def run_op(request):
    """``run_op(fn, *args)``: ``fn``'s result as NumPy values, in each execution mode in turn.

    Session-scoped (the runner holds no state), so hypothesis tests can use it too."""
    return OpRunner(request.param)
