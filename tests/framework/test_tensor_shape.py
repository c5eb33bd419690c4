"""``TensorShape.accepts``: the Session's check of every fed array's shape, without building a
TensorShape of it. Its reference is ``is_compatible_with`` and the rule TF states for it: the
ranks agree and each known dimension equals the array's."""
from hypothesis import given, strategies as st

import aicslib as aics

dims = st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=4)
shapes = st.lists(st.integers(0, 4), max_size=4).map(tuple)


def rule(dimensions, shape):
    """TF's compatibility of a partially known shape with a fully known one, spelled out."""
    if dimensions is None:
        return True
    return len(dimensions) == len(shape) and all(d is None or d == s for d, s in zip(dimensions, shape))


@given(st.one_of(st.none(), dims), shapes)
def test_accepts_is_compatibility_with_a_known_shape(dimensions, shape):
    declared = aics.TensorShape(dimensions)
    assert declared.accepts(shape) == rule(dimensions, shape)
    assert declared.accepts(shape) == declared.is_compatible_with(aics.TensorShape(list(shape)))
