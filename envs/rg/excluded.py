"""The one list of reasoning-gym tasks envgym registers only ``unsafe=True``, and of tasks whose partial credit
is beaten.

A task is excluded (``envgym.make`` builds it only with ``allow_unsafe=True``; ``envgym train`` refuses it) when
no small wrapper makes its reward hold under generic adversarial answers (see docs/reasoning-gym.md and
tests/envs/rg/test_adversarial.py plays tests/helpers/rg_attacks.py over every registered task), or when the
answer can be told from the task's surface without solving it (a cue the generator leaks, found by the audit's
blind learner: a wrapper cannot remove a cue from reasoning-gym's own generator).
"""

EXCLUDED: dict[str, str] = {
    "composite": "a mixer of other tasks that needs a configuration, not a task",
    "propositional_logic": (
        "any statement the premises entail earns full marks, so restating a premise or the conjunction of the "
        "premises is a correct answer; some generated premise sets are inconsistent, so anything follows"
    ),
    # Cue leaks: envgym audit's blind learner (docs/audit.md) predicts the answer from the statement's surface,
    # cross-validated on the first 300 tasks (balanced answers, chance 50%); a policy learns the cue, not the task.
    "circuit_logic": "the output is predictable from the circuit's n-grams (gate types, input values): 243/300, "
    "chance 50%",
    "course_schedule": "feasibility is predictable from which prerequisite pairs are listed: 235/300, chance 50%",
    "game_of_life_halting": "whether the board dies is predictable from one bigram of the board ('1 1', two live "
    "cells side by side): 248/259 distinct boards, chance 54%",
    "syllogism": "validity is predictable from the quantifier words ('. all'): 197/300, chance 50%",
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
