"""suites/tau2.yaml: the three domains with a served model user; `envgym eval --suite` runs it end to end against a
real OpenAI-compatible server playing the user (the project's own, with the tests' tiny model)."""

import json

import pytest

pytest.importorskip("tau2")

import yaml
from typer.testing import CliRunner

import envgym
from envgym.agents.evaluation.suite import load_suite
from envgym.cli.app import app
from envgym.users import LLMUser

IDS = ["tau2/airline-v0", "tau2/retail-v0", "tau2/telecom-v0"]


def test_the_suite_plays_the_three_domains_with_a_served_user_and_native_tools():
    entries, settings = load_suite("tau2")
    assert [entry.env for entry in entries] == IDS
    for entry in entries:
        assert entry.template_tools
        env = envgym.make(entry.env, **entry.make_kwargs())
        assert isinstance(env.unwrapped.user, LLMUser)
        assert env.unwrapped.user.endpoint.url == "http://127.0.0.1:8001/v1/chat/completions"


@pytest.mark.slow  # 1 to 5 min on 2 shared cores: the tiny model reads τ²'s 6,000-token prompts on every turn
def test_eval_runs_the_suite_with_a_served_model_as_the_user(tmp_path):
    from helpers.openai_server import openai_server
    from helpers.tiny_models import tiny_model_path

    from envgym.config import find_config

    suite = yaml.safe_load(find_config("tau2", "suites").read_text())
    with openai_server(tiny_model_path()) as user_url:
        for entry in suite["envs"]:
            entry["env_kwargs"] = {"user_endpoint": {"base_url": user_url, "model": "user", "timeout": 120}}
        path = tmp_path / "tau2.yaml"
        path.write_text(yaml.safe_dump(suite))
        arguments = ["eval", "--suite", str(path), "--model", tiny_model_path(), "--out", str(tmp_path / "run")]
        options = ["--num-generations", "1", "--n-tasks", "1", "--k", "1", "--max-completion-length", "8"]
        options += ["--max-turns", "2"]
        result = CliRunner().invoke(app, arguments + options)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "results.json").read_text())["envs"]
    assert sorted(summary) == IDS
    assert all(summary[env_id]["n_failed"] == 0 and summary[env_id]["n_samples"] == 1 for env_id in IDS)
