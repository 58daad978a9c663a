"""One shape and one vocabulary across the public API and the CLI.

- every public result class (a public class with ``to_dict``) derives from the one Result base;
- one name per public name: no two packages export different things under the same name;
- public signatures use ``random_state``, ``max_epochs``, ``learning_rate`` and ``n_jobs``, never
  their synonyms; CLI commands use ``--seed``, ``--out`` and ``--label``;
- estimators (classes with ``fit``) store parameters in ``__init__`` and take data in ``fit``.
"""

from __future__ import annotations

import importlib
import inspect

import click
import pytest
import typer

from trustlab._results import Result

PACKAGES = [
    "trustlab.agents",
    "trustlab.audit",
    "trustlab.data",
    "trustlab.evals",
    "trustlab.evaluation",
    "trustlab.explain",
    "trustlab.fairness",
    "trustlab.federated",
    "trustlab.governance",
    "trustlab.llm",
    "trustlab.privacy",
    "trustlab.report",
    "trustlab.robustness",
    "trustlab.safety",
    "trustlab.strategic",
    "trustlab.watermark",
]

# a synonym -> the word trustlab uses
SYNONYMS = {
    "seed": "random_state",
    "rng": "random_state",
    "random_seed": "random_state",
    "epochs": "max_epochs",
    "n_epochs": "max_epochs",
    "num_epochs": "max_epochs",
    "lr": "learning_rate",
    "step_size": "learning_rate",
    "n_threads": "n_jobs",
    "num_threads": "n_jobs",
    "n_workers": "n_jobs",
    "workers": "n_jobs",
    "jobs": "n_jobs",
}
CLI_SYNONYMS = {
    "--random-state": "--seed",
    "--rng": "--seed",
    "--output-dir": "--out",
    "--out-dir": "--out",
    "--outdir": "--out",
    "--label-column": "--label",
    "--target-column": "--label",
    "--epochs": "--max-epochs",
    "--lr": "--learning-rate",
    "--threads": "--n-jobs",
    "--workers": "--n-jobs",
    "--jobs": "--n-jobs",
}
# Data-carrying inputs an estimator's __init__ must not take (they belong in fit).
DATA_PARAMETERS = {"X", "y", "data", "background", "inputs", "samples", "groups"}


def _public() -> list[tuple[str, str, object]]:
    found = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            found.append((package, name, getattr(module, name)))
    return found


PUBLIC = _public()


def _callables(obj: object) -> list[tuple[str, object]]:
    """The object itself (function or class __init__) and a class's public methods."""
    if inspect.isclass(obj):
        items = [("__init__", obj.__init__)]
        for attr, value in vars(obj).items():
            if not attr.startswith("_") and (
                inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod))
            ):
                items.append((attr, getattr(obj, attr)))
        return items
    if callable(obj):
        return [("", obj)]
    return []


def _parameters(fn: object) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def test_the_public_api_is_found():
    names = {name for _, name, _ in PUBLIC}
    assert {"multiclass_dcp", "FastPD", "SmoothedClassifier", "rank_models"} <= names
    assert len(PUBLIC) > 80


def test_every_public_result_derives_from_the_one_base():
    offenders = []
    for package, name, obj in PUBLIC:
        if inspect.isclass(obj) and callable(getattr(obj, "to_dict", None)):
            if hasattr(obj, "fit") or package == "trustlab.report":
                continue  # estimators save themselves; report blocks are not results
            if not issubclass(obj, Result):
                offenders.append(f"{package}.{name}")
    assert offenders == []


def test_public_names_live_in_public_modules():
    offenders = []
    for package, name, obj in PUBLIC:
        module = getattr(obj, "__module__", None) or ""
        if module.startswith("trustlab") and any(
            part.startswith("_") for part in module.split(".")
        ):
            offenders.append(f"{package}.{name} is defined in {module}")
    assert offenders == []


def test_public_names_are_unique_across_packages():
    where: dict[str, set[str]] = {}
    for package, name, obj in PUBLIC:
        where.setdefault(name, set()).add(f"{getattr(obj, '__module__', package)}")
    clashes = {name: sorted(mods) for name, mods in where.items() if len(mods) > 1}
    assert clashes == {}


def test_public_signatures_use_one_vocabulary():
    offenders = []
    for package, name, obj in PUBLIC:
        for attr, fn in _callables(obj):
            for parameter in _parameters(fn):
                if parameter in SYNONYMS:
                    where = f"{package}.{name}{'.' + attr if attr else ''}"
                    offenders.append(f"{where}({parameter}=): say {SYNONYMS[parameter]}")
    assert offenders == []


def test_estimators_take_data_in_fit_not_in_init():
    offenders = []
    for package, name, obj in PUBLIC:
        if inspect.isclass(obj) and callable(getattr(obj, "fit", None)):
            data = DATA_PARAMETERS & set(_parameters(obj.__init__))
            if data:
                offenders.append(f"{package}.{name}.__init__ takes {sorted(data)}")
    assert offenders == []


def _commands() -> list[tuple[str, click.Command]]:
    from trustlab.cli.main import app

    found = []

    def walk(command: click.Command, path: str) -> None:
        if isinstance(command, click.Group):
            for sub_name, sub in command.commands.items():
                walk(sub, f"{path} {sub_name}")
        else:
            found.append((path, command))

    walk(typer.main.get_command(app), "trustlab")
    return found


def test_cli_options_use_one_vocabulary():
    commands = _commands()
    assert len(commands) > 15
    offenders = []
    for path, command in commands:
        for param in command.params:
            for option in param.opts:
                if option in CLI_SYNONYMS:
                    offenders.append(f"{path} {option}: say {CLI_SYNONYMS[option]}")
    assert offenders == []


@pytest.mark.parametrize("option", ["--seed", "--out", "--label"])
def test_the_shared_options_are_used_somewhere(option):
    # A vocabulary test that matched no option would pass on any CLI.
    assert any(option in p.opts for _, c in _commands() for p in c.params)
