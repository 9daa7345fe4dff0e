"""Engines: the policy protocol and what generates tokens behind it (transformers, vLLM, an OpenAI-compatible
server), model resolution, the model server, and the chat-template/token bookkeeping the rollout loop relies on.

Nothing here knows about training or evaluation; importing the package loads no torch.
"""
