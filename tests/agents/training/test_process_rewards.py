"""Process rewards: step segmentation for each rule, rule scoring, token-to-step mapping on the tiny tokenizer,
PURE's min-form credit by hand, and per-step advantages on the tokens of each step (env tokens get none)."""

import pytest

pytest.importorskip("torch")

import envgym  # noqa: E402
from envgym.agents.training.advantages import step_advantages, step_returns  # noqa: E402
from envgym.agents.training.process_rewards import (
    apply_process_rewards,
    process_token_advantages,  # noqa: E402
    segment_steps,
    step_token_spans,
)
from envgym.agents.trajectory import Trajectory  # noqa: E402
from envgym.rewards import RewardSpec  # noqa: E402


def _texts(text, segment, split=None):
    return [text[a:b] for a, b in segment_steps(text, segment, split)]


def test_lines_are_the_non_blank_lines():
    assert _texts("a = 1\n\n  b = 2  \nso 3", "lines") == ["a = 1", "b = 2", "so 3"]


def test_blank_lines_separate_paragraph_steps():
    assert _texts("First x.\nstill x.\n\n \nThen y.", "blank") == ["First x.\nstill x.", "Then y."]


def test_step_markers_start_steps_and_a_preamble_is_its_own_step():
    text = "Let us see.\nStep 1: add 2.\nStep 2: get 5.\n**Step 3** answer"
    assert _texts(text, "step") == ["Let us see.", "Step 1: add 2.", "Step 2: get 5.", "**Step 3** answer"]


def test_a_regex_split_starts_a_step_at_each_match():
    assert _texts("so a; then b; then c", "regex", r"then") == ["so a;", "then b;", "then c"]


def test_text_without_steps_has_none():
    assert segment_steps("  \n ", "lines") == []


def test_min_form_returns_are_the_minimum_of_the_future_rewards():
    # r = (1, 0.5, 1, 0.2): min-form G = (0.2, 0.2, 0.2, 0.2); sum-form G = (2.7, 1.7, 1.2, 0.2)
    assert step_returns([1.0, 0.5, 1.0, 0.2], "min") == pytest.approx([0.2, 0.2, 0.2, 0.2])
    assert step_returns([1.0, 0.5, 1.0, 0.2], "sum") == pytest.approx([2.7, 1.7, 1.2, 0.2])
    assert step_returns([0.0, 1.0, 1.0], "min") == [0.0, 1.0, 1.0]


def test_step_advantages_normalize_the_returns_over_the_groups_steps():
    # returns (min form): episode 0: (0, 1, 1); episode 1: (1,). mean 3/4, std (n-1) = 0.5
    advantages = step_advantages([[0.0, 1.0, 1.0], [1.0]], "min", 0.0)
    assert [len(a) for a in advantages] == [3, 1]
    assert advantages[0] + advantages[1] == pytest.approx([-1.5, 0.5, 0.5, 0.5])


@pytest.fixture(scope="module")
def tokenizer():
    from helpers.tiny_models import tiny_model_path
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_path())


def test_each_token_maps_to_the_step_its_text_starts_in(tokenizer):
    text = "Step 1: 12 + 7 = 19.\nStep 2: The answer is 42."
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    steps = segment_steps(text, "step")
    spans = step_token_spans(tokenizer, ids, steps)
    assert spans[0][0] == 0 and spans[-1][1] == len(ids) and spans[0][1] == spans[1][0]
    for (start, end), (a, b) in zip(spans, steps):
        assert tokenizer.decode(ids[start:end]).strip() == text[a:b]


def _multi_turn(tokenizer, turns, env_text="<tool_response>5</tool_response>"):
    """A trajectory of policy turns separated by env tokens (loss mask 0)."""
    completion, mask, ends = [], [], []
    for k, turn in enumerate(turns):
        if k:
            env_ids = tokenizer(env_text, add_special_tokens=False)["input_ids"]
            completion += env_ids
            mask += [0] * len(env_ids)
        ids = tokenizer(turn, add_special_tokens=False)["input_ids"]
        completion += ids
        mask += [1] * len(ids)
        ends.append(len(completion) - 1)
    episode = envgym.Episode(env_id="t", task_id="0", prompt=[{"role": "user", "content": "What is 12 + 7?"}])
    return Trajectory(
        episode,
        [1],
        completion,
        [0.0] * len(completion),
        mask,
        ends,
        [0.0] * len(turns),
        [{} for _ in turns],
        False,
        "0",
    )


RULE = {
    "components": [
        {"name": "steps", "source": "process", "segment": "lines", "rule": r"=\s*\d", "credit": "min", "weight": 2.0}
    ]
}


def test_rule_scores_and_token_spans_are_recorded_per_step_across_turns(tokenizer):
    component = RewardSpec.from_dict(RULE).of_kind("process")[0]
    trajectory = _multi_turn(tokenizer, ["12 + 7 = 19\nso the sum", "The answer is 19 = 19"])
    apply_process_rewards([[trajectory]], component, tokenizer, lambda t: "What is 12 + 7?", lambda t: None)
    record = trajectory.episode.metadata["process_rewards"]["steps"]
    assert record["rewards"] == [1.0, 0.0, 1.0] and record["credit"] == "min" and record["weight"] == 2.0
    texts = [tokenizer.decode(trajectory.completion_ids[a:b]).strip() for a, b in record["spans"]]
    assert texts == ["12 + 7 = 19", "so the sum", "The answer is 19 = 19"]
    assert all(trajectory.loss_mask[j] for a, b in record["spans"] for j in range(a, b))


def test_each_token_of_step_k_gets_step_ks_advantage_and_env_tokens_none(tokenizer):
    component = RewardSpec.from_dict(RULE).of_kind("process")[0]
    good = _multi_turn(tokenizer, ["12 + 7 = 19", "The answer is 19 = 19"])  # rewards (1, 1): min returns (1, 1)
    bad = _multi_turn(tokenizer, ["12 + 7 is big", "12 + 7 = 19"])  # rewards (0, 1): min returns (0, 1)
    apply_process_rewards([[good, bad]], component, tokenizer, lambda t: "What is 12 + 7?", lambda t: None)
    [[good_tokens, bad_tokens]] = process_token_advantages([[good, bad]], 0.0)
    # returns (1, 1, 0, 1): mean 3/4, std 1/2 -> advantages (0.5, 0.5, -1.5, 0.5), times the weight 2
    for trajectory, tokens, expected in ((good, good_tokens, [1.0, 1.0]), (bad, bad_tokens, [-3.0, 1.0])):
        spans = trajectory.episode.metadata["process_rewards"]["steps"]["spans"]
        for (start, end), value in zip(spans, expected):
            assert tokens[start:end] == pytest.approx([value] * (end - start))
        env_tokens = [j for j, m in enumerate(trajectory.loss_mask) if not m]
        assert env_tokens and all(tokens[j] == 0.0 for j in env_tokens)


def test_a_step_judge_reply_without_a_score_scores_the_step_0(tokenizer):
    from helpers.scripted_judge import scripted_judge

    with scripted_judge(lambda body: "I cannot tell.") as server:
        spec = {
            "components": [
                {
                    "name": "steps",
                    "source": "process",
                    "scorer": "judge",
                    "base_url": server.base_url,
                    "model": "m",
                    "retries": 0,
                }
            ]
        }
        component = RewardSpec.from_dict(spec).of_kind("process")[0]
        trajectory = _multi_turn(tokenizer, ["12 + 7 = 19\nso 19"])
        apply_process_rewards([[trajectory]], component, tokenizer, lambda t: "q", lambda t: None)
    assert not trajectory.failed and trajectory.episode.metadata["process_rewards"]["steps"]["rewards"] == [0.0, 0.0]


def test_a_step_judge_scores_each_step_with_the_steps_before_it(tokenizer):
    from helpers.scripted_judge import responses_of, scripted_judge

    def reply(body):
        last = responses_of(body)[0].rsplit("\n", 1)[-1]
        return '{"score": 10}' if "=" in last else '{"score": 5}'

    with scripted_judge(reply) as server:
        spec = {
            "components": [
                {
                    "name": "steps",
                    "source": "process",
                    "scorer": "judge",
                    "base_url": server.base_url,
                    "model": "m",
                    "retries": 0,
                }
            ]
        }
        component = RewardSpec.from_dict(spec).of_kind("process")[0]
        trajectory = _multi_turn(tokenizer, ["12 + 7 = 19\nso the sum"])
        apply_process_rewards([[trajectory]], component, tokenizer, lambda t: "What is 12 + 7?", lambda t: None)
        assert responses_of(server.requests[1]) == ["12 + 7 = 19\nso the sum"]
    assert trajectory.episode.metadata["process_rewards"]["steps"]["rewards"] == [1.0, 0.5]


def _step_rewards(tokenizer, turns, question="What is 12 * 3 + 7?", verdict=None):
    component = RewardSpec.from_dict(RULE).of_kind("process")[0]
    trajectory = _multi_turn(tokenizer, turns)
    apply_process_rewards([[trajectory]], component, tokenizer, lambda t: question, lambda t: None, lambda t: verdict)
    return trajectory.episode.metadata["process_rewards"]["steps"]["rewards"]


def test_a_false_step_gets_no_step_credit(tokenizer):
    assert _step_rewards(tokenizer, ["12 * 3 = 99\n99 + 7 = 106"]) == [0.0, 0.0]
    assert _step_rewards(tokenizer, ["12 * 3 = 36\n36 + 7 = 43"]) == [1.0, 1.0]


def test_padding_with_true_steps_that_use_nothing_in_play_earns_nothing(tokenizer):
    padded = ["12 * 3 = 36", "1 + 1 = 2", "2 + 2 = 4", "36 + 7 = 43", "36 + 7 = 43"]
    assert _step_rewards(tokenizer, ["\n".join(padded)]) == [1.0, 0.0, 0.0, 1.0, 0.0]  # unrelated, repeated: 0


def test_step_credit_never_exceeds_the_final_verdict(tokenizer):
    assert _step_rewards(tokenizer, ["12 * 3 = 36\n36 + 7 = 43"], verdict=0.0) == [0.0, 0.0]
    assert _step_rewards(tokenizer, ["The answer is 43 = 43"], verdict=0.0) == [0.0]  # a one-line wrong reply
    assert _step_rewards(tokenizer, ["12 * 3 = 36\n36 + 7 = 43"], verdict=1.0) == [1.0, 1.0]


def test_the_trainer_caps_step_credit_with_the_envs_verdict(tokenizer):
    from helpers.played import played

    from envgym.agents.training.group_rewards import apply_group_rewards

    spec = RewardSpec.from_dict({"components": [{"name": "correct", "source": "env"}, *RULE["components"]]})
    env = envgym.make("math/Arithmetic-v0", difficulty=1, reward=spec)
    env.reset(seed=0, options={"task_index": 0})
    wrong = played(env, 0, "\\boxed{12345} = 12345")
    wrong.completion_ids = tokenizer("12345 = 12345", add_special_tokens=False)["input_ids"]
    wrong.loss_mask, wrong.turn_ends = [1] * len(wrong.completion_ids), [len(wrong.completion_ids) - 1]
    apply_group_rewards([[wrong]], spec, env, tokenizer=tokenizer)
    assert wrong.episode.metadata["process_rewards"]["steps"]["rewards"] == [0.0]
