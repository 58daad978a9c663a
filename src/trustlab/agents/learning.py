"""Rule weights learned from labelled steps, and rules clustered by meaning.

Weights. In a rule circuit with hard evidence, ``P(safe) = sigmoid(sum_i w_i * d_i)`` where
``d_i = f_i(x, action) - f_i(x, no action)``. Fitting the weights to steps labelled safe or unsafe
is therefore an L2-regularised logistic regression without intercept on the features ``d``:

    minimise  0.5 * ||w||^2 + C * sum_n log(1 + exp(-y_n * w . d_n)),   y_n = +1 safe, -1 unsafe,

which is convex (scikit-learn's ``LogisticRegression(fit_intercept=False, C=C)`` solves the same
problem; trustlab solves it with L-BFGS and the exact gradient and is tested against it).

Clusters. Near-duplicate rules (ShieldAgent's redundancy pruning) are found by embedding the rule
descriptions, building an affinity graph on their cosine distances and cutting it with spectral clustering; the number
of clusters is chosen by the eigengap of the normalised Laplacian.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_positive,
    check_positive_int,
    check_random_state,
    repeated,
)
from trustlab._results import Result, internal_field
from trustlab.agents._names import nfc_keys
from trustlab.agents.evaluation import as_cases, check_case
from trustlab.agents.guardrail import not_instantiated
from trustlab.agents.policy import as_action
from trustlab.errors import BackendError, InputError

__all__ = [
    "learn_weights",
    "WeightFit",
    "fit_rule_weights",
    "RuleClusters",
    "cluster_rules",
    "eigengap_k",
]

_SAFE = {"safe": 1.0, "allow": 1.0, "allowed": 1.0, "unsafe": -1.0, "block": -1.0, "blocked": -1.0}


def _signs(labels: Any, n: int) -> np.ndarray:
    values = list(labels) if not isinstance(labels, np.ndarray) else labels.tolist()
    if len(values) != n:
        raise InputError.bad("labels", f"{n} labels (one per row)", f"{len(values)} labels")
    out = np.empty(n)
    for i, v in enumerate(values):
        if isinstance(v, str) and v.lower() in _SAFE:
            out[i] = _SAFE[v.lower()]
        elif isinstance(v, (bool, np.bool_)) or v in (0, 1):
            out[i] = 1.0 if bool(v) else -1.0
        elif v == -1:
            out[i] = -1.0
        else:
            raise InputError.bad(
                f"labels[{i}]", "'safe'/'unsafe', True/False (safe) or 1/0 or 1/-1", v
            )
    return out


def learn_weights(
    features: Any,
    labels: Any,
    *,
    C: float = 1.0,
    sample_weight: Any = None,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Rule weights from labelled steps: logistic regression without intercept, L2 penalty.

    Parameters
    ----------
    features : array of shape (n_steps, n_rules)
        ``f_i(x, action) - f_i(x, no action)`` per step and rule (see
        :meth:`trustlab.agents.Guardrail.features`).
    labels : sequence
        Per step: "safe"/"unsafe", True/False (True = safe), 1/0 or 1/-1.
    C : float
        Inverse regularisation strength (scikit-learn's ``C``).

    >>> import numpy as np
    >>> X = np.array([[1.0], [1.0], [-1.0], [1.0]])
    >>> learn_weights(X, ["safe", "safe", "unsafe", "unsafe"], C=10.0).round(3)
    array([0.973])
    """
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    X = as_float_array(features, "features", ndim=2)
    y = _signs(labels, X.shape[0])
    C = check_positive(C, "C")
    if sample_weight is None:
        sw = np.ones(X.shape[0])
    else:
        sw = as_float_array(sample_weight, "sample_weight", ndim=1)
        if sw.shape[0] != X.shape[0] or np.any(sw < 0):
            raise InputError.bad(
                "sample_weight", f"{X.shape[0]} non-negative weights", sample_weight
            )
    Xy = X * y[:, None]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = Xy @ w
        value = 0.5 * w @ w - C * np.sum(sw * log_expit(z))
        grad = w - C * (Xy.T @ (sw * expit(-z)))
        return float(value), grad

    w0 = np.zeros(X.shape[1])
    res = minimize(
        loss,
        w0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 30},
    )
    if not np.all(np.isfinite(res.x)):
        raise BackendError(f"weight learning diverged: {res.message}")
    return res.x


@dataclass(frozen=True)
class WeightFit(Result):
    """Weights learned for a guardrail's rules from labelled steps.

    ``accuracy`` is the share of steps the learned weights decide as labelled at ``epsilon = 0``
    (allowed iff ``p_safe >= 1/2``, a compliant step's tie included), as the guardrail would;
    a step whose action no rule covers counts as the guardrail's ``unknown_action`` decides it.
    The features, ``accuracy`` and ``log_loss`` read a probability on the proposed step (in
    ``evidence`` or from a checker) as true from 0.5, where the guardrail's check sums over it:
    with one rule ``pay IMPLIES ok`` of learned weight 0.40, ``ok = 0.6`` counts as a compliant
    step (allowed) here, and the check blocks it (``p_safe`` 0.465).
    ``log_loss`` is the mean of ``-log p`` (``p``: the learned ``p_safe`` of the step's label)
    over the steps a rule covers; the ``n_uncovered`` others have no ``p_safe`` and are left out
    (``None`` when no step is covered).
    """

    weights: Mapping[str, float]
    C: float
    n_steps: int
    n_safe: int
    accuracy: float
    log_loss: float | None
    unused_rules: tuple[str, ...]
    n_uncovered: int
    features: np.ndarray = internal_field()

    def summary(self) -> str:
        top = sorted(self.weights.items(), key=lambda kv: -abs(kv[1]))[:5]
        loss = "no log-loss" if self.log_loss is None else f"log-loss {self.log_loss:.3f}"
        if self.n_uncovered:
            loss += (
                f" ({self.n_uncovered} step(s) whose action no rule covers left out: no p_safe, "
                "unknown_action decides them)"
            )
        lines = [
            f"rule weights from {self.n_steps} labelled steps ({self.n_safe} safe), C={self.C:g}: "
            f"training accuracy {self.accuracy:.3f}, {loss}",
            *(f"  {rid}: {w:+.3f}" for rid, w in top),
        ]
        if self.unused_rules:
            lines.append(
                f"  {len(self.unused_rules)} rule(s) never decided a step; their weights are kept: "
                + ", ".join(self.unused_rules[:8])
            )
        return "\n".join(lines)


def fit_rule_weights(
    guardrail: Any,
    cases: Sequence[Any],
    labels: Sequence[Any] | None = None,
    *,
    C: float = 1.0,
) -> WeightFit:
    """Learn a guardrail's rule weights from labelled cases.

    Parameters
    ----------
    guardrail : Guardrail
    cases : sequence
        Each a mapping ``{"trajectory", "action", "label", "evidence" (optional)}`` or an object
        with those attributes (e.g. :class:`trustlab.agents.GuardCase`).
    labels : sequence, optional
        Overrides the cases' labels.

    Rules whose feature is 0 on every case (never decided any step) keep their current weight and
    are listed in ``unused_rules``; use ``guardrail.with_weights(fit.weights)`` to apply the rest.
    """
    from scipy.special import log_expit

    cases = as_cases(cases)
    if len(cases) == 0:
        raise InputError.bad("cases", "at least one labelled case", cases)
    rows, found, fixed = [], [], []
    for i, case in enumerate(cases):
        get = case.get if isinstance(case, Mapping) else lambda k, d=None, c=case: getattr(c, k, d)
        if get("action") is None:
            raise InputError.bad(f"cases[{i}]", "a case with an 'action'", case)
        check_case(case, i)
        evidence = get("evidence") or get("oracle")
        try:
            matched = guardrail.matched_actions(get("trajectory"), get("action"), evidence=evidence)
            row = guardrail.features(get("trajectory"), get("action"), evidence=evidence)
        except InputError as err:  # which of many cases: the message alone did not say
            raise InputError(f"cases[{i}]: {err}", argument="cases") from None
        # an action no policy action covers has no features; the guardrail decides it by its
        # unknown_action ("error": it cannot check it, so it cannot be learned from)
        if not matched:
            if guardrail.unknown_action == "error":
                expected = (
                    f"an action the policy covers {sorted(guardrail.policy.actions)} (or a "
                    "policy with unknown_action 'allow' or 'block')"
                )
                act = as_action(get("action"))
                # evidence names in NFC, as the guardrail read them (checked just above)
                why = not_instantiated(guardrail.policy, act, nfc_keys(evidence or {}))
                if why:  # named like a policy action: 'got pay' alone contradicted the list
                    raise InputError(
                        f"cases[{i}].action: expected {expected}, got {act.name!r}, but {why}",
                        argument="cases",
                    )
                raise InputError.bad(f"cases[{i}].action", expected, get("action"))
            fixed.append(guardrail.unknown_action == "allow")
        else:
            fixed.append(None)
        rows.append(row)
        found.append(get("label"))
    X = np.vstack(rows)
    y = _signs(labels if labels is not None else found, X.shape[0])
    used = np.any(X != 0, axis=0)
    ids = list(guardrail.weights)
    w = np.zeros(X.shape[1])
    if used.any():
        w[used] = learn_weights(X[:, used], y, C=C)
    score = X @ w  # log-odds of safe: p_safe = sigmoid(score)
    z = score * y
    allowed = np.array([score[k] >= 0 if f is None else f for k, f in enumerate(fixed)])
    covered = np.array([f is None for f in fixed])  # the others have no p_safe (no log 2 for them)
    weights = {rid: float(w[j]) for j, rid in enumerate(ids) if used[j]}
    return WeightFit(
        weights=weights,
        C=float(C),
        n_steps=int(X.shape[0]),
        n_safe=int(np.sum(y > 0)),
        # allowed iff p_safe >= 1/2, as the guardrail decides at epsilon 0: a compliant step
        # (every feature 0, p_safe exactly 1/2) is allowed, so a tie counts as "safe"
        # (an action no rule covers: as the guardrail's unknown_action decides it)
        accuracy=float(np.mean(allowed == (y > 0))),
        log_loss=float(-np.mean(log_expit(z[covered]))) if covered.any() else None,
        unused_rules=tuple(rid for j, rid in enumerate(ids) if not used[j]),
        n_uncovered=int(np.sum(~covered)),
        features=X,
    )


# --------------------------------------------------------------------------- clustering


def eigengap_k(affinity: Any, *, max_k: int | None = None) -> int:
    """The number of clusters by the largest gap in the normalised Laplacian's spectrum.

    The eigenvalues ``0 = l_1 <= l_2 <= ...`` of ``I - D^-1/2 A D^-1/2``: k = argmax_k
    (l_{k+1} - l_k) over k = 1 .. max_k (default n - 1). A rule with no affinity to any other
    (an isolated vertex, its own connected component) has a zero row in the Laplacian, as in
    ``scipy.sparse.csgraph.laplacian(A, normed=True)``, so each connected component gives one
    zero eigenvalue.
    """
    A = as_float_array(affinity, "affinity", ndim=2)
    n = A.shape[0]
    if A.shape != (n, n) or not np.allclose(A, A.T) or np.any(A < 0):
        raise InputError.bad("affinity", "a symmetric non-negative square matrix", A)
    if max_k is not None:
        max_k = check_positive_int(max_k, "max_k")
    if n == 1:
        return 1
    d = A.sum(axis=1)
    inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    # an isolated vertex's row is 0 (eigenvalue 0): with 1 on its diagonal it counted as no
    # component, and two pairs beside an isolated rule gave k = 2 instead of 3
    L = np.diag((d > 0).astype(float)) - inv[:, None] * A * inv[None, :]
    eig = np.sort(np.linalg.eigvalsh(L))
    top = n - 1 if max_k is None else min(max_k, n - 1)
    gaps = np.diff(eig[: top + 1])
    return int(np.argmax(gaps) + 1)


@dataclass(frozen=True)
class RuleClusters(Result):
    """Rules grouped by the meaning of their descriptions.

    Every rule is put in some cluster: a rule with no paraphrase often joins one (three unrelated
    rules make one cluster) and only sometimes stands alone. So a cluster is a candidate group of
    near-duplicates, not a verdict; ``min_cosine`` (the smallest cosine between two of its rules'
    embeddings) tells a group of paraphrases from unrelated rules put together.
    """

    rule_ids: tuple[str, ...]
    labels: np.ndarray
    n_clusters: int
    descriptions: tuple[str, ...] = internal_field()
    affinity: np.ndarray = internal_field()
    cosine: np.ndarray | None = internal_field(default=None)

    _dict_extras = ("clusters", "min_cosine")

    @property
    def clusters(self) -> list[list[str]]:
        """Rule ids per cluster (largest first)."""
        groups: dict[int, list[str]] = {}
        for rid, lab in zip(self.rule_ids, self.labels, strict=True):
            groups.setdefault(int(lab), []).append(rid)
        return sorted(groups.values(), key=len, reverse=True)

    @property
    def min_cosine(self) -> list[float | None]:
        """Per cluster (in the order of :attr:`clusters`), the smallest cosine between two of its
        rules' embeddings (None for a single rule, or without the cosines)."""
        index = {rid: i for i, rid in enumerate(self.rule_ids)}
        out: list[float | None] = []
        for group in self.clusters:
            if len(group) < 2 or self.cosine is None:
                out.append(None)
                continue
            rows = [index[r] for r in group]
            block = self.cosine[np.ix_(rows, rows)]
            out.append(float(block[~np.eye(len(rows), dtype=bool)].min()))
        return out

    def summary(self) -> str:
        lines = [f"{len(self.rule_ids)} rules in {self.n_clusters} clusters"]
        for group, low in zip(self.clusters, self.min_cosine, strict=True):
            if len(group) > 1:
                closeness = "" if low is None else f" (smallest cosine {low:.2f})"
                lines.append(f"  cluster{closeness}: " + ", ".join(group))
        if self.n_clusters < len(self.rule_ids):
            lines.append(
                "  every rule joins a cluster: merge only rules that say the same (a low "
                "smallest cosine means unrelated rules)"
            )
        return "\n".join(lines)


def cluster_rules(
    rules: Any,
    *,
    n_clusters: int | None = None,
    embeddings: Any = None,
    embedder: Any = None,
    max_k: int | None = None,
    scale: float = 0.1,
    random_state: Any = None,
) -> RuleClusters:
    """Cluster rules by their descriptions (sentence embeddings, spectral clustering).

    The affinity of two rules is ``exp(-(1 - cos) / scale)`` of their embeddings' cosine (no
    self-loops); the number of clusters is the eigengap's unless ``n_clusters`` is given.

    Parameters
    ----------
    rules : PolicyModel, mapping, or sequence of (rule_id, description) pairs / strings
    n_clusters : int, optional
        Chosen by the eigengap when omitted.
    embeddings : array (n_rules, dim), optional
        Precomputed embeddings; otherwise the descriptions are embedded with ``embedder`` (default:
        the offline all-MiniLM-L6-v2 of ``trustlab[embed]``).
    """
    from sklearn.cluster import SpectralClustering

    ids, texts = _rule_texts(rules)
    if len(ids) < 2:
        raise InputError.bad("rules", "at least two rules", len(ids))
    # every argument is checked before the embedding, which takes seconds
    if n_clusters is not None and (
        isinstance(n_clusters, bool)
        or not isinstance(n_clusters, (int, np.integer))
        or not 1 <= n_clusters <= len(ids)
    ):
        raise InputError.bad("n_clusters", f"an integer in [1, {len(ids)}]", n_clusters)
    scale = check_positive(scale, "scale")
    if max_k is not None:
        max_k = check_positive_int(max_k, "max_k")
    rng = check_random_state(random_state)
    if embeddings is None:
        from trustlab.llm.embeddings import embed_texts

        embeddings = embed_texts(texts, embedder)
    E = as_float_array(embeddings, "embeddings", ndim=2)
    if E.shape[0] != len(ids):
        raise InputError.bad("embeddings", f"{len(ids)} rows (one per rule)", E)
    peaks = np.abs(E).max(axis=1, keepdims=True)
    if np.any(peaks == 0):
        raise InputError.bad("embeddings", "non-zero rows", E)
    with np.errstate(over="ignore", under="ignore"):  # such rows are redone below
        norms = np.linalg.norm(E, axis=1, keepdims=True)
    # as in embed_texts: a row whose squares overflow (norm inf) or underflow (norm 0 or
    # inexact) is scaled by its largest entry first; other rows are divided as before
    extreme = (norms > 1e150) | (norms < 1e-150)
    if extreme.any():
        E = np.where(extreme, E / peaks, E)
        norms = np.where(extreme, np.linalg.norm(E, axis=1, keepdims=True), norms)
    U = E / norms
    cosine = np.clip(U @ U.T, -1.0, 1.0)
    # a sharp kernel on the cosine distance: sentence embeddings of unrelated rules still have
    # cosines of 0.2-0.5, which a plain cosine graph would join into one cluster
    A = np.exp(-(1.0 - cosine) / scale)
    A = (A + A.T) / 2.0
    np.fill_diagonal(A, 0.0)
    if n_clusters is None:
        k = eigengap_k(A, max_k=max_k)
    else:
        k = int(n_clusters)
    if k == 1:
        labels = np.zeros(len(ids), dtype=int)
    else:
        model = SpectralClustering(
            n_clusters=k,
            affinity="precomputed",
            random_state=int(rng.integers(2**31 - 1)),
            assign_labels="cluster_qr",
        )
        labels = model.fit_predict(A)
    return RuleClusters(
        rule_ids=tuple(ids),
        labels=np.asarray(labels, dtype=int),
        n_clusters=int(k),
        descriptions=tuple(texts),
        affinity=A,
        cosine=cosine,
    )


def _rule_texts(rules: Any) -> tuple[list[str], list[str]]:
    from trustlab.agents.policy import PolicyModel, load_policy

    if isinstance(rules, (PolicyModel, Mapping)):
        policy = load_policy(rules)
        return (
            [r.rule_id for r in policy.rule_list],
            [r.description or r.logic for r in policy.rule_list],
        )
    if isinstance(rules, (list, tuple)):
        ids, texts = [], []
        for i, item in enumerate(rules):
            if isinstance(item, str):
                ids.append(f"r{i}")
                texts.append(item)
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                ids.append(str(item[0]))
                texts.append(str(item[1]))
            else:
                raise InputError.bad(
                    f"rules[{i}]", "a description or a (rule_id, description) pair", item
                )
        twice = repeated(ids)
        if twice:  # clusters and min_cosine look rules up by id: a repeated one was mixed up
            raise InputError(
                f"rules: expected unique rule ids, got {twice} more than once", argument="rules"
            )
        return ids, texts
    raise InputError.bad("rules", "a policy or a list of rule descriptions", rules)
