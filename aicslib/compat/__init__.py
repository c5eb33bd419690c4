"""``aics.compat.v1``: TF1 names whose TF2 behaviour differs."""
from . import v1
