"""Item import is all-or-nothing, with errors that name the row and the field."""
import json

import pytest

from campaigns.importing import ImportRejected
from campaigns.models import Item
from campaigns.services.items import items_import
from tests.factories import SUMMARY_SCHEMA, TRANSLATION_SCHEMA, make_campaign

pytestmark = pytest.mark.django_db


def rejected(campaign, content: bytes | str, filename: str) -> list[str]:
    if isinstance(content, str):
        content = content.encode("utf-8")
    with pytest.raises(ImportRejected) as info:
        items_import(campaign=campaign, content=content, filename=filename)
    assert Item.objects.filter(campaign=campaign).count() == 0, "a rejected file stored items"
    return [str(e) for e in info.value.errors]


def test_it_imports_csv_with_a_bom_and_keeps_other_columns_as_data(campaign):
    content = "\ufeffid,system,prompt,completion,extra\n1,gpt2,A prompt,A completion,x\n"
    result = items_import(campaign=campaign, content=content.encode(), filename="items.csv")
    assert result.created == 1
    item = Item.objects.get(campaign=campaign)
    assert (item.external_id, item.system) == ("1", "gpt2")
    assert item.data == {"prompt": "A prompt", "completion": "A completion", "extra": "x"}
    assert item.slots_wanted == campaign.annotations_per_item


def test_it_imports_csv_cells_with_embedded_newlines_and_doubled_quotes(campaign):
    content = 'id,prompt,completion\n1,"He said ""hi""\nthen left",done\n2,p,c\n'
    items_import(campaign=campaign, content=content.encode(), filename="x.csv")
    assert Item.objects.get(external_id="1").data["prompt"] == 'He said "hi"\nthen left'


def test_it_imports_tsv_json_and_jsonl(owner):
    rows = [{"id": f"r{n}", "prompt": "p", "completion": "c"} for n in range(3)]
    for name, content in [
        ("a.tsv", "id\tprompt\tcompletion\nr0\tp\tc\nr1\tp\tc\nr2\tp\tc\n"),
        ("a.json", json.dumps(rows)),
        ("a.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n"),
    ]:
        campaign = make_campaign(owner=owner)
        assert items_import(campaign=campaign, content=content.encode(), filename=name).created == 3


def test_it_rejects_text_that_is_not_utf8(campaign):
    errors = rejected(campaign, "id,prompt,completion\n1,caf\xe9,x\n".encode("latin-1"), "a.csv")
    assert errors == ["file: not UTF-8 text: byte 0xe9 on line 2 (save the file as UTF-8)"]


def test_it_rejects_an_empty_file(campaign):
    assert rejected(campaign, "  \n", "a.jsonl") == ["file: the file is empty"]
    assert rejected(campaign, "id,prompt,completion\n", "a.csv") == ["file: the file has no items"]


def test_it_names_the_line_of_a_malformed_json_line_and_stores_nothing(campaign):
    content = '{"id": "1", "prompt": "p", "completion": "c"}\n{"id": "2", "prompt": \n'
    errors = rejected(campaign, content, "a.jsonl")
    assert len(errors) == 1 and errors[0].startswith("row 2 (line 2): malformed JSON")


def test_it_names_the_row_and_field_missing_from_a_row(campaign):
    content = "id,prompt,completion\n1,p,c\n2,p,\n3,,c\n"
    assert rejected(campaign, content, "a.csv") == [
        "row 2 (line 3), completion: missing or empty (the task shows this field)",
        "row 3 (line 4), prompt: missing or empty (the task shows this field)",
    ]


def test_it_rejects_a_row_with_the_wrong_number_of_fields(campaign):
    errors = rejected(campaign, "id,prompt,completion\n1,p,c,extra\n", "a.csv")
    assert errors == ["row 1 (line 2): 4 fields, but the header has 3"]


def test_it_rejects_ids_repeated_within_the_file(campaign):
    content = "id,prompt,completion\n1,p,c\n2,p,c\n1,p,c\n"
    assert rejected(campaign, content, "a.csv") == ["row 3 (line 4), id: '1' repeats row 1"]


def test_it_rejects_ids_that_already_exist_in_the_campaign(campaign):
    items_import(campaign=campaign, content=b"id,prompt,completion\n1,p,c\n", filename="a.csv")
    with pytest.raises(ImportRejected) as info:
        items_import(campaign=campaign, content=b"id,prompt,completion\n2,p,c\n1,p,c\n",
                     filename="a.csv")
    assert [str(e) for e in info.value.errors] == [
        "row 2 (line 3), id: '1' already exists in this campaign"]
    assert list(Item.objects.values_list("external_id", flat=True)) == ["1"]


def test_the_same_id_may_exist_in_another_campaign(owner, campaign):
    other = make_campaign(owner=owner)
    for c in (campaign, other):
        items_import(campaign=c, content=b"id,prompt,completion\n1,p,c\n", filename="a.csv")
    assert Item.objects.filter(external_id="1").count() == 2


def test_it_rejects_a_lines_field_that_yields_no_segments(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    rows = [{"id": "1", "story": "s", "summary": "One. Two."},
            {"id": "2", "story": "s", "summary": "[]"}]
    errors = rejected(campaign, "\n".join(json.dumps(r) for r in rows), "a.jsonl")
    assert errors == ["row 2 (line 2), summary: yields no sentences segments to label"]


def test_a_list_written_as_a_python_literal_becomes_the_segments(owner):
    campaign = make_campaign(owner=owner, schema=SUMMARY_SCHEMA)
    content = "id\tstory\tsummary\n1\ts\t['First line.', \"Second, it's here.\"]\n"
    items_import(campaign=campaign, content=content.encode(), filename="a.tsv")
    assert Item.objects.get().data["summary"] == ["First line.", "Second, it's here."]


def test_it_checks_gold_answers_against_the_schema(owner):
    campaign = make_campaign(owner=owner, schema=TRANSLATION_SCHEMA)
    good = {"id": "g1", "source": "s", "translation": "t", "control": "gold",
            "gold": {"acceptability": 0}, "gold_tolerance": 25}
    bad = {"id": "g2", "source": "s", "translation": "t", "gold": {"acceptability": 150}}
    errors = rejected(campaign, "\n".join(json.dumps(r) for r in (good, bad)), "a.jsonl")
    assert errors == ["row 2 (line 2), gold.acceptability: The score must lie between 0 and 100."]
    items_import(campaign=campaign, content=json.dumps([good]).encode(), filename="a.json")
    item = Item.objects.get()
    assert (item.control, item.gold, item.gold_tolerance, item.slots_wanted) == (
        "gold", {"acceptability": 0}, 25.0, 0)


def test_a_control_item_without_expected_answers_is_rejected(campaign):
    errors = rejected(campaign, "id,prompt,completion,control\n1,p,c,attention\n", "a.csv")
    assert errors == ["row 1 (line 2), gold: a attention item needs expected answers"]


def test_it_reports_every_bad_row_of_a_large_file_but_lists_at_most_a_hundred(campaign):
    content = "id,prompt,completion\n" + "".join(f"{n},p,\n" for n in range(250))
    with pytest.raises(ImportRejected) as info:
        items_import(campaign=campaign, content=content.encode(), filename="a.csv")
    assert info.value.total == 250 and len(info.value.errors) == 100
    assert "... and 150 more" in str(info.value)


def test_an_unknown_extension_is_rejected_before_reading(campaign):
    assert rejected(campaign, "x", "items.xlsx") == [
        "file: unknown file type 'xlsx'; use .csv, .tsv, .json or .jsonl"]


def test_it_rejects_a_nul_character_that_the_database_could_not_store(campaign):
    assert rejected(campaign, 'id,prompt,completion\n1,p,c\n2,"a\x00b",c\n', "a.csv") == [
        "file: a NUL character on line 3"]


def test_tabs_backslashes_and_unicode_survive_the_bulk_path(campaign):
    tricky = 'tab\there \\N back\\slash\r\nnew line "quoted" é 漢字 \U0001f600'
    # Ids cannot hold a tab (a control character); a backslash tests the id column's escaping.
    rows = [{"id": f"t\\{n}", "prompt": tricky, "completion": "c", "system": "s\\1"}
            for n in range(3)]
    items_import(campaign=campaign, content=json.dumps(rows).encode(), filename="a.json")
    item = Item.objects.get(external_id="t\\1")
    assert item.data["prompt"] == tricky and item.system == "s\\1" and item.gold is None
