"""docs/llm-runtime.md: "trustlab.llm never changes torch's thread count". Checked at a thread
count other than the tests' 1 (a library that set 1, the usual advice, would tie at 1)."""

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.llm import load_model

torch = pytest.importorskip("torch")

WORDS = "the cat sat on a mat dog ran far away".split()


@pytest.fixture
def three_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


def test_loading_generating_reading_and_steering_leave_the_thread_count(tmp_path, three_threads):
    folder = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3).save(tmp_path / "tiny")
    lm = load_model(folder)
    assert torch.get_num_threads() == three_threads
    lm.generate(["the cat"], max_new_tokens=2, chat=False)
    lm.activations(["the cat sat"], layers=1)
    lm.logprobs(["the cat"], [" sat"])
    with lm.steer(np.ones(64, dtype=np.float32), layer=0):
        lm.generate(["a dog"], max_new_tokens=2, chat=False)
    assert torch.get_num_threads() == three_threads
