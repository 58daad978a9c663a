"""Options given twice, and output cut short by a closed pipe (``trustlab ... | head``)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
import typer

from cli_helpers import one_line
from cli_helpers import run_main as run
from trustlab.cli.main import _refuse_repeated_options, app


def _leaves(group=None, path=()):
    group = typer.main.get_command(app) if group is None else group
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _leaves(command, (*path, name))
        else:
            yield (*path, name), command


def _options(kind):
    """(command path, option) for every command: its first single-valued option taking a value
    (kind "single"), or each option meant to repeat (kind "multiple")."""
    found = []
    for path, command in _leaves():
        options = [p for p in command.params if isinstance(p, click.Option)]
        if kind == "single":
            single = [p for p in options if not (p.is_flag or p.multiple or p.count)]
            found += [(path, single[0].opts[0])] if single else []
        else:
            found += [(path, p.opts[0]) for p in options if p.multiple]
    return found


SINGLE = _options("single")
MULTIPLE = _options("multiple")


def test_every_command_is_covered():
    assert len(SINGLE) >= 40 and len(MULTIPLE) >= 10


@pytest.mark.parametrize(("path", "option"), SINGLE, ids=[" ".join((*p, o)) for p, o in SINGLE])
def test_a_single_valued_option_given_twice_is_refused_in_every_command(capsys, path, option):
    # click kept the last value without a word: --seed 1 --seed 2 ran with seed 2
    code, out, err = run([*path, option, "1", f"{option}=2"], capsys)
    assert code == 2 and out == ""
    assert one_line(err) == (
        f"trustlab: error: Option '{option}' was given twice ('1', then '2'); give it once. "
        f"(see 'trustlab {' '.join(path)} --help')"
    )


@pytest.mark.parametrize(("path", "option"), MULTIPLE, ids=[" ".join((*p, o)) for p, o in MULTIPLE])
def test_options_meant_to_repeat_may_repeat(capsys, path, option):
    code, out, err = run([*path, option, "a", option, "b", "--help"], capsys)
    assert code == 0 and err == ""
    assert "Usage: trustlab " + " ".join(path) in out


def test_a_flag_given_both_ways_is_refused_and_said_twice_the_same_way_is_not(capsys):
    code, _, err = run(["safety", "transfer", "apply", "--chat", "--no-chat", "x"], capsys)
    assert code == 2
    assert one_line(err).startswith(
        "trustlab: error: Options '--chat' and '--no-chat' were both given; give one of them."
    )
    code, out, _ = run(["audit", "--yes", "-y", "--help"], capsys)
    assert code == 0 and "Usage: trustlab audit" in out


def _path_options():
    return [
        (path, p.opts[0])
        for path, command in _leaves()
        for p in command.params
        if isinstance(p, click.Option) and isinstance(p.type, click.Path) and not p.is_flag
    ]


PATHS = _path_options()


def test_every_command_with_an_out_option_is_covered():
    assert sum(option == "--out" for _, option in PATHS) >= 30


@pytest.mark.parametrize(("path", "option"), PATHS, ids=[" ".join((*p, o)) for p, o in PATHS])
def test_an_empty_path_option_is_refused_in_every_command(
    capsys, path, option, tmp_path, monkeypatch
):
    # click reads "" as Path("") == Path("."): `--out ""` wrote its files into the working folder
    monkeypatch.chdir(tmp_path)
    for given in ([option, ""], [f"{option}="]):
        code, out, err = run([*path, *given], capsys)
        assert code == 2 and out == ""
        assert one_line(err) == (
            f"trustlab: error: Option '{option}' was given an empty path; give a path ('.' for "
            f"this folder). (see 'trustlab {' '.join(path)} --help')"
        )
    assert list(tmp_path.iterdir()) == []


def test_values_and_arguments_that_look_like_options_are_not_counted():
    root = typer.main.get_command(app)
    # after "--" everything is an argument; a value is skipped whatever it looks like
    _refuse_repeated_options(root, ["llm", "generate", "--", "--seed", "1", "--seed", "2"])
    _refuse_repeated_options(root, ["llm", "generate", "--model", "--seed", "--seed", "3"])
    with pytest.raises(click.UsageError, match="'--seed' was given twice"):
        _refuse_repeated_options(root, ["llm", "generate", "--seed", "--seed", "--seed", "3"])


@pytest.mark.parametrize(
    "args", [["--help"], ["data", "list"], ["data", "show", "chile", "--json"]]
)
def test_output_into_a_closed_pipe_ends_quietly(args):
    """``trustlab --help | head -1``: the reader went away; exit 1 (Python's convention for
    EPIPE, as click does) with nothing on stderr: no traceback, no 'Exception ignored' line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "trustlab.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    assert process.wait(timeout=120) == 1
    assert process.stderr.read() == b""


def test_an_interrupt_is_one_line_and_exit_130(capsys, monkeypatch):
    import trustlab.cli.data as data_cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(data_cli, "list_datasets", interrupted)
    code, out, err = run(["data", "list"], capsys)
    assert code == 130 and out == ""
    assert one_line(err) == "trustlab: interrupted"
