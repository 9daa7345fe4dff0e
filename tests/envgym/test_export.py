"""envgym export: episodes of a run folder as chat (SFT) or token rows, in JSONL, parquet and datasets form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_run import run_envgym
from helpers.extras import require
from helpers.sum_tool_env import ENV_ID, sum_tool_env

from envgym.agents.runs import read_episodes
from envgym.episode import Episode
from envgym.export import chat_row, select, token_row, write_rows

ADD_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 3}}}],
}


def play(task_index: int, actions: list) -> Episode:
    """An episode of the real SumTool env played with scripted actions, recorded as the rollout loop does."""
    env = sum_tool_env()
    messages, info = env.reset(seed=0, options={"task_index": task_index})
    episode = Episode(ENV_ID, env.task.id, messages, seed=0, reset_info=info, metadata={"task_index": task_index})
    for action in actions:
        episode.add_turn(action, *env.step(action))
        if episode.done:
            break
    return episode


def write_run(folder: Path, episodes: list[Episode], name: str = "samples.jsonl") -> Path:
    """A run folder as envgym eval leaves it: one samples.jsonl record (eval's own ``sample_record``) per line."""
    from envgym.agents.evaluation.evaluate import sample_record

    folder.mkdir(parents=True, exist_ok=True)
    with (folder / name).open("w", encoding="utf-8") as handle:
        for episode in episodes:
            handle.write(json.dumps(sample_record(episode)) + "\n")
    return folder


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    failed = play(1, ["<answer>8</answer>"])
    failed.error = "verifier unreachable"
    return write_run(
        tmp_path / "run",
        [
            play(0, [ADD_CALL, "<answer>5</answer>"]),  # right after a tool call: 1 - 0.1
            play(0, ["<answer>5</answer>"]),  # right at once: 1.0, the best of task 0
            play(1, ["<answer>7</answer>"]),  # wrong: 0.0
            failed,  # reward 1.0, but the verifier broke
        ],
    )


def test_chat_row_keeps_tool_calls_in_openai_form_with_json_string_arguments():
    row = chat_row(play(0, [ADD_CALL, "<answer>5</answer>"]))
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert row["messages"][2]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    ]
    assert row["messages"][3]["tool_call_id"] == "c1"
    assert (row["reward"], row["env_id"], row["task_id"]) == (pytest.approx(0.9), ENV_ID, "two-plus-three")
    assert row["turn_rewards"] == [pytest.approx(-0.1), 1.0]


def test_read_episodes_reads_bare_episode_jsonl(tmp_path: Path):
    from envgym.episode import write_jsonl

    write_jsonl(tmp_path / "episodes.jsonl", [play(0, ["<answer>5</answer>"])])
    [(where, episode)] = read_episodes(tmp_path / "episodes.jsonl")
    assert where.endswith("episodes.jsonl:1") and episode.total_reward == 1.0


def test_read_episodes_reads_the_rollouts_of_a_train_folder(tmp_path: Path):
    write_run(tmp_path / "train", [play(1, ["<answer>8</answer>"])], name="rollouts.jsonl")
    [(where, episode)] = read_episodes(tmp_path / "train")
    assert where.endswith("rollouts.jsonl:1") and episode.task_id == "four-plus-four"


def test_failed_episodes_are_never_exported(run_folder: Path):
    assert [e.total_reward for _, e in select(read_episodes(run_folder))] == [pytest.approx(0.9), 1.0, 0.0]


def test_min_reward_keeps_episodes_at_or_above_it(run_folder: Path):
    assert [e.total_reward for _, e in select(read_episodes(run_folder), min_reward=0.9)] == [pytest.approx(0.9), 1.0]


def test_best_per_task_keeps_the_highest_reward_episode_of_each_task(run_folder: Path):
    kept = select(read_episodes(run_folder), best_per_task=True)
    assert [(e.task_id, e.total_reward) for _, e in kept] == [("two-plus-three", 1.0), ("four-plus-four", 0.0)]


def test_best_per_task_tells_tasks_without_ids_apart_by_seed():
    episodes = [Episode("x/NoTasks-v0", None, [], seed=seed, turns=[]) for seed in (0, 1)]
    assert len(select([("a", e) for e in episodes], best_per_task=True)) == 2


def test_token_row_masks_the_prompt_and_keeps_per_turn_rewards():
    episode = play(0, ["<answer>5</answer>"])
    episode.metadata.update(prompt_ids=[1, 2], completion_ids=[3, 4, 5], loss_mask=[1, 1, 0], turn_ends=[3])
    row = token_row(episode)
    assert (row["input_ids"], row["loss_mask"], row["turn_rewards"]) == ([1, 2, 3, 4, 5], [0, 0, 1, 1, 0], [1.0])


def test_token_row_without_token_ids_names_what_is_missing():
    with pytest.raises(ValueError, match="metadata lacks prompt_ids, completion_ids, loss_mask.*--chat"):
        token_row(play(0, ["<answer>5</answer>"]), "run/samples.jsonl:1")


def test_writing_no_rows_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="no episode is left"):
        write_rows([], tmp_path / "out.jsonl", "jsonl")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "csv"], "unknown --format 'csv'; use one of jsonl, parquet, hf-dataset"),
        (["--chat", "--tokens"], "give --chat or --tokens, not both"),
        (["--tokens"], "carries no token ids"),
        (["--min-reward", "5"], "no episode is left to export"),
    ],
)
def test_bad_input_is_refused_in_one_line(run_folder: Path, args: list[str], message: str):
    result = run_envgym("export", str(run_folder), *args)
    assert result.returncode == 2 and len(result.lines) == 1 and message in result.lines[0]
    assert "torch" not in result.imported


def test_a_folder_without_episodes_is_refused(tmp_path: Path):
    result = run_envgym("export", str(tmp_path))
    assert result.returncode == 2 and "holds none of samples.jsonl, rollouts.jsonl" in result.lines[0]


def load_export(path: Path, format: str):
    import datasets

    if format == "hf-dataset":
        return datasets.load_from_disk(str(path))
    return datasets.load_dataset("json" if format == "jsonl" else "parquet", data_files=str(path), split="train")


@pytest.mark.parametrize("format", ["jsonl", "parquet", "hf-dataset"])
def test_chat_export_loads_with_datasets_and_trains_one_sft_step(run_folder: Path, tmp_path: Path, format: str):
    require("data", "train", "peers")
    from helpers.tiny_models import tiny_model_path

    out = tmp_path / f"export-{format}"
    result = run_envgym(
        "export", str(run_folder), "--format", format, "--chat", "--min-reward", "0.5", "--out", str(out)
    )
    assert result.returncode == 0, result.lines
    assert f"wrote 2 of 4 episodes to {out} (1 failed and 1 filtered out)" in result.lines
    dataset = load_export(out, format)
    assert dataset.num_rows == 2 and dataset[0]["messages"][2]["tool_calls"][0]["function"]["name"] == "add"

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_path())
    before = [p.detach().clone() for p in model.parameters()]
    config = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_steps=1,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=dataset.select_columns(["messages"]),
        processing_class=AutoTokenizer.from_pretrained(tiny_model_path()),
    )
    trainer.train()
    assert trainer.state.global_step == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
