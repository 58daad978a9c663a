"""Third review of ``trustlab safety polytope eval | generate``: the refusal direction's options
(--strength, --direction-layer < 0) are checked before the model loads and the direction is
computed from 32 training prompts; they were refused only after that work."""

import pytest

import trustlab.llm
from cli_helpers import one_line, run_main


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    def refuse(name):
        raise AssertionError(f"the model {name} was loaded before the settings were checked")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


@pytest.mark.parametrize("command", ["eval", "generate"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--strength", "nan"], "--strength: expected a number in (-inf, inf), got nan"),
        (["--strength", "inf"], "--strength: expected a number in (-inf, inf), got inf"),
        (["--direction-layer", "-1"], "--direction-layer: expected an integer >= 0, got -1"),
    ],
)
def test_direction_options_are_checked_before_the_model_loads(
    tmp_path, capsys, command, args, message
):
    line = ["safety", "polytope", command, "--polytope", str(tmp_path)]
    line += ["--correction", "direction", *args]
    code, _, err = run_main(line + (["hi"] if command == "generate" else []), capsys)
    assert code == 2
    assert one_line(err) == f"trustlab: error: {message}"


def test_direction_options_are_not_value_checked_for_other_corrections(tmp_path, capsys):
    # --strength and --direction-layer are unused by project and gate: given there, they are
    # refused as out of place (review 54), not for their value
    line = ["safety", "polytope", "generate", "--polytope", str(tmp_path), "hi"]
    code, _, err = run_main([*line, "--strength", "nan", "--direction-layer", "-1"], capsys)
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: --strength: expected only with --correction direction"
    )
