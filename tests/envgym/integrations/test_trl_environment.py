"""envgym.integrations.trl_environment: a tool env as a TRL environment_factory, alone and in a real GRPOTrainer."""

import inspect

import pytest

trl = pytest.importorskip("trl")
pytest.importorskip("datasets")
from helpers.choice_model import choice_model, tool_tokenizer
from helpers.sum_tool_env import register_sum_tool_env, sum_tool_env
from transformers.utils import get_json_schema

from envgym.integrations.trl import envgym_dataset, envgym_environment_factory, envgym_environment_reward
from envgym.integrations.trl_environment import tool_method
from envgym.tools import Tool

CALL = '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'
RIGHT_FOR_TASK_0, RIGHT_FOR_TASK_1 = "<answer>5</answer>", "<answer>8</answer>"


@pytest.fixture
def env_id(scratch_registry):
    return register_sum_tool_env()


@pytest.fixture
def environment(env_id):
    """An environment object of the factory, reset on task 0 as TRL does it (with the whole dataset row)."""
    environment = envgym_environment_factory(env_id, prompt_format=None)()
    environment.reset(**envgym_dataset(env_id, [0], prompt_format=None)[0])
    return environment


def final(text):
    return [{"role": "assistant", "content": text}]


def test_the_env_tools_are_the_only_public_methods_trl_sees(env_id):
    environment_class = envgym_environment_factory(env_id, prompt_format=None)
    # what GRPOTrainer collects: public functions of the class other than reset/get_reward
    methods = [
        name
        for name, _ in inspect.getmembers(environment_class, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]
    assert methods == ["add"]
    assert environment_class.__name__ == "SumToolEnvironment"


def test_a_method_schema_is_the_tool_schema(env_id):
    tool = sum_tool_env().tools["add"]
    schema = get_json_schema(envgym_environment_factory(env_id, prompt_format=None)().add)["function"]
    assert schema["name"] == "add" and schema["description"] == tool.description
    assert schema["parameters"]["required"] == ["a", "b"]
    assert {name: spec["type"] for name, spec in schema["parameters"]["properties"].items()} == {
        "a": "integer",
        "b": "integer",
    }


def test_enums_optional_and_list_parameters_survive_the_round_trip_through_a_signature():
    tool = Tool(
        "pick",
        "Pick a colour.",
        {
            "type": "object",
            "required": ["colour"],
            "properties": {
                "colour": {"type": "string", "enum": ["red", "blue"], "description": "Which colour."},
                "sizes": {"type": "array", "items": {"type": "integer"}},
                "note": {"type": ["string", "null"]},
            },
        },
        function=lambda colour, sizes=None, note=None: colour,
    )
    parameters = get_json_schema(tool_method(tool))["function"]["parameters"]
    assert parameters["required"] == ["colour"]
    assert parameters["properties"]["colour"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "description": "Which colour.",
    }
    assert parameters["properties"]["sizes"]["items"] == {"type": "integer"}
    assert parameters["properties"]["note"]["nullable"] is True


def test_tools_named_like_trl_hooks_are_refused():
    tool = Tool("reset", "Start over.", {"type": "object", "properties": {}}, function=lambda: "ok")
    with pytest.raises(ValueError, match="reserves reset"):
        tool_method(tool)


def test_a_tool_call_is_one_env_step_and_the_final_turn_is_graded(environment):
    assert environment.add(a=2, b=3) == "5"
    assert envgym_environment_reward([final(RIGHT_FOR_TASK_0)], [environment]) == [pytest.approx(0.9)]
    assert environment.episode.rewards == [pytest.approx(-0.1), 1.0]  # tool_cost, then the verifier's reward
    assert environment.episode.terminated


def test_bad_arguments_are_the_model_s_observation_not_a_failure(environment):
    assert "must be integer" in environment.add(a="two", b=3)
    assert not environment.episode.failed


def test_a_final_turn_still_calling_tools_is_not_graded(environment):
    environment.add(a=2, b=3)
    cut = [{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "add"}}]}]
    assert envgym_environment_reward([cut], [environment]) == [pytest.approx(-0.1)]
    assert environment.episode.num_turns == 1


def test_an_infrastructure_failure_is_no_reward(scratch_registry):
    from envgym.registration import register

    register("test/BrokenSumTool-v0", lambda **kwargs: sum_tool_env(broken=True, **kwargs))
    environment = envgym_environment_factory("test/BrokenSumTool-v0", prompt_format=None)()
    environment.reset(task_index=0)
    assert "the adding service is unreachable" in environment.add(a=2, b=3)
    assert environment.episode.failed
    assert "Not run" in environment.add(a=2, b=3)
    with pytest.raises(RuntimeError, match="every one of the 1 episodes"):
        envgym_environment_reward([final(RIGHT_FOR_TASK_0)], [environment])


def test_a_row_from_a_dataset_of_other_env_kwargs_is_refused(env_id):
    environment = envgym_environment_factory(env_id, prompt_format=None)()
    row = envgym_dataset(env_id, [0])[0]  # built with the tools described in the prompt: not the same prompt
    with pytest.raises(ValueError, match="different prompt"):
        environment.reset(**row)


def test_a_row_without_task_index_is_refused_with_the_fix(env_id):
    environment = envgym_environment_factory(env_id, prompt_format=None)()
    with pytest.raises(ValueError, match="envgym_dataset"):
        environment.reset(prompt=[{"role": "user", "content": "What is 2 + 3?"}])


def test_a_non_tool_env_is_refused():
    with pytest.raises(TypeError, match="not a tool env"):
        envgym_environment_factory("games/GuessNumber-v0")


def test_trl_tool_loop_trains_the_tool_env(env_id, monkeypatch, tmp_path):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is "experimental" in TRL 1.16
    tokenizer = tool_tokenizer()
    model = choice_model(tokenizer, [[CALL], [RIGHT_FOR_TASK_0, RIGHT_FOR_TASK_1]])
    args = trl.GRPOConfig(
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
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=envgym_environment_reward,
        args=args,
        train_dataset=envgym_dataset(env_id, 2, prompt_format=None),
        processing_class=tokenizer,
        environment_factory=envgym_environment_factory(env_id, prompt_format=None),
    )
    trainer.train()

    assert trainer.state.global_step == 1
    episodes = [environment.episode for environment in trainer.environments]
    assert all(episode.num_turns == 2 and episode.turns[0].observation[0]["content"] == "5" for episode in episodes)
    assert all(episode.terminated and not episode.failed for episode in episodes)
    logged = trainer.state.log_history[0]
    assert logged["tools/call_frequency"] == 1.0
    assert logged["rewards/envgym_environment_reward/mean"] == pytest.approx(
        sum(episode.total_reward for episode in episodes) / 4, abs=1e-6
    )


def test_an_older_trl_is_refused_with_the_upgrade_command(env_id, monkeypatch):
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.10.0")
    with pytest.raises(ImportError, match=r"TRL >= 1.16.*pip install -U 'trl>=1.16'"):
        envgym_environment_factory(env_id, prompt_format=None)
