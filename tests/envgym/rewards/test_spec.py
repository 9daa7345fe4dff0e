import pytest

from envgym.rewards import RewardComponent, RewardSpec, RewardSpecError

EXAMPLE = {
    "components": [
        {"name": "correct", "source": "env", "weight": 1.0, "gate": "format"},
        {"name": "format", "source": "format", "tags": ["answer"], "weight": 0.1},
        {"name": "reasoning", "source": "pattern", "pattern": "(?i)let's|first|therefore", "weight": 0.2},
        {"name": "noise", "source": "flip", "rate": 0.4, "applies_to": "correct", "seed": 0},
    ]
}


def _with(index, **changes):
    components = [dict(c) for c in EXAMPLE["components"]]
    components[index].update(changes)
    return {"components": components}


def test_the_documented_example_builds_with_defaults_filled():
    spec = RewardSpec.from_dict(EXAMPLE)
    assert [c.name for c in spec.components] == ["correct", "format", "reasoning", "noise"]
    assert spec.components[1].option("penalty") == 0.0 and spec.components[0].option("component") is None
    assert [c.name for c in spec.of_kind("noise")] == ["noise"]


def test_to_dict_reads_back_as_the_same_spec():
    spec = RewardSpec.from_dict(EXAMPLE)
    assert RewardSpec.from_dict(spec.to_dict()) == spec


def test_judge_examples_read_back_as_the_same_spec():
    examples = [{"question": "Compute 3 + 4.", "reference": "7", "response": "\\boxed{7}", "score": 1}]
    spec = RewardSpec.from_dict(
        {
            "components": [
                {
                    "name": "j",
                    "source": "judge",
                    "base_url": "http://x/v1",
                    "model": "m",
                    "scale": 1,
                    "examples": examples,
                }
            ]
        }
    )
    assert list(spec.components[0].option("examples")) == examples
    assert RewardSpec.from_dict(spec.to_dict()) == spec


def test_a_spec_built_in_python_is_validated_too():
    with pytest.raises(RewardSpecError, match=r"reward.components\[0\].weight must be a number, got 'x'"):
        RewardSpec((RewardComponent("correct", "env", weight="x"),))


@pytest.mark.parametrize(
    "data,message",
    [
        (_with(2, weight="x"), r"reward.components\[2\].weight must be a number, got 'x'"),
        (_with(2, weight=float("nan")), r"reward.components\[2\].weight must be a number"),
        (_with(1, source="rubric"), r"reward.components\[1\].source must be one of env, .*got 'rubric'"),
        (_with(0, gate="style"), r"reward.components\[0\].gate names 'style', which is not a per-turn component"),
        (_with(3, applies_to="nothing"), r"reward.components\[3\].applies_to names 'nothing'"),
        (_with(3, rate=1.5), r"reward.components\[3\].rate must be a probability in \[0, 1\], got 1.5"),
        (_with(3, weight=2.0), r"reward.components\[3\] is noise"),
        (_with(2, pattern="(unclosed"), r"reward.components\[2\].pattern is not a valid regular expression"),
        (_with(2, colour="red"), r"reward.components\[2\] has unknown keys \['colour'\] for source 'pattern'"),
        (
            _with(1, name="correct"),
            r"reward.components\[1\].name 'correct' is already the name of reward.components\[0\]",
        ),
        (
            {"components": [{"name": "n", "source": "length", "max_length": 10}]},
            r"reward.components\[0\].buffer is missing",
        ),
        ({"components": []}, r"reward.components must be a non-empty list"),
        ({"components": [{"source": "env"}]}, r"reward.components\[0\].name is missing"),
        ({"parts": []}, r"reward has unknown keys \['parts'\]"),
        (
            {
                "components": [
                    {
                        "name": "j",
                        "source": "judge",
                        "base_url": "http://x/v1",
                        "model": "m",
                        "examples": [{"role": "assistant", "content": "Score: 1"}],
                    }
                ]
            },
            r"reward.components\[0\].examples: examples\[0\] must be \{question: <text>, reference: <text, optional>",
        ),
        (
            {
                "components": [
                    {
                        "name": "j",
                        "source": "judge_group",
                        "base_url": "http://x/v1",
                        "model": "m",
                        "examples": "Score: 1",
                    }
                ]
            },
            r"reward.components\[0\].examples: examples must be a list of \{question, response, score\} mappings",
        ),
    ],
)
def test_invalid_specs_name_the_key_path(data, message):
    with pytest.raises(RewardSpecError, match=message):
        RewardSpec.from_dict(data)


def test_hold_out_labels_refuses_components_that_read_the_label():
    data = {"hold_out_labels": True, "components": [{"name": "correct", "source": "env"}]}
    with pytest.raises(RewardSpecError, match=r"components\[0\] \(source 'env'\) grades against the task's label"):
        RewardSpec.from_dict(data)


def test_needs_labels_follows_the_components():
    vote = {"components": [{"name": "vote", "source": "majority_vote"}]}
    assert not RewardSpec.from_dict(vote).needs_labels
    assert RewardSpec.from_dict(EXAMPLE).needs_labels
