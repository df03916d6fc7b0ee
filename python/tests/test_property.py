"""Property: lossless encode then decode gives the array back, for any image."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import wavelane


@st.composite
def images(draw):
    dtype = draw(st.sampled_from([np.uint8, np.uint16]))
    height = draw(st.integers(1, 67))
    width = draw(st.integers(1, 67))
    components = draw(st.sampled_from([0, 1, 2, 3, 4]))
    shape = (height, width) if components == 0 else (height, width, components)
    # Mostly full-range noise, sometimes a few distinct values (runs,
    # constant planes), sometimes the extremes of the range.
    top = int(np.iinfo(dtype).max)
    elements = draw(
        st.sampled_from(
            [
                st.integers(0, top),
                st.sampled_from([0, 1, top // 2]),
                st.sampled_from([0, top]),
            ]
        )
    )
    return draw(arrays(dtype, shape, elements=elements))


@settings(max_examples=150, deadline=None)
@given(images(), st.sampled_from([None, 0, 1, 3]))
def test_lossless_round_trip_is_exact(image, levels):
    height, width = image.shape[:2]
    # Each level needs the image to stay at least one sample on a side.
    if levels is not None and min(height, width) < 2**levels:
        levels = None
    data = wavelane.encode(image, lossless=True, levels=levels, backend="cpu")
    out = wavelane.decode(data, backend="cpu")
    assert out.dtype == image.dtype
    assert np.array_equal(out, image.reshape(out.shape))
    assert out.size == image.size
