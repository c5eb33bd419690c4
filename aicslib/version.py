"""``aics.version`` (TF's ``tf.version``): the library's version, one place for every namespace.

TF1 programs print ``tf.__version__`` first thing; ``aicslib.__version__`` and
``aicslib.compat.v1.__version__`` are both this ``VERSION``.
"""
VERSION = "0.1.0"
GIT_VERSION = "unknown"  # aicslib is not built from a tagged TensorFlow tree
COMPILER_VERSION = "unknown"
