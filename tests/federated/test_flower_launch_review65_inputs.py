"""run_loopback's and run_flower_app's arguments, checked before any Flower process starts
(review 65); no Flower run here."""

import pytest

from trustlab.errors import InputError
from trustlab.federated.flower_launch import run_loopback


def test_a_workdir_that_is_a_file_is_an_input_error(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    for workdir in (afile, afile / "sub"):  # was a raw FileExistsError / NotADirectoryError
        with pytest.raises(InputError, match="^workdir: expected a directory"):
            run_loopback(n_silos=2, workdir=workdir)


def test_a_missing_certificate_file_is_refused_before_connecting(tmp_path):
    from trustlab.federated.flower_launch import run_flower_app, write_flower_app

    app = write_flower_app(tmp_path / "app", n_silos=2, result_dir=tmp_path / "result")
    # nothing listens at port 1: the old code waited for it, then failed naming superlink
    with pytest.raises(InputError, match="^root_certificates: expected an existing CA cert"):
        run_flower_app(
            app, "127.0.0.1:1", insecure=False, root_certificates=tmp_path / "nope.pem",
            connect_timeout=0.01,
        )  # fmt: skip


def test_refused_settings_leave_no_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # mkdtemp's default folder
    for settings in ({"n_silos": 1}, {"shift": "foo"}, {"config": 5}):
        with pytest.raises(InputError):
            run_loopback(**settings)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("n_silos", "port", "says"),
    [(2, 70000, "^port: expected a TCP port in"), (2, -5, "^port: "), (2, True, "^port: "),
     (0, 9093, "^n_silos: "), (2.5, 9093, "^n_silos: ")],
)  # fmt: skip
def test_launch_commands_checks_its_nodes_and_port(n_silos, port, says):
    from trustlab.federated.flower_launch import launch_commands

    # were printed as commands that fail when pasted (port 70000, -5, True, no SuperNode), or a
    # raw TypeError (2.5)
    with pytest.raises(InputError, match=says):
        launch_commands(n_silos, "uefl-app", port)


def test_a_flwr_home_that_is_a_file_is_refused_before_connecting(tmp_path):
    from trustlab.federated.flower_launch import run_flower_app, write_flower_app

    app = write_flower_app(tmp_path / "app", n_silos=2, result_dir=tmp_path / "result")
    afile = tmp_path / "afile"
    afile.write_text("")
    for home in (afile, afile / "x"):  # a raw FileExistsError / NotADirectoryError
        with pytest.raises(InputError, match="^flwr_home: expected a directory"):
            run_flower_app(app, "127.0.0.1:1", flwr_home=home, connect_timeout=0.01)


def test_run_loopback_refuses_more_silos_than_digits_can_fill(tmp_path):
    # every SuperNode builds a digit silo (at most 40): 41 started 42 processes, each node failing
    with pytest.raises(InputError, match="^n_silos: expected at most 40 SuperNodes"):
        run_loopback(n_silos=41, workdir=tmp_path / "w")
    assert not (tmp_path / "w").exists()


def test_a_result_dir_outside_the_basic_plane_is_written_as_toml_reads_it(tmp_path):
    import tomllib

    from trustlab.federated.flower_launch import write_flower_app

    # JSON's escape "\ud83d\ude00" is no TOML: the project could not be read (TOMLDecodeError
    # in run_flower_app, and in flwr run)
    result = tmp_path / "r\U0001f600 \x7f"
    app = write_flower_app(tmp_path / "app", n_silos=2, result_dir=result)
    config = tomllib.loads(app.pyproject.read_text(encoding="utf-8"))["tool"]["flwr"]["app"]
    assert config["config"]["result-dir"] == str(result.resolve())


def test_the_connection_file_reads_back_a_certificate_path_outside_the_basic_plane(tmp_path):
    import tomllib

    from trustlab.federated import flower_launch

    certificate = str(tmp_path / "ca\U0001f600.crt")  # was written as "\ud83d\ude00": no TOML
    flower_launch._write_connection(tmp_path / "home", "t", "127.0.0.1:9093", False, certificate)
    text = (tmp_path / "home" / "config.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text)["superlink"]["t"]["root-certificates"] == certificate
