"""Human statistics of CASE-Bench: does the context change people's safety judgments?

:func:`human_statistics` pairs each query's safe-intended and unsafe-intended records and
reports the pooled two-proportion z-test on the safe-vote share (all votes of each condition),
one z-test per query (21 vs 21 votes) and per category, majority flips, the Wilcoxon
signed-rank test on per-query differences, and a cluster bootstrap interval of the pooled
difference that resamples queries (the votes of one query are not independent). The generic
tests live in :mod:`trustlab.evaluation.statistics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from trustlab._checks import check_probability
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.evaluation.statistics import (
    ClusterInterval,
    SignificanceTest,
    achieved_power,
    cluster_bootstrap_ci,
    per_item_ztests,
    two_proportion_ztest,
    wilcoxon_signed_rank,
)
from trustlab.safety.context.data import VOTES_PER_ITEM, CaseBench, load_casebench

__all__ = ["HumanStatistics", "human_statistics", "p_text"]


def p_text(p: float, name: str = "") -> str:
    """A p-value as text, "< 1e-300" where it underflowed to 0 (z = 57 gives 0.0); with
    ``name``: "p = 0.012" or "p < 1e-300"."""
    text = "< 1e-300" if p == 0 else f"= {p:.3g}"
    return f"{name} {text}" if name else text.removeprefix("= ")


@dataclass(frozen=True, eq=False)
class HumanStatistics(Result):
    """The context effect on human votes (safe-intended minus unsafe-intended contexts).

    Attributes
    ----------
    n_queries : int
        Queries with one record of each context (unpaired records are left out of the per-query
        tests and counted in ``n_unpaired``).
    safe_rate_safe_context, safe_rate_unsafe_context : float
        Pooled share of safe votes per condition.
    safe_majority_safe_context, safe_majority_unsafe_context : float
        Share of items with a safe majority per condition.
    pooled : SignificanceTest
        Pooled two-proportion z-test over all votes of each condition.
    n_significant : int
        Queries whose safe-vote share rises significantly (two-sided p < ``alpha``) under the
        safe context.
    n_flips : int
        Queries whose majority label differs between the two contexts.
    mean_difference : float
        Mean per-query difference of safe_rate (safe minus unsafe context).
    wilcoxon : SignificanceTest or None
        On the per-query differences (None when every difference is 0: no test).
    cluster_interval : ClusterInterval
        Of the pooled difference, resampling queries.
    by_category : list of dict
        Per category: pooled z and p.
    power_at_votes : float
        Power of a per-query two-sided test with 21 votes per context at the observed pooled
        rates (independent design); None when the two rates are equal.
    """

    n_queries: int
    n_unpaired: int
    votes_per_item: int
    safe_rate_safe_context: float
    safe_rate_unsafe_context: float
    safe_majority_safe_context: float
    safe_majority_unsafe_context: float
    pooled: SignificanceTest
    alpha: float
    n_significant: int
    n_flips: int
    mean_difference: float
    wilcoxon: SignificanceTest | None
    cluster_interval: ClusterInterval
    by_category: list
    power_at_votes: float | None
    differences: np.ndarray = internal_field()

    figure_name: ClassVar[str] = "context_effect.png"

    def summary(self) -> str:
        ci, test = self.cluster_interval, self.wilcoxon
        wilcoxon = "no Wilcoxon test (every difference is 0)"
        if test is not None:
            wilcoxon = f"Wilcoxon statistic {test.statistic:g}, {p_text(test.p_value, 'p')}"
        power = "n/a (equal rates)" if self.power_at_votes is None else f"{self.power_at_votes:.3f}"
        unpaired = ""
        if self.n_unpaired:  # counted in the shares, majorities and pooled z, not per query
            unpaired = f"; {self.n_unpaired} record(s) without a pair (pooled figures only)"
        return "\n".join(
            [
                f"CASE-Bench human statistics: {self.n_queries} queries x 2 contexts, "
                f"{self.votes_per_item} votes each{unpaired}",
                f"  safe-vote share: {self.safe_rate_safe_context:.4f} (safe-intended) vs "
                f"{self.safe_rate_unsafe_context:.4f} (unsafe-intended)",
                f"  safe majority: {self.safe_majority_safe_context:.1%} vs "
                f"{self.safe_majority_unsafe_context:.1%}",
                f"  pooled z = {self.pooled.statistic:.3f}, {p_text(self.pooled.p_value, 'p')}",
                f"  per query: {self.n_significant}/{self.n_queries} significant increases "
                f"(p < {self.alpha:g}), {self.n_flips} majority flips",
                f"  mean per-query difference {self.mean_difference:.4f}; {wilcoxon}",
                f"  cluster bootstrap {ci.confidence_level:.0%} interval of the difference: "
                f"[{ci.low:.4f}, {ci.high:.4f}] (by query)",
                f"  power of a per-query test with {self.votes_per_item} votes at these rates: "
                f"{power}",
            ]
        )

    def plot(self, ax=None):
        """Histogram of the per-query differences in safe-vote share."""
        ax = new_axes(ax, figsize=(6.0, 3.8))
        ax.hist(self.differences, bins=np.linspace(-1, 1, 22), color="tab:green")
        ax.axvline(0, color="grey", lw=0.8)
        ax.axvline(self.mean_difference, color="black", ls="--", lw=1)
        ax.set_xlabel("safe_rate (safe context) - safe_rate (unsafe context)")
        ax.set_ylabel("queries")
        ax.set_title(f"context effect: {self.n_significant}/{self.n_queries} significant")
        return ax


def _pairs(data: CaseBench) -> tuple[np.ndarray, np.ndarray, int]:
    """Indices (safe record, unsafe record) per query that has exactly one of each."""
    where: dict[str, dict[bool, list[int]]] = {}
    for i, (query, flag) in enumerate(zip(data.queries, data.intended_safe, strict=True)):
        where.setdefault(query, {True: [], False: []})[bool(flag)].append(i)
    safe, unsafe = [], []
    for found in where.values():
        if len(found[True]) == 1 and len(found[False]) == 1:
            safe.append(found[True][0])
            unsafe.append(found[False][0])
    return np.array(safe, dtype=int), np.array(unsafe, dtype=int), len(data) - 2 * len(safe)


def human_statistics(
    dataset: Any,
    alpha: float = 0.05,
    n_bootstrap: int = 2000,
    confidence_level: float = 0.95,
    random_state: Any = 0,
) -> HumanStatistics:
    """The context effect on the human votes of a CASE-Bench set (see the module docstring).

    ``dataset``: a :class:`CaseBench`, a path or a list of records (a data file, or a model's
    output file whose contexts may be ablated: the contexts are not read). Votes are the
    safe_rate's k of 21 (never a shorter vote list).
    """
    data = dataset if isinstance(dataset, CaseBench) else _load(dataset)
    alpha = check_probability(alpha, "alpha")
    n = VOTES_PER_ITEM
    intended = data.intended_safe
    if intended.all() or not intended.any():
        raise InputError.bad(
            "dataset", "records of both safe- and unsafe-intended contexts", "one kind"
        )
    k = data.safe_votes
    pooled = two_proportion_ztest(
        [k[intended].sum(), k[~intended].sum()], [n * intended.sum(), n * (~intended).sum()]
    )
    safe, unsafe, n_unpaired = _pairs(data)
    if len(safe) < 2:
        raise InputError.bad(
            "dataset", "at least 2 queries with exactly one record of each context", len(safe)
        )
    trials = np.full(len(safe), n)
    tests = per_item_ztests(k[safe], trials, k[unsafe], trials)
    # from the integer vote counts: a difference of two k/21 floats carries rounding noise that
    # would split equal differences and break the Wilcoxon ranks' ties
    differences = (k[safe] - k[unsafe]) / n
    flips = int(((k[safe] > n / 2) != (k[unsafe] > n / 2)).sum())
    # one 0/1 value per vote, clustered by query, grouped by context
    rows = np.concatenate([safe, unsafe])
    cluster = np.concatenate([np.arange(len(safe))] * 2)
    votes = np.concatenate([np.r_[np.ones(int(k[i])), np.zeros(n - int(k[i]))] for i in rows])
    clusters = np.repeat(cluster, n)
    groups = np.repeat(np.r_[np.ones(len(safe), bool), np.zeros(len(unsafe), bool)], n)
    interval = cluster_bootstrap_ci(
        votes, clusters, groups, n_bootstrap, confidence_level, random_state
    )
    rate_safe = float(k[intended].sum() / (n * intended.sum()))
    rate_unsafe = float(k[~intended].sum() / (n * (~intended).sum()))
    return HumanStatistics(
        n_queries=len(safe),
        n_unpaired=n_unpaired,
        votes_per_item=n,
        safe_rate_safe_context=rate_safe,
        safe_rate_unsafe_context=rate_unsafe,
        safe_majority_safe_context=float((data.safe_rate[intended] > 0.5).mean()),
        safe_majority_unsafe_context=float((data.safe_rate[~intended] > 0.5).mean()),
        pooled=pooled,
        alpha=alpha,
        n_significant=tests.n_significant(alpha, direction=+1),
        n_flips=flips,
        mean_difference=float(differences.mean()),
        wilcoxon=wilcoxon_signed_rank(differences) if differences.any() else None,
        cluster_interval=interval,
        by_category=_by_category(data, n),
        power_at_votes=_power(rate_safe, rate_unsafe, n, alpha),
        differences=differences,
    )


def _load(dataset: Any) -> CaseBench:
    """The records of ``dataset`` (a path or a list), its errors naming ``dataset`` (the
    loader's own argument is ``path``)."""
    try:
        return load_casebench(dataset, outputs=True)
    except InputError as exc:
        message = str(exc)
        if exc.argument != "path" or not message.startswith("path:"):
            raise
        raise InputError("dataset" + message[len("path") :], argument="dataset") from None


def _power(p1: float, p2: float, n: int, alpha: float) -> float | None:
    if p1 == p2:
        return None
    return achieved_power(p1, p2, n, alpha, "independent")


def _by_category(data: CaseBench, n: int) -> list[dict]:
    rows = []
    categories = np.asarray(data.categories, dtype=object)
    for category in sorted(set(data.categories)):
        keep = categories == category
        a, b = keep & data.intended_safe, keep & ~data.intended_safe
        if not a.any() or not b.any():
            continue
        test = per_item_ztests(
            [data.safe_votes[a].sum()], [n * a.sum()], [data.safe_votes[b].sum()], [n * b.sum()]
        )
        rows.append(
            {
                "category": category,
                "items": int(keep.sum()),
                "difference": float(test.differences[0]),
                "z": float(test.statistics[0]),
                "p_value": float(test.p_values[0]),
            }
        )
    return rows
