"""Records TensorFlow's log for notebook 14's pruning program (run where TensorFlow is installed).

Builds the same graph as the notebook's ``PROGRAM`` (same node names) with
``tf.compat.v1`` and runs it once with ``log_device_placement=True``. The
commands that made the files in this folder (see README.md):

    TF_CPP_MAX_VLOG_LEVEL=3 TF_CPP_MIN_LOG_LEVEL=0 python data/tf_vlog/record_tf_vlog.py \
        > data/tf_vlog/tf_stdout.txt 2> data/tf_vlog/tf_vlog_level3.txt
    TF_CPP_MIN_VLOG_LEVEL=3 TF_CPP_MIN_LOG_LEVEL=0 python data/tf_vlog/record_tf_vlog.py \
        > /dev/null 2> data/tf_vlog/tf_min_vlog_level3.txt

(TF 2.21 reads the VLOG level from ``TF_CPP_MAX_VLOG_LEVEL``; the textbook's
``TF_CPP_MIN_VLOG_LEVEL`` no longer switches VLOG on, as the second file shows.)
"""
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()
g = tf1.Graph()
with g.as_default():
    a = tf1.placeholder(tf.float32, shape=[2], name="a")
    b = tf.constant([1.0, 2.0], name="b")
    k = tf.multiply(tf.constant(2.0, name="two"), tf.constant(5.0, name="five"), name="k")
    c = tf.multiply(a, b, name="c")
    c_scaled = tf.identity(c * k, name="c_scaled")
    d = tf.add(a, b, name="d")
    e = tf.multiply(d, 3.0, name="e")
config = tf1.ConfigProto(log_device_placement=True)
with tf1.Session(graph=g, config=config) as sess:
    print("TensorFlow", tf.__version__, "c_scaled =", sess.run(c_scaled, feed_dict={a: [3.0, 4.0]}))
