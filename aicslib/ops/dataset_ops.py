"""Iterator ops of aics.data (TF's core/ops/dataset_ops.cc), for graph mode.

``OneShotIterator`` creates (once per session) a Python iterator over a
``Dataset`` registered with the graph (its inputs are the graph tensors the
dataset reads, a ``batch`` size computed in the graph, evaluated then); ``IteratorGetNext`` takes the next
element from it and raises ``OutOfRangeError`` at the end, as in TF 1.x::

    next_x, next_y = dataset.make_one_shot_iterator().get_next()

An initializable iterator is an ``IteratorV2`` resource, empty until a
``MakeIterator`` op (its ``initializer``) points it at a dataset, from the
start. ``MakeIterator``'s inputs are the graph tensors the dataset was built
from (placeholders fed at initialization), so one iterator can be re-initialized
with other data, or with another dataset of the same structure
(``Iterator.from_structure(...).make_initializer(dataset)``).

A *feedable* iterator (TF1's train/validation switch) is built from a string:
``IteratorToStringHandle`` names an iterator resource as a ``string`` tensor,
and ``IteratorFromStringHandleV2`` turns such a string (fed into a placeholder)
back into the iterator it names, so one ``get_next()`` reads from whichever
iterator the feed picks (``Iterator.from_string_handle(handle, types, shapes)``).

Kernels: aicslib/kernels/dataset_ops.py. The Python API: aicslib/data/.
"""
from ..framework.common_shapes import scalar_shape
from ..framework.gradient_registry import NotDifferentiable
from ..framework.op_def import register_op

register_op("OneShotIterator").input("captures: Tcaptures").output("handle: resource") \
    .attr("dataset_id: int").attr("Tcaptures: list(type) >= 0 = []") \
    .attr("output_types: list(type) >= 1").attr("output_shapes: list(shape) >= 1") \
    .attr("container: string = ''").attr("shared_name: string = ''") \
    .set_is_stateful().set_shape_fn(scalar_shape)
register_op("IteratorGetNext").input("iterator: resource").output("components: output_types") \
    .attr("output_types: list(type) >= 1").attr("output_shapes: list(shape) >= 1") \
    .set_is_stateful()

register_op("IteratorV2").output("handle: resource").attr("shared_name: string") \
    .attr("container: string") \
    .attr("output_types: list(type) >= 1").attr("output_shapes: list(shape) >= 1") \
    .set_is_stateful().set_shape_fn(scalar_shape)
register_op("MakeIterator").input("iterator: resource").input("captures: Tcaptures") \
    .attr("dataset_id: int").attr("Tcaptures: list(type) >= 0").set_is_stateful()

register_op("IteratorToStringHandle").input("resource_handle: resource").output("string_handle: string") \
    .set_is_stateful().set_shape_fn(scalar_shape)
register_op("IteratorFromStringHandleV2").input("string_handle: string").output("resource_handle: resource") \
    .attr("output_types: list(type) >= 0 = []").attr("output_shapes: list(shape) >= 0 = []") \
    .set_is_stateful().set_shape_fn(scalar_shape)

NotDifferentiable("IteratorToStringHandle")
NotDifferentiable("IteratorFromStringHandleV2")
NotDifferentiable("OneShotIterator")
NotDifferentiable("IteratorV2")
NotDifferentiable("MakeIterator")
NotDifferentiable("IteratorGetNext")

GRADIENT_CHECK_RECIPES = {}
