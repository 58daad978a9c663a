"""Review 59: eigengap_k counts a rule with no affinity to any other as its own cluster, and
refuses a max_k that is not a positive integer.

The Laplacian gave an isolated vertex eigenvalue 1 (not 0 as scipy's normalised Laplacian and
every connected component do), so two pairs of paraphrases beside an isolated rule gave k = 2
instead of 3; cluster_rules(..., scale=1e-3) with two exact duplicates pairs and one unrelated
rule merged that rule into a pair. max_k=0 or -1 raised numpy's ValueError ('argmax of an empty
sequence') and 2.5 a TypeError.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse.csgraph import laplacian

from trustlab.agents.learning import cluster_rules, eigengap_k
from trustlab.errors import InputError


def _pairs_and_isolated() -> np.ndarray:
    A = np.zeros((5, 5))
    A[0, 1] = A[1, 0] = A[2, 3] = A[3, 2] = 1.0  # rule 4 has no affinity to any other
    return A


def test_an_isolated_rule_is_its_own_cluster():
    A = _pairs_and_isolated()
    # oracle: scipy's normalised Laplacian has one zero eigenvalue per connected component
    eig = np.linalg.eigvalsh(laplacian(A, normed=True))
    assert int(np.sum(eig < 1e-12)) == 3
    assert eigengap_k(A) == 3


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")  # sklearn: it is not, by design
def test_cluster_rules_keeps_an_unrelated_rule_apart():
    E = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    out = cluster_rules(list("abcde"), embeddings=E, scale=1e-3, random_state=0)
    assert out.n_clusters == 3
    assert sorted(map(sorted, out.clusters)) == [["r0", "r1"], ["r2", "r3"], ["r4"]]


@pytest.mark.parametrize("max_k", [0, -1, 2.5, True, "2"])
def test_a_bad_max_k_is_refused(max_k):
    A = np.ones((4, 4)) - np.eye(4)
    with pytest.raises(InputError, match=r"^max_k: expected an integer >= 1"):
        eigengap_k(A, max_k=max_k)
    with pytest.raises(InputError, match=r"^max_k: expected an integer >= 1"):
        cluster_rules(list("abcd"), embeddings=np.eye(4), max_k=max_k)


def test_repeated_rule_ids_are_refused():
    # two rules both named 'a': clusters listed ['a', 'a'] and min_cosine compared the second
    # 'a' with itself (1.0, where the two rules' cosine is 0.99995)
    E = np.array([[1.0, 0], [1.0, 0.01], [0, 1.0], [0.01, 1.0]])
    rules = [("a", "x"), ("a", "y"), ("b", "z"), ("c", "w")]
    with pytest.raises(InputError, match=r"^rules: expected unique rule ids, got \['a'\]"):
        cluster_rules(rules, embeddings=E)
