"""Every Python example in README.md runs as written, prints what its comments quote, and the
README's general claims about the command line hold."""

import re
from pathlib import Path

import matplotlib
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)

#: The commands README.md names as taking no ``--json`` (servers and file writers).
WITHOUT_JSON = {"llm serve", "agents serve", "governance questionnaire", "governance example"}


def quoted_output(block: str) -> list[str]:
    """The texts a ``print(...)  # "... text"`` comment of ``block`` says the line prints."""
    found = re.findall(r'^\s*print\(.*#\s*"(?:\.\.\.\s*)?(.+?)"\s*$', block, flags=re.M)
    return [text.strip() for text in found]


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_quoted_output_reads_the_comment_of_a_print_line():
    block = 'x = 1  # "not a print"\nprint(x)    # "... The answer is: 1."\n'
    assert quoted_output(block) == ["The answer is: 1."]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, monkeypatch, capsys):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    exec(compile(BLOCKS[index], f"README.md example {index + 1}", "exec"), {})
    printed = capsys.readouterr().out
    for text in quoted_output(BLOCKS[index]):
        assert text in printed, f"README.md example {index + 1} says it prints {text!r}"


def _commands(group, path=()):
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_every_command_but_the_named_ones_takes_json():
    import typer

    from trustlab.cli.main import app

    without = {
        name
        for name, command in _commands(typer.main.get_command(app))
        if not any("--json" in param.opts for param in command.params)
    }
    assert without == WITHOUT_JSON
    text = " ".join(README.read_text().split())
    claim = text[text.index("Every command that computes a result takes `--json`") :][:400]
    for name in WITHOUT_JSON:
        assert f"`{name}`" in claim, name
