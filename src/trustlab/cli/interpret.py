"""``trustlab interpret``: interpretability of language-model internals.

* ``sae corpus --out DIR``: the offline corpus of about ``--tokens N`` tokens (default a
  million, 4 characters a token): pydoc topics, docstrings of the standard library, numpy and
  scikit-learn, and book passages from the garak package (``--sources`` takes a subset),
  mixed in equal shares where the sources allow and shuffled with ``--seed``; ``corpus.txt``
  (one text per line, for ``--texts``) and ``manifest.json`` (sources, licences, versions,
  counts, sha256), copied from the cache (``$TRUSTLAB_CACHE`` or ``~/.cache/trustlab``), so a
  rerun is instant.
* ``sae train --model M --layer L --out DIR``: a sparse autoencoder trained on the model's
  activations at "resid_post of block L" over ``--texts FILE`` (one text per line; default:
  Python's pydoc topics; ``--max-texts N`` takes the first N), saved in the folder sae_lens reads (``cfg.json``,
  ``sae_weights.safetensors``) with trustlab's ``trustlab_sae.json`` and the fit
  (``result.json``, ``sae_fit.png``).
* ``sae cache --sae DIR --model M --out DIR``: where each latent fires over ``--texts FILE``
  (default: pydoc topics), saved as ``latent_cache.npz`` / ``latent_cache.json`` with a summary
  (``result.json``, ``latent_firing.png``); chunks are checkpointed in ``--out``, so a stopped
  run resumes.
* ``sae explain --cache DIR --explainer M --out DIR``: explanations of latents (``--latents
  3,7,10-19``, or up to ``--max-latents`` explainable ones drawn with ``--seed``) by a local
  model, or ``--explainer template`` (the tokens most often marked, no model), written to
  ``explanations.jsonl`` at the end (each answer is kept in ``explanations.sqlite`` as it
  arrives, so a stopped run resumes).
* ``sae score --explanations DIR --out DIR``: each explanation's detection, fuzzing (both with
  ``--scorer M``), embedding (MiniLM) and surprisal (``--scorer M``) scores (``--methods``;
  ``intervention`` with ``--sae DIR`` adds intervention scoring, the strength calibrated per
  latent on ``--n-prompts`` prompts), on the same latents' test examples, with a shuffled
  explanation (another latent's) as the control: ``scores.jsonl`` and the means in
  ``result.json`` (``scores.sqlite`` resumes).
* ``sae report --scores DIR --out DIR``: the page of a scored run (``report.html``, with its
  numbers in ``report.json``): each method's scores against the shuffled control with
  bootstrap intervals, Spearman correlations between methods, scores by activation quantile,
  and the ``--best N`` best and worst latents (by ``--method``) with test contexts coloured by
  activation; it reads the explanations and the cache that ``score`` and ``explain`` used.

Why this module is long: it holds the six steps of one pipeline (corpus, train, cache, explain,
score, report), each reading the folder the step before wrote, with the helpers they share.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    DeviceOption,
    emit,
    planned,
    progress,
    resolve_device_option,
    save,
    tell,
    text_lines,
    tracker,
)
from trustlab.cli._runs import OverwriteOption, counted, options_named, refuse_existing
from trustlab.errors import InputError

__all__ = ["app", "sae_app", "corpus", "train", "cache", "explain", "score", "report"]

app = typer.Typer(
    no_args_is_help=True, help="Interpretability of language-model internals (sparse autoencoders)."
)
sae_app = typer.Typer(
    no_args_is_help=True,
    help="Sparse autoencoders on a language model's residual stream (Paulo et al., ICML 2025).",
)
app.add_typer(sae_app, name="sae")

SAE_FILES = ("cfg.json", "sae_weights.safetensors", "trustlab_sae.json", "result.json")
CACHE_FILES = ("latent_cache.npz", "latent_cache.json", "result.json")
EXPLAIN_FILES = ("explanations.jsonl", "result.json")
SCORE_FILES = ("scores.jsonl", "result.json")
METHODS = ("detection", "fuzzing", "embedding", "surprisal")
# intervention scoring runs the subject model per latent (strength calibration, generations):
# asked for by name, with the SAE (`--sae`), never by default
ALL_METHODS = (*METHODS, "intervention")
# the test examples `explain` sets aside (its training examples come from the others); `score`
# rebuilds the same split and shows at most this many of them, so it never scores on an
# example the explainer saw
EXPLAIN_N_TEST = 50


def _corpus(texts: Path | None, max_texts: int | None) -> list[str]:
    """The texts of ``--texts`` (default: pydoc topics), the first ``--max-texts`` of them."""
    from trustlab.interpret import pydoc_texts

    corpus = pydoc_texts() if texts is None else text_lines(texts, "--texts")
    if max_texts is not None:
        if max_texts < 1:
            raise InputError.bad("--max-texts", "a positive number of texts", max_texts)
        corpus = corpus[:max_texts]
    return corpus


CORPUS_FILES = ("corpus.txt", "manifest.json")


@sae_app.command("corpus")
def corpus(
    out: Annotated[Path, typer.Option("--out", help="Write corpus.txt and manifest.json here.")],
    tokens: Annotated[
        int, typer.Option("--tokens", help="About this many tokens (4 characters a token).")
    ] = 1_000_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shuffle.")] = 0,
    sources: Annotated[
        str | None,
        typer.Option(
            "--sources",
            help="Comma-separated subset of pydoc,stdlib,books,numpy,scikit-learn (default: all).",
        ),
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the manifest as JSON instead of a summary.")
    ] = False,
) -> None:
    """Mix the offline training corpus (cached): pydoc topics, docstrings, book passages."""
    from trustlab._results import json_text, output_dir, write_atomic
    from trustlab.interpret import offline_corpus_folder

    refuse_existing(out, overwrite, CORPUS_FILES, "a corpus")
    chosen = None if sources is None else [s.strip() for s in sources.split(",") if s.strip()]
    with progress() as bar, options_named({"n_tokens": "--tokens"}):
        task = bar.add_task(f"mixing about {counted(tokens, 'token')}", total=None)
        folder = offline_corpus_folder(tokens, random_state=seed, sources=chosen)
        bar.update(task, visible=False)
    out = output_dir(out, "--out")
    for name in CORPUS_FILES:
        write_atomic(out / name, (folder / name).read_bytes())
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    if as_json:
        sys.stdout.write(json_text(manifest))
        return
    for source in manifest["sources"]:
        tell(
            f"{source['name']}: {counted(source['n_texts'], 'text')}, {source['n_tokens']:,} "
            f"of its {source['n_tokens_available']:,} tokens"
        )
    tell(
        f"wrote {counted(manifest['n_texts'], 'text')} (about {manifest['n_tokens']:,} tokens, "
        f"{manifest['counted_with']}) to {out / 'corpus.txt'}; sources and licences in "
        f"{out / 'manifest.json'}"
    )


@sae_app.command("train")
def train(
    model: Annotated[str, typer.Option("--model", help="Model name or folder.")],
    layer: Annotated[int, typer.Option("--layer", help="Decoder block read (0-based output).")],
    out: Annotated[Path, typer.Option("--out", help="Write the SAE here.")],
    texts: Annotated[
        Path | None,
        typer.Option("--texts", help="Training texts, one per line (default: pydoc topics)."),
    ] = None,
    max_texts: Annotated[
        int | None, typer.Option("--max-texts", help="Use only the first N texts.")
    ] = None,
    n_latents: Annotated[
        int | None, typer.Option("--n-latents", help="Latents (default: 8 x the width).")
    ] = None,
    activation: Annotated[str, typer.Option("--activation", help="topk or relu.")] = "topk",
    k: Annotated[
        int | None, typer.Option("--k", help="Latents kept per token (topk only; default 32).")
    ] = None,
    l1_coefficient: Annotated[
        float | None,
        typer.Option("--l1-coefficient", help="L1 weight (relu only; default 5.0)."),
    ] = None,
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Passes over the tokens.")] = 10,
    learning_rate: Annotated[
        float | None, typer.Option("--learning-rate", help="Adam's rate (default: by width).")
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Tokens per step.")] = 1024,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split and weights.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Train a sparse autoencoder on a model's activations at one block and save it."""
    from trustlab.interpret import SparseAutoencoder, sae_activations
    from trustlab.llm import load_model

    refuse_existing(out, overwrite, SAE_FILES, "a sparse autoencoder")
    # an option of the other activation was trained without (a ReLU SAE ignores --k)
    for option, value, used_by in (
        ("--k", k, "topk"),
        ("--l1-coefficient", l1_coefficient, "relu"),
    ):
        if value is not None and activation != used_by and activation in ("topk", "relu"):
            raise InputError.bad(option, f"no {option} with --activation {activation} "
                                 f"(it is used by --activation {used_by} only)", value)  # fmt: skip
    corpus = _corpus(texts, max_texts)
    sae = SparseAutoencoder(
        n_latents=n_latents,
        activation=activation,
        k=32 if k is None else k,
        l1_coefficient=5.0 if l1_coefficient is None else l1_coefficient,
        max_epochs=max_epochs,
        learning_rate=learning_rate,
        batch_size=batch_size,
        random_state=seed,
    )
    sae.check_params()  # before the model loads and its activations are read (minutes)
    _check_layer(model, layer)
    with progress() as bar:
        task = bar.add_task(f"loading {model}", total=None)
        lm = load_model(model)
        bar.update(task, description=f"reading {counted(len(corpus), 'text')} at block {layer}")
        rows = sae_activations(lm, corpus, layer)
        bar.update(task, visible=False)
        if len(rows) < 2:  # the fit would name its own argument, X, which no option is
            raise InputError.bad(
                "--texts", "texts of at least 2 tokens in all after each text's first",
                f"{len(rows)} token row",
            )  # fmt: skip
        sae.fit(
            rows,
            model_name=_model_reference(model),  # so that `sae cache` loads it again by default
            layer=layer,
            progress=tracker(bar, f"training on {counted(len(rows), 'token')}"),
        )
    emit(sae.fit_, as_json)
    sae.save(out)
    save(sae.fit_, out, as_json)
    tell(f"the SAE is in {out} (sae_lens: SAE.load_from_disk({str(out)!r}))", as_json)


@sae_app.command("cache")
def cache(
    sae_dir: Annotated[Path, typer.Option("--sae", help="Folder written by `sae train`.")],
    out: Annotated[Path, typer.Option("--out", help="Write the cache here.")],
    model: Annotated[
        str | None, typer.Option("--model", help="Model name or folder (default: the SAE's).")
    ] = None,
    texts: Annotated[
        Path | None,
        typer.Option("--texts", help="Texts, one per line (default: pydoc topics)."),
    ] = None,
    max_texts: Annotated[
        int | None, typer.Option("--max-texts", help="Use only the first N texts.")
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Texts per pass.")] = 8,
    bf16: Annotated[
        bool,
        typer.Option(
            "--bf16", help="Run the model in bfloat16 (about 2.5x faster on CPUs that have it)."
        ),
    ] = False,
    device: DeviceOption = "cpu",
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Record where each SAE latent fires over a corpus (resumable)."""
    from trustlab.interpret import cache_latents, load_sae
    from trustlab.llm import load_model

    refuse_existing(out, overwrite, CACHE_FILES, "a latent cache")
    if batch_size < 1:  # before the model loads (cache_latents checks it only then)
        raise InputError.bad("--batch-size", "an integer >= 1", batch_size)
    where = resolve_device_option(device, "llm")
    sae = _load_sae(load_sae, sae_dir)
    name = model or sae.model_name_
    if name is None:
        raise InputError.bad("--model", "a model (the SAE records none)", None)
    corpus = _corpus(texts, max_texts)
    with progress() as bar:
        task = bar.add_task(f"loading {name}", total=None)
        lm = load_model(name, device=where)
        bar.update(task, visible=False)
        # --overwrite starts afresh, once every option is checked and the model loaded (a run
        # refused for a typo in --sae had deleted the chunks already)
        if overwrite and (out / "chunks").is_dir():
            shutil.rmtree(out / "chunks")
        held = sorted((out / "chunks").glob("chunk_*.npz")) if (out / "chunks").is_dir() else []
        report = tracker(bar, f"caching {counted(len(corpus), 'text')}")
        if held:  # said at the first progress call: once the chunks' run key was accepted
            done = counted(len(held), "finished chunk")
            report = planned(report, f"resuming from {done} in {out / 'chunks'}")
        hint = "--overwrite deletes them and starts afresh"  # the chunks of another run
        hints = {"checkpoint": hint} if (out / "chunks").is_dir() else None  # none: no chunks
        with options_named({"checkpoint": "--out"}, hints):
            result = cache_latents(
                lm,
                sae,
                corpus,
                batch_size=batch_size,
                checkpoint=out / "chunks",
                progress=report,
                autocast="bfloat16" if bf16 else None,
            )
    # `explain`, `score` and `report` load the model by what the cache records
    result = dataclasses.replace(result, model=_model_reference(name))
    emit(result, as_json)
    result.save(out)
    save(result, out, as_json)


def _say_resumed(store, run: str, items: list, path: Path, what: str) -> None:
    """Say on stderr that a stopped run resumes, and from how much, when ``store`` already
    holds some of ``items`` for ``run`` (rows of other runs are not reused and not counted)."""
    held = len(store.done(run) & set(items))
    if held:
        tell(f"trustlab: resuming from {path}: {held} of {counted(len(items), what)} done", True)


def _check_layer(model: str, layer: int) -> None:
    """``--layer`` checked before the model loads, against ``num_hidden_layers`` in the model
    folder's ``config.json`` (a registered name, or a folder without that number, is checked by
    ``sae_activations`` once the model is loaded): loading took seconds, and under load a
    progress line came before the one-line error."""
    n = None
    try:
        config = json.loads((Path(model).expanduser() / "config.json").read_text(encoding="utf-8"))
        n = config["num_hidden_layers"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if layer < 0 or (isinstance(n, int) and not isinstance(n, bool) and layer >= n):
        where = f" of {Path(model).name!r}: in [0, {n - 1}]" if isinstance(n, int) else " (>= 0)"
        raise InputError.bad("--layer", f"a decoder layer{where}", layer)


def _model_reference(name: str) -> str:
    """``name`` as a later step loads the same model again from any directory: a registered
    name as it is, a model folder or file by its absolute path (the model's own ``name`` is
    only the folder's last component, and a relative path holds only in the directory where
    it was given)."""
    from trustlab.llm import available_models

    if name in {m["name"] for m in available_models()}:
        return name
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else name


def _recorded_model(name: str, option: str):
    """``load_model(name)`` of the model a run folder records, a failure named by the option
    that gave the folder (a folder written by an older trustlab records a model folder by its
    last component only, which loads only from the directory holding it)."""
    from trustlab.llm import load_model

    try:
        return load_model(name)
    except InputError as exc:
        if exc.argument != "name_or_path":
            raise
        raise InputError.bad(
            option, "a run whose model loads from here (a known model name or a model folder; "
            "`explain --subject` takes the folder)", f"a run that records {name!r}",
        ) from exc  # fmt: skip


def _load_sae(load_sae, folder: Path):
    from trustlab.errors import ResourceError

    try:
        return load_sae(folder)
    except ResourceError as exc:  # what is wrong with it, on the same line
        error = InputError(
            f"--sae: expected a folder written by `sae train`, got {str(folder)!r}",
            argument="--sae",
        )
        raise _with_reason(error, exc) from exc


def _with_reason(error: InputError, exc: Exception) -> InputError:
    """``error`` with what the reader found wrong on the same line when ``exc`` says it (a
    ResourceError names the file and the fault); ``error`` itself otherwise."""
    from trustlab.errors import ResourceError

    if not isinstance(exc, ResourceError):
        return error
    return InputError(f"{error} ({' '.join(str(exc).split())})", argument=error.argument)


def _latents(text: str, n_latents: int) -> list[int]:
    """``3,7,10-19`` as a list of latent indices."""
    chosen: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part.strip()[1:]:
                low, high = (int(v) for v in part.split("-"))
                if high < low:  # range(3, 2) is empty: not the bounds, the order is wrong
                    raise InputError(
                        f"--latents: expected ranges written low-high, got the reversed range "
                        f"'{part.strip()}' (for latents {high} to {low}: '{high}-{low}')",
                        argument="--latents",
                    )
                chosen += list(range(low, high + 1))
            elif part.strip():
                chosen.append(int(part))
    except InputError:
        raise
    except ValueError:
        raise InputError.bad("--latents", "indices and ranges such as 3,7,10-19", text) from None
    if not chosen or any(not 0 <= i < n_latents for i in chosen):
        raise InputError.bad("--latents", f"latents in [0, {n_latents - 1}]", text)
    return list(dict.fromkeys(chosen))


def _run_key(kind: str, **inputs) -> str:
    """The key of a stored run's rows: every input that decides a row, hashed, so a rerun with
    any other input (another cache, subject, explanations folder, ...) resumes none of them."""
    text = json.dumps(inputs, sort_keys=True, default=str)
    return f"{kind}:{hashlib.sha256(text.encode()).hexdigest()[:20]}"


def _files_identity(folder: Path, names: tuple[str, ...]) -> list:
    """A written folder's content as far as a rerun must tell: its resolved path and each file's
    size and modification time (a folder written anew in the same place is another input)."""
    found = [str(Path(folder).resolve())]
    for name in names:
        path = Path(folder) / name
        stat = path.stat() if path.is_file() else None
        found.append(None if stat is None else [name, stat.st_size, stat.st_mtime_ns])
    return found


CACHE_IDENTITY = ("latent_cache.json", "latent_cache.npz")
SAE_IDENTITY = ("cfg.json", "sae_weights.safetensors", "trustlab_sae.json")


@sae_app.command("explain")
def explain(
    cache_dir: Annotated[Path, typer.Option("--cache", help="Folder written by `sae cache`.")],
    explainer: Annotated[
        str, typer.Option("--explainer", help="Model name or folder, or 'template'.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the explanations here.")],
    subject: Annotated[
        str | None,
        typer.Option(
            "--subject", help="The cached model, for its tokenizer (default: the cache's)."
        ),
    ] = None,
    latents: Annotated[
        str | None, typer.Option("--latents", help="Latents such as 3,7,10-19.")
    ] = None,
    max_latents: Annotated[
        int, typer.Option("--max-latents", help="Latents drawn when --latents is not given.")
    ] = 50,
    min_examples: Annotated[
        int,
        typer.Option(
            "--min-examples",
            help="Drawn latents have at least this many activating examples (windows of 32 "
            "tokens; the spec's 200).",
        ),
    ] = 200,
    n_train: Annotated[int, typer.Option("--n-train", help="Examples shown per latent.")] = 40,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", help="Answer length.")] = 64,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the latents and examples.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Explain SAE latents in words from their cached examples (resumable)."""
    import numpy as np

    from trustlab._results import json_text, to_jsonable, write_atomic
    from trustlab.interpret import (
        explain_latent,
        latent_examples,
        load_latent_cache,
        template_explanation,
    )
    from trustlab.llm import ResultStore, load_model

    refuse_existing(out, overwrite, EXPLAIN_FILES, "explanations")
    if seed < 0:  # it seeds numpy's generator, which refuses a negative seed
        raise InputError.bad("--seed", "a non-negative integer seed", seed)
    # before the models load; --n-train 0 gave every latent an empty explanation, exit 0
    for option, value, low in (("--n-train", n_train, 1), ("--max-new-tokens", max_new_tokens, 1),
                               ("--min-examples", min_examples, 0)):  # fmt: skip
        if value < low:
            raise InputError.bad(option, f"an integer >= {low}", value)
    try:
        cache_data = load_latent_cache(cache_dir)
        cache_digest = _cache_digest(cache_dir)  # score and report check it is still this cache
    except Exception as exc:
        error = InputError.bad("--cache", "a folder written by `sae cache`", str(cache_dir))
        raise _with_reason(error, exc) from exc
    if latents is not None:
        chosen = _latents(latents, cache_data.n_latents)
    else:
        if max_latents < 1:
            raise InputError.bad("--max-latents", "a positive number", max_latents)
        # the spec's bound counts activating examples (windows), as `explainable` does; a
        # latent has at most as many of them as firing tokens, often far fewer
        eligible = np.flatnonzero(cache_data.firing_counts >= max(min_examples, 1))
        chosen = []
        for i in np.random.default_rng(seed).permutation(eligible):
            if len(chosen) == max_latents:
                break
            if latent_examples(cache_data, int(i), n_train=0, n_test=0, n_not_active=0,
                               min_examples=min_examples).explainable:  # fmt: skip
                chosen.append(int(i))
        chosen.sort()
        if not chosen:
            raise InputError.bad(
                "--min-examples",
                f"a number of activating examples some latent reaches (windows of 32 tokens; "
                f"the most active latent fires on {int(cache_data.firing_counts.max())} tokens)",
                min_examples,
            )
    # recorded for `score` and `report`, which load it again (from any directory)
    given, subject = subject, cache_data.model if subject is None else _model_reference(subject)
    with progress() as bar:
        task = bar.add_task("loading the models", total=None)
        lm = load_model(subject) if given is not None else _recorded_model(subject, "--cache")
        tokenizer = lm.tokenizer
        model = None if explainer == "template" else load_model(explainer)
        bar.update(task, visible=False)
        if overwrite:  # afresh: the stored rows of the earlier run too (once the run can start)
            (out / "explanations.sqlite").unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        run = _run_key(
            "explain", cache=_files_identity(cache_dir, CACHE_IDENTITY), explainer=explainer,
            subject=subject, n_train=n_train, min_examples=min_examples,
            seed=seed, max_new_tokens=max_new_tokens,
        )  # fmt: skip

        def decode(token: int) -> str:
            return tokenizer.decode([token])

        def one(latent: int) -> dict:
            examples = latent_examples(
                cache_data, latent, n_train=n_train, n_test=EXPLAIN_N_TEST,
                min_examples=min_examples, random_state=seed + latent,
            )  # fmt: skip
            if not examples.train:
                return {"latent": latent, "text": "", "marker_found": False,
                        "explainer": explainer, "answer": "", "n_activating": 0}  # fmt: skip
            if model is None:
                result = template_explanation(examples, decode)
            else:
                result = explain_latent(examples, model, decode, max_new_tokens=max_new_tokens)
            return {**result.to_dict(), "n_activating": examples.n_activating}

        with ResultStore(out / "explanations.sqlite") as store:
            _say_resumed(store, run, chosen, out / "explanations.sqlite", "latent")
            found = store.map(
                run,
                chosen,
                one,
                progress=tracker(bar, f"explaining {counted(len(chosen), 'latent')}"),
            )
    # every row and result.json name the explainer alike: as a later step loads it again (a
    # model's own name is only its folder's last component), 'template' as it is
    recorded = explainer if model is None else _model_reference(explainer)
    rows = [{**found[i], "explainer": recorded} for i in chosen]
    lines = [json.dumps(to_jsonable(r), ensure_ascii=False) + "\n" for r in rows]
    write_atomic(out / "explanations.jsonl", "".join(lines))
    unexamined = [r["latent"] for r in rows if not r["n_activating"]]
    summary = {
        "explainer": recorded,
        "subject": subject,
        "cache": str(cache_dir.resolve()),
        "cache_sha256": cache_digest,
        "n_train": n_train,
        "n_test": EXPLAIN_N_TEST,
        "min_examples": min_examples,
        "seed": seed,
        "n_latents": len(rows),
        # a latent with no activating example in the cache is not put to the explainer
        "n_no_examples": len(unexamined),
        "n_without_marker": sum(not r["marker_found"] for r in rows if r["n_activating"]),
        "n_empty": sum(not r["text"] for r in rows),
    }
    write_atomic(out / "result.json", json_text(summary))
    if as_json:
        sys.stdout.write(json_text(summary))
    else:
        for r in rows[:10]:
            tell(f"latent {r['latent']}: {r['text']!r}", as_json)
        tell(f"wrote {counted(len(rows), 'explanation')} to {out / 'explanations.jsonl'}", as_json)
        if unexamined:  # they were counted as answers without the marker
            shown = ", ".join(map(str, unexamined[:10])) + (", ..." if len(unexamined) > 10 else "")
            tell(f"{counted(len(unexamined), 'latent')} ({shown}) "
                 f"{'has' if len(unexamined) == 1 else 'have'} no activating example in the "
                 "cache: not explained", as_json)  # fmt: skip
        empty, unmarked = summary["n_empty"], summary["n_without_marker"]
        said = [
            f"{empty} of {len(rows)} explanations are empty (`sae score` leaves them out)",
            f"{unmarked} answer{'s' if unmarked != 1 else ''} had no [EXPLANATION]: marker "
            f"({'their' if unmarked != 1 else 'its'} first line was kept)",
        ]
        if empty or unmarked:  # 'wrote 12 explanations' said nothing of 12 empty ones
            tell(
                "; ".join(line for line, n in zip(said, (empty, unmarked), strict=True) if n),
                as_json,
            )


@sae_app.command("score")
def score(
    explanations_dir: Annotated[
        Path, typer.Option("--explanations", help="Folder written by `sae explain`.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the scores here.")],
    scorer: Annotated[
        str, typer.Option("--scorer", help="Model for detection, fuzzing and surprisal.")
    ] = "smollm2-135m-instruct",
    methods: Annotated[
        str,
        typer.Option(
            "--methods",
            help="Comma-separated: detection,fuzzing,embedding,surprisal (default) and "
            "intervention (needs --sae).",
        ),
    ] = ",".join(METHODS),
    sae_dir: Annotated[
        Path | None,
        typer.Option("--sae", help="Folder written by `sae train` (for intervention)."),
    ] = None,
    n_prompts: Annotated[
        int,
        typer.Option(
            "--n-prompts",
            help="Intervention prompts per latent (at most 50; cut from the --n-test activating "
            "examples shown, so at most that many).",
        ),
    ] = 40,
    answer: Annotated[
        str,
        typer.Option(
            "--answer", help="logprob (P('1') vs P('0'), for small models) or list (generated)."
        ),
    ] = "logprob",
    n_test: Annotated[
        int, typer.Option("--n-test", help="Activating examples shown (at most 50).")
    ] = EXPLAIN_N_TEST,
    n_not_active: Annotated[
        int, typer.Option("--n-not-active", help="Non-activating examples shown.")
    ] = 50,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            help="Seed of the detection and fuzzing scorers (the shuffle of their example "
            "batches, fuzzing's wrongly marked tokens, the bootstrap intervals).",
        ),
    ] = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Score explanations (and shuffled ones, the control) with the cheap scorers and, asked
    for, intervention scoring."""
    import numpy as np

    from trustlab._results import json_text, to_jsonable, write_atomic
    from trustlab.interpret import (
        detection_score,
        embedding_score,
        fuzzing_score,
        latent_examples,
        load_latent_cache,
        load_sae,
        surprisal_score,
    )
    from trustlab.llm import ResultStore, load_model

    refuse_existing(out, overwrite, SCORE_FILES, "scores")
    if answer not in ("list", "logprob"):
        raise InputError.bad("--answer", "logprob or list", answer)
    if not 1 <= n_test <= EXPLAIN_N_TEST:
        raise InputError.bad("--n-test", f"a number in [1, {EXPLAIN_N_TEST}]", n_test)
    # a method named twice ran twice (and was listed twice in result.json)
    chosen = list(dict.fromkeys(m.strip() for m in methods.split(",") if m.strip()))
    if not chosen or any(m not in ALL_METHODS for m in chosen):
        raise InputError.bad(
            "--methods", "a comma-separated subset of " + ",".join(ALL_METHODS), methods
        )
    if "intervention" in chosen and sae_dir is None:
        raise InputError.bad("--sae", "the SAE's folder for intervention scoring", sae_dir)
    if not 2 <= n_prompts <= EXPLAIN_N_TEST:
        raise InputError.bad("--n-prompts", f"a number in [2, {EXPLAIN_N_TEST}]", n_prompts)
    if n_not_active < 1:  # every score compares activating with non-activating examples
        raise InputError.bad("--n-not-active", "a positive number of examples", n_not_active)
    if seed < 0:  # it seeds numpy's generator, which refuses a negative seed
        raise InputError.bad("--seed", "a non-negative integer seed", seed)
    info, rows = _explanations(explanations_dir)
    rows = [r for r in rows if r["text"]]
    if len(rows) < 2:
        raise InputError.bad(
            "--explanations", "at least two non-empty explanations (one is the other's control)",
            str(explanations_dir),
        )  # fmt: skip
    # a run whose cache was moved or deleted was 'failed: ...', exit 1
    cache_data = _run_cache(load_latent_cache, info, explanations_dir)
    sae = None if sae_dir is None or "intervention" not in chosen else _load_sae(load_sae, sae_dir)
    if sae is not None:
        _check_sae(sae, sae_dir, cache_data, info["cache"])
    # one calibration and one set of generations per latent, for its two explanations
    strengths: dict[int, tuple] = {}  # latent: (Calibration, generations)
    texts = {r["latent"]: r["text"] for r in rows}
    latents = list(texts)
    shuffled = _controls(texts, explanations_dir)
    with progress() as bar:
        task = bar.add_task("loading the models", total=None)
        subject = _recorded_model(info["subject"], "--explanations")
        needs_scorer = any(m != "embedding" for m in chosen)
        judge = load_model(scorer) if needs_scorer else None
        bar.update(task, visible=False)

        def decode(token: int) -> str:
            return subject.tokenizer.decode([token])

        def one(key: str) -> dict:
            latent, control = int(key.split(":")[0]), key.endswith(":shuffled")
            examples = latent_examples(
                cache_data, latent, n_train=info["n_train"], n_test=info["n_test"],
                n_not_active=n_not_active, min_examples=info["min_examples"],
                random_state=info["seed"] + latent,
            )  # fmt: skip
            if len(examples.test) > n_test:  # a subset of explain's held-out examples
                examples = dataclasses.replace(
                    examples, test=_test_subset(examples.test, n_test, info["seed"] + latent)
                )
            text = shuffled[latent] if control else texts[latent]
            row = {"latent": latent, "shuffled": control, "explanation": text}
            for method in chosen:
                if method in ("detection", "fuzzing"):
                    scoring = detection_score if method == "detection" else fuzzing_score
                    result = scoring(
                        examples, text, judge, decode, answer=answer, random_state=seed
                    )
                    row[method] = result.balanced_accuracy
                    if answer == "logprob":
                        row[f"{method}_auroc"] = result.auroc
                elif method == "embedding":
                    result = embedding_score(examples, text, decode)
                    row[method] = result.auroc
                elif method == "intervention":
                    pair = (texts[latent], shuffled[latent])
                    row.update(_intervention(subject, sae, examples, text, pair, judge, decode,
                                             strengths, n_prompts, info["seed"] + latent))  # fmt: skip
                    continue
                else:
                    result = surprisal_score(examples, text, judge, decode)
                    row[method] = result.auroc
                row.update(_per_example(method, result))  # for `sae report`
            return row

        keys = [f"{i}:{kind}" for i in latents for kind in ("true", "shuffled")]
        if overwrite:  # afresh: the stored rows of the earlier run too (once the run can start)
            (out / "scores.sqlite").unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        run = _run_key(
            "score", explanations=_files_identity(explanations_dir, EXPLAIN_FILES),
            cache=_files_identity(Path(info["cache"]), CACHE_IDENTITY), scorer=scorer,
            answer=answer, methods=chosen, n_test=n_test, n_not_active=n_not_active,
            sae=None if sae is None else _files_identity(sae_dir, SAE_IDENTITY),
            n_prompts=n_prompts if "intervention" in chosen else None, controls=shuffled,
            **({"seed": seed} if seed else {}),  # seed 0: the key of runs stored before --seed
            **_subset_key(n_test, info["n_test"]),
        )  # fmt: skip
        with ResultStore(out / "scores.sqlite") as store:
            _say_resumed(store, run, keys, out / "scores.sqlite", "explanation score")
            found = store.map(
                run, keys, one, progress=tracker(bar, f"scoring {len(keys)} explanations")
            )
    scored = [found[k] for k in keys]
    lines = [json.dumps(to_jsonable(r), ensure_ascii=False) + "\n" for r in scored]
    write_atomic(out / "scores.jsonl", "".join(lines))
    # a latent without a score (NaN: no non-activating example found, one class only, no parsed
    # answer) is left out of the mean; none at all is NaN (numpy's nanmean warned on stderr)
    given = {
        (kind, m): np.array([r[m] for r in scored if r["shuffled"] == (kind == "shuffled")], float)
        for kind in ("true", "shuffled")
        for m in chosen
    }
    finite = {key: v[np.isfinite(v)] for key, v in given.items()}
    means = {
        kind: {m: float(finite[kind, m].mean()) if len(finite[kind, m]) else float("nan")
               for m in chosen}
        for kind in ("true", "shuffled")
    }  # fmt: skip
    no_score = {m: _no_score([r for r in scored if not r["shuffled"]], m) for m in chosen}
    summary = {"scorer": scorer, "methods": chosen, "seed": seed, "n_latents": len(latents),
               "means": means,
               "n_scored": {kind: {m: len(finite[kind, m]) for m in chosen} for kind in means},
               "no_score": no_score,
               "explanations": str(explanations_dir.resolve())}  # fmt: skip
    off = sorted({r["latent"] for r in scored if r.get("intervention_calibrated") is False})
    if "intervention" in chosen:  # --json and result.json said nothing of them
        summary["intervention_uncalibrated"] = off
    write_atomic(out / "result.json", json_text(summary))
    if as_json:
        sys.stdout.write(json_text(summary))
    else:
        for kind, values in means.items():
            shown = ", ".join(f"{m} {v:.3f}" for m, v in values.items())
            tell(f"{kind} explanations: {shown}", as_json)
        for m in chosen:
            if no_score[m]:  # left out of the means
                why = "; ".join(f"{n} ({reason})" for reason, n in no_score[m].items())
                tell(f"{m}: {len(latents) - len(finite['true', m])} of {len(latents)} latents have "
                     f"no score (NaN in the rows), left out of the means: {why}", as_json)  # fmt: skip
        if off:
            tell(f"intervention: the strength of {counted(len(off), 'latent')} did not reach 0.5 "
                 "nats +- 10 % (intervention_calibrated false in the rows)", as_json)  # fmt: skip
        tell(f"wrote {len(scored)} rows to {out / 'scores.jsonl'}", as_json)


def _subset_key(n_test: int, explained: int) -> dict:
    """The run key's entry for how a ``--n-test`` below explain's held-out count is drawn: rows
    stored before review 64 (a plain random subset) are not resumed into a quantile-spread run,
    which would mix examples of both; a run on all held-out examples keeps its earlier key."""
    return {"subset": "quantiles"} if n_test < explained else {}


def _test_subset(test: tuple, n: int, seed: int) -> tuple:
    """``n`` of the held-out activating examples ``test``, in their order, spread over their
    quantiles as evenly as ``n`` allows: each quantile's examples in a random order, taken one
    from every quantile in turn (the last round's quantiles chosen at random).

    A plain random subset (before review 64) left on average 3.1 of the 10 quantiles without an
    example at ``--n-test 10`` (1,000 seeds), so accuracy by quantile had gaps."""
    import numpy as np

    rng = np.random.default_rng(seed)
    quantiles = np.array([e.quantile for e in test])
    kinds = np.unique(quantiles)
    priority = dict(zip(kinds.tolist(), rng.permutation(len(kinds)).tolist(), strict=True))
    rank = np.zeros(len(test), np.int64)
    for q in kinds:
        where = np.flatnonzero(quantiles == q)
        rank[where] = rng.permutation(len(where))
    order = np.lexsort((np.array([priority[q] for q in quantiles.tolist()]), rank))
    return tuple(test[i] for i in np.sort(order[:n]))


def _controls(texts: dict[int, str], explanations_dir: Path) -> dict[int, str]:
    """Each latent's control: the explanation of the next latent (cyclically) whose text differs
    from its own. The next latent's alone was this latent's own text when two latents were
    explained alike, so the control scored the true explanation again (a difference of 0)."""
    latents = list(texts)
    out = {}
    for k, i in enumerate(latents):
        others = (texts[latents[(k + j) % len(latents)]] for j in range(1, len(latents)))
        out[i] = next((t for t in others if t.strip() != texts[i].strip()), None)
        if out[i] is None:  # then every explanation reads the same
            raise InputError.bad(
                "--explanations", "at least two different explanations (a latent's control is "
                "another latent's explanation)", f"{explanations_dir}: all {texts[i]!r}",
            )  # fmt: skip
    return out


def _no_score(rows: list[dict], method: str) -> dict[str, int]:
    """Rows without a score of ``method``: why (``no_score_reason``) -> how many."""
    import numpy as np

    from trustlab.interpret.sae.report import no_score_reason

    out: dict[str, int] = {}
    for row in rows:
        value = row.get(method)
        if value is None or not np.isfinite(value):
            shown = (row.get(f"{method}_examples") or {}).get("quantiles")
            # intervention: the row's error, as `sae report` gives it (it said 'no score' there)
            reason = (
                (row.get("intervention_error") or "no score")
                if method == "intervention"
                else no_score_reason(shown)
            )
            out[reason] = out.get(reason, 0) + 1
    return out


def _check_sae(sae, sae_dir: Path, cache_data, cache: str) -> None:
    """``--sae`` is the SAE the cache was written with (latent i of another SAE is another
    latent, scored on this one's prompts); a cache written before trustlab recorded the SAE's
    fingerprint can only be checked for its number of latents, and a warning says so."""
    from trustlab.interpret.sae.cache import sae_fingerprint

    wanted = f"the SAE the cache {cache} was written with (its latents' examples are the prompts)"
    if sae.n_latents_ != cache_data.n_latents:
        raise InputError.bad("--sae", f"{wanted}: {cache_data.n_latents} latents", sae.n_latents_)
    if cache_data.sae is None:
        tell(f"warning: the cache {cache} was written before trustlab recorded its SAE's "
             f"fingerprint, so --sae {sae_dir} cannot be checked to be the SAE that encoded it "
             "(only its number of latents matches); rebuild the cache with `sae cache` to have "
             "it checked", as_json=True)  # on stderr  # fmt: skip
    elif sae_fingerprint(sae) != cache_data.sae:
        raise InputError.bad("--sae", wanted, f"another SAE: {sae_dir}")


def _intervention(subject, sae, examples, text, pair, judge, decode, strengths, n_prompts,
                  seed) -> dict:  # fmt: skip
    """One explanation's intervention score. The strength (calibrated on the latent's own
    prompts: its held-out examples cut after their first firing token), the sampled
    generations and the scores are computed once per latent, for its true and its shuffled
    explanation (``pair``): their passages run once, each explanation scored as alone."""
    from trustlab.interpret import (
        calibrate_strength,
        intervened_generations,
        intervention_prompts,
        intervention_score,
        kl_curve,
    )

    prompts = intervention_prompts(examples, decode)[:n_prompts]
    latent = examples.latent
    if len(prompts) < 2:
        return {"intervention": float("nan"), "intervention_error": "fewer than 2 prompts"}
    if latent not in strengths:
        found = calibrate_strength(kl_curve(subject, sae, latent, prompts))
        passages = intervened_generations(subject, sae, latent, prompts, found.strength,
                                          random_state=seed)  # fmt: skip
        strengths[latent] = (found, passages, {})
    found, passages, scored = strengths[latent]
    strength = found.strength
    if text not in scored:  # bit for bit the scores of one call per explanation
        both = list(dict.fromkeys([text, *pair]))
        result = intervention_score(subject, sae, latent, prompts, both, strength, scorer=judge,
                                    random_state=seed, generations=passages,
                                    batch_explanations=False)  # fmt: skip
        scored.update(zip(both, zip(result.scores, result.sems, strict=True), strict=True))
    score, sem = scored[text]
    half = 1.96 * sem
    return {
        "intervention": score,
        "intervention_interval": (score - half, score + half),
        "intervention_strength": strength,
        # a strength that never reached 0.5 nats (a latent without effect, or a saturated one)
        # scores a weaker or stronger intervention than the others: said, not hidden
        "intervention_kl": found.kl,
        "intervention_calibrated": found.converged,
    }


def _per_example(method: str, result) -> dict:
    """What `sae report` reads beside a score: its bootstrap interval and, per example shown,
    the activation quantile (-1: non-activating) and the answer (0/1) or the score; for
    detection and fuzzing, how many examples shown got no parsed answer (left out of the
    score)."""
    failed = {}
    if method in ("detection", "fuzzing"):
        answers = {"predicted": result.predicted.astype(int)}
        failed = {f"{method}_n_failed": result.n_failed}
    else:
        answers = {"scores": result.scores}
    return {
        f"{method}_interval": result.interval,
        f"{method}_examples": {"quantiles": result.quantiles, **answers},
        **failed,
    }


REPORT_FILES = ("report.html", "report.json")


@sae_app.command("report")
def report(
    scores_dir: Annotated[Path, typer.Option("--scores", help="Folder written by `sae score`.")],
    out: Annotated[Path, typer.Option("--out", help="Write report.html and report.json here.")],
    explanations_dir: Annotated[
        Path | None,
        typer.Option(
            "--explanations",
            help="Folder written by `sae explain` (default: the one `sae score` read).",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option("--method", help="Rank the latents by this score (default: the first)."),
    ] = None,
    best: Annotated[int, typer.Option("--best", help="Best and worst latents shown.")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Write the page of a scored run: scores against the shuffled control, agreement between
    scorers, scores by activation quantile, the best and worst latents in context."""
    from trustlab.audit.sections.sae import write_page
    from trustlab.interpret import load_latent_cache, sae_report
    from trustlab.interpret.sae.report import report_method

    refuse_existing(out, overwrite, REPORT_FILES, "a report")
    if best < 1:
        raise InputError.bad("--best", "a positive number of latents", best)
    info, rows = _run_files(scores_dir, "--scores", "scores.jsonl", "`sae score`")
    report_method(rows, method)  # --method checked before the tokenizer loads (seconds)
    if explanations_dir is None:
        if "explanations" not in info:
            raise InputError.bad(
                "--explanations", "the folder `sae explain` wrote (this scores folder, written "
                "by an earlier trustlab, does not name it)", None,
            )  # fmt: skip
        explanations_dir = Path(info["explanations"])
    found, explained = _explanations(explanations_dir)
    cache_data = _run_cache(load_latent_cache, found, explanations_dir)
    with progress() as bar:
        task = bar.add_task(f"loading the tokenizer of {found['subject']}", total=None)
        tokenizer = _recorded_model(found["subject"], "--explanations").tokenizer
        bar.update(task, visible=False)
        result = sae_report(
            rows,
            [r for r in explained if r["text"]],
            cache_data,
            decode=lambda token: tokenizer.decode([token]),
            sampling={k: found[k] for k in ("n_train", "n_test", "min_examples", "seed")},
            method=method,
            n_best=best,
            random_state=seed,
        )
    meta = {
        "scores": str(scores_dir.resolve()),
        "explanations": str(explanations_dir.resolve()),
        "explainer": found.get("explainer"),
        "scorer": info.get("scorer"),
        "subject": found["subject"],
    }
    html, data = write_page(result, out, meta=meta)
    emit(result, as_json)
    tell(f"wrote {html.name}, {data.name} to {out}", as_json)


def _run_files(folder: Path, option: str, lines: str, writer: str) -> tuple[dict, list[dict]]:
    """A run folder's ``result.json`` and the rows of its JSON-lines file."""
    try:
        info = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        rows = [
            json.loads(line)
            for line in (folder / lines).read_text(encoding="utf-8").split("\n")  # not U+2028
            if line.strip()
        ]
    except (OSError, ValueError) as exc:
        raise InputError.bad(option, f"a folder written by {writer}", str(folder)) from exc
    if not isinstance(info, dict) or not rows:
        raise InputError.bad(option, f"a folder written by {writer} (with rows)", str(folder))
    return info, rows


EXPLAIN_RECORDED = ("cache", "subject", "n_train", "n_test", "min_examples", "seed")


def _run_cache(load_latent_cache, info: dict, explanations_dir: Path):
    """The latent cache an `explain` run records, or one error naming ``--explanations``; a
    cache written anew in that folder since (its sha256, recorded by `explain` since December
    2026, differs) is refused: its split of each latent's examples is another, so its test
    examples could be ones the explainer saw."""
    try:
        found = load_latent_cache(info["cache"])
        digest = _cache_digest(Path(info["cache"])) if "cache_sha256" in info else None
    except Exception as exc:
        error = InputError.bad(
            "--explanations", "a run whose latent cache is still there",
            f"{explanations_dir} (its cache: {info.get('cache')})",
        )  # fmt: skip
        raise _with_reason(error, exc) from exc
    if digest != info.get("cache_sha256"):
        raise InputError(
            f"--explanations: {explanations_dir} explained the latent cache in {info['cache']}, "
            "and that cache was written anew since (its test examples, split from it, could be "
            "ones the explainer saw); run `sae explain` on it again",
            argument="--explanations",
        )
    return found


def _cache_digest(folder: Path) -> str:
    """sha256 over a latent cache folder's files (what `explain` drew its examples from)."""
    digest = hashlib.sha256()
    for name in CACHE_IDENTITY:
        with open(Path(folder) / name, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _explanations(folder: Path) -> tuple[dict, list[dict]]:
    """An `explain` folder's ``result.json`` and rows, checked for what `score` and `report`
    read (a hand-edited or foreign folder is one error, not a KeyError)."""
    info, rows = _run_files(folder, "--explanations", "explanations.jsonl", "`sae explain`")
    if any(k not in info for k in EXPLAIN_RECORDED) or not all(
        isinstance(r, dict)
        and isinstance(r.get("latent"), int)
        and not isinstance(r["latent"], bool)
        and isinstance(r.get("text"), str)
        for r in rows
    ):
        raise InputError.bad("--explanations", "a folder written by `sae explain`", str(folder))
    return info, rows
