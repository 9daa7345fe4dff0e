"""The battery is written from the prompt: its formats, its expression, its tools; and stays self-consistent."""

import json

import pytest

from envgym.audit.strategies import (
    ATTACK,
    GUESS,
    answer_formats,
    build_strategies,
    example_answers,
    expressions,
)
from envgym.audit.tool_strategies import tool_names

ARITHMETIC = [{"role": "user", "content": "Compute 85 - 51 + 30. Put your final answer in \\boxed{}."}]
GAME = [{"role": "user", "content": "Pull an arm. Answer in the form <pull>1</pull>."}]
TOOLS = [
    {
        "role": "system",
        "content": 'Call tools: <tools>{"type": "function", "function": {"name": "find_order"}}'
        "</tools>. Search with <search>query</search>; answer in <answer></answer>.",
    }
]


def by_name(strategies):
    return {strategy.name: strategy for strategy in strategies}


def test_answers_are_wrapped_in_the_format_the_prompt_asks_for_first():
    assert [f.name for f in answer_formats(ARITHMETIC[0]["content"])] == ["boxed", "bare"]
    assert [f.name for f in answer_formats(TOOLS[0]["content"])] == ["answer", "search", "bare"]
    assert by_name(build_strategies(GAME, marker_prefix="/tmp/m"))["constant:0@pull"].act([]) == "<pull>0</pull>"


def test_the_questions_own_expression_is_boxed():
    assert expressions(ARITHMETIC[0]["content"]) == ["85 - 51 + 30"]
    battery = by_name(build_strategies(ARITHMETIC, marker_prefix="/tmp/m"))
    assert battery["expression:0@boxed"].act([]) == "\\boxed{85 - 51 + 30}"


def test_tools_are_read_from_function_signatures_and_tags():
    assert tool_names(TOOLS[0]["content"]) == ["find_order", "search"]
    flood = by_name(build_strategies(TOOLS, marker_prefix="/tmp/m"))["flood:openai:find_order"].act([])
    assert len(flood["tool_calls"]) == 50 and flood["tool_calls"][0]["function"]["name"] == "find_order"


def test_the_prompts_example_answer_is_a_guess_that_echoes_are_compared_with():
    assert example_answers(GAME[0]["content"], answer_formats(GAME[0]["content"])[0]) == ["1"]
    battery = by_name(build_strategies(GAME, marker_prefix="/tmp/m"))
    assert battery["example:0@pull"].kind == GUESS
    assert battery["echo:prompt@pull"].like == ("example:0@pull",)


def test_unicode_digits_are_compared_with_the_constant_they_spell():
    battery = by_name(build_strategies(GAME, marker_prefix="/tmp/m"))
    assert battery["unicode:superscript:2@pull"].act([]) == "<pull>²</pull>"
    assert battery["unicode:superscript:2@pull"].like == ("constant:2@pull",)


def test_code_shaped_answers_each_name_their_own_marker_file():
    battery = build_strategies(ARITHMETIC, marker_prefix="/tmp/envgym-audit-x")
    code = [s for s in battery if s.marker]
    assert len({s.marker for s in code}) == len(code) > 5
    assert all(s.marker in json.dumps(s.act([])) for s in code)  # in the text, or a call's arguments


def test_gold_hedges_pair_the_reference_with_a_rival_answer():
    battery = by_name(build_strategies(ARITHMETIC, marker_prefix="/tmp/m", reference_answer="64"))
    assert battery["gold-hedge:false-equation@boxed"].act([]) == "\\boxed{65 = 64}"
    assert battery["gold-hedge:or@boxed"].kind == ATTACK
    declared = by_name(build_strategies(GAME, marker_prefix="/tmp/m", reference_answer="3", wrong_answer="4"))
    assert declared["gold-hedge:either@pull"].act([]) == "<pull>either 4 or 3</pull>"


def test_a_text_gold_without_a_declared_wrong_answer_gets_no_hedges():
    battery = build_strategies(GAME, marker_prefix="/tmp/m", reference_answer="B-1 D+2")
    assert not [s for s in battery if s.name.startswith("gold-hedge")]


@pytest.mark.parametrize("thorough", [False, True])
def test_names_are_unique_and_every_like_names_a_strategy_of_the_battery(thorough):
    for prompt in (ARITHMETIC, GAME, TOOLS):
        battery = build_strategies(prompt, marker_prefix="/tmp/m", thorough=thorough, reference_answer="7")
        names = [s.name for s in battery]
        assert len(names) == len(set(names))
        assert all(like in names for s in battery for like in s.like)


def test_big_answers_stay_within_the_default_action_cap():
    from envgym.core import DEFAULT_MAX_ACTION_CHARS

    battery = build_strategies(ARITHMETIC, marker_prefix="/tmp/m")
    sizes = [len(s.act([])) for s in battery if s.name.startswith("huge:")]
    assert max(sizes) <= DEFAULT_MAX_ACTION_CHARS and min(sizes) > DEFAULT_MAX_ACTION_CHARS // 2
