"""The `envgym` command line: the top floor, which every layer sits under and nothing imports.

:mod:`envgym.cli.app` is the root command (``envgym = envgym.cli.app:main``); each command's module (``train``,
``eval``, ``demo``, ``serve``...) and its input checks live beside it and load only when that command runs.
"""
