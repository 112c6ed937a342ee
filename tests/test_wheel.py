"""The built wheel, installed into a fresh virtual environment outside the source tree, carries the conformance suite."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_the_runner_and_the_vectors(tmp_path):
    """pip install of the built wheel gives `python -m sentinel_memory.conformance`, its vectors, and a passing run."""
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next((tmp_path / "dist").glob("sentinel_memory-*.whl"))
    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheel)], check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [python, "-c", "from sentinel_memory.conformance.vectors import spec_dir; print(spec_dir())"],
        cwd=elsewhere,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert "site-packages" in where
    result = subprocess.run(
        [
            python,
            "-m",
            "sentinel_memory.conformance",
            "run",
            "--backend",
            f"{python} -m sentinel_memory.conformance serve",
            "--quiet",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert result.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed, 0 skipped, 0 errored")
