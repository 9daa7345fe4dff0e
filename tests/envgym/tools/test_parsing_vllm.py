"""envgym's call parsing agrees with the maintained parsers of the vLLM environment (``make test-vllm``): vLLM's
Hermes, Llama 3 JSON and pythonic tool parsers on the same texts, and Mistral's format as mistral_common renders
it. The core cannot import them (they live in .venv-vllm), so they check it here."""

import json

import pytest

pytestmark = pytest.mark.vllm
tool_parsers = pytest.importorskip("vllm.tool_parsers")

from helpers.chat_templates import CHATML, LLAMA, byte_tokenizer

from envgym.tools import parse_turn
from envgym.tools.parsing import CALL_FORMATS

TEXTS = {
    "hermes": 'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"q": "x", "n": [1, 2]}}\n</tool_call>',
    "llama3_json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "search", "parameters": {}}',  # noqa: E501 -- data, kept whole
    "pythonic": '[get_weather(city="Paris", days=3), search(q="x", exact=True, filters={"a": None})]',
}


@pytest.mark.parametrize("parser_name", sorted(TEXTS))
def test_calls_match_vllms_tool_parser(parser_name):
    tokenizer = byte_tokenizer("{{ messages }}", CHATML + ["<tool_call>", "</tool_call>"] + LLAMA, eos="<|im_end|>")
    parser = tool_parsers.ToolParserManager.get_tool_parser(parser_name)(tokenizer)
    expected = parser.extract_tool_calls(TEXTS[parser_name], None)
    ours = parse_turn(TEXTS[parser_name], formats=CALL_FORMATS).calls
    assert expected.tools_called and all(call.error is None for call in ours)
    assert [(c.name, c.arguments) for c in ours] == [
        (c.function.name, json.loads(c.function.arguments)) for c in expected.tool_calls
    ]


@pytest.mark.parametrize("version", ["v3", "v7"])
def test_mistral_calls_rendered_by_mistral_common_parse_back(version):
    from mistral_common.protocol.instruct.messages import AssistantMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    tokenizer = getattr(MistralTokenizer, version)()
    calls = [
        ToolCall(id="abc123xyz", function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}')),
        ToolCall(id="def456uvw", function=FunctionCall(name="search", arguments='{"q": "x"}')),
    ]
    request = ChatCompletionRequest(
        messages=[
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(tool_calls=calls),
            ToolMessage(tool_call_id="abc123xyz", content="18 C"),
            ToolMessage(tool_call_id="def456uvw", content="r"),
        ]
    )
    tokens = tokenizer.encode_chat_completion(request).tokens
    raw = tokenizer.instruct_tokenizer.tokenizer
    start = tokens.index(raw.get_special_token("[TOOL_CALLS]"))
    body = tokenizer.decode(
        tokens[start + 1 : tokens.index(raw.eos_id, start)], special_token_policy=SpecialTokenPolicy.IGNORE
    )
    parsed = parse_turn("[TOOL_CALLS]" + body).calls
    assert [(c.name, c.arguments, c.id, c.format) for c in parsed] == [
        ("get_weather", {"city": "Paris"}, "abc123xyz", "mistral"),
        ("search", {"q": "x"}, "def456uvw", "mistral"),
    ]
