"""Benchmarks: the gateway beside direct calls, LiteLLM's proxy and a raw relay (``python -m bench run``)."""
