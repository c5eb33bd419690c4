"""Keras's engine: ``Model`` (``training.py``) and ``Sequential`` (``sequential.py``);
also ``tf.keras.models`` here (``models.Sequential``, ``models.Model``)."""
from .sequential import Sequential
from .training import Model

__all__ = ["Model", "Sequential"]
