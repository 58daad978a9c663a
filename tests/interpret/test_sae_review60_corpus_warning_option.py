"""Diff review 60 H: 'trustlab interpret sae corpus --tokens 10000001' warned 'the sources hold
about 181,478 tokens, fewer than n_tokens=10,000,001; ...', the library's argument, where the
CLI's warnings name the option (cf480a81: '--n-bootstrap 10: ...')."""

import warnings

from trustlab.cli.main import _format_warning
from trustlab.interpret import offline_corpus


def test_the_corpus_warning_names_the_tokens_option(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        offline_corpus(10_000_000, sources=("pydoc", "books"), cache_dir=tmp_path)
    (w,) = [w for w in caught if "the corpus takes them all" in str(w.message)]
    argv = ["interpret", "sae", "corpus", "--out", str(tmp_path / "c"), "--tokens", "10000000"]
    line = _format_warning(
        warnings.formatwarning, argv, w.message, w.category, w.filename, w.lineno
    )
    assert line.startswith("trustlab: warning: --tokens 10,000,000: the sources hold about "), line
    assert line.endswith(" tokens; the corpus takes them all\n")
