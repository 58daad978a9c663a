"""The CLI contract: --version, --json, exit codes 0 / 2 (bad input, one line) / 1 (failure)."""

import json
import subprocess
import sys

from cli_helpers import run_main as run

from trustlab import __version__


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
    assert "name: expected one of" in lines[0]


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
