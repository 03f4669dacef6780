"""The folder the servers work in: made where asked, and what creating a file there costs,
reported with the results."""

from __future__ import annotations

import os
from pathlib import Path

from bench import report
from bench.workdir import create_cost, describe_workdir, make_workdir, workdir_line
from tests.bench.test_report import outcome


def test_the_run_folder_is_made_in_the_folder_asked_for_even_when_it_is_missing(tmp_path: Path) -> None:
    parent = tmp_path / "not" / "yet"
    made = make_workdir("studio-bench-", parent)
    assert made.is_dir() and made.parent == parent and made.name.startswith("studio-bench-")
    assert make_workdir("studio-bench-", parent) != made  # each run its own


def test_the_probe_times_file_creation_and_leaves_nothing_behind(tmp_path: Path, monkeypatch) -> None:
    created: list[str] = []
    real_open = os.open

    def counting_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            created.append(path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    assert create_cost(tmp_path, files=50) > 0
    # Every file was new (made here, not opened again), each in one new folder inside the one probed.
    assert len(created) == len(set(created)) == 50
    assert {Path(p).parent.parent for p in created} == {tmp_path}
    assert list(tmp_path.iterdir()) == []


def test_the_results_name_the_folder_and_its_cost(tmp_path: Path) -> None:
    found = describe_workdir(make_workdir("studio-bench-", tmp_path))
    assert found["parent"] == str(tmp_path) and found["file_create_cpu_us"] > 0
    assert workdir_line({"parent": "/srv/bench", "file_create_cpu_us": 12.4}) == (
        "working folder: /srv/bench (creating a file in a new folder there: 12 µs of CPU)")
    run = outcome({("gateway", "chat"): 100.0, ("raw", "chat"): 50.0})
    run.workdir = {"parent": "/srv/bench", "file_create_cpu_us": 240.0}
    assert report.table(report.summarize(run), run).splitlines()[-1] == (
        "working folder: /srv/bench (creating a file in a new folder there: 240 µs of CPU)")
