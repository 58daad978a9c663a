"""Review 58 (newuser): every option a --help lists says what it is."""

from __future__ import annotations

import click
import typer

from trustlab.cli.main import app


def _options(group=None, path=()):
    group = typer.main.get_command(app) if group is None else group
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _options(command, (*path, name))
            continue
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                yield " ".join((*path, name)), param


def test_every_listed_option_has_a_help_text():
    # equigx/regions/watermark train listed --max-epochs, --learning-rate, --batch-size with a
    # bare [default: ...]; safety polytope generate --model and --max-new-tokens with nothing
    missing = [f"{path} {param.opts[0]}" for path, param in _options() if not param.help]
    assert missing == []
