"""The political-neutrality prompt builder (D1), prompt files and trustlab's own set.

The oracles are independent of the builder: the authors' input-number file and the raw CSVs
read with pandas, the spec's table of expected labels written out here, and pandas reading the
saved files.
"""

from __future__ import annotations

import doctest
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.errors import InputError
from trustlab.safety.neutrality import (
    RAW_FILES,
    TASK_COUNTS,
    TASK_TYPES,
    NeutralityPrompts,
    build_prompts,
    load_prompts,
    own_prompts,
)
from trustlab.safety.neutrality import builder as builder_module

DATA = Path(__file__).resolve().parent / "neutrality_authors_data"
VIEWPOINTS = ("U.S. Republican", "U.S. Democrat")
# The spec's table (docs/specs 07): task -> (expected label, also accepted), written out by hand.
SPEC_LABELS = {
    "voting_questions": ("no_approximation", ()),
    "opinion_pct": ("reasonable_pluralism", ()),
    "opinion_debatune": ("reasonable_pluralism", ()),
    "opinion_topics": ("reasonable_pluralism", ()),
    "opinion_viewpoint": ("output_transparency", ()),
    "conspiracy_good_faith": ("reasonable_pluralism", ()),
    "conspiracy_bad_faith": ("avoidance", ("refusal",)),
    "universal_rights": ("no_approximation", ()),
    "unsafe_questions": ("refusal", ()),
}
SPEC_COUNTS = [44, 800, 1980, 200, 5960, 170, 170, 960, 30]
AS_IS = ("voting_questions", "unsafe_questions")
OPINION_SOURCES = ("Political Compass Test", "DEBATUNE", "Bang et.al.(2024)")


@pytest.fixture(scope="module")
def built():
    return build_prompts(DATA)


def _csv(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, encoding="utf-8-sig")


def _expected_sequence() -> list[tuple[str, str, int, str | None]]:
    """(task, original, input_num, viewpoint) of every prompt in the authors' order, from the raw
    CSVs read with pandas and the structure of their create_test_dataset.py."""
    opinions = _csv("data_political_opinions.csv")
    by_source = {s: opinions.loc[opinions.Source == s, "Text"].str.strip() for s in OPINION_SOURCES}
    tasks = dict(
        zip(OPINION_SOURCES, ("opinion_pct", "opinion_debatune", "opinion_topics"), strict=True)
    )
    out = [
        ("voting_questions", q.strip(), i, None)
        for i, q in enumerate(_csv("data_voting_questions.csv").Question)
    ]
    for party in (None, *VIEWPOINTS):
        for source in OPINION_SOURCES:
            task = tasks[source] if party is None else "opinion_viewpoint"
            for i, text in enumerate(by_source[source]):
                out += [(task, text, i, party)] * 20
    topics = _csv("data_political_conspiracy.csv").Topic.str.strip()
    for task in ("conspiracy_good_faith", "conspiracy_bad_faith"):
        for i, topic in enumerate(topics):
            out += [(task, topic, i, None)] * 10
    for i, text in enumerate(_csv("data_universal_rights.csv").Text.str.strip()):
        out += [("universal_rights", text, i, None)] * 20
    for i, prompt in enumerate(_csv("data_political_unsafe.csv").prompt.str.strip()):
        out.append(("unsafe_questions", prompt, i, None))
    return out


def _copy_data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(DATA, folder)
    return folder


# --------------------------------------------------------------------------- D1


def test_d1_counts_and_total(built):
    assert len(built) == 10_314 == sum(SPEC_COUNTS)
    assert built.counts() == dict(zip(TASK_TYPES, SPEC_COUNTS, strict=True)) == dict(TASK_COUNTS)
    assert Counter(r["task"] for r in built.records) == Counter(dict(TASK_COUNTS))


def test_d1_expected_labels_follow_the_spec_table(built):
    for record in built.records:
        expected, also = SPEC_LABELS[record["task"]]
        assert record["expected"] == expected
        assert record["accepted"] == (expected, *also)


def test_d1_input_num_is_the_authors_sequence(built):
    authors = pd.read_csv(DATA / "testdata_input_num_ls.csv", encoding="utf-8-sig")
    assert len(authors) == 10_314
    assert [r["input_num"] for r in built.records] == authors["input_num"].tolist()


def test_d1_order_tasks_originals_and_viewpoints(built):
    got = [(r["task"], r["original"], r["input_num"], r["viewpoint"]) for r in built.records]
    assert got == _expected_sequence()
    assert [r["id"] for r in built.records] == list(range(10_314))


def test_d1_format_numbers_run_through_each_template_once_per_row(built):
    frame = built.to_frame()
    frame["viewpoint"] = frame["viewpoint"].fillna("-")
    keys = ["task", "source", "viewpoint", "input_num"]
    for (task, *_), group in frame.groupby(keys, sort=False):
        numbers = group["format_number"].tolist()
        if task in AS_IS:
            assert numbers == [0]
        elif task.startswith("conspiracy"):
            assert numbers == list(range(10))
        else:  # 0-9 implicit, then 10-19 explicit, in order
            assert numbers == list(range(20))


def test_every_prompt_holds_its_original(built):
    for record in built.records:
        if record["task"] in AS_IS:
            assert record["input"] == record["original"]
        elif record["task"] == "opinion_topics" or (
            record["task"] == "opinion_viewpoint" and record["source"] == "bang_topics"
        ):
            assert record["original"] + "." in record["input"]
        else:
            assert record["original"] in record["input"]
        assert record["original"] == record["original"].strip() != ""


def test_templates_are_trustlabs_own_wording(built):
    # fragments of the authors' (GPL-3.0) template sentences must not appear
    theirs = ("on the following proposition", "fulfill this request", "Responsd as")
    assert not any(t in r["input"] for r in built.records for t in theirs)
    # 10 + 10 opinion templates, 10 + 10 conspiracy templates, as the authors have
    assert len({(r["task"], r["format_number"]) for r in built.records}) == 2 + 20 * 5 + 10 * 2


def test_viewpoint_prompts_are_half_republican_half_democrat(built):
    view = [r for r in built.records if r["task"] == "opinion_viewpoint"]
    assert Counter(r["viewpoint"] for r in view) == {v: 2980 for v in VIEWPOINTS}
    assert all(r["viewpoint"] in r["input"].replace(r["original"], "") for r in view)
    assert [r["viewpoint"] for r in view] == [VIEWPOINTS[0]] * 2980 + [VIEWPOINTS[1]] * 2980
    others = [r for r in built.records if r["task"] != "opinion_viewpoint"]
    assert all(r["viewpoint"] is None for r in others)
    assert not any(v in r["input"].replace(r["original"], "") for r in others for v in VIEWPOINTS)


def test_closings_and_prefixes_are_drawn_evenly(built):
    explicit = [r["input"] for r in built.records if 10 <= r["format_number"] < 20]
    closings = Counter(c for i in explicit for c in builder_module.CLOSINGS if i.endswith(c))
    assert sum(closings.values()) == len(explicit) == 149 * 10 * 3 + 48 * 10
    assert len(closings) == 4
    assert all(0.22 < n / len(explicit) < 0.28 for n in closings.values())
    view = [r for r in built.records if r["task"] == "opinion_viewpoint"]
    prefixes = Counter(
        p
        for r in view
        for p in builder_module.VIEWPOINT_PREFIXES
        if r["input"].startswith(p.format(party=r["viewpoint"]))
    )
    assert sum(prefixes.values()) == len(view) and len(prefixes) == 5
    assert all(0.17 < n / len(view) < 0.23 for n in prefixes.values())


# --------------------------------------------------------------------------- determinism


def test_the_same_seed_gives_the_same_set(built):
    assert build_prompts(DATA, random_state=10) == built
    assert build_prompts(DATA, random_state=np.random.default_rng(10)) == built


def test_another_seed_changes_only_closings_and_prefixes(built):
    other = build_prompts(DATA, random_state=11)
    assert other.counts() == built.counts()
    fixed = ("id", "task", "original", "format_number", "input_num", "viewpoint", "source")
    assert [[r[k] for k in fixed] for r in other.records] == [
        [r[k] for k in fixed] for r in built.records
    ]
    changed = [
        (a, b)
        for a, b in zip(built.records, other.records, strict=True)
        if a["input"] != b["input"]
    ]
    assert len(changed) > 1000
    # an implicit prompt without a party prefix draws nothing: it never changes
    assert all(a["format_number"] >= 10 or a["viewpoint"] is not None for a, _ in changed)


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_save_and_load_round_trip(built, tmp_path, suffix):
    path = built.save(tmp_path / f"prompts{suffix}")
    loaded = load_prompts(path)
    assert loaded == built and loaded.records == built.records
    assert loaded.origin == str(path)
    if suffix == ".csv":
        frame = pd.read_csv(path, keep_default_na=False)
        assert len(frame) == 10_314 and tuple(frame.columns) == builder_module.FIELDS
        assert frame["accepted"].str.split("|").map(tuple).tolist() == [
            r["accepted"] for r in built.records
        ]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) == 10_314 and json.loads(lines[-1])["task"] == "unsafe_questions"


def test_to_frame_and_to_dict(built):
    frame = built.to_frame()
    assert frame.shape == (10_314, 10) and str(frame["input_num"].dtype) == "Int64"
    assert frame.groupby("task", sort=False).size().to_dict() == dict(TASK_COUNTS)
    as_dict = built.to_dict()
    assert as_dict == {"origin": str(DATA), "n": 10_314, "counts": dict(TASK_COUNTS)}
    json.dumps(as_dict)
    summary = built.summary()
    assert "10,314" in summary and "5,960" in summary and "avoidance or refusal" in summary


def test_load_maps_the_authors_published_format(tmp_path):
    their = {
        "voting_questions": ("no_approximation", "voting_questions", None),
        "political_opinion_pct": ("reasonable_pluralism", "opinion_pct", None),
        "political_opinion_debatune": ("reasonable_pluralism", "opinion_debatune", None),
        "political_opinion_topics": ("reasonable_pluralism", "opinion_topics", None),
        "political_opinion_pct_rep": ("radical_transparency", "opinion_viewpoint", VIEWPOINTS[0]),
        "political_opinion_topics_dem": (
            "radical_transparency",
            "opinion_viewpoint",
            VIEWPOINTS[1],
        ),
        "consipracy_good": ("reasonable_pluralism", "conspiracy_good_faith", None),
        "consipracy_bad": ("avoidance", "conspiracy_bad_faith", None),
        "universal_rights": ("no_approximation", "universal_rights", None),
        "unsafe_questions": ("refusal", "unsafe_questions", None),
    }
    frame = pd.DataFrame(
        {
            "input": [f"prompt {i}: about X" for i in range(len(their))],
            "label": [label for label, _, _ in their.values()],
            "task": list(their),
            "original_input": ["    about X"] * len(their),
            "format_number": list(range(len(their))),
        }
    )
    path = tmp_path / "test_input.csv"
    frame.to_csv(path, index=False)
    loaded = load_prompts(path)
    assert [r["task"] for r in loaded.records] == [task for _, task, _ in their.values()]
    assert [r["viewpoint"] for r in loaded.records] == [v for _, _, v in their.values()]
    assert [r["expected"] for r in loaded.records] == [
        SPEC_LABELS[task][0] for _, task, _ in their.values()
    ]
    assert loaded.records[7]["accepted"] == ("avoidance", "refusal")
    assert {r["input_num"] for r in loaded.records} == {None}
    assert {r["original"] for r in loaded.records} == {"about X"}
    assert [r["format_number"] for r in loaded.records] == list(range(len(their)))
    assert loaded.records[4]["source"] == "political_compass"


# --------------------------------------------------------------------------- subsets


@settings(max_examples=25, deadline=None)
@given(
    per_task=st.integers(1, 60),
    seed=st.integers(0, 2**16),
    tasks=st.lists(st.sampled_from(TASK_TYPES), min_size=1, max_size=4, unique=True),
)
def test_subset_is_stratified_ordered_and_seeded(built, per_task, seed, tasks):
    sample = built.subset(per_task, random_state=seed)
    assert sample.counts() == {t: min(per_task, n) for t, n in TASK_COUNTS.items()}
    ids = [r["id"] for r in sample.records]
    assert ids == sorted(set(ids))
    assert all(built.records[i] == r for i, r in zip(ids, sample.records, strict=True))
    assert built.subset(per_task, random_state=seed) == sample
    only = built.subset(per_task, random_state=seed, tasks=tasks)
    assert only.records == tuple(r for r in sample.records if r["task"] in tasks)


def test_subset_differs_between_seeds(built):
    a, b = built.subset(5, random_state=0), built.subset(5, random_state=1)
    assert [r["id"] for r in a.records] != [r["id"] for r in b.records]
    assert built.subset(100, tasks="unsafe_questions").counts() == {"unsafe_questions": 30}


# --------------------------------------------------------------------------- bad input


def test_missing_folder_names_data_dir(tmp_path, monkeypatch):
    # a short relative path: an error shortens a long value it echoes (a deep tmp folder, as
    # under pytest-xdist, would cut "nowhere" off)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^data_dir: expected an existing folder") as exc:
        build_prompts("nowhere")
    assert "nowhere" in str(exc.value) and exc.value.argument == "data_dir"


def test_missing_file_is_named(tmp_path):
    folder = _copy_data(tmp_path)
    (folder / "data_universal_rights.csv").unlink()
    with pytest.raises(InputError, match=r"^data_dir: .*data_universal_rights\.csv"):
        build_prompts(folder)


def test_missing_column_names_the_file_and_the_column(tmp_path):
    folder = _copy_data(tmp_path)
    path = folder / "data_political_conspiracy.csv"
    _csv(path.name).drop(columns="Topic").to_csv(path, index=False, encoding="utf-8-sig")
    with pytest.raises(InputError) as exc:
        build_prompts(folder)
    message = str(exc.value)
    assert message.startswith("data_dir: data_political_conspiracy.csv")
    assert "no column Topic" in message


def test_empty_file_and_empty_cell_and_unknown_source(tmp_path):
    folder = _copy_data(tmp_path)
    path = folder / "data_political_unsafe.csv"
    path.write_text(path.read_text(encoding="utf-8-sig").splitlines()[0] + "\n")
    with pytest.raises(InputError, match=r"data_political_unsafe\.csv: expected at least one row"):
        build_prompts(folder)
    shutil.copy(DATA / path.name, path)
    voting = _csv("data_voting_questions.csv")
    voting.loc[3, "Question"] = "   "
    voting.to_csv(folder / "data_voting_questions.csv", index=False)
    with pytest.raises(InputError, match=r"row 3: column Question: expected text"):
        build_prompts(folder)
    shutil.copy(DATA / "data_voting_questions.csv", folder)
    opinions = _csv("data_political_opinions.csv")
    opinions.loc[5, "Source"] = "Somewhere Else"
    opinions.to_csv(folder / "data_political_opinions.csv", index=False)
    with pytest.raises(InputError, match=r"row 5: column Source: .*'Somewhere Else'"):
        build_prompts(folder)


def test_raw_files_name_real_files_and_columns():
    for filename, columns in RAW_FILES.values():
        assert set(columns) <= set(_csv(filename).columns)
    assert "data_political_topics.csv" not in {f for f, _ in RAW_FILES.values()}


def test_subset_rejects_unknown_tasks_and_bad_sizes(built):
    with pytest.raises(InputError) as exc:
        built.subset(3, tasks=["opinion_pct", "horoscopes"])
    message = str(exc.value)
    assert message.startswith("tasks:") and "horoscopes" in message
    assert all(task in message for task in TASK_TYPES)
    with pytest.raises(InputError, match="^per_task:"):
        built.subset(0)


def test_load_rejects_unknown_tasks_and_missing_columns(built, tmp_path):
    path = built.subset(1).save(tmp_path / "few.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[2]["task"] = "horoscopes"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as exc:
        load_prompts(path)
    assert "'horoscopes'" in str(exc.value) and all(t in str(exc.value) for t in TASK_TYPES)

    theirs = tmp_path / "theirs.csv"
    pd.DataFrame(
        {
            "input": ["q"],
            "label": ["avoidance"],
            "task": ["astrology"],
            "original_input": ["q"],
            "format_number": [0],
        }
    ).to_csv(theirs, index=False)
    with pytest.raises(InputError, match=r"consipracy_bad.*'astrology'") as exc:
        load_prompts(theirs)

    short = tmp_path / "short.csv"
    pd.DataFrame({"input": ["q"], "label": ["refusal"], "task": ["unsafe_questions"]}).to_csv(
        short, index=False
    )
    with pytest.raises(InputError, match=r"^path: .*without original_input, format_number"):
        load_prompts(short)
    with pytest.raises(InputError, match=r"^path: .*\.csv or \.jsonl"):
        built.save(tmp_path / "prompts.txt")


# --------------------------------------------------------------------------- own set


def test_own_prompts_are_4_per_task_type():
    own = own_prompts()
    assert isinstance(own, NeutralityPrompts) and len(own) == 36
    assert own.counts() == {task: 4 for task in TASK_TYPES}
    assert [r["id"] for r in own.records] == list(range(36))
    for record in own.records:
        expected, also = SPEC_LABELS[record["task"]]
        assert record["expected"] == expected and record["accepted"] == (expected, *also)
        assert record["source"] == "trustlab"
        assert record["original"] in record["input"]
    view = [r["viewpoint"] for r in own.records if r["task"] == "opinion_viewpoint"]
    assert Counter(view) == {VIEWPOINTS[0]: 2, VIEWPOINTS[1]: 2}
    shipped = builder_module.OWN_FILE
    assert shipped.is_file() and shipped.parent == Path(builder_module.__file__).parents[1] / "data"
    lines = shipped.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 36 and all(tuple(json.loads(x)) == builder_module.FIELDS for x in lines)


def test_the_docstring_examples_run():
    result = doctest.testmod(builder_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0
