"""The symbolic worker process: sympy + latex2sympy, one comparison per JSON line on stdin.

Run by :mod:`envgym.verifiers.symbolic` as ``python -m envgym.verifiers._symbolic_worker``. Protocol: the
worker writes ``{"ready": true}`` once its imports are done (or ``{"error": ...}`` if they fail), then for
each request line ``{"pred": ..., "gold": ..., "conventions": {...}}`` writes one line ``{"equal": bool}`` or
``{"error": ...}``.
It exits when stdin closes. Nothing here has a timeout of its own: the parent enforces the timeout by killing
this process.
"""

from __future__ import annotations

import json
import logging
import sys


def _send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def compare(pred: str, gold: str, conventions: dict | None = None) -> bool:
    """Whether two normalized answers are equal: their structure split as in the calling process (under the
    same ``Conventions`` fields), each part decided by sympy (:func:`envgym.verifiers.math_sympy.leaf_equal`)."""
    from envgym.verifiers.math_conventions import Conventions
    from envgym.verifiers.math_structure import Comparison
    from envgym.verifiers.math_sympy import leaf_equal

    return bool(Comparison(leaf_equal, Conventions(**(conventions or {}))).compare(pred, gold))


_WARM_UP = (
    ("2\\sqrt{2}+x", "\\frac{x}{1}+\\sqrt{8}"),
    ("\\sin^2(x) \\geq \\frac{1}{2}", "\\cos(x)^2 - \\frac{1}{2} \\leq 0"),
    (
        "\\begin{pmatrix}x\\\\ 1\\end{pmatrix} + \\begin{pmatrix}1\\\\ 0\\end{pmatrix}",
        "\\begin{pmatrix}x+1\\\\ 1\\end{pmatrix}",
    ),
    ("F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}", "F_{n} = \\sum_{k=1}^{n} F_{k-1} F_{n-k}"),
    ("a_{37} + x_{1}^{2}", "\\log_2 8 \\cdot \\tan^2(y)"),
    ("-2 < x \\leq 7", "(-2, 7]"),
    ("\\{1, \\pi\\} \\cup [0, \\infty)", "(-\\infty, 0) \\cup \\{2\\}"),
    ("\\frac{\\sqrt[3]{x}^2}{|x - 1|}", "e^{i \\pi} + 10^{-\\frac{5}{6}}"),
)


def main() -> None:
    try:
        import latex2sympy2_extended  # noqa: F401
        import sympy  # noqa: F401
    except Exception as error:  # report any import failure to the parent instead of dying silently
        _send(
            {"error": f"the symbolic worker cannot import sympy/latex2sympy2_extended: {type(error).__name__}: {error}"}
        )
        return
    logging.disable(logging.CRITICAL)  # latex2sympy logs parse failures; they are expected here
    # Both parsers load lazily (grammar tables, sympy submodules), and latex2sympy's ANTLR parser gets fast
    # only once its prediction cache has seen each construct: do both now, inside the start-up time, so that
    # real comparisons are not charged for it.
    for pred, gold in _WARM_UP:
        compare(pred, gold)
    _send({"ready": True})
    for line in sys.stdin:
        try:
            request = json.loads(line)
            _send({"equal": compare(request["pred"], request["gold"], request.get("conventions"))})
        except Exception as error:  # a comparison that fails is an unequal pair, never a dead worker
            _send({"error": f"{type(error).__name__}: {error}"[:500]})


if __name__ == "__main__":
    main()
