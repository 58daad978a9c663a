"""``trustlab fairness dcp`` and ``dcp-aggregate``: same numbers as the API, clear bad-input errors."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run
from trustlab._results import to_jsonable


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Labels 1..3 (integers), predictions that are fairer for group 'u' than for 'v'."""
    rng = np.random.default_rng(2)
    n = 300
    group = rng.choice(["u", "v"], size=n)
    y = rng.integers(1, 4, size=n)
    noise = rng.random(n) < np.where(group == "u", 0.1, 0.4)
    pred = np.where(noise, rng.integers(1, 4, size=n), y)
    table = pd.DataFrame({"y": y, "yhat": pred, "g": group})
    path = tmp_path_factory.mktemp("fair") / "people.csv"
    table.to_csv(path, index=False)
    return path, table


def aggregate_frame(weights, label_dist, pred_dist, names=("a", "b", "c")):
    frame = pd.DataFrame({"group": [f"g{i}" for i in range(len(weights))], "weight": weights})
    for k, name in enumerate(names):
        frame[f"label:{name}"] = label_dist[:, k]
    for k, name in enumerate(names):
        frame[f"pred:{name}"] = pred_dist[:, k]
    return frame


AGG = aggregate_frame(
    np.array([0.5, 0.3, 0.2]),
    np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]]),
    np.array([[0.25, 0.25, 0.5], [0.5, 0.3, 0.2], [0.3, 0.4, 0.3]]),
)


def dcp_args(path, *extra):
    return [
        "fairness",
        "dcp",
        "--data",
        str(path),
        "--label",
        "y",
        "--pred",
        "yhat",
        "--group",
        "g",
        *extra,
    ]


def test_dcp_json_equals_the_api(people, capsys):
    from trustlab.fairness import multiclass_dcp

    path, table = people
    code, out, _ = run(dcp_args(path, "--json", "--seed", "4", "--n-restarts", "2"), capsys)
    assert code == 0
    expected = multiclass_dcp(table["y"], table["yhat"], table["g"], n_restarts=2, random_state=4)
    assert json.loads(out) == to_jsonable(expected.to_dict())


def test_dcp_summary_is_printed_without_json(people, capsys):
    from trustlab.fairness import multiclass_dcp

    path, table = people
    code, out, _ = run(dcp_args(path, "--no-aggregate"), capsys)
    assert code == 0
    expected = multiclass_dcp(
        table["y"], table["yhat"], table["g"], aggregate=False, random_state=0
    )
    assert out.strip() == expected.summary().strip()


def test_dcp_out_writes_result_json_and_plot(people, tmp_path, capsys):
    path, _ = people
    code, out, err = run(dcp_args(path, "--no-aggregate", "--json", "--out", str(tmp_path)), capsys)
    assert code == 0
    assert json.loads((tmp_path / "result.json").read_text()) == json.loads(out)
    assert (tmp_path / "dcp.png").read_bytes().startswith(b"\x89PNG")
    assert "dcp.png" in err  # the note goes to stderr: stdout stays pure JSON


def test_dcp_labels_option_follows_the_integer_label_column(people, capsys):
    path, _ = people
    code, out, _ = run(dcp_args(path, "--no-aggregate", "--json", "--labels", "3,2,1"), capsys)
    assert code == 0
    assert json.loads(out)["known"]["labels"] == [3, 2, 1]


def test_dcp_labels_must_cover_the_data(people, capsys):
    # the library checks the labels; its error names the true labels (the --label column)
    path, _ = people
    code, _, err = run(dcp_args(path, "--no-aggregate", "--labels", "1,2"), capsys)
    assert code == 2
    line = one_line(err)
    assert re.fullmatch(
        r"trustlab: error: --label: expected values among labels=\[1, 2\], "
        r"got unknown value\(s\) 3",
        line,
    ), line


def test_dcp_missing_column_exits_2_with_one_line(people, capsys):
    path, _ = people
    args = [
        "fairness",
        "dcp",
        "--data",
        str(path),
        "--label",
        "y",
        "--pred",
        "nope",
        "--group",
        "g",
    ]
    code, _, err = run(args, capsys)
    assert code == 2
    assert "--pred: expected a column of the data, got 'nope'" in one_line(err)


def test_dcp_labels_from_the_data_name_the_columns_given(people, tmp_path, capsys):
    """One class in the data names --label (it named --labels, never given); text labels with a
    numeric --pred column name --pred (it blamed --label, with the joined arrays' shape)."""
    path, table = people
    one = table.assign(y=1, yhat=1)
    one.to_csv(tmp_path / "one.csv", index=False)
    code, _, err = run(dcp_args(tmp_path / "one.csv"), capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --label: expected at least 2 distinct labels among the true and "
        "predicted labels, got 1 (1)"
    )
    text = table.assign(y=np.where(table["y"] == 1, "one", "more"), yhat=table["y"] + 0.5)
    text.to_csv(tmp_path / "text.csv", index=False)
    code, _, err = run(dcp_args(tmp_path / "text.csv"), capsys)
    line = one_line(err)
    assert code == 2
    assert line.startswith(
        "trustlab: error: --pred: expected predicted labels of the same type as the true labels "
        "(text, dtype object), got numbers (dtype float64"
    ), line


def test_dcp_refuses_a_score_column_as_predictions(people, tmp_path, capsys):
    """A column of scores (fractional numbers, or more integers than the label has classes) is
    not predicted labels: it was read as hundreds of classes and a DCP printed, exit 0."""
    path, table = people
    rng = np.random.default_rng(5)
    for name, scores in {
        "fractional": rng.random(len(table)),
        "counts": rng.integers(0, 50, size=len(table)),
    }.items():
        table.assign(yhat=scores).to_csv(tmp_path / f"{name}.csv", index=False)
        code, out, err = run(dcp_args(tmp_path / f"{name}.csv"), capsys)
        assert code == 2 and out == ""
        assert one_line(err).startswith("trustlab: error: --pred: expected predicted class labels")
    # whole floats and a predicted class the labels lack are still predicted labels
    whole = table.assign(yhat=table["yhat"].astype(float).where(table.index > 0, 4.0))
    whole.to_csv(tmp_path / "whole.csv", index=False)
    code, _, err = run(dcp_args(tmp_path / "whole.csv"), capsys)
    assert code == 0, err


def test_dcp_bad_option_value_exits_2_with_one_line(people, capsys):
    path, _ = people
    code, _, err = run(dcp_args(path, "--greedy-attempts", "0"), capsys)
    assert code == 2
    assert "--greedy-attempts: expected an integer >= 1" in one_line(err)


def test_dcp_aggregate_json_equals_the_api(tmp_path, capsys):
    from trustlab.fairness import dcp_from_aggregates

    AGG.to_csv(tmp_path / "agg.csv", index=False)
    code, out, _ = run(
        [
            "fairness",
            "dcp-aggregate",
            "--data",
            str(tmp_path / "agg.csv"),
            "--n-restarts",
            "2",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    label_dist = AGG[["label:a", "label:b", "label:c"]].to_numpy()
    pred_dist = AGG[["pred:a", "pred:b", "pred:c"]].to_numpy()
    expected = dcp_from_aggregates(
        AGG["weight"].to_numpy(),
        label_dist,
        pred_dist,
        n_restarts=2,
        random_state=0,
        labels=["a", "b", "c"],
        groups=["g0", "g1", "g2"],
    )
    assert json.loads(out) == to_jsonable(expected.to_dict())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.drop(columns="pred:b"), "a column 'pred:b' to match 'label:b'"),
        (lambda f: f.drop(columns="weight"), "expected a column named 'weight', got columns"),
        (lambda f: f.assign(extra=1), "column 'extra'"),
        (lambda f: f.assign(**{"label:a": 0.9}), "shares summing to 1 in the row of group 'g0'"),
        (lambda f: f.assign(weight=[0.5, 0.5, 0.5]), "shares summing to 1 in the weight column"),
        (lambda f: f.assign(**{"pred:c": [0.5, -0.1, 0.3]}), "'pred:c'.*-0.1.*group 'g1'"),
        (lambda f: f.assign(group=["g0", "g0", "g2"]), "group 'g0' repeated"),
    ],
)
def test_dcp_aggregate_bad_table_exits_2_naming_the_problem(tmp_path, capsys, change, message):
    change(AGG.copy()).to_csv(tmp_path / "agg.csv", index=False)
    code, _, err = run(["fairness", "dcp-aggregate", "--data", str(tmp_path / "agg.csv")], capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --data")
    assert re.search(message, line), line


def test_json_on_stdout_stays_parseable_in_a_real_process(people, tmp_path):
    """Native solvers may print to file descriptor 1; stdout must still hold only the JSON."""
    import subprocess
    import sys

    path, _ = people
    command = [
        sys.executable,
        "-m",
        "trustlab.cli.main",
        *dcp_args(path, "--n-restarts", "1", "--json"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"]["regime"] == "aggregate"


# Issue 18, section 4: reruns into --out are refused without --overwrite; --encoding for CSV;
# notes in the "trustlab:" prefix style.


def test_dcp_commands_refuse_an_existing_result_without_overwrite(people, tmp_path, capsys):
    path, _ = people
    out = tmp_path / "dcp"
    args = dcp_args(path, "--no-aggregate", "--greedy-attempts", "1", "--out", str(out))
    assert run(args, capsys)[0] == 0
    code, _, err = run(args, capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:")
    assert "--overwrite" in err
    assert run([*args, "--overwrite"], capsys)[0] == 0
    AGG.to_csv(tmp_path / "agg.csv", index=False)
    args = ["fairness", "dcp-aggregate", "--data", str(tmp_path / "agg.csv"), "--n-restarts", "1",
            "--out", str(tmp_path / "agg")]  # fmt: skip
    assert run(args, capsys)[0] == 0
    code, _, err = run(args, capsys)
    assert code == 2 and "--overwrite" in one_line(err)


def test_dcp_reads_a_table_in_another_encoding_and_notes_dropped_rows(people, tmp_path, capsys):
    _, table = people
    frame = table.assign(g=table["g"].map({"u": "ü", "v": "v"}))
    frame.loc[0, "y"] = None
    frame.to_csv(tmp_path / "latin.csv", index=False, encoding="latin-1")
    args = dcp_args(tmp_path / "latin.csv", "--no-aggregate", "--greedy-attempts", "1")
    code, _, err = run(args, capsys)
    assert code == 2 and "--encoding" in one_line(err)
    code, _, err = run([*args, "--encoding", "latin-1", "--json"], capsys)
    assert code == 0
    assert one_line(err).startswith("trustlab: note: dropped 1 of 300 rows")


def test_dcp_integer_labels_stay_integers_after_dropping_an_empty_prediction(
    people, tmp_path, capsys
):
    # the empty cell made pandas read the predictions as floats: labels were 0.0, 1.0, 2.0
    _, table = people
    table = table.astype({"yhat": object})
    table.loc[3, "yhat"] = None
    path = tmp_path / "gap.csv"
    table.to_csv(path, index=False)
    code, out, _ = run(dcp_args(path, "--no-aggregate", "--json"), capsys)
    assert code == 0
    labels = json.loads(out)["known"]["labels"]
    assert labels == [1, 2, 3] and all(isinstance(v, int) for v in labels)


def test_dcp_restarts_count_the_known_regime_start(people):
    # --n-restarts N runs the known-regime solution and N - 1 random starts: the help said
    # "Random restarts", promising N random ones
    from typer.main import get_command

    from trustlab.cli.fairness import app
    from trustlab.fairness import dcp_from_aggregates, multiclass_dcp

    (option,) = [p for p in get_command(app).commands["dcp"].params if p.name == "n_restarts"]
    assert "the known-regime solution, then random ones" in option.help
    _, table = people
    result = multiclass_dcp(table["y"], table["yhat"], table["g"], n_restarts=2, random_state=0)
    inputs, known = result.inputs, result.known
    warm = dcp_from_aggregates(
        inputs.group_weights,
        inputs.label_dist,
        inputs.pred_dist,
        n_restarts=1,
        init=(known.baseline, inputs.alpha),
    )
    assert len(result.aggregate.restart_values) == 2
    assert result.aggregate.restart_values[0] == warm.estimate


def test_dcp_whole_floats_beyond_int64_stay_floats_after_dropping_an_empty_cell(tmp_path, capsys):
    path = tmp_path / "big.csv"
    path.write_text("y,yhat,g\n1e20,1e20,u\n2e20,2e20,u\n1e20,2e20,v\n2e20,1e20,v\n,1e20,v\n")
    code, out, _ = run(dcp_args(path, "--no-aggregate", "--json"), capsys)
    assert code == 0
    assert json.loads(out)["known"]["labels"] == [1e20, 2e20]


def test_replacing_a_dcp_result_with_an_aggregate_one_leaves_no_stale_figure(
    people, tmp_path, capsys
):
    # the dcp run's dcp.png stayed beside the aggregate result.json that replaced its result
    path, _ = people
    out = tmp_path / "out"
    assert run(dcp_args(path, "--no-aggregate", "--out", out), capsys)[0] == 0
    AGG.to_csv(tmp_path / "agg.csv", index=False)
    agg = ["fairness", "dcp-aggregate", "--data", tmp_path / "agg.csv", "--n-restarts", "1"]
    code, _, err = run([*agg, "--out", out], capsys)
    assert code == 2 and "already holds a DCP result" in one_line(err)
    assert run([*agg, "--out", out, "--overwrite"], capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["dcp_aggregate.png", "result.json"]
    assert run(dcp_args(path, "--no-aggregate", "--out", out, "--overwrite"), capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["dcp.png", "result.json"]
    # a folder holding only the other command's figure is refused too, not emptied silently
    (out / "result.json").unlink()
    code, _, err = run([*agg, "--out", out], capsys)
    assert code == 2 and "(dcp.png)" in one_line(err)


def test_dcp_groups_whose_numbers_would_merge_stay_apart(tmp_path, capsys):
    # groups 01 and 1 were read as the number 1: three groups became two
    rows = ["y,p,g"] + [f"{y},{p},{g}" for g in ("01", "1", "02") for y, p in [("a", "a"), ("b", "a"), ("b", "b")]]  # fmt: skip
    path = tmp_path / "codes.csv"
    path.write_text("\n".join(rows) + "\n")
    code, out, _ = run(["fairness", "dcp", "--data", str(path), "--label", "y", "--pred", "p",
                        "--group", "g", "--no-aggregate", "--json"], capsys)  # fmt: skip
    assert code == 0
    assert sorted(json.loads(out)["inputs"]["groups"]) == ["01", "02", "1"]


@pytest.mark.parametrize(
    ("groups", "expected"), [(("1", "1.0"), ["1", "1.0"]), (("01", "02"), ["01", "02"])]
)
def test_dcp_aggregate_group_names_are_read_as_written(tmp_path, capsys, groups, expected):
    # "1" and "1.0" were one group (refused as repeated); "01", "02" were named 1 and 2
    path = tmp_path / "agg.csv"
    path.write_text(
        "group,weight,label:yes,label:no,pred:yes,pred:no\n"
        f"{groups[0]},0.4,0.30,0.70,0.25,0.75\n{groups[1]},0.6,0.50,0.50,0.55,0.45\n"
    )
    code, out, _ = run(["fairness", "dcp-aggregate", "--data", str(path), "--json"], capsys)
    assert code == 0
    assert json.loads(out)["groups"] == expected


def test_dcp_labels_names_a_class_written_with_spaces(tmp_path, capsys):
    # the CSV reader keeps 'cat A ' as written, and --labels strips its names: 'cat A' (or
    # 'cat A ') matched no class ("unknown value(s) 'cat A '"), so the class could not be named
    path = tmp_path / "spaced.csv"
    path.write_text("y,yhat,g\ncat A ,cat A ,a\ndog,dog,b\ncat A ,dog,a\ndog,cat A ,b\n")
    for names in ("dog,cat A", "dog, cat A "):
        code, out, err = run(dcp_args(path, "--no-aggregate", "--json", "--labels", names), capsys)
        assert code == 0, err
        assert json.loads(out)["known"]["labels"] == ["dog", "cat A "]
