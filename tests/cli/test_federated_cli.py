"""``trustlab federated``: simulate writes JSON, plots and a resumable checkpoint; flower-app
writes a valid Flower App; bad input is one line and exit code 2."""

import json
import re

import numpy as np

from trustlab.federated import simulate_uefl

SMALL = ["--n-silos", 2, "--rounds", 1, "--rounds-plus", 1, "--max-iterations", 2,
         "--local-epochs", 1, "--threshold", 0.0, "--seed", 3]  # fmt: skip


def test_simulate_writes_results_plots_and_a_checkpoint_matching_the_api(run, tmp_path):
    out = tmp_path / "run"
    code, stdout, _ = run("federated", "simulate", "--out", out, *SMALL, "--json")
    assert code == 0
    data = json.loads(stdout)
    assert json.loads((out / "result.json").read_text()) == data
    assert (out / "accuracy.png").is_file() and (out / "entropy.png").is_file()
    assert (out / "checkpoint.json").is_file()
    api = simulate_uefl(n_silos=2, rounds=1, rounds_plus=1, max_iterations=2, local_epochs=1,
                   threshold_factor=0.0, random_state=3)  # fmt: skip
    assert np.allclose(data["methods"]["uefl"]["entropy"], api.methods["uefl"].entropy)
    assert data["margins"]["fedavg"]["accuracy"] == api.margins("fedavg")["accuracy"]
    # The same command again finds the finished checkpoint and resumes instead of training.
    code, stdout, _ = run("federated", "simulate", "--out", out, *SMALL, "--json")
    assert code == 0 and json.loads(stdout)["resumed"] is True


def test_simulate_defaults_are_the_papers_rule_and_threshold(run, tmp_path):
    one_round = ["--rounds", 1, "--max-iterations", 1, "--local-epochs", 1, "--json"]
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path / "five", *one_round)
    config = json.loads(stdout)["config"]
    assert code == 0 and config["threshold_factor"] == 0.3  # 5 rotated silos: the paper's
    assert config["codeword_gradient"] == "codebook_loss"
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path / "three", "--n-silos", 3,
                          *one_round)  # fmt: skip
    assert code == 0 and json.loads(stdout)["config"]["threshold_factor"] == 0.1


def test_simulate_summary_names_the_extended_silos(run, tmp_path):
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path, *SMALL)
    assert code == 0
    assert "get codebook 1" in stdout and "UEFL - fedavg" in stdout


def test_flower_app_writes_a_project_and_the_launch_commands(run, tmp_path):
    code, stdout, _ = run("federated", "flower-app", "--out", tmp_path / "app", "--n-silos", 3,
                          "--json")  # fmt: skip
    assert code == 0
    data = json.loads(stdout)
    assert (tmp_path / "app" / "pyproject.toml").is_file()
    assert data["commands"].count("flower-supernode") == 3
    assert "partition-id=2 num-partitions=3" in data["commands"]


def test_flower_app_sets_the_model_sizes_for_nodes_with_their_own_data(run, tmp_path):
    import tomllib

    from cli_helpers import one_line

    code, _, _ = run("federated", "flower-app", "--out", tmp_path / "app", "--n-features",
                     144, "--n-classes", 12)  # fmt: skip
    pyproject = tomllib.loads((tmp_path / "app" / "pyproject.toml").read_text())
    config = pyproject["tool"]["flwr"]["app"]["config"]
    assert code == 0 and (config["num-features"], config["num-classes"]) == (144, 12)
    # Sizes the ServerApp's model cannot take are refused before anything is written.
    for option, value in (("--n-features", 50), ("--n-classes", 1)):
        code, _, err = run("federated", "flower-app", "--out", tmp_path / "bad", option, value)
        assert code == 2 and one_line(err).startswith(f"trustlab: error: {option}: expected")
        assert not (tmp_path / "bad").exists()
    # The printed SuperNode ports (port + 1 ...) must be TCP ports too.
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "bad", "--port", 65534,
                       "--n-silos", 2)  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --port: expected a TCP port")


def test_bad_input_is_one_line_and_exit_code_2(run, tmp_path):
    from cli_helpers import one_line

    code, _, err = run("federated", "simulate", "--out", tmp_path, "--n-silos", 1)
    assert code == 2 and "--n-silos" in one_line(err)
    code, _, err = run("federated", "simulate", "--out", tmp_path, "--shift", "zoom")
    assert code == 2 and one_line(err).startswith("trustlab: error: --shift: expected")
    code, _, err = run("federated", "simulate", "--out", tmp_path, "--data", "cifar10")
    assert code == 2 and one_line(err).startswith("trustlab: error: --data: expected")
    code, _, err = run("federated", "simulate", "--out", tmp_path, "--codewords", "both")
    assert code == 2 and one_line(err).startswith("trustlab: error: --codewords: expected")


# Issue 18, section 4: plans and progress, "R + E extension rounds", reruns into --out.


def _fast_lines(monkeypatch):
    """Progress lines without a terminal from the first update on (no 2 s wait)."""
    from functools import partial

    from trustlab.cli import _progress

    monkeypatch.setattr(
        _progress, "LineProgress", partial(_progress.LineProgress, delay=0.0, interval=0.0)
    )


def test_runaway_simulation_is_refused_up_front_without_yes(run, tmp_path):
    from cli_helpers import one_line

    out = tmp_path / "run"
    code, _, err = run("federated", "simulate", "--out", out, "--rounds", 1000000000)
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --yes: UEFL: 10^9 rounds + up to 6")
    assert not (out / "checkpoint.json").exists()


def test_simulate_says_its_plan_and_logs_rounds_of_each_method(run, tmp_path, monkeypatch):
    _fast_lines(monkeypatch)
    code, _, err = run("federated", "simulate", "--out", tmp_path / "run", *SMALL, "--json")
    assert code == 0
    assert ("trustlab: UEFL: 1 round + up to 1 extension round on 2 digits silos (rotation "
            "shift), 1 local epoch per round; then FedAvg for as many rounds") in err  # fmt: skip
    assert re.search(r"trustlab: UEFL rounds: [0-2]/2 \(\d+%\)", err), err
    assert re.search(r"trustlab: FedAvg rounds: [0-2]/2 \(\d+%\)", err), err


def test_rounds_are_reported_as_first_iteration_plus_extension(run, tmp_path):
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path / "a", *SMALL)
    assert code == 0
    assert "UEFL simulation: 2 silos, 1 + 1 extension rounds" in stdout
    assert "FedAvg (no codebook): 2 rounds (as many as UEFL)" in stdout
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path / "b", *SMALL, "--json")
    data = json.loads(stdout)
    assert data["uefl_rounds"] == {"first_iteration": 1, "extension": 1, "total": 2}
    assert "1 + 1 extension rounds" in _library_summaries(data, tmp_path / "b")


def _library_summaries(data, out):
    """The summary of the saved run, as the library prints it (MethodRun included)."""
    from trustlab.federated import simulate_uefl

    result = simulate_uefl(n_silos=2, rounds=1, rounds_plus=1, max_iterations=2, local_epochs=1,
                           threshold_factor=0.0, random_state=3, checkpoint=out)  # fmt: skip
    return result.summary() + "\n" + result.methods["uefl"].summary()


def test_simulate_resumes_and_says_so_or_refuses_other_settings(run, tmp_path):
    from cli_helpers import one_line

    out = tmp_path / "run"
    code, first, err = run("federated", "simulate", "--out", out, *SMALL, "--json")
    assert code == 0 and "resuming" not in err
    code, again, err = run("federated", "simulate", "--out", out, *SMALL, "--json")
    assert code == 0 and f"trustlab: resuming from {out / 'checkpoint.json'}: 4 of" in err
    code, _, err = run("federated", "simulate", "--out", out, *SMALL[:-1], 4)  # another --seed
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --out:") and "--overwrite" in line
    code, stdout, err = run("federated", "simulate", "--out", out, *SMALL[:-1], 4, "--overwrite",
                            "--json")  # fmt: skip
    assert code == 0 and "resuming" not in err and json.loads(stdout)["resumed"] is False
    # --overwrite with bad input, or beyond the --yes bound, deletes nothing
    kept = sorted(p.name for p in out.iterdir())
    for bad in (["--shift", "sideways"], ["--rounds", 10**9]):
        code, _, err = run("federated", "simulate", "--out", out, *SMALL, *bad, "--overwrite")
        assert code == 2 and one_line(err).startswith("trustlab: error:")
        assert sorted(p.name for p in out.iterdir()) == kept
    (out / "checkpoint.json").unlink()  # results without their checkpoint: refused
    code, _, err = run("federated", "simulate", "--out", out, *SMALL)
    assert code == 2 and "--overwrite" in one_line(err)


def test_flower_app_refuses_an_existing_project_without_overwrite(run, tmp_path):
    from cli_helpers import one_line

    args = ["federated", "flower-app", "--out", tmp_path / "app", "--n-silos", 3, "--json"]
    assert run(*args)[0] == 0
    code, _, err = run(*args)
    assert code == 2 and "--overwrite" in one_line(err)
    assert run(*args, "--overwrite")[0] == 0


def test_flower_app_takes_the_mlp_encoder_for_node_data_of_any_width(run, tmp_path):
    # Review 3: --n-features 10 was refused with "use encoder='mlp'", which the CLI could not
    # set: data-path nodes with other than s * s features were out of reach of flower-app.
    import tomllib

    from cli_helpers import one_line

    code, _, err = run("federated", "flower-app", "--out", tmp_path / "cnn", "--n-features", 10)
    assert code == 2 and "encoder" in one_line(err)
    code, _, _ = run("federated", "flower-app", "--out", tmp_path / "app", "--n-features", 10,
                     "--encoder", "mlp")  # fmt: skip
    pyproject = tomllib.loads((tmp_path / "app" / "pyproject.toml").read_text())
    config = pyproject["tool"]["flwr"]["app"]["config"]
    assert code == 0 and (config["encoder"], config["num-features"]) == ("mlp", 10)
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "bad", "--encoder", "rnn")
    assert code == 2 and one_line(err).startswith("trustlab: error: --encoder: expected")


def test_baseline_vq_alone_runs_the_control_without_fedavg(run, tmp_path):
    # The option replaces the default (the help says so since review 4).
    one = ["--n-silos", 2, "--rounds", 1, "--max-iterations", 1, "--local-epochs", 1, "--json"]
    code, stdout, _ = run("federated", "simulate", "--out", tmp_path / "r", "--baseline", "vq",
                          *one)  # fmt: skip
    assert code == 0 and list(json.loads(stdout)["methods"]) == ["uefl", "vq"]
