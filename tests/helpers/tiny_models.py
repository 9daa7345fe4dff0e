"""Tiny real models for tests: a ~1.7M-parameter Llama and a byte-level BPE tokenizer, built in seconds.

Nothing is downloaded: the tokenizer is trained with ``tokenizers`` on a small corpus written here, the
model is a randomly initialised ``LlamaForCausalLM``. Both are saved to a directory that loads with
``AutoTokenizer``/``AutoModelForCausalLM.from_pretrained`` like any Hub model, so policies, servers and
trainers are exercised through their real code paths.

The tokenizer carries a real ChatML chat template with tool support (``tools=`` lists the functions in the
system turn, assistant ``tool_calls`` render as ``<tool_call>{json}</tool_call>``, ``tool`` messages get their
own turn), the same shape as Qwen2.5/SmolLM2 templates.

    >>> from helpers.tiny_models import tiny_model_path
    >>> path = tiny_model_path()          # built once per process, cached on disk
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path

from helpers.extras import require

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
EOS = "<|im_end|>"
BUILD_VERSION = "2"  # bump when the recipe below changes, so cached builds are rebuilt

CHAT_TEMPLATE = (
    "{% if tools %}"
    "<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    'You may call these tools by writing <tool_call>{"name": ..., "arguments": ...}</tool_call>:\n'
    "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}<|im_end|>\n"
    "{% elif messages[0].role == 'system' %}"
    "<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'system' and loop.first %}"
    "{% elif message.role == 'assistant' %}"
    "<|im_start|>assistant\n{{ message.content or '' }}"
    "{% for call in message.tool_calls or [] %}"
    "{% set fn = call.function if call.function is defined else call %}"
    '<tool_call>{"name": "{{ fn.name }}", "arguments": '
    "{{ fn.arguments if fn.arguments is string else fn.arguments | tojson }}}</tool_call>"
    "{% endfor %}<|im_end|>\n"
    "{% else %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus() -> list[str]:
    """Text with the shapes the tests use (chat turns, tags, numbers, code), so tokens are not all bytes."""
    lines = [
        "I am thinking of an integer between 1 and 100 inclusive. Guess it.",
        "Answer with your guess in the form <guess>N</guess>. The number is higher. The number is lower.",
        "What is 12 + 7? Put the final answer in \\boxed{19}. The answer is 42.",
        '<tool_call>{"name": "calculator", "arguments": {"expression": "2 + 3"}}</tool_call>',
        "<tool_response>5</tool_response> <think>Let me think step by step.</think> <answer>Paris</answer>",
        "def add(a, b):\n    return a + b\n\nprint(add(1, 2))",
        "You are a helpful assistant. Search the documents and answer the question.",
        "system user assistant tool function arguments name content role",
    ]
    lines += [f"{a} + {b} = {a + b}. {a} * {b} = {a * b}." for a in range(0, 40, 3) for b in range(1, 30, 7)]
    return lines * 4


def build_tiny_model(
    path: str | Path, *, vocab_size: int = 1024, hidden_size: int = 192, num_layers: int = 4, seed: int = 0
) -> Path:
    """Train the tokenizer, initialise the model and save both to ``path``; returns ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=None, eos_token=EOS, pad_token="<|endoftext|>", unk_token=None
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=None,
        eos_token_id=fast.convert_tokens_to_ids(EOS),
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(path)
    (path / "envgym_tiny.json").write_text(json.dumps({"version": BUILD_VERSION}))
    return path


@functools.cache
def tiny_model_path() -> str:
    """The path of a tiny model built once and cached on disk (``$ENVGYM_TEST_CACHE`` or the temp dir).

    The build is written to a fresh directory and renamed into place, so parallel test processes never
    see a half-written model. Skips the calling test without the [train] extra (even with a model on disk:
    every user of it runs it)."""
    require("train")
    root = Path(os.environ.get("ENVGYM_TEST_CACHE", Path(tempfile.gettempdir()) / "envgym-test-cache"))
    target = root / f"tiny-llama-v{BUILD_VERSION}"
    marker = target / "envgym_tiny.json"
    if marker.exists() and json.loads(marker.read_text()).get("version") == BUILD_VERSION:
        return str(target)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="tiny-llama-", dir=root))
    build_tiny_model(staging)
    try:
        staging.rename(target)
    except OSError:  # another process won the race; its build is identical
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    return str(target)


def num_parameters(path: str | Path) -> int:
    """How many parameters the model at ``path`` has (the tests keep it in the 1-10M range)."""
    from transformers import AutoModelForCausalLM

    return sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(path).parameters())
