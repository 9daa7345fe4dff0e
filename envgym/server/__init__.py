"""Every server of the project, on the top floor (nothing below imports this package):

- :mod:`envgym.server.app`: the env server (``envgym serve env``: sessions, capacity, idle reaping, auth, size
  limits), with OpenEnv's protocol at ``/openenv/{env_id}`` (:mod:`envgym.server.openenv_app`); its client is
  :class:`envgym.remote.RemoteEnv`.
- :mod:`envgym.server.sandbox`: the sandbox over HTTP (``envgym serve sandbox``, SandboxFusion-compatible); its
  client is the sandbox's ``remote`` backend.
- :mod:`envgym.server.search`: BM25 retrieval with Search-R1's ``/retrieve`` (``envgym serve search``); its client
  is :class:`envgym.envs.search.client.SearchClient`.
- :mod:`envgym.server.model`: a local model behind an OpenAI-compatible API (``envgym serve model``); its client
  is :class:`envgym.agents.OpenAIPolicy`.
- :mod:`envgym.server.mcp`: a tool env's tools as an MCP server (``envgym serve tools``).
- :mod:`envgym.server.launch`: start a server in a child process or a thread (tests, benchmarks, notebooks).

Importing this package imports none of them.
"""
