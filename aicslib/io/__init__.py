"""``aics.io``: reading and writing files, decoding images, writing graphs (TF's tf.io)."""
from ..framework.graph_def_proto import read_graph, write_graph  # noqa: F401  (.pb, .pbtxt, .json)
from ..ops.io_ops import read_file, write_file  # noqa: F401
# tf.io.decode_* are the same functions as tf.image.decode_*.
from ..ops.image_ops import (decode_bmp, decode_gif, decode_image, decode_jpeg,  # noqa: F401
                            decode_png)
from . import gfile  # noqa: F401,E402  (tf.io.gfile.GFile, exists, makedirs, ...)
