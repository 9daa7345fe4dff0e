"""What `envgym audit --reward` plays: a recipe's env, arguments and spec; a spec file on named envs; judges pointed
at the audit's judge endpoint; noise replaced by its exact expectation."""

import pytest

from envgym.audit.expectation import ExpectedReward, combinations
from envgym.audit.target import AuditTarget, TargetError, recipe_targets, targets_from, with_judge


def test_a_recipe_gives_its_env_arguments_turn_limit_and_reward():
    [target] = targets_from("smollm2-tool-cpu", [])
    assert (target.env_id, target.label) == ("math/Calculator-v0", "recipe:smollm2-tool-cpu")
    assert target.env_kwargs["max_turns"] == 3 and target.env_kwargs["digits"] == [3, 2]
    assert [c["source"] for c in target.components()] == ["env", "tool_cost"]


def test_a_mixture_recipe_gives_one_target_per_env():
    targets = targets_from("guru-mix-cpu", [])
    assert [t.label for t in targets] == [
        "recipe:guru-mix-cpu:math/Arithmetic-v0",
        "recipe:guru-mix-cpu:strings/Compose-v0",
        "recipe:guru-mix-cpu:science/MultipleChoice-v0",
    ]


def test_every_installed_recipe_gives_targets():
    labels = [target.label for target in recipe_targets()]
    assert "recipe:ttrl-arithmetic-cpu" in labels and len(labels) == len(set(labels)) >= 10


def test_a_spec_file_is_applied_to_the_env_ids_given(tmp_path):
    spec = tmp_path / "vote.yaml"
    spec.write_text("reward:\n  components:\n    - {name: vote, source: majority_vote}\n")
    [target] = targets_from(str(spec), ["math/Arithmetic-v0"], {"difficulty": 2})
    assert target.label == "math/Arithmetic-v0+vote" and target.env_kwargs["difficulty"] == 2
    assert target.components("majority_vote")[0]["name"] == "vote"


def test_a_spec_file_without_env_ids_is_refused_naming_the_file(tmp_path):
    spec = tmp_path / "vote.yaml"
    spec.write_text("reward:\n  components:\n    - {name: vote, source: majority_vote}\n")
    with pytest.raises(TargetError, match="vote.yaml is a reward spec without an env"):
        targets_from(str(spec), [])


def test_a_bad_spec_is_refused_with_the_key_path(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("reward:\n  components:\n    - {name: c, source: env, weight: heavy}\n")
    with pytest.raises(TargetError, match=r"components\[0\]\.weight must be a number"):
        targets_from(str(spec), ["math/Arithmetic-v0"])


def test_an_unknown_recipe_name_lists_the_installed_ones():
    with pytest.raises(TargetError, match="ttrl-arithmetic-cpu"):
        targets_from("no-such-recipe", [])


def test_every_judge_of_a_spec_asks_the_audit_endpoint():
    [target] = targets_from("judge-arithmetic-cpu", [])
    spec = with_judge(target.reward, "http://127.0.0.1:9/v1")
    assert [c["base_url"] for c in spec["components"]] == ["http://127.0.0.1:9/v1"]
    assert target.judged and target.reward["components"][0]["base_url"] == "http://127.0.0.1:8000/v1"


def test_noise_is_played_as_its_exact_expectation():
    reward = {
        "components": [
            {"name": "correct", "source": "env"},
            {"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct"},
        ]
    }
    assert [round(weight, 2) for weight, _ in combinations(reward)] == [0.6, 0.4]
    env = AuditTarget("math/Arithmetic-v0", {"reward": reward}).make()
    assert isinstance(env, ExpectedReward)
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(env.reference_action())[1] == pytest.approx(0.6)  # 1 kept with 0.6, flipped to 0 with 0.4
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(env.wrong_action())[1] == pytest.approx(0.4)
