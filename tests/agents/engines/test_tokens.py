"""Token-faithful multi-turn: render -> sample (scripted tokens) -> parse -> tool message -> render, for each
family's template; the tokens a trainer trains on are the sampled tokens plus the template's deltas, also where
the template would re-render the history differently (Qwen3, DeepSeek-R1, Mistral v3)."""

import pytest

pytest.importorskip("transformers")
pytest.importorskip("trl")

from helpers.chat_templates import CHATML, byte_tokenizer, family_tokenizers

from envgym.agents.engines.policy import Generation, encode
from envgym.agents.engines.templates import TOOLS
from envgym.agents.engines.tokens import TemplateDeltas, TemplateError, TokenConversation
from envgym.tools import parse_turn
from envgym.tools.parsing import CALL_FORMATS

PROMPT = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "Weather in Paris?"}]
# What each family's model writes to call get_weather(city="Paris"), in its own format.
CALL_TEXT = {
    "qwen2.5": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "qwen3": '<think>\nI need the weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',  # noqa: E501 -- data, kept whole
    "llama3.1": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "mistral-v3": '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123xyz"}]',
    "pythonic": '[get_weather(city="Paris")]',
    # DeepSeek-R1's template drops tool_calls: its model calls in the format envgym's prompt asks for (Hermes JSON),
    # after the <think> that the generation prompt opened.
    "deepseek-r1": 'I should call the tool.\n</think>\n\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',  # noqa: E501 -- data, kept whole
}


@pytest.fixture(scope="module")
def families():
    return family_tokenizers()


def sample(tokenizer, text):
    """Scripted sampling: the text's tokens and the end-of-turn token, as a policy returns them."""
    ids = encode(tokenizer, text) + [tokenizer.eos_token_id]
    return Generation(text, ids, [-0.5] * len(ids), "stop")


@pytest.mark.parametrize("family", sorted(CALL_TEXT))
def test_trained_tokens_are_the_sampled_tokens_plus_template_deltas(families, family):
    tokenizer = families[family]
    deltas = TemplateDeltas(tokenizer)
    conversation = TokenConversation(tokenizer, deltas, PROMPT, TOOLS)
    first = sample(tokenizer, CALL_TEXT[family])
    conversation.add_policy_turn(first)
    (call,) = parse_turn(tokenizer.decode(first.token_ids[:-1]), formats=CALL_FORMATS).calls
    assert (call.name, call.arguments, call.error) == ("get_weather", {"city": "Paris"}, None)
    result = {
        "role": "tool",
        "tool_call_id": call.id if family == "mistral-v3" else "call12345",
        "name": call.name,
        "content": "18 C",
    }
    conversation.add_env_messages([result])
    second = sample(tokenizer, "It is 18 C.")
    conversation.add_policy_turn(second)

    close = encode(tokenizer, deltas.turn_close.removeprefix(tokenizer.eos_token))
    expected = first.token_ids + close + encode(tokenizer, deltas.messages_text([result])) + second.token_ids + close
    assert conversation.completion_ids == expected
    assert [
        i for i, m in zip(conversation.completion_ids, conversation.loss_mask) if m
    ] == first.token_ids + second.token_ids
    assert conversation.prompt_ids == encode(
        tokenizer, tokenizer.apply_chat_template(PROMPT, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    )


@pytest.mark.parametrize("family", ["qwen2.5", "llama3.1", "pythonic"])
def test_on_a_prefix_preserving_template_the_tokens_re_render_as_the_same_conversation(families, family):
    tokenizer = families[family]
    conversation = TokenConversation(tokenizer, TemplateDeltas(tokenizer), PROMPT, TOOLS)
    conversation.add_policy_turn(sample(tokenizer, CALL_TEXT[family]))
    structured = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
        ],
    }
    result = {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "18 C"}
    conversation.add_env_messages([result])
    rendered = tokenizer.apply_chat_template(
        [*PROMPT, structured, result], tools=TOOLS, tokenize=False, add_generation_prompt=True
    )
    assert tokenizer.decode(conversation.ids) == rendered


def test_qwen3_re_rendering_would_lose_the_sampled_think_that_the_tokens_keep(families):
    tokenizer = families["qwen3"]
    conversation = TokenConversation(tokenizer, TemplateDeltas(tokenizer), PROMPT, TOOLS)
    conversation.add_policy_turn(sample(tokenizer, CALL_TEXT["qwen3"]))
    conversation.add_env_messages([{"role": "user", "content": "And Lyon?"}])
    messages = [*PROMPT, {"role": "assistant", "content": CALL_TEXT["qwen3"]}, {"role": "user", "content": "And Lyon?"}]
    rendered = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    assert "I need the weather." in tokenizer.decode(conversation.ids) and "I need the weather." not in rendered


def test_a_system_prompt_moved_to_every_user_turn_stays_where_the_model_first_saw_it(families):
    deltas = TemplateDeltas(families["mistral-v3"])
    assert deltas.messages_text([{"role": "user", "content": "And Lyon?"}]) == "[INST] And Lyon?[/INST]"


def test_a_template_that_rewrites_a_finished_turn_keeps_the_sampled_tokens():
    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}<think></think>{% endif %}"
        "{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    deltas = TemplateDeltas(byte_tokenizer(template, CHATML, eos="<|im_end|>"))
    assert deltas.turn_close == "<|im_end|>\n"
    assert (
        deltas.messages_text([{"role": "user", "content": "x"}])
        == "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"
    )


def test_a_template_that_repeats_earlier_messages_after_the_last_turn_is_rejected():
    template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{{ messages[0].content }}{% endif %}"
    )
    with pytest.raises(TemplateError, match="repeats earlier messages"):
        TemplateDeltas(byte_tokenizer(template, CHATML, eos="<|im_end|>"))
