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
    "trustlab.interpret",
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
    "num_workers": "n_jobs",
    "n_processes": "n_jobs",
    "processes": "n_jobs",
    "nthread": "n_jobs",
    "generator": "random_state",
    "random_generator": "random_state",
    "n_epoch": "max_epochs",
    "max_epoch": "max_epochs",
    "learningrate": "learning_rate",
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
    "--output-path": "--out",
    "--save-dir": "--out",
    "--results-dir": "--out",
    "--force": "--overwrite",
    "--target-col": "--label",
    "--label-col": "--label",
    "--y": "--label",
    "--random-seed": "--seed",
    "--num-workers": "--n-jobs",
    "--n-workers": "--n-jobs",
    "--num-epochs": "--max-epochs",
    "--n-epochs": "--max-epochs",
}
# Known offenders, each a lead for the API's owner (review 54): the tests below want exactly these,
# so a new offender fails and so does fixing one of these without updating the list.
# (none left: interpret's Explanation became LatentExplanation, review 54)
KNOWN_NAME_CLASHES: dict[str, list[str]] = {}
# (none left: SAEFit(epochs=) became epochs_run, review 54)
KNOWN_VOCABULARY_OFFENDERS: list[str] = []
# Two spellings of one idea, each used somewhere in the public signatures.
SPLIT_WORDS = [
    ("restarts", "n_restarts"),
    ("max_iter", "max_iterations"),
    ("n_heldout", "n_held_out"),
    ("num_classes", "n_classes"),
    ("num_features", "n_features"),
    ("heldout_fraction", "held_out_fraction"),
    ("steps", "n_steps"),
]
KNOWN_SPLIT_WORDS = [
    # (none for restarts: fairness said restarts= until review 56, now n_restarts= as strategic)
    # privacy (DSIMechanism, dsi_noise), agents.learn_weights vs federated.UEFLConfig
    ("max_iter", "max_iterations"),
    # privacy's steps= (releases composed: calibrate, dsi_epsilon, dsi_noise, DSIMechanism, as
    # Opacus says) vs agents WeightFit.n_steps (labelled steps) and interpret SAEFit.n_steps (Adam
    # steps; SAEFit.steps until review 57)
    ("steps", "n_steps"),
    # (none for n_heldout: interpret SAEFit and safety.transfer said n_heldout until review 56)
    # (none for num_classes / num_features: federated said them until review 56, robustness's
    # SmoothedClassifier, make_cost_matrix, check_cost_matrix and digits_model until review 57)
]
# --output is not --out: commands where it names something else (an input file, an output kind).
KNOWN_OUTPUT_OPTIONS = ["trustlab explain equigx explain", "trustlab privacy dsi"]
# --out without --overwrite: the command resumes what --out holds (--fresh starts over).
RESUMING_COMMANDS = ["trustlab eval run"]
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
    assert clashes == KNOWN_NAME_CLASHES


def test_public_signatures_use_one_vocabulary():
    offenders = []
    for package, name, obj in PUBLIC:
        for attr, fn in _callables(obj):
            for parameter in _parameters(fn):
                if parameter in SYNONYMS:
                    where = f"{package}.{name}{'.' + attr if attr else ''}"
                    offenders.append(f"{where}({parameter}=): say {SYNONYMS[parameter]}")
    assert offenders == KNOWN_VOCABULARY_OFFENDERS


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


def test_every_package_of_the_library_is_checked():
    # trustlab.interpret was left out of PACKAGES, and with it a name clash and a synonym.
    import pkgutil

    import trustlab

    packages = {
        f"trustlab.{info.name}"
        for info in pkgutil.iter_modules(trustlab.__path__)
        if info.ispkg and not info.name.startswith("_")
    }
    assert packages - {"trustlab.cli"} == set(PACKAGES)


def test_one_word_per_idea_across_packages():
    used = {p for _, _, obj in PUBLIC for _, fn in _callables(obj) for p in _parameters(fn)}
    split = [pair for pair in SPLIT_WORDS if set(pair) <= used]
    assert split == KNOWN_SPLIT_WORDS


class _Odd:
    """A value no parameter check would accept."""


def test_estimators_store_their_parameters_unchanged_in_init():
    # No validation and no work in __init__ (scikit-learn's contract, which clone and
    # set_params rely on): every parameter, given a value no check would accept, is stored
    # as it came, under its own name, and nothing else is set.
    estimators = [
        (package, name, obj)
        for package, name, obj in PUBLIC
        if inspect.isclass(obj) and callable(getattr(obj, "fit", None))
    ]
    assert len(estimators) >= 10
    offenders = []
    for package, name, cls in estimators:
        parameters = [
            p
            for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        odd = _Odd()
        try:
            estimator = cls(**{p.name: odd for p in parameters})
        except Exception as error:  # noqa: BLE001 - the offence is any exception at all
            offenders.append(f"{package}.{name}.__init__ raised {type(error).__name__}")
            continue
        stored = vars(estimator)
        if set(stored) != {p.name for p in parameters}:
            offenders.append(f"{package}.{name}.__init__ stores {sorted(stored)}")
        elif any(value is not odd for value in stored.values()):
            offenders.append(f"{package}.{name}.__init__ changes a parameter")
        elif hasattr(estimator, "get_params") and any(
            value is not odd for value in estimator.get_params(deep=False).values()
        ):
            offenders.append(f"{package}.{name}.get_params does not give the parameters back")
    assert offenders == []


def test_output_options_other_than_out_are_the_known_ones():
    users = sorted(path for path, c in _commands() if any("--output" in p.opts for p in c.params))
    assert users == KNOWN_OUTPUT_OPTIONS


def test_every_command_that_writes_to_out_can_overwrite():
    offenders = []
    for path, command in _commands():
        options = {option for p in command.params for option in p.opts}
        if "--out" in options and "--overwrite" not in options:
            offenders.append(path)
    assert offenders == RESUMING_COMMANDS
