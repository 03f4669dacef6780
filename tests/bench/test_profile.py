"""How ``bench profile`` asks py-spy to sample: without stopping the gateway, or pausing it for whole stacks."""

from __future__ import annotations

from pathlib import Path

from bench.__main__ import parser
from bench.profile import Options, spy_command


def test_samples_without_stopping_the_gateway_unless_told_to_pause_it() -> None:
    running = spy_command("py-spy", 42, Path("out.txt"), Options(duration=5, format="raw"))
    paused = spy_command("py-spy", 42, Path("out.txt"), Options(duration=5, format="raw", paused=True))
    assert "--nonblocking" in running
    assert "--nonblocking" not in paused
    for command in (running, paused):
        assert command[:4] == ["py-spy", "record", "--pid", "42"]
        assert command[command.index("--format") + 1] == "raw"
        assert command[command.index("--output") + 1] == "out.txt"
        assert command[command.index("--duration") + 1] == "6"  # a second past the load, so none is missed


def test_the_paused_flag_reaches_the_options() -> None:
    assert parser().parse_args(["profile"]).paused is False
    assert parser().parse_args(["profile", "--paused", "--scenarios", "chat"]).paused is True


def test_the_raw_relay_is_measured_beside_the_gateway_unless_told_not_to() -> None:
    assert parser().parse_args(["profile"]).raw is True
    assert parser().parse_args(["profile", "--no-raw"]).raw is False
