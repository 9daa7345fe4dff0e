"""Chat templates of the major open model families with byte-level tokenizers, for template and parsing tests.

Real templates come from installed packages (TRL ships the templates of Qwen2.5, Qwen3, Llama 3.1 and
DeepSeek-R1 in ``trl/chat_templates``); the rest are built here after the families' published templates:
Mistral v3 (``[TOOL_CALLS]``, tools and system prompt rendered at the last user turn) and a Llama 3.2-style
pythonic template. The tokenizer is byte-level BPE without merges plus each family's special tokens, so any
text round-trips through token ids and templates are compared on the tokens a model would see.
"""

from __future__ import annotations

from pathlib import Path

MISTRAL_V3 = """
{%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}
{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {{- tool | tojson }}
                {%- if not loop.last %}{{- ", " }}{%- endif %}
            {%- endfor %}
            {{- "][/AVAILABLE_TOOLS]" }}
        {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\\n\\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}{{- ", " }}{%- else %}{{- "]" + eos_token }}{%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- message["content"] + eos_token }}
    {%- elif message["role"] == "tool" %}
        {{- '[TOOL_RESULTS] {"content": ' + message.content|tojson + ', "call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported!") }}
    {%- endif %}
{%- endfor %}
"""
"""Mistral-7B-Instruct-v0.3's template, except that an assistant's content is not trimmed and has no leading
space (SentencePiece models sample that space as part of their first token; this byte-level tokenizer has none)."""

PYTHONIC = """
{{- bos_token }}<|start_header_id|>system<|end_header_id|>\n\n
{%- if tools %}You can call functions. To call them, reply with a Python list of calls: [name(argument=value, ...)]
{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}{% endif %}
{%- if messages[0].role == 'system' %}{{ messages[0].content }}{% endif %}<|eot_id|>
{%- for message in messages %}
    {%- if message.role == 'system' and loop.first %}
    {%- elif message.role == 'assistant' and message.tool_calls %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n[' }}
        {%- for call in message.tool_calls %}
            {{- call.function.name }}(
            {%- for name, value in call.function.arguments | items %}{{ name }}={{ value | tojson }}{% if not loop.last %}, {% endif %}{% endfor %})
            {%- if not loop.last %}, {% endif %}
        {%- endfor %}
        {{- ']<|eot_id|>' }}
    {%- elif message.role == 'tool' %}
        {{- '<|start_header_id|>ipython<|end_header_id|>\n\n' + message.content + '<|eot_id|>' }}
    {%- else %}
        {{- '<|start_header_id|>' + message.role + '<|end_header_id|>\n\n' + message.content + '<|eot_id|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}
"""
"""Llama 3.2-style pythonic tool calls (after vLLM's tool_chat_template_llama3.2_pythonic)."""

CHATML = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
LLAMA = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"]
MISTRAL = [
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[TOOL_CALLS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
]
DEEPSEEK = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"]


def trl_template(name: str) -> str:
    """A chat template shipped by TRL (``trl/chat_templates/<name>.jinja``)."""
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text(encoding="utf-8")


def byte_tokenizer(template: str, specials: list[str], *, eos: str, bos: str | None = None):
    """A transformers tokenizer: byte-level BPE without merges, ``specials`` as special tokens, ``template``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate(sorted(alphabet))}
    for special in specials:
        vocab[special] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        chat_template=template,
        eos_token=eos,
        bos_token=bos,
        additional_special_tokens=[s for s in specials if s not in (eos, bos)],
    )


def family_tokenizers() -> dict:
    """Tokenizers for each family's template, by name."""
    return {
        "qwen2.5": byte_tokenizer(trl_template("qwen2_5"), CHATML, eos="<|im_end|>"),
        "qwen3": byte_tokenizer(trl_template("qwen3"), CHATML, eos="<|im_end|>"),
        "llama3.1": byte_tokenizer(trl_template("llama3_1"), LLAMA, eos="<|eot_id|>", bos="<|begin_of_text|>"),
        "deepseek-r1": byte_tokenizer(
            trl_template("deepseek_r1_distill"), DEEPSEEK, eos="<｜end▁of▁sentence｜>", bos="<｜begin▁of▁sentence｜>"
        ),
        "mistral-v3": byte_tokenizer(MISTRAL_V3, MISTRAL, eos="</s>", bos="<s>"),
        "pythonic": byte_tokenizer(PYTHONIC, LLAMA, eos="<|eot_id|>", bos="<|begin_of_text|>"),
    }
