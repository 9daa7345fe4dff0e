"""envgym.integrations.trl: datasets, the rollout_func path and its reward functions, with a real TRL GRPOTrainer.

The model is the tiny test Llama constrained to choose each turn among given texts (helpers/choice_model.py):
turn 1 calls the ``add`` tool, turn 2 answers, so every episode of ``test/SumTool-v0`` is a real two-turn tool
episode whose tool result sits in the middle of the completion.
"""

import copy

import pytest

trl = pytest.importorskip("trl")
pytest.importorskip("datasets")

from helpers.choice_model import choice_model, tool_tokenizer
from helpers.sum_tool_env import TASKS, register_sum_tool_env

import envgym
from envgym.agents.engines.policy import SamplingParams
from envgym.agents.engines.transformers_policy import TransformersPolicy
from envgym.agents.rollout import rollout
from envgym.integrations.trl import (
    TASK_KEY,
    envgym_component_reward,
    envgym_dataset,
    envgym_reward_func,
    envgym_rollout_func,
    task_index_of,
    trl_batch,
)

CALL = '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'
RIGHT_FOR_TASK_0, RIGHT_FOR_TASK_1 = "<answer>5</answer>", "<answer>8</answer>"


class RecordingTrainer(trl.GRPOTrainer):
    """TRL's trainer, keeping what its generation step hands to the loss (completion ids and masks)."""

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        self.recorded = [*getattr(self, "recorded", []), output]
        return output


@pytest.fixture(autouse=True)
def quiet_trl(monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is "experimental" in TRL 1.16


@pytest.fixture
def env_id(scratch_registry):
    return register_sum_tool_env()


@pytest.fixture(scope="module")
def tokenizer():
    return tool_tokenizer()


def config(tmp_path, **overrides):
    options = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=128,
        max_steps=1,
        learning_rate=1e-3,
        beta=0.0,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        bf16=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    return trl.GRPOConfig(**{**options, **overrides})


def test_dataset_has_one_row_per_task_with_the_env_prompt_tagged_by_task_index(env_id):
    dataset = envgym_dataset(env_id, [1, 0])
    assert dataset["task_index"] == [1, 0]
    assert dataset["task_id"] == [TASKS[1].id, TASKS[0].id]
    prompt = dataset[0]["prompt"]
    assert prompt[-1]["content"] == "What is 4 + 4?"
    assert all(message[TASK_KEY] == 1 for message in prompt)
    assert prompt[0]["role"] == "system" and "<tool_call>" in prompt[0]["content"]  # ToolEnv's json tool prompt


def test_dataset_refuses_task_indices_the_env_does_not_have(env_id):
    with pytest.raises(ValueError, match=r"out of range: test/SumTool-v0 has 2 tasks"):
        envgym_dataset(env_id, 3)


def test_prompts_not_built_by_envgym_dataset_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="envgym_dataset"):
        task_index_of([{"role": "user", "content": "What is 2 + 3?"}])


def test_rollout_func_trains_a_multi_turn_tool_env(env_id, tokenizer, tmp_path):
    model = choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0, RIGHT_FOR_TASK_1]])
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    rollout_func = envgym_rollout_func(env_id)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=envgym_reward_func,
        args=config(tmp_path, max_steps=2),
        train_dataset=envgym_dataset(env_id, 2),
        processing_class=tokenizer,
        rollout_func=rollout_func,
    )
    trainer.train()

    assert trainer.state.global_step == 2
    episodes = rollout_func.last_result.episodes
    assert [episode.num_turns for episode in episodes] == [2, 2, 2, 2]
    assert all(
        episode.turns[0].info["tool_calls"] == 1 and episode.turns[0].observation[0]["content"] == "5"
        for episode in episodes
    )
    # G consecutive rows are one task: each group played one task, and TRL logged envgym's returns
    assert [episode.task_id for episode in episodes[::2]] == [episode.task_id for episode in episodes[1::2]]
    logged = [entry["rewards/envgym_reward_func/mean"] for entry in trainer.state.log_history if "reward" in entry]
    assert logged[-1] == pytest.approx(sum(episode.total_reward for episode in episodes) / 4, abs=1e-6)
    assert any(not parameter.detach().equal(before[name]) for name, parameter in model.named_parameters())


def test_rollout_func_completion_mask_equals_envgym_loss_mask_token_for_token(env_id, tokenizer, tmp_path):
    model = choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0]])  # one text per turn: every episode is the same
    trainer = RecordingTrainer(
        model=model,
        reward_funcs=envgym_reward_func,
        args=config(tmp_path, per_device_train_batch_size=2),
        train_dataset=envgym_dataset(env_id, [0]),
        processing_class=tokenizer,
        rollout_func=envgym_rollout_func(env_id),
    )
    trainer.train()
    batch = trainer.recorded[0]

    # The same episode played by envgym's own loop, outside TRL, with the same model
    policy = TransformersPolicy(model, tokenizer, device="cpu")
    reference = rollout(
        policy, envgym.make_vec(env_id, 1), task_indices=[0], sampling=SamplingParams(max_completion_length=128)
    ).trajectories[0]
    end = reference.turn_ends[-1] + 1
    assert set(reference.loss_mask[end:]) == {0}  # only the template's turn close follows the last policy token
    for row in range(2):
        length = int(batch["completion_mask"][row].sum())
        assert batch["completion_ids"][row][:length].tolist() == reference.completion_ids[:end]
        assert batch["tool_mask"][row][:length].tolist() == reference.loss_mask[:end]
        prompt_length = int(batch["prompt_mask"][row].sum())
        assert batch["prompt_ids"][row][-prompt_length:].tolist() == reference.prompt_ids
    masked = [token for token, keep in zip(reference.completion_ids[:end], reference.loss_mask) if not keep]
    assert "<tool_response>\n5\n</tool_response>" in tokenizer.decode(masked)  # the tool result trains nothing


def test_rollout_func_refuses_sampling_settings_it_would_ignore(env_id, tokenizer, tmp_path):
    trainer = trl.GRPOTrainer(
        model=choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0]]),
        reward_funcs=envgym_reward_func,
        args=config(tmp_path, top_k=5),
        train_dataset=envgym_dataset(env_id, 2),
        processing_class=tokenizer,
        rollout_func=envgym_rollout_func(env_id),
    )
    with pytest.raises(ValueError, match="top_k=5"):
        trainer.train()


def test_a_batch_whose_episodes_all_failed_raises_instead_of_training(scratch_registry, tokenizer, tmp_path):
    from helpers.sum_tool_env import sum_tool_env

    from envgym.registration import register

    register("test/BrokenSumTool-v0", lambda **kwargs: sum_tool_env(broken=True, **kwargs), max_turns=4)
    trainer = trl.GRPOTrainer(
        model=choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0]]),
        reward_funcs=envgym_reward_func,
        args=config(tmp_path),
        train_dataset=envgym_dataset("test/BrokenSumTool-v0", 2),
        processing_class=tokenizer,
        rollout_func=envgym_rollout_func("test/BrokenSumTool-v0"),
    )
    with pytest.raises(RuntimeError, match="every one of the 4 episodes.*adding service is unreachable"):
        trainer.train()


@pytest.fixture(scope="module")
def trajectories(tokenizer):
    """envgym's loop (outside TRL) playing both tasks: tool call, then the answer right for task 0 only."""
    from helpers.sum_tool_env import ENV_ID, sum_tool_env

    policy = TransformersPolicy(choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0]]), tokenizer, device="cpu")
    envs = envgym.VectorEnv([sum_tool_env, sum_tool_env], env_ids=[ENV_ID, ENV_ID])
    return rollout(policy, envs, task_indices=[0, 1], sampling=SamplingParams(max_completion_length=128)).trajectories


def test_a_failed_episode_has_no_reward_and_an_all_zero_mask(trajectories, tokenizer):
    failed = copy.deepcopy(trajectories[1])
    failed.episode.error = "sandbox infra_error"
    batch = trl_batch([trajectories[0], failed], tokenizer.eos_token_id)
    assert batch["envgym_return"] == [pytest.approx(0.9), None]
    assert 1 in batch["env_mask"][0] and set(batch["env_mask"][1]) == {0}
    assert envgym_reward_func(completions=[[], []], **batch) == [pytest.approx(0.9), None]


def test_batch_completions_end_at_the_last_policy_token(trajectories, tokenizer):
    batch = trl_batch(trajectories, tokenizer.eos_token_id)
    for ids, mask, logprobs in zip(batch["completion_ids"], batch["env_mask"], batch["logprobs"]):
        assert ids[-1] == tokenizer.eos_token_id and mask[-1] == 1 and len(logprobs) == len(ids)


def test_component_rewards_sum_each_component_over_the_turns(trajectories, tokenizer):
    batch = trl_batch(trajectories, tokenizer.eos_token_id)
    assert batch["envgym_turn_rewards"] == [[pytest.approx(-0.1), 1.0], [pytest.approx(-0.1), 0.0]]
    correct, tool_cost = envgym_component_reward("correct"), envgym_component_reward("tool_cost")
    assert correct.__name__ == "envgym_correct"
    assert correct(completions=[[], []], **batch) == [1.0, 0.0]
    assert tool_cost(completions=[[], []], **batch) == [pytest.approx(-0.1), pytest.approx(-0.1)]
