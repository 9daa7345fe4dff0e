"""Both function-call formats survive a real chat template with tool support (Qwen2.5's Hermes layout).

The tokenizer is built here (byte-level, so any text round-trips through token ids); the template is the
tool-calling part of Qwen2.5's: OpenAI ``tools`` rendered into the system turn, assistant ``tool_calls``
rendered as ``<tool_call>`` JSON, and ``tool`` messages as ``<tool_response>`` in a user turn.
"""

import json

import pytest

from envgym.tools import ToolEnv, parse_turn

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

TEMPLATE = """
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}
{%- for tool_call in message.tool_calls or [] %}
{%- set f = tool_call.function %}
<tool_call>
{"name": "{{ f.name }}", "arguments": {{ f.arguments if f.arguments is string else f.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate(sorted(alphabet))}
    for special in ("<|im_start|>", "<|im_end|>"):
        vocab[special] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        chat_template=TEMPLATE,
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )


def through_tokens(tokenizer, conversation, tools) -> str:
    """Render with the template, tokenize, decode: what a model would see and produce."""
    ids = tokenizer.apply_chat_template(conversation, tools=tools, tokenize=True, return_dict=False)
    return tokenizer.decode(ids)


def last_assistant_text(rendered: str) -> str:
    return rendered.rsplit("<|im_start|>assistant\n", 1)[1].split("<|im_end|>", 1)[0]


def make_env(tools) -> ToolEnv:
    from helpers.add_numbers import AddNumbers

    return ToolEnv(AddNumbers(), tools, prompt_format=None, max_calls_per_turn=2)


def test_openai_tool_calls_render_as_hermes_text_that_parses_back_to_the_same_calls(tokenizer, tools):
    env = make_env(tools)
    messages, info = env.reset(seed=0)
    calls = [
        {"id": "call_0", "type": "function", "function": {"name": "add", "arguments": json.dumps({"a": 2, "b": 40})}},
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "shout", "arguments": json.dumps({"text": "hé, ok"})},
        },
    ]
    assistant = {"role": "assistant", "content": "", "tool_calls": calls}
    results, *_ = env.step(assistant)
    rendered = through_tokens(tokenizer, [*messages, assistant, *results], info["tools"])
    assert '{"name": "add", "description": "Add two integers."' in rendered
    assert (
        "<tool_response>\n42\n</tool_response>" in rendered and "<tool_response>\nHÉ, OK\n</tool_response>" in rendered
    )
    generated = last_assistant_text(rendered)
    assert [(c.name, c.arguments) for c in parse_turn(generated).calls] == [
        ("add", {"a": 2, "b": 40}),
        ("shout", {"text": "hé, ok"}),
    ]


def test_hermes_text_from_the_model_runs_and_renders_as_a_tool_turn(tokenizer, tools):
    env = make_env(tools)
    messages, info = env.reset(seed=0)
    generated = 'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 5, "b": 6}}\n</tool_call>'
    results, *_ = env.step(generated)
    assert results == [{"role": "tool", "tool_call_id": "call_0", "name": "add", "content": "11"}]
    rendered = through_tokens(
        tokenizer, [*messages, {"role": "assistant", "content": generated}, *results], info["tools"]
    )
    assert last_assistant_text(rendered) == generated
    assert rendered.endswith("<tool_response>\n11\n</tool_response><|im_end|>\n")
