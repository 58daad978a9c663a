"""Review 64 (sister of embed_texts' fix): cluster_rules normalised given embeddings with
np.linalg.norm, whose squares overflow for rows near 1e200 (norm inf: the rows became zeros, the
two clusters came out as [a, c, d] and [b]) and underflow near 1e-200 (norm 0: refused as
"non-zero rows"). Such rows are now scaled by their largest entry first."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.agents.learning import cluster_rules
from trustlab.errors import InputError

RULES = [("a", "pay"), ("b", "refund"), ("c", "ship"), ("d", "track")]
E = np.array([[1, 0.1, 0], [1, 0.12, 0], [0, 0.1, 1], [0, 0.12, 1]], float)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_embeddings_at_extreme_scales_cluster_as_at_scale_one(scale):
    base = cluster_rules(RULES, n_clusters=2, embeddings=E, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        found = cluster_rules(RULES, n_clusters=2, embeddings=E * scale, random_state=0)
    assert found.to_dict()["clusters"] == base.to_dict()["clusters"] == [["a", "b"], ["c", "d"]]
    # cosines of the rescaled rows: a few roundings apart from those of the plain ones
    np.testing.assert_allclose(found.cosine, base.cosine, rtol=1e-12)


def test_a_zero_row_is_still_refused():
    with pytest.raises(InputError, match="embeddings: expected non-zero rows"):
        cluster_rules(RULES, embeddings=np.vstack([E[:3], np.zeros(3)]))
