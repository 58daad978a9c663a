"""Every command's --help reads as written at 80 columns: no sentence broken into half lines."""

from __future__ import annotations

import re

import pytest
import typer

from trustlab.cli._help import reflow
from trustlab.cli.main import app, main


def _commands(group=None, path=()):
    import click

    group = typer.main.get_command(app) if group is None else group
    for name, command in sorted(group.commands.items()):
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands())


def _ragged(text: str, width: int = 80) -> list[tuple[str, str]]:
    """Pairs of consecutive prose lines (at the help's one-space margin) where the second's
    first word would have fit on the first: the mark of a line break kept from the source."""
    pairs = []
    lines = [line for line in text.splitlines() if not re.match(r"\s*[│╭╰]", line)]
    for first, second in zip(lines, lines[1:], strict=False):
        if not first.strip() or not second.strip():
            continue
        if any(len(line) - len(line.lstrip()) > 1 for line in (first, second)):
            continue  # laid out by hand: an example, a table, a list item
        word = second.split()[0]
        if len(first.rstrip()) + 1 + len(word) <= width - 2:
            pairs.append((first.strip(), second.strip()))
    return pairs


def test_the_walk_finds_every_command():
    assert ("llm", "serve") in COMMANDS and ("safety", "polytope", "generate") in COMMANDS
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_has_no_half_lines(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERMINAL_WIDTH", "80")
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "Usage: trustlab" in out
    assert _ragged(out) == []


def test_reflow_joins_prose_and_keeps_examples_and_lists():
    text = "Title.\n\nOne sentence\ngoes on.\n\nExample:\n\n  trustlab a \\\n      --b c\n\n- item\n- two\n  more"
    assert reflow(text) == (
        "Title.\n\nOne sentence goes on.\n\nExample:\n\n  trustlab a \\\n      --b c\n\n"
        "- item\n- two\n  more"
    )


def test_the_checker_sees_a_half_line():
    assert _ragged(" Keep the default\n host 127.0.0.1 unless other machines must reach it.")
    assert not _ragged(" Example:\n\n   trustlab llm serve --port 8000")


def _argument_helps(group: typer.Typer = app, path=()):
    """(command path, argument help) for every CLI argument declared with a help text."""
    import inspect
    import typing

    for info in group.registered_commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        hints = typing.get_type_hints(info.callback, include_extras=True)
        for parameter in inspect.signature(info.callback).parameters.values():
            extras = typing.get_args(hints.get(parameter.name))[1:]
            default = parameter.default
            for meta in (*extras, default):
                if isinstance(meta, typer.models.ArgumentInfo) and meta.help:
                    yield (*path, name), meta.help
    for sub in group.registered_groups:
        yield from _argument_helps(sub.typer_instance, (*path, sub.name))


ARGUMENT_HELPS = list(_argument_helps())


def test_every_argument_help_is_shown(capsys, monkeypatch):
    # typer < 0.21 (which Flower pins) with click 8.5 showed no argument's help at all
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERMINAL_WIDTH", "200")
    assert len(ARGUMENT_HELPS) >= 5
    missing = []
    for command, text in ARGUMENT_HELPS:
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        shown = " ".join(re.sub(r"[│]", " ", capsys.readouterr().out).split())
        if " ".join(text.split()[:3]) not in shown:
            missing.append((" ".join(command), text))
    assert missing == []
