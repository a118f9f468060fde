"""The SQL that runs inside PostgreSQL (functions, triggers), one versioned file per unit.

`<name>_v<N>.sql` holds the full text deployed by the migration that installs version N;
a change is a new file and a new migration, so an old migration keeps reading its version.
"""
from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent

__all__ = ["FOLDER", "load"]


def load(name: str, version: int) -> str:
    """The text of `<name>_v<version>.sql` in this folder."""
    return (FOLDER / f"{name}_v{version}.sql").read_text(encoding="utf-8")
