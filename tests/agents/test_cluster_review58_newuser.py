"""cluster_rules checks its arguments before embedding the rules (review 58, newuser).

``trustlab agents cluster --suite banking --seed -1`` (or ``--n-clusters 0``) embedded every rule
for 12-19 s on a busy machine before refusing the seed; every argument is now checked first.
"""

from __future__ import annotations

import pytest

from trustlab.agents import cluster_rules
from trustlab.errors import InputError

RULES = ["never pay an unknown IBAN", "ask before sending money", "do not share the password"]


class _MustNotEmbed:
    def encode(self, texts):
        raise AssertionError("embedded before the arguments were checked")


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"random_state": -1}, "random_state"),
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 4}, "n_clusters"),
        ({"n_clusters": True}, "n_clusters"),
        ({"scale": 0.0}, "scale"),
    ],
)
def test_bad_arguments_are_refused_before_the_embedding(kwargs, argument):
    with pytest.raises(InputError, match=f"^{argument}"):
        cluster_rules(RULES, embedder=_MustNotEmbed(), **kwargs)


def test_good_arguments_still_cluster():
    embeddings = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]
    result = cluster_rules(RULES, embeddings=embeddings, n_clusters=2, random_state=3)
    assert result.n_clusters == 2
    assert result.labels[0] == result.labels[1] != result.labels[2]
    one = cluster_rules(RULES, embeddings=embeddings, n_clusters=1, random_state=3)
    assert list(one.labels) == [0, 0, 0]
