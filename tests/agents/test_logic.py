"""The rule language: LTLf semantics against flloat (B3), the parser, simplify and residual."""

from __future__ import annotations

import doctest
import itertools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trustlab.agents import logic
from trustlab.agents.logic import (
    FALSE,
    RESERVED_WORDS,
    TRUE,
    Always,
    And,
    Const,
    Eventually,
    Formula,
    Implies,
    Next,
    Not,
    Or,
    Pred,
    Release,
    Until,
    WeakNext,
    evaluate,
    evaluate_positions,
    parse_rule,
    residual,
    simplify,
)
from trustlab.errors import InputError

ATOMS = ("a", "b", "c")
UNARY = (Not, Next, WeakNext, Always, Eventually)
BINARY = (Implies, Until, Release)
TEMPORAL = (Next, WeakNext, Always, Eventually, Until, Release)
a, b, c, d = (Pred(n) for n in "abcd")


# --------------------------------------------------------------------------------------------
# Random formulas and traces


def random_formula(rng: random.Random, depth: int) -> Formula:
    """A formula of depth at most ``depth`` over ATOMS; inner nodes are chosen uniformly."""
    if depth == 0 or rng.random() < 0.1:
        return rng.choice([TRUE, FALSE]) if rng.random() < 0.05 else Pred(rng.choice(ATOMS))
    kind = rng.choice([*UNARY, And, Or, *BINARY])
    if kind in UNARY:
        return kind(random_formula(rng, depth - 1))
    if kind in (And, Or):
        return kind(tuple(random_formula(rng, depth - 1) for _ in range(rng.randint(2, 3))))
    return kind(random_formula(rng, depth - 1), random_formula(rng, depth - 1))


def random_trace(rng: random.Random, length: int) -> list[dict[str, bool]]:
    return [{n: rng.random() < 0.5 for n in ATOMS} for _ in range(length)]


def nodes(formula: Formula):
    yield formula
    for kid in formula.children:
        yield from nodes(kid)


def size(formula: Formula) -> int:
    return sum(1 for _ in nodes(formula))


# Hypothesis strategies: formulas over ATOMS (with constants) and steps over ATOMS.
def formulas(names=None, max_leaves: int = 10):
    names = st.sampled_from(ATOMS) if names is None else names
    leaves = st.one_of(names.map(Pred), st.sampled_from([TRUE, FALSE]))

    def extend(kids):
        return st.one_of(
            *(kids.map(kind) for kind in UNARY),
            *(
                st.lists(kids, min_size=2, max_size=3).map(lambda x, k=k: k(tuple(x)))
                for k in (And, Or)
            ),
            *(st.tuples(kids, kids).map(lambda x, k=k: k(*x)) for k in BINARY),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


steps = st.fixed_dictionaries({n: st.booleans() for n in ATOMS})
CANDIDATES = [dict(zip(ATOMS, v, strict=True)) for v in itertools.product([False, True], repeat=3)]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------
# B3: LTLf semantics against flloat


def to_flloat(formula: Formula):
    """Our formula as a flloat LTLf object (built directly, not through either parser)."""
    fl = pytest.importorskip("flloat.ltlf")
    if isinstance(formula, Const):
        return fl.LTLfTrue() if formula.value else fl.LTLfFalse()
    if isinstance(formula, Pred):
        return fl.LTLfAtomic(formula.name)
    kids = [to_flloat(k) for k in formula.children]
    simple = {Not: fl.LTLfNot, Next: fl.LTLfNext, WeakNext: fl.LTLfWeakNext}
    simple.update({Always: fl.LTLfAlways, Eventually: fl.LTLfEventually})
    if type(formula) in simple:
        return simple[type(formula)](kids[0])
    listed = {And: fl.LTLfAnd, Or: fl.LTLfOr, Implies: fl.LTLfImplies}
    listed.update({Until: fl.LTLfUntil, Release: fl.LTLfRelease})
    return listed[type(formula)](kids)


def flloat_text(formula: Formula) -> str:
    """Our formula in flloat's concrete syntax, fully parenthesised (letters and symbols)."""
    if isinstance(formula, Const):
        return "true" if formula.value else "false"
    if isinstance(formula, Pred):
        return formula.name
    kids = [flloat_text(k) for k in formula.children]
    prefix = {Not: "!", Next: "X ", WeakNext: "WX ", Always: "G ", Eventually: "F "}
    if type(formula) in prefix:
        return f"({prefix[type(formula)]}{kids[0]})"
    infix = {And: " & ", Or: " | ", Implies: " -> ", Until: " U ", Release: " R "}
    return "(" + infix[type(formula)].join(kids) + ")"


@pytest.fixture(scope="module")
def b3_sample():
    """1,000 random formulas of depth <= 4, each with one random trace of every length 1..8."""
    rng = random.Random(20250317)
    sample = []
    for _ in range(1000):
        formula = random_formula(rng, 4)
        sample.append((formula, [random_trace(rng, n) for n in range(1, 9)]))
    return sample


def disagreements(sample, ours) -> int:
    count = 0
    for formula, traces in sample:
        oracle = to_flloat(formula)
        for trace in traces:
            count += bool(ours(formula, trace)) != bool(oracle.truth(trace, 0))
    return count


def test_b3_sample_is_rich(b3_sample):
    depths = [f.depth for f, _ in b3_sample]
    assert max(depths) == 4 and sum(d == 4 for d in depths) > 500
    kinds = [type(n) for f, _ in b3_sample for n in nodes(f)]
    for kind in (*UNARY, And, Or, *BINARY, Pred, Const):
        assert kinds.count(kind) >= 100, kind


def test_b3_evaluate_agrees_with_flloat_everywhere(b3_sample):
    assert disagreements(b3_sample, evaluate) == 0


def drop_temporal(formula: Formula) -> Formula:
    """ALWAYS/EVENTUALLY evaluated at the current step only (the released code)."""
    if isinstance(formula, (Always, Eventually)):
        return drop_temporal(formula.arg)
    if isinstance(formula, (And, Or)):
        return type(formula)(tuple(drop_temporal(k) for k in formula.args))
    if formula.children:
        return type(formula)(*(drop_temporal(k) for k in formula.children))
    return formula


def test_b3_the_oracle_catches_the_authors_defects(b3_sample):
    current_step_only = disagreements(b3_sample, lambda f, t: evaluate(drop_temporal(f), t))
    last_step_only = disagreements(b3_sample, lambda f, t: evaluate(f, t[-1:]))
    assert current_step_only > 100
    assert last_step_only > 100
    # the smallest witness: ALWAYS a on a trace where a fails later
    trace = [{"a": True}, {"a": False}]
    assert not to_flloat(Always(a)).truth(trace, 0) and evaluate(drop_temporal(Always(a)), trace)


def test_b3_strong_and_weak_next_and_the_trace_end_match_flloat():
    for formula in (Next(a), WeakNext(a), Next(TRUE), WeakNext(FALSE), Until(a, b), Release(a, b)):
        oracle = to_flloat(formula)
        for trace in ([{"a": True, "b": True}], [{"a": True, "b": False}] * 2):
            assert evaluate(formula, trace) == oracle.truth(trace, 0)
    assert evaluate(Next(TRUE), [{}]) is False  # strong: there is no next step
    assert evaluate(WeakNext(FALSE), [{}]) is True  # weak: holds at the last step
    with pytest.raises(InputError, match="trace"):
        evaluate(TRUE, [])  # flloat accepts the empty trace; trustlab rejects it


def test_b3_flloat_syntax_parses_to_the_same_formula(b3_sample):
    parser = pytest.importorskip("flloat.parser.ltlf").LTLfParser()
    for formula, traces in b3_sample[:200]:
        text = flloat_text(formula)
        assert parse_rule(text) == formula, text
        theirs = parser(text)
        for trace in traces:
            assert evaluate(formula, trace) == theirs.truth(trace, 0), text


# --------------------------------------------------------------------------------------------
# The evaluator


def test_evaluate_matches_hand_computed_values():
    trace = [{"a": True, "b": False}, {"a": True, "b": False}, {"a": False, "b": True}]
    assert evaluate_positions(Until(a, b), trace) == [True, True, True]
    assert evaluate_positions(Always(a), trace) == [False, False, False]
    assert evaluate_positions(Eventually(Not(a)), trace) == [True, True, True]
    assert evaluate_positions(Next(b), trace) == [False, True, False]
    assert evaluate_positions(WeakNext(b), trace) == [False, True, True]
    assert evaluate_positions(Release(b, a), trace) == [False, False, False]
    assert evaluate_positions(Release(a, Not(b)), trace) == [True, True, False]


@pytest.mark.parametrize(
    ("trace", "argument"),
    [
        ([], "trace"),
        ([{"a": True}, {"b": True}], r"trace\[1\]"),
        ([{"a"}], r"trace\[0\]"),
        ([{"a": 1}], "trace"),
    ],
)
def test_evaluate_rejects_bad_traces(trace, argument):
    with pytest.raises(InputError, match=argument):
        evaluate(And((a, Eventually(a))), trace)


def test_vectorised_evaluation_equals_each_world_evaluated_alone():
    rng = random.Random(7)
    gen = np.random.default_rng(7)
    worlds = 16
    for _ in range(150):
        formula = random_formula(rng, 4)
        length = rng.randint(1, 6)
        # every predicate an array over worlds, except some plain bools (broadcasting)
        trace = [
            {
                n: bool(gen.random() < 0.5) if gen.random() < 0.2 else gen.random(worlds) < 0.5
                for n in ATOMS
            }
            for _ in range(length)
        ]
        together = evaluate_positions(formula, trace)
        for w in range(worlds):
            alone = [
                {n: bool(np.broadcast_to(v, (worlds,))[w]) for n, v in s.items()} for s in trace
            ]
            expect = evaluate_positions(formula, alone)
            got = [bool(np.broadcast_to(v, (worlds,))[w]) for v in together]
            assert got == expect
            assert all(isinstance(v, bool) for v in expect)


# --------------------------------------------------------------------------------------------
# The parser


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NOT a AND b", And((Not(a), b))),
        ("a OR b AND c", Or((a, And((b, c))))),
        ("a AND b OR c AND d", Or((And((a, b)), And((c, d))))),
        ("a AND b AND c", And((a, b, c))),
        ("(a AND b) AND c", And((And((a, b)), c))),
        ("a OR b OR c OR d", Or((a, b, c, d))),
        ("a IMPLIES b IMPLIES c", Implies(a, Implies(b, c))),
        ("(a IMPLIES b) IMPLIES c", Implies(Implies(a, b), c)),
        ("a OR b IMPLIES c AND d", Implies(Or((a, b)), And((c, d)))),
        ("a UNTIL b UNTIL c", Until(a, Until(b, c))),
        ("a RELEASE b UNTIL c", Release(a, Until(b, c))),
        ("a AND b UNTIL c", And((a, Until(b, c)))),
        ("a UNTIL b AND c", And((Until(a, b), c))),
        ("NOT a UNTIL b", Until(Not(a), b)),
        ("ALWAYS a IMPLIES b", Implies(Always(a), b)),
        ("ALWAYS (a IMPLIES b)", Always(Implies(a, b))),
        ("NOT NOT a", Not(Not(a))),
        ("NOT ALWAYS EVENTUALLY a", Not(Always(Eventually(a)))),
        ("NEXT a OR WEAK_NEXT b", Or((Next(a), WeakNext(b)))),
        ("TRUE AND FALSE", And((TRUE, FALSE))),
        ("((a))", a),
    ],
)
def test_precedence_and_associativity(text, expected):
    assert parse_rule(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("always(a implies not b)", Always(Implies(a, Not(b)))),
        ("Eventually a Until b", Until(Eventually(a), b)),
        ("true or False", Or((TRUE, FALSE))),
        ("weak_next a", WeakNext(a)),
        # function-call style
        ("ALWAYS(a)", Always(a)),
        ("NOT(a)", Not(a)),
        ("EVENTUALLY(NOT(a))", Eventually(Not(a))),
        ("NOT(a) AND ALWAYS(b)", And((Not(a), Always(b)))),
        ("AND(a, b, c)", And((a, b, c))),
        ("OR(a, AND(b, c))", Or((a, And((b, c))))),
        ("IMPLIES(a, b OR c)", Implies(a, Or((b, c)))),
        ("UNTIL(a, b)", Until(a, b)),
        ("RELEASE(a, b)", Release(a, b)),
        # symbols
        ("a & b && c", And((a, b, c))),
        ("a | b || c", Or((a, b, c))),
        ("!a & ~b", And((Not(a), Not(b)))),
        ("a -> b => c", Implies(a, Implies(b, c))),
        # LTL letters where they cannot be predicates
        ("G(a -> X b)", Always(Implies(a, Next(b)))),
        ("F a & WX b", And((Eventually(a), WeakNext(b)))),
        ("a U b R c", Until(a, Release(b, c))),
        ("G F a", Always(Eventually(a))),
        ("X !a", Next(Not(a))),
        # ... and predicates where they cannot be operators
        ("G", Pred("G")),
        ("G AND X", And((Pred("G"), Pred("X")))),
        ("NOT F", Not(Pred("F"))),
        ("X U Y", Until(Pred("X"), Pred("Y"))),
        ("U R R", Release(Pred("U"), Pred("R"))),
        ("G U", Always(Pred("U"))),
        ("f AND x AND g", And((Pred("f"), Pred("x"), Pred("g")))),
        # names
        ("web.click_button AND _x1", And((Pred("web.click_button"), Pred("_x1")))),
        ("NOTIFY OR always_on OR Untilx", Or((Pred("NOTIFY"), Pred("always_on"), Pred("Untilx")))),
        ("  a\n\tAND\n b  ", And((a, b))),
    ],
)
def test_words_calls_symbols_and_letters(text, expected):
    assert parse_rule(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # the shape of the `logic` strings the authors' grounding prompt asks for
        "ALWAYS(send_money IMPLIES user_confirmed)",
        "ALWAYS (access_personal_data IMPLIES (user_consent AND NOT share_externally))",
        "NOT (post_content AND contains_hate_speech)",
        "submit_order IMPLIES EVENTUALLY confirmation_shown",
        "(is_purchase AND NOT user_approved) IMPLIES NOT complete_checkout",
        "NOT delete_repository UNTIL owner_confirmed",
        "ALWAYS(NOT(click_ad)) AND EVENTUALLY(task_completed)",
        "verify_identity OR (is_admin AND ALWAYS(log_action))",
    ],
)
def test_author_style_rules_parse_and_round_trip(text):
    formula = parse_rule(text)
    assert parse_rule(str(formula)) == formula
    names = {w for w in text.replace("(", " ").replace(")", " ").split()}
    assert formula.predicates == {w for w in names if w.upper() not in RESERVED_WORDS}


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("(a AND b", 8, "')' to close the '(' at position 0"),
        ("a AND (b OR c", 13, "')' to close the '(' at position 6"),
        ("a AND b)", 7, "an operator"),
        ("a AND", 5, "an operand"),
        ("a IMPLIES", 9, "an operand"),
        ("ALWAYS", 6, "an operand"),
        ("a AND until", 6, "an operand"),
        ("a AND AND b", 6, "an operand"),
        ("NOT true_ AND NOT", 17, "an operand"),
        ("a b", 2, "an operator"),
        ("()", 1, "an operand"),
        ("a $ b", 2, "a predicate name"),
        ("1a AND b", 0, "a predicate name"),
        ("a,b", 1, "an operator"),
        ("AND(a)", 5, "a second argument"),
        ("IMPLIES(a, b, c)", 15, "the two arguments"),
        ("AND(a, b", 8, "',' or ')'"),
    ],
)
def test_syntax_errors_name_logic_the_position_and_the_expectation(text, position, expected):
    with pytest.raises(InputError) as info:
        parse_rule(text)
    message = str(info.value)
    assert message.startswith("logic: expected ")
    assert f"at position {position} of {text!r}" in message
    assert expected in message
    assert info.value.argument == "logic"


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_logic_is_an_error(text):
    with pytest.raises(InputError, match="^logic: expected a formula"):
        parse_rule(text)


def test_absurdly_deep_nesting_is_an_input_error():
    with pytest.raises(InputError, match="^logic: expected a formula nested less deeply"):
        parse_rule("NOT (" * 5000 + "a" + ")" * 5000)
    assert parse_rule("NOT (" * 100 + "a" + ")" * 100).depth == 100


@pytest.mark.parametrize("value", [None, 3, b"a AND b", ["a"]])
def test_logic_must_be_a_string(value):
    with pytest.raises(InputError, match="^logic: expected a formula as a string"):
        parse_rule(value)


@pytest.mark.parametrize("word", sorted(RESERVED_WORDS))
def test_reserved_words_are_not_predicates(word):
    for spelling in (word, word.lower(), word.title()):
        formula = parse_rule(f"a OR ({spelling})") if word in ("TRUE", "FALSE") else None
        if formula is not None:
            assert formula == Or((a, Const(word == "TRUE")))
            continue
        with pytest.raises(InputError, match="^logic: expected an operand"):
            parse_rule(f"a OR {spelling}")


TRICKY_NAMES = ["a", "b_1", "x.y.z", "_p", "G", "F", "X", "WX", "U", "R", "g", "x", "u", "r"]
TRICKY_NAMES += ["notify", "always_on", "UNTILx", "TRUE_", "café", "Send.Money2"]
names_strategy = st.one_of(
    st.sampled_from(TRICKY_NAMES),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,6}", fullmatch=True).filter(
        lambda s: s.upper() not in RESERVED_WORDS
    ),
)


@FAST
@given(formulas(names_strategy, max_leaves=14))
def test_str_round_trips_through_the_parser(formula):
    text = str(formula)
    assert parse_rule(text) == formula
    assert str(parse_rule(text)) == text


@FAST
@given(st.text(alphabet="abGXUR_.()!~&|-=> ,\tANDORNTIMPLESWAYV", max_size=30))
def test_arbitrary_text_parses_or_raises_input_error(text):
    try:
        formula = parse_rule(text)
    except InputError as err:
        assert str(err).startswith("logic: expected ")
    else:
        assert parse_rule(str(formula)) == formula


# --------------------------------------------------------------------------------------------
# simplify


def test_simplify_examples():
    assert simplify(parse_rule("(a AND TRUE) AND (a OR b) AND NOT NOT c")) == And((a, c))
    assert simplify(parse_rule("ALWAYS FALSE OR EVENTUALLY TRUE")) == TRUE
    assert simplify(parse_rule("TRUE UNTIL a")) == Eventually(a)
    assert simplify(parse_rule("FALSE RELEASE a")) == Always(a)
    assert simplify(parse_rule("NEXT TRUE")) == Next(TRUE)  # not last: not a constant
    assert simplify(parse_rule("WEAK_NEXT FALSE")) == WeakNext(FALSE)  # last: not a constant
    assert simplify(parse_rule("a AND NOT a")) == FALSE
    assert simplify(parse_rule("a OR (a AND b) OR (b IMPLIES a)")) == Implies(b, a)
    assert simplify(parse_rule("a AND (a IMPLIES b)")) == And((a, b))
    assert simplify(parse_rule("ALWAYS NEXT a")) == FALSE  # fails at the last step
    assert simplify(parse_rule("EVENTUALLY WEAK_NEXT a")) == TRUE  # holds at the last step


def stray_constants(formula: Formula) -> int:
    """Constants other than those of NEXT TRUE ("not the last step") and WEAK_NEXT FALSE."""
    if formula in (Next(TRUE), WeakNext(FALSE)):
        return 0
    return isinstance(formula, Const) + sum(stray_constants(k) for k in formula.children)


@FAST
@given(formulas(), st.lists(steps, min_size=1, max_size=6))
def test_simplify_preserves_the_meaning(formula, trace):
    simple = simplify(formula)
    assert evaluate_positions(simple, trace) == evaluate_positions(formula, trace)
    assert simple in (TRUE, FALSE) or stray_constants(simple) == 0
    assert simple.predicates <= formula.predicates
    assert size(simple) <= size(formula)


# --------------------------------------------------------------------------------------------
# residual


def check_residual(formula: Formula, history: list[dict[str, bool]]) -> Formula:
    rest = residual(formula, history)
    assert not rest.temporal
    assert rest in (TRUE, FALSE) or not any(isinstance(n, Const) for n in nodes(rest))
    assert rest.predicates <= formula.predicates
    values = [evaluate(formula, [*history, c]) for c in CANDIDATES]
    assert [evaluate(rest, [c]) for c in CANDIDATES] == values
    return rest


@FAST
@given(formulas(), st.lists(steps, max_size=6))
def test_residual_agrees_with_evaluating_every_candidate(formula, history):
    rest = check_residual(formula, history)
    values = {evaluate(formula, [*history, c]) for c in CANDIDATES}
    # exact: a constant exactly when every candidate gets the same value
    assert (rest in (TRUE, FALSE)) == (len(values) == 1)


@FAST
@given(formulas(), st.lists(steps, max_size=6))
def test_residual_without_truth_tables_is_still_exact(formula, history):
    with pytest.MonkeyPatch.context() as mp:  # the path for rules over many predicates
        mp.setattr(logic, "_MAX_TABLE_PREDICATES", -1)
        check_residual(formula, history)


def test_residual_on_the_b3_sample(b3_sample):
    for formula, traces in b3_sample[:300]:
        for trace in (traces[2], traces[6]):  # histories of 2 and 6 steps
            check_residual(formula, trace[:-1])


def test_residual_examples():
    # operands implied by others are dropped (a implies a OR b)
    assert residual(parse_rule("a AND (a OR b) AND c"), []) == And((a, c))
    assert residual(parse_rule("a OR (a AND b) OR c"), []) == Or((a, c))
    rule = parse_rule("ALWAYS(send IMPLIES EVENTUALLY confirmed)")
    assert residual(rule, []) == Implies(Pred("send"), Pred("confirmed"))
    assert residual(rule, [{"send": True, "confirmed": False}]) == Pred("confirmed")
    assert residual(rule, [{"send": True, "confirmed": True}] * 3) == Implies(
        Pred("send"), Pred("confirmed")
    )
    assert (
        residual(parse_rule("NOT pay UNTIL approved"), [{"pay": True, "approved": False}]) == FALSE
    )
    assert residual(parse_rule("NEXT a"), []) == FALSE
    assert residual(parse_rule("NEXT a"), [{"a": False}]) == a


def test_residual_stays_small_on_a_long_history():
    # without truth tables the recurrences nest one level per step on this rule
    rule = parse_rule(
        "(((ALWAYS a) RELEASE FALSE) RELEASE (WEAK_NEXT (b IMPLIES (EVENTUALLY c)))) "
        "UNTIL ((EVENTUALLY (NEXT c)) IMPLIES (ALWAYS ((a RELEASE b) IMPLIES (c OR b OR a))))"
    )
    history = [{"a": False, "b": True, "c": False}] * 300
    assert check_residual(rule, history) == TRUE
    steady = parse_rule("ALWAYS(a IMPLIES EVENTUALLY b) AND (NOT c UNTIL b)")
    rng = random.Random(3)
    history = [{"a": rng.random() < 0.2, "b": False, "c": False} for _ in range(300)]
    assert size(check_residual(steady, history)) <= size(steady)


@pytest.mark.parametrize(
    ("history", "argument"),
    [
        ("ab", "history"),
        ({"a": True}, "history"),
        ([{"b": True}], r"history\[0\]"),
        ([{"a": np.array([True, False])}], r"history\[0\]\['a'\]: expected a bool"),
        ([{"a": 1}], r"history\[0\]\['a'\]"),
    ],
)
def test_residual_rejects_bad_histories(history, argument):
    with pytest.raises(InputError, match=argument):
        residual(Always(a), history)
    with pytest.raises(InputError, match="formula"):
        residual("ALWAYS a", [])


def test_the_module_examples_run():
    result = doctest.testmod(logic, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 8
