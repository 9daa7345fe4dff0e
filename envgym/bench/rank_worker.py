"""One rank of a benchmark worker under ``torchrun`` (``python -c`` cannot be launched by it):
``python -m envgym.bench.rank_worker MODULE FUNCTION ARGS``, ARGS the ``repr`` of a tuple of plain literals."""

from __future__ import annotations

import ast
import importlib
import sys

if __name__ == "__main__":
    module, name, args = sys.argv[1:4]
    getattr(importlib.import_module(module), name)(*ast.literal_eval(args))
