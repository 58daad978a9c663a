"""Review 56: ``evaluate_explanations`` drew every method's bootstrap intervals from one stream in
the order of ``methods``, so a method's AUROC/AP interval changed when another method was added,
removed or reordered (same data, same seed). Each method now resamples from its own stream of the
seed and its name: its numbers depend only on the data, the seed and the method."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("e3nn")

from cli_helpers import run_main  # noqa: E402
from trustlab.explain.equigx import (  # noqa: E402
    evaluate_explanations,
    load_checkpoint,
    shapes_in_noise,
)


def _numbers(ev, method):
    """Everything the evaluation reports for ``method`` that could depend on a random draw."""
    a, p = ev.auroc[method], ev.average_precision[method]
    return (a["estimate"], a["low"], a["high"], p["estimate"], p["low"], p["high"],
            ev.accuracy_after_deletion[method], ev.accuracy_after_deletion["random"])  # fmt: skip


@pytest.fixture(scope="module")
def setting():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_checkpoint("shapes_platonic"), shapes_in_noise(6, random_state=4242)
    torch.set_num_threads(old)


def test_a_methods_numbers_do_not_depend_on_the_other_methods(setting):
    net, data = setting

    def run(methods, seed=23):
        return evaluate_explanations(net, data, methods=methods, n_random=1, random_state=seed)

    alone = {m: _numbers(run([m]), m) for m in ("equigx_block", "random")}
    ev = run(["equigx", "random", "equigx_contrast", "equigx_block"])  # added and reordered
    for m in ("equigx_block", "random"):
        assert _numbers(ev, m) == alone[m], m
        assert alone[m][1] < alone[m][2], m  # an interval, not a point
    # the intervals still come from the seed: another seed resamples differently
    other = run(["equigx_block", "random"], seed=24)
    for m in ("equigx_block", "random"):
        ends = [_numbers(other, m)[k] for k in (1, 2, 4, 5)]  # AUROC's and AP's interval
        assert ends != [alone[m][k] for k in (1, 2, 4, 5)], m
        assert np.isfinite(ends).all()


def test_the_cli_gives_a_method_the_same_numbers_whatever_else_is_asked_for(capsys):
    def run(methods, seed):
        code, out, err = run_main(
            ["explain", "equigx", "evaluate", "--checkpoint", "shapes_platonic",
             "--methods", methods, "--max-graphs", "8", "--seed", seed, "--json"], capsys,
        )  # fmt: skip
        assert code == 0, err
        data = json.loads(out)
        return data["auroc"]["random"], data["average_precision"]["random"]

    alone = run("random", 5)
    assert alone[0]["low"] < alone[0]["high"]
    assert run("equigx_block,random", 5) == alone  # (the seed's effect: the API test above)
