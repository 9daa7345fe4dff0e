"""sql/TextToSQL-v0: execution-match reward, refused answers and the honest answers."""

import time

import envgym
from envgym.utils import check_env


def play(action, index=0, **kwargs):
    env = envgym.make("sql/TextToSQL-v0", **kwargs)
    env.reset(options={"task_index": index})
    return env.step(action(env) if callable(action) else action)


def task_of_kind(kind, condition=lambda answer: True):
    """The first task index whose question is of ``kind`` and whose gold answer meets ``condition``."""
    env = envgym.make("sql/TextToSQL-v0")
    return next(
        i for i in range(400) if env.reset(options={"task_index": i})[1]["kind"] == kind and condition(env.task.answer)
    )


def test_the_gold_query_earns_1_on_every_kind_of_question():
    env = envgym.make("sql/TextToSQL-v0")
    kinds = set()
    for index in range(60):
        _, info = env.reset(options={"task_index": index})
        kinds.add(info["kind"])
        assert env.step(env.reference_action())[1] == 1.0
    assert len(kinds) == 7


def test_a_sql_tag_is_read_like_a_code_block():
    assert play(lambda e: f"<sql>{e.task.answer['query']};</sql>")[1] == 1.0


def test_an_equivalent_query_earns_1():
    index = task_of_kind("count")
    assert (
        play(
            lambda e: (
                "```sql\nSELECT COUNT(id) FROM customers WHERE city = "
                + e.task.answer["query"].split("city = ")[1]
                + "\n```"
            ),
            index,
        )[1]
        == 1.0
    )


def test_a_constant_select_of_the_gold_value_is_refused():
    index = task_of_kind("count")
    _, reward, _, _, info = play(lambda e: f"```sql\nSELECT {e.task.answer['rows'][0][0]}\n```", index)
    assert reward == 0.0 and info["action_valid"] is False and "reads no table" in info["action_error"]


def test_rows_in_another_order_earn_nothing_when_the_question_asks_for_an_order():
    index = task_of_kind("order_by", lambda answer: len(answer["rows"]) > 1)
    assert (
        play(lambda e: "```sql\n" + e.task.answer["query"].replace("price DESC", "price ASC") + "\n```", index)[1]
        == 0.0
    )


def test_dropping_duplicate_rows_earns_nothing():
    index = task_of_kind(
        "duplicates_and_nulls", lambda answer: len(set(map(tuple, answer["rows"]))) < len(answer["rows"])
    )
    assert (
        play(
            lambda e: "```sql\n" + e.task.answer["query"].replace("SELECT c.city", "SELECT DISTINCT c.city") + "\n```",
            index,
        )[1]
        == 0.0
    )


def test_two_different_queries_are_refused():
    _, reward, _, _, info = play(lambda e: f"```sql\nSELECT 1 FROM orders\n```\n```sql\n{e.task.answer['query']}\n```")
    assert reward == 0.0 and info["action_valid"] is False


def test_a_write_is_a_policy_mistake_not_an_error():
    _, reward, terminated, _, info = play("```sql\nDELETE FROM orders\n```")
    assert reward == 0.0 and terminated and info["action_valid"] is False and "error" not in info


def test_a_query_that_never_ends_is_stopped_within_the_time_limit():
    never = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c, orders WHERE n < 0"
    _, reward, _, _, info = play(f"```sql\n{never}\n```", timeout=0.2)
    assert reward == 0.0 and "stopped" in info["action_error"]


def test_the_wrong_action_is_a_valid_query_that_earns_nothing():
    _, reward, _, _, info = play(lambda e: e.wrong_action())
    assert reward == 0.0 and info["action_valid"]


def test_passes_check_env():
    check_env(envgym.make("sql/TextToSQL-v0"))


def test_a_query_past_the_wall_clock_limit_is_the_policys_failure_and_scores_0_in_time():
    env = envgym.make("sql/TextToSQL-v0")
    env.reset(seed=0, options={"task_index": 0})
    quadratic = "SELECT instr(printf('%.*c', 960000, 'a'), printf('%.*c', 480000, 'a') || 'b') FROM customers"
    started = time.perf_counter()
    _, reward, terminated, _, info = env.step(f"```sql\n{quadratic}\n```")
    assert time.perf_counter() - started < 2.5  # the audit's bound; in-process this query ran about 5 s
    assert (reward, terminated, info["action_valid"]) == (0.0, True, False) and "error" not in info
    assert info["action_error"] == "stopped: the query ran past 1 s"
    env.close()
