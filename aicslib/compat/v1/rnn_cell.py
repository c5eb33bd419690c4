"""``tf.compat.v1.nn.rnn_cell``: TF1's recurrent cells (``aicslib/ops/rnn_cell_impl.py``)."""
from ...ops.rnn_cell_impl import (BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell,
                                  LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell)

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell"]
