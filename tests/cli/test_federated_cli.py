"""``trustlab federated``: simulate writes JSON, plots and a resumable checkpoint; flower-app
writes a valid Flower App; bad input is one line and exit code 2."""

import json

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
