"""Factories for test objects: named schemas of real studies, and a schema, a question and an
item of any registered kind built from the kind's own worked example (its `example`)."""
import hashlib
import itertools

from campaigns.models import Campaign
from campaigns.schema import REGISTRY

_counter = itertools.count(1)

LIKERT_5 = [{"value": v, "label": f"{v}", "description": f"level {v}"} for v in range(1, 6)]

CONTINUATION_SCHEMA = {
    "display": [
        {"field": "prompt", "label": "Prompt (read me first!)", "suffix": "..."},
        {"field": "completion", "label": "System's generation (rate this!)", "prefix": "..."},
    ],
    "questions": [
        {"id": "coherence", "kind": "likert", "text": "Coherent?", "points": LIKERT_5},
        {"id": "sentiment", "kind": "likert", "text": "Positive?", "points": LIKERT_5},
        {"id": "feedback", "kind": "text", "text": "Feedback", "required": False,
         "max_length": 50},
    ],
}

SUMMARY_SCHEMA = {
    "display": [{"field": "story", "label": "Story"},
                {"field": "summary", "label": "Summary", "format": "lines"}],
    "questions": [
        {"id": "lines", "kind": "lines", "text": "Is this line consistent?", "field": "summary",
         "split": "sentences",
         "options": [{"value": "consistent", "label": "Consistent"},
                     {"value": "inconsistent", "label": "Inconsistent"},
                     {"value": "na", "label": "N/A"}],
         "followup": {"id": "rewrite", "text": "Provide a rewrite.", "when": ["inconsistent"],
                      "max_length": 100}},
        {"id": "summary_consistent", "kind": "choice", "text": "Whole summary?",
         "options": [{"value": "consistent", "label": "Consistent"},
                     {"value": "inconsistent", "label": "Inconsistent"}]},
    ],
}

RUBRIC_SCHEMA = {
    "display": [{"field": "answer", "label": "Answer", "format": "pre"}],
    "questions": [
        {"id": "rubric", "kind": "rubric", "text": "Score each criterion",
         "criteria": [
             {"id": f"C{n}", "text": f"criterion {n}", "min": 0, "max": 2 if n in (9, 10, 11, 12)
              else 1,
              "levels": [{"value": v, "description": f"C{n}={v}"}
                         for v in range(0, (2 if n in (9, 10, 11, 12) else 1) + 1)]}
             for n in range(1, 16)
         ]},
    ],
}

TRANSLATION_SCHEMA = {
    "display": [{"field": "source", "label": "Source"}, {"field": "translation", "label": "MT"}],
    "questions": [
        {"id": "acceptability", "kind": "slider", "text": "How acceptable?", "min": 0, "max": 100,
         "anchors": [{"value": 0, "label": "Nonsense"}, {"value": 100, "label": "Perfect"}]},
        {"id": "source_issues", "kind": "flags", "text": "Source problems",
         "options": [{"value": "typos", "label": "Typos"},
                     {"value": "nonsense", "label": "Makes no sense"}], "other": True},
    ],
}


def make_campaign(*, owner, schema=None, slug=None, **fields) -> Campaign:
    n = next(_counter)
    defaults = {
        "name": f"Campaign {n}",
        "status": Campaign.Status.LIVE,
        "annotations_per_item": 3,
        "items_per_assignment": 1,
    }
    defaults.update(fields)
    return Campaign.objects.create(
        owner=owner, slug=slug or f"campaign-{n}", schema=schema or CONTINUATION_SCHEMA, **defaults
    )


def make_items(campaign: Campaign, n: int, *, control: str = "", gold: dict | None = None,
               gold_tolerance: float | None = None, prefix: str = "") -> list:
    """n items for `campaign` (continuation-style data); control items get slots_wanted=0."""
    from campaigns.models import Item

    prefix = prefix or (control or "item")
    return Item.objects.bulk_create(
        Item(campaign=campaign, external_id=f"{prefix}-{i}", control=control, gold=gold,
             gold_tolerance=gold_tolerance,
             data={"prompt": f"Prompt {i}", "completion": f"Completion {i}"},
             slots_wanted=0 if control else campaign.annotations_per_item)
        for i in range(n)
    )


# Side-by-side preference between an item's two outputs (items carry `outputs`).
PAIRWISE_SCHEMA = {
    "display": [{"field": "prompt", "label": "Prompt"}],
    "questions": [
        {"id": "preference", "kind": "pairwise", "text": "Which response is better?",
         "strength": True},
    ],
}

# Best-worst scaling over an item's 3 to 6 outputs.
BWS_SCHEMA = {
    "display": [{"field": "prompt", "label": "Prompt"}],
    "questions": [{"id": "bestworst", "kind": "bws",
                   "text": "Which response is best, which worst?"}],
}


def as_researcher(user):
    """A staff account in the Researchers group (what `create_researcher` makes)."""
    from campaigns.services.researchers import researchers_group

    user.is_staff = True
    user.save()
    user.groups.add(researchers_group())
    return user

# Error span annotation (ESA, WMT 2024): spans with a severity, then a 0-100 score.
ESA_SCHEMA = {
    "display": [{"field": "source", "label": "Source"}],
    "questions": [
        {"id": "errors", "kind": "spans", "text": "Highlight the errors in the translation",
         "field": "target", "source_field": "source",
         "severities": [{"value": "minor", "label": "Minor"},
                        {"value": "major", "label": "Major", "weight": 5}]},
        {"id": "score", "kind": "slider", "text": "Overall quality of the translation",
         "min": 0, "max": 100},
    ],
}

# MQM (WMT 2020-2023): spans with a severity (incl. critical) and a required category.
MQM_SCHEMA = {
    "display": [{"field": "source", "label": "Source"}],
    "questions": [
        {"id": "mqm", "kind": "spans", "text": "Mark every error in the translation",
         "field": "target", "source_field": "source", "require_category": True,
         "allow_overlap": True,  # WMT's raters mark errors inside other errors
         "severities": [{"value": "minor", "label": "Minor", "weight": 1},
                        {"value": "major", "label": "Major", "weight": 5},
                        {"value": "critical", "label": "Critical", "weight": 25}],
         "categories": [
             {"value": "accuracy/mistranslation", "label": "Accuracy / Mistranslation"},
             {"value": "fluency/grammar", "label": "Fluency / Grammar"},
             {"value": "fluency/punctuation", "label": "Fluency / Punctuation",
              "weights": {"minor": 0.1}},
             {"value": "non-translation", "label": "Non-translation",
              "weights": {"minor": 25, "major": 25, "critical": 25}}]},
    ],
}



def prolific_pid(name: str) -> str:
    """A participant id in Prolific's form (24 hexadecimal characters), the same for a name."""
    return hashlib.sha256(f"prolific:{name}".encode()).hexdigest()[:24]


def mturk_worker_id(name: str) -> str:
    """A worker id in MTurk's form (A and 13 capitals and digits), the same for a name."""
    return "A" + hashlib.sha256(f"mturk:{name}".encode()).hexdigest()[:13].upper()


# --- any registered kind, from its worked example (campaigns.schema.contract.KindExample) ----

KIND_DISPLAY_FIELD = "text"


def kind_question(kind: str, qid: str | None = None, **settings) -> dict:
    """One question of a registered kind: the kind's example settings, overridable."""
    example = REGISTRY[kind].example
    return {"id": qid or f"q_{kind}", "kind": kind, "text": f"The {kind} question",
            **example.settings, **settings}


def kind_schema(kind: str, **settings) -> dict:
    """A schema showing one item field and asking one question of the kind."""
    return {"display": [{"field": KIND_DISPLAY_FIELD, "label": "Text"}],
            "questions": [kind_question(kind, **settings)]}


def kind_item_data(kind: str) -> dict:
    """Item data for kind_schema(kind): the shown field and what the kind's example reads."""
    return {KIND_DISPLAY_FIELD: "An item to judge.", **REGISTRY[kind].example.item}
