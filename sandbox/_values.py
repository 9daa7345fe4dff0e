"""Plain values across a process boundary, with their exact types (standard library only).

The solution's process (``_solution_runner.py``) and the tests' process (``_test_evaluator.py``) exchange
call arguments and results through this encoding; both run it inside the sandbox as the file ``_values.py``
next to their program, and the host uses it to encode arguments it knows in advance.

The encoding is JSON. ``None``, ``bool``, ``int``, ``float`` (NaN and infinities as Python's ``json`` writes
them), ``str`` and ``list`` are themselves; every other type is an object with one key:
``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``, ``{"set": [...]}``, ``{"frozenset": [...]}``,
``{"bytes": "<hex>"}``, ``{"complex": [real, imag]}``. ``decode`` builds fresh objects of exactly those
builtin types and refuses anything else, so whatever a process sends, the receiver gets plain data: never an
object of the sender's classes, never code.

Instances of a subclass of a builtin type (an ``IntEnum``, a ``Counter``, a namedtuple, ``numpy.float64``)
are sent as their builtin value, read through the builtin type's own methods (the subclass's overrides are
not called); numpy scalars as their ``.item()``. Everything else (functions, generators, custom objects) is
:class:`Unrepresentable`.
"""

import json

MAX_DEPTH = 64
MAX_INT_BITS = 14_000  # about 4,200 digits: CPython refuses to print longer ints (sys.int_info)
_TAGS = ("tuple", "dict", "set", "frozenset", "bytes", "complex")
_BASES = (int, float, str, bytes, list, tuple, dict, set, frozenset, complex)  # subclassable builtins


class Unrepresentable(ValueError):
    """A value with no plain-data form; ``value`` is the offending object (inside whatever was encoded)."""

    def __init__(self, message, value=None):
        super().__init__(message)
        self.value = value


def encode(value, depth=0):
    """The JSON-ready form of ``value`` (see the module docstring); raises :class:`Unrepresentable`."""
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is float:
        return value
    if kind is int:
        if value.bit_length() > MAX_INT_BITS:
            raise Unrepresentable(f"an int of {value.bit_length()} bits (the limit is {MAX_INT_BITS})", value)
        return value
    if depth >= MAX_DEPTH:
        raise Unrepresentable(f"data nested deeper than {MAX_DEPTH} levels (or a container that holds itself)", value)
    if kind is list:
        return [encode(item, depth + 1) for item in value]
    if kind is tuple:
        return {"tuple": [encode(item, depth + 1) for item in value]}
    if kind is dict:
        return {"dict": [[encode(key, depth + 1), encode(item, depth + 1)] for key, item in value.items()]}
    if kind is set or kind is frozenset:
        # sorted by their text, so equal sets encode equally whatever the hash seed of each process
        items = sorted((encode(item, depth + 1) for item in value), key=json.dumps)
        return {kind.__name__: items}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [value.real, value.imag]}
    for base in _BASES:
        if issubclass(kind, base):
            return encode(_as_builtin(value, base), depth)
    if kind.__module__ == "numpy" and kind.__name__ != "ndarray" and hasattr(kind, "item"):  # numpy scalars
        return encode(value.item(), depth + 1)
    raise Unrepresentable(f"a {kind.__module__}.{kind.__qualname__} object", value)


def _as_builtin(value, base):
    """``value`` as an exact ``base`` object, read through ``base``'s own methods."""
    if base is int:
        return int.__index__(value)
    if base is float:
        return float.__float__(value)
    if base is str:
        return str.__str__(value)
    if base is bytes:
        return bytes.__bytes__(value)
    if base is complex:
        return complex.__complex__(value)
    if base is dict:
        return dict(dict.items(value))
    return base(base.__iter__(value))  # list, tuple, set, frozenset


def decode(data, depth=0):
    """Fresh builtin objects from an encoded value; raises ValueError for anything ``encode`` cannot make."""
    kind = type(data)
    if data is None or kind is bool or kind is int or kind is float or kind is str:
        return data
    if depth > MAX_DEPTH:
        raise ValueError(f"encoded value nested deeper than {MAX_DEPTH} levels")
    if kind is list:
        return [decode(item, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise ValueError(f"not an encoded value: a {kind.__name__}")
    ((tag, inner),) = data.items()
    if tag == "bytes" and type(inner) is str:
        return bytes.fromhex(inner)
    if tag not in _TAGS or type(inner) is not list:
        raise ValueError(f"not an encoded value: unknown tag {tag!r}")
    if tag == "complex":
        if len(inner) != 2 or not all(type(part) in (int, float) for part in inner):
            raise ValueError("an encoded complex is [real, imag]")
        return complex(*inner)
    if tag == "dict":
        if not all(type(pair) is list and len(pair) == 2 for pair in inner):
            raise ValueError("an encoded dict is a list of [key, value] pairs")
        try:
            return {decode(key, depth + 1): decode(item, depth + 1) for key, item in inner}
        except TypeError as error:  # an unhashable key
            raise ValueError(f"bad dict key: {error}") from None
    items = [decode(item, depth + 1) for item in inner]
    try:
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    except TypeError as error:
        raise ValueError(f"bad set item: {error}") from None


def encode_call(function, args, kwargs):
    """One call as sent to the solution's process: ``[function name, encoded args, encoded kwargs]``."""
    return [function, encode(list(args)), encode(dict(kwargs))]


def call_key(call):
    """The text that identifies an encoded call (equal calls, equal keys: the tests match answers by it)."""
    return json.dumps(call)
