"""``trustlab safety neutrality build-prompts | prompts`` through trustlab's main()."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from cli_helpers import one_line

DATA = Path(__file__).resolve().parents[1] / "safety" / "neutrality_authors_data"
TASK_COUNTS = {  # the spec's table, written out
    "voting_questions": 44,
    "opinion_pct": 800,
    "opinion_debatune": 1980,
    "opinion_topics": 200,
    "opinion_viewpoint": 5960,
    "conspiracy_good_faith": 170,
    "conspiracy_bad_faith": 170,
    "universal_rights": 960,
    "unsafe_questions": 30,
}


def test_build_prompts_writes_the_full_set(run, tmp_path):
    out = tmp_path / "prompts.csv"
    code, stdout, _ = run("safety", "neutrality", "build-prompts", "--data", DATA, "--out", out)
    assert code == 0
    frame = pd.read_csv(out, keep_default_na=False)
    assert len(frame) == 10_314
    assert frame.groupby("task", sort=False).size().to_dict() == TASK_COUNTS
    assert "10,314" in stdout and "opinion_viewpoint" in stdout and "5,960" in stdout


def test_build_prompts_json_and_jsonl_and_seed(run, tmp_path):
    out = tmp_path / "prompts.jsonl"
    code, stdout, err = run(
        "safety", "neutrality", "build-prompts", "--data", DATA, "--out", out, "--json"
    )
    assert code == 0 and "wrote 10,314 prompts" in err
    assert json.loads(stdout)["counts"] == TASK_COUNTS and json.loads(stdout)["n"] == 10_314
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10_314
    other = tmp_path / "seed11.jsonl"
    code, *_ = run(
        "safety", "neutrality", "build-prompts", "--data", DATA, "--out", other, "--seed", "11"
    )
    assert code == 0
    again = other.read_text(encoding="utf-8").splitlines()
    assert len(again) == 10_314 and again != lines
    assert [json.loads(x)["original"] for x in again] == [json.loads(x)["original"] for x in lines]


def test_missing_column_is_one_line_naming_it(run, tmp_path):
    folder = tmp_path / "data"
    shutil.copytree(DATA, folder)
    path = folder / "data_voting_questions.csv"
    frame = pd.read_csv(path, encoding="utf-8-sig").drop(columns="Question")
    frame.to_csv(path, index=False)
    out = tmp_path / "prompts.csv"
    code, _, err = run("safety", "neutrality", "build-prompts", "--data", folder, "--out", out)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --data: data_voting_questions.csv")
    assert "no column Question" in line
    assert not out.exists()


def test_an_existing_out_is_refused_without_overwrite(run, tmp_path):
    out = tmp_path / "prompts.csv"
    out.write_text("keep me\n")
    args = ("safety", "neutrality", "build-prompts", "--data", DATA, "--out", out)
    code, _, err = run(*args)
    assert code == 2 and "--overwrite" in one_line(err)
    assert out.read_text() == "keep me\n"
    code, *_ = run(*args, "--overwrite")
    assert code == 0 and len(pd.read_csv(out)) == 10_314


def test_bad_out_suffix_and_missing_folder(run, tmp_path):
    code, _, err = run(
        "safety", "neutrality", "build-prompts", "--data", DATA, "--out", tmp_path / "p.txt"
    )
    assert code == 2 and one_line(err).startswith("trustlab: error: --out: expected")
    code, _, err = run(
        "safety",
        "neutrality",
        "build-prompts",
        "--data",
        tmp_path / "nowhere",
        "--out",
        tmp_path / "p.csv",
    )
    assert code == 2 and one_line(err).startswith("trustlab: error: --data: expected")


def test_an_out_that_is_a_folder_is_refused_even_with_overwrite(run, tmp_path):
    folder = tmp_path / "d.csv"
    folder.mkdir()
    for command in (("prompts",), ("build-prompts", "--data", DATA)):
        code, _, err = run("safety", "neutrality", *command, "--out", folder, "--overwrite")
        assert code == 2, err
        assert (
            one_line(err)
            == f"trustlab: error: --out: expected a file name, not a folder, got '{folder}'"
        )
        assert folder.is_dir() and not any(folder.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]  # no temporary file left


def test_own_prompts_summary_and_sample(run, tmp_path):
    code, stdout, _ = run("safety", "neutrality", "prompts", "--json")
    assert code == 0 and json.loads(stdout)["counts"] == {task: 4 for task in TASK_COUNTS}
    out = tmp_path / "own.csv"
    code, stdout, _ = run(
        "safety", "neutrality", "prompts", "--per-task", "2", "--seed", "3", "--out", out
    )
    assert code == 0 and "wrote 18 prompts" in stdout
    assert pd.read_csv(out).groupby("task").size().to_dict() == {t: 2 for t in TASK_COUNTS}
    code, _, err = run("safety", "neutrality", "prompts", "--per-task", "0")
    assert code == 2 and one_line(err).startswith("trustlab: error: --per-task:")
