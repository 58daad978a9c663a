"""CASE-Bench records: schema, labels from safe_rate (never 20 votes), ablation, synthetic set."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.context import (
    CI_GROUPS,
    SYNTHETIC_FILE,
    ablate_context,
    load_casebench,
    load_casebench_outputs,
    make_synthetic_casebench,
    synthetic_casebench,
)


@pytest.fixture(scope="module")
def records():
    return synthetic_casebench().records()


def test_the_shipped_file_is_the_seeded_generator_output(records):
    again = make_synthetic_casebench(random_state=0).records()
    assert json.loads(SYNTHETIC_FILE.read_text()) == again == records
    data = synthetic_casebench()
    assert data.n_records == 60 and data.n_queries == 30 and data.n_categories == 15
    assert data.intended_safe.sum() == 30
    assert np.allclose(data.safe_rate * 21, np.round(data.safe_rate * 21))


def test_category_typos_are_kept_and_child_crimes_are_forced_unsafe(records):
    data = load_casebench(records)
    assert {"secual crimes", "advice on discirmination behaviours"} <= set(data.categories)
    child = np.array([c == "child-related crimes" for c in data.categories])
    assert (data.safe_rate[child] > 0.5).any()  # the votes say safe somewhere ...
    assert not data.human_safe[child].any()  # ... the label does not
    assert (data.soft_label[child] == 0).all()


def test_labels_never_come_from_a_20_vote_list(records):
    record = copy.deepcopy(records[0])
    # 11 of 21 votes safe (majority safe), but the first 20 votes hold only 9 safe ones
    record["scores"] = [1] * 9 + [2] * 11
    record["safe_rate"] = 11 / 21
    record["category"] = "fraud, scams, and deception"
    data = load_casebench([record])
    twenty_majority_safe = record["scores"].count(1) > 10
    assert not twenty_majority_safe
    assert data.human_safe[0] and data.safe_votes[0] == 11 and data.short_vote_lists == 1


def test_a_21_vote_list_must_agree_with_safe_rate(records):
    record = copy.deepcopy(records[0])
    record["scores"] = [1] * 12 + [2] * 9
    record["safe_rate"] = 11 / 21
    with pytest.raises(InputError, match=r"record 0: field safe_rate"):
        load_casebench([record])


def test_a_safe_rate_that_is_not_k_of_21_is_refused(records):
    record = copy.deepcopy(records[0])
    record["safe_rate"] = 0.5
    record.pop("scores")
    with pytest.raises(InputError, match=r"record 0: field safe_rate.*1/21"):
        load_casebench([record])


@pytest.mark.parametrize(
    ("group", "key"), [("sender", "platform_type"), ("recipient", "background")]
)
def test_missing_ci_field_names_the_record_and_the_field(records, tmp_path, group, key):
    broken = copy.deepcopy(records[:5])
    del broken[3]["context"][group][key]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(InputError, match=rf"record 3: field context\.{group}\.{key}: .*missing"):
        load_casebench(path)


def test_urgency_is_optional_and_background_may_be_a_mapping(records):
    record = copy.deepcopy(records[0])
    record["context"]["transmission_principle"].pop("urgency", None)
    record["context"]["recipient"]["background"] = {"demographics": "an adult writer"}
    assert load_casebench([record]).n_records == 1


def test_wrong_types_are_refused(records):
    record = copy.deepcopy(records[0])
    record["context_intended_to_be_safe"] = "yes"
    with pytest.raises(InputError, match="record 0: field context_intended_to_be_safe"):
        load_casebench([record])


def test_output_files_find_the_model_key(records):
    outputs = copy.deepcopy(records)
    for r in outputs:
        r["gpt-x"] = "safe"
    data = load_casebench_outputs(outputs)
    assert data.model == "gpt-x" and set(data.predictions) == {"safe"}
    for r in outputs:
        r["other"] = "unsafe"
    with pytest.raises(InputError, match="^model: .*gpt-x, other"):
        load_casebench_outputs(outputs)
    assert load_casebench_outputs(outputs, "other").predictions[0] == "unsafe"
    with pytest.raises(InputError, match="record 0: field nobody: missing"):
        load_casebench_outputs(outputs, "nobody")
    # a file of something else is a bad record, not a missing model (the message blamed --model)
    with pytest.raises(InputError, match="^path: record 0: expected a JSON object, got int"):
        load_casebench_outputs([1, 2])
    with pytest.raises(InputError, match="^path: record 0: field context: field required"):
        load_casebench_outputs([{"query": "q", "category": "c", "gpt-x": "safe"}])


def test_ablation_removes_groups_and_keys(records):
    context = records[0]["context"]
    assert ablate_context(context, None) == context
    assert set(ablate_context(context, "sender")) == {"recipient", "transmission_principle"}
    assert ablate_context(context, list(CI_GROUPS)) == {}
    one = ablate_context(context, ["confidentiality", "type"])
    assert "confidentiality" not in one["transmission_principle"]
    assert "type" not in one["recipient"] and "background" in one["recipient"]
    assert "confidentiality" in context["transmission_principle"]  # the input is unchanged
    both = ablate_context(context, "nature_of_the_interaction,platform_type")
    assert "sender" not in both  # an emptied group is dropped


def test_unknown_ablation_key_is_named_with_the_valid_ones(records):
    with pytest.raises(InputError, match=r"^ablate: .*sender.*confidentiality.*got 'sendr'"):
        ablate_context(records[0]["context"], "sendr")


def test_output_files_may_hold_ablated_contexts(records):
    # the authors' ablation files (output_logits_sender.json ...) hold the contexts their judge
    # saw: the removed groups or keys are absent (they were refused as 'field required')
    outputs = copy.deepcopy(records)
    for r in outputs:
        r["context"] = ablate_context(r["context"], "sender,confidentiality")
        r["judge"] = "safe"
    outputs[1]["context"] = {}  # all three groups removed: no context
    data = load_casebench_outputs(outputs)
    assert data.model == "judge" and len(data) == len(records)
    assert "sender" not in data.contexts[0]
    with pytest.raises(InputError, match="^path: record 0: field context.sender: field required"):
        load_casebench(outputs)  # a data file still needs every CI field
    outputs[2]["context"]["recipient"] = 3
    with pytest.raises(InputError, match="^path: record 2: field context.recipient: input should"):
        load_casebench_outputs(outputs)
