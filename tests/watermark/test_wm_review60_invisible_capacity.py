"""invisible-watermark's dwtDct and dwtDctSvd carry one bit per 8 x 8 block of the image (a 4 x 4
block of the Haar-transformed U channel): 1,024 bits on 256 x 256. embed_invisible and
decode_invisible took longer payloads; the bits past the blocks were never embedded and decoded
as noise (5,000 bits on 256 x 256: dwtDctSvd bit accuracy 0.554, with numpy's 'Mean of empty
slice' warnings from the library). They are refused now, as blind-watermark's capacity already
was (review 60)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import decode_invisible, embed_invisible

_IMAGE = np.random.default_rng(0).integers(0, 256, (260, 255, 3)).astype(np.uint8)  # 32 x 31


@pytest.mark.parametrize("kind", ["dwtDctSvd", "dwtDct"])
def test_a_payload_past_the_blocks_is_refused(kind):
    bits = np.ones(993, dtype=bool)
    with pytest.raises(InputError, match=f"bits: expected at most 992 bits \\({kind}"):
        embed_invisible(kind, _IMAGE, 36.0, bits)
    with pytest.raises(InputError, match="n_bits: expected at most 992 bits"):
        decode_invisible(kind, _IMAGE, 36.0, 993)
    assert decode_invisible(kind, _IMAGE, 36.0, 992).shape == (992,)  # one bit a block: read
