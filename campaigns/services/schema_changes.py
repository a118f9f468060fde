"""Schema changes that keep every stored answer readable, and the recorded answer migration.

Stored answers are keyed by question id and read by the question's kind and settings, so once
a question has answers, a new schema must still accept every one of them: an answered question
(or an option, point or criterion its answers use) cannot be removed, renamed or re-kinded.
Wording (texts, labels, help) may change freely. A question added to an answered campaign must
be optional, since the stored annotations cannot have answered it. Renaming an answered
question's id is `question_rename`, which rewrites the stored answers and gold answers in the
same transaction and records how many it changed; `option_rename` does the same for one
option value of a question whose kind has option values (choice, flags, lines).
"""
from __future__ import annotations

import re
from typing import Any

from django.db import connection, transaction
from django.db.models import Count
from django.db.models.fields.json import KeyTransform

from ..errors import ServiceError
from ..models import Annotation, AnswerMigration, Campaign, Item
from ..schema import AnswerInvalid, Capability, SchemaInvalid, SchemaIssue, parse_schema
from ..schema.base import ID_PATTERN

_EXAMPLES = 3  # stored answers quoted in a refusal


def answered_questions(*, campaign: Campaign) -> dict[str, int]:
    """{question id: number of stored annotations answering it} for this campaign."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT k, count(*) FROM campaigns_annotation a, jsonb_object_keys(a.answers) k "
            "WHERE a.campaign_id = %s AND jsonb_typeof(a.answers) = 'object' GROUP BY k",
            [campaign.pk])
        return dict(cursor.fetchall())


def schema_change_issues(*, campaign: Campaign, schema: Any) -> list[SchemaIssue]:
    """Why replacing the campaign's schema by `schema` would hide stored answers ([] if not)."""
    answered = answered_questions(campaign=campaign) if campaign.pk else {}
    if not answered:
        return []
    try:
        before, after = parse_schema(campaign.schema), parse_schema(schema)
    except SchemaInvalid:
        return []  # the configuration check reports an invalid new schema
    new = {q.id: (n, q) for n, q in enumerate(after.questions)}
    old_ids = {q.id for q in before.questions}
    issues = []
    for q in before.questions:
        n_answers = answered.get(q.id, 0)
        if not n_answers:
            continue
        if q.id not in new:
            issues.append(SchemaIssue("schema.questions", (
                f"{q.id!r} has {n_answers} stored answer(s) and cannot be removed or renamed. "
                "Change its text instead (the id stays), or use “Rename a question”, which "
                "migrates the stored answers and records it.")))
            continue
        n, changed = new[q.id]
        if changed.model_dump() != q.model_dump():
            issues += _answers_still_fit(campaign, changed, f"schema.questions[{n}]", n_answers)
    for qid, (n, q) in new.items():
        if qid not in old_ids and q.required:
            issues.append(SchemaIssue(f"schema.questions[{n}].required", (
                f"{qid!r} is new, and {_count(campaign)} stored "
                "annotation(s) did not answer it; a question added to an answered campaign "
                "must be optional (\"required\": false).")))
    return issues


def _count(campaign: Campaign) -> int:
    return Annotation.objects.filter(campaign=campaign).count()


def _answers_still_fit(campaign: Campaign, question, path: str, n_answers: int
                       ) -> list[SchemaIssue]:
    """The stored answers the changed question would no longer accept, counted and quoted."""
    if question.kind != _old_kind(campaign, question.id):
        return [SchemaIssue(f"{path}.kind", (
            f"{question.id!r} has {n_answers} stored answer(s) of kind "
            f"{_old_kind(campaign, question.id)!r}; its kind cannot change."))]
    answers = (Annotation.objects.filter(campaign=campaign, answers__has_key=question.id)
               .order_by())
    key = KeyTransform(question.id, "answers")
    broken, examples = 0, []
    if question.answer_reads_item:
        rows = answers.values("item_id", answer=key).annotate(n=Count("pk"))
        data = dict(Item.objects.filter(campaign=campaign).values_list("pk", "data"))
        pairs = ((r["answer"], data.get(r["item_id"]), r["n"]) for r in rows)
    else:
        rows = answers.values(answer=key).annotate(n=Count("pk"))
        pairs = ((r["answer"], None, r["n"]) for r in rows)
    for answer, item_data, n in pairs:
        if answer is None:
            continue
        try:
            question.validate_answer(answer, item_data)
        except AnswerInvalid as exc:
            broken += n
            if len(examples) < _EXAMPLES:
                examples.append(f"{answer!r} ({next(iter(exc.errors.values()))})")
    if not broken:
        return []
    return [SchemaIssue(path, (
        f"{broken} of the {n_answers} stored answer(s) of {question.id!r} would no longer fit "
        f"this question, e.g. {'; '.join(examples)}. Options, points and criteria that have "
        "answers cannot be removed or renamed by editing; change their labels instead, or rename "
        "an option value with “Rename a question”, which migrates the stored answers."))]


def _old_kind(campaign: Campaign, question_id: str) -> str:
    for q in campaign.schema.get("questions", []):
        if q.get("id") == question_id:
            return q.get("kind", "")
    return ""


def answers_rename(*, campaign: Campaign, question: str, to: str, value: str = "", user=None,
                   via: str = "service") -> AnswerMigration:
    """The recorded answer migration every route offers: with `value`, rename that option value
    of the question (option_rename); without it, the question's id (question_rename)."""
    if value:
        return option_rename(campaign=campaign, question=question, value=value, to=to,
                             user=user, via=via)
    return question_rename(campaign=campaign, question=question, to=to, user=user, via=via)


@transaction.atomic
def question_rename(*, campaign: Campaign, question: str, to: str, user=None,
                    via: str = "service") -> AnswerMigration:
    """Rename a question's id in the schema, every stored answer and every gold answer; record
    it with the numbers changed. Refused when the id is unknown or the new one is taken."""
    locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
    ids = [q.get("id") for q in locked.schema.get("questions", [])]
    if question not in ids:
        raise ServiceError(f"The schema has no question {question!r}.", code="no_such_question",
                           extra={"question": question})
    if to in ids or not re.fullmatch(ID_PATTERN, to):
        raise ServiceError(f"{to!r} is taken or not a valid question id (a letter, then "
                           "letters, digits, - or _).", code="bad_question_id",
                           extra={"question": to})
    locked.schema = {**locked.schema, "questions": [
        {**q, "id": to} if q.get("id") == question else q for q in locked.schema["questions"]]}
    locked.save(update_fields=["schema", "updated_at"])
    annotations = _rename_key("campaigns_annotation", campaign.pk, question, to)
    gold = _rename_key("campaigns_item", campaign.pk, question, to)
    campaign.refresh_from_db()
    return AnswerMigration.objects.create(
        campaign=campaign, question=question, renamed_to=to, annotations_changed=annotations,
        gold_items_changed=gold, requested_by=user if getattr(user, "pk", None) else None,
        requested_via=via)


@transaction.atomic
def option_rename(*, campaign: Campaign, question: str, value: str, to: str, user=None,
                  via: str = "service") -> AnswerMigration:
    """Rename one option value of a question in the schema, every stored answer and every gold
    answer; record it with the numbers changed. The question's kind does the renaming."""
    locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
    try:
        q = parse_schema(locked.schema).question(question)
    except (KeyError, SchemaInvalid):
        raise ServiceError(f"The schema has no question {question!r}.", code="no_such_question",
                           extra={"question": question}) from None
    if not q.supports(Capability.OPTION_VALUES):
        raise ServiceError(f"{question!r} has no option values to rename; change its labels "
                           "instead.", code="no_option_values", extra={"question": question})
    schema = {**locked.schema, "questions": [
        q.schema_with_value_renamed(j, value, to) if j.get("id") == question else j
        for j in locked.schema["questions"]]}
    if schema == locked.schema:
        raise ServiceError(f"{question!r} has no option {value!r}.", code="no_such_option",
                           extra={"question": question, "value": value})
    try:
        parse_schema(schema)
    except SchemaInvalid as exc:
        raise ServiceError(f"{to!r} cannot replace {value!r}: {exc}", code="bad_option_value",
                           extra={"value": to}) from None
    locked.schema = schema
    locked.save(update_fields=["schema", "updated_at"])
    annotations = _rewrite(Annotation.objects.filter(campaign=campaign), "answers", q, value, to)
    gold = _rewrite(Item.objects.filter(campaign=campaign), "gold", q, value, to)
    campaign.refresh_from_db()
    return AnswerMigration.objects.create(
        campaign=campaign, question=question, renamed_to=question, value=value,
        value_renamed_to=to, annotations_changed=annotations, gold_items_changed=gold,
        requested_by=user if getattr(user, "pk", None) else None, requested_via=via)


def _rewrite(queryset, column: str, question, old: str, new: str, batch: int = 1000) -> int:
    """Rewrite the question's answer in every row's JSON column; the number of rows changed."""
    rows = queryset.filter(**{f"{column}__has_key": question.id}).only("pk", column)
    changed, pending = 0, []
    for row in rows.iterator(chunk_size=batch):
        data = getattr(row, column)
        renamed = question.rename_value(data[question.id], old, new)
        if renamed != data[question.id]:
            setattr(row, column, {**data, question.id: renamed})
            pending.append(row)
        if len(pending) >= batch:
            changed += queryset.model.objects.bulk_update(pending, [column])
            pending = []
    if pending:
        changed += queryset.model.objects.bulk_update(pending, [column])
    return changed


# Only these two fixed statements: the table and column are never taken from input.
_RENAME_SQL = {
    table: (f"UPDATE {table} SET {column} = ({column} - %s) || jsonb_build_object(%s, "  # noqa: S608
            f"{column} -> %s) WHERE campaign_id = %s AND {column} ? %s")
    for table, column in (("campaigns_annotation", "answers"), ("campaigns_item", "gold"))
}


def _rename_key(table: str, campaign_id: int, old: str, new: str) -> int:
    # One UPDATE: the tally triggers see the rename as the statement's delete and insert.
    with connection.cursor() as cursor:
        cursor.execute(_RENAME_SQL[table], [old, new, old, campaign_id, old])
        return cursor.rowcount
