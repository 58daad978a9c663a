"""The result and input conventions of ../shared/design/architecture.md, across packages (review 54).

- every exported result is a frozen dataclass on the one Result base with its own ``summary()``;
- real results of several packages give strict JSON from ``to_dict()``, a short text from
  ``summary()`` and draw on a given Axes where they have ``plot``;
- bad input raises a trustlab InputError that names the argument and shows what came.

Known exceptions are listed with the reason; each is a lead for the API's owner, and the tests
want exactly them (fixing one means taking it off the list).
"""

from __future__ import annotations

import dataclasses
import inspect
import json

import numpy as np
import pytest

from test_api_shape import PUBLIC  # every package's exports (tests/ is on sys.path)
from trustlab._results import Result, has_plot
from trustlab.errors import InputError

# Results that hold state rather than a finished computation (to_dict is what they share).
KNOWN_MUTABLE_RESULTS = {"trustlab.federated.ProtocolState"}  # a UEFL run's progress
KNOWN_GENERIC_SUMMARIES = {
    "trustlab.explain.GraphDataset",  # a dataset of graphs
    "trustlab.federated.UEFLConfig",  # the settings of a UEFL run
}


def _exported_results() -> list[tuple[str, type]]:
    return [
        (f"{package}.{name}", obj)
        for package, name, obj in PUBLIC
        if inspect.isclass(obj) and issubclass(obj, Result)
    ]


RESULTS = _exported_results()


def test_exported_results_are_frozen_dataclasses():
    assert len(RESULTS) > 60
    mutable = {
        path
        for path, cls in RESULTS
        if not (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen)
    }
    assert mutable == KNOWN_MUTABLE_RESULTS


def test_exported_results_have_their_own_summary():
    generic = {path for path, cls in RESULTS if cls.summary is Result.summary}
    assert generic == KNOWN_GENERIC_SUMMARIES


def test_exported_results_plot_on_a_given_axes():
    # plot(ax=None): the caller's Axes first (a figure of subplots), a new one by default
    offenders = []
    for path, cls in RESULTS:
        plot = getattr(cls, "plot", None)
        if plot is None:
            continue
        parameters = list(inspect.signature(plot).parameters.values())[1:]
        if not parameters or parameters[0].name != "ax" or parameters[0].default is not None:
            offenders.append(f"{path}.plot{inspect.signature(plot)}")
    assert offenders == []


def _tree_explanation():
    from sklearn.tree import DecisionTreeRegressor

    from trustlab.explain import FastPD

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X[:, 0] + X[:, 1] * X[:, 2])
    return FastPD(tree).fit(X[:10]).explain(X[:5])


def _labels(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 3, 60)


def _build(kind: str):
    from trustlab import evaluation, fairness, privacy, robustness, safety

    builders = {
        "multiclass_dcp": lambda: fairness.multiclass_dcp(
            _labels(0), _labels(1), _labels(2) % 2, random_state=0
        ),
        "dcp_from_aggregates": lambda: fairness.dcp_from_aggregates(
            [0.5, 0.5], [[0.5, 0.5], [0.2, 0.8]], [[0.4, 0.6], [0.3, 0.7]], random_state=0
        ),
        # every trial a success in both groups: the z statistic is undefined (NaN -> null)
        "two_proportion_ztest_undefined": lambda: evaluation.two_proportion_ztest(
            [10, 10], [10, 10]
        ),
        "per_item_ztests": lambda: evaluation.per_item_ztests([1, 2], [10, 10], [3, 10], [10, 10]),
        "paired_comparison": lambda: evaluation.paired_comparison([1, 0, 1, 1], [1, 1, 0, 1]),
        "cluster_bootstrap_ci": lambda: evaluation.cluster_bootstrap_ci(
            [1.0, 0.0, 1.0, 1.0], [0, 0, 1, 1], random_state=0
        ),
        "dsi_noise": lambda: privacy.dsi_noise(
            np.random.default_rng(0).normal(size=(4, 2)), epsilon=1.0, delta=1e-5
        ),
        "certify_counts_abstains": lambda: robustness.certify_counts(
            [50, 50], 0, 0, sigma=0.5, alpha=0.001
        ),
        "certify_counts": lambda: robustness.certify_counts(
            [990, 10], 0, 0, sigma=0.5, alpha=0.001
        ),
        "bootstrap_auroc": lambda: safety.bootstrap_auroc(
            [0, 1, 0, 1, 1, 0], [0.1, 0.9, 0.2, 0.8, 0.3, 0.4], n_bootstrap=50
        ),
        "fastpd_explanation": _tree_explanation,
    }
    return builders[kind]()


KINDS = [
    "multiclass_dcp",
    "dcp_from_aggregates",
    "two_proportion_ztest_undefined",
    "per_item_ztests",
    "paired_comparison",
    "cluster_bootstrap_ci",
    "dsi_noise",
    "certify_counts_abstains",
    "certify_counts",
    "bootstrap_auroc",
    "fastpd_explanation",
]


@pytest.mark.parametrize("kind", KINDS)
def test_a_real_result_has_the_one_shape(kind):
    result = _build(kind)
    assert isinstance(result, Result)
    assert dataclasses.is_dataclass(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(result, dataclasses.fields(result)[0].name, None)
    data = result.to_dict()
    text = json.dumps(data, allow_nan=False)  # strict JSON: no NaN, no infinity
    assert json.loads(text) == data
    summary = result.summary()
    assert isinstance(summary, str) and summary.strip()
    if has_plot(result):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        try:
            result.plot(ax=ax)
            assert ax.has_data() or ax.texts or ax.images or ax.tables
        finally:
            plt.close(fig)


def test_an_undefined_statistic_is_null_in_json_and_said_in_the_summary():
    result = _build("two_proportion_ztest_undefined")
    assert result.to_dict()["statistic"] is None
    assert "nan" in result.summary()


# (call, the argument the error must name, a fragment of what came)
def _bad_calls():
    from trustlab import (
        agents,
        data,
        evaluation,
        explain,
        fairness,
        federated,
        governance,
        interpret,
        privacy,
        safety,
        strategic,
        watermark,
    )

    groups = [0, 0, 1, 1]
    return {
        "fairness.multiclass_dcp": (
            lambda: fairness.multiclass_dcp([0, 1, 1, 0], [0, 1, 0, 0], groups, n_restarts="x"),
            "n_restarts",
            "'x'",
        ),
        "fairness.dcp_from_aggregates": (
            lambda: fairness.dcp_from_aggregates(
                [0.5, 0.5], [[0.5, 0.5]] * 2, [[0.5, 0.5]] * 2, beta="x"
            ),
            "beta",
            "'x'",
        ),
        "evaluation.wilson_interval": (
            lambda: evaluation.wilson_interval(11, 10),
            "successes",
            "11",
        ),
        "evaluation.mcnemar_test": (lambda: evaluation.mcnemar_test(-1, 3), "only_first", "-1"),
        "evaluation.cohens_h": (lambda: evaluation.cohens_h(2, 0.5), "p1", "2"),
        "privacy.dsi_noise": (
            lambda: privacy.dsi_noise(np.ones((3, 2)), epsilon=-1.0, delta=1e-5),
            "epsilon",
            "-1.0",
        ),
        "privacy.dsi_epsilon": (
            lambda: privacy.dsi_epsilon("x", delta=1e-5),
            "noise_multiplier",
            "'x'",
        ),
        "strategic.make_market_population": (
            lambda: strategic.make_market_population(10, random_state="x"),
            "random_state",
            "'x'",
        ),
        "explain.shapes_in_noise": (lambda: explain.shapes_in_noise("x"), "n_graphs", "'x'"),
        "explain.FastPD.fit": (
            lambda: explain.FastPD(None, max_order="x").fit(np.zeros((3, 2))),
            "max_order",
            "'x'",
        ),
        "agents.load_policy": (lambda: agents.load_policy(5), "policy", "5"),
        "agents.decide": (lambda: agents.decide("x", 0.5), "p_safe", "'x'"),
        "governance.fleiss_kappa": (lambda: governance.fleiss_kappa("x"), "table", "'x'"),
        "governance.load_answers": (lambda: governance.load_answers(5), "answers", "5"),
        "watermark.bleu1": (lambda: watermark.bleu1("a b", 5), "candidate", "5"),
        "watermark.score_of_opacity": (lambda: watermark.score_of_opacity("x"), "opacity", "'x'"),
        "safety.bootstrap_auroc": (lambda: safety.bootstrap_auroc("x", [0, 1]), "unsafe", "'x'"),
        "federated.make_silos": (lambda: federated.make_silos(n_silos="x"), "n_silos", "'x'"),
        "data.load_dataset": (lambda: data.load_dataset("nope"), "name", "'nope'"),
        "interpret.SparseAutoencoder.fit": (
            lambda: interpret.SparseAutoencoder(n_latents=4, k="x").fit(np.zeros((20, 3))),
            "k",
            "'x'",
        ),
    }


BAD_CALLS = sorted(_bad_calls())


@pytest.mark.parametrize("where", BAD_CALLS)
def test_bad_input_is_an_input_error_naming_the_argument_and_what_came(where):
    call, argument, came = _bad_calls()[where]
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert caught.value.argument == argument, message
    assert message.startswith(f"{argument}: expected "), message
    assert f"got {came}" in message, message
