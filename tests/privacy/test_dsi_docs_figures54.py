"""docs/privacy-dsi.md, API: the authors' RDP conversion overstates epsilon; "for s = 4.90056 at
delta = 1e-5 it claims 1.0, the exact value is 0.7416". Both are closed-form computations
(review 54 measured 0.9999990 and 0.7416366), so the page's rounding is the tolerance."""

from __future__ import annotations

import pytest

from trustlab.privacy import dsi_epsilon


def test_the_paper_conversion_claims_one_where_the_exact_epsilon_is_0_7416():
    assert dsi_epsilon(4.90056, 1e-5, accountant="paper") == pytest.approx(1.0, abs=5e-5)
    assert dsi_epsilon(4.90056, 1e-5) == pytest.approx(0.7416, abs=5e-5)
