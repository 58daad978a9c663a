"""A rule-based scripted scorer for detection and fuzzing, imported by the test modules of this
folder (test_sae_scoring.py on a synthetic cache, test_sae_planted_real.py through SmolLM2)."""

from __future__ import annotations

import re


def excerpts(prompt):
    """The excerpt texts after the prompt's last ``Feature:`` line (the demonstration's come
    before it)."""
    lines = prompt.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("Feature:"))
    texts = [m.group(1) for ln in lines[last:] if (m := re.match(r"Excerpt \d+: (.*)$", ln))]
    return texts, lines[last]


def _rule(feature):
    """Whether a word fits the explanation: for one about "digits", a word with a digit
    character 0-9 in it (on test_sae_explain's synthetic vocabulary these are exactly its digit
    words); for any other, the explanation's last word itself."""
    if "digits" in feature:
        return lambda word: any(c in "0123456789" for c in word)
    last = feature.split()[-1]
    return lambda word: word == last


class RuleScorer:
    """Answers by a rule: for "digits", detection = any word with a digit, fuzzing = every
    marked word one with a digit; for any other explanation, the same with its last word."""

    name = "rules"

    def __init__(self, garbage_every=0):
        self.prompts, self.garbage_every = [], garbage_every

    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, **kwargs):
        (prompt,) = prompts
        self.prompts.append(prompt)
        if self.garbage_every and len(self.prompts) % self.garbage_every == 0:
            return ["I cannot tell."]
        texts, feature = excerpts(prompt)
        fits = _rule(feature)
        fuzzing = "marked" in prompt.splitlines()[0]
        answers = []
        for text in texts:
            if fuzzing:
                marked = [w for span in re.findall(r"<<(.*?)>>", text) for w in span.split()]
                answers.append(int(bool(marked) and all(fits(w) for w in marked)))
            else:
                answers.append(int(any(fits(w) for w in text.split())))
        return [f"Sure. {answers}"]
