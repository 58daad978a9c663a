"""``trustlab evaluate``: rank models on unlabelled data by their own uncertainty."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab._checks import check_existing_file
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    emit,
    npy_reason,
    progress,
    read_table,
    save,
)
from trustlab.cli._runs import OverwriteOption, options_named, refuse_existing
from trustlab.errors import InputError

__all__ = ["app", "read_predictions", "read_labels", "PREDICTIONS_FORMAT"]

app = typer.Typer(
    no_args_is_help=True,
    help="Model evaluation without labels: rank models by their own uncertainty.",
)

PREDICTIONS_FORMAT = """\
Prediction files (one model per file unless noted; the model's name is the
file name without its extension):

  .npy       an (n, K) array of class probabilities (or logits with
             --from-logits); column k is class k
  .csv       one column per class, with a header naming the classes; one
             row per item (also .tsv and .parquet); a first column with an
             empty header (the index pandas' to_csv writes) is skipped
  .npz       several models: each array's name is a model name
  .json      several models: an object mapping each model name to its (n, K)
             array as nested lists; for a generative model, to an object with
             "token_logprobs" (per item, the list of its answer tokens'
             log-probabilities) and optionally "key_positions" (per item, the
             index of the key token) and "correct" (per item, 0 or 1)

Labels (--labels): .npy, .txt (one label per line) or .csv/.tsv/.parquet
(a header row, then one column, or a column named "label", beside pandas'
index if to_csv wrote one); n labels, the
class indices 0..K-1 (whole numbers, also written 2.0 or 2e+00 as np.savetxt
does) or the class names of the CSV headers.

Example:

  trustlab evaluate rank --predictions runs/*.npy --labels y_test.npy --json

A --out that already holds a ranking (result.json, ranking.png) is refused unless --overwrite.
"""

RESULT_FILES = ("result.json", "ranking.png")


@app.command("rank", help="Rank models by a label-free uncertainty score.\n\n" + PREDICTIONS_FORMAT)
def rank_command(
    predictions: Annotated[
        list[Path] | None,
        typer.Option(
            "--predictions", "-p", help="Prediction files (repeat, or list them after it)."
        ),
    ] = None,
    more_files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILES", help="More prediction files (`--predictions *.npy` expands to these)."
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option("--labels", help="True labels: adds accuracy and rank correlations."),
    ] = None,
    score: Annotated[
        str, typer.Option("--score", help="nll, entropy, max_prob or margin.")
    ] = "nll",
    from_logits: Annotated[
        bool, typer.Option("--from-logits", help="The arrays are logits, not probabilities.")
    ] = False,
    token_position: Annotated[
        str,
        typer.Option(
            "--token-position", help="For token log-probabilities: first, key, mean or sum."
        ),
    ] = "mean",
    calibration_size: Annotated[
        int | None,
        typer.Option(
            "--calibration-size",
            help="With --labels: fit temperatures on this many labelled items, rank the rest.",
        ),
    ] = None,
    n_bootstrap: Annotated[
        int, typer.Option("--n-bootstrap", help="Bootstrap resamples (0: no intervals).")
    ] = 1000,
    confidence_level: Annotated[
        float, typer.Option("--confidence-level", help="Coverage of the intervals.")
    ] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write result.json and ranking.png into this directory."),
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.evaluation import rank_models

    files = [*(predictions or []), *(more_files or [])]
    if not files:
        raise InputError.bad("--predictions", "at least one prediction file", "none")
    refuse_existing(out, overwrite, RESULT_FILES, "a ranking")
    if calibration_size is not None and labels is None:  # the library names calibration_size
        raise InputError(
            "--calibration-size: expected --labels too (the temperatures are fitted on "
            "labelled items), got no --labels",
            argument="--calibration-size",
        )
    outputs, classes, correct = read_predictions(files, encoding)
    label_values = None
    if labels is not None:
        raw = _read_label_values(labels, encoding)
        _refuse_lost_first_label(labels, raw, outputs, encoding)
        if classes is not None:
            label_values = _labels_as_classes(raw, classes)
        else:
            label_values = _labels_as_indices(raw)
    # The class names come from the CSV headers and "correct" from the JSON files.
    names = {"classes": "--predictions", "correct": "--predictions"}
    with progress() as bar, options_named(names), _predictions_named():
        bar.add_task(f"ranking {len(outputs)} models", total=None)
        result = rank_models(
            outputs,
            score=score,
            from_logits=from_logits,
            labels=label_values,
            classes=classes,
            correct=correct if labels is None else None,
            token_position=token_position,
            calibration_size=calibration_size,
            n_bootstrap=n_bootstrap,
            confidence_level=confidence_level,
            random_state=seed,
        )
    # the library's warning names its arguments (evaluation._caveat.CALIBRATION_ADVICE)
    warned = tuple(text.replace(_LIBRARY_ADVICE, _CLI_ADVICE) for text in result.warnings)
    result = dataclasses.replace(result, warnings=warned)
    emit(result, as_json)
    save(result, out, as_json)


_LIBRARY_ADVICE = "(calibration_outputs/calibration_labels or calibration_size)"
_CLI_ADVICE = "(--calibration-size with --labels)"


@contextmanager
def _predictions_named() -> Iterator[None]:
    """An error about one model's outputs (``outputs['m'][3]: ... pass from_logits=True``)
    names ``--predictions['m'][3]`` and ``--from-logits``, the words of the command line; one
    about a JSON file's "correct" list (``correct['m']: ...``) is said to be in --predictions,
    and one about a label (``labels[4]: ...``) names ``--labels[4]``."""
    try:
        yield
    except InputError as exc:
        argument = exc.argument or ""
        if argument.startswith("outputs["):
            text = "--predictions" + str(exc)[len("outputs") :]
        elif argument.startswith("correct["):
            text = f"--predictions: {exc}"
        elif argument.startswith("labels["):  # a label outside the classes: --labels[i]
            raise InputError(f"--{exc}", argument="--labels") from exc
        else:
            raise
        text = text.replace("from_logits=True", "--from-logits")
        raise InputError(text, argument="--predictions") from exc


def read_predictions(paths: list[Path], encoding: str | None = None):
    """Models' outputs from files (see PREDICTIONS_FORMAT).

    Returns
    -------
    outputs : dict of str to ndarray or TokenLogProbs
    classes : list of str or None
        The class names of the CSV headers (the same in every CSV file; other files' columns
        are taken in the same order), else None.
    correct : dict of str to list, or None
        Per-item correctness given in JSON files (for every model, or None).
    """
    outputs: dict[str, Any] = {}
    headers: list[list[str]] = []
    correct: dict[str, Any] = {}
    for path in paths:
        for name, value, header, right in _read_prediction_file(Path(path), encoding):
            if name in outputs:
                raise InputError.bad("--predictions", "distinct model names", f"{name!r} twice")
            outputs[name] = value
            if header is not None:
                headers.append(header)
            if right is not None:
                correct[name] = right
    if any(h != headers[0] for h in headers):
        raise InputError.bad("--predictions", "the same class columns in every CSV", headers)
    if correct and len(correct) != len(outputs):
        missing = [name for name in outputs if name not in correct]
        raise InputError.bad(
            "--predictions", '"correct" for every model or for none', f"none for {missing[:5]}"
        )
    return outputs, (headers[0] if headers else None), (correct or None)


# What numpy raises for a file that is no .npy/.npz: an empty one ends in EOFError (which click
# would report as "interrupted", exit 130), a broken .npz in BadZipFile.
_UNREADABLE = (OSError, ValueError, EOFError, zipfile.BadZipFile)


def _why(exc: Exception) -> str:
    return npy_reason(exc)


def _read_prediction_file(path: Path, encoding: str | None = None):
    """Yield (model name, outputs, class header or None, correctness or None)."""
    import numpy as np

    check_existing_file(path, "--predictions")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            yield path.stem, np.load(path, allow_pickle=False), None, None
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                for key in archive.files:
                    yield key, archive[key], None, None
        elif suffix == ".json":
            yield from _read_json_predictions(path)
        elif suffix in (".csv", ".tsv", ".parquet", ".pq"):
            table = read_table(path, "--predictions", encoding=encoding)
            if len(table.columns) and str(table.columns[0]) == "Unnamed: 0":
                # an empty first header: the row index pandas' to_csv writes, not a class
                table = table.iloc[:, 1:]
            header = [str(c) for c in table.columns]
            _refuse_numbers_as_header(path, header)
            yield path.stem, table.to_numpy(), header, None
        else:
            raise InputError.bad(
                "--predictions", ".npy, .npz, .csv, .tsv, .parquet or .json", str(path)
            )
    except _UNREADABLE as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(
            f"--predictions: could not read {path}: {_why(exc)}", argument="--predictions"
        ) from exc


def _refuse_numbers_as_header(path: Path, header: list[str]) -> None:
    """One line for a table of probabilities written without a header row (``np.savetxt``):
    its first row became the class names and "expected the same class columns in every CSV"
    did not say why. Whole numbers stay class names (pandas' to_csv writes 0, 1, 2)."""
    try:
        numbers = [float(cell) for cell in header]
    except ValueError:
        return
    if numbers and not all(x.is_integer() for x in numbers):
        raise InputError(
            f"--predictions: expected class names in the first row of {path} (a table's first "
            f"row is its header), got numbers {header[:4]}{' ...' if len(header) > 4 else ''}; "
            "if they are a model's outputs, add a header line of class names above them",
            argument="--predictions",
        )


def _read_json_predictions(path: Path):
    from trustlab.evaluation import TokenLogProbs

    content = json.loads(path.read_text(encoding="utf-8-sig"))  # JSON is UTF-8; BOM dropped
    if not isinstance(content, dict):
        raise InputError.bad("--predictions", f"a JSON object of model names in {path}", content)
    for name, value in content.items():
        where = f"--predictions ({path.name}: {name})"
        if isinstance(value, dict):
            if "token_logprobs" not in value:
                raise InputError.bad(where, 'an object with "token_logprobs"', list(value))
            try:
                tokens = TokenLogProbs(value["token_logprobs"], value.get("key_positions"))
            except InputError as exc:  # the library's "sequences[1]: ..." names no file
                text = str(exc).replace("sequences", "token_logprobs", 1)
                raise InputError(f"{where}: {text}", argument="--predictions") from exc
            yield str(name), tokens, None, value.get("correct")
        else:
            yield str(name), value, None, None


def read_labels(path: Path, encoding: str | None = None) -> list:
    """n labels from .npy, .txt (one per line) or a one-column (or "label" column) table; a .txt
    line holding a whole number (``2``, ``2.0``, ``2.000000000000000000e+00``) is that int."""
    return [_number_or_text(v) for v in _read_label_values(path, encoding)]


def _read_label_values(path: Path, encoding: str | None = None) -> list:
    """The labels as stored: a .txt file's lines as text, other files' cells as read."""
    import numpy as np

    path = check_existing_file(path, "--labels")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            return np.load(path, allow_pickle=False).ravel().tolist()
        except _UNREADABLE as exc:
            raise InputError(
                f"--labels: could not read {path}: {_why(exc)}", argument="--labels"
            ) from exc
    if suffix == ".txt":
        return [line.strip() for line in _text(path, encoding).splitlines() if line.strip()]
    table = read_table(path, "--labels", encoding=encoding)
    if table.shape[1] > 1 and table.columns[0] == "Unnamed: 0":  # pandas' index (to_csv)
        table = table.iloc[:, 1:]
    if table.shape[1] == 1:
        return table.iloc[:, 0].tolist()
    if "label" in table.columns:
        return table["label"].tolist()
    raise InputError.bad(
        "--labels", 'one column, or a column named "label"', f"columns {list(table.columns)[:10]}"
    )


def _refuse_lost_first_label(path: Path, raw: list, outputs: dict, encoding: str | None) -> None:
    """One line for a .csv/.tsv of labels written without a header row (``np.savetxt``): its
    first label became the header, one label short; the library's "expected 40 labels, got an
    array of shape (39,)" did not say why."""
    import numpy as np

    first = next(iter(outputs.values()), None)
    if path.suffix.lower() not in (".csv", ".tsv") or not isinstance(first, (np.ndarray, list)):
        return
    if len(raw) != len(first) - 1:
        return
    header = next(iter(_text(path, encoding).splitlines()), "")
    raise InputError(
        f"--labels: expected {len(first)} labels (one per item), got {len(raw)} below the header "
        f"row {header!r} of {path}; a .csv's first row is its header: if {header!r} is a label, "
        "add a header line such as 'label' above it",
        argument="--labels",
    )


def _text(path: Path, encoding: str | None) -> str:
    """A text file's content in ``encoding`` (default UTF-8), or one line naming --encoding."""
    try:
        return path.read_text(encoding=encoding or "utf-8-sig")  # UTF-8, a BOM dropped
    except LookupError:
        raise InputError.bad(
            "--encoding", "a text encoding such as utf-8 or latin-1", encoding
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"--labels: could not read {path} as {encoding or 'utf-8'} text ({exc.reason}); name "
            "its encoding with --encoding, e.g. --encoding latin-1",
            argument="--labels",
        ) from None


def _number_or_text(value):
    """A label read as text as the int it spells (``"2"``, ``"2.0"``, ``"2e+00"``: np.savetxt
    writes floats), else unchanged; a value that is not text is returned as it is."""
    if not isinstance(value, str):
        return value
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return value
    return int(number) if number.is_integer() else value


def _labels_as_indices(values) -> list:
    """Labels as class indices (no CSV header names the classes): whole numbers only, else one
    line naming --labels (the library's hint, classes=, has no option here). Booleans (a .npy
    of them) go on as they are: the library reads them as columns 0/1 of 2-column predictions."""
    if values and all(isinstance(v, bool) for v in values):
        return list(values)
    indices = [_number_or_text(v) for v in values]
    for i, v in enumerate(indices):
        whole = isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
        if not whole:
            raise InputError.bad(
                f"--labels[{i}]",
                "a class index (a whole number 0..K-1, K the predictions' columns; class names "
                "need CSV predictions whose header names the classes)",
                v,
            )
    return indices


def _labels_as_classes(values, classes) -> list[str]:
    """Labels as the CSV headers' class names: the names themselves, or, when none of them is a
    name, the class indices 0..K-1 (the help allows both, 2.0 as 2)."""
    texts = [_label_text(v) for v in values]
    names = {str(c) for c in classes}
    indices = {str(k): str(c) for k, c in enumerate(classes)}
    if not names.intersection(texts):
        keys = [_label_text(_number_or_text(v)) for v in values]
        if all(k in indices for k in keys):
            return [indices[k] for k in keys]
    return texts


def _label_text(value) -> str:
    """A label as the CSV headers spell class names: 2.0 and 2 both as "2"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
