"""theorem/Informal-v0: verdict outcome reward, balanced labels, hedges refused, proof part, DeepTheorem files."""

import json

import pytest

import envgym
from envgym.utils import check_env


def play(action, index=0, **kwargs):
    env = envgym.make("theorem/Informal-v0", **kwargs)
    env.reset(options={"task_index": index})
    return env.step(action(env) if callable(action) else action)


def test_the_reference_verdict_earns_1_and_the_opposite_0():
    env = envgym.make("theorem/Informal-v0")
    for index in range(30):
        env.reset(options={"task_index": index})
        assert env.step(env.reference_action())[1] == 1.0
        env.reset(options={"task_index": index})
        _, reward, _, _, info = env.step(env.wrong_action())
        assert reward == 0.0 and info["action_valid"]


def test_labels_are_balanced_in_every_pair_so_a_constant_verdict_earns_exactly_half():
    env = envgym.make("theorem/Informal-v0")
    rewards = []
    for index in range(60):
        env.reset(options={"task_index": index})
        rewards.append(env.step("\\boxed{proved}")[1])
    assert all(rewards[i] + rewards[i + 1] == 1.0 for i in range(0, 60, 2))


@pytest.mark.parametrize(
    "action",
    ["\\boxed{proved or disproved}", "\\boxed{proved} \\boxed{disproved}", "It is proved.", "\\boxed{true}", ""],
)
def test_a_hedge_or_missing_verdict_earns_0_and_is_not_valid(action):
    _, reward, _, _, info = play(action)
    assert reward == 0.0 and not info["action_valid"]


def test_verdicts_true_false_are_the_alternative_vocabulary():
    assert play(lambda e: f"\\boxed{{{'true' if e.task.metadata['truth'] else 'false'}}}", verdicts="true")[1] == 1.0
    assert play(lambda e: "\\boxed{proved}", verdicts="true")[1] == 0.0


def test_the_proof_is_a_named_part_without_the_verdict_box_and_info_has_topic_and_difficulty():
    _, _, _, _, info = play(lambda e: f"Since x > 0, AM-GM gives \\boxed{{4}}. \\boxed{{\\text{{{e.task.answer}}}.}}")
    assert info["parts"]["proof"] == "Since x > 0, AM-GM gives \\boxed{4}." and info["correct"]
    assert info["topic"] and info["difficulty"] in (1, 2, 3)


def test_a_deeptheorem_jsonl_file_makes_one_task_per_variant(tmp_path):
    path = tmp_path / "deeptheorem.jsonl"
    record = {
        "id": "t1",
        "informal_theorem": "Every even n > 2 is composite.",
        "domain": "number theory",
        "difficulty": 2.5,
        "variants": [
            {"statement": "Every even n > 2 is composite.", "truth": True},
            {"statement": "Every odd n > 2 is composite.", "truth": "disproved"},
        ],
    }
    path.write_text(json.dumps(record) + "\n")
    env = envgym.make("theorem/Informal-v0", path=str(path))
    assert len(env.unwrapped.tasks) == 2
    _, info = env.reset(options={"task_index": 1})
    assert "Every odd n > 2" in env.task.messages[0]["content"] and info["topic"] == "number theory"
    assert env.step("n = 3 is prime. \\boxed{disproved}")[1] == 1.0


def test_a_variant_without_a_truth_value_is_refused(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"variants": [{"statement": "s", "truth": "maybe"}]}) + "\n")
    with pytest.raises(ValueError, match="truth must be"):
        envgym.make("theorem/Informal-v0", path=str(path))


def test_passes_check_env():
    check_env(envgym.make("theorem/Informal-v0"))


def test_a_judge_component_with_part_proof_scores_the_proof_alone(monkeypatch):
    httpx = pytest.importorskip("httpx")
    from envgym.rewards import apply_reward, judge_reward
    from envgym.verifiers.judge import Judge

    seen = []

    def handler(request):
        seen.append(request.read().decode())
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"score": 5}'}}]})

    judge = Judge(
        "http://judge/v1", "m", retries=0, backoff=0, http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    monkeypatch.setattr(judge_reward, "shared_judge", lambda component: judge)
    spec = {
        "components": [
            {"name": "correct", "source": "env"},
            {
                "name": "proof",
                "source": "judge",
                "part": "proof",
                "base_url": "http://judge/v1",
                "model": "m",
                "weight": 0.2,
            },
        ]
    }
    env = apply_reward(envgym.make("theorem/Informal-v0"), spec)
    env.reset(options={"task_index": 0})
    _, reward, _, _, info = env.step(f"PROOF-TEXT-7 by AM-GM. \\boxed{{{env.unwrapped.task.answer}}}")
    assert reward == pytest.approx(1.1) and "PROOF-TEXT-7" in seen[0] and "boxed" not in seen[0].split("PROOF")[1]
