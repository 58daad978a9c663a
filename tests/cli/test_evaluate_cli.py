"""``trustlab evaluate rank``: file formats, --json and --out, one-line errors with exit 2."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from trustlab.evaluation import TokenLogProbs, rank_models


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=150)
    outputs = {}
    for m, skill in enumerate((0.2, 1.0, 2.0)):
        logits = rng.normal(size=(150, 3))
        logits[np.arange(150), labels] += skill
        outputs[f"model{m}"] = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return outputs, labels


@pytest.fixture
def npy_files(arrays, tmp_path):
    outputs, labels = arrays
    paths = []
    for name, probs in outputs.items():
        np.save(tmp_path / f"{name}.npy", probs)
        paths.append(tmp_path / f"{name}.npy")
    np.save(tmp_path / "y.npy", labels)
    return paths, tmp_path / "y.npy"


def test_npy_files_with_labels_give_the_api_result(run, arrays, npy_files):
    outputs, labels = arrays
    paths, label_path = npy_files
    code, out, _ = run(
        "evaluate",
        "rank",
        "--predictions",
        *paths,
        "--labels",
        label_path,
        "--json",
        "--n-bootstrap",
        100,
        "--seed",
        3,
    )
    assert code == 0
    expected = rank_models(outputs, labels=labels, n_bootstrap=100, random_state=3)
    assert json.loads(out) == json.loads(json.dumps(expected.to_dict()))


def test_summary_lists_models_in_predicted_order(run, arrays, npy_files):
    paths, _ = npy_files
    code, out, _ = run(
        "evaluate", "rank", "-p", paths[0], "-p", paths[1], "-p", paths[2], "--n-bootstrap", 0
    )
    assert code == 0
    order = [out.index(name) for name in ("model2", "model1", "model0")]
    assert order == sorted(order)


def csv_outputs(outputs, classes, folder):
    """Each model's probabilities as a CSV whose header names the classes; their paths."""
    paths = []
    for name, probs in outputs.items():
        pd.DataFrame(probs, columns=classes).to_csv(folder / f"{name}.csv", index=False)
        paths.append(folder / f"{name}.csv")
    return paths


def test_csv_headers_name_the_classes_of_text_labels(run, arrays, tmp_path):
    outputs, labels = arrays
    classes = np.array(["no", "maybe", "yes"])
    paths = csv_outputs(outputs, classes, tmp_path)
    (tmp_path / "y.txt").write_text("\n".join(classes[labels]) + "\n")
    code, out, _ = run(
        "evaluate",
        "rank",
        "-p",
        *paths,
        "--labels",
        tmp_path / "y.txt",
        "--json",
        "--n-bootstrap",
        0,
    )
    assert code == 0
    accuracy = {m["name"]: m["accuracy"] for m in json.loads(out)["models"]}
    for name, probs in outputs.items():
        assert accuracy[name] == pytest.approx(np.mean(probs.argmax(axis=1) == labels), abs=1e-12)


def test_csv_predictions_with_pandas_index_column_skip_it(run, arrays, tmp_path):
    """DataFrame.to_csv() writes the row index under an empty header; it was read as a class
    (refused with a hint to --from-logits, which then ranked with the index as logits)."""
    outputs, labels = arrays
    plain, indexed = [], []
    for name, probs in outputs.items():
        frame = pd.DataFrame(probs, columns=["cat", "dog", "eel"])
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        (tmp_path / "ix").mkdir(exist_ok=True)
        frame.to_csv(tmp_path / "ix" / f"{name}.csv")  # with the index, pandas' default
        plain.append(tmp_path / f"{name}.csv")
        indexed.append(tmp_path / "ix" / f"{name}.csv")
    np.save(tmp_path / "y.npy", labels)
    args = ["evaluate", "rank", "--json", "--n-bootstrap", 0, "--labels", tmp_path / "y.npy"]
    expected = run(*args, "-p", *plain)
    code, out, err = run(*args, "-p", *indexed)
    assert expected[0] == 0 and code == 0, err
    assert json.loads(out) == json.loads(expected[1])
    # labels saved as pd.Series(labels).to_csv(): the index column beside one of labels
    pd.Series(labels).to_csv(tmp_path / "y.csv")
    code, out, err = run(*args[:-2], "--labels", tmp_path / "y.csv", "-p", *plain)
    assert code == 0, err
    assert json.loads(out) == json.loads(expected[1])


def test_csv_predictions_take_class_indices_as_labels(run, arrays, tmp_path):
    """With named CSV columns, labels 0..K-1 are the columns' indices (as the help says); the
    same ranking as the names give."""
    outputs, labels = arrays
    classes = np.array(["no", "maybe", "yes"])
    paths = csv_outputs(outputs, classes, tmp_path)
    np.save(tmp_path / "y.npy", labels)
    (tmp_path / "y.txt").write_text("\n".join(classes[labels]) + "\n")
    args = ["evaluate", "rank", "-p", *paths, "--json", "--n-bootstrap", 0]
    code, out, err = run(*args, "--labels", tmp_path / "y.npy")
    assert code == 0, err
    by_index = json.loads(out)
    assert by_index == json.loads(run(*args, "--labels", tmp_path / "y.txt")[1])
    accuracy = {m["name"]: m["accuracy"] for m in by_index["models"]}
    for name, probs in outputs.items():
        assert accuracy[name] == pytest.approx(np.mean(probs.argmax(axis=1) == labels), abs=1e-12)
    # an index beyond the columns is refused, naming the labels
    np.save(tmp_path / "bad.npy", np.where(labels == 2, 3, labels))
    code, _, err = run(*args, "--labels", tmp_path / "bad.npy")
    assert code == 2 and "--labels" in one_line(err)


def test_txt_labels_written_as_floats_are_class_indices(run, arrays, npy_files, tmp_path):
    """A .txt of "2.0" lines, or np.savetxt's "2.000000000000000000e+00", holds the class indices
    (as the same floats in a .npy do), with .npy or CSV predictions; text that is no index is one
    line naming --labels, not the Python-only classes= (both were refused that way)."""
    outputs, labels = arrays
    paths, y_npy = npy_files
    args = ["evaluate", "rank", "--json", "--n-bootstrap", 0]
    expected = json.loads(run(*args, "-p", *paths, "--labels", y_npy)[1])
    np.savetxt(tmp_path / "y_savetxt.txt", labels)
    (tmp_path / "y_float.txt").write_text("\n".join(f"{v}.0" for v in labels) + "\n")
    for name in ("y_savetxt.txt", "y_float.txt"):
        code, out, err = run(*args, "-p", *paths, "--labels", tmp_path / name)
        assert code == 0, err
        assert json.loads(out) == expected
    csvs = []
    for name, probs in outputs.items():
        pd.DataFrame(probs, columns=["cat", "dog", "eel"]).to_csv(tmp_path / f"{name}.csv",
                                                                  index=False)  # fmt: skip
        csvs.append(tmp_path / f"{name}.csv")
    by_index = json.loads(run(*args, "-p", *csvs, "--labels", y_npy)[1])
    code, out, err = run(*args, "-p", *csvs, "--labels", tmp_path / "y_float.txt")
    assert code == 0, err
    assert json.loads(out) == by_index
    (tmp_path / "y_names.txt").write_text("cat\n" * len(labels))
    code, _, err = run(*args, "-p", *paths, "--labels", tmp_path / "y_names.txt")
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --labels[0]: expected a class index")
    assert "classes=" not in line and "'cat'" in line


def test_txt_labels_with_a_utf8_byte_order_mark_are_read(run, arrays, npy_files, tmp_path):
    """A .txt saved as UTF-8 with a BOM (Notepad, PowerShell) was refused: "got '\\ufeff2'"."""
    _, labels = arrays
    paths, y_npy = npy_files
    args = ["evaluate", "rank", "--json", "--n-bootstrap", 0, "-p", *paths]
    expected = json.loads(run(*args, "--labels", y_npy)[1])
    bom = tmp_path / "y_bom.txt"
    bom.write_text("\n".join(str(v) for v in labels) + "\n", encoding="utf-8-sig")
    code, out, err = run(*args, "--labels", bom)
    assert code == 0, err
    assert json.loads(out) == expected


def test_npz_and_json_hold_several_models(run, arrays, tmp_path):
    outputs, _ = arrays
    np.savez(tmp_path / "zoo.npz", **outputs)
    code, out, _ = run("evaluate", "rank", "-p", tmp_path / "zoo.npz", "--json", "--n-bootstrap", 0)
    assert code == 0 and json.loads(out)["predicted_ranking"][0] == "model2"
    as_json = {name: probs.tolist() for name, probs in outputs.items()}
    (tmp_path / "zoo.json").write_text(json.dumps(as_json))
    code, out_json, _ = run(
        "evaluate", "rank", "-p", tmp_path / "zoo.json", "--json", "--n-bootstrap", 0
    )
    assert code == 0
    assert json.loads(out_json)["predicted_ranking"] == json.loads(out)["predicted_ranking"]


def test_json_predictions_are_utf8_with_or_without_a_byte_order_mark(run, tmp_path):
    """A JSON file with a BOM was refused ("Unexpected UTF-8 BOM"), and one without was read in
    the locale's encoding, not JSON's UTF-8."""
    content = json.dumps({"modèle_a": [[0.6, 0.4]] * 3, "modèle_b": [[0.9, 0.1]] * 3})
    for encoding in ("utf-8-sig", "utf-8"):
        path = tmp_path / f"zoo-{encoding}.json"
        path.write_bytes(content.encode(encoding))
        code, out, err = run("evaluate", "rank", "-p", path, "--json", "--n-bootstrap", 0)
        assert code == 0, err
        assert json.loads(out)["predicted_ranking"] == ["modèle_b", "modèle_a"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"token_logprobs": [[-0.1], []]}, "token_logprobs[1]: expected at least 1 element"),
        ({"token_logprobs": [[-0.1], [0.5]]}, "token_logprobs[1]: expected log-probabilities"),
        ({"token_logprobs": [[-0.1], [-0.2]], "key_positions": [0, 3]}, "key_positions[1]: "),
    ],
    ids=["empty-answer", "positive", "key-outside"],
)
def test_a_bad_generative_answer_names_its_file_and_model(run, tmp_path, answer, message):
    """The error said "sequences[1]: ..." without the file, the model or the JSON key."""
    path = tmp_path / "llms.json"
    path.write_text(json.dumps({"good": {"token_logprobs": [[-0.1], [-0.2]]}, "bad": answer}))
    code, _, err = run("evaluate", "rank", "-p", path, "--n-bootstrap", 0)
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --predictions (llms.json: bad): ")
    assert message in line and "sequences" not in line and "shape ()" not in line


def test_a_bad_correct_list_in_json_is_said_to_be_in_predictions(run, tmp_path):
    """It said "correct['bad']: expected 2 values ..." (no option, a library argument)."""
    path = tmp_path / "llms.json"
    answers = {
        "good": {"token_logprobs": [[-0.1], [-0.2]], "correct": [1, 0]},
        "bad": {"token_logprobs": [[-0.1], [-0.2]], "correct": [1, 2]},
    }
    path.write_text(json.dumps(answers))
    code, _, err = run("evaluate", "rank", "-p", path, "--n-bootstrap", 0)
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --predictions: correct['bad']: ")


def test_json_token_log_probabilities_with_correctness(run, tmp_path):
    rng = np.random.default_rng(1)
    content, outputs, correct = {}, {}, {}
    for name, skill in (("small", 0.4), ("large", 0.8)):
        right = (rng.random(60) < skill).astype(int)
        logp = [np.log(rng.uniform(0.5, 1, 2) if r else rng.uniform(0.1, 0.5, 2)) for r in right]
        keys = rng.integers(0, 2, 60)
        content[name] = {
            "token_logprobs": [lp.tolist() for lp in logp],
            "key_positions": keys.tolist(),
            "correct": right.tolist(),
        }
        outputs[name], correct[name] = TokenLogProbs(logp, keys), right
    (tmp_path / "llms.json").write_text(json.dumps(content))
    code, out, _ = run(
        "evaluate",
        "rank",
        "-p",
        tmp_path / "llms.json",
        "--token-position",
        "key",
        "--json",
        "--n-bootstrap",
        50,
    )
    assert code == 0
    expected = rank_models(
        outputs, correct=correct, token_position="key", n_bootstrap=50, random_state=0
    )
    assert json.loads(out) == json.loads(json.dumps(expected.to_dict()))


def test_out_writes_result_json_and_a_plot(run, npy_files, tmp_path):
    paths, label_path = npy_files
    out_dir = tmp_path / "ranking"
    code, out, _ = run(
        "evaluate",
        "rank",
        "-p",
        *paths,
        "--labels",
        label_path,
        "--out",
        out_dir,
        "--n-bootstrap",
        50,
        "--calibration-size",
        30,
    )
    assert code == 0 and "result.json" in out and "ranking.png" in out and str(out_dir) in out
    result = json.loads((out_dir / "result.json").read_text())
    assert result["n_items"] == 120 and all(m["temperature"] > 0 for m in result["models"])
    assert (out_dir / "ranking.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda paths, y, tmp: ["-p", tmp / "missing.npy"], "--predictions: expected an existing"),
        (lambda paths, y, tmp: ["-p", paths[0]], "at least 2 models"),
        (lambda paths, y, tmp: ["-p", *paths, "--labels", tmp / "short.npy"], "labels: expected"),
        (lambda paths, y, tmp: ["-p", paths[0], "-p", tmp / "half.npy"], "same number of items"),
        (
            lambda paths, y, tmp: ["-p", paths[0], "-p", tmp / "unnormalised.npy"],
            "probability distribution",
        ),
        (lambda paths, y, tmp: ["-p", *paths, "--score", "auc"], "score: expected one of"),
        (lambda paths, y, tmp: ["-p", tmp / "bad.json", "-p", paths[0]], "could not read"),
        (lambda paths, y, tmp: [], "--predictions: expected at least one prediction file"),
        (
            lambda paths, y, tmp: ["-p", *paths, "--n-bootstrap", "-1"],
            "--n-bootstrap: expected an integer >= 0",
        ),
        (lambda paths, y, tmp: ["-p", *paths, "--seed", "-1"], "--seed: expected a non-negative"),
        (
            lambda paths, y, tmp: ["-p", *paths, "--confidence-level", "1"],
            "--confidence-level: expected a number in (0, 1)",
        ),
        # the library's words leaked: "labels[0]: ...", "... when calibration_size is given"
        (
            lambda paths, y, tmp: ["-p", *paths, "--labels", tmp / "outside.npy"],
            "trustlab: error: --labels[0]: expected a class index in [0, 3), got 5",
        ),
        (
            lambda paths, y, tmp: ["-p", *paths, "--calibration-size", "20"],
            "trustlab: error: --calibration-size: expected --labels too",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(run, arrays, npy_files, tmp_path, make_args, message):
    outputs, labels = arrays
    paths, label_path = npy_files
    np.save(tmp_path / "short.npy", labels[:10])
    np.save(tmp_path / "half.npy", outputs["model0"][:75])
    np.save(tmp_path / "unnormalised.npy", outputs["model0"] * 2)
    (tmp_path / "bad.json").write_text("{not json")
    np.save(tmp_path / "outside.npy", np.where(np.arange(150) == 0, 5, labels))
    code, _, err = run("evaluate", "rank", *make_args(paths, label_path, tmp_path))
    assert code == 2
    assert message in one_line(err)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda probs: probs * 2, "--predictions['bad']["),
        (
            lambda probs: np.where(np.arange(3) == 1, np.nan, probs),
            "--predictions['bad']: expected",
        ),
        (lambda probs: probs[:, 0], "--predictions['bad']: expected an (n, K) array"),
    ],
    ids=["unnormalised", "nan", "one-dimensional"],
)
def test_a_bad_prediction_file_is_named_in_the_cli_words(run, arrays, npy_files, change, message):
    """The library's words leaked: "outputs['bad'][0]: ... pass from_logits=True for logits"."""
    paths, _ = npy_files
    bad = paths[0].parent / "bad.npy"
    np.save(bad, change(arrays[0]["model0"]))
    code, _, err = run("evaluate", "rank", "-p", paths[0], "-p", bad)
    assert code == 2
    line = one_line(err)
    assert message in line and "outputs[" not in line and "from_logits=True" not in line


def test_unnormalised_predictions_point_to_the_from_logits_option(run, arrays, npy_files):
    paths, _ = npy_files
    bad = paths[0].parent / "bad.npy"
    np.save(bad, arrays[0]["model0"] * 2)
    code, _, err = run("evaluate", "rank", "-p", paths[0], "-p", bad)
    assert code == 2 and "pass --from-logits for logits" in one_line(err)


# Issue 18, section 4: reruns into --out are refused without --overwrite; --encoding for CSV.


def test_rerun_into_the_same_out_is_refused_without_overwrite(run, npy_files, tmp_path):
    paths, _ = npy_files
    args = ["evaluate", "rank", "-p", *paths, "--n-bootstrap", 0, "--out", tmp_path / "r"]
    assert run(*args)[0] == 0
    code, _, err = run(*args)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:")
    assert "--overwrite" in err
    assert run(*args, "--overwrite")[0] == 0


def test_csv_predictions_and_labels_take_an_encoding(run, arrays, tmp_path):
    outputs, labels = arrays
    names = ["chat", "chien", "élan"]
    for name, probs in outputs.items():
        pd.DataFrame(probs, columns=names).to_csv(
            tmp_path / f"{name}.csv", index=False, encoding="latin-1"
        )
    (tmp_path / "y.txt").write_text("\n".join(names[k] for k in labels), encoding="latin-1")
    files = [tmp_path / f"{name}.csv" for name in outputs]
    args = ["evaluate", "rank", "-p", *files, "--labels", tmp_path / "y.txt", "--n-bootstrap", 0]
    code, _, err = run(*args)
    assert code == 2 and "--encoding" in one_line(err)
    code, out, err = run(*args, "--encoding", "latin-1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["n_items"] == len(labels) and len(result["true_ranking"]) == 3


def test_the_calibration_warning_names_the_cli_option(run, tmp_path):
    """It said "(calibration_outputs/calibration_labels or calibration_size)", Python names."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, 30)
    for name, concentration in [("a", 0.5), ("b", 2), ("c", 8)]:
        np.save(tmp_path / f"{name}.npy", rng.dirichlet(np.ones(3) * concentration, size=30))
    np.save(tmp_path / "y.npy", labels)
    files = [tmp_path / f"{name}.npy" for name in "abc"]
    code, out, err = run("evaluate", "rank", "-p", *files, "--labels", tmp_path / "y.npy")
    assert code == 0, err
    assert "fit temperatures on a small labelled slice (--calibration-size with --labels)" in out
    assert "calibration_size" not in out and "calibration_outputs" not in out
