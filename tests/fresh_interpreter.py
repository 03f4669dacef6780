"""Running a short script in a fresh interpreter of the project (for what must not inherit the test
process's threads and native state, such as a fork)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def printed(script: str) -> list[str]:
    """What ``script`` printed, split into words (it must exit 0)."""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=True)
    return done.stdout.split()
