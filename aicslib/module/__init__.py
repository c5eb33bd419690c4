"""``aics.Module``: variable tracking for TF2-style models (TF's python/module)."""
from .module import Module

__all__ = ["Module"]
