"""The mutation check's bugs still apply to the current source (see tests/mutants.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import mutants
import pytest


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_mutant_applies_to_current_source(mutant, tmp_path):
    """Each deliberate bug's original line appears exactly once, so `make mutants` tests what it says."""
    shutil.copytree(mutants.ROOT / "src", tmp_path / "src")
    mutants.apply(mutant, tmp_path)
    changed = (tmp_path / mutants.PACKAGE / mutant.file).read_text(encoding="utf-8")
    assert mutant.new in changed and changed != (mutants.ROOT / mutants.PACKAGE / mutant.file).read_text()


def test_there_are_at_least_eight_mutants():
    """The spec must be shown to catch at least eight distinct deliberate bugs."""
    assert len({m.name for m in mutants.MUTANTS}) >= 8 and Path(mutants.__file__).name == "mutants.py"
