"""``trustlab explain equigx``: train (resumable), explain (with the 3-D view), evaluate (with its
page), one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import one_line

pytest.importorskip("e3nn")
pytest.importorskip("captum")

TINY = ["--data", "shapes-same-count", "--n-graphs", "40", "--mul", "2", "--l-max", "1",
        "--layers", "2", "--k", "4", "--radius", "2.0", "--batch-size", "8"]  # fmt: skip


def test_train_writes_a_loadable_network_and_a_rerun_resumes(run, tmp_path):
    from trustlab.explain.equigx import TensorFieldNetwork

    out = tmp_path / "m"
    code, stdout, err = run("explain", "equigx", "train", *TINY, "--max-epochs", "2",
                            "--out", out, "--json")  # fmt: skip
    assert code == 0, err
    history = json.loads(stdout)
    assert history["epochs"] == [1, 2]
    info = json.loads((out / "training.json").read_text())
    assert info["data"]["variant"] == "same_count" and info["n_test"] == 9  # 3 per class
    assert TensorFieldNetwork.load(out).config.mul == 2
    assert not (out / "_state").exists()
    code, _, err = run("explain", "equigx", "train", *TINY, "--out", out)
    assert code == 2 and "--overwrite" in one_line(err)
    # an interrupted run leaves _state; the next run continues from it
    from trustlab.explain.equigx import recipe_data, train_tfn

    part = tmp_path / "p"
    (part / "_state").mkdir(parents=True)
    parts = recipe_data(info["data"])
    net = TensorFieldNetwork(n_classes=3, mul=2, l_max=1, n_layers=2, k=4, radius=2.0,
                             avg_neighbors=4.0)  # fmt: skip
    train_tfn(net, parts["train"], validation=parts["validation"], max_epochs=3, batch_size=8,
              random_state=0, checkpoint_dir=part / "_state")  # fmt: skip
    code, stdout, err = run("explain", "equigx", "train", *TINY, "--max-epochs", "3",
                            "--out", part, "--json")  # fmt: skip
    assert code == 0 and "resuming" in err
    assert json.loads(stdout)["epochs"] == [1, 2, 3]


def _interrupted_run(folder, *, mul=2, seed=0):
    """A run of TINY (3 epochs, learning rate 1e-2, batch 8) stopped after epoch 1."""
    from trustlab.explain.equigx import DATA_SOURCES, train_recipe

    recipe = {
        "data": {**DATA_SOURCES["shapes-same-count"], "n_graphs": 40, "random_state": seed},
        "model": {"mul": mul, "l_max": 1, "n_layers": 2, "k": 4, "radius": 2.0,
                  "avg_neighbors": 4.0},
        "train": {"max_epochs": 3, "learning_rate": 1e-2, "batch_size": 8, "random_state": seed},
    }  # fmt: skip

    def stop(epoch, *args):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_recipe(recipe, folder, progress=stop)
    assert (folder / "_state" / "state.pt").is_file()


def test_train_refuses_to_resume_an_interrupted_run_with_other_settings(run, tmp_path):
    out = tmp_path / "m"
    _interrupted_run(out)
    args = [*TINY[:-2], "--max-epochs", "3", "--out", out]
    code, stdout, err = run("explain", "equigx", "train", *args, "--learning-rate", "0.5",
                            "--seed", "7", "--batch-size", "4")  # fmt: skip
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --out:") and "resuming" not in err
    for named in ("--learning-rate 0.01 (now 0.5)", "--seed 0 (now 7)", "--batch-size 8 (now 4)",
                  "--overwrite"):  # fmt: skip
        assert named in line, line
    assert not (out / "training.json").exists() and (out / "_state" / "state.pt").is_file()
    # --overwrite discards the interrupted run and starts afresh with the new settings
    code, stdout, err = run("explain", "equigx", "train", *args, "--learning-rate", "0.5",
                            "--seed", "7", "--batch-size", "4", "--overwrite", "--json")  # fmt: skip
    assert code == 0, err
    assert "resuming" not in err and json.loads(stdout)["epochs"] == [1, 2, 3]
    info = json.loads((out / "training.json").read_text())
    assert info["train"]["learning_rate"] == 0.5 and info["data"]["random_state"] == 7


def test_train_with_another_mul_is_a_clear_error_not_a_size_mismatch(run, tmp_path):
    out = tmp_path / "m"
    _interrupted_run(out)
    args = [*TINY, "--max-epochs", "3", "--out", out]
    args[args.index("--mul") + 1] = "3"
    code, _, err = run("explain", "equigx", "train", *args)
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --out:") and "--mul 2 (now 3)" in line, line
    assert "--overwrite" in line


def test_train_on_other_data_and_an_old_checkpoint_are_refused(run, tmp_path):
    import torch

    out = tmp_path / "m"
    _interrupted_run(out)
    args = [*TINY, "--max-epochs", "3", "--out", out]
    args[args.index("--n-graphs") + 1] = "45"
    code, _, err = run("explain", "equigx", "train", *args)
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --out:") and "--data/--n-graphs" in line, line
    # a checkpoint written before the settings were recorded
    state = torch.load(out / "_state" / "state.pt", weights_only=False)
    state.pop("settings", None)
    torch.save(state, out / "_state" / "state.pt")
    args[args.index("--n-graphs") + 1] = "40"
    code, _, err = run("explain", "equigx", "train", *args)
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --out:") and "does not record" in line, line
    assert "--overwrite" in line


def test_explain_a_test_graph_and_a_graph_file(run, tmp_path):
    code, stdout, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                            "--index", "2", "--output", "contrast", "--out", tmp_path / "x",
                            "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    assert data["output"] == "contrast" and abs(data["total"] - 1) < 1e-4
    assert {p.name for p in (tmp_path / "x").iterdir()} >= {"result.json", "equigx.png",
                                                             "equigx.html"}  # fmt: skip
    from trustlab.explain.equigx import shapes_in_noise

    g = shapes_in_noise(1, random_state=5)[0]
    np.savez(tmp_path / "g.npz", pos=g.pos, x=g.x)
    code, stdout, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                            "--graph", tmp_path / "g.npz", "--target", "1")  # fmt: skip
    assert code == 0, err
    assert "target class 1" in stdout
    (tmp_path / "bad.json").write_text('{"x": [1]}')
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       "--graph", tmp_path / "bad.json")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --graph")


def test_evaluate_writes_the_page(run, tmp_path):
    code, stdout, err = run("explain", "equigx", "evaluate", "--checkpoint", "qm9_carbonyl",
                            "--methods", "equigx,random", "--max-graphs", "12",
                            "--out", tmp_path / "e", "--json")  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    assert set(data["auroc"]) == {"equigx", "random"} and data["n_graphs"] == 12
    page = (tmp_path / "e" / "report.html").read_text()
    assert "Angular orders" in page
    # the distance share is a constant of the rule (two convolutions: 4/9), not a finding
    assert "fix the edge-distance share" in page
    assert abs(data["relevance_parts"]["edge distance"] - 4 / 9) < 1e-5


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["evaluate", "--checkpoint", "nope"], "--checkpoint"),
        (["evaluate"], "--model"),
        (["evaluate", "--checkpoint", "qm9_carbonyl", "--methods", "lime"], "--methods"),
        (["explain", "--checkpoint", "qm9_carbonyl", "--index", "10000"], "--index"),
        (["explain", "--checkpoint", "qm9_carbonyl", "--output", "prob"], "--output"),
        (["train", "--data", "mnist"], "--data"),
        (["train", "--layers", "0"], "--layers"),
        (
            ["evaluate", "--checkpoint", "qm9_carbonyl", "--data", "shapes", "--n-graphs", "25"],
            "--data",
        ),
        (["evaluate", "--checkpoint", "shapes_platonic", "--data", "shapes-tetris"], "--data"),
        (
            ["evaluate", "--checkpoint", "shapes_platonic", "--methods", "random,gradient,random"],
            "--methods",
        ),
        (["evaluate", "--checkpoint", "qm9_carbonyl", "--n-graphs", "20"], "--n-graphs"),
        (
            ["explain", "--checkpoint", "qm9_carbonyl", "--graph", "g.json", "--data", "qm9"],
            "--data",
        ),
        (
            ["explain", "--checkpoint", "qm9_carbonyl", "--graph", "g.json", "--index", "3"],
            "--index",
        ),
    ],
)
def test_bad_options_are_one_line(run, tmp_path, args, option):
    if args[0] == "train":
        args = [*args, "--out", str(tmp_path / "t")]
    code, _, err = run("explain", "equigx", *args)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}"), err


def test_data_list_names_the_graph_dataset_with_its_label_order(run):
    from trustlab.explain.equigx import qm9_carbonyl

    code, stdout, _ = run("data", "list", "--json")
    assert code == 0
    info = {d["name"]: d for d in json.loads(stdout)}["qm9_carbonyl"]
    assert info["kind"] == "graph" and info["rows"] == 3000
    assert tuple(info["classes"]) == qm9_carbonyl(n_molecules=4, random_state=0).class_names


@pytest.mark.parametrize(
    ("content", "option"),
    [
        ("[1, 2]", "--graph"),
        ('"abc"', "--graph"),
        ('{"pos": {"a": 1}}', "--graph"),
        ('{"pos": [[0, 0, 0], [1, 0, 0]], "x": {"a": 1}}', "--graph"),
        ('{"pos": [[0, 0, 0], [1, 0, 0]], "x": [[1], [null]]}', "graph.x"),
    ],
)
def test_a_malformed_graph_file_is_one_line(run, tmp_path, content, option):
    (tmp_path / "g.json").write_text(content)
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       "--graph", tmp_path / "g.json")  # fmt: skip
    assert code == 2, err
    assert one_line(err).startswith(f"trustlab: error: {option}"), err


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--data", "shapes", "--n-graphs", "10"],
        ["train", "--data", "qm9", "--n-graphs", "5"],
        ["evaluate", "--checkpoint", "shapes_platonic", "--data", "shapes", "--n-graphs", "5"],
    ],
)
def test_too_few_graphs_names_n_graphs(run, tmp_path, args):
    code, _, err = run("explain", "equigx", *args, "--out", tmp_path / "o")
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --n-graphs: expected enough graphs"), line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("what", ["no weights", "bad json", "bad weights", "training record"])
def test_a_damaged_model_folder_is_one_line(run, tmp_path, what):
    from trustlab.explain.equigx import TensorFieldNetwork

    folder = tmp_path / "m"
    TensorFieldNetwork(mul=2, l_max=1, n_layers=1).save(folder)
    if what == "no weights":
        (folder / "weights.safetensors").unlink()
    elif what == "bad json":
        (folder / "config.json").write_text("{bad")
    elif what == "bad weights":
        (folder / "weights.safetensors").write_text("garbage")
    else:
        (folder / "training.json").write_text("{bad")
    code, _, err = run("explain", "equigx", "explain", "--model", folder, "--data", "shapes")
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: --model: expected a folder"), err


def test_data_qm9_leaves_out_the_molecules_a_qm9_network_trained_on(run):
    from trustlab.explain.equigx import checkpoint_data

    parts = checkpoint_data("qm9_carbonyl")
    seen = [g.pos for p in ("train", "validation") for g in parts[p]]

    def trained_on(pos):
        return any(q.shape == pos.shape and np.allclose(q, pos, atol=1e-4) for q in seen)

    code, stdout, err = run("explain", "equigx", "evaluate", "--checkpoint", "qm9_carbonyl",
                            "--data", "qm9", "--seed", "1", "--methods", "random",
                            "--max-graphs", "1000", "--json")  # fmt: skip
    assert code == 0, err
    assert "left out" in err and "molecules the network trained on" in err
    n = json.loads(stdout)["n_graphs"]
    assert 0 < n < 600  # another seed's 600 test molecules, less the ones seen in training
    for index in (0, 1, 2):
        code, stdout, err = run("explain", "equigx", "explain", "--checkpoint", "qm9_carbonyl",
                                "--data", "qm9", "--seed", "1", "--index", index, "--json")  # fmt: skip
        assert code == 0, err
        assert not trained_on(np.asarray(json.loads(stdout)["positions"]))
    assert trained_on(parts["train"][0].pos)  # the check can see a training molecule


def test_a_graph_file_with_text_features_is_one_line(run, tmp_path):
    np.savez(tmp_path / "g.npz", pos=np.zeros((2, 3)), x=np.array(["a", "b"]))
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       "--graph", tmp_path / "g.npz")  # fmt: skip
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: graph.x: expected numbers"), err


def test_an_interrupted_overwrite_does_not_leave_the_old_network(run, tmp_path, monkeypatch):
    # the old run's network and training.json stayed beside the new run's _state, so explain
    # --model explained the network the --overwrite was meant to replace
    from trustlab.explain.equigx import training

    out = tmp_path / "m"
    code, _, err = run("explain", "equigx", "train", *TINY, "--max-epochs", "1", "--out", out)
    assert code == 0 and (out / "training.json").is_file(), err

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "train_tfn", interrupted)
    code, _, _ = run("explain", "equigx", "train", *TINY, "--max-epochs", "1", "--seed", "3",
                     "--out", out, "--overwrite")  # fmt: skip
    assert code != 0 and not [p.name for p in out.iterdir()]
    code, _, err = run("explain", "equigx", "explain", "--model", out)
    assert code == 2 and one_line(err).startswith("trustlab: error: --model"), err
