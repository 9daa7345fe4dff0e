"""A command group whose commands load when they run: ``envgym --help`` lists them from their one-line help and
imports none of their modules.

Each lazy command is a :class:`Lazy`: the help line the listing shows and a function that imports the command
with a plain ``from ... import ...`` and returns it (a typer command function, or a ``typer.Typer`` for a group
of its own). typer builds the click command from it only when the command is asked for by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup


@dataclasses.dataclass(frozen=True)
class Lazy:
    help: str
    """What ``--help`` of the group says about the command (its docstring's first sentence)."""
    load: Callable[[], Any]
    """Imports and returns the command function or ``typer.Typer``."""


class LazyGroup(TyperGroup):
    """A typer group with :attr:`lazy` commands besides its own. While it lists its commands (``--help``) a lazy
    one stands in as a placeholder that holds its help line; asked for by name, it is loaded and built."""

    lazy: dict[str, Lazy] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False
        self._loaded: set[str] = set()
        for name, entry in self.lazy.items():  # in self.commands too, so typos get "did you mean" among them
            self.commands.setdefault(name, TyperCommand(name, help=entry.help, short_help=entry.help))

    def list_commands(self, ctx: Any) -> list[str]:
        """Own commands, then the lazy ones in their table's order, then the subgroups."""
        own = [name for name in self.commands if name not in self.lazy]
        groups = [name for name in own if isinstance(self.commands[name], TyperGroup)]
        return [name for name in own if name not in groups] + list(self.lazy) + groups

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.lazy and cmd_name not in self._loaded and not self._listing:
            self.commands[cmd_name] = build_command(cmd_name, self.lazy[cmd_name].load())
            self._loaded.add(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_typer(commands: dict[str, Lazy], **options: Any) -> typer.Typer:
    """A ``typer.Typer`` whose group loads ``commands`` lazily (``options`` are typer's)."""
    group = type("LazyGroup", (LazyGroup,), {"lazy": commands})
    return typer.Typer(cls=group, **options)


def build_command(name: str, loaded: Any) -> Any:
    """The click command typer makes of a command function, or the group of a ``typer.Typer``."""
    if isinstance(loaded, typer.Typer):
        command = typer.main.get_group(loaded)
        command.name = name
        return command
    holder = typer.Typer()
    holder.command(name)(loaded)
    return typer.main.get_command(holder)
