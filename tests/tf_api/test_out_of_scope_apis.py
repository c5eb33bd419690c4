"""What aicslib leaves out on purpose (ragged tensors, SavedModel, the profiler) stops a program
with a NotImplementedError that names the TF API it reached and says what to use instead."""
import pytest

import aicslib as aics
import aicslib.compat.v1 as tf1


@pytest.mark.parametrize("call, api, hint", [
    (lambda: aics.ragged.constant([[1], [2, 3]]), "tf.ragged.constant", "pad_sequences"),
    (lambda: aics.RaggedTensor.from_row_lengths([1, 2], [1, 1]), "tf.RaggedTensor.from_row_lengths",
     "pad_sequences"),
    (lambda: aics.saved_model.save(object(), "/tmp/x"), "tf.saved_model.save", "tf.train.Checkpoint"),
    (lambda: aics.saved_model.load("/tmp/x"), "tf.saved_model.load", "tf.train.Checkpoint"),
    (lambda: tf1.saved_model.loader.load(None, ["serve"], "/tmp/x"), "tf.saved_model.loader.load",
     "Saver"),
    (lambda: aics.profiler.experimental.start("logs"), "tf.profiler.experimental.start", "timeline"),
])
def test_out_of_scope_api_names_itself(call, api, hint):
    with pytest.raises(NotImplementedError, match=rf"^{api} is not implemented in aicslib: .*{hint}"):
        call()


def test_nothing_is_a_ragged_tensor():
    assert not isinstance(aics.constant([1, 2]), aics.RaggedTensor)
    assert "not implemented in aicslib" in repr(aics.saved_model)
