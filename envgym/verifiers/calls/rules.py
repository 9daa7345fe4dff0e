"""How a call's argument values are compared with the gold's allowed values: BFCL's rules and envgym's default.

Both rule sets share the shape of a gold call (a list of allowed values per parameter, ``""`` in the list marking
the parameter optional) and the comparisons: strings, strings inside lists and dict values are normalised before
comparing; lists compare element by element in order; a dict matches an allowed dict when every key it gives is
allowed with an allowed value and every key it leaves out is optional; a list of dicts matches position by
position. They differ where BFCL's checker (``bfcl_eval.eval_checker.ast_eval.ast_checker``) trades safety for
leniency:

=====================  ==========================================  ============================================
rule                   BFCL (:data:`BFCL_RULES`)                    envgym default (:data:`DEFAULT_RULES`)
=====================  ==========================================  ============================================
string normalisation   drops spaces and ``, . / - _ * ^``,          trims, collapses whitespace, case-folds:
                       lowercases, ``'`` -> ``"``: "April 1, 2024"   "3.5" and "35", "a/b" and "ab" stay
                       = "April 1 2024", but also "3.5" = "35" and  different (BFCL's rule pays a policy that
                       "10-5" = "105"                               drops a decimal point)
gold type wins         a value of the gold's type is accepted even  the schema's type decides; a gold of the
                       when the schema says otherwise, and then     wrong type is the gold's bug, not the
                       compared exactly (some BFCL golds give a     policy's (it can never be matched)
                       variable name for an ``integer``)
nested types           list items type-checked one level deep and   list items and dict values are
                       a failure only turns normalised comparison   type-checked at every depth; a wrong type
                       into exact comparison; dict values unchecked is a ``wrong_type`` failure
int for float          an int is accepted for a ``number`` at the   an int is accepted for a ``number`` at
                       top level                                    every depth
=====================  ==========================================  ============================================
"""

from __future__ import annotations

import dataclasses
import re

STRING_RULES = ("bfcl", "casefold", "exact")
_BFCL_DROPPED = re.compile(r"[ ,./\-_*^]")
_WHITESPACE = re.compile(r"\s+")


@dataclasses.dataclass(frozen=True)
class MatchRules:
    """Options of the gold-call matcher.

    strings: ``"bfcl"`` (BFCL's ``standardize_string``), ``"casefold"`` (trim, collapse whitespace, case-fold) or
        ``"exact"``.
    int_for_float: an int is accepted where the schema says ``number`` (Python's own promotion).
    gold_type_wins: BFCL's "variable" rule: when the gold's values are of another type than the schema's, a value
        of the gold's type is accepted and compared with ``==`` (no normalisation).
    strict_nested_types: list items and dict values are type-checked recursively (a mismatch is ``wrong_type``);
        ``False`` is BFCL's one-level item check, whose failure only switches to exact comparison.
    underscore_for_dot: a call named ``math_factorial`` matches the gold ``math.factorial`` (OpenAI's API refuses
        dots in function names; BFCL renames them this way for such models).
    """

    strings: str = "casefold"
    int_for_float: bool = True
    gold_type_wins: bool = False
    strict_nested_types: bool = True
    underscore_for_dot: bool = False

    def __post_init__(self) -> None:
        if self.strings not in STRING_RULES:
            raise ValueError(f"strings must be one of {', '.join(STRING_RULES)}, got {self.strings!r}")

    def normalize(self, text: str) -> str:
        """``text`` as this rule set compares strings."""
        if self.strings == "bfcl":
            return _BFCL_DROPPED.sub("", text).lower().replace("'", '"')
        if self.strings == "casefold":
            return _WHITESPACE.sub(" ", text.strip()).casefold()
        return text


BFCL_RULES = MatchRules(strings="bfcl", int_for_float=True, gold_type_wins=True, strict_nested_types=False)
DEFAULT_RULES = MatchRules()
