"""Review pass 53: ``llm generate`` says its plan before a local model loads, not after."""

from __future__ import annotations

import sys

import pytest

import trustlab.llm
import trustlab.llm.generations as generations_module
from cli_helpers import one_line


class Reverser:
    name = "reverser"

    def generate(self, prompts, max_new_tokens=64, **settings):
        return [p[::-1] for p in prompts]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A model folder whose load writes 'LOADED' on stderr (where the loading lines go)."""

    def load(name, **kwargs):
        sys.stderr.write(f"LOADED {name}\n")
        return Reverser()

    monkeypatch.setattr(trustlab.llm, "load_model", load)
    monkeypatch.setattr(generations_module, "load_model", load)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    return tmp_path / "m"


def test_the_plan_comes_before_the_model_loads(run, folder):
    # the plan was said at the first progress call, after the load's progress lines
    code, out, err = run("llm", "generate", "--model", folder, "--max-new-tokens", 2, "ab")
    assert code == 0 and "ba" in out
    lines = [line for line in err.splitlines() if line.strip()]
    plan = f"trustlab: generating up to 2 new tokens for each of 1 prompt with {folder}"
    assert plan in lines and f"LOADED {folder}" in lines
    assert lines.index(plan) < lines.index(f"LOADED {folder}")


@pytest.mark.parametrize(
    ("option", "value"), [("--max-new-tokens", 0), ("--temperature", 3), ("--seed", -1)]
)
def test_bad_options_are_one_line_before_the_plan_and_any_load(run, folder, option, value):
    code, _, err = run("llm", "generate", "--model", folder, option, value, "ab")
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}: expected")


def test_an_unknown_model_is_one_line_before_the_plan(run, folder):
    code, _, err = run("llm", "generate", "--model", folder.parent / "none", "ab")
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --model: expected one of the available")
