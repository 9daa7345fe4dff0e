"""The tests' side of assertion grading: runs a dataset's assertions on the values a solution returned.

Standard library only; started by ``_evaluator_pool.py`` as a warm worker process on the host, through the
same loader as sandbox jobs (``_values`` is loaded next to it). The solution's code never runs in this
process: it only receives the solution's answers, as text, and only ever decodes them with
``_values.decode``. ``sys.argv[1]`` is its address-space limit in MB.

Requests come one per line on stdin: ``{"setup", "tests", "entry_point", "functions", "modules", "calls",
"unanswered", "answers"}`` where ``answers`` is what the solution's process wrote, one line per call of
``calls`` (see ``_solution_runner.py``). ``setup`` (trusted helpers, e.g. HumanEval's prompt) and the
instrumented ``tests`` run in a fresh namespace where each name of ``functions`` is a stand-in for the
solution's function of that name: calling it encodes the arguments and returns a fresh decoded copy of the
answer recorded for that call (answers of equal calls are used in order). With ``entry_point``, ``check`` is
called with the stand-in, as HumanEval does.

A call with no recorded answer returns a placeholder and is listed as a new call; any use of a placeholder
raises :class:`Pending`, which ends that assertion only, so one pass collects every call the tests can make
before needing an answer. The host then reruns the solution with the longer call list and sends the request
again. While new calls exist no outcome is final: a case that ends after the first new call is reported as
pending (``null``).

Replies, one JSON line each on the original stdout (the tests' own prints go to /dev/null):
``["case", index, true | false | null, message]`` as each case ends, then ``["end", new_calls, abort]`` where
``abort`` says why the tests stopped before their last case, or is null.
"""

import builtins
import collections
import ctypes
import json
import marshal
import os
import random
import resource
import site
import sys

from _values import Unrepresentable, call_key, decode, encode_call

MAX_CALLS = 20_000  # per check: more means the tests loop on the solution's answers
MAX_MESSAGE = 300


class Pending(BaseException):
    """An answer the solution has not given yet was used (not an Exception: tests must not catch it)."""


class SolutionError(Exception):
    """The solution's answer to a call is not a value: it raised, or sent something unusable."""


class SolutionAborted(BaseException):
    """The solution raised SystemExit, KeyboardInterrupt or another non-Exception: the case fails."""


def _pending(*_args, **_kwargs):
    raise Pending


_PLACEHOLDER_METHODS = (
    "eq ne lt le gt ge hash bool len iter reversed contains getitem setitem delitem missing call getattribute "
    "getattr setattr delattr str repr format bytes int float complex index round trunc floor ceil abs neg pos "
    "invert add radd iadd sub rsub isub mul rmul imul matmul rmatmul imatmul truediv rtruediv itruediv floordiv "
    "rfloordiv ifloordiv mod rmod imod divmod rdivmod pow rpow ipow lshift rlshift ilshift rshift rrshift "
    "irshift and rand iand xor rxor ixor or ror ior enter exit next length_hint reduce reduce_ex copy deepcopy "
    "sizeof dir fspath await aiter anext instancecheck subclasscheck class_getitem"
).split()
Placeholder = type("Placeholder", (), {f"__{name}__": _pending for name in _PLACEHOLDER_METHODS})


def main():
    # started with -S: site-packages (which tests may import) without their .pth hooks, as in sandbox jobs
    sys.path.extend(path for path in site.getsitepackages() if os.path.isdir(path))
    memory = int(sys.argv[1]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    ctypes.CDLL(None).prctl(4, 0)  # PR_SET_DUMPABLE 0: no /proc/<pid>/mem or ptrace, even for the same uid
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    limit = sys.getrecursionlimit()
    for line in sys.stdin:  # the host's requests: trusted
        evaluate(json.loads(line), out)
        sys.setrecursionlimit(limit)


def evaluate(request, out):
    """Run one request's tests and send its records (see the module docstring)."""
    answered = request["answers"].split("\n")[:-1]  # complete lines only: a cut-off last line is no answer
    answers = collections.defaultdict(collections.deque)
    for index, call in enumerate(request["calls"]):
        answers[call_key(call)].append(answered[index] if index < len(answered) else None)
    new_calls = []

    def stand_in(name):
        def call(*args, **kwargs):
            try:
                encoded = encode_call(name, args, kwargs)
            except Unrepresentable as error:
                if type(error.value) is Placeholder:
                    raise Pending from None
                raise TypeError(f"cannot pass {error} to the solution") from None
            queue = answers.get(call_key(encoded))
            if queue:
                return resolve(queue.popleft(), request["unanswered"])
            if len(request["calls"]) + len(new_calls) >= MAX_CALLS:
                raise RuntimeError(f"the tests made more than {MAX_CALLS} calls to the solution")
            new_calls.append(encoded)
            return Placeholder()

        call.__name__ = call.__qualname__ = name
        return call

    def record_case(index, passed, message=""):
        outcome = None if new_calls or passed is None else passed
        send(out, ["case", index, outcome, message[:MAX_MESSAGE]])

    random.seed(0)  # the same calls in every pass (HumanEval draws some arguments at random)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    abort = None
    try:
        exec(marshal.loads(bytes.fromhex(request["setup"])), namespace)  # noqa: S102 - trusted dataset code
        namespace.update({name: __import__(name) for name in request["modules"]})
        namespace.update({name: stand_in(name) for name in request["functions"]})
        namespace.update(__envgym_Pending=Pending, __envgym_case=record_case, __envgym_describe=describe)
    except BaseException as error:  # noqa: BLE001 - not the solution's doing: the host reports an error
        send(out, ["setup_error", describe(error)])
        return
    try:
        exec(marshal.loads(bytes.fromhex(request["tests"])), namespace)  # noqa: S102 - trusted dataset code
        if request["entry_point"] is not None:
            namespace["check"](namespace[request["entry_point"]])
    except Pending:
        abort = "waiting for the solution's answers"
    except BaseException as error:  # noqa: BLE001 - the tests stopped: the cases not reached fail
        abort = describe(error)
    send(out, ["end", new_calls, abort])


def resolve(line, unanswered):
    """The value the solution answered, decoded; raises what the solution raised, or SolutionError."""
    if line is None:
        raise SolutionError(unanswered)
    try:
        record = json.loads(line)
        kind = record[0] if type(record) is list and record else None
        if kind == "value" and len(record) == 2:
            return decode(record[1])
    except (ValueError, RecursionError):
        raise SolutionError("the solution's process sent a malformed answer") from None
    if kind == "raised" and len(record) == 3 and type(record[1]) is str and type(record[2]) is str:
        raise _exception(record[1], record[2])
    if kind == "unrepresentable" and len(record) == 2 and type(record[1]) is str:
        raise SolutionError(f"the solution returned {record[1]}")
    raise SolutionError("the solution's process sent a malformed answer")


def _exception(name, message):
    """The exception the solution raised, as the same builtin type where that is an ordinary Exception.

    StopIteration would end the tests' loops (``all(map(candidate, ...))``) and is replaced, as Python does
    inside generators; non-Exception types (SystemExit, KeyboardInterrupt) and the solution's own classes
    become SolutionAborted and SolutionError.
    """
    kind = getattr(builtins, name, None)
    if not (isinstance(kind, type) and issubclass(kind, BaseException)):
        return SolutionError(f"{name}: {message}")
    if not issubclass(kind, Exception):
        return SolutionAborted(f"{name}: {message}")
    if issubclass(kind, (StopIteration, StopAsyncIteration)):
        return RuntimeError(f"the solution raised {name}: {message}")
    try:
        return kind(message)
    except Exception:  # noqa: BLE001 - a builtin that needs other arguments (UnicodeDecodeError)
        return SolutionError(f"{name}: {message}")


def describe(error):
    return f"{type(error).__name__}: {error}"[:MAX_MESSAGE]


def send(descriptor, record):
    view = memoryview((json.dumps(record) + "\n").encode())
    while view:
        view = view[os.write(descriptor, view) :]


main()
