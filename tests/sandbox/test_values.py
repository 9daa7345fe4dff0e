"""envgym.sandbox._values: plain values across the process boundary, with their exact types."""

import collections
import enum
import json
import math

import pytest

from envgym.sandbox._values import Unrepresentable, call_key, decode, encode, encode_call


def _through_json(value):
    return decode(json.loads(json.dumps(encode(value))))


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**200,
        0.5,
        -0.0,
        1e300,
        "text",
        "\ud800",
        b"\x00\xff",
        1 + 2j,
        [1, "a", None],
        (1, (2.0, [3])),
        {"a": 1, 2: [3], (4, 5): None},
        {1, "x", (2, 3)},
        frozenset({1.5}),
        [(), [], {}, set()],
    ],
)
def test_values_come_back_equal_and_of_exactly_the_same_types(value):
    copy = _through_json(value)

    def shape(item):
        if isinstance(item, (list, tuple, set, frozenset)):
            return type(item), sorted(map(repr, map(shape, item)))
        if isinstance(item, dict):
            return type(item), sorted(repr((shape(key), shape(entry))) for key, entry in item.items())
        return type(item), repr(item)

    assert copy == value and shape(copy) == shape(value)


def test_bool_int_and_float_stay_distinct():
    assert [type(item) for item in _through_json([True, 1, 1.0])] == [bool, int, float]


def test_nan_and_infinities_survive():
    nan, inf, negative = _through_json([math.nan, math.inf, -math.inf])
    assert math.isnan(nan) and inf == math.inf and negative == -math.inf


def test_subclasses_of_builtins_are_sent_as_their_builtin_value_ignoring_their_overrides():
    class Liar(int):
        def __eq__(self, other):
            return True

        def __index__(self):
            return 999

        __hash__ = int.__hash__

    class Colour(enum.IntEnum):
        RED = 3

    Point = collections.namedtuple("Point", "x y")
    copy = _through_json([Liar(5), Colour.RED, Point(1, 2), collections.Counter("aab"), collections.OrderedDict(a=1)])
    assert copy == [5, 3, (1, 2), {"a": 2, "b": 1}, {"a": 1}]
    assert [type(item) for item in copy] == [int, int, tuple, dict, dict]


@pytest.mark.parametrize(
    "value, what",
    [
        (lambda: 0, "function"),
        ((x for x in ()), "generator"),
        (object(), "object"),
        (NotImplemented, "NotImplemented"),
        (10**5000, "bits"),
    ],
    ids=["function", "generator", "object", "NotImplemented", "huge int"],
)
def test_values_without_a_plain_form_are_refused_saying_what_they_are(value, what):
    with pytest.raises(Unrepresentable, match=what):
        encode(value)


def test_a_container_that_holds_itself_is_refused():
    loop = []
    loop.append(loop)
    with pytest.raises(Unrepresentable, match="nested deeper"):
        encode(loop)


def _nested(depth):
    data = []
    for _ in range(depth):
        data = [data]
    return data


@pytest.mark.parametrize(
    "data",
    [
        {"tuple": "not a list"},
        {"object": []},
        {"tuple": [], "set": []},
        {"dict": [[1]]},
        {"dict": [[[1], 2]]},
        {"set": [[1]]},
        {"complex": [True, 1]},
        {"bytes": "zz"},
        _nested(100),
    ],
)
def test_decode_refuses_anything_encode_cannot_make(data):
    with pytest.raises(ValueError):
        decode(data)


def test_equal_sets_give_equal_call_keys_whatever_their_order():
    first = encode_call("f", [{"b", "a", "c"}], {"k": frozenset({3, 1})})
    second = encode_call("f", [{"c", "a", "b"}], {"k": frozenset({1, 3})})
    assert call_key(first) == call_key(second)
