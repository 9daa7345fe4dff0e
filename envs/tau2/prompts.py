# ruff: noqa: E501, W293 - τ²'s prompts are kept exactly as τ² writes them (long lines, spaces on blank lines)
"""tau2-bench's prompt templates, word for word: the agent's system prompt (normal and solo), the user
simulator's system prompt, the first agent message and the natural-language-assertion judge's prompts.

They are copied because the τ² modules that define them (``tau2.agent.llm_agent``, ``tau2.user.user_simulator``,
``tau2.orchestrator.orchestrator``, ``tau2.evaluator.evaluator_nl_assertions``) import litellm, which costs about
3 s per process; ``tests/envs/tau2/test_prompts.py`` holds each copy equal to τ²'s own. The texts they fill in
(policies, user guidelines, scenarios, tickets) are read from the installed package. Copied from tau2-bench,
MIT licence, Copyright (c) 2025 Sierra Research (prompts.NOTICE).
"""

from __future__ import annotations

from tau2.data_model.message import Message as Tau2Message
from tau2.utils import DATA_DIR

GREETING = "Hi! How can I help you today?"

AGENT_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.
""".strip()

AGENT_SYSTEM_PROMPT = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
""".strip()

SOLO_AGENT_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
You will be provided with a ticket that contains the user's request.
You will need to plan and call the appropriate tools to solve the ticket.

You cannot communicate with the user, only make tool calls.
Stop when you consider that you have solved the ticket.
To do so, send a message containing a single tool call to the `{stop_function_name}` tool. Do not include any other tool calls in this last message.

Always follow the policy. Always make sure you generate valid JSON only.
""".strip()

SOLO_AGENT_SYSTEM_PROMPT = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
<ticket>
{ticket}
</ticket>
""".strip()

USER_SYSTEM_PROMPT = """
{global_user_sim_guidelines}

<scenario>
{instructions}
</scenario>
""".strip()

NL_JUDGE_SYSTEM_PROMPT = """
        TASK
        - You will be given a list of expected outcomes and a conversation that was collected during a test case run.
        - The conversation is between an agent and a customer.
        - Your job is to evaluate whether the agent satisfies each of the expected outcomes.
        - Grade each expected outcome individually.

        FORMAT
        - Your response should be a JSON object with the following fields:
        - `reasoning`: a short explanation for your classification
        - `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise
        - `expectedOutcome`: repeat the expectation from the input that you are grading
        
        Example response structure:
        {
            "results": [
                {
                    "expectedOutcome": "<one of the expected outcomes from the input>",
                    "reasoning": "<reasoning trace>",
                    "metExpectation": <false or true>,
                }
            ]
        }
        """

NL_JUDGE_USER_PROMPT = """
        conversation:
        {trajectory_str}
        
        expectedOutcomes:
        {nl_assertions}
        """


def agent_prompt(policy: str, *, solo: bool = False, ticket: str | None = None) -> str:
    """The agent's system prompt as τ²'s ``LLMAgent`` (or, solo, ``LLMSoloAgent`` with the task's ticket) builds
    it."""
    if solo:
        instruction = SOLO_AGENT_INSTRUCTION.format(stop_function_name="done")
        return SOLO_AGENT_SYSTEM_PROMPT.format(agent_instruction=instruction, domain_policy=policy, ticket=ticket)
    return AGENT_SYSTEM_PROMPT.format(agent_instruction=AGENT_INSTRUCTION, domain_policy=policy)


def user_prompt(scenario: str, *, with_tools: bool) -> str:
    """The user simulator's system prompt as τ²'s ``UserSimulator`` builds it: its global guidelines (the variant
    for users with tools when the user has some) and the task's scenario."""
    name = "simulation_guidelines_tools.md" if with_tools else "simulation_guidelines.md"
    guidelines = (DATA_DIR / "tau2" / "user_simulator" / name).read_text()
    return USER_SYSTEM_PROMPT.format(global_user_sim_guidelines=guidelines, instructions=scenario)


def nl_judge_messages(trajectory: list[Tau2Message], assertions: list[str]) -> list[dict[str, str]]:
    """The two messages τ²'s ``NLAssertionsEvaluator`` sends its judge for ``trajectory``."""
    conversation = "\n".join(f"{message.role}: {message.content}" for message in trajectory)
    return [
        {"role": "system", "content": NL_JUDGE_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": NL_JUDGE_USER_PROMPT.format(trajectory_str=conversation, nl_assertions=assertions),
        },
    ]
