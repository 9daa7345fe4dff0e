"""The program that runs an untrusted solution in the sandbox and answers calls with plain values.

Standard library only: it runs inside the sandbox as the job's program, with ``_values.py`` next to it. Its
stdin is ``{"solution": source, "calls": [[function, args, kwargs], ...]}`` (arguments encoded by
``_values``); it reads all of it, then runs the solution as ``__main__`` and makes the calls in order, in
this one process (so state the solution keeps between calls behaves as in one program).

It answers on stdout, one JSON line each: first ``["loaded"]`` or ``["load_error", message]``, then per call
``["value", encoded]``, ``["raised", exception type name, message]`` or ``["unrepresentable", what]``.
Before the solution runs, stdout (fd 1) is pointed at /dev/null and the answers go to a copy of the original
descriptor, so the solution's prints never mix with them.

Nothing here is trusted: the solution can rewrite all of this process, answers included. Whatever it writes
is only ever decoded as plain data and checked by the tests in another process, so the most it can do is
choose the values it returns.
"""

import builtins
import json
import os
import sys

from _values import Unrepresentable, decode, encode

MAX_ANSWER_BYTES = 256 * 1024  # one answer; the sandbox also caps the whole stdout
MAX_MESSAGE = 300


def main():
    request = json.loads(sys.stdin.read())  # all of it, before the solution runs
    answers = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    namespace = {"__name__": "__main__", "__file__": globals().get("__file__", "main.py"), "__builtins__": builtins}
    try:
        exec(compile(request["solution"], "solution.py", "exec"), namespace)  # noqa: S102 - sandboxed
    except BaseException as error:  # noqa: BLE001 - a solution that does not load fails every call
        send(answers, ["load_error", describe(error)])
        return
    send(answers, ["loaded"])
    for function, args, kwargs in request["calls"]:
        send(answers, answer(namespace, function, args, kwargs))


def answer(namespace, function, args, kwargs):
    target = namespace.get(function)
    if not callable(target):
        return ["raised", "NameError", f"the solution defines no function {function!r}"]
    try:
        value = target(*decode(args), **decode(kwargs))  # fresh arguments for every call
    except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
        return ["raised", type(error).__name__, describe(error, with_type=False)]
    try:
        return ["value", encode(value)]
    except Unrepresentable as error:
        return [
            "unrepresentable",
            f"{error} (return plain data: None, bool, int, float, str, bytes, complex, "
            f"and lists, tuples, dicts, sets of them)",
        ]
    except BaseException as error:  # noqa: BLE001 - reading the value ran the solution's code, which failed
        return ["raised", type(error).__name__, describe(error, with_type=False)]


def describe(error, with_type=True):
    try:
        text = str(error)
    except BaseException:  # noqa: BLE001 - str() of the solution's exception runs the solution's code
        text = "<unprintable>"
    text = f"{type(error).__name__}: {text}" if with_type else text
    return text[:MAX_MESSAGE]


def send(descriptor, record):
    data = (json.dumps(record) + "\n").encode()
    if len(data) > MAX_ANSWER_BYTES:
        data = (
            json.dumps(
                ["unrepresentable", f"a value of {len(data)} bytes once encoded (the limit is {MAX_ANSWER_BYTES})"]
            )
            + "\n"
        ).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


main()
