import random

import pytest

import envgym
from envgym.agents.training.group_rewards import apply_group_rewards, group_reward_metrics
from envgym.agents.trajectory import Trajectory
from envgym.rewards import RewardSpec

VOTE = {"components": [{"name": "vote", "source": "majority_vote", "weight": 1.0}]}


def _played(env, task_index: int, response: str) -> Trajectory:
    """One single-turn episode of ``env`` answered with ``response``, as the rollout loop records it."""
    env.reset(seed=0, options={"task_index": task_index})
    episode = envgym.Episode(env_id="test", task_id=env.task.id, prompt=[])
    _, reward, terminated, truncated, info = env.step(response)
    turn = episode.add_turn(response, [], reward, terminated, truncated, info)
    return Trajectory(
        episode=episode,
        prompt_ids=[1],
        completion_ids=[2],
        logprobs=[0.0],
        loss_mask=[1],
        turn_ends=[0],
        turn_rewards=[turn.reward],
        turn_reward_components=[dict(turn.reward_components)],
        truncated=False,
        group_id=str(task_index),
        turn_reward_weights=[dict(info.get("reward_weights") or {})],
    )


def _group(env, responses, task_index=0):
    return [_played(env, task_index, r) for r in responses]


def test_the_vote_clusters_equivalent_answers_in_different_forms():
    env = envgym.make("math/Arithmetic-v0", reward=VOTE)
    group = _group(env, ["\\boxed{1/2}", "\\boxed{0.5}", "\\boxed{\\frac{1}{2}}", "\\boxed{3}", "no answer"])
    apply_group_rewards([group], RewardSpec.from_dict(VOTE), env)
    assert [t.turn_rewards[-1] for t in group] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert group[0].turn_reward_components[-1] == {"vote": 1.0} and group[0].turn_reward_weights[-1] == {"vote": 1.0}
    assert group[0].episode.turns[-1].reward == 1.0  # the episode record agrees with the trajectory
    assert group_reward_metrics([group], RewardSpec.from_dict(VOTE)) == {
        "vote_agreement": pytest.approx(3 / 5),
        "group_collapse": pytest.approx(3 / 5),
        "distinct_answers": 2.0,
        "vote_guarded": 0.0,
    }


def test_self_consistency_is_each_answers_share_of_the_group():
    spec = {"components": [{"name": "consistency", "source": "self_consistency", "weight": 2.0}]}
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _group(env, ["\\boxed{2}", "\\boxed{2.0}", "\\boxed{5}", "none"])
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    assert [t.total_reward for t in group] == [1.0, 1.0, 0.5, 0.0]  # 2 x (2/4, 2/4, 1/4, 0)


def test_a_gated_group_reward_counts_only_where_the_gate_holds():
    spec = {
        "components": [
            {"name": "vote", "source": "majority_vote", "gate": "format", "min_distinct": 1},
            {"name": "format", "source": "format", "pattern": "^Answer", "weight": 0.0},
        ]
    }
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _group(env, ["Answer: \\boxed{4}", "\\boxed{4}", "Answer: \\boxed{4}"])
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    assert [t.turn_reward_components[-1]["vote"] for t in group] == [1.0, 0.0, 1.0]


def test_exact_equivalence_keeps_forms_apart():
    spec = {"components": [{"name": "vote", "source": "majority_vote", "equivalence": "exact"}]}
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _group(env, ["\\boxed{0.5}", "\\boxed{1/2}", "\\boxed{1/2}"])
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    assert [t.total_reward for t in group] == [0.0, 1.0, 1.0]


def test_failed_episodes_neither_vote_nor_get_a_value():
    spec = {"components": [{"name": "vote", "source": "majority_vote", "min_distinct": 1}]}
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    group = _group(env, ["\\boxed{7}", "\\boxed{8}", "\\boxed{8}"])
    group[1].episode.error = "sandbox down"
    group[2].episode.error = "sandbox down"
    apply_group_rewards([group], RewardSpec.from_dict(spec), env)
    assert [t.total_reward for t in group] == [1.0, 0.0, 0.0]


HELD_OUT = {"hold_out_labels": True, "components": [{"name": "vote", "source": "majority_vote"}]}


def _labelled_dataset(tmp_path, answers):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(f'{{"question": "q{i}", "answer": "{a}"}}\n' for i, a in enumerate(answers)))
    return envgym.make("math/Dataset-v0", path=str(path), reward=HELD_OUT)


RESPONSES = [
    ["\\boxed{1}", "\\boxed{1}", "\\boxed{2}"],
    ["\\boxed{3}", "\\boxed{4}", "\\boxed{4}"],
    ["\\boxed{5}", "\\boxed{6}", "\\boxed{5}"],
]


def test_held_out_labels_never_change_the_reward_but_are_measured(tmp_path):
    labels = ["1", "4", "6"]
    shuffled = labels[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != labels
    outcomes = []
    for answers in (labels, shuffled):
        env = _labelled_dataset(tmp_path, answers)
        groups = [_group(env, responses, task_index=i) for i, responses in enumerate(RESPONSES)]
        apply_group_rewards(groups, RewardSpec.from_dict(HELD_OUT), env)
        outcomes.append(
            (
                [[t.total_reward for t in g] for g in groups],
                group_reward_metrics(groups, RewardSpec.from_dict(HELD_OUT)),
            )
        )
    (rewards, metrics), (shuffled_rewards, shuffled_metrics) = outcomes
    assert rewards == shuffled_rewards == [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert metrics["label_accuracy"] == pytest.approx(5 / 9)  # 2 + 2 + 1 episodes match their label
    assert shuffled_metrics["label_accuracy"] != metrics["label_accuracy"]


def test_label_free_rows_vote_without_a_label(tmp_path):
    path = tmp_path / "unlabelled.jsonl"
    path.write_text('{"question": "half of one?"}\n')
    env = envgym.make("math/Dataset-v0", path=str(path), reward=VOTE)
    group = _group(env, ["\\boxed{1/2}", "\\boxed{0.5}", "\\boxed{2}"])
    apply_group_rewards([group], RewardSpec.from_dict(VOTE), env)
    assert [t.total_reward for t in group] == [1.0, 1.0, 0.0]
    assert "label_accuracy" not in group_reward_metrics([group], RewardSpec.from_dict(HELD_OUT))


def test_label_free_rows_are_refused_when_the_reward_needs_the_label(tmp_path):
    path = tmp_path / "unlabelled.jsonl"
    path.write_text('{"question": "half of one?"}\n')
    with pytest.raises(KeyError, match="no answer field"):
        envgym.make("math/Dataset-v0", path=str(path), reward={"components": [{"name": "correct", "source": "env"}]})


def test_the_trainer_adds_group_rewards_and_logs_the_collapse_that_withholds_them():
    pytest.importorskip("torch")
    from helpers.scripted_policy import ScriptedPolicy
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envgym.agents.training.config import GRPOConfig
    from envgym.agents.training.trainer import GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    policy = ScriptedPolicy(tokenizer, {"Compute": ["\\boxed{3}"]})  # every episode answers 3: a unanimous vote
    config = GRPOConfig(num_generations=2, num_tasks_per_step=2, max_completion_length=8, max_steps=1)
    trainer = GRPOTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_model_path()),
        tokenizer,
        "math/Arithmetic-v0",
        config,
        device="cpu",
        env_kwargs={"difficulty": 1},
        reward=HELD_OUT,
        policy=policy,
    )
    metrics = trainer.train_step()
    assert metrics["vote_agreement"] == 1.0 and metrics["group_collapse"] == 1.0 and metrics["distinct_answers"] == 1.0
    assert metrics["vote_guarded"] == 1.0 and metrics["reward/vote"] == 0.0  # a unanimous constant earns nothing
    answers = [t.episode.turns[-1].info["correct"] for g in trainer.last_rollouts for t in g]
    assert metrics["label_accuracy"] == pytest.approx(sum(answers) / len(answers))


def test_an_answer_the_env_refuses_cannot_vote():
    env = envgym.make("math/Arithmetic-v0", reward=VOTE)  # the value is asked for: "8 - 5" is refused
    group = _group(env, ["\\boxed{8 - 5}", "\\boxed{8 - 5}", "\\boxed{3}", "\\boxed{7}", "\\boxed{7}"])
    assert group[0].episode.turns[-1].info["action_valid"] is False
    apply_group_rewards([group], RewardSpec.from_dict(VOTE), env)
    assert [t.total_reward for t in group] == [0.0, 0.0, 0.0, 1.0, 1.0]


def test_a_group_collapsed_onto_one_constant_gets_no_vote_reward():
    env = envgym.make("math/Arithmetic-v0", reward=VOTE)
    group = _group(env, ["\\boxed{0}"] * 8)
    apply_group_rewards([group], RewardSpec.from_dict(VOTE), env)
    assert [t.total_reward for t in group] == [0.0] * 8
    metrics = group_reward_metrics([group], RewardSpec.from_dict(VOTE))
    assert metrics["group_collapse"] == 1.0 and metrics["vote_guarded"] == 1.0


def test_an_entropy_floor_withholds_the_vote_from_a_nearly_collapsed_group():
    spec = {"components": [{"name": "vote", "source": "majority_vote", "min_entropy": 0.5}]}
    env = envgym.make("math/Arithmetic-v0", reward=spec)
    nearly = _group(env, ["\\boxed{0}"] * 7 + ["\\boxed{1}"])  # entropy 0.38 nats
    mixed = _group(env, ["\\boxed{0}"] * 4 + ["\\boxed{1}"] * 4)  # entropy 0.69 nats
    apply_group_rewards([nearly, mixed], RewardSpec.from_dict(spec), env)
    assert [t.total_reward for t in nearly] == [0.0] * 8
    assert [t.total_reward for t in mixed] == [1.0] * 4 + [0.0] * 4
