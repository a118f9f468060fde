"""The SQL files: their status literals are the models' choices; migrations read the files."""
import re
from pathlib import Path

import pytest

from campaigns.models import Assignment, Campaign, Item, Worker
from campaigns.work.sql import FOLDER, load

# A column (or a variable holding one) compared with or set to a quoted literal.
COMPARED = re.compile(r"(\w+)\s*(?:=|<>|!=|IS DISTINCT FROM|IS NOT DISTINCT FROM)\s*'([^']*)'",
                      re.IGNORECASE)
CHOICES = {
    "status": set(Assignment.Status.values) | set(Campaign.Status.values),
    "platform": set(Worker.Platform.values),
    "control": set(Item.Control.values),
}
MIGRATIONS = Path(__file__).resolve().parents[2] / "campaigns" / "migrations"


def _code(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines())


def _literals() -> list[tuple[str, str, str, str]]:
    found = []
    for path in sorted(FOLDER.glob("*.sql")):
        for column, literal in COMPARED.findall(_code(path.read_text())):
            kind = next((k for k in CHOICES if column.lower().endswith(k)), None)
            if kind:
                found.append((path.name, column, literal, kind))
    return found


def test_every_status_literal_in_the_sql_is_a_value_of_the_models_choices():
    literals = _literals()
    # the claim's and the save's statuses, the tally's control and platform checks
    assert {kind for *_, kind in literals} == set(CHOICES)
    wrong = [(f, c, v) for f, c, v, kind in literals if v not in CHOICES[kind]]
    assert not wrong


def test_a_literal_outside_the_choices_would_be_caught():
    column, literal = COMPARED.findall("WHERE a.status = 'activ'")[0]
    assert column == "status" and literal not in CHOICES["status"]


@pytest.mark.parametrize("name", ["claim", "save_answer", "tally"])
def test_each_sql_file_opens_with_the_rules_it_implements(name):
    text = load(name, 1)
    assert text.startswith("--") and "Rules:" in text.split("CREATE", 1)[0]


def test_no_migration_imports_another_migration():
    for path in MIGRATIONS.glob("0*.py"):
        text = path.read_text()
        assert "campaigns.migrations" not in text and "import_module" not in text, path.name


def test_every_sql_file_is_read_by_a_migration():
    """A version no migration installs is dead text: delete it (a change is a new version)."""
    loaded = set()
    for path in MIGRATIONS.glob("0*.py"):
        loaded |= {f"{name}_v{version}.sql" for name, version in
                   re.findall(r"""load\(["'](\w+)["'],\s*(\d+)\)""", path.read_text())}
    files = {path.name for path in FOLDER.glob("*.sql")}
    assert files and files <= loaded, sorted(files - loaded)
