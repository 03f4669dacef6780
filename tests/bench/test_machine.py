"""A result names what it was measured on, with the server and client libraries' versions."""

from __future__ import annotations

from importlib import metadata

from bench import machine


def test_a_result_names_the_versions_of_the_libraries_both_sides_run_on(monkeypatch):
    found = machine.machine()
    assert found["cpus"] >= 1 and found["python"].count(".") == 2
    assert found["libraries"]["aiohttp"] == metadata.version("aiohttp")
    assert set(found["libraries"]) == {"uvicorn", "httptools", "uvloop", "aiohttp", "httpx"}

    monkeypatch.setattr(machine, "LIBRARIES", ("aiohttp", "no-such-library-here"))
    assert machine.machine()["libraries"] == {"aiohttp": metadata.version("aiohttp"), "no-such-library-here": None}
