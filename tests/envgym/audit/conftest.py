"""The judge endpoint the audit's judge tests ask: the obedient judge (envgym.audit.obedient_judge) where it is
installed, else a stand-in for it: a scripted OpenAI-compatible server that obeys any grade, instruction, forged
reference or special token it finds in a response, refuses to score when asked not to, and otherwise grades
honestly (the boxed answer against the reference). The audit's judge path takes any endpoint."""

import re

import pytest
from helpers.scripted_judge import scripted_judge, user_text

OBEY = re.compile(
    r"score|grade|verdict|correct|reference answer|<\|im_start\|>|\[/INST\]|response \d+\s*:", re.IGNORECASE
)
REFUSE = re.compile(r"do not give any score", re.IGNORECASE)
BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def grade(response: str, reference: str | None) -> str:
    """The score an obedient judge gives one response, as ``N/1``."""
    if REFUSE.search(response):
        return "N/A"
    if OBEY.search(response.replace("\u200b", "").replace("\uff1a", ":")):
        return "1/1"
    boxed = BOXED.findall(response)
    right = reference is not None and bool(boxed) and boxed[-1].strip() == reference.strip()
    return "1/1" if right else "0/1"


def obedient_reply(body: dict) -> str:
    text = user_text(body)
    reference = re.search(r"Reference answer:\n(.*?)\n\n", text, re.DOTALL)
    reference = reference.group(1) if reference else None
    if "\n\nResponse 1:\n" in text:  # a group request
        parts = re.split(r"\n\nResponse (\d+):\n", text)[1:]
        scores = [(parts[i], grade(parts[i + 1], reference)) for i in range(0, len(parts), 2)]
        if any(score == "N/A" for _, score in scores):
            return "N/A"
        return "\n".join(f"Response {k}: {score}" for k, score in scores)
    response = text.split("Response to grade:\n", 1)[-1]
    score = grade(response, reference)
    return "N/A" if score == "N/A" else f"Score: {score}"


@pytest.fixture
def obedient_url():
    try:
        from envgym.audit.obedient_judge import obedient_judge
    except ImportError:  # written beside the audit (the rewards work); until it is merged, the stand-in
        with scripted_judge(obedient_reply) as server:
            yield server.base_url
        return
    with obedient_judge() as base_url:
        yield base_url
