"""Item import: one all-or-nothing service behind the command, the admin form and the API."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from ..importing import ImportRejected, ParsedItem, RowError, detect_format, parse_items
from ..models import Campaign, Item
from ..schema import SchemaInvalid, parse_schema

BATCH_SIZE = 2000


@dataclass(frozen=True)
class ImportResult:
    created: int
    control_items: int


def items_import(
    *, campaign: Campaign, content: bytes, filename: str = "", fmt: str | None = None
) -> ImportResult:
    """Import every item of a file or none: a bad row rejects the whole file.

    Raises ImportRejected with row-numbered errors (bad encoding, malformed lines, missing
    fields, duplicate ids within the file or against the campaign, invalid gold answers).
    """
    fmt = fmt or detect_format(filename)
    try:
        schema = parse_schema(campaign.schema)
    except SchemaInvalid as exc:
        raise ImportRejected([RowError(None, "", f"the campaign's schema is invalid: {exc}")]) from None
    parsed = parse_items(content, fmt, schema)
    with transaction.atomic():
        _reject_existing_ids(campaign, parsed)
        try:
            _bulk_insert(campaign, parsed)
        except IntegrityError as exc:  # a concurrent import took an id after our check
            raise ImportRejected([RowError(None, "id", f"an id already exists: {exc}")]) from None
    control = sum(1 for p in parsed if p.control)
    return ImportResult(created=len(parsed), control_items=control)


def _reject_existing_ids(campaign: Campaign, parsed: list[ParsedItem]) -> None:
    by_id = {p.external_id: p for p in parsed}
    ids = list(by_id)
    clashes: list[RowError] = []
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        for existing in Item.objects.filter(campaign=campaign, external_id__in=chunk).values_list(
            "external_id", flat=True
        ):
            p = by_id[existing]
            clashes.append(RowError(p.row, "id", f"{existing!r} already exists in this campaign",
                                    p.line))
    if clashes:
        clashes.sort(key=lambda e: e.row or 0)
        raise ImportRejected(clashes)


def _bulk_insert(campaign: Campaign, parsed: list[ParsedItem]) -> None:
    k = campaign.annotations_per_item
    for start in range(0, len(parsed), BATCH_SIZE):
        Item.objects.bulk_create(
            [
                Item(
                    campaign=campaign,
                    external_id=p.external_id,
                    system=p.system,
                    data=p.data,
                    control=p.control,
                    gold=p.gold,
                    gold_tolerance=p.gold_tolerance,
                    slots_wanted=0 if p.control else k,
                )
                for p in parsed[start : start + BATCH_SIZE]
            ]
        )
