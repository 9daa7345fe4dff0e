"""The rollout loop's token trajectories, checked against a real chat template (the tiny test model's).

The tool episode: the agent calls a calculator twice (results come back as ``tool`` messages) and then
answers; rewards are -0.1 per call and +1 for the right answer, so each must land on its own turn end.
"""

import json
import re

import pytest

AutoTokenizer = pytest.importorskip("transformers").AutoTokenizer

from helpers.scripted_policy import SCRIPTED_LOGPROB, ScriptedPolicy
from helpers.tiny_models import tiny_model_path

import envgym
from envgym.agents.engines.policy import Generation, SamplingParams, encode
from envgym.agents.engines.tokens import TemplateDeltas, TemplateError, TokenConversation
from envgym.agents.rollout import rollout
from envgym.core import Env, Task, action_text
from envgym.tasks import ListTaskSource
from envgym.vector import VectorEnv
from envgym.wrappers import TimeLimit

CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
TASKS = [
    Task(
        "product",
        [{"role": "system", "content": "Use the calculator."}, {"role": "user", "content": "What is (2+3)*4?"}],
        answer="20",
    ),
    Task("sum", [{"role": "user", "content": "What is 1+1?"}], answer="2"),
]


class CalculatorEnv(Env):
    """Tool calls in ``<tool_call>`` JSON are evaluated; any other turn is the final answer."""

    def __init__(self):
        self.tasks = ListTaskSource(TASKS)

    def _reset(self, task, options):
        return task.prompt(), {}

    def _step(self, action):
        text = action_text(action)
        call = CALL.search(text)
        if call:
            expression = json.loads(call.group(1))["arguments"]["expression"]
            result = str(eval(expression, {"__builtins__": {}}))  # test-only: the scripts are fixed
            info = {"tool_calls": 1, "reward_components": {"tool_cost": -0.1}}
            return [{"role": "tool", "content": result}], -0.1, False, False, info
        correct = self.task.answer in text
        info = {"correct": correct, "answer": text.split()[-1], "reward_components": {"correct": float(correct)}}
        return [{"role": "user", "content": "Done."}], float(correct), True, False, info


SCRIPTS = {
    "(2+3)*4": [
        '<tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}</tool_call>',
        '<tool_call>{"name": "calculator", "arguments": {"expression": "5*4"}}</tool_call>',
        "The answer is 20",
    ],
    "1+1": ["The answer is 2"],
}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(tiny_model_path())


@pytest.fixture()
def result(tokenizer):
    policy = ScriptedPolicy(tokenizer, SCRIPTS)
    envs = VectorEnv([CalculatorEnv, CalculatorEnv], env_ids=["test/Calculator", "test/Calculator"])
    out = rollout(policy, envs, task_indices=[0, 1], sampling=SamplingParams(max_completion_length=64))
    out.policy = policy
    return out


def _runs(mask):
    """(start, end, value) runs of equal mask values."""
    runs, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((start, i, mask[start]))
            start = i
    return runs


def test_tool_episode_tokens_decode_back_to_the_conversation(result, tokenizer):
    trajectory = result.trajectories[0]
    messages = trajectory.episode.messages()[:-1]  # the final env answer is never fed to the model
    expected = tokenizer.apply_chat_template(messages, tokenize=False)
    assert tokenizer.decode(trajectory.prompt_ids + trajectory.completion_ids) == expected
    assert trajectory.episode.num_turns == 3


def test_loss_mask_covers_exactly_the_policy_tokens(result, tokenizer):
    trajectory = result.trajectories[0]
    policy_runs = [(s, e) for s, e, v in _runs(trajectory.loss_mask) if v == 1]
    eos = tokenizer.eos_token_id
    assert [trajectory.completion_ids[s:e] for s, e in policy_runs] == [
        encode(tokenizer, t) + [eos] for t in SCRIPTS["(2+3)*4"]
    ]
    env_text = [tokenizer.decode(trajectory.completion_ids[s:e]) for s, e, v in _runs(trajectory.loss_mask) if v == 0]
    assert env_text == [
        "\n<|im_start|>tool\n5<|im_end|>\n<|im_start|>assistant\n",
        "\n<|im_start|>tool\n20<|im_end|>\n<|im_start|>assistant\n",
        "\n",
    ]


def test_logprobs_are_the_sampled_ones_on_policy_tokens_and_zero_elsewhere(result):
    trajectory = result.trajectories[0]
    assert len(trajectory.logprobs) == len(trajectory.completion_ids)
    for logprob, mask in zip(trajectory.logprobs, trajectory.loss_mask):
        assert logprob == (SCRIPTED_LOGPROB if mask else 0.0)


def test_rewards_sit_at_the_last_policy_token_of_each_turn(result, tokenizer):
    trajectory = result.trajectories[0]
    assert trajectory.turn_rewards == pytest.approx([-0.1, -0.1, 1.0])
    assert trajectory.turn_reward_components == [{"tool_cost": -0.1}, {"tool_cost": -0.1}, {"correct": 1.0}]
    for end in trajectory.turn_ends:
        assert trajectory.loss_mask[end] == 1 and trajectory.completion_ids[end] == tokenizer.eos_token_id
        assert trajectory.loss_mask[end + 1] == 0
    rewards = trajectory.token_rewards()
    assert [rewards[end] for end in trajectory.turn_ends] == pytest.approx([-0.1, -0.1, 1.0])
    assert sum(rewards) == pytest.approx(0.8)


def test_only_envs_still_in_an_episode_are_generated_for(result):
    assert result.policy.calls == [2, 1, 1]  # the 1+1 episode ends after its first turn
    assert [t.episode.num_turns for t in result.trajectories] == [3, 1]
    assert not any(t.truncated for t in result.trajectories)


def test_group_members_play_the_same_task_and_share_a_group_id(tokenizer):
    policy = ScriptedPolicy(tokenizer, SCRIPTS)
    envs = VectorEnv([CalculatorEnv] * 4, env_ids=["test/Calculator"] * 4)
    out = rollout(policy, envs, num_generations=2, task_indices=[1, 0])
    assert [t.episode.task_id for t in out.trajectories] == ["sum", "sum", "product", "product"]
    assert len({t.group_id for t in out.trajectories[:2]}) == 1
    assert out.trajectories[0].group_id != out.trajectories[2].group_id


def test_groups_without_a_task_or_seed_are_refused(tokenizer):
    envs = VectorEnv([CalculatorEnv] * 2, env_ids=["test/Calculator"] * 2)
    with pytest.raises(ValueError, match="a group must play one task"):
        rollout(ScriptedPolicy(tokenizer, SCRIPTS), envs, num_generations=2)


def test_episode_token_budget_truncates_and_says_so(tokenizer):
    policy = ScriptedPolicy(tokenizer, SCRIPTS)
    envs = VectorEnv([CalculatorEnv], env_ids=["test/Calculator"])
    out = rollout(policy, envs, task_indices=[0], max_episode_tokens=40)
    trajectory = out.trajectories[0]
    assert trajectory.truncated and trajectory.episode.metadata["truncated_by"] == "token_budget"
    assert trajectory.episode.num_turns < 3


def test_the_envs_turn_limit_ends_the_episode_truncated(tokenizer):
    envs = VectorEnv([lambda: TimeLimit(CalculatorEnv(), max_turns=2)], env_ids=["test/Calculator"])
    out = rollout(ScriptedPolicy(tokenizer, SCRIPTS), envs, task_indices=[0])
    episode = out.episodes[0]
    assert episode.num_turns == 2 and episode.truncated and not episode.terminated
    assert "truncated_by" not in episode.metadata  # the env ended it, not the loop


def test_a_turn_stopped_by_a_stop_sequence_is_closed_with_template_tokens(tokenizer):
    conversation = TokenConversation(tokenizer, TemplateDeltas(tokenizer), [{"role": "user", "content": "hi"}])
    tokens = encode(tokenizer, "<tool_call>{}</tool_call>")
    conversation.add_policy_turn(Generation("<tool_call>{}</tool_call>", tokens, [-1.0] * len(tokens), "stop"))
    closing = conversation.completion_ids[len(tokens) :]
    assert tokenizer.decode(closing) == "<|im_end|>\n"
    assert conversation.loss_mask == [1] * len(tokens) + [0] * len(closing)


def test_templates_that_drop_a_finished_turns_content_are_rejected_with_a_reason(tokenizer):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.role == 'assistant' %}"
        "(hidden){% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    with pytest.raises(TemplateError, match="cannot be kept as they are"):
        TemplateDeltas(tokenizer)


def test_a_real_model_rollout_decodes_back_to_its_conversation():
    from envgym.agents.engines.transformers_policy import TransformersPolicy

    policy = TransformersPolicy(tiny_model_path(), device="cpu")
    envs = envgym.make_vec("games/GuessNumber-v0", 2, max_turns=3)
    out = rollout(
        policy,
        envs,
        task_indices=[3],
        num_generations=2,
        sampling=SamplingParams(max_completion_length=12, seed=0),
    )
    for trajectory in out.trajectories:
        fed = trajectory.episode.messages()[: -len(trajectory.episode.turns[-1].observation) or None]
        expected = policy.tokenizer.apply_chat_template(fed, tokenize=False)
        assert policy.tokenizer.decode(trajectory.prompt_ids + trajectory.completion_ids) == expected
        assert all(lp <= 0 for lp in trajectory.logprobs)
        assert sum(trajectory.loss_mask) == trajectory.episode.metadata["policy_tokens"]
    assert out.trajectories[0].episode.task_id == out.trajectories[1].episode.task_id


def test_trajectories_keep_the_weight_of_each_reward_component(tokenizer):
    from envgym.wrappers import RewardWeights

    envs = VectorEnv([lambda: RewardWeights(CalculatorEnv(), {"correct": 2.0})], env_ids=["test/Calculator"])
    (trajectory,) = rollout(ScriptedPolicy(tokenizer, SCRIPTS), envs, task_indices=[1]).trajectories
    assert trajectory.turn_reward_components == [{"correct": 2.0}]
    assert trajectory.turn_reward_weights == [{"correct": 2.0}]  # so GDPO can normalize the raw value, 1.0
