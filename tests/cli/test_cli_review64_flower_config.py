"""Review 64 (CLI): flower-app's run-config range checks name the options, not config.*."""

from __future__ import annotations

from cli_helpers import one_line


def test_flower_app_config_range_names_the_option(run, tmp_path):
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "app", "--seed", 2**63)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --seed: expected an integer below 2**63")
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "app", "--rounds", 2**63)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --rounds: expected an integer below 2**63")
    assert not (tmp_path / "app").exists()


def test_flower_app_project_file_is_not_written_in_place(run, tmp_path, monkeypatch):
    # pyproject.toml (the file --out is refused for) went through Path.write_text: a write cut
    # short (a full disk) left half of it, and a rerun was refused as "a Flower App"
    from pathlib import Path

    def cut_short(path, text, **kw):
        with open(path, "w") as fh:
            fh.write(text[:20])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", cut_short)
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "app")
    assert code == 0, err
    import tomllib

    project = tomllib.loads((tmp_path / "app" / "pyproject.toml").read_text())
    assert project["tool"]["flwr"]["app"]["config"]["num-classes"] == 10
