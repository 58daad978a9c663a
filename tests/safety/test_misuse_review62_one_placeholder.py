"""Review 62 (round 2): the suites kept their own copy of the placeholder and of fill_previous."""

from trustlab.safety.misuse import decompose, suites


def test_the_suites_use_the_placeholder_of_decompose():
    copies = [k for k, v in vars(suites).items() if v == "{previous}" and k != "PLACEHOLDER"]
    assert copies == []  # was ['PREVIOUS']
    assert suites.PLACEHOLDER is decompose.PLACEHOLDER


def test_flagged_request_is_fill_previous():
    task = suites.load_suite("text", n=2, random_state=0).tasks[0]
    assert decompose.PLACEHOLDER in task.flagged_part
    previous = "- a {fact} \\1"
    assert task.flagged_request(previous) == decompose.fill_previous(task.flagged_part, previous)
