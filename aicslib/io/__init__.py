"""``aics.io``: reading and writing files, decoding images, writing graphs (TF's tf.io)."""
from ..framework.graph_def_proto import read_graph, write_graph
from ..ops.io_ops import read_file, write_file
# tf.io.decode_* are the same functions as tf.image.decode_*.
from ..ops.image_ops import (decode_bmp, decode_gif, decode_image, decode_jpeg,
                            decode_png)
from . import gfile
