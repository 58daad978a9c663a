"""Stop 61: ``LocalModel.generate`` and ``activations`` check ``progress`` before any work.

``progress=5`` used to pass every check, run the first batch through the model and then fail
with a bare ``TypeError: 'int' object is not callable``. Now both refuse it up front with the
message the other progress-taking calls give, through the one shared check
(``trustlab._progress.check_progress``), which replaced 14 hand-written copies in ``src``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError

pytest.importorskip("torch")

SRC = Path(__file__).resolve().parents[2] / "src" / "trustlab"


@pytest.fixture(scope="module")
def tiny_lm():
    words = "the cat sat on a mat".split()
    return tiny_llama(word_tokenizer(words), len(words) + 3, hidden_size=16)


@pytest.mark.parametrize("method", ["generate", "activations"])
def test_a_non_callable_progress_is_refused_before_the_first_batch(tiny_lm, method):
    calls = []
    hook = tiny_lm.model.register_forward_hook(lambda *args: calls.append(1))
    try:
        run = getattr(tiny_lm, method)
        args = (["the cat", "a mat"], 2) if method == "generate" else (["the cat", "a mat"], 0)
        with pytest.raises(
            InputError, match=r"^progress: expected a callable \(done, total\) or None, got 5$"
        ) as caught:
            run(*args, chat=False, batch_size=1, progress=5)
        assert caught.value.argument == "progress"
        assert calls == []  # refused before any forward pass
        seen = []
        run(*args, chat=False, batch_size=1, progress=lambda d, t: seen.append((d, t)))
        assert seen == [(1, 2), (2, 2)]
    finally:
        hook.remove()


def test_no_hand_written_progress_check_is_left():
    copies = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "not callable(progress)" in path.read_text(encoding="utf-8")
    ]
    assert copies == ["_progress.py"]


def test_generate_texts_refuses_a_non_callable_progress_before_generating():
    from trustlab.llm import generate_texts

    calls = []

    class Quiet:  # a model whose generate takes no progress: generate_texts reports at the end
        name = "quiet"

        def generate(self, prompts, max_new_tokens=64, **settings):
            calls.append(len(prompts))
            return ["x"] * len(prompts)

    with pytest.raises(InputError, match=r"^progress: expected a callable \(done, total\) or None"):
        generate_texts(Quiet(), ["a", "b"], chat=False, progress=5)
    assert calls == []
    seen = []
    generate_texts(Quiet(), ["a", "b"], chat=False, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 2)] and calls == [2]
