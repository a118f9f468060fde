"""LLM-judge import: all or nothing, row-numbered errors, updates on re-import, no item slots."""
import pytest
from django.core.management import CommandError, call_command

from campaigns.importing import ImportRejected
from campaigns.models import Annotation, Assignment, AssignmentItem, Item, Worker
from campaigns.services.judgments import JudgmentRow, judgments_import, read_judgment_file
from tests.analysis.helpers import add_item
from tests.factories import RUBRIC_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db

ALL_ONES = "{" + ", ".join(f'"{n}": 1' for n in range(1, 16)) + "}"


@pytest.fixture
def rubric(owner):
    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    for n in range(1, 4):
        add_item(campaign, f"a{n}", system="s")
    return campaign


def _csv(*rows):
    lines = ["item,judge,output"] + [",".join(f'"{c}"' for c in (i, j, o.replace('"', '""')))
                                     for i, j, o in rows]
    return "\n".join(lines).encode()


def test_it_stores_each_judgment_as_an_annotation_of_an_llm_worker(rubric):
    content = _csv(("a1", "gpt-4", f"Sure!\n```json\n{ALL_ONES}\n```"),
                   ("a2", "gpt-4", ALL_ONES.replace('"15": 1', '"15": 0')),
                   ("a1", "llama-3", ALL_ONES.replace('"', "")))
    result = judgments_import(campaign=rubric, rows=read_judgment_file(content, "j.csv"))
    assert (result.created, result.updated, result.judges) == (3, 0, ["gpt-4", "llama-3"])
    gpt = Worker.objects.get(campaign=rubric, platform="llm", platform_id="gpt-4")
    answers = Annotation.objects.get(worker=gpt, item__external_id="a2").answers
    assert answers["rubric"]["C15"] == 0 and answers["rubric"]["total"] == 14
    assignment = Assignment.objects.get(worker=gpt)
    assert assignment.status == "submitted" and assignment.submitted_at is not None
    assert list(AssignmentItem.objects.filter(assignment=assignment).values_list(
        "position", "holds_slot")) == [(1, False), (2, False)]
    # Judges never take a human slot.
    assert set(Item.objects.values_list("slots_taken", "annotations_done")) == {(0, 0)}


def test_bad_rows_are_reported_by_row_and_nothing_is_stored(rubric):
    rows = [
        JudgmentRow(1, "a1", "gpt-4", ALL_ONES),
        JudgmentRow(2, "a2", "gpt-4", "I refuse."),
        JudgmentRow(3, "a3", "gpt-4", ALL_ONES.replace('"9": 1', '"9": 3')),
        JudgmentRow(4, "zz", "gpt-4", ALL_ONES),
        JudgmentRow(5, "a1", "gpt-4", ALL_ONES),
        JudgmentRow(6, "a3", "other", '{"1": 1}'),
    ]
    with pytest.raises(ImportRejected) as caught:
        judgments_import(campaign=rubric, rows=rows)
    errors = [(e.row, e.field) for e in caught.value.errors]
    assert errors[:4] == [(2, "output"), (3, "output.rubric.C9"), (4, "item"), (5, "item")]
    assert (6, "output.rubric.C2") in errors
    assert "0 to 2 points (3 given)" in str(caught.value)
    assert "a1" in str(caught.value) and "row 1" in str(caught.value)
    assert not Annotation.objects.exists() and not Worker.objects.exists()


def test_a_judge_name_with_a_control_or_bidi_character_is_refused(rubric):
    rows = [JudgmentRow(1, "a1", "gpt-4", ALL_ONES),
            JudgmentRow(2, "a2", "gpt\u202e4", ALL_ONES),
            JudgmentRow(3, "a3", "gpt\x1b[31m", ALL_ONES)]
    with pytest.raises(ImportRejected) as caught:
        judgments_import(campaign=rubric, rows=rows)
    assert [(e.row, e.field) for e in caught.value.errors] == [(2, "judge"), (3, "judge")]
    assert "U+202E" in str(caught.value) and "U+001B" in str(caught.value)
    assert not Annotation.objects.exists() and not Worker.objects.exists()


def test_reimporting_updates_instead_of_duplicating(rubric):
    judgments_import(campaign=rubric, rows=[JudgmentRow(1, "a1", "gpt-4", ALL_ONES)])
    zeros = ALL_ONES.replace(": 1", ": 0")
    result = judgments_import(campaign=rubric, rows=[JudgmentRow(1, "a1", "gpt-4", zeros),
                                                     JudgmentRow(2, "a2", "gpt-4", zeros)])
    assert (result.created, result.updated) == (1, 1)
    assert Annotation.objects.count() == 2 and Assignment.objects.count() == 1
    assert Annotation.objects.get(item__external_id="a1").answers["rubric"]["total"] == 0
    assert list(AssignmentItem.objects.values_list("position", flat=True)) == [1, 2]


def test_a_file_without_a_judge_column_takes_the_judge_option(rubric, tmp_path):
    path = tmp_path / "gpt.jsonl"
    path.write_text('{"item": "a1", "output": {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1, '
                    '"7": 1, "8": 1, "9": 2, "10": 2, "11": 2, "12": 2, "13": 1, "14": 1, '
                    '"15": 1}}\n')
    call_command("import_judgments", rubric.slug, str(path), "--judge", "gpt-4o")
    assert Annotation.objects.get().answers["rubric"]["total"] == 19
    with pytest.raises(CommandError, match="missing judge"):
        call_command("import_judgments", rubric.slug, str(path))
    with pytest.raises(CommandError, match="No campaign"):
        call_command("import_judgments", "nope", str(path))


def test_expert_scores_can_be_imported_as_a_human_worker(rubric):
    judgments_import(campaign=rubric, rows=[JudgmentRow(1, "a1", "expert", ALL_ONES)],
                     platform="account")
    assert Worker.objects.get().platform == "account"
    with pytest.raises(ImportRejected, match="unknown platform"):
        judgments_import(campaign=rubric, rows=[], platform="human")


@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_of_one_judge_share_one_assignment(owner):
    import threading

    from django.db import connection

    campaign = make_campaign(owner=owner, schema=RUBRIC_SCHEMA)
    for n in range(1, 4):
        add_item(campaign, f"a{n}")
    # The judge exists already (an earlier import was deleted): nothing else serialises them.
    Worker.objects.create(campaign=campaign, platform="llm", platform_id="gpt-4")
    rows = [JudgmentRow(n, f"a{n}", "gpt-4", ALL_ONES) for n in range(1, 4)]
    barrier, errors = threading.Barrier(4), []

    def run():
        try:
            barrier.wait()
            judgments_import(campaign=campaign, rows=rows)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Assignment.objects.filter(worker__platform_id="gpt-4").count() == 1
    assert Annotation.objects.count() == 3
