"""``tf.keras.datasets``: data sets shipped with the workbook (``data/``), never downloaded."""
from . import mnist

__all__ = ["mnist"]
