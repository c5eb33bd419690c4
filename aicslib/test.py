"""``aics.test``: gradient checking helpers (as tf.test), the device queries TF programs
make before choosing a device, and ``library_calls`` (``direct_calls`` for other files too) for
graded exercises that must be answered without the library's own implementation."""
from .framework.call_tracing import direct_calls, library_calls  # noqa: F401
from .eager.gradient_checker import compute_gradient, max_error  # noqa: F401


def is_built_with_cuda():
    """False: aicslib's kernels are NumPy and C on the CPU; none is built for CUDA."""
    return False


def is_built_with_gpu_support():
    return False


def is_built_with_rocm():
    return False


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """False, as TensorFlow answers on a machine without a GPU (TF deprecates this for
    ``tf.config.list_physical_devices('GPU')``, which is empty here too)."""
    del cuda_only, min_cuda_compute_capability
    return False


def gpu_device_name():
    """``''``: the name of a GPU device when there is one, as TF."""
    return ""
