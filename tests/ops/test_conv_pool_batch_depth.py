"""Windows and strides over the batch or channel dimension (issue 29): refused as TF refuses them,
eagerly and when a Session runs the node, instead of being silently ignored.

TF 2.21's reference kernels (TF_ENABLE_ONEDNN_OPTS=0; graph construction accepts these attrs,
the kernel refuses): Conv2D and Conv2DBackpropInput raise UnimplementedError "Current
implementation does not yet support strides in the batch and depth dimensions.",
Conv2DBackpropFilter and the depthwise convolutions InvalidArgumentError with the same words;
dilations there: UnimplementedError (InvalidArgumentError for Conv2DBackpropFilter). Pooling:
UnimplementedError "Pooling is not yet supported on the batch dimension."; MaxPool pools
windows of channels ("depthwise max pooling") when the spatial window is 1x1, AvgPool
refuses ("Non-spatial pooling is not yet supported. Volunteers? :)"), and MaxPool's
gradients refuse any window or stride over channels.
"""
import numpy as np
import pytest

import aicslib as aics

Invalid, Unimplemented = aics.errors.InvalidArgumentError, aics.errors.UnimplementedError
STRIDES = "Current implementation does not yet support strides in the batch and depth dimensions."
DILATIONS = "Current implementation does not yet support dilations in the batch and depth dimensions."
BATCH_POOL = "Pooling is not yet supported on the batch dimension."
X = np.arange(2 * 4 * 4 * 4, dtype=np.float32).reshape(2, 4, 4, 4)
W = np.ones((2, 2, 4, 3), np.float32)
DW = np.ones((2, 2, 4, 1), np.float32)


def _convs(strides, dilations=(1, 1, 1, 1)):
    """(op, TF's error class for strides, for dilations, call)."""
    kw = dict(strides=list(strides), dilations=list(dilations), padding="VALID")
    return [
        ("Conv2D", Unimplemented, Unimplemented,
         lambda x: aics.raw_ops.Conv2D(input=x, filter=W, **kw)),
        ("Conv2DBackpropInput", Unimplemented, Unimplemented,
         lambda x: aics.raw_ops.Conv2DBackpropInput(input_sizes=[2, 4, 4, 4], filter=W,
                                                    out_backprop=x[:, :3, :3, :3], **kw)),
        ("Conv2DBackpropFilter", Invalid, Invalid,
         lambda x: aics.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=[2, 2, 4, 3],
                                                     out_backprop=x[:, :3, :3, :3], **kw)),
        ("DepthwiseConv2dNative", Invalid, Unimplemented,
         lambda x: aics.raw_ops.DepthwiseConv2dNative(input=x, filter=DW, **kw)),
        ("DepthwiseConv2dNativeBackpropInput", Invalid, Unimplemented,
         lambda x: aics.raw_ops.DepthwiseConv2dNativeBackpropInput(
             input_sizes=[2, 4, 4, 4], filter=DW, out_backprop=x[:, :3, :3, :], **kw)),
        ("DepthwiseConv2dNativeBackpropFilter", Invalid, Unimplemented,
         lambda x: aics.raw_ops.DepthwiseConv2dNativeBackpropFilter(
             input=x, filter_sizes=[2, 2, 4, 1], out_backprop=x[:, :3, :3, :], **kw)),
    ]


def _run_in_session(build):
    with aics.Graph().as_default():
        x = aics.placeholder(aics.float32, X.shape)
        out = build(x)                       # accepted when the graph is built, as in TF
        with aics.Session() as sess:
            return sess.run(out, {x: X})


@pytest.mark.parametrize("strides", [[2, 1, 1, 1], [1, 1, 1, 2]])
@pytest.mark.parametrize("index", range(6))
def test_conv_strides_over_batch_or_channels(strides, index):
    op, error, _, call = _convs(strides)[index]
    with pytest.raises(error, match=rf"^{STRIDES} \[Op:{op}\]$"):
        call(X)
    with pytest.raises(error, match=STRIDES):
        _run_in_session(call)


@pytest.mark.parametrize("dilations", [[2, 1, 1, 1], [1, 1, 1, 2]])
@pytest.mark.parametrize("index", range(6))
def test_conv_dilations_over_batch_or_channels(dilations, index):
    op, _, error, call = _convs([1, 1, 1, 1], dilations)[index]
    with pytest.raises(error, match=rf"^{DILATIONS} \[Op:{op}\]$"):
        call(X)


def test_nchw_channel_stride_and_the_python_api():
    with pytest.raises(Unimplemented, match=STRIDES):
        aics.nn.conv2d(X.transpose(0, 3, 1, 2), W, [1, 2, 1, 1], "VALID", data_format="NCHW")
    with pytest.raises(Invalid, match=STRIDES):
        aics.nn.depthwise_conv2d(X, DW, [2, 1, 1, 1], "VALID")
    with aics.Graph().as_default():
        y = aics.nn.conv2d(aics.constant(X), W, [2, 1, 1, 1], "VALID")
        assert y.shape.as_list() == [2, 3, 3, 3]       # TF's shape function: batch stride unread


def _pools(ksize, strides):
    kw = dict(ksize=list(ksize), strides=list(strides), padding="VALID")
    y = np.ones((2, 3, 3, 4), np.float32)
    return [
        ("MaxPool", lambda x: aics.raw_ops.MaxPool(input=x, **kw)),
        ("AvgPool", lambda x: aics.raw_ops.AvgPool(value=x, **kw)),
        ("MaxPoolGrad", lambda x: aics.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=y,
                                                           **kw)),
        ("AvgPoolGrad", lambda x: aics.raw_ops.AvgPoolGrad(orig_input_shape=[2, 4, 4, 4],
                                                           grad=y, **kw)),
        ("MaxPoolGradGrad", lambda x: aics.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y,
                                                                   grad=x, **kw)),
        ("MaxPoolWithArgmax", lambda x: aics.raw_ops.MaxPoolWithArgmax(input=x, **kw)[0]),
    ]


@pytest.mark.parametrize("ksize,strides", [([2, 2, 2, 1], [1, 1, 1, 1]),
                                           ([1, 2, 2, 1], [2, 1, 1, 1])])
@pytest.mark.parametrize("index", range(6))
def test_pooling_over_the_batch_is_refused(ksize, strides, index):
    op, call = _pools(ksize, strides)[index]
    with pytest.raises(Unimplemented, match=rf"^{BATCH_POOL} \[Op:{op}\]$"):
        call(X)
    with pytest.raises(Unimplemented, match=BATCH_POOL):
        _run_in_session(call)


def test_depthwise_max_pooling_is_tfs():
    # the maximum of each group of k channels, by loops
    for k in (2, 4):
        want = np.empty((2, 4, 4, 4 // k), np.float32)
        for g in range(4 // k):
            want[..., g] = np.max([X[..., g * k + j] for j in range(k)], axis=0)
        got = aics.nn.max_pool2d(X, [1, 1, 1, k], [1, 1, 1, k], "VALID").numpy()
        np.testing.assert_array_equal(got, want)
        with aics.Graph().as_default():
            x = aics.placeholder(aics.float32, X.shape)
            y = aics.nn.max_pool2d(x, [1, 1, 1, k], [1, 1, 1, k], "VALID")
            assert y.shape.as_list() == [2, 4, 4, 4 // k]
            with aics.Session() as sess:
                np.testing.assert_array_equal(sess.run(y, {x: X}), want)
    # TF 2.21: max_pool2d(arange(2*4*4*4).reshape(2, 4, 4, 4), [1,1,1,2], [1,1,1,2])[0, 0, 0]
    assert aics.nn.max_pool2d(X, [1, 1, 1, 2], [1, 1, 1, 2], "SAME").numpy()[0, 0, 0].tolist() \
        == [1.0, 3.0]


@pytest.mark.parametrize("ksize,strides,message", [
    ([1, 2, 2, 2], [1, 1, 1, 2], "MaxPooling supports exactly one of pooling across depth or "
                                 "pooling across width/height."),
    ([1, 1, 1, 2], [1, 1, 1, 1], "Depthwise max pooling requires the depth window to equal the "
                                 "depth stride"),
    ([1, 1, 1, 3], [1, 1, 1, 3], "Depthwise max pooling requires the depth window to evenly "
                                 "divide the input depth")])
def test_depthwise_max_pooling_limits(ksize, strides, message):
    with pytest.raises(Unimplemented, match=message):
        aics.nn.max_pool2d(X, ksize, strides, "VALID")


def test_channel_windows_elsewhere_are_refused():
    with pytest.raises(Unimplemented, match=r"Non-spatial pooling is not yet supported\. "
                                            r"Volunteers\? :\)"):
        aics.nn.avg_pool2d(X, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
    x = aics.constant(X)
    with aics.GradientTape() as tape:
        tape.watch(x)
        y = aics.nn.max_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
    with pytest.raises(Unimplemented, match="MaxPoolingGrad is not yet supported on the depth "
                                            "dimension."):
        tape.gradient(y, x)


def test_a_channel_stride_with_a_one_channel_window_changes_nothing():
    # TF 2.21 computes these (the depth stride is unread when the depth window is 1)
    for pool in (aics.nn.max_pool2d, aics.nn.avg_pool2d):
        np.testing.assert_array_equal(pool(X, 2, [1, 1, 1, 2], "VALID").numpy(),
                                      pool(X, 2, 1, "VALID").numpy())
