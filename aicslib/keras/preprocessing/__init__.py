"""``tf.keras.preprocessing``: sequence padding and a simple text tokenizer."""
from . import sequence, text

__all__ = ["sequence", "text"]
