"""``trustlab explain equigx`` options refused in review pass 2: an evaluate --fraction that deletes
every node of a graph, and train --radius inf (a network with no message on any edge)."""

from __future__ import annotations

import pytest

from cli_helpers import one_line

pytest.importorskip("e3nn")


def test_cli_fraction_and_radius(run, tmp_path):
    code, _, err = run("explain", "equigx", "evaluate", "--checkpoint", "shapes_platonic",
                       "--methods", "random", "--max-graphs", "2", "--fraction", "0.97")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --fraction: ")
    code, _, err = run("explain", "equigx", "train", "--data", "shapes-same-count",
                       "--n-graphs", "20", "--max-epochs", "1", "--radius", "inf",
                       "--out", tmp_path / "m")  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --radius: expected a finite")
    assert not (tmp_path / "m" / "config.json").exists()


@pytest.mark.parametrize("content", [b"junk\n", b"\x93NUMPY not an archive"])
def test_a_graph_npz_that_is_not_an_archive_says_so(run, tmp_path, content):
    graph = tmp_path / "g.npz"
    graph.write_bytes(content)
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       "--graph", graph)  # fmt: skip
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --graph: ")
    assert "not an .npz archive" in line and "pickled" not in line


def test_the_docs_name_every_option_and_the_graph_file_format():
    """docs/explain-equigx.md listed three commands but neither --graph's format nor most options."""
    from pathlib import Path

    import typer

    from trustlab.cli.explain_equigx import app

    page = (Path(__file__).parents[2] / "docs" / "explain-equigx.md").read_text()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        for param in command.params:
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in page, (name, option)
    assert '{"pos": [[' in page and "np.savez" in page


@pytest.mark.parametrize(
    ("data", "got"), [("qm9", "2 classes, 5 features"), ("shapes-tetris", "8 classes, 1 features")]
)
def test_explain_names_data_of_another_kind_than_the_network(run, data, got):
    """explain --data blamed graph.x for QM9's five features, and explained a tetris piece with
    the platonic network as 'class 0' without a word (evaluate refused both, naming --data)."""
    code, _, err = run("explain", "equigx", "explain", "--checkpoint", "shapes_platonic",
                       "--data", data)  # fmt: skip
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --data: expected graphs with the "
                                         "network's 5 classes and 1 node features"), line  # fmt: skip
    assert got in line


def test_train_k_below_one_is_not_offered_none(run, tmp_path):
    """--k 0 said 'expected None or a positive integer' (the library's k; None cannot be given)."""
    code, _, err = run("explain", "equigx", "train", "--data", "shapes-same-count",
                       "--n-graphs", "20", "--k", "0", "--out", tmp_path / "m")  # fmt: skip
    assert code == 2
    assert one_line(err) == "trustlab: error: --k: expected a positive integer, got 0"
