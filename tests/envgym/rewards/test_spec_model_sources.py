"""The spec's group and process components beyond votes: judge_group, reward_model, self_certainty, process."""

import pytest

from envgym.rewards import RewardSpec, RewardSpecError

JUDGE = {"base_url": "http://127.0.0.1:8000/v1", "model": "m"}


def _one(**component):
    return {"components": [{"name": "c", **component}]}


def test_each_new_source_is_computed_at_its_time_with_defaults_filled():
    spec = RewardSpec.from_dict(
        {
            "components": [
                {"name": "rank", "source": "judge_group", **JUDGE},
                {"name": "rm", "source": "reward_model", "model": "some/reward-model"},
                {"name": "certainty", "source": "self_certainty", "weight": 0.1},
                {"name": "steps", "source": "process", "rule": r"=\s*\d"},
            ]
        }
    )
    assert [c.kind for c in spec.components] == ["group", "group", "group", "process"]
    steps = spec.components[3]
    assert (steps.option("segment"), steps.option("scorer"), steps.option("credit")) == ("lines", "rule", "min")
    assert spec.components[0].option("scale") == 10 and spec.components[1].option("batch_size") == 8
    assert RewardSpec.from_dict(spec.to_dict()) == spec


@pytest.mark.parametrize(
    "data,message",
    [
        (_one(source="judge_group", model="m"), r"reward.components\[0\].base_url is missing"),
        (_one(source="reward_model"), r"reward.components\[0\] needs exactly one of model .* or url"),
        (_one(source="reward_model", model="a", url="http://x"), r"needs exactly one of model"),
        (_one(source="reward_model", model="a", batch_size=0), r"batch_size must be an integer >= 1, got 0"),
        (_one(source="self_certainty", temperature=2), r"unknown keys \['temperature'\] for source 'self_certainty'"),
        (_one(source="process", rule="x", segment="sentences"), r"segment must be one of lines, step, blank, regex"),
        (_one(source="process", rule="x", segment="regex"), r"segment: regex, which needs split"),
        (_one(source="process"), r"scorer: rule, which needs rule"),
        (_one(source="process", scorer="judge"), r"scorer: judge, which needs base_url and model"),
        (_one(source="process", rule="x", credit="max"), r"credit must be one of min, sum, got 'max'"),
        (_one(source="process", rule="(unclosed"), r"rule is not a valid regular expression"),
    ],
)
def test_invalid_new_components_name_the_key_path(data, message):
    with pytest.raises(RewardSpecError, match=message):
        RewardSpec.from_dict(data)


def test_hold_out_labels_refuses_a_group_judge_with_a_reference_and_accepts_one_without():
    with pytest.raises(RewardSpecError, match=r"\(source 'judge_group'\) grades against the task's label"):
        RewardSpec.from_dict({"hold_out_labels": True, **_one(source="judge_group", **JUDGE)})
    spec = RewardSpec.from_dict({"hold_out_labels": True, **_one(source="judge_group", reference=False, **JUDGE)})
    assert not spec.needs_labels


def test_a_process_judge_reads_the_label_only_when_asked():
    assert not RewardSpec.from_dict(_one(source="process", scorer="judge", **JUDGE)).needs_labels
    assert RewardSpec.from_dict(_one(source="process", scorer="judge", reference=True, **JUDGE)).needs_labels
