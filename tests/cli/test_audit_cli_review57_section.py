"""``trustlab audit --section``: build only some report sections (review 57); the library's
``run_audit(sections=...)`` checks the names, the CLI's errors name ``--section``."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    rng = np.random.default_rng(23)
    n = 40
    y = rng.choice(["no", "yes"], size=n)
    g = rng.choice(["p", "q"], size=n)
    pred = np.where(rng.random(n) < 0.8, y, rng.choice(["no", "yes"], size=n))
    path = tmp_path_factory.mktemp("section") / "tiny.csv"
    pd.DataFrame({"x": rng.normal(size=n), "y": y, "g": g, "yhat": pred}).to_csv(path, index=False)
    return path


def _args(tiny_csv, out):
    return ["audit", "--data", tiny_csv, "--label", "y", "--group", "g", "--pred", "yhat",
            "--out", out]  # fmt: skip


def test_section_overview_builds_only_the_overview(tiny_csv, tmp_path, capsys):
    code, out, _ = run([*_args(tiny_csv, tmp_path), "--section", "overview", "--json"], capsys)
    assert code == 0
    assert [s["id"] for s in json.loads(out)["sections"]] == ["overview"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["id"] for s in report["sections"]] == ["overview"]
    page = (tmp_path / "report.html").read_text()
    assert 'id="overview"' in page and 'id="fairness"' not in page


def test_a_comma_list_and_repeated_options_ask_the_same(tiny_csv, tmp_path, capsys, monkeypatch):
    import trustlab.audit

    asked = []

    def fake_run_audit(*args, sections=None, **kwargs):
        asked.append(sections)
        raise trustlab.errors.InputError("stop here", argument=None)

    monkeypatch.setattr(trustlab.audit, "run_audit", fake_run_audit)
    for form in (["--section", "fairness, overview"], ["--section", "fairness", "--section", "overview"]):  # fmt: skip
        code, _, err = run([*_args(tiny_csv, tmp_path), *form], capsys)
        assert (code, one_line(err)) == (2, "trustlab: error: stop here")
    assert asked == [["fairness", "overview"], ["fairness", "overview"]]


def test_an_unknown_section_is_one_line_naming_the_option_and_the_names(tiny_csv, tmp_path, capsys):
    from trustlab.audit.sections import SECTION_MODULES

    code, _, err = run([*_args(tiny_csv, tmp_path), "--section", "overview,fairnes"], capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --section: expected names among ")
    assert all(name in line for name in SECTION_MODULES) and line.endswith("got 'fairnes'")
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


def test_a_section_the_mode_cannot_build_is_refused_naming_the_option(tiny_csv, tmp_path, capsys):
    code, _, err = run([*_args(tiny_csv, tmp_path), "--section", "fastpd"], capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --section: expected a section a predictions audit builds (overview, "
        "fairness, participation with --participation), got fastpd"
    )
    assert list(tmp_path.iterdir()) == []
