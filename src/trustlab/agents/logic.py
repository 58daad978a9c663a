"""Rule formulas: propositional logic with LTLf (linear temporal logic on finite traces).

A rule's ``logic`` is a formula over named predicates, built from ``AND``, ``OR``, ``NOT``,
``IMPLIES`` and the temporal operators ``ALWAYS``, ``EVENTUALLY``, ``UNTIL`` (plus ``NEXT``,
``WEAK_NEXT`` and ``RELEASE``). It is evaluated on a finite trace: a sequence of steps, each a
mapping from predicate name to its truth value at that step. trustlab's guardrail evaluates a rule
on the whole trace (the history plus the candidate step), never on the candidate step alone.

Semantics (LTLf, De Giacomo and Vardi 2013) at position ``i`` of a trace of length ``n``:

- ``NEXT f`` holds iff ``i + 1 < n`` and ``f`` holds at ``i + 1`` (strong next);
  ``WEAK_NEXT f`` holds iff ``i + 1 == n`` or ``f`` holds at ``i + 1``;
- ``ALWAYS f``: ``f`` holds at every ``j`` with ``i <= j < n``;
- ``EVENTUALLY f``: ``f`` holds at some ``j`` with ``i <= j < n``;
- ``f UNTIL g``: some ``j >= i`` has ``g``, and ``f`` holds at every ``k`` with ``i <= k < j``;
- ``f RELEASE g`` is ``NOT (NOT f UNTIL NOT g)``.

A formula holds on a trace iff it holds at position 0. Step values may be numpy boolean arrays
(one entry per possible world): evaluation broadcasts, so one call scores every world.

:func:`parse_rule` reads the rule language (``str(formula)`` writes it back), :func:`simplify`
folds constants and :func:`residual` partially evaluates a rule on a known history, leaving a
propositional condition on the candidate step.

Why this module is long: it is the whole rule language -- the formula tree, its evaluator, its
parser and its partial evaluator share the node types and the recurrences, and splitting them
would scatter one small semantics over several files.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from trustlab.errors import InputError

__all__ = [
    "Formula",
    "Const",
    "Pred",
    "Not",
    "And",
    "Or",
    "Implies",
    "Next",
    "WeakNext",
    "Always",
    "Eventually",
    "Until",
    "Release",
    "TRUE",
    "FALSE",
    "RESERVED_WORDS",
    "evaluate",
    "evaluate_positions",
    "parse_rule",
    "residual",
    "simplify",
]


class Formula:
    """Base of every formula node (frozen dataclasses; equal formulas compare and hash equal)."""

    __slots__ = ()

    @property
    def children(self) -> tuple[Formula, ...]:
        return ()

    @property
    def predicates(self) -> frozenset[str]:
        """The names of the predicates the formula mentions."""
        out: set[str] = set()
        stack: list[Formula] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, Pred):
                out.add(node.name)
            stack.extend(node.children)
        return frozenset(out)

    @property
    def temporal(self) -> bool:
        """Whether the formula uses a temporal operator."""
        stack: list[Formula] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, (Next, WeakNext, Always, Eventually, Until, Release)):
                return True
            stack.extend(node.children)
        return False

    @property
    def depth(self) -> int:
        """Nesting depth (a predicate or constant has depth 0)."""
        kids = self.children
        return 0 if not kids else 1 + max(k.depth for k in kids)

    def __and__(self, other: Formula) -> Formula:
        return And((self, other))

    def __or__(self, other: Formula) -> Formula:
        return Or((self, other))

    def __invert__(self) -> Formula:
        return Not(self)


@dataclass(frozen=True, slots=True)
class Const(Formula):
    value: bool

    def __str__(self) -> str:
        return "TRUE" if self.value else "FALSE"


TRUE = Const(True)
FALSE = Const(False)


@dataclass(frozen=True, slots=True)
class Pred(Formula):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class _Unary(Formula):
    """A one-operand node; subclasses name their operator in ``_WORD``."""

    arg: Formula
    _WORD: ClassVar[str] = ""

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        return f"{self._WORD} {_wrap(self.arg)}"


@dataclass(frozen=True, slots=True)
class _Binary(Formula):
    """A two-operand infix node; subclasses name their operator in ``_WORD``."""

    left: Formula
    right: Formula
    _WORD: ClassVar[str] = ""

    @property
    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{_wrap(self.left)} {self._WORD} {_wrap(self.right)}"


@dataclass(frozen=True, slots=True)
class _Nary(Formula):
    """An n-ary node (at least two operands); subclasses name their operator in ``_WORD``."""

    args: tuple[Formula, ...]
    _WORD: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if len(self.args) < 2:
            raise InputError.bad(f"{type(self).__name__}.args", "at least two operands", self.args)

    @property
    def children(self) -> tuple[Formula, ...]:
        return self.args

    def __str__(self) -> str:
        return f" {self._WORD} ".join(_wrap(a) for a in self.args)


@dataclass(frozen=True, slots=True)
class Not(_Unary):
    _WORD: ClassVar[str] = "NOT"


@dataclass(frozen=True, slots=True)
class And(_Nary):
    _WORD: ClassVar[str] = "AND"


@dataclass(frozen=True, slots=True)
class Or(_Nary):
    _WORD: ClassVar[str] = "OR"


@dataclass(frozen=True, slots=True)
class Implies(_Binary):
    _WORD: ClassVar[str] = "IMPLIES"


@dataclass(frozen=True, slots=True)
class Next(_Unary):
    _WORD: ClassVar[str] = "NEXT"


@dataclass(frozen=True, slots=True)
class WeakNext(_Unary):
    _WORD: ClassVar[str] = "WEAK_NEXT"


@dataclass(frozen=True, slots=True)
class Always(_Unary):
    _WORD: ClassVar[str] = "ALWAYS"


@dataclass(frozen=True, slots=True)
class Eventually(_Unary):
    _WORD: ClassVar[str] = "EVENTUALLY"


@dataclass(frozen=True, slots=True)
class Until(_Binary):
    _WORD: ClassVar[str] = "UNTIL"


@dataclass(frozen=True, slots=True)
class Release(_Binary):
    _WORD: ClassVar[str] = "RELEASE"


def _wrap(node: Formula) -> str:
    return str(node) if isinstance(node, (Pred, Const)) else f"({node})"


Trace = Sequence[Mapping[str, Any]]


def evaluate(formula: Formula, trace: Trace) -> Any:
    """Whether ``formula`` holds on the finite ``trace`` (at position 0).

    Each step maps predicate names to a bool or a numpy boolean array; arrays broadcast, so the
    result is a bool when every value is a bool and an array over worlds otherwise.

    >>> from trustlab.agents.logic import Always, Implies, Pred, evaluate
    >>> rule = Always(Implies(Pred("send"), Pred("confirmed")))
    >>> evaluate(rule, [{"send": False, "confirmed": False}, {"send": True, "confirmed": True}])
    True
    """
    return evaluate_positions(formula, trace)[0]


def evaluate_positions(formula: Formula, trace: Trace) -> list[Any]:
    """The value of ``formula`` at every position of ``trace`` (a list as long as the trace)."""
    if len(trace) == 0:
        raise InputError.bad("trace", "at least one step", trace)
    names = formula.predicates
    for i, step in enumerate(trace):
        _check_step(step, names, f"trace[{i}]")
    return _positions(formula, trace, {})


def _check_step(step: Any, names: frozenset[str], argument: str) -> None:
    if not isinstance(step, Mapping):
        raise InputError.bad(argument, "a mapping from predicate names to truth values", step)
    lacking = names - set(step)
    if lacking:
        raise InputError.bad(
            argument, f"a value for every predicate of the formula {sorted(lacking)}", step
        )


def _positions(node: Formula, trace: Trace, memo: dict[Formula, list[Any]]) -> list[Any]:
    hit = memo.get(node)
    if hit is not None:
        return hit
    n = len(trace)
    if isinstance(node, Const):
        out = [node.value] * n
    elif isinstance(node, Pred):
        out = [_as_bool(step[node.name]) for step in trace]
    elif isinstance(node, Not):
        out = [np.logical_not(v) for v in _positions(node.arg, trace, memo)]
    elif isinstance(node, And):
        parts = [_positions(a, trace, memo) for a in node.args]
        out = [_reduce(np.logical_and, [p[i] for p in parts]) for i in range(n)]
    elif isinstance(node, Or):
        parts = [_positions(a, trace, memo) for a in node.args]
        out = [_reduce(np.logical_or, [p[i] for p in parts]) for i in range(n)]
    elif isinstance(node, Implies):
        left = _positions(node.left, trace, memo)
        right = _positions(node.right, trace, memo)
        out = [np.logical_or(np.logical_not(a), b) for a, b in zip(left, right, strict=True)]
    elif isinstance(node, Next):
        arg = _positions(node.arg, trace, memo)
        out = arg[1:] + [False]
    elif isinstance(node, WeakNext):
        arg = _positions(node.arg, trace, memo)
        out = arg[1:] + [True]
    elif isinstance(node, (Always, Eventually)):
        arg = _positions(node.arg, trace, memo)
        op = np.logical_and if isinstance(node, Always) else np.logical_or
        out = [None] * n
        out[n - 1] = arg[n - 1]
        for i in range(n - 2, -1, -1):
            out[i] = op(arg[i], out[i + 1])
    elif isinstance(node, Until):
        left = _positions(node.left, trace, memo)
        right = _positions(node.right, trace, memo)
        out = [None] * n
        out[n - 1] = right[n - 1]
        for i in range(n - 2, -1, -1):
            out[i] = np.logical_or(right[i], np.logical_and(left[i], out[i + 1]))
    elif isinstance(node, Release):
        left = _positions(node.left, trace, memo)
        right = _positions(node.right, trace, memo)
        out = [None] * n
        out[n - 1] = right[n - 1]
        for i in range(n - 2, -1, -1):
            out[i] = np.logical_and(right[i], np.logical_or(left[i], out[i + 1]))
    else:  # pragma: no cover - every node type is handled above
        raise InputError.bad("formula", "a trustlab.agents.logic formula", node)
    out = [_scalar(v) for v in out]
    memo[node] = out
    return out


def _reduce(op: Any, values: list[Any]) -> Any:
    acc = values[0]
    for v in values[1:]:
        acc = op(acc, v)
    return acc


def _as_bool(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    arr = np.asarray(value)
    if arr.dtype != np.bool_:
        raise InputError.bad("trace", "boolean predicate values (bool or numpy bool arrays)", value)
    return arr


def _scalar(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return bool(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


# ---------------------------------------------------------------------------------------------
# The rule language: parse_rule


_UNARY = {
    "NOT": Not,
    "ALWAYS": Always,
    "EVENTUALLY": Eventually,
    "NEXT": Next,
    "WEAK_NEXT": WeakNext,
}
_BINARY = {"UNTIL": Until, "RELEASE": Release, "IMPLIES": Implies}
_NARY = {"AND": And, "OR": Or}
_CONSTS = {"TRUE": TRUE, "FALSE": FALSE}
RESERVED_WORDS = frozenset([*_UNARY, *_BINARY, *_NARY, *_CONSTS])
_SYMBOLS = {
    "&&": "AND",
    "&": "AND",
    "||": "OR",
    "|": "OR",
    "!": "NOT",
    "~": "NOT",
    "->": "IMPLIES",
    "=>": "IMPLIES",
}
_LETTER_UNARY = {"G": "ALWAYS", "F": "EVENTUALLY", "X": "NEXT", "WX": "WEAK_NEXT"}
_LETTER_BINARY = {"U": "UNTIL", "R": "RELEASE"}
_TOKEN = re.compile(r"\s*(?:(?P<name>[^\W\d][\w.]*)|(?P<sym>&&|\|\||->|=>|[&|!~(),]))")
_NAME_CHAR = re.compile(r"[\w.]")
_OPERAND = "an operand (a predicate, TRUE, FALSE, a unary operator or '(')"


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "name" (a predicate or a letter operator), "word" (a reserved word) or "sym"
    text: str  # the word upper-cased, the symbol, or the name as written
    pos: int


class _Parser:
    """Recursive descent over the token list; each method parses one precedence level."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> _Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def fail(self, expected: str) -> InputError:
        tok = self.peek()
        if tok is None:
            pos, got = len(self.text), "the end of the text"
        else:
            pos, got = tok.pos, repr(tok.text)
        note = ""  # a predicate named like a word ("pay IMPLIES next"): say why it is no operand
        prev = self.tokens[self.i - 1] if self.i > 0 else None
        word = prev if prev is not None and prev.text in _UNARY else tok
        written = "" if word is None else self.text[word.pos : word.pos + len(word.text)]
        # not where it is written as the operator ("pay AND NOT"): then an operand is missing
        if (
            expected == _OPERAND
            and word is not None
            and word.kind == "word"
            and written != word.text
        ):
            note = (
                f" ({written!r} at position {word.pos} is the operator {word.text}, a reserved "
                "word in any case, so it cannot name a predicate)"
            )
        return InputError(
            f"logic: expected {expected}, got {got} at position {pos} of {self.text!r}{note}",
            argument="logic",
        )

    def accept(self, *ops: str) -> str | None:
        """Consume the next token if it is one of the operators ``ops`` (after symbol mapping)."""
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "name":  # after an operand, a name can only be an infix letter
            op = _LETTER_BINARY.get(tok.text)
        else:
            op = _SYMBOLS.get(tok.text) if tok.kind == "sym" else tok.text
        if op in ops:
            self.i += 1
            return op
        return None

    def expect(self, sym: str, expected: str) -> None:
        tok = self.peek()
        if tok is None or tok.kind != "sym" or tok.text != sym:
            raise self.fail(expected)
        self.i += 1

    def formula(self) -> Formula:
        left = self.disjunction()
        if self.accept("IMPLIES"):
            return Implies(left, self.formula())
        return left

    def disjunction(self) -> Formula:
        return self.chain("OR", Or, self.conjunction)

    def conjunction(self) -> Formula:
        return self.chain("AND", And, self.temporal)

    def chain(self, op: str, node: type, operand: Any) -> Formula:
        args = [operand()]
        while self.accept(op):
            args.append(operand())
        return args[0] if len(args) == 1 else node(tuple(args))

    def temporal(self) -> Formula:
        left = self.unary()
        op = self.accept("UNTIL", "RELEASE")
        return left if op is None else _BINARY[op](left, self.temporal())

    def unary(self) -> Formula:
        tok = self.peek()
        if tok is None:
            raise self.fail(_OPERAND)
        if tok.kind == "name":  # a prefix letter is an operator only if an operand follows
            op = _LETTER_UNARY.get(tok.text) if self.starts_operand(1) else None
        else:
            op = _SYMBOLS.get(tok.text) if tok.kind == "sym" else tok.text
        if op in _UNARY:
            self.i += 1
            return _UNARY[op](self.unary())
        return self.atom()

    def starts_operand(self, ahead: int) -> bool:
        tok = self.peek(ahead)
        if tok is None:
            return False
        if tok.kind == "sym":
            return tok.text in "(!~"
        if tok.kind == "name" and tok.text in _LETTER_BINARY:
            return not self.starts_operand(ahead + 1)  # "X U y" is X UNTIL y; "G U" is G(U)
        return tok.kind == "name" or tok.text in _UNARY or tok.text in _CONSTS

    def atom(self) -> Formula:
        tok = self.peek()
        if tok is None:
            raise self.fail(_OPERAND)
        if tok.kind == "name":
            self.i += 1
            return Pred(tok.text)
        if tok.kind == "word" and tok.text in _CONSTS:
            self.i += 1
            return _CONSTS[tok.text]
        if tok.kind == "word" and (tok.text in _NARY or tok.text in _BINARY) and self.opens(1):
            return self.call(tok.text)
        if tok.kind == "sym" and tok.text == "(":
            self.i += 1
            inner = self.formula()
            self.expect(")", "')' to close the '(' at position " + str(tok.pos))
            return inner
        raise self.fail(_OPERAND)

    def opens(self, ahead: int) -> bool:
        tok = self.peek(ahead)
        return tok is not None and tok.kind == "sym" and tok.text == "("

    def call(self, word: str) -> Formula:
        """Function-call style of a binary operator: ``AND(a, b, c)``, ``IMPLIES(a, b)``."""
        self.i += 2  # the word and its '('
        args = [self.formula()]
        while self.peek() is not None and self.peek().text == ",":
            self.i += 1
            args.append(self.formula())
        if word in _BINARY and len(args) != 2:
            raise self.fail(f"')' after the two arguments of {word}(...) (it got {len(args)})")
        if len(args) < 2:
            raise self.fail(f"',' and a second argument of {word}(...)")
        self.expect(")", f"',' or ')' in {word}(...)")
        return _NARY[word](tuple(args)) if word in _NARY else _BINARY[word](*args)


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos = 0
    end = len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None:
            start = len(text) - len(text[pos:].lstrip())
            raise InputError(
                f"logic: expected a predicate name, an operator or a parenthesis, got "
                f"{text[start]!r} at position {start} of {text!r}",
                argument="logic",
            )
        name, sym = match.group("name"), match.group("sym")
        start = match.start("name") if name is not None else match.start("sym")
        stop = match.end()
        if name is not None:
            stop = _name_end(text, stop)
            name = text[start:stop]
        if name is not None and name.upper() in RESERVED_WORDS:
            tokens.append(_Token("word", name.upper(), start))
        elif name is not None:
            tokens.append(_Token("name", name, start))
        else:
            tokens.append(_Token("sym", sym, start))
        pos = stop
    return tokens


def _name_end(text: str, pos: int) -> int:
    """Where a name matched up to ``pos`` ends: past the combining marks (Unicode categories Mn
    and Mc, identifier characters that ``\\w`` leaves out) and the name characters after them.
    Devanagari, Thai or Bengali words carry their vowel signs as such marks ("भुगतान"), and so
    does a letter with an accent Unicode has no composed form for; the name stopped at the mark
    and the rule was refused."""
    while pos < len(text) and (
        _NAME_CHAR.match(text[pos]) or unicodedata.category(text[pos]) in ("Mn", "Mc")
    ):
        pos += 1
    return pos


def parse_rule(text: str) -> Formula:
    """Parse a rule's ``logic`` string into a :class:`Formula`.

    The words ``AND``, ``OR``, ``NOT``, ``IMPLIES``, ``ALWAYS``, ``EVENTUALLY``, ``UNTIL``,
    ``NEXT``, ``WEAK_NEXT``, ``RELEASE``, ``TRUE`` and ``FALSE`` are reserved, in any case. The
    symbols ``&``/``&&``, ``|``/``||``, ``!``/``~`` and ``->``/``=>`` stand for AND, OR, NOT and
    IMPLIES. Binding, tightest first: the unary operators; ``UNTIL`` and ``RELEASE``
    (right-associative); ``AND``; ``OR``; ``IMPLIES`` (right-associative); so
    ``ALWAYS a IMPLIES b`` is ``(ALWAYS a) IMPLIES b`` -- write ``ALWAYS(a IMPLIES b)`` for the
    usual policy reading. Parentheses group, unary operators may be written as calls
    (``NOT(x)``, ``ALWAYS(x)``) and binary ones too (``IMPLIES(a, b)``, ``AND(a, b, c)``).
    A chain ``a AND b AND c`` becomes one :class:`And` (likewise ``OR``); parenthesised groups
    stay nested, so ``parse_rule(str(f)) == f`` for every formula ``f`` with valid names.

    Predicate names are identifiers: letters, digits, ``_`` and ``.``, not starting with a digit
    or a dot, and not a reserved word; a letter's combining marks belong to it (``भुगतान``).
    The LTL letters are accepted where they cannot mean a predicate: the upper-case ``G``,
    ``F``, ``X`` and ``WX`` are ALWAYS, EVENTUALLY, NEXT and WEAK_NEXT when an operand follows
    them (``G(a -> X b)``) and predicates otherwise (``G AND b``); the upper-case ``U`` and
    ``R`` are UNTIL and RELEASE between two operands and predicates elsewhere. Lower-case
    letters are always predicates.

    Parameters
    ----------
    text : str
        The formula, e.g. a rule's ``logic`` field.

    Returns
    -------
    Formula

    Raises
    ------
    InputError
        On a syntax error; the message names ``logic``, the character position (from 0) and what
        was expected there.

    Examples
    --------
    >>> from trustlab.agents.logic import parse_rule
    >>> rule = parse_rule("ALWAYS(send_money IMPLIES user_confirmed)")
    >>> print(rule)
    ALWAYS (send_money IMPLIES user_confirmed)
    >>> print(parse_rule("G(a -> X b) & !c U d"))
    (ALWAYS (a IMPLIES (NEXT b))) AND ((NOT c) UNTIL d)
    """
    if not isinstance(text, str):
        raise InputError.bad("logic", "a formula as a string", text)
    if not text.strip():
        raise InputError.bad("logic", "a formula (the string is empty)", text)
    parser = _Parser(text)
    try:
        result = parser.formula()
    except RecursionError:
        raise InputError.bad("logic", "a formula nested less deeply", text) from None
    if parser.peek() is not None:
        raise parser.fail("an operator (AND, OR, IMPLIES, UNTIL, RELEASE), ')' or the end")
    return result


# ---------------------------------------------------------------------------------------------
# Simplification and partial evaluation: simplify, residual


def _not(arg: Formula) -> Formula:
    if isinstance(arg, Const):
        return FALSE if arg.value else TRUE
    return arg.arg if isinstance(arg, Not) else Not(arg)


def _junction(node: type, args: Sequence[Formula]) -> Formula:
    """``And``/``Or`` of ``args``: flattened, constants folded, duplicates, complements and
    absorbed operands (``x OR (x AND y)`` is ``x``) removed, ``x AND (x IMPLIES y)`` made
    ``x AND y``."""
    unit, zero = (TRUE, FALSE) if node is And else (FALSE, TRUE)
    flat: dict[Formula, None] = {}  # ordered set
    for arg in args:
        for part in arg.args if isinstance(arg, node) else (arg,):
            if part == zero:
                return zero
            if part != unit:
                flat[part] = None
    if any(_not(part) in flat for part in flat):
        return zero
    if node is And and any(isinstance(p, Implies) and p.left in flat for p in flat):
        # modus ponens: x AND (x IMPLIES y) is x AND y
        return _junction(
            And, [p.right if isinstance(p, Implies) and p.left in flat else p for p in flat]
        )
    # drop an operand implied by another (in an And) or implying another (in an Or)
    weaker, stronger = (_disjuncts, _conjuncts) if node is And else (_conjuncts, _disjuncts)
    kept = [
        part
        for part in flat
        if not any(other != part and other in flat for other in weaker(part))
        and not any(other != part and part in stronger(other) for other in flat)
    ]
    if not kept:
        return unit
    return kept[0] if len(kept) == 1 else node(tuple(kept))


def _disjuncts(f: Formula) -> tuple[Formula, ...]:
    if isinstance(f, Implies):
        return (_not(f.left), f.right)
    return f.args if isinstance(f, Or) else (f,)


def _conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.args if isinstance(f, And) else (f,)


def _implies(left: Formula, right: Formula) -> Formula:
    if left == FALSE or right == TRUE or left == right:
        return TRUE
    if left == TRUE:
        return right
    if right == FALSE:
        return _not(left)
    return Implies(left, right)


def _simplified(node: Formula, kids: list[Formula]) -> Formula:
    """``node`` rebuilt on its simplified children ``kids``, folding what the semantics allow."""
    if isinstance(node, Not):
        return _not(kids[0])
    if isinstance(node, (And, Or)):
        return _junction(type(node), kids)
    if isinstance(node, Implies):
        return _implies(*kids)
    if isinstance(node, (Always, Eventually)):  # at an existing position, G/F of a constant
        if isinstance(kids[0], Const):
            return kids[0]
        if isinstance(kids[0], Next if isinstance(node, Always) else WeakNext):
            return FALSE if isinstance(node, Always) else TRUE  # the last step decides
        return type(node)(kids[0])
    if isinstance(node, (Next, WeakNext)):  # X FALSE never holds, WX TRUE always does
        sure = FALSE if isinstance(node, Next) else TRUE
        return sure if kids[0] == sure else type(node)(kids[0])
    left, right = kids  # Until / Release
    if isinstance(right, Const):
        return right
    if left == (FALSE if isinstance(node, Until) else TRUE):
        return right
    if isinstance(left, Const):  # TRUE UNTIL g is F g; FALSE RELEASE g is G g
        return Eventually(right) if isinstance(node, Until) else Always(right)
    return type(node)(left, right)


def simplify(formula: Formula) -> Formula:
    """An equivalent formula without foldable constants, duplicates or nested chains.

    Equivalent on every non-empty finite trace: constants are folded through every operator
    (``ALWAYS FALSE`` is ``FALSE``, ``TRUE UNTIL g`` is ``EVENTUALLY g``), ``NOT NOT x`` is
    ``x``, nested ``AND``/``OR`` are flattened, repeated operands dropped, ``x AND NOT x`` is
    ``FALSE`` and ``x OR (x AND y)`` is ``x``. The result is ``TRUE``, ``FALSE`` or a formula
    whose only constants are in ``NEXT TRUE`` ("a next step exists") and ``WEAK_NEXT FALSE``
    ("this is the last step").

    Examples
    --------
    >>> from trustlab.agents.logic import parse_rule, simplify
    >>> print(simplify(parse_rule("(a AND TRUE) AND (a OR b) AND NOT NOT c")))
    a AND c
    >>> print(simplify(parse_rule("ALWAYS(x IMPLIES FALSE) OR TRUE UNTIL y")))
    (ALWAYS (NOT x)) OR (EVENTUALLY y)
    """
    if not isinstance(formula, Formula):
        raise InputError.bad("formula", "a trustlab.agents.logic formula", formula)
    memo: dict[Formula, Formula] = {}

    def walk(node: Formula) -> Formula:
        done = memo.get(node)
        if done is None:
            kids = [walk(kid) for kid in node.children]
            done = _simplified(node, kids) if kids else node
            memo[node] = done
        return done

    return walk(formula)


def residual(formula: Formula, history: Sequence[Mapping[str, bool]]) -> Formula:
    """The propositional condition on the next step under which ``formula`` holds.

    ``history`` holds the known steps of a trace whose last step (the candidate) is still
    unknown; the result is a formula over the candidate step's predicates, without temporal
    operators, such that for every candidate step ``c``::

        evaluate(formula, [*history, c]) == evaluate(residual(formula, history), [c])

    It is :data:`TRUE` (or :data:`FALSE`) exactly when every candidate satisfies (or violates)
    the formula, and otherwise a formula without constants. One residual serves every
    candidate, so a guard can score many candidate actions (or many possible worlds at once,
    with numpy arrays) after walking the history once.

    The history is walked backwards with the evaluator's recurrences on formulas instead of
    truth values. Each intermediate formula is kept with its truth table over the candidate's
    predicates (a bit set, for formulas over at most 16 predicates): formulas with equal tables
    are shared, tautologies and contradictions fold to constants, and an operand implied by
    another is dropped from an ``AND`` (one implying another from an ``OR``), so the result
    stays small however long the history is.

    Parameters
    ----------
    formula : Formula
    history : sequence of mappings
        The known steps, oldest first (may be empty); each maps every predicate of ``formula``
        to a bool.

    Returns
    -------
    Formula

    Examples
    --------
    >>> from trustlab.agents.logic import parse_rule, residual
    >>> rule = parse_rule("ALWAYS(send IMPLIES EVENTUALLY confirmed)")
    >>> print(residual(rule, [{"send": True, "confirmed": False}]))
    confirmed
    >>> print(residual(rule, [{"send": False, "confirmed": False}]))
    send IMPLIES confirmed
    >>> print(residual(parse_rule("NOT send UNTIL confirmed"), [{"send": False, "confirmed": True}]))
    TRUE
    """
    if not isinstance(formula, Formula):
        raise InputError.bad("formula", "a trustlab.agents.logic formula", formula)
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise InputError.bad("history", "a sequence of steps (mappings)", history)
    names = formula.predicates
    for i, step in enumerate(history):
        _check_step(step, names, f"history[{i}]")
        for name in sorted(names):
            if not isinstance(step[name], (bool, np.bool_)):
                raise InputError.bad(f"history[{i}][{name!r}]", "a bool", step[name])
    tables = _Tables(sorted(names))
    memo: dict[Formula, list[_Val]] = {}

    def walk(node: Formula) -> list[_Val]:
        """The residual of ``node`` at each position: history steps, then the candidate."""
        done = memo.get(node)
        if done is None:
            if isinstance(node, Pred):
                done = [tables.const(bool(step[node.name])) for step in history]
                done.append(tables.pred(node.name))
            elif isinstance(node, Const):
                done = [tables.const(node.value)] * (len(history) + 1)
            else:
                done = _residual_positions(node, [walk(kid) for kid in node.children], tables)
            memo[node] = done
        return done

    return simplify(walk(formula)[0].formula)


_MAX_TABLE_PREDICATES = 16


@dataclass(frozen=True, slots=True)
class _Val:
    formula: Formula
    table: int | None  # bit j: the value when the candidate's predicates are the bits of j


class _Tables:
    """Formulas over the candidate step, built with their truth tables (when small enough)."""

    def __init__(self, names: list[str]) -> None:
        k = len(names)
        self.full = (1 << (1 << k)) - 1 if k <= _MAX_TABLE_PREDICATES else None
        self.masks: dict[str, int | None] = {}
        for t, name in enumerate(names):
            mask = None
            if self.full is not None:  # bit j set iff bit t of j is set
                mask, width = ((1 << (1 << t)) - 1) << (1 << t), 2 << t
                while width < (1 << k):
                    mask, width = mask | (mask << width), 2 * width
            self.masks[name] = mask
        self.shared: dict[int, _Val] = {}

    def make(self, formula: Formula, table: int | None) -> _Val:
        if table is None:
            return _Val(formula, None)
        if table in (0, self.full):
            return self.const(table == self.full)
        return self.shared.setdefault(table, _Val(formula, table))

    def const(self, value: bool) -> _Val:
        full = self.full
        return _Val(TRUE, full) if value else _Val(FALSE, None if full is None else 0)

    def pred(self, name: str) -> _Val:
        return self.make(Pred(name), self.masks[name])

    def not_(self, val: _Val) -> _Val:
        table = None if val.table is None else self.full ^ val.table
        return self.make(_not(val.formula), table)

    def implies(self, left: _Val, right: _Val) -> _Val:
        if left.table is None:
            return _Val(_implies(left.formula, right.formula), None)
        return self.make(
            _implies(left.formula, right.formula), (self.full ^ left.table) | right.table
        )

    def junction(self, node: type, vals: list[_Val]) -> _Val:
        if self.full is None:
            return _Val(_junction(node, [v.formula for v in vals]), None)
        conj = node is And
        table = self.full if conj else 0
        unique: dict[int, _Val] = {}
        for val in vals:
            table = table & val.table if conj else table | val.table
            unique.setdefault(val.table, val)
        # keep the strongest operands of an And (the weakest of an Or): the rest are implied
        tabs = list(unique)
        kept = [
            unique[a]
            for a in tabs
            if not any(b != a and (b & ~a if conj else a & ~b) == 0 for b in tabs)
        ]
        if table in (0, self.full) or len(kept) == 1:
            return self.make(kept[0].formula, table)
        return self.make(node(tuple(v.formula for v in kept)), table)


def _residual_positions(node: Formula, kids: list[list[_Val]], tables: _Tables) -> list[_Val]:
    """The recurrences of :func:`_positions` on formulas, from the last position backwards."""
    n = len(kids[0])
    if isinstance(node, Not):
        return [tables.not_(v) for v in kids[0]]
    if isinstance(node, (And, Or)):
        return [tables.junction(type(node), [kid[i] for kid in kids]) for i in range(n)]
    if isinstance(node, Implies):
        return [tables.implies(a, b) for a, b in zip(*kids, strict=True)]
    arg = kids[0]
    if isinstance(node, (Next, WeakNext)):
        return arg[1:] + [tables.const(isinstance(node, WeakNext))]
    out = list(arg)  # the last position is the argument's (the right operand's) value
    if isinstance(node, (Always, Eventually)):
        junction = And if isinstance(node, Always) else Or
        for i in range(n - 2, -1, -1):
            out[i] = tables.junction(junction, [arg[i], out[i + 1]])
        return out
    left, right = kids  # Until: r or (l and next); Release: r and (l or next)
    outer, inner = (Or, And) if isinstance(node, Until) else (And, Or)
    out = list(right)
    for i in range(n - 2, -1, -1):
        step = tables.junction(inner, [left[i], out[i + 1]])
        out[i] = tables.junction(outer, [right[i], step])
    return out
