"""The copies of τ²'s prompt templates (envgym.envs.tau2.prompts) equal τ²'s own, as τ²'s agents, user simulator,
orchestrator and assertion judge build them."""

import os

import pytest

pytest.importorskip("tau2")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm fetches its price list at import otherwise
pytest.importorskip("litellm")

from tau2.agent.llm_agent import LLMAgent, LLMSoloAgent
from tau2.data_model.message import AssistantMessage, UserMessage
from tau2.evaluator import evaluator_nl_assertions
from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
from tau2.user.user_simulator import UserSimulator

from envgym.envs.tau2 import domains, prompts


def test_the_agents_system_prompt_is_tau2s():
    policy = domains.policy("airline")
    assert prompts.agent_prompt(policy) == LLMAgent(tools=[], domain_policy=policy).system_prompt


def test_the_solo_agents_system_prompt_and_done_tool_are_tau2s():
    env = domains.environment("telecom", solo=True)
    task = domains.tasks("telecom", "base")[0]
    agent = LLMSoloAgent(tools=env.get_tools() + env.get_user_tools(), domain_policy=env.get_policy(), task=task)
    assert prompts.agent_prompt(env.get_policy(), solo=True, ticket=task.ticket) == agent.system_prompt
    assert domains.agent_tools("telecom", solo=True) == [tool.openai_schema for tool in agent.tools]


@pytest.mark.parametrize("domain", ["airline", "telecom"])
def test_the_user_simulators_system_prompt_is_tau2s(domain):
    env = domains.environment(domain)
    tools = env.get_user_tools() if env.user_tools is not None else None
    scenario = str(domains.tasks(domain, "base")[0].user_scenario)
    simulator = UserSimulator(tools=tools, instructions=scenario, llm="unused")
    assert prompts.user_prompt(scenario, with_tools=tools is not None) == simulator.system_prompt


def test_the_first_agent_message_is_tau2s():
    assert prompts.GREETING == DEFAULT_FIRST_AGENT_MESSAGE.content


def test_the_assertion_judges_messages_are_tau2s(monkeypatch):
    sent = []

    def generate(model, messages, **_):
        sent.extend(messages)
        return AssistantMessage(role="assistant", content='{"results": []}')

    monkeypatch.setattr(evaluator_nl_assertions, "generate", generate)
    trajectory = [AssistantMessage(role="assistant", content="Hi!"), UserMessage(role="user", content="Hello.")]
    assertions = ["The agent greets the user.", "The agent does not book anything."]
    evaluator_nl_assertions.NLAssertionsEvaluator.evaluate_nl_assertions(trajectory, assertions)
    ours = prompts.nl_judge_messages(trajectory, assertions)
    assert [(m.role, m.content) for m in sent] == [(m["role"], m["content"]) for m in ours]
