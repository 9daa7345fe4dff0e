"""The one list of reasoning-gym tasks envgym registers only ``unsafe=True``, and of tasks whose partial credit
is beaten.

A task is excluded (``envgym.make`` builds it only with ``allow_unsafe=True``; ``envgym train`` refuses it) when no small wrapper makes its reward hold under generic adversarial answers (see
docs/reasoning-gym.md and tests/envs/rg/test_adversarial.py plays tests/helpers/rg_attacks.py over every registered task).
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
_FLOOR = "any well-formed answer earns the scorer's floor credit, more than an honest attempt it cannot parse"
PARTIAL_CREDIT_BEATEN: dict[str, str] = {
    "knights_knaves": "the first option of the format template (everyone a knight) earns 0.3 + 0.7 x matches",
    "chain_sum": "compute_decimal_reward pays len(gold)/len(text) to any text containing the gold",
    "products": "compute_decimal_reward pays len(gold)/len(text) to any text containing the gold",
    "polynomial_equations": "a truncated gold (a prefix of its digits) earns 0.99, more than an honest wrong root",
    "quantum_lock": "any button sequence reaching the target, copied from another task, earns 0.5",
    "time_intervals": "any small constant (0, 1) earns 0.95: the credit decays slowly with the distance",
    "boxnet": "an empty plan ([]) earns 0.05: " + _FLOOR,
    "graph_color": "an empty colouring ({}) earns 0.01: " + _FLOOR,
    "knight_swap": "an empty move list ([]) earns 0.05: " + _FLOOR,
    "rubiks_cube": "any text earns 0.01: " + _FLOOR,
    "rush_hour": "any text earns 0.01: " + _FLOOR,
}
