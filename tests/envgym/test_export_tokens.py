"""envgym export --tokens on real runs: a tiny-model ``envgym eval --keep-tokens`` and ``envgym train
--save-rollouts`` keep the token ids the rollout loop had, and their export needs no re-tokenizing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_run import run_envgym
from helpers.tiny_models import tiny_model_path
from typer.testing import CliRunner

from envgym import Episode
from envgym.cli.app import app


# Multi-turn on purpose: the tiny model never guesses right, so every episode has env messages between its turns.
def guess() -> list[str]:
    """The eval/train arguments of these runs (a function: building the tiny model skips without the train extra,
    which must happen in a test, not at collection)."""
    return ["--env", "games/GuessNumber-v0", "--model", tiny_model_path(), "--env-kwargs", '{"high": 3}']


def invoke(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


def eval_run(out: Path) -> Path:
    invoke(
        "eval",
        *guess(),
        "--num-generations",
        "2",
        "--n-tasks",
        "1",
        "--max-completion-length",
        "6",
        "--max-turns",
        "2",
        "--keep-tokens",
        "--out",
        str(out),
    )
    return out / "samples.jsonl"


def train_run(out: Path) -> Path:
    config = out.parent / "grpo.yaml"
    config.write_text("num_tasks_per_step: 1\nmax_completion_length: 4\nenv_kwargs: {max_turns: 2}\n")
    invoke(
        "train",
        *guess(),
        "--steps",
        "1",
        "--num-generations",
        "2",
        "--config",
        str(config),
        "--device",
        "cpu",
        "--engine",
        "transformers",
        "--save-rollouts",
        "2",
        "--out",
        str(out),
    )
    return out / "rollouts.jsonl"


@pytest.fixture(scope="module", params=["eval", "train"])
def exported(request, tmp_path_factory) -> list[tuple[dict[str, Any], Episode]]:
    """(token row, the episode record it came from) for every episode of a tiny run, exported with --tokens."""
    folder = tmp_path_factory.mktemp(request.param)
    records_path = {"eval": eval_run, "train": train_run}[request.param](folder / "run")
    invoke("export", str(folder / "run"), "--tokens", "--out", str(folder / "tokens.jsonl"))
    rows = [json.loads(line) for line in (folder / "tokens.jsonl").read_text().splitlines()]
    records = [json.loads(line) for line in records_path.read_text().splitlines()]
    assert len(rows) == len(records) == 2
    return [(row, Episode.from_dict(record["episode"])) for row, record in zip(rows, records)]


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_path())


def policy_spans(loss_mask: list[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of every maximal run of 1s (end exclusive)."""
    spans, start = [], None
    for index, bit in enumerate([*loss_mask, 0]):
        if bit and start is None:
            start = index
        elif not bit and start is not None:
            spans.append((start, index))
            start = None
    return spans


def test_rows_name_the_tokenizer_their_ids_belong_to(exported):
    assert all(row["tokenizer"] == tiny_model_path() for row, _ in exported)


def test_input_ids_decode_to_the_prompt_and_completion_text(exported, tokenizer):
    for row, episode in exported:
        conversation = list(episode.prompt)
        for turn in episode.turns:
            conversation += [{"role": "assistant", "content": turn.action}, *turn.observation]
        conversation = conversation[: len(conversation) - len(episode.turns[-1].observation)]  # never shown to it
        prompt = tokenizer.apply_chat_template(episode.prompt, tokenize=False, add_generation_prompt=True)
        assert tokenizer.decode(row["input_ids"][: row["prompt_length"]]) == prompt
        assert tokenizer.decode(row["input_ids"]) == tokenizer.apply_chat_template(conversation, tokenize=False)


def test_loss_mask_is_one_exactly_on_the_policy_turns(exported, tokenizer):
    for row, episode in exported:
        assert len(episode.turns) == 2 and episode.turns[0].observation  # env tokens lie between the turns
        spans = policy_spans(row["loss_mask"])
        assert [tokenizer.decode(row["input_ids"][start:end], skip_special_tokens=True) for start, end in spans] == [
            turn.action for turn in episode.turns
        ]
        assert [end - start for start, end in spans] == [turn.info["policy_tokens"] for turn in episode.turns]
        assert [row["prompt_length"] + end for end in row["turn_ends"]] == [end - 1 for _, end in spans]


def test_turn_rewards_match_the_record(exported):
    for row, episode in exported:
        assert row["turn_rewards"] == [turn.reward for turn in episode.turns]
        assert row["reward"] == pytest.approx(episode.total_reward)
        assert (row["env_id"], row["task_id"]) == (episode.env_id, episode.task_id)


def test_eval_without_keep_tokens_keeps_no_token_ids(tmp_path: Path):
    invoke(
        "eval",
        *guess(),
        "--num-generations",
        "1",
        "--n-tasks",
        "1",
        "--max-completion-length",
        "2",
        "--max-turns",
        "1",
        "--out",
        str(tmp_path),
    )
    record = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])
    assert "prompt_ids" not in record["episode"]["metadata"]


def test_resuming_with_keep_tokens_replays_tasks_whose_samples_lack_them(tmp_path: Path):
    invoke(
        "eval",
        *guess(),
        "--num-generations",
        "1",
        "--n-tasks",
        "1",
        "--max-completion-length",
        "2",
        "--max-turns",
        "1",
        "--out",
        str(tmp_path),
    )
    invoke(
        "eval",
        *guess(),
        "--num-generations",
        "1",
        "--n-tasks",
        "1",
        "--max-completion-length",
        "2",
        "--max-turns",
        "1",
        "--keep-tokens",
        "--out",
        str(tmp_path),
    )
    [record] = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert record["episode"]["metadata"]["prompt_ids"]


def test_keep_tokens_through_a_chat_endpoint_is_refused_before_any_request():
    result = run_envgym("eval", "--env", "math/Arithmetic-v0", "--base-url", "http://127.0.0.1:9/v1", "--keep-tokens")
    assert result.returncode == 2 and len(result.lines) == 1
    assert "--keep-tokens needs token ids, which --endpoint chat never returns" in result.lines[0]
