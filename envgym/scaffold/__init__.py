"""``envgym init`` and ``envgym check``: start an env package that installs as a plugin, and check any env.

:func:`envgym.scaffold.templates.scaffold` writes the package; :mod:`envgym.scaffold.cli` holds the commands.
"""
