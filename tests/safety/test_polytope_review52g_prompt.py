"""``safety polytope generate`` refuses an empty PROMPT before the model loads (the model
answered the empty chat)."""

import pytest

import trustlab.llm
from cli_helpers import one_line, run_main


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    def refuse(name):
        raise AssertionError(f"the model {name} was loaded before the prompts were checked")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


@pytest.mark.parametrize(("prompts", "name", "shown"), [([""], "PROMPT 1", "''"),
                                                         (["hi", "  "], "PROMPT 2", "'  '")])  # fmt: skip
def test_generate_refuses_an_empty_prompt_in_one_line(tmp_path, capsys, prompts, name, shown):
    line = ["safety", "polytope", "generate", "--polytope", str(tmp_path), *prompts]
    code, _, err = run_main(line, capsys)
    assert code == 2
    assert one_line(err) == f"trustlab: error: {name}: expected a non-empty prompt, got {shown}"
