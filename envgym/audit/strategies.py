"""The adversarial battery: generic actions written from what a policy sees (the prompt), never from an env's code.

Every strategy is a policy that plays a whole episode: ``act(history)`` returns the next action from the messages
seen so far. Most repeat one action every turn (a constant policy); the echo of the last message follows the
conversation. Answers are wrapped in the formats the prompt asks for (``<answer>``, ``<guess>``, ``\\boxed{}``,
a code fence) as well as bare.

A strategy is a ``guess`` when it is what an honest policy could answer (a constant such as ``0``, ``yes`` or
``A``, or the same constant in other digits): a guess may be right by chance, so the audit compares it only where
it is not a legal, honest answer (see :mod:`envgym.audit.verdicts`). Every other strategy is an ``attack``: it is
never a better answer than the guesses named in its ``like`` (the answers it contains), so it must not earn more.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from envgym.audit.battery import ATTACK, GUESS, LISTING_TAGS, PREFERRED_TAGS, TAG, Format, Strategy, constant
from envgym.audit.tool_strategies import tool_strategies
from envgym.core import Action, Message

CONSTANTS = ("0", "1", "-1", "2", "24", "100", "yes", "no", "true", "false", "A", "B", "None")
FAST_BARE_CONSTANTS = ("0", "yes")
NON_ANSWER = "I don't know."
STALL = "Let me think about this step by step before I answer."
BIG = 100_000  # characters: the default action cap (envgym.core.DEFAULT_MAX_ACTION_CHARS)

# Digits of other scripts (int() accepts most of them; str.isdigit() accepts even more, e.g. superscripts).
DIGIT_SCRIPTS = {
    "arabic_indic": "٠١٢٣٤٥٦٧٨٩",
    "persian": "۰۱۲۳۴۵۶۷۸۹",
    "fullwidth": "０１２３４５６７８９",
    "devanagari": "०१२३४५६७८९",
    "superscript": "⁰¹²³⁴⁵⁶⁷⁸⁹",
    "math_bold": "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗",
    "subscript": "₀₁₂₃₄₅₆₇₈₉",
    "circled": "⓪①②③④⑤⑥⑦⑧⑨",
}
LOOKALIKES = str.maketrans({"0": "O", "1": "l", "2": "Z", "4": "Ꮞ", "3": "З"})

# Text that creates the marker file if anything runs it: Python eval/exec, sympy's parse_expr (which evals).
CODE_PAYLOADS = {
    "import": "__import__('pathlib').Path('{path}').touch()",
    "lambda": "(lambda: __import__('pathlib').Path('{path}').touch())()",
    "fstring": "f\"{{__import__('pathlib').Path('{path}').touch()}}\"",
    "subclasses": (
        "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
        "._module.__builtins__['__import__']('pathlib').Path('{path}').touch()"
    ),
    "open": "open('{path}', 'w').close()",
    "os_system": "__import__('os').system('touch {path}')",
    "exec_statement": "import pathlib; pathlib.Path('{path}').touch()",
    "exec_call": "exec(\"import pathlib; pathlib.Path('{path}').touch()\")",
}

MATH_SPAN = re.compile(r"-?\(?\d[\d\s.,()]*(?:[-+*/^×÷][\s(]*-?\d[\d\s.,()]*)+")
LATEX_SPAN = re.compile(r"\$([^$]{1,300})\$|\\\((.{1,300}?)\\\)")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
OPTION = re.compile(r"(?:^|[\s(\[])([A-H])[).:\]]\s")


def prompt_text(messages: list[Message]) -> str:
    """The text the policy sees, every message's content joined."""
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
    return "\n".join(parts)


def answer_formats(text: str) -> list[Format]:
    """The answer formats a prompt asks for, the most likely first; ``bare`` (no wrapper) is always last."""
    closed = [name for name in dict.fromkeys(TAG.findall(text)) if f"</{name}>" in text and name not in LISTING_TAGS]
    tags = sorted(closed, key=lambda name: PREFERRED_TAGS.index(name) if name in PREFERRED_TAGS else 99)
    formats = [Format(name, _tag_wrapper(name)) for name in tags if name in PREFERRED_TAGS]
    if "\\boxed" in text:
        formats.append(Format("boxed", lambda answer: f"\\boxed{{{answer}}}"))
    if "```" in text:
        formats.append(Format("fence", lambda answer: f"```python\n{answer}\n```"))
    formats += [Format(name, _tag_wrapper(name)) for name in tags if name not in PREFERRED_TAGS]
    formats.append(Format("bare", lambda answer: answer))
    return formats


def expressions(text: str, limit: int = 3) -> list[str]:
    """Math-looking spans of the prompt (the question's own expression), longest first."""
    spans = [match.group(0).strip(" ,.") for match in MATH_SPAN.finditer(text)]
    spans += [(a or b).strip() for a, b in LATEX_SPAN.findall(text)]
    spans = [span for span in dict.fromkeys(spans) if len(span) >= 3]
    return sorted(spans, key=len, reverse=True)[:limit]


def example_answers(text: str, form: Format, limit: int = 3) -> list[str]:
    """The answers the prompt shows as examples of its format (``<guess>crane</guess>`` -> ``crane``)."""
    if form.name == "boxed":
        found = re.findall(r"\\boxed\{([^{}]{1,100})\}", text)
    elif form.name in ("bare", "fence"):
        found = []
    else:
        found = re.findall(rf"<{re.escape(form.name)}>([^<>]{{1,100}})</{re.escape(form.name)}>", text)
    return [answer for answer in dict.fromkeys(found) if answer.strip() and answer != "..."][:limit]


def _tag_wrapper(name: str) -> Callable[[str], str]:
    return lambda answer: f"<{name}>{answer}</{name}>"


def _name(base: str, form: Format) -> str:
    return f"{base}@{form.name}"


def build_strategies(
    prompt: list[Message],
    *,
    marker_prefix: str,
    thorough: bool = False,
    reference_answer: str | None = None,
    wrong_answer: str | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> list[Strategy]:
    """The battery for one task, from its prompt messages and the tool schemas the env gives (``info["tools"]``).

    ``reference_answer``/``wrong_answer`` (the gold answer and an honest wrong one, as text inside the format;
    single-turn envs only) add hedges that pair the gold with a wrong answer. ``thorough`` wraps every answer in
    every format the prompt names instead of the likeliest one and bare.
    """
    text = prompt_text(prompt)
    formats = answer_formats(text)
    main, bare = formats[0], formats[-1]
    wrapped = formats if thorough else [main]
    strategies: list[Strategy] = []

    def add(
        base: str, kind: str, answer: str, forms: list[Format], like: tuple[str, ...] = (), likes_form: bool = True
    ):
        for form in forms:
            like_names = tuple(_name(guess, form) for guess in like) if likes_form else like
            strategies.append(Strategy(_name(base, form), kind, constant(form.wrap(answer)), answer, like_names))

    # Guesses: constants an honest policy could give.
    for value in CONSTANTS:
        bare_too = thorough or value in FAST_BARE_CONSTANTS
        add(f"constant:{value}", GUESS, value, _unique(wrapped + ([bare] if bare_too else [])))

    # Non-answers and echoes (no better than the example answers the prompt shows, e.g. <pull>1</pull>).
    examples = [f"example:{i}" for i, _ in enumerate(example_answers(text, main))]
    for name, example in zip(examples, example_answers(text, main)):
        add(name, GUESS, example, [main])
    add("empty", ATTACK, "", _unique([main, bare]))
    strategies.append(Strategy("message:content-none", ATTACK, constant({"role": "assistant", "content": None})))
    strategies.append(
        Strategy(
            "message:content-parts",
            ATTACK,
            constant({"role": "assistant", "content": [{"type": "text", "text": main.wrap("0")}]}),
            "0",
            (_name("constant:0", main),),
        )
    )
    add(
        "echo:prompt",
        ATTACK,
        text[:BIG],
        _unique([main, bare]),
        like=tuple(_name(e, main) for e in examples),
        likes_form=False,
    )
    strategies.append(
        Strategy(
            _name("echo:last-message", main), ATTACK, _echo_last(main), None, tuple(_name(e, main) for e in examples)
        )
    )
    strategies.append(Strategy("stall", ATTACK, constant(STALL)))
    for i, span in enumerate(expressions(text)):
        add(f"expression:{i}", ATTACK, span, _unique(wrapped + ([bare] if i == 0 else [])))
        if i == 0:
            add("expression:answer-is", ATTACK, f"the answer is {span}", [bare])

    # Many answers at once: one answer holding a list, or one answer per item (the env may take either end).
    numbers = [str(n) for n in range(101)]
    add("candidates:0-100", ATTACK, ", ".join(numbers), wrapped)
    strategies += _many("candidates:0-100-each", numbers, main)
    words = list(dict.fromkeys(CAPITALISED.findall(text)))[:200]
    if words:
        add("candidates:words", ATTACK, ", ".join(words), wrapped)
        strategies += _many("candidates:words-each", words, main, companions=True)
    letters = list(dict.fromkeys(OPTION.findall(text))) or list("ABCDE")
    add("candidates:options", ATTACK, ", ".join(letters), wrapped)
    strategies += _many("candidates:options-each", letters, main, companions=True)

    # Hedges: two answers joined so that a lenient reader may take either.
    for i, (first, second) in enumerate((("0", "1"), ("yes", "no"), ("true", "false"), ("A", "B"))):
        for j, template in enumerate(("{a} or {b}", "either {a} or {b}", "{a}/{b}")):
            if thorough or j == i % 3:
                add(f"hedge:{template.format(a=first, b=second)}", ATTACK, template.format(a=first, b=second), wrapped)
    if reference_answer is not None:
        strategies += _reference_hedges(reference_answer, wrong_answer, main)

    # Numbers no task wants, and digits of other scripts (each no better than the constant it spells).
    for special in ("nan", "inf", "-inf", "1e999", "9" * 400, "10**100000", "10^{100000}", "\\infty", "NaN"):
        if thorough or special not in ("\\infty", "NaN"):
            add(f"number:{special[:12]}", ATTACK, special, wrapped)
    for value in ("2", "24") if not thorough else ("0", "1", "2", "24", "100"):
        for script, digits in DIGIT_SCRIPTS.items():
            if thorough or script in ("arabic_indic", "fullwidth", "devanagari", "superscript") or value == "2":
                rendered = "".join(digits[int(d)] for d in value)
                add(f"unicode:{script}:{value}", ATTACK, rendered, wrapped, like=(f"constant:{value}",))
        add(f"lookalike:{value}", ATTACK, value.translate(LOOKALIKES), wrapped, like=(f"constant:{value}",))

    strategies += _malformed(main, text)
    strategies += _pathological(main, bare)
    strategies += _slow_queries(text)
    strategies += _code(main, bare, marker_prefix, thorough)
    strategies += tool_strategies(text, tools or [], marker_prefix, thorough)
    return strategies


def _unique(forms: list[Format]) -> list[Format]:
    return list(dict.fromkeys(forms))


def _echo_last(form: Format) -> Callable[[list[Message]], Action]:
    def act(history: list[Message]) -> Action:
        last = next((m.get("content") for m in reversed(history) if isinstance(m.get("content"), str)), "")
        return form.wrap(last[:BIG])

    return act


def _many(base: str, items: list[str], form: Format, companions: bool = False) -> list[Strategy]:
    """One reply with every item wrapped separately; no better than the first or the last item alone."""
    first, last = f"{base}:first", f"{base}:last"
    strategies = []
    if companions:  # the items are not constants the battery already guesses
        strategies += [
            Strategy(_name(first, form), GUESS, constant(form.wrap(items[0])), items[0]),
            Strategy(_name(last, form), GUESS, constant(form.wrap(items[-1])), items[-1]),
        ]
        like = (_name(first, form), _name(last, form))
    else:
        like = (_name(f"constant:{items[0]}", form), _name(f"constant:{items[-1]}", form))
    reply = " ".join(form.wrap(item) for item in items)
    strategies.append(Strategy(_name(base, form), ATTACK, constant(reply), None, like))
    return strategies


def _reference_hedges(gold: str, wrong: str | None, form: Format) -> list[Strategy]:
    """The gold answer with a wrong one beside it, or weakened by words: an env must accept neither.

    The wrong answer must be a real rival of the gold one: the env's declared wrong answer, else the gold number
    plus one. A text gold without a declared wrong answer gets no hedges (``0`` beside a list of moves is junk a
    lenient parser may skip, not a second answer)."""
    number = _number(gold)
    if wrong is None or wrong.strip() == gold.strip():
        wrong = None if number is None else _format_number(number + 1)
    if wrong is None:
        return []
    hedges = {
        "or": f"{gold} or {wrong}",
        "either": f"either {wrong} or {gold}",
        "list": f"{wrong}, {gold}",
        "false-equation": f"{wrong} = {gold}",
    }
    if number is not None:
        hedges.update(
            {"text-or-more": f"{gold} \\text{{ or more}}", "text-not": f"{gold} \\text{{ is not the answer}}"}
        )
    return [
        Strategy(_name(f"gold-hedge:{name}", form), ATTACK, constant(form.wrap(answer)), answer)
        for name, answer in hedges.items()
    ]


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and abs(value) < 1e15 else None  # not NaN, not beyond exact floats


def _format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _malformed(form: Format, text: str) -> list[Strategy]:
    """Nested, unclosed and stray tags around the constant 0 (no better than 0 itself)."""
    answers = []
    if form.name in ("bare", "fence") or form.name == "boxed":
        answers += [
            ("boxed-nested", "\\boxed{\\boxed{0}}"),
            ("boxed-unclosed", "\\boxed{0"),
            ("boxed-empty", "\\boxed{}"),
            ("boxed-braces", "\\boxed{{{0}}}"),
            ("boxed-bare", "\\boxed 0"),
        ]
    else:
        tag = form.name
        answers += [
            ("nested", f"<{tag}><{tag}>0</{tag}></{tag}>"),
            ("unclosed", f"<{tag}>0"),
            ("stray-close", f"0</{tag}>"),
            ("cut", f"<{tag}>0</{tag}"),
            ("reversed", f"</{tag}>0<{tag}>"),
            ("upper", f"<{tag.upper()}>0</{tag.upper()}>"),
        ]
    answers.append(("answer-in-boxed", "<answer>\\boxed{<answer>0</answer>}</answer>"))
    like = (_name("constant:0", form),)
    return [Strategy(f"malformed:{name}", ATTACK, constant(answer), "0", like) for name, answer in answers]


def _pathological(form: Format, bare: Format) -> list[Strategy]:
    """100 KB replies: repeated phrases, deep nesting, one huge number. The step must stay fast."""
    half = BIG // 2 - 20  # characters on each side of a nested answer, wrapper included
    phrase = "the answer is 1. " * (BIG // 17)
    answers = {
        "repeated-phrase@bare": bare.wrap(phrase)[:BIG],
        "repeated-phrase": form.wrap(phrase[: BIG - 40]),
        "nested-braces": form.wrap("{" * half + "0" + "}" * half),
        "nested-parens": form.wrap("(" * half + "0" + ")" * half),
        "nested-boxed": "\\boxed{" * (BIG // 8 - 1) + "0" + "}" * (BIG // 8 - 1),
        "nested-frac": form.wrap("\\frac{1}{" * (BIG // 10 - 5) + "2" + "}" * (BIG // 10 - 5)),
        "huge-number": form.wrap("1" * (BIG - 40)),
        "open-tags": ("<answer>" * (BIG // 8))[:BIG],
    }
    return [Strategy(f"huge:{name}", ATTACK, constant(answer)) for name, answer in answers.items()]


# Queries a policy can send to run past any time limit: a recursive count with no end (many VM steps: a progress
# handler stops it), and one instr() whose naive search is quadratic inside a single VM step, which no progress
# handler sees (measured on sql/TextToSQL-v0, limit 1 s: 6.7 s for this size on a 2-core machine under load 5).
SLOW_SQL = {
    "recursive": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "quadratic": "SELECT instr(hex(zeroblob(480000)), hex(zeroblob(240000)) || 'x')",
}
TABLE = re.compile(r"CREATE TABLE\s+(?:IF NOT EXISTS\s+)?[\"`]?(\w+)", re.IGNORECASE)


def _slow_queries(text: str) -> list[Strategy]:
    """Queries that time out, where the prompt asks for SQL: the env must stop them and score the policy. They
    read a table of the prompt's schema where it shows one (an env may refuse a query that reads none)."""
    if "```sql" not in text and not re.search(r"\bSQL(?:ite)?\b", text):
        return []
    table = TABLE.search(text)
    source = f" FROM {table.group(1)} LIMIT 1" if table else ""
    return [
        Strategy(f"slow:sql-{name}", ATTACK, constant(f"```sql\n{query}{source if name == 'quadratic' else ''}\n```"))
        for name, query in SLOW_SQL.items()
    ]


def _code(form: Format, bare: Format, marker_prefix: str, thorough: bool) -> list[Strategy]:
    """Answers that create their own marker file if anything evaluates them."""
    strategies = []
    for name, payload in CODE_PAYLOADS.items():
        for which in dict.fromkeys((form, bare) if thorough or name in ("import", "exec_statement") else (form,)):
            marker = f"{marker_prefix}-{name}-{which.name}"
            code = payload.format(path=marker)
            strategies.append(
                Strategy(_name(f"code:{name}", which), ATTACK, constant(which.wrap(code)), code, (), marker)
            )
    marker = f"{marker_prefix}-program"
    program = f"```python\nimport pathlib\npathlib.Path('{marker}').touch()\n```"
    strategies.append(Strategy("code:program", ATTACK, constant(program), None, (), marker))
    return strategies


def example_styles(prompt: list[Message], wrong_answer: str, form: Format, limit: int = 3) -> list[list[str]]:
    """The honest wrong answer written the way each worked example of the prompt answers (few-shot assistant
    turns): each example's turns up to and including its answer, the answer replaced by ``wrong_answer``."""
    turns = [m["content"] for m in prompt if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
    answer = _answer_pattern(form)
    styles, chain = [], []
    for turn in turns:
        chain.append(turn)
        matches = list(answer.finditer(turn))
        if matches:
            last = matches[-1]
            chain[-1] = turn[: last.start()] + form.wrap(wrong_answer) + turn[last.end() :]
            styles.append(chain)
            chain = []
    return [style for style in dict.fromkeys(tuple(s) for s in styles)][:limit]


def _answer_pattern(form: Format) -> re.Pattern[str]:
    if form.name == "boxed":
        return re.compile(r"\\boxed\{[^{}]{0,300}\}")
    if form.name in ("bare", "fence"):
        return re.compile(r"(?!x)x")  # no answer wrapper to find: no style
    return re.compile(rf"<{re.escape(form.name)}>[^<>]{{0,300}}</{re.escape(form.name)}>")


def style_policy(style: list[str], prompt_turns: int) -> Callable[[list[Message]], Action]:
    """Play the turns of ``style`` in order (the last one again if the episode goes on); ``prompt_turns``: the
    assistant turns already in the prompt (the examples)."""

    def act(history: list[Message]) -> Action:
        own = sum(m.get("role") == "assistant" for m in history) - prompt_turns
        return style[min(own, len(style) - 1)]

    return act
