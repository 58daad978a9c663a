"""Weight learning (check B2) and rule clustering."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score

from trustlab.agents.learning import cluster_rules, eigengap_k, fit_rule_weights, learn_weights
from trustlab.errors import InputError


def _synthetic(n, weights, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(n, len(weights))).astype(float)
    p = 1.0 / (1.0 + np.exp(-(X @ weights)))
    y = rng.random(n) < p
    return X, y


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_b2_weights_equal_sklearn_without_intercept(seed):
    rng = np.random.default_rng(seed)
    true = rng.uniform(-2, 2, size=6)
    X, y = _synthetic(3000, true, seed + 100)
    for C in (0.05, 1.0, 20.0):
        ours = learn_weights(X, y, C=C)
        ref = LogisticRegression(fit_intercept=False, C=C, tol=1e-12, max_iter=10_000)
        ref.fit(X, y)
        np.testing.assert_allclose(ours, ref.coef_[0], atol=1e-4)


def test_b2_recovers_known_weights_at_20k():
    true = np.array([2.5, -1.0, 0.3, 1.7, -2.2, 0.0])
    X, y = _synthetic(20_000, true, 7)
    ours = learn_weights(X, y, C=1.0)
    assert np.max(np.abs(ours - true)) < 0.1


def test_an_intercept_would_be_wrong():
    # the model has no intercept: labels with a constant log-odds offset are not fitted by one
    X = np.zeros((50, 2))
    y = np.array([True] * 40 + [False] * 10)
    np.testing.assert_allclose(learn_weights(X, y), 0.0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.01, 50.0))
def test_weights_agree_with_sklearn_property(seed, C):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = rng.random(60) < 0.5
    y[:2] = [True, False]
    ref = LogisticRegression(fit_intercept=False, C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(learn_weights(X, y, C=C), ref.coef_[0], atol=1e-4)


def test_learning_bad_inputs_are_named():
    X = np.ones((3, 2))
    with pytest.raises(InputError, match="labels"):
        learn_weights(X, ["safe", "unsafe"])
    with pytest.raises(InputError, match=r"labels\[1\]"):
        learn_weights(X, ["safe", "maybe", "unsafe"])
    with pytest.raises(InputError, match="C"):
        learn_weights(X, ["safe", "unsafe", "safe"], C=0.0)
    with pytest.raises(InputError, match="features"):
        learn_weights(np.ones(3), ["safe", "unsafe", "safe"])


POLICY = {
    "actions": {"pay": {"soft_rule_ids": ["confirmed", "known_payee", "small"]}},
    "rule_list": [
        {
            "rule_id": "confirmed",
            "predicates": [["pay", "", "", "action"], ["ok", "", "", "condition"]],
            "logic": "ALWAYS(pay IMPLIES ok)",
            "description": "pay only after the user confirmed",
        },
        {
            "rule_id": "known_payee",
            "predicates": [["pay", "", "", "action"], ["known", "", "", "condition"]],
            "logic": "pay IMPLIES known",
            "description": "pay only known payees",
        },
        {
            "rule_id": "small",
            "predicates": [["pay", "", "", "action"], ["large", "", "", "condition"]],
            "logic": "NOT (pay AND large)",
            "description": "no large payments",
        },
    ],
}


def test_fit_rule_weights_recovers_the_weights_that_generated_the_labels():
    from trustlab.agents import Guardrail

    true = {"confirmed": 2.0, "known_payee": 1.0, "small": 0.5}
    truth = Guardrail({**POLICY, "weights": true})
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(6000):
        ev = {k: bool(rng.random() < 0.5) for k in ("ok", "known", "large")}
        p = truth.check([], "pay", evidence=ev).p_safe
        # features are consistent with p_safe: sigmoid(w . d) is the guardrail's probability
        cases.append({"trajectory": [], "action": "pay", "evidence": ev, "label": rng.random() < p})
    d = truth.features([], "pay", evidence={"ok": False, "known": True, "large": True})
    np.testing.assert_array_equal(d, [-1.0, 0.0, -1.0])
    fit = fit_rule_weights(Guardrail(POLICY), cases, C=100.0)
    for rid, w in true.items():
        assert abs(fit.weights[rid] - w) < 0.2, (rid, fit.weights)
    learned = Guardrail(POLICY).with_weights(fit.weights)
    ev = {"ok": True, "known": False, "large": True}
    expected = 1.0 / (1.0 + np.exp(fit.weights["known_payee"] + fit.weights["small"]))
    assert learned.check([], "pay", evidence=ev).p_safe == pytest.approx(expected, abs=1e-12)
    assert "labelled steps" in fit.summary()


def test_fit_accuracy_counts_a_tie_as_allowed_like_the_guardrail():
    # a compliant safe step has features 0: p_safe is exactly 1/2, which the guardrail allows at
    # epsilon 0; the fit counted it as a mistake (training accuracy 0.5 here, 0.814 on banking)
    from trustlab.agents import Guardrail

    guard = Guardrail(POLICY)
    cases = [
        {
            "trajectory": [],
            "action": "pay",
            "evidence": {"ok": ok, "known": True, "large": False},
            "label": label,
        }
        for ok, label in [(True, "safe"), (True, "safe"), (False, "unsafe"), (False, "unsafe")]
    ]
    fit = fit_rule_weights(guard, cases)
    learned = guard.with_weights(fit.weights)
    decided = [
        learned.check([], c["action"], evidence=c["evidence"]).action_allowed
        == (c["label"] == "safe")
        for c in cases
    ]
    assert fit.accuracy == np.mean(decided) == 1.0
    assert "training accuracy 1.000" in fit.summary()


def test_eigengap_finds_planted_blocks():
    rng = np.random.default_rng(0)
    for k in (2, 3, 4):
        sizes = rng.integers(2, 5, size=k)
        labels = np.repeat(np.arange(k), sizes)
        A = np.where(labels[:, None] == labels[None, :], 0.9, 0.05)
        A += rng.uniform(0, 0.02, size=A.shape)
        A = (A + A.T) / 2
        assert eigengap_k(A) == k


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")
def test_cluster_rules_groups_planted_near_duplicates():
    rng = np.random.default_rng(1)
    centres = np.linalg.qr(rng.normal(size=(16, 3)))[0].T  # three unrelated meanings
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    E = centres[labels] + 0.05 * rng.normal(size=(8, 16))
    rules = [(f"r{i}", f"rule {i}") for i in range(8)]
    out = cluster_rules(rules, embeddings=E, random_state=0)
    assert out.n_clusters == 3
    assert adjusted_rand_score(labels, out.labels) == 1.0
    assert sorted(map(len, out.clusters)) == [2, 3, 3]
    with pytest.raises(InputError, match="embeddings"):
        cluster_rules(rules, embeddings=E[:5])
    with pytest.raises(InputError, match="n_clusters"):
        cluster_rules(rules, embeddings=E, n_clusters=9)


def test_cluster_summary_does_not_call_unrelated_rules_near_duplicates():
    # the eigengap does not set unrelated rules apart: three (cosine 0) form one cluster, which
    # the summary called "near-duplicates"; it now shows how close the cluster's rules are
    out = cluster_rules([f"rule {i}" for i in range(3)], embeddings=np.eye(3), random_state=0)
    assert out.clusters == [["r0", "r1", "r2"]]
    assert out.min_cosine == [0.0] and out.to_dict()["min_cosine"] == [0.0]
    assert "near-duplicates" not in out.summary()
    assert "cluster (smallest cosine 0.00): r0, r1, r2" in out.summary()
    E = np.array([[2.0, 0.0], [0.8, 0.6], [1.0, 0.0], [0.0, 3.0]])  # unit rows after scaling
    out = cluster_rules(["a", "b", "c", "d"], embeddings=E, n_clusters=2, random_state=0)
    U = E / np.linalg.norm(E, axis=1, keepdims=True)
    for group, low in zip(out.clusters, out.min_cosine, strict=True):
        rows = [int(r[1:]) for r in group]
        pairs = [U[i] @ U[j] for i in rows for j in rows if i < j]
        assert low == (pytest.approx(min(pairs)) if pairs else None)


# Two sets of rules written as paraphrase groups. The kernel's scale (0.1) was chosen on the first
# set only; the second is held out.
TUNED = [
    ["Never send money to a recipient the user did not name.",
     "Do not transfer funds to an account that the user has not mentioned.",
     "Money may only be sent to payees named by the user."],
    ["Do not change the account password unless the user asks for it.",
     "Only update the password when the user explicitly requests a password change."],
    ["Never forward emails to external addresses.",
     "Do not send the user's emails on to addresses outside the company.",
     "Emails must not be forwarded to outside recipients."],
]  # fmt: skip
HELD_OUT = [
    ["Do not book a hotel the user did not ask for.",
     "Hotel reservations require an explicit request from the user.",
     "Only reserve hotel rooms when the user asked for a booking."],
    ["Never delete files from the shared drive.",
     "Files in the cloud drive must not be removed."],
    ["Do not invite new members to the Slack workspace without approval.",
     "Adding people to the Slack workspace needs the user's approval.",
     "Never add users to Slack unless the user approved it."],
    ["Do not post messages to public web pages.",
     "Publishing content on external websites is forbidden."],
]  # fmt: skip


@pytest.mark.parametrize("groups", [TUNED, HELD_OUT], ids=["tuned", "held-out"])
def test_cluster_rules_with_the_offline_embedder_finds_paraphrase_groups(groups):
    rules = [(f"g{g}.{i}", text) for g, group in enumerate(groups) for i, text in enumerate(group)]
    truth = [g for g, group in enumerate(groups) for _ in group]
    out = cluster_rules(rules, random_state=0)
    assert out.n_clusters == len(groups)
    assert adjusted_rand_score(truth, out.labels) == 1.0
