"""Issue 19's reasoning-gym cases, each played through the env: every one earned reward (or ran code) before."""

import collections

import pytest

import envgym

pytest.importorskip("reasoning_gym")


def play(task, answer, *, index=0, **kwargs):
    env = envgym.make(f"rg/{task}-v0", size=10, allow_unsafe=True, **kwargs)  # some are fenced for cue leaks
    env.reset(seed=0, options={"task_index": index})
    _, reward, _, _, info = env.step(f"<answer>{answer}</answer>")
    return reward, info


def test_puzzle24_refuses_an_expression_worth_24_that_does_not_use_the_given_numbers():
    env = envgym.make("rg/puzzle24-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    assert sorted(env.unwrapped.tasks.entry(0)["metadata"]["numbers"]) != [1, 1, 4, 6]
    _, reward, _, _, _ = env.step("<answer>6*4*1*1</answer>")
    assert reward == 0.0


def test_nan_is_a_policy_mistake_on_complex_arithmetic_not_full_marks():
    reward, info = play("complex_arithmetic", "nan", partial_credit=True)
    assert reward == 0.0 and info["action_valid"] is False and "NaN" in info["action_error"]


def test_a_prefix_of_the_probability_earns_nothing_on_coin_flip():
    env = envgym.make("rg/coin_flip-v0", size=10)
    env.reset(seed=0, options={"task_index": 1})
    gold = env.unwrapped.task.answer
    assert len(gold) > 3
    for prefix in (gold[:1], gold[:3]):
        env.reset(seed=0, options={"task_index": 1})
        assert env.step(f"<answer>{prefix}</answer>")[1] == 0.0


def safe_ids():
    return {spec.id for spec in envgym.list_envs() if not spec.unsafe}


def test_propositional_logic_is_registered_unsafe_since_restating_the_premises_earns_full_marks():
    assert "rg/propositional_logic-v0" not in safe_ids()
    env = envgym.make("rg/propositional_logic-v0", size=10, allow_unsafe=True)
    env.reset(seed=0, options={"task_index": 0})
    premises = env.unwrapped.tasks.entry(0)["metadata"]["premises"]
    assert env.step(f"<answer>{' ∧ '.join(f'({premise})' for premise in premises)}</answer>")[1] == 1.0


@pytest.mark.parametrize("task", ["syllogism", "circuit_logic"])
def test_a_constant_answer_is_right_no_more_often_than_guessing_on_a_choice_task(task):
    # reasoning-gym's own order: 71% of syllogism's answers are Yes, 62% of circuit_logic's are 0.
    tasks = envgym.make(f"rg/{task}-v0", size=100, allow_unsafe=True).unwrapped.tasks
    counts = collections.Counter(str(tasks.get(index).answer) for index in range(100))
    assert sorted(counts.values()) == [50, 50]
    assert [tasks.get(index).answer for index in range(4)] == [*tasks.options, *tasks.options]


def test_the_first_option_of_the_format_template_earns_no_partial_credit_on_knights_knaves():
    env = envgym.make("rg/knights_knaves-v0", size=10, partial_credit=True)
    env.reset(seed=0, options={"task_index": 0})
    names = env.unwrapped.tasks.entry(0)["metadata"]["names"]
    knight = env.unwrapped.tasks.entry(0)["metadata"]["knight_knave_terms"]["knight"]
    _, reward, _, _, _ = env.step("<answer>" + ", and ".join(f"{name} is a {knight}" for name in names) + "</answer>")
    assert env.unwrapped.task.answer.count(knight) < len(names)  # the template is not the answer here
    assert reward == 0.0


def test_a_statement_copied_from_the_puzzle_is_not_an_answer_on_knights_knaves():
    reward, _ = play("knights_knaves", "if Victoria is a knight then Jacob is a knave")
    assert reward == 0.0


def test_any_text_earns_nothing_on_game_of_life_halting():
    for answer in ("0", "maybe", "True False"):
        assert play("game_of_life_halting", answer)[0] == 0.0


@pytest.mark.parametrize(
    "task", ["simple_integration", "quantum_lock", "spell_backward", "gsm_symbolic", "polynomial_multiplication"]
)
def test_the_gold_among_other_candidates_earns_nothing(task):
    env = envgym.make(f"rg/{task}-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    gold = env.unwrapped.task.answer
    for hedge in (f"{gold} or 0", f"0 or {gold}", f"{gold} {gold}"):
        env.reset(seed=0, options={"task_index": 0})
        assert env.step(f"<answer>{hedge}</answer>")[1] == 0.0, hedge


def test_restating_the_integral_earns_nothing_where_the_gold_is_left_unevaluated():
    env = envgym.make("rg/intermediate_integration-v0", size=10)
    env.reset(seed=0, options={"task_index": 5})
    entry = env.unwrapped.tasks.entry(5)
    assert entry["answer"].startswith("3*Integral(")  # reasoning-gym's gold: sympy gave up
    answer = f"Integral({entry['metadata']['integrand']}, x) + C"
    assert env.step(f"<answer>{answer}</answer>")[1] == 0.0
    env.reset(seed=0, options={"task_index": 5})
    assert env.step(env.reference_action())[1] == 1.0


@pytest.mark.parametrize("task", ["rush_hour", "rubiks_cube"])
def test_a_plan_among_other_words_earns_nothing(task):
    env = envgym.make(f"rg/{task}-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    plan = env.reference_action().removeprefix("<answer>").removesuffix("</answer>")
    for hedge in (f"0, {plan}", f"either 0 or {plan}", f"{plan} or more", f"{plan} {plan}"):
        env.reset(seed=0, options={"task_index": 0})
        assert env.step(f"<answer>{hedge}</answer>")[1] == 0.0, hedge


EXECUTING_SCORERS = [
    "n_queens",
    "binary_matrix",
    "spiral_matrix",
    "string_insertion",
    "countdown",
    "puzzle24",
    "simple_integration",
    "intermediate_integration",
    "polynomial_multiplication",
]


@pytest.mark.parametrize("task", EXECUTING_SCORERS)
def test_an_answer_is_never_executed(task, tmp_path):
    marker = tmp_path / "executed"
    reward, info = play(task, f"__import__('pathlib').Path({str(marker)!r}).touch()")
    assert not marker.exists()
    assert reward == 0.0 and "error" not in info


def test_an_answer_cannot_plant_a_solution_in_the_cached_task_through_eval():
    env = envgym.make("rg/n_queens-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    env.step("<answer>entry['metadata']['valid_answers'].append('PLANTED')</answer>")
    env.reset(seed=0, options={"task_index": 0})
    assert env.step("<answer>PLANTED</answer>")[1] == 0.0
    assert "PLANTED" not in env.unwrapped.tasks.entry(0)["metadata"]["valid_answers"]


def test_an_answer_cannot_change_the_target_of_later_episodes_through_the_scorers_frame():
    env = envgym.make("rg/countdown-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    numbers = env.unwrapped.tasks.entry(0)["metadata"]["numbers"]
    for depth in range(1, 8):  # the scorer's frame is a few frames above parse_expr's eval
        env.reset(seed=0, options={"task_index": 0})
        env.step(
            f"<answer>__import__('sys')._getframe({depth}).f_locals['entry']['metadata']"
            f".update(target=__import__('builtins').int({sum(numbers)}))</answer>"
        )
    env.reset(seed=0, options={"task_index": 0})
    assert env.step(f"<answer>{' + '.join(map(str, numbers))}</answer>")[1] == 0.0


def test_a_scorer_that_mutates_its_entry_changes_nothing_for_later_episodes():
    env = envgym.make("rg/basic_arithmetic-v0", size=10)
    env.reset(seed=0, options={"task_index": 0})
    gold = env.unwrapped.task.answer

    def mutating(answer, entry):
        entry["answer"] = "PLANTED"
        return 0.0

    env.unwrapped.dataset.score_answer = mutating
    env.step("<answer>1</answer>")
    assert env.unwrapped.tasks.entry(0)["answer"] == gold
