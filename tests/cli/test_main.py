"""The CLI contract: --version, --json, exit codes 0 / 2 (bad input, one line) / 1 (failure)."""

import json
import subprocess
import sys

import pytest

from cli_helpers import run_main as run
from trustlab import __version__
from trustlab.cli.main import main


def test_version(capsys):
    code, out, _ = run(["--version"], capsys)
    assert code == 0
    assert out.strip() == f"trustlab {__version__}"


def test_data_list_json(capsys):
    code, out, _ = run(["data", "list", "--json"], capsys)
    assert code == 0
    names = [d["name"] for d in json.loads(out)]
    assert "chile" in names


def test_bad_input_is_one_line_and_exit_2(capsys):
    code, out, err = run(["data", "show", "nosuchdata"], capsys)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1
    # the command's argument is NAME (not the library's "name"), and where the names are
    assert lines[0].startswith("trustlab: error: NAME: expected one of 'chile', ")
    assert lines[0].endswith("got 'nosuchdata' (see 'trustlab data list')")


def test_data_show_prints_plain_text_and_json(capsys):
    code, out, err = run(["data", "show", "chile", "--rows", "0"], capsys)
    assert code == 0 and err == ""
    assert out.startswith("chile: 2532 rows. ") and "licence: " in out
    assert "statusquo" in out.splitlines()[2]  # the features line
    code, with_rows, _ = run(["data", "show", "chile", "--rows", "2"], capsys)
    assert code == 0 and len(with_rows.splitlines()) == len(out.splitlines()) + 3  # head + 2 rows
    code, out, _ = run(["data", "show", "chile", "--json"], capsys)
    assert code == 0 and json.loads(out)["name"] == "chile"


def test_usage_error_exits_2(capsys):
    code, _, _ = run(["--no-such-option"], capsys)
    assert code == 2


def test_unexpected_failure_exits_1(capsys, monkeypatch):
    import trustlab.cli.data as data_cli

    def boom():
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(data_cli, "list_datasets", boom)
    code, _, err = run(["data", "list"], capsys)
    assert code == 1
    assert "disk on fire" in err


def test_console_script_runs():
    res = subprocess.run(
        [sys.executable, "-m", "trustlab.cli.main", "--version"], capture_output=True, text=True
    )
    assert res.returncode == 0
    assert __version__ in res.stdout


def test_import_is_light():
    code = (
        "import sys, trustlab, trustlab.errors, trustlab._checks; "
        "print(any(m in sys.modules for m in ('torch', 'sklearn', 'matplotlib')))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "False"


def test_a_library_error_names_the_cli_option(capsys, tmp_path):
    # The library names its parameter (epsilon); the CLI's error names the option (--epsilon).
    import numpy as np

    np.save(tmp_path / "deltas.npy", np.eye(2))
    deltas = str(tmp_path / "deltas.npy")
    code, _, err = run(
        ["privacy", "dsi", "--deltas", deltas, "--epsilon", "-1", "--delta", "0.1"], capsys
    )
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("trustlab: error: --epsilon: expected")


def test_option_message_maps_only_to_options_of_the_command():
    from trustlab.cli._common import option_message

    options = {"--seed", "--max-epochs", "--data"}
    assert option_message("random_state: bad", "random_state", options) == "--seed: bad"
    assert option_message("max_epochs: bad", "max_epochs", options) == "--max-epochs: bad"
    assert option_message("X: bad", "X", options) == "--data: bad"
    # an argument the command has no option for, or a message about something else, stays
    assert option_message("sigma: bad", "sigma", options) == "sigma: bad"
    assert option_message("rows differ", "random_state", options) == "rows differ"
    assert option_message("--seed: bad", "--seed", options) == "--seed: bad"


def test_a_chat_refusal_says_the_flag_a_command_line_gives():
    # "--chat: expected False for 'tiny', ..., got True": a command line says --no-chat
    from trustlab.cli._common import option_message
    from trustlab.errors import InputError

    error = InputError.bad("chat", "False for 'tiny', which has no chat template", True)
    assert option_message(str(error), "chat", {"--chat", "--no-chat"}) == (
        "--chat: expected --no-chat for 'tiny', which has no chat template, got True"
    )


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["data", "show", "chile", "--rows", "x"], "trustlab: error: Invalid value for '--rows'"),
        (["nosuch"], "trustlab: error: No such command 'nosuch'."),
        (["data", "show"], "trustlab: error: Missing argument 'NAME'."),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, args, start):
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert err.startswith(start) and err.endswith("--help')\n") and err.count("\n") == 1


def test_bad_input_leaves_no_stray_blank_line(capsys, tmp_path):
    # a command that opened its progress display before failing: stderr is the error line only
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    code, _, err = run(
        ["explain", "fastpd", "--model", tmp_path / "no.skops", "--data", table], capsys
    )
    assert code == 2
    assert (
        err
        == "trustlab: error: --model: expected an existing model file, got "
        + repr(str(tmp_path / "no.skops"))
        + "\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["watermark", "synth", "--n", "2"],
        ["watermark", "evaluate", "--n", "6"],
        ["watermark", "export", "--data", "nowhere"],
        ["federated", "flower-app"],
        ["federated", "simulate", "--n-silos", "2", "--rounds", "1", "--overwrite"],
        ["privacy", "dsi", "--deltas", "nowhere.npy", "--epsilon", "1", "--delta", "1e-5"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_file_as_out_is_one_line_and_exit_2_before_any_work(capsys, tmp_path, args, where):
    """It was an 'unexpected failure' (exit 1), in some commands after the work (a trained
    round, generated images)."""
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    out = afile if where == "a file" else afile / "sub"
    code, _, err = run([*args, "--out", str(out)], capsys)
    assert code == 2, err
    assert (
        err.strip()
        == f"trustlab: error: --out: expected a directory that can be created, got '{out}'"
    )
    assert afile.read_text() == "mine\n"


@pytest.mark.parametrize("args", [[], ["data"], ["explain", "equigx"]])
def test_a_group_without_a_command_prints_its_help_once(capsys, args):
    """The help was printed twice: once as the error was made, once more by main()."""
    code, out, err = run(args, capsys)
    assert code == 2 and err == ""
    assert out.count("Usage:") == 1 and "Commands" in out


def test_data_show_describes_every_dataset_data_list_names(capsys):
    """'data list' named qm9_carbonyl; 'data show qm9_carbonyl' refused it (see 'data list')."""
    code, out, _ = run(["data", "list", "--json"], capsys)
    for name in [d["name"] for d in json.loads(out)]:
        code, out, err = run(["data", "show", name, "--json"], capsys)
        assert code == 0 and err == "" and json.loads(out)["name"] == name
    code, out, err = run(["data", "show", "qm9_carbonyl", "--rows", "0"], capsys)
    assert code == 0 and out.startswith("qm9_carbonyl: 3000 graphs. ")
    assert "loader: trustlab.explain.equigx.data.qm9_carbonyl" in out


def test_data_list_text_cuts_no_cell(capsys):
    """At 80 columns (a pipe), the licence of qm9_carbonyl was cut to '(doi:10.6084/m9.figsh…'."""
    code, out, _ = run(["data", "list"], capsys)
    assert code == 0 and "qm9_carbonyl" in out and "…" not in out
    assert "978904.v5" in "".join(out.split())


# Ctrl-C while the console script imports the commands (seconds on a busy machine) printed a
# KeyboardInterrupt traceback: the finder below sends SIGINT as trustlab.cli.audit is imported.
# Python keeps SIGINT ignored when it starts ignored (a job a script puts in the background,
# `make test &`): the script restores Ctrl-C's default, as in a terminal, or the signal did
# nothing, the finder slept its 120 s and the test failed.
_INTERRUPTED_IMPORT = """
import importlib.abc, os, signal, sys, time

signal.signal(signal.SIGINT, signal.default_int_handler)

class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "trustlab.cli.audit":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(120)  # the KeyboardInterrupt of the signal ends the wait
        return None

sys.meta_path.insert(0, Interrupt())
from trustlab.cli.main import main
main(["--version"])
"""


def test_ctrl_c_while_the_commands_import_is_one_line_and_exit_130():
    res = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=300
    )
    assert (res.returncode, res.stdout, res.stderr) == (130, "", "trustlab: interrupted\n")


def test_ctrl_c_while_the_command_is_built_is_one_line_and_exit_130(capsys, monkeypatch):
    import typer

    def interrupted(app):
        raise KeyboardInterrupt

    import trustlab.cli.main as cli_main

    monkeypatch.setattr(typer.main, "get_command", interrupted)
    monkeypatch.setattr(cli_main, "_BUILT", {})  # not built yet in this process
    try:
        main(["--version"])
    except KeyboardInterrupt:  # raised on, it would stop the whole test session
        pytest.fail("Ctrl-C escaped main()")
    except SystemExit as exc:
        assert exc.code == 130
    else:
        pytest.fail("main() returned")
    assert capsys.readouterr().err == "trustlab: interrupted\n"


def test_the_command_is_built_once_a_process_and_again_for_another_app(monkeypatch, capsys):
    """main() reuses the click command it built (building reads every command's type hints,
    0.1-0.3 s); an app put in main's place gets its own."""
    import typer

    import trustlab.cli.main as cli_main

    builds = []
    build = typer.main.get_command
    monkeypatch.setattr(typer.main, "get_command", lambda app: builds.append(app) or build(app))
    monkeypatch.setattr(cli_main, "_BUILT", {})
    for _ in range(3):
        with pytest.raises(SystemExit) as exit_info:
            main(["--version"])
        assert exit_info.value.code == 0
    root = cli_main.app
    assert builds == [root]
    other = typer.Typer()

    @other.command()
    def hello():
        typer.echo("hello")

    monkeypatch.setattr(cli_main, "app", other)
    with pytest.raises(SystemExit):
        main([])
    assert builds == [root, other] and "hello" in capsys.readouterr().out
