"""The one list of reasoning-gym tasks envgym does not register, and of tasks whose partial credit is beaten.

A task is excluded when no small wrapper makes its reward hold under generic adversarial answers (see
docs/reasoning-gym.md and tests/envs/rg/test_adversarial.py, which plays them over every registered task).
"""

EXCLUDED: dict[str, str] = {
    "composite": "a mixer of other tasks that needs a configuration, not a task",
    "propositional_logic": (
        "any statement the premises entail earns full marks, so restating a premise or the conjunction of the "
        "premises is a correct answer; some generated premise sets are inconsistent, so anything follows"
    ),
}

# With ``partial_credit=True`` these tasks still pay only full marks: their scorers' partial credit is
# earned by an answer that solves nothing. Reasoning-gym's default scorer (used by every task without its
# own) pays len(gold)/len(answer) to any text containing the gold; the others are listed with the trick.
PARTIAL_CREDIT_BEATEN: dict[str, str] = {
    "knights_knaves": "the first option of the format template (everyone a knight) earns 0.3 + 0.7 x matches",
}
