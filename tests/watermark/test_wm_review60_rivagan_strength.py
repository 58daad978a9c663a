"""RivaGAN embeds at no strength, yet synthesize(strengths={"rivaGan": (2.0, 50.0)}) took the
values and recorded them as the images' strengths (2, 50, 50, 50 for seed 0), so that
evaluate_predictions would report 'rivaGan strength 2' and 'rivaGan strength 50' detection AUROCs
of one and the same embedding (review 60). Anything but its recorded 1.0 is refused now."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.mark.parametrize("value", [(2.0, 50.0), 2.0, (1.0, 3.0)])
def test_rivagan_takes_no_strength(value):
    with pytest.raises(InputError, match=r"strengths\['rivaGan'\]: expected 1.0"):
        synthesize(1, kinds=("rivaGan",), strengths={"rivaGan": value})


def test_its_recorded_strength_is_still_taken():
    data = synthesize(1, random_state=0, kinds=("logo",), strengths={"rivaGan": 1.0})
    assert data.n_images == 1
