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
    assert "Angular orders" in (tmp_path / "e" / "report.html").read_text()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["evaluate", "--checkpoint", "nope"], "--checkpoint"),
        (["evaluate"], "--model"),
        (["evaluate", "--checkpoint", "qm9_carbonyl", "--methods", "lime"], "--methods"),
        (["explain", "--checkpoint", "qm9_carbonyl", "--index", "10000"], "--index"),
        (["explain", "--checkpoint", "qm9_carbonyl", "--output", "prob"], "--output"),
        (["train", "--data", "mnist"], "--data"),
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
