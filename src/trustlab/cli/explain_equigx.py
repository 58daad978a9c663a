"""``trustlab explain equigx``: train, explain and evaluate e3nn tensor-field networks.

``train --data NAME --out DIR`` trains a :class:`~trustlab.explain.equigx.TensorFieldNetwork` on a
generated or bundled dataset (20 % held out for testing, 20 % of the rest for choosing the epoch),
saving the state after every epoch into ``DIR/_state`` so a rerun after a crash or Ctrl-C
continues (only with the same settings: other ones are refused, ``--overwrite`` starts afresh); DIR
ends with ``config.json``, ``weights.safetensors``, ``training.json`` and ``training.png``.

``explain --model DIR|--checkpoint NAME [--data NAME --index I | --graph FILE]`` explains one graph
with EquiGX and writes ``result.json``, ``equigx.png`` and an interactive ``equigx.html``.

``evaluate --model DIR|--checkpoint NAME --out DIR`` scores EquiGX and the baselines against the
ground-truth nodes of the model's held-out test graphs (or ``--data NAME --n-graphs N --seed S``,
freshly generated) and writes the evaluation page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from trustlab._checks import repeated
from trustlab.cli._common import JSON_OPTION_HELP, emit, progress, save, tell, tracker
from trustlab.cli._runs import OverwriteOption, refuse_existing, remove_stale
from trustlab.errors import InputError

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="EquiGX: relevance for e3nn tensor-field networks (train, explain, evaluate).",
)

DATA_NAMES = ("shapes", "shapes-same-count", "shapes-spiral", "shapes-tetris", "qm9")
DataOption = Annotated[
    str | None,
    typer.Option(
        "--data",
        help="shapes (platonic solids in noise), shapes-same-count, shapes-spiral, shapes-tetris "
        "(chiral pieces) or qm9 (the bundled QM9 carbonyl subset).",
    ),
]
ModelOption = Annotated[
    Path | None,
    typer.Option("--model", help="A folder written by 'trustlab explain equigx train'."),
]
CheckpointOption = Annotated[
    str | None,
    typer.Option(
        "--checkpoint", help="A network shipped with trustlab: shapes_platonic or qm9_carbonyl."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]


@app.callback()
def _group() -> None:
    """EquiGX: relevance for e3nn tensor-field networks (train, explain, evaluate)."""


def _data_spec(data: str, n_graphs: int | None, seed: int) -> dict[str, Any]:
    from trustlab.explain.equigx import DATA_SOURCES

    if data not in DATA_SOURCES:
        raise InputError.bad("--data", f"one of {', '.join(DATA_SOURCES)}", data)
    spec = {**DATA_SOURCES[data], "random_state": seed}
    if n_graphs is not None:
        key = "n_molecules" if spec["source"] == "qm9_carbonyl" else "n_graphs"
        spec[key] = n_graphs
    elif spec["source"] == "shapes_in_noise":
        spec["n_graphs"] = 1000
    return spec


def _parts(spec: dict[str, Any]) -> dict[str, Any]:
    """``recipe_data(spec)``; too few molecules is an error about ``--n-graphs``."""
    from trustlab.explain.equigx import recipe_data

    try:
        return recipe_data(spec)
    except InputError as exc:
        if exc.argument != "n_molecules":
            raise
        message = "--n-graphs" + str(exc)[len("n_molecules") :]
        raise InputError(message, argument="--n-graphs") from None


def _unseen(dataset: Any, info: dict[str, Any], data: str) -> Any:
    """The graphs of ``--data`` the network did not train on: the bundled QM9 molecules of a
    network trained on QM9 (another seed splits them otherwise) lose its training and
    validation molecules; generated shapes are always fresh."""
    spec = info.get("data") or {}
    if spec.get("source") != "qm9_carbonyl" or "qm9_index" not in dataset[0].info:
        return dataset
    parts = _parts(spec)
    seen = {g.info["qm9_index"] for name in ("train", "validation") for g in parts[name]}
    keep = [i for i, g in enumerate(dataset) if g.info["qm9_index"] not in seen]
    if not keep:
        raise InputError.bad("--data", "molecules the network did not train on", f"{data} (none)")
    if len(keep) < len(dataset):
        tell(f"trustlab: --data {data}: left out {len(dataset) - len(keep)} of {len(dataset)} "
             "molecules the network trained on", as_json=True)  # fmt: skip
    return dataset.subset(keep)


def _check_fits(dataset: Any, net: Any, data: str) -> None:
    """Refuse ``--data`` whose graphs have other classes or node features than the network's."""
    config = net.config
    if (dataset.n_classes, dataset[0].x.shape[1]) != (config.n_classes, config.n_scalars):
        raise InputError.bad(
            "--data", f"graphs with the network's {config.n_classes} classes and "
            f"{config.n_scalars} node features",
            f"{data} ({dataset.n_classes} classes, {dataset[0].x.shape[1]} features)",
        )  # fmt: skip


def _load_model(model: Path | None, checkpoint: str | None) -> tuple[Any, dict[str, Any]]:
    """The network and its training record (``training.json``; may be empty)."""
    from trustlab.explain.equigx import (
        CHECKPOINTS,
        TensorFieldNetwork,
        checkpoint_info,
        load_checkpoint,
    )

    if (model is None) == (checkpoint is None):
        raise InputError.bad(
            "--model", "either --model DIR or --checkpoint NAME", "both or neither"
        )
    if checkpoint is not None:
        if checkpoint not in CHECKPOINTS:
            raise InputError.bad("--checkpoint", f"one of {', '.join(CHECKPOINTS)}", checkpoint)
        return load_checkpoint(checkpoint), checkpoint_info(checkpoint)
    if not (model / "config.json").is_file():
        raise InputError.bad(
            "--model", "a folder written by 'trustlab explain equigx train'", str(model)
        )
    record = model / "training.json"
    try:
        net = TensorFieldNetwork.load(model)
        try:
            info = json.loads(record.read_text()) if record.is_file() else {}
        except ValueError as exc:
            raise ValueError(f"{record.name}: {exc}") from exc
    except (InputError, ValueError) as exc:  # a damaged folder: its JSON or weights
        why = exc.__cause__ if isinstance(exc, InputError) and exc.__cause__ else exc
        raise InputError(
            f"--model: expected a folder written by 'trustlab explain equigx train', got {model} "
            f"({why})",
            argument="--model",
        ) from exc
    return net.eval(), info


#: train_tfn's settings -> the train options that set them (the data: its fingerprint).
_RESUME_OPTIONS = {
    "mul": "--mul", "l_max": "--l-max", "n_layers": "--layers", "k": "--k", "radius": "--radius",
    "avg_neighbors": "--k", "n_classes": "--data", "n_scalars": "--data",
    "max_epochs": "--max-epochs", "learning_rate": "--learning-rate", "batch_size": "--batch-size",
    "random_state": "--seed",
}  # fmt: skip


def _graphs_differ(differences: dict[str, tuple[Any, Any]]) -> str | None:
    """One phrase for other training/validation graphs (their fingerprints), or None when the
    seed already says it."""
    train, validation = (differences.pop(key, None) for key in ("train", "validation"))
    if train is None and validation is None:
        return None
    old, new = (str(v).split(", sha256")[0] for v in (train or validation))
    if old == new:
        return None if "random_state" in differences else "other graphs (--data/--n-graphs)"
    return f"--data/--n-graphs: {old} for training (now {new})"


def _check_resume(out: Path, recipe: dict[str, Any], overwrite: bool) -> bool:
    """Whether ``train`` resumes the interrupted run in ``out/_state``: refused (before any
    training) when that run had other settings, or discarded with ``--overwrite``."""
    import shutil

    from trustlab.explain.equigx import recipe_data
    from trustlab.explain.equigx.model import TFNConfig
    from trustlab.explain.equigx.training import ResumeMismatch, check_resume, describe_differences

    state = out / "_state"
    if not (state / "state.pt").is_file():
        return False
    parts = recipe_data(recipe["data"])
    train = parts["train"]
    config = TFNConfig(n_classes=train.n_classes, n_scalars=train[0].x.shape[1], **recipe["model"])
    try:
        return check_resume(state, config, train, parts["validation"], **recipe["train"])
    except ResumeMismatch as exc:
        differences = dict(exc.differences)
        if "k" in differences:  # --k sets avg_neighbors too
            differences.pop("avg_neighbors", None)
        why = f"{exc.path} {exc.reason}"
        graphs = _graphs_differ(differences)
        named = [describe_differences(differences, _RESUME_OPTIONS)] if differences else []
        if named or graphs:
            listed = ", ".join([*named, *([graphs] if graphs else [])])
            why = f"{state} holds an interrupted run with other settings ({listed})"
        if not overwrite:
            raise InputError(
                f"--out: {why}; rerun with its settings to resume it, or pass --overwrite to "
                "discard it and start afresh (or choose another --out)",
                argument="--out",
            ) from None
        tell(f"trustlab: discarding the interrupted run in {state} (--overwrite)", as_json=True)
        shutil.rmtree(state)
        return False


#: What a finished ``train`` writes into --out (besides ``_state`` while it runs).
_TRAIN_FILES = (
    "training.json", "config.json", "weights.safetensors", "result.json", "training.png",
)  # fmt: skip


@app.command("train")
def train(
    data: DataOption = "shapes",
    out: Annotated[
        Path, typer.Option("--out", help="Folder for the network and its record.")
    ] = Path("equigx_model"),
    n_graphs: Annotated[
        int | None,
        typer.Option(
            "--n-graphs", help="Graphs to generate (shapes: 1000) or molecules (qm9: all)."
        ),
    ] = None,
    mul: Annotated[int, typer.Option("--mul", help="Channels per irrep.")] = 4,
    l_max: Annotated[int, typer.Option("--l-max", help="Highest angular order.")] = 2,
    layers: Annotated[int, typer.Option("--layers", help="Convolutions.")] = 2,
    k: Annotated[int, typer.Option("--k", help="Neighbours per node.")] = 8,
    radius: Annotated[float, typer.Option("--radius", help="Radial cut-off.")] = 2.5,
    max_epochs: Annotated[
        int, typer.Option("--max-epochs", help="Training epochs (passes over the graphs).")
    ] = 20,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="Adam's rate.")] = 1e-2,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Graphs per training step.")] = 32,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the data and the training.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Train a tensor-field network; a rerun into the same --out resumes an interrupted run
    (with the same settings; --overwrite discards one with other settings)."""
    from trustlab.explain.equigx import train_recipe

    refuse_existing(out, overwrite, ("training.json",), "a trained network")
    if layers < 1:  # the network's n_layers
        raise InputError.bad("--layers", "a positive integer", layers)
    if k < 1:  # the network's k, where None (no kNN) cannot be given
        raise InputError.bad("--k", "a positive integer", k)
    spec = _data_spec(data, n_graphs, seed)
    recipe = {
        "data": spec,
        "model": {"mul": mul, "l_max": l_max, "n_layers": layers, "k": k, "radius": radius,
                  "avg_neighbors": float(k)},
        "train": {"max_epochs": max_epochs, "learning_rate": learning_rate,
                  "batch_size": batch_size, "random_state": seed},
    }  # fmt: skip
    _parts(spec)  # too few graphs: refused before any training
    if _check_resume(out, recipe, overwrite):
        tell(f"trustlab: resuming the interrupted run in {out / '_state'}", as_json=True)
    if overwrite:  # an interrupted run must not leave the old network looking like its result
        remove_stale(out, _TRAIN_FILES)
    with progress() as bar:
        task = bar.add_task(f"training on {data}", total=max_epochs)

        def report(epoch: int, total: int, loss: float, acc: float, val: float) -> None:
            bar.update(task, completed=epoch, description=f"epoch {epoch}: loss {loss:.3f}, "
                       f"validation accuracy {val:.3f}")  # fmt: skip

        history = train_recipe(recipe, out, progress=report)
    emit(history, as_json)
    info = json.loads((out / "training.json").read_text())
    tell(f"test accuracy {info['test_accuracy']:.3f} on {info['n_test']} held-out graphs", as_json)
    save(history, out, as_json)


def _one_graph(
    net: Any, info: dict[str, Any], data: str | None, index: int, graph: Path | None, seed: int
) -> Any:
    if graph is not None:
        # the graph file is explained, not a test graph: --data/--index would be ignored
        if data is not None:
            raise InputError.bad("--data", "no --data with --graph FILE", data)
        if index != 0:
            raise InputError.bad("--index", "no --index with --graph FILE", index)
        if not graph.is_file():
            raise InputError.bad("--graph", "a .npz or .json file with 'pos' and 'x'", str(graph))
        try:
            if graph.suffix.lower() == ".npz":
                import zipfile

                if not zipfile.is_zipfile(graph):  # numpy would call it pickled object data
                    raise ValueError("not an .npz archive (np.savez writes one)")
                with np.load(graph) as f:
                    pos, x = f["pos"], (f["x"] if "x" in f else None)
            else:
                obj = json.loads(graph.read_text())
                if not isinstance(obj, dict):
                    kind = {list: "array", str: "string"}.get(type(obj), type(obj).__name__)
                    raise ValueError(f"a JSON {kind}, not an object")
                pos = np.asarray(obj["pos"], dtype=float)
                x = None if obj.get("x") is None else np.asarray(obj["x"], dtype=float)
        except (KeyError, ValueError, TypeError, OSError) as exc:
            raise InputError(  # the reason in full (a value given to .bad is shortened)
                "--graph: expected a .npz or .json file with 'pos' (n, 3) and optionally 'x' "
                f"(n, f), got {graph}: {exc}",
                argument="--graph",
            ) from exc
        if x is None:  # the shapes' single feature 1 is the default; other networks need x
            if net.config.n_scalars != 1:
                raise InputError(
                    f"--graph: expected 'x' ({net.config.n_scalars} features per node, as the "
                    f"network was trained on) in {graph}, which has none (without 'x' every "
                    "node gets the single feature 1)",
                    argument="--graph",
                )
            x = np.ones((len(pos), 1))
        return {"pos": pos, "x": x}
    if data is None:
        if "data" not in info:
            raise InputError.bad("--data", "--data NAME or --graph FILE for this model", None)
        dataset = _parts(info["data"])["test"]
    else:
        n = None if data == "qm9" else 50  # all molecules: most of them may be seen ones
        dataset = _unseen(_parts(_data_spec(data, n, seed))["test"], info, data)
        _check_fits(dataset, net, data)
    if not 0 <= index < len(dataset):
        raise InputError.bad("--index", f"a graph index in 0..{len(dataset) - 1}", index)
    return dataset[index]


@app.command("explain")
def explain(
    model: ModelOption = None,
    checkpoint: CheckpointOption = None,
    data: DataOption = None,
    index: Annotated[int, typer.Option("--index", help="Which test graph to explain.")] = 0,
    graph: Annotated[
        Path | None, typer.Option("--graph", help="A graph file (.npz or .json: pos, x).")
    ] = None,
    target: Annotated[
        int | None, typer.Option("--target", help="Class to explain (default: the predicted).")
    ] = None,
    output: Annotated[
        str, typer.Option("--output", help="logit (the paper) or contrast (against the others).")
    ] = "logit",
    variant: Annotated[str, typer.Option("--variant", help="componentwise or block.")] = (
        "componentwise"
    ),
    norm_rule: Annotated[str, typer.Option("--norm-rule", help="released or identity.")] = (
        "released"
    ),
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Only with --data: seed of its graphs (qm9: of its split); default 0."
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the explanation here.")] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Explain one graph: node, edge-direction and edge-distance relevance."""
    from trustlab.explain.equigx import EquiGX

    refuse_existing(out, overwrite, ("result.json", "equigx.html"), "an explanation")
    if seed is not None and data is None:  # a --graph file or the model's own test graphs
        raise InputError.bad("--seed", "--seed only with --data NAME (it generates them)", seed)
    net, info = _load_model(model, checkpoint)
    g = _one_graph(net, info, data, index, graph, 0 if seed is None else seed)
    explainer = EquiGX(net, output=output, variant=variant, norm_rule=norm_rule)
    result = explainer.explain(g, target=target)
    emit(result, as_json)
    save(result, out, as_json)
    if out is not None:
        html = result.to_html(Path(out) / "equigx.html")
        tell(f"wrote {html.name} to {out}", as_json)


@app.command("evaluate")
def evaluate(
    model: ModelOption = None,
    checkpoint: CheckpointOption = None,
    data: DataOption = None,
    n_graphs: Annotated[
        int | None, typer.Option("--n-graphs", help="With --data: graphs to generate.")
    ] = None,
    methods: Annotated[
        str | None, typer.Option("--methods", help="Comma-separated methods (default: all).")
    ] = None,
    max_graphs: Annotated[int, typer.Option("--max-graphs", help="Test graphs to explain.")] = 100,
    fraction: Annotated[float, typer.Option("--fraction", help="Share of nodes deleted.")] = 0.2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of data and controls.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the result and its page here.")
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Score EquiGX and the baselines: ground-truth AUROC/AP, fidelity, angular orders."""
    from trustlab.explain.equigx import METHODS, evaluate_explanations

    refuse_existing(out, overwrite, ("result.json", "report.html"), "an evaluation")
    net, info = _load_model(model, checkpoint)
    chosen = tuple(METHODS) if methods is None else tuple(
        m.strip() for m in methods.split(",") if m.strip()
    )  # fmt: skip
    bad = [m for m in chosen if m not in METHODS]
    if bad or not chosen:
        raise InputError.bad(
            "--methods", f"comma-separated names from {', '.join(METHODS)}", methods
        )
    twice = repeated(chosen)
    if twice:
        raise InputError.bad("--methods", "each method once", f"{', '.join(twice)} repeated")
    if n_graphs is not None and data is None:  # the model's own test graphs are fixed
        raise InputError.bad("--n-graphs", "--n-graphs only with --data NAME", n_graphs)
    if data is not None:
        dataset = _unseen(_parts(_data_spec(data, n_graphs, seed))["test"], info, data)
        _check_fits(dataset, net, data)
    elif "data" in info:
        dataset = _parts(info["data"])["test"]
    else:
        raise InputError.bad("--data", "--data NAME (this model has no training record)", None)
    shown = min(max_graphs, len(dataset))  # --max-graphs is checked by evaluate_explanations
    with progress() as bar:
        result = evaluate_explanations(
            net, dataset, methods=chosen, max_graphs=max_graphs, fraction=fraction,
            random_state=seed,
            progress=tracker(bar, f"explaining {shown} graph{'' if shown == 1 else 's'}"),
        )  # fmt: skip
    emit(result, as_json)
    save(result, out, as_json)
    if out is not None:
        from trustlab.audit.sections.equigx import write_page

        html, _ = write_page(result, out, meta={"model": str(model or checkpoint), "seed": seed})
        tell(f"wrote {html.name} to {out}", as_json)
