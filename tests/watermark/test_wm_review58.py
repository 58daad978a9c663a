"""Review 58 (watermark): bad inputs of the public helpers give one-line InputErrors naming the
argument, and no bad input is read as another value."""

from __future__ import annotations

import numpy as np
import pytest

import trustlab.watermark as W
from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.mark.parametrize("value", ["36", ["x"], [True], {"a"}, [], [0.0], [float("nan")]])
def test_synthesize_refuses_strengths_that_are_not_positive_numbers(value):
    # "36" was read as its characters: blind-watermark strengths 3 and 6, silently
    with pytest.raises(InputError, match=r"^strengths\['dwtDctSvd'\]: expected positive finite"):
        synthesize(1, kinds=("dwtDctSvd",), strengths={"dwtDctSvd": value})


def test_synthesize_takes_strengths_as_an_array():
    # an array was refused with a raw TypeError ("only length-1 arrays ..."); the argument check
    # alone (generating an image costs seconds of imports and covers)
    from trustlab.watermark.synth import _check_args

    table = _check_args(
        1, 0, ("text",), 256, 0.0, (0.0, 0.25), None, {"blind": np.array([72, 150])}
    )[-1]
    assert table["blind"] == (72.0, 150.0)


def _one_line_naming(name, call):
    with pytest.raises(InputError) as err:
        call()
    assert str(err.value).startswith(f"{name}: expected") and "\n" not in str(err.value)


def _stand_in():  # "fitted" without a network: the arguments are checked before it runs
    model = W.WatermarkPredictor()
    model.net_, model.input_size_ = None, 16
    return model


_MASK = np.zeros((6, 6), bool)
_MASK[1:4, 2:5] = True
_COVER = np.full((4, 4, 3), 100, np.uint8)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        # raw ValueError / TypeError before review 58
        ("trim", lambda: W.trimmed_box(_MASK, trim="a")),
        ("watermark_box", lambda: W.relation_of_boxes("abcd", (5, 5, 6, 6), margin=1)),
        ("object_box", lambda: W.relation_of_boxes((0, 0, 1, 1), (5, 5, 6), margin=1)),
        ("opacity", lambda: W.blend(_COVER, _COVER, _MASK[:4, :4], "x")),
        ("psnr", lambda: W.score_of_psnr("x")),
        ("width", lambda: W.cell_of_point(1, 1, width="a", height=3)),
        ("width", lambda: W.cell_of_point(1, 1, width=float("nan"), height=3)),
        ("box", lambda: W.cell_of_box((1, 2, 3), width=10, height=10)),
        ("logits", lambda: W.expected_score("abcde")),
        (
            "random_state",
            lambda: W.TemplateBackend(random_state="x").describe_predictions([None], ["q"]),
        ),
        # accepted: a NaN or negative margin made every pair of apart boxes "separate"
        (
            "margin",
            lambda: W.relation_of_boxes((0, 0, 10, 10), (12, 0, 30, 10), margin=float("nan")),
        ),
        ("margin", lambda: W.relation_of_boxes((0, 0, 10, 10), (12, 0, 30, 10), margin=-3)),
        # raw ValueError before the second review-58 commit
        ("threshold", lambda: _stand_in().predict(np.zeros((1, 8, 8, 3), np.uint8), threshold="a")),
    ],
)
def test_bad_arguments_of_the_helpers_name_the_argument(name, call):
    _one_line_naming(name, call)


def test_the_helpers_still_read_good_arguments():
    assert (
        W.relation_of_boxes((0, 0, 10, 10), (12, 0, 30, 10), margin=np.float32(4))
        == "near the edge"
    )
    assert W.score_of_psnr(float("inf")) == 5.0 and W.score_of_psnr(31) == 3.2
    assert W.trimmed_box(_MASK, trim=0) == (2, 1, 5, 4)
    assert W.cell_of_box(np.array([80, 40, 90, 50]), width=90, height=90) == "Middle-right"
    assert W.expected_score(np.zeros(5)) == 3.0


class _InvisibleMarksOnly:  # a generated set whose marks are all invisible (as --kinds dwtDctSvd)
    images = np.zeros((2, 8, 8, 3), np.uint8)
    kinds = ("dwtDctSvd", "blind")
    scores = np.array([4.5, 4.8])
    levels = ("invisible", "invisible")

    def __len__(self):
        return 2

    def facts(self, i):
        return W.WatermarkFacts(True, float(self.scores[i]), "invisible", content_type="invisible")


class _Constant:
    def answer(self, image, question):
        return "The watermark visibility is: invisible."

    def level_logits(self, image):
        return np.zeros(5)


def test_backend_evaluation_says_why_the_readout_has_no_numbers():
    # the readout was read but not scored (under two visible marks) and the summary was silent,
    # as if it had not been asked for
    ev = W.evaluate_backend(_Constant(), _InvisibleMarksOnly())
    assert ev.readout is None and ev.expected_scores.tolist() == [3.0, 3.0]
    assert "level readout: no SRCC/PLCC (fewer than two images with visible marks)" in ev.summary()
    not_asked = W.evaluate_backend(_Constant(), _InvisibleMarksOnly(), readout=False)
    assert "level readout" not in not_asked.summary()


_SPACES = " " * 300_000


@pytest.mark.timeout(20)  # a hang guard: each text below takes milliseconds; it took minutes
@pytest.mark.parametrize(
    "text",
    [
        "A stop." + _SPACES + "x",  # "\s+\s*" after a sentence end: 20,000 spaces took 3 s
        "x" + "\n" * 300_000 + "x",  # every new line of a run tried "\s*the"
        "A. The watermark visibility is:" + _SPACES + "x",
        "A. The watermark visibility is: faint" + _SPACES + "x",  # "\s*\.?\s*\Z"
        "faint" + _SPACES + "x",  # the bare level word
    ],
)
def test_parse_level_is_linear_in_long_whitespace_runs(text):
    assert W.parse_level(text) is None
    assert W.level_accuracy([text], ["faint"]) == 0.0


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("The watermark visibility is: faint.", "faint"),
        ('He said "done."  \n The  watermark\tvisibility is :Obvious .', "obvious"),
        ("x\n  \n the watermark visibility is: visible", "visible"),
        ("x \u3000\n\u00a0The watermark visibility is:\u00a0invisible.</s>", "invisible"),
        ("A.) ] The watermark visibility is: moderate.", "moderate"),
        ("A.The watermark visibility is: faint.", None),  # no space after the stop
        ("x the watermark visibility is: faint.", None),  # no sentence end before it
        ("The watermark visibility is: faint. More.", None),
        (" Faint. ", "faint"),
        ("faint x", None),
    ],
)
def test_parse_level_reads_the_same_final_sentences(text, level):
    assert W.parse_level(text) == level
