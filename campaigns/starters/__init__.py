"""Starter templates: ready task designs a researcher begins a campaign from.

One JSON file per template in this folder, named `<name>.json`. A file holds `title`,
`description`, `source` (where the text and the sample items come from), `settings` (campaign
settings such as items per assignment), `schema`, `instructions` and `examples` (Markdown, with
a worked example) and `items` (the sample items, as an import file's rows). A file that says
`{"fixture": "<slug>"}` takes all of that from the seed campaign in fixtures/<slug>/ instead,
so the seed tasks are written down once; the file may add what the seed lacks (e.g. a
worked example under `examples`).

A template is listed only when every question kind it uses is registered (a kind shipped
later leaves its templates out rather than offering a schema that cannot be saved).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings

from ..errors import ServiceError

__all__ = ["Starter", "StarterNotFound", "starter_get", "starter_list"]

STARTERS_DIR = Path(__file__).resolve().parent
FIXTURES_DIR = Path(settings.BASE_DIR) / "fixtures"
# Settings a template carries into a new campaign; a seed's study codes stay behind.
CARRIED_SETTINGS = ("items_per_assignment", "annotations_per_item", "assignment_timeout_minutes",
                    "max_assignments_per_worker", "attention_checks_per_assignment",
                    "gold_items_per_assignment", "intake_questions", "consent_text")


class StarterNotFound(ServiceError):
    code, status = "template_not_found", 404


@dataclass(frozen=True)
class Starter:
    name: str
    title: str
    description: str
    source: str
    schema: dict
    instructions: str
    examples: str
    settings: dict = field(default_factory=dict)
    items: list = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return sorted({q.get("kind", "") for q in self.schema.get("questions", [])})

    @property
    def item_count(self) -> int:
        return len(self.items)

    def campaign_fields(self) -> dict[str, Any]:
        """The campaign settings this template fills in (a new campaign's configuration)."""
        return {"name": self.title, "description": self.description, "source": self.source,
                "schema": self.schema, "instructions": self.instructions,
                "examples": self.examples, **self.settings}

    def items_jsonl(self) -> str:
        """The sample items as a JSON-lines import file."""
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in self.items)


def _from_fixture(name: str, slug: str) -> Starter:
    folder = FIXTURES_DIR / slug
    config = json.loads((folder / "campaign.json").read_text(encoding="utf-8"))
    lines = (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return Starter(
        name=name, title=config["name"], description=config.get("description", ""),
        source=config.get("source", ""), schema=config["schema"],
        instructions=config.get("instructions", ""), examples=config.get("examples", ""),
        settings={k: v for k, v in config.items() if k in CARRIED_SETTINGS},
        items=[json.loads(line) for line in lines if line.strip()])


def _load(path: Path) -> Starter:
    body = json.loads(path.read_text(encoding="utf-8"))
    name = path.stem
    if "fixture" in body:
        starter = _from_fixture(name, body["fixture"])
        added = {k: body[k] for k in ("examples",) if k in body and not getattr(starter, k)}
        return replace(starter, **added)
    return Starter(name=name, title=body["title"], description=body["description"],
                   source=body.get("source", ""), schema=body["schema"],
                   instructions=body.get("instructions", ""), examples=body.get("examples", ""),
                   settings={k: v for k, v in body.get("settings", {}).items()
                             if k in CARRIED_SETTINGS},
                   items=body.get("items", []))


# The seed tasks first (as the README lists them), then the comparative designs, then the
# designs for LLM chat assistants.
ORDER = ("movie-continuation", "summary-consistency", "story-rating", "comparative-rubric",
         "translation-acceptability", "pairwise-preference", "best-worst", "esa", "mqm",
         "chat-helpfulness-harmlessness", "arena-side-by-side", "summaries-rate-then-best-worst")


@lru_cache(maxsize=1)
def _all() -> tuple[Starter, ...]:
    paths = sorted(STARTERS_DIR.glob("*.json"),
                   key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem))
    return tuple(_load(p) for p in paths)


def starter_list(*, available_only: bool = True) -> list[Starter]:
    """The templates, in gallery order (those whose kinds are all registered, by default)."""
    from ..schema import REGISTRY

    return [s for s in _all() if not available_only or set(s.kinds) <= set(REGISTRY)]


def starter_get(name: str) -> Starter:
    """One available template by name; an unknown name is a 404 naming the known ones."""
    for starter in starter_list():
        if starter.name == name:
            return starter
    known = ", ".join(s.name for s in starter_list())
    raise StarterNotFound(f"No template named {name!r}; the templates are: {known}.",
                          extra={"field": "template", "templates": known.split(", ")})
