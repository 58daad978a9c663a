"""Every ``trustlab ...`` command shown in README.md and docs/*.md runs and exits 0.

Each document's examples run in order in one folder (so ``fit --out model/`` then ``predict
--model model/`` works as a reader would type them), in-process through ``trustlab.cli.main``.
The files an example names (``mine.csv``, ``gbm.skops``, ``runs/*.npy`` ...) are made by the
builder of that document below, with the columns and formats its text describes; a document
with CLI examples and no builder fails, so a new example cannot go untested.

What differs from typing the examples:

- Shell globs (``runs/*.npy``) are expanded here, as the shell would.
- Examples that are alternatives write into the same ``--out`` (several ``trustlab audit`` lines
  write ``out/``); an earlier result in that folder is moved aside first, so each runs afresh
  (a rerun into a full folder is refused unless ``--overwrite``, tested with each command).
- Long runs get options set that only shrink their size (:data:`SHRINK`: fewer epochs,
  rounds, samples or tokens; an option the example gives takes the shrunk value in its place,
  since an option given twice is a usage error); every path, file format and other option is
  as written.
- ``llm serve`` listens on a free port instead of 8000 and returns once it serves (in a thread);
  the next examples' ``http://127.0.0.1:8000`` is that server. SmolLM2 loads once per process.

Each document's examples are a background job (tests/background_jobs.py): they run in the suite's
worker process while other tests run, and the test checks the records the run returns.
"""

from __future__ import annotations

import functools
import glob
import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_helpers import with_options

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Options set on long examples (command path -> option, value pairs): sizes only. An option the
#: example gives is given this value instead (an option given twice is a usage error).
SHRINK: dict[tuple[str, ...], list[str]] = {
    ("robustness", "train"): ["--max-epochs", "2"],
    ("robustness", "certify"): ["--n", "200", "--limit", "12"],
    ("explain", "anova-tpnn", "fit"): ["--max-epochs", "5"],
    ("explain", "equigx", "train"): ["--max-epochs", "1", "--n-graphs", "60"],
    ("explain", "equigx", "evaluate"): ["--max-graphs", "4", "--methods", "equigx,random"],
    ("explain", "regions", "train"): [
        "--images",
        "48",
        "--size",
        "32",
        "--max-epochs",
        "1",
        "--pretrain-epochs",
        "1",
        "--segments",
        "16",
    ],
    ("explain", "regions", "predict"): ["--n", "4"],
    ("explain", "regions", "evaluate"): ["--n", "16", "--deltas", "0.99"],
    ("federated", "simulate"): ["--rounds", "2", "--rounds-plus", "1", "--local-epochs", "1"],
    ("safety", "polytope", "fit"): ["--max-epochs", "3", "--max-per-category", "8"],
    ("safety", "polytope", "eval"): ["--n-generate", "1", "--max-new-tokens", "4"],
    ("safety", "polytope", "generate"): ["--max-new-tokens", "4"],
    ("llm", "generate"): ["--max-new-tokens", "4"],
    ("strategic", "simulate"): ["--n-samples", "400", "--max-epochs", "10"],
    ("safety", "transfer", "report"): ["--max-epochs", "2", "--alphas", "1", "--n-random", "1"],
    ("interpret", "sae", "train"): ["--max-texts", "12", "--max-epochs", "1", "--n-latents", "256"],
    ("interpret", "sae", "cache"): ["--max-texts", "12"],
    ("interpret", "sae", "explain"): ["--min-examples", "1", "--max-latents", "3"],
    ("interpret", "sae", "score"): ["--n-test", "5", "--n-not-active", "5", "--n-prompts", "2"],
    ("interpret", "sae", "corpus"): ["--tokens", "20000"],
    ("watermark", "synth"): ["--n", "12"],
    ("watermark", "evaluate"): ["--n", "12"],
    ("watermark", "train"): ["--n", "12", "--max-epochs", "1"],
}


@dataclass(frozen=True)
class Example:
    document: str
    line: int
    text: str

    @property
    def args(self) -> list[str]:
        return shlex.split(self.text, comments=True)[1:]

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def examples_in(path: Path) -> list[Example]:
    """The ``trustlab`` command lines of the fenced code blocks of ``path`` (continuation
    lines joined)."""
    found = []
    text = path.read_text()
    for block in re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        first_line = text.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).splitlines()
        i = 0
        while i < len(lines):
            start, command = i, lines[i].strip()
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            if command.startswith("$ "):
                command = command[2:]
            if command.startswith("trustlab "):
                found.append(Example(path.name, first_line + start, command))
            i += 1
    return found


EXAMPLES = {path.name: examples_in(path) for path in DOCUMENTS}
WITH_EXAMPLES = [name for name, found in EXAMPLES.items() if found]


# ---- the files the examples name --------------------------------------------------------------


def _people(n: int, seed: int, classes=("low", "mid", "high")) -> pd.DataFrame:
    """A table of people: features, a protected column, a region and a label that depends on
    the features (so models learn something)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    income = np.round(rng.lognormal(10, 0.5, n), 2)
    tenure = rng.integers(0, 30, n)
    score = 0.04 * (age - 45) + 1.2 * (np.log(income) - 10) + 0.05 * tenure
    score += rng.normal(0, 0.7, n)
    cuts = np.quantile(score, np.linspace(0, 1, len(classes) + 1)[1:-1])
    label = np.asarray(classes)[np.searchsorted(cuts, score)]
    return pd.DataFrame(
        {
            "age": age,
            "income": income,
            "tenure": tenure,
            "sex": rng.choice(["f", "m"], n),
            "region": rng.choice(["north", "south", "east"], n),
            "y": label,
        }
    )


def _noisy_predictions(labels: pd.Series, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    wrong = rng.random(len(labels)) < 0.3
    return np.where(wrong, rng.choice(classes, len(labels)), labels)


def _dump(model, path: Path) -> None:
    import skops.io

    skops.io.dump(model, path)


def _classifier(table: pd.DataFrame, features: list[str], seed: int = 0):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    return model.fit(table[features], table["y"])


def _aggregates(path: Path) -> None:
    pd.DataFrame(
        {
            "group": ["north", "south", "east"],
            "weight": [0.4, 0.35, 0.25],
            "label:yes": [0.30, 0.50, 0.45],
            "label:no": [0.70, 0.50, 0.55],
            "pred:yes": [0.25, 0.55, 0.40],
            "pred:no": [0.75, 0.45, 0.60],
        }
    ).to_csv(path, index=False)


def _probability_runs(folder: Path, n: int = 120, k: int = 3) -> np.ndarray:
    """Three models' class probabilities in folder/*.npy (better to worse) and the labels."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, k, n)
    folder.mkdir(exist_ok=True)
    for name, signal in (("sharp", 3.0), ("fair", 1.5), ("weak", 0.4)):
        logits = rng.normal(0, 1, (n, k)) + signal * np.eye(k)[labels]
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        np.save(folder / f"{name}.npy", probs)
    return labels


def _readme_files(here: Path) -> None:
    people = _people(300, 0)
    people.to_csv(here / "mine.csv", index=False)
    scored = people.assign(yhat=_noisy_predictions(people["y"], 1))
    scored.to_parquet(here / "scored.parquet")
    scored.to_csv(here / "scored.csv", index=False)
    _dump(_classifier(people, ["age", "income", "tenure"]), here / "clf.skops")
    _aggregates(here / "aggregates.csv")
    np.save(here / "y_test.npy", _probability_runs(here / "runs"))
    # explain fastpd and anova-tpnn: a regression table whose label column sits beside the features
    rng = np.random.default_rng(4)
    table = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    table["y"] = np.sin(table["a"]) + table["b"] * table["c"] + rng.normal(0, 0.1, 300)
    table.to_csv(here / "table.csv", index=False)
    from sklearn.ensemble import GradientBoostingRegressor

    gbm = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)
    _dump(gbm.fit(table[["a", "b", "c"]], table["y"]), here / "gbm.skops")
    np.save(here / "deltas.npy", np.random.default_rng(5).normal(size=(20, 3)))


def _audit_files(here: Path) -> None:
    people = _people(300, 10, classes=("A", "N", "U", "Y"))
    scored = people.assign(y_hat=_noisy_predictions(people["y"], 11))
    scored.to_csv(here / "scored.csv", index=False)
    people.to_parquet(here / "eval.parquet")
    _dump(_classifier(people, ["age", "income", "tenure"]), here / "model.skops")
    _aggregates(here / "agg.csv")
    survey = _people(200, 12).replace({"region": {"north": "Ñuble", "south": "Bío-Bío"}})
    survey.to_csv(here / "survey.csv", index=False, encoding="latin-1")


def _ranking_files(here: Path) -> None:
    labels = _probability_runs(here / "runs")
    np.save(here / "y_test.npy", labels)
    for file, run in (("a.csv", "sharp"), ("b.csv", "weak")):
        probs = np.load(here / "runs" / f"{run}.npy")
        pd.DataFrame(probs, columns=["0", "1", "2"]).to_csv(here / file, index=False)
    rng = np.random.default_rng(6)
    llms = {}
    for name, scale in (("confident", 0.2), ("unsure", 1.5)):
        answers = [list(-np.abs(rng.normal(0, scale, rng.integers(2, 6)))) for _ in range(40)]
        llms[name] = {
            "token_logprobs": answers,
            "key_positions": [int(rng.integers(0, len(a))) for a in answers],
            "correct": [int(rng.random() < 0.5) for _ in answers],
        }
    (here / "llms.json").write_text(json.dumps(llms))


def _anova_files(here: Path) -> None:
    people = _people(300, 20, classes=("no", "yes"))
    table = people.rename(columns={"y": "vote"})[["age", "income", "sex", "vote"]]
    table.insert(0, "id", np.arange(1000, 1000 + len(table)))
    table.to_csv(here / "train.csv", index=False)
    table.drop(columns="vote").head(40).to_csv(here / "new.csv", index=False)


def _fastpd_files(here: Path) -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    people = _people(300, 30, classes=(0, 1))
    table = people.rename(columns={"y": "label", "region": "town"})
    table = table[["age", "income", "tenure", "town", "label"]]
    table.to_csv(here / "table.csv", index=False)
    features = ["age", "income", "tenure"]
    forest = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    _dump(forest.fit(table[features], table["label"]), here / "model.skops")
    import xgboost

    booster = xgboost.XGBClassifier(n_estimators=20, max_depth=3, random_state=0)
    booster.fit(table[features], table["label"])
    booster.save_model(here / "booster.json")
    prep = ColumnTransformer(
        [("num", StandardScaler(), features), ("town", OneHotEncoder(), ["town"])]
    )
    pipeline = Pipeline([("prep", prep), ("forest", forest)])
    _dump(pipeline.fit(table[[*features, "town"]], table["label"]), here / "pipeline.skops")


def _dsi_files(here: Path) -> None:
    np.save(here / "deltas.npy", np.random.default_rng(7).normal(size=(20, 3)))


def _robustness_files(here: Path) -> None:
    costs = np.zeros((10, 10))
    costs[3, 8] = costs[8, 3] = costs[4, 9] = 1.0
    pd.DataFrame(costs).to_csv(here / "costs.csv", header=False, index=False)


def _strategic_files(here: Path) -> None:
    people = _people(300, 40, classes=(0, 1))
    rng = np.random.default_rng(41)
    table = pd.DataFrame(
        {
            "income": np.round(people["income"] / 20000, 3),
            "tenure": people["tenure"] / 10,
            "savings": np.round(rng.lognormal(0, 0.8, len(people)), 3),
            "repaid": people["y"],
        }
    )
    table.to_csv(here / "applicants.csv", index=False)


def _safety_context_files(here: Path) -> None:
    """Two output files in the CASE-Bench authors' released format (a simulated judge)."""
    from trustlab.safety.context import make_synthetic_outputs, synthetic_casebench

    for mode in ("score", "binary"):
        records = make_synthetic_outputs(synthetic_casebench(), mode, model="toy-judge")
        (here / f"output_{mode}.json").write_text(json.dumps(records))


def _neutrality_files(here: Path) -> None:
    """The authors' raw CSVs where a clone of their repository keeps them (test data, GPL-3.0)."""
    shutil.copytree(
        ROOT / "tests" / "safety" / "neutrality_authors_data",
        here / "Approximation_Political_Neutrality" / "Data",
    )


def _nothing(here: Path) -> None:
    """The examples use bundled data only."""


BUILDERS = {
    "README.md": _readme_files,
    "agents-guardrail.md": _nothing,
    "audit.md": _audit_files,
    "evaluation-ranking.md": _ranking_files,
    "evals-inspect.md": _nothing,
    "explain-anova-tpnn.md": _anova_files,
    "explain-equigx.md": _nothing,
    "explain-regions.md": _nothing,
    "governance-participation.md": _nothing,
    "watermark.md": _nothing,
    "explain-fastpd.md": _fastpd_files,
    "federated-uefl.md": _nothing,
    "llm-remote.md": _nothing,
    "misuse.md": _nothing,
    "neutrality.md": _neutrality_files,
    "privacy-dsi.md": _dsi_files,
    "robustness-smoothing.md": _robustness_files,
    "safety-context.md": _safety_context_files,
    "safety-polytope.md": _nothing,
    "steering-transfer.md": _nothing,
    "interpret-sae.md": _nothing,
    "strategic-markets.md": _strategic_files,
}


# ---- running them -------------------------------------------------------------------------------


@functools.cache
def _click_command():
    """The CLI's click command tree, built once a process (0.2 s a build; 135 examples)."""
    import typer

    from trustlab.cli.main import app

    return typer.main.get_command(app)


def _command_path(args: list[str]) -> tuple[str, ...]:
    import click

    command, path = _click_command(), []
    for token in args:
        if not isinstance(command, click.Group) or token not in command.commands:
            break
        command, path = command.commands[token], [*path, token]
    return tuple(path)


def _out_dir(args: list[str], path: tuple[str, ...]) -> str | None:
    if "--out" in args:
        return args[args.index("--out") + 1]
    return "out" if path == ("audit",) else None


def _expand(args: list[str], here: Path) -> list[str]:
    expanded = []
    for arg in args:
        if "*" in arg and " " not in arg and not arg.startswith("-"):  # a path pattern
            matches = sorted(glob.glob(arg, root_dir=here))
            assert matches, f"{arg} matches no file"
            expanded.extend(matches)
        else:
            expanded.append(arg)
    return expanded


_MODELS: dict = {}  # this process's SmolLM2, loaded once (in the worker or here)


def _patch_models(patch: pytest.MonkeyPatch) -> None:
    """Every way a command loads a model returns this process's one SmolLM2; a model folder an
    earlier example wrote (a Hugging Face folder) loads as written."""
    import trustlab.llm
    import trustlab.llm.generations
    import trustlab.llm.server

    real_load = trustlab.llm.load_model

    def load(name, *args, **kwargs):
        if Path(name, "config.json").is_file():
            return real_load(name, *args, **kwargs)
        assert name == "smollm2-135m-instruct", f"an example loads {name}"
        if name not in _MODELS:
            _MODELS[name] = real_load(name)
        return _MODELS[name]

    for module in (trustlab.llm, trustlab.llm.generations, trustlab.llm.server):
        patch.setattr(module, "load_model", load)


class _Servers:
    """``llm serve`` on a free port, serving from a thread (the command returns at once)."""

    def __init__(self, patch: pytest.MonkeyPatch):
        import trustlab.llm

        self.running: list = []
        real = trustlab.llm.make_server

        def make_server(model, host="127.0.0.1", port=8000, **kwargs):
            server = real(model, host, 0, **kwargs)
            server.serve_forever = lambda: self._start(server)
            return server

        patch.setattr(trustlab.llm, "make_server", make_server)

    def _start(self, server) -> None:
        server.start()  # serves from a thread
        self.running.append(server)

    def rewrite(self, args: list[str]) -> list[str]:
        if not self.running:
            return args
        url = self.running[-1].url
        return [a.replace("http://127.0.0.1:8000", url) for a in args]

    def close(self) -> None:
        for server in self.running:
            server.shutdown()


def test_examples_are_found():
    assert sum(len(found) for found in EXAMPLES.values()) >= 40
    assert any(e.text.startswith("trustlab llm serve") for e in EXAMPLES["README.md"])


def test_every_document_with_examples_has_its_files():
    assert set(WITH_EXAMPLES) <= set(BUILDERS), set(WITH_EXAMPLES) - set(BUILDERS)


def run_document(document: str) -> list[dict]:
    """Run ``document``'s examples in order in a fresh folder, as :func:`test_cli_examples_run`
    checks them: one record per example (exit code, output, the audit's files). A background
    job (it runs in the suite's worker process while other tests run) or here."""
    import contextlib
    import io
    import tempfile

    import torch

    from trustlab.cli.main import main

    torch.set_num_threads(1)
    records = []
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        here = Path(folder)
        patch.chdir(here)
        _patch_models(patch)
        BUILDERS[document](here)
        servers = _Servers(patch)
        aside = here / ".earlier"
        try:
            for number, example in enumerate(EXAMPLES[document]):
                args = servers.rewrite(_expand(example.args, here))
                path = _command_path(args)
                out = _out_dir(args, path)
                if out is not None and (here / out).exists():
                    aside.mkdir(exist_ok=True)
                    shutil.move(here / out, aside / f"{number}-{Path(out).name}")
                stdout, stderr, code = io.StringIO(), io.StringIO(), "no SystemExit"
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                    try:
                        main(with_options(args, SHRINK.get(path, [])))
                    except SystemExit as exit_info:
                        code = exit_info.code
                audit_out = here / (out or "out")
                records.append(
                    {
                        "example": str(example),
                        "path": path,
                        "code": code,
                        "stdout": stdout.getvalue(),
                        "stderr": stderr.getvalue()[-2000:],
                        "json": "--json" in args,
                        "out": out,
                        "report": (audit_out / "report.html").is_file(),
                        "predictions": (audit_out / "predictions.csv").is_file(),
                    }
                )
                if code != 0:
                    break  # the next examples may need this one's files
        finally:
            servers.close()
    return records


#: Each document's examples run in the worker while other tests run (tests/background_jobs.py).
BACKGROUND_JOBS = {
    f"cli-examples-{document}": (run_document, {"document": document}) for document in WITH_EXAMPLES
}


@pytest.mark.slow
@pytest.mark.parametrize("document", WITH_EXAMPLES)
def test_cli_examples_run(document, background):
    name = f"cli-examples-{document}"
    records = background.result(name, BACKGROUND_JOBS[name])
    assert len(records) == len(EXAMPLES[document]) or records[-1]["code"] != 0
    for record in records:
        example, path = record["example"], tuple(record["path"])
        assert record["code"] == 0, f"{example}\nexit {record['code']}\n{record['stderr']}"
        if path != ("llm", "serve"):  # serve says where it listens on stderr
            assert record["stdout"].strip() or record["out"] is not None, (
                f"{example} printed nothing"
            )
        if record["json"]:
            json.loads(record["stdout"])  # the whole of stdout is one JSON document
        if path == ("audit",):
            assert record["report"] and record["predictions"], example
