"""``tf.compat.v1.app``: ``app.run(main)`` parses the flags and calls ``main(argv)``."""
import sys

from ...framework.missing_api import module_getattr
from . import flags

__getattr__ = module_getattr(__name__)


def run(main=None, argv=None):
    """Parses flags from ``argv`` (default ``sys.argv``), runs ``main(remaining_argv)`` and exits
    with its return value, as TF1's ``tf.app.run`` (``main`` defaults to ``__main__.main``)."""
    args = sys.argv if argv is None else argv
    rest = flags.FLAGS(args, known_only=True)
    if main is None:
        main = sys.modules["__main__"].main
    sys.exit(main(rest))
