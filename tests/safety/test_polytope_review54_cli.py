"""Review 54 of ``trustlab safety polytope eval | generate``: --strength and --direction-layer
belong to ``--correction direction``; with project (Safe Flow) or the gate they were silently
ignored, so ``generate --strength 3 PROMPT`` printed Safe Flow answers as if they were steered.
They are refused before the polytope or the model loads."""

import pytest

import trustlab.llm
from cli_helpers import one_line, run_main, with_options


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    def refuse(name):
        raise AssertionError(f"the model {name} was loaded before the settings were checked")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


@pytest.mark.parametrize("command", ["eval", "generate"])
@pytest.mark.parametrize("correction", [None, "project", "gate"])
@pytest.mark.parametrize(
    ("extra", "shown"),
    [(["--strength", "3"], "--strength"), (["--direction-layer", "12"], "--direction-layer")],
)
def test_direction_options_without_the_direction_are_refused(
    tmp_path, capsys, command, correction, extra, shown
):
    line = ["safety", "polytope", command, "--polytope", str(tmp_path)]
    if correction is not None:
        line += ["--correction", correction]
    line = with_options(line, extra) + (["hi"] if command == "generate" else [])
    code, _, err = run_main(line, capsys)
    assert code == 2
    value = "3.0" if shown == "--strength" else "12"
    assert one_line(err) == (
        f"trustlab: error: {shown}: expected only with --correction direction (the refusal "
        f"direction's option), got {value} with --correction {correction or 'project'}"
    )


def test_direction_options_with_the_direction_pass_to_the_next_check(tmp_path, capsys):
    # accepted: the polytope folder (empty here) is the next thing refused
    line = ["safety", "polytope", "generate", "--polytope", str(tmp_path), "hi"]
    line = with_options(line, ["--correction", "direction", "--strength", "3"])
    code, _, err = run_main(line + ["--direction-layer", "12"], capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --polytope: expected a folder written by")
