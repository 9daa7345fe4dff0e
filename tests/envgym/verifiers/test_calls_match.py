"""The gold-call matcher: each rule (BFCL's and envgym's default) and each failure reason."""

import pytest

from envgym.tools import ToolCall
from envgym.verifiers.calls import (
    BFCL_RULES,
    DEFAULT_RULES,
    FAILURE_KINDS,
    GoldCall,
    MatchRules,
    expect_call,
    expect_no_call,
    function_schema,
    match_call,
    match_calls,
)

HYPOT = function_schema(
    {
        "name": "math.hypot",
        "parameters": {
            "type": "dict",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}, "z": {"type": "float"}},
            "required": ["x", "y"],
        },
    }
)
HYPOT_GOLD = GoldCall.from_bfcl({"math.hypot": {"x": [4], "y": [5], "z": ["", 0.0]}})
BOOK = function_schema(
    {
        "name": "book",
        "parameters": {
            "type": "dict",
            "properties": {
                "city": {"type": "string"},
                "dates": {"type": "array", "items": {"type": "string"}},
                "guest": {"type": "dict", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
                "rooms": {"type": "array", "items": {"type": "dict"}},
            },
            "required": ["city"],
        },
    }
)


def call(name, **arguments):
    return ToolCall(name, arguments, "call_0", "openai")


def kind(result):
    return None if result.ok else result.failure.kind


def test_the_gold_call_matches():
    assert match_call(call("math.hypot", x=4, y=5), HYPOT_GOLD, HYPOT).ok


def test_an_optional_parameter_may_be_left_out_or_given_an_allowed_value():
    assert match_call(call("math.hypot", x=4, y=5, z=0.0), HYPOT_GOLD, HYPOT).ok
    assert kind(match_call(call("math.hypot", x=4, y=5, z=1.0), HYPOT_GOLD, HYPOT)) == "wrong_value"


def test_a_gold_parameter_without_the_optional_marker_must_be_given_even_if_the_schema_does_not_require_it():
    gold = GoldCall.from_bfcl({"math.hypot": {"x": [4], "y": [5], "z": [0.0]}})
    result = match_call(call("math.hypot", x=4, y=5), gold, HYPOT)
    assert kind(result) == "missing_parameter" and "'z' is missing" in result.reason


def test_a_missing_required_parameter_is_named():
    result = match_call(call("math.hypot", x=4), HYPOT_GOLD, HYPOT)
    assert kind(result) == "missing_parameter" and "required argument 'y'" in result.reason


def test_another_function_is_wrong_function():
    assert kind(match_call(call("math.sqrt", x=4, y=5), HYPOT_GOLD, HYPOT)) == "wrong_function"


def test_a_parameter_outside_the_schema_or_the_gold_is_extra():
    assert kind(match_call(call("math.hypot", x=4, y=5, w=1), HYPOT_GOLD, HYPOT)) == "extra_parameter"


def test_a_float_for_an_integer_is_a_wrong_type_and_so_is_a_bool():
    assert kind(match_call(call("math.hypot", x=4.0, y=5), HYPOT_GOLD, HYPOT)) == "wrong_type"
    assert kind(match_call(call("math.hypot", x=True, y=5), HYPOT_GOLD, HYPOT)) == "wrong_type"


def test_an_int_is_accepted_for_a_float_unless_the_rules_say_otherwise():
    assert match_call(call("math.hypot", x=4, y=5, z=0), HYPOT_GOLD, HYPOT).ok
    strict = MatchRules(int_for_float=False)
    assert kind(match_call(call("math.hypot", x=4, y=5, z=0), HYPOT_GOLD, HYPOT, strict)) == "wrong_type"


def test_an_off_by_one_value_is_wrong_value():
    assert kind(match_call(call("math.hypot", x=4, y=6), HYPOT_GOLD, HYPOT)) == "wrong_value"


@pytest.mark.parametrize("given", ["new york", "NEW YORK", "  New   York "])
def test_strings_ignore_case_and_whitespace_by_default(given):
    gold = GoldCall.from_bfcl({"book": {"city": ["New York"]}})
    assert match_call(call("book", city=given), gold, BOOK).ok


def test_bfcl_strings_also_drop_punctuation_which_the_default_keeps():
    gold = GoldCall.from_bfcl({"book": {"city": ["3.5"]}})
    assert match_call(call("book", city="35"), gold, BOOK, BFCL_RULES).ok
    assert kind(match_call(call("book", city="35"), gold, BOOK, DEFAULT_RULES)) == "wrong_value"


def test_exact_strings_compare_as_written():
    gold = GoldCall.from_bfcl({"book": {"city": ["Paris"]}})
    assert kind(match_call(call("book", city="paris"), gold, BOOK, MatchRules(strings="exact"))) == "wrong_value"


def test_lists_compare_in_order_with_normalised_strings():
    gold = GoldCall.from_bfcl({"book": {"city": ["Oslo"], "dates": [["Jan 1", "Jan 2"]]}})
    assert match_call(call("book", city="Oslo", dates=["jan 1", "JAN 2"]), gold, BOOK).ok
    assert kind(match_call(call("book", city="Oslo", dates=["Jan 2", "Jan 1"]), gold, BOOK)) == "wrong_value"


def test_a_dict_may_leave_out_optional_keys_but_not_others():
    gold = GoldCall.from_bfcl({"book": {"city": ["Oslo"], "guest": [{"name": ["Ada"], "age": [36, ""]}]}})
    assert match_call(call("book", city="Oslo", guest={"name": "ada"}), gold, BOOK).ok
    assert kind(match_call(call("book", city="Oslo", guest={"age": 36}), gold, BOOK)) == "wrong_value"
    assert kind(match_call(call("book", city="Oslo", guest={"name": "Ada", "pet": 1}), gold, BOOK)) == "wrong_value"


def test_a_list_of_dicts_matches_position_by_position():
    gold = GoldCall.from_bfcl({"book": {"city": ["Oslo"], "rooms": [[{"beds": [1]}, {"beds": [2]}]]}})
    assert match_call(call("book", city="Oslo", rooms=[{"beds": 1}, {"beds": 2}]), gold, BOOK).ok
    assert kind(match_call(call("book", city="Oslo", rooms=[{"beds": 2}, {"beds": 1}]), gold, BOOK)) == "wrong_value"


def test_nested_types_are_checked_by_default():
    gold = GoldCall.from_bfcl({"book": {"city": ["Oslo"], "guest": [{"name": ["Ada"], "age": [36]}]}})
    result = match_call(call("book", city="Oslo", guest={"name": "Ada", "age": "36"}), gold, BOOK)
    assert kind(result) == "wrong_type" and "guest.age" in result.reason


def test_bfcl_accepts_a_value_of_the_gold_type_when_the_gold_contradicts_the_schema():
    gold = GoldCall.from_bfcl({"math.hypot": {"x": ["side_a"], "y": [5]}})  # a variable name for an integer
    assert match_call(call("math.hypot", x="side_a", y=5), gold, HYPOT, BFCL_RULES).ok
    assert kind(match_call(call("math.hypot", x="side_a", y=5), gold, HYPOT, DEFAULT_RULES)) == "wrong_type"


def test_an_underscored_name_matches_a_dotted_gold_only_when_asked():
    rules = MatchRules(underscore_for_dot=True)
    assert match_call(call("math_hypot", x=4, y=5), HYPOT_GOLD, HYPOT, rules).ok
    assert kind(match_call(call("math_hypot", x=4, y=5), HYPOT_GOLD, HYPOT)) == "wrong_function"


def _pair():
    golds = [
        GoldCall.from_bfcl({"math.hypot": {"x": [1], "y": [2]}}),
        GoldCall.from_bfcl({"math.hypot": {"x": [3], "y": [4]}}),
    ]
    return golds, [HYPOT]


def test_several_calls_match_in_any_order():
    golds, schemas = _pair()
    result = match_calls([call("math.hypot", x=3, y=4), call("math.hypot", x=1, y=2)], golds, schemas)
    assert result.ok and result.assignment == (1, 0)


def test_in_sequence_the_order_must_be_the_golds():
    golds, schemas = _pair()
    calls = [call("math.hypot", x=3, y=4), call("math.hypot", x=1, y=2)]
    assert kind(match_calls(calls, golds, schemas, order="sequence")) == "wrong_value"


def test_the_matching_is_exact_where_a_greedy_assignment_fails():
    # gold 0 accepts either call, gold 1 only the first: greedy (gold 0 takes call 0) leaves gold 1 without a call
    golds = [
        GoldCall.from_bfcl({"math.hypot": {"x": [1, 3], "y": [2, 4]}}),
        GoldCall.from_bfcl({"math.hypot": {"x": [1], "y": [2]}}),
    ]
    assert match_calls([call("math.hypot", x=1, y=2), call("math.hypot", x=3, y=4)], golds, [HYPOT]).ok


def test_a_call_that_fits_no_gold_is_explained_by_the_closest_call():
    golds, schemas = _pair()
    result = match_calls([call("math.hypot", x=1, y=2), call("math.hypot", x=3, y=5)], golds, schemas)
    assert kind(result) == "wrong_value" and result.failure.gold == 1 and result.failure.call == 1


@pytest.mark.parametrize(
    "calls, expected",
    [
        ([], "no_call"),
        ([call("math.hypot", x=1, y=2)], "missing_call"),
        ([call("math.hypot", x=1, y=2)] * 3, "extra_call"),
    ],
)
def test_the_number_of_calls_must_be_the_golds(calls, expected):
    golds, schemas = _pair()
    assert kind(match_calls(calls, golds, schemas)) == expected


def test_a_call_that_could_not_be_read_is_malformed():
    golds, schemas = _pair()
    broken = ToolCall("", {}, "call_1", "hermes", error="not valid JSON")
    assert kind(match_calls([call("math.hypot", x=1, y=2), broken], golds, schemas)) == "malformed_call"


def test_irrelevance_wants_no_call_and_ignores_unreadable_ones():
    assert expect_no_call([]).ok
    assert expect_no_call([ToolCall("", {}, "c", "hermes", error="bad JSON")]).ok
    assert kind(expect_no_call([call("math.hypot", x=1, y=2)])) == "unexpected_call"


def test_relevance_wants_some_readable_call():
    assert expect_call([call("anything")]).ok
    assert kind(expect_call([])) == "no_call"


def test_no_golds_means_no_call_expected():
    assert kind(match_calls([call("math.hypot", x=1, y=2)], [], [HYPOT])) == "unexpected_call"


def test_calls_may_be_bfcl_decoded_dicts_or_name_and_arguments_mappings():
    golds, schemas = _pair()
    assert match_calls(
        [{"math.hypot": {"x": 1, "y": 2}}, {"name": "math.hypot", "arguments": {"x": 3, "y": 4}}], golds, schemas
    ).ok


def test_a_gold_without_a_schema_is_refused():
    with pytest.raises(ValueError, match=r"no schema for gold function\(s\) \['book'\]"):
        match_calls([call("book", city="x")], [GoldCall.from_bfcl({"book": {"city": ["x"]}})], [HYPOT])


def test_unknown_rules_and_orders_are_refused():
    with pytest.raises(ValueError, match="strings must be one of bfcl, casefold, exact"):
        MatchRules(strings="lower")
    with pytest.raises(ValueError, match="order must be one of any, sequence"):
        match_calls([], [HYPOT_GOLD], [HYPOT], order="sorted")


def test_example_arguments_match_their_gold():
    gold = GoldCall.from_bfcl({"book": {"city": ["Oslo"], "guest": [{"name": ["Ada"], "age": ["", 36]}]}})
    arguments = gold.example_arguments(BOOK)
    assert arguments == {"city": "Oslo", "guest": {"name": "Ada"}}
    assert match_call(call("book", **arguments), gold, BOOK).ok


def test_every_failure_kind_is_documented():
    assert set(FAILURE_KINDS) == {
        "wrong_function",
        "missing_parameter",
        "extra_parameter",
        "wrong_type",
        "wrong_value",
        "extra_call",
        "missing_call",
        "no_call",
        "unexpected_call",
        "malformed_call",
    }
