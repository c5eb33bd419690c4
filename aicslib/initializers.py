"""``aics.initializers`` (= ``aics.keras.initializers``): TF2's initializer classes.

``initializer(shape, dtype=None)`` returns a tensor. Keras's defaults differ
from TF1's: ``RandomNormal`` and ``TruncatedNormal`` have ``stddev=0.05``,
``RandomUniform`` is ``U(-0.05, 0.05)``. The Glorot/He/LeCun classes are
``VarianceScaling`` with their scale, mode and distribution. Lower-case names
(``'glorot_uniform'``) work with ``get``. The implementations are in
``aicslib/ops/init_ops.py``.
"""
from .framework import dtypes
from .framework.missing_api import module_getattr
from .ops import init_ops
from .ops.init_ops import Initializer, Ones, Zeros
from .ops.init_ops import VarianceScaling as _VarianceScalingV1

__getattr__ = module_getattr(__name__)


class Constant(init_ops.Constant):
    """Keras's signature: ``Constant(value=0)`` (the dtype comes with each call)."""

    def __init__(self, value=0):
        super().__init__(value)


class VarianceScaling(_VarianceScalingV1):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(scale, mode, distribution, seed)


class Orthogonal(init_ops.Orthogonal):
    def __init__(self, gain=1.0, seed=None):
        super().__init__(gain, seed)


class RandomNormal(init_ops.RandomNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean, stddev, seed, dtypes.float32)


class TruncatedNormal(init_ops.TruncatedNormal):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean, stddev, seed, dtypes.float32)


class RandomUniform(init_ops.RandomUniform):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(minval, maxval, seed, dtypes.float32)


def _scaling(name, scale, mode, distribution, doc):
    def __init__(self, seed=None):
        _VarianceScalingV1.__init__(self, scale, mode, distribution, seed)

    def get_config(self):
        return {"seed": self.seed}
    return type(name, (_VarianceScalingV1,), {"__init__": __init__, "get_config": get_config,
                                           "__doc__": doc})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform",
                         "U(-l, l), l = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).")
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal",
                        "Truncated normal, stddev = sqrt(2 / (fan_in + fan_out)).")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal",
                    "Truncated normal, stddev = sqrt(2 / fan_in) (He et al. 2015).")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform", "U(-l, l), l = sqrt(6 / fan_in).")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal",
                       "Truncated normal, stddev = sqrt(1 / fan_in).")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform", "U(-l, l), l = sqrt(3 / fan_in).")


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        from .ops import array_ops, math_ops
        import numpy as np
        shape = list(shape)
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        dt = dtypes.as_dtype(dtype or dtypes.float32)
        return math_ops.multiply(array_ops.constant(np.eye(*shape), dtype=dt),
                                 np.asarray(self.gain, dt.as_numpy_dtype))

    def get_config(self):
        return {"gain": self.gain}


zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_normal = HeNormal
he_uniform = HeUniform
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
orthogonal = Orthogonal
identity = Identity
variance_scaling = VarianceScaling

_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
            "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
            "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
            "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
            "orthogonal": Orthogonal, "identity": Identity, "variance_scaling": VarianceScaling,
            # Keras's short aliases (Embedding's default is 'uniform': U(-0.05, 0.05))
            "uniform": RandomUniform, "normal": RandomNormal}


def get(identifier):
    """An initializer from a name ('glorot_uniform', 'GlorotUniform'), a callable, or None."""
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type):
        return identifier()
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or globals().get(identifier)
        if isinstance(cls, type) and issubclass(cls, Initializer):
            return cls()
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")
