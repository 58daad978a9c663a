"""The demo task: 20 questions about capital cities (``trustlab eval run demo``)."""

from __future__ import annotations

from trustlab._checks import check_positive_int
from trustlab._lazy import require

_inspect = require("inspect_ai", "evals")
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.scorer import includes  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

__all__ = ["demo", "CAPITALS"]

CAPITALS = (
    ("France", "Paris"), ("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"),
    ("Japan", "Tokyo"), ("Canada", "Ottawa"), ("Egypt", "Cairo"), ("Kenya", "Nairobi"),
    ("Peru", "Lima"), ("Norway", "Oslo"), ("Greece", "Athens"), ("Poland", "Warsaw"),
    ("Portugal", "Lisbon"), ("Austria", "Vienna"), ("Ireland", "Dublin"), ("Cuba", "Havana"),
    ("Russia", "Moscow"), ("Thailand", "Bangkok"), ("Sweden", "Stockholm"),
    ("Argentina", "Buenos Aires"),
)  # fmt: skip


@_inspect.task
def demo(max_tokens: int = 16) -> object:
    """Ask for the capital of 20 countries; a sample is correct when the answer names it.

    Greedy decoding (temperature 0) with at most ``max_tokens`` new tokens.
    """
    max_tokens = check_positive_int(max_tokens, "max_tokens")
    samples = [
        Sample(
            input=f"What is the capital of {country}? Answer with the city name only.",
            target=city,
            id=country.lower(),
        )
        for country, city in CAPITALS
    ]
    return _inspect.Task(
        dataset=samples,
        solver=generate(),
        scorer=includes(),
        config=_inspect.model.GenerateConfig(temperature=0.0, max_tokens=max_tokens),
    )
