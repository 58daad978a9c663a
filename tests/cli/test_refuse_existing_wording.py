"""An --out that already holds a run's files is refused with a pronoun that fits what it holds:
'a trained network (training.json); pass --overwrite to replace it' (it said 'them' of one
network), 'results (result.json); ... replace them'."""

import pytest

from trustlab.cli._runs import refuse_existing
from trustlab.errors import InputError


@pytest.mark.parametrize(
    "what, names, pronoun",
    [("a trained network", ("training.json",), "it"), ("an evaluation", ("result.json",), "it"),
     ("results", ("result.json",), "them"), ("predictions", ("result.json", "x.csv"), "them")],
)  # fmt: skip
def test_the_refusal_replaces_it_or_them(tmp_path, what, names, pronoun):
    for name in names:
        (tmp_path / name).write_text("{}")
    with pytest.raises(InputError) as exc:
        refuse_existing(tmp_path, False, names, what)
    assert str(exc.value) == (
        f"--out: {tmp_path} already holds {what} ({', '.join(names)}); pass --overwrite to "
        f"replace {pronoun}, or choose another --out"
    )
    refuse_existing(tmp_path, True, names, what)  # --overwrite: no refusal


def test_another_commands_result_is_not_named_as_ours(tmp_path):
    # evaluate rank into a fairness dcp folder said 'already holds a ranking (result.json)'
    for name in ("result.json", "dcp.png"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(InputError) as exc:
        refuse_existing(tmp_path, False, ("result.json", "ranking.png"), "a ranking")
    assert str(exc.value) == (
        f"--out: {tmp_path} already holds an earlier run's result.json (beside dcp.png); pass "
        "--overwrite to replace it, or choose another --out"
    )


def test_a_result_only_commands_own_folder_keeps_its_wording(tmp_path):
    # diff review 60 H: 'safety context score' (names: result.json only) rerun into its own folder
    # said 'an earlier run's result.json (beside by_category.json, metrics.png); ... replace it'
    for name in ("result.json", "metrics.png", "by_category.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(InputError) as exc:
        refuse_existing(tmp_path, False, ("result.json",))
    assert str(exc.value) == (
        f"--out: {tmp_path} already holds results (result.json); pass --overwrite to replace "
        "them, or choose another --out"
    )
