"""Item files are read as they were written: quote-free TSV (MLQE-PE), UTF-16 with a BOM; what
cannot be read (compressed files) is named; ids and systems are kept whole and visible."""
import gzip
import json
import zipfile
from io import BytesIO

import pytest

from campaigns.importing import FORMATS, ImportRejected, decode, read_records
from campaigns.models import Item
from campaigns.services.items import items_import
from tests.factories import make_campaign
from tests.shared_data import SHARED, require

pytestmark = pytest.mark.django_db

DA = SHARED / "realdata" / "translation_da"
EN_DE = DA / "mlqe-pe_en-de_test20.ende.df.short_first300.tsv"
RU_EN = DA / "mlqe-pe_ru-en_test20.ruen.df.short_first200.tsv"
DA_SCHEMA = {
    "display": [{"field": "original", "label": "Source"},
                {"field": "translation", "label": "MT"}],
    "questions": [{"id": "da", "kind": "slider", "text": "How good?", "min": 0, "max": 100}],
}


def rejected(campaign, content: bytes, filename: str, fmt: str | None = None) -> list[str]:
    with pytest.raises(ImportRejected) as info:
        items_import(campaign=campaign, content=content, filename=filename, fmt=fmt)
    assert not Item.objects.filter(campaign=campaign).exists(), "a rejected file stored items"
    return [str(e) for e in info.value.errors]


def mlqe_with_id_column(path) -> bytes:
    """The sample as an item file: its segment-id column (`index` or `segid`) renamed `id`."""
    header, rest = path.read_bytes().split(b"\n", 1)
    return b"id" + header[header.index(b"\t"):] + b"\n" + rest


# -- quote-free TSV ------------------------------------------------------------------------


def test_raw_tsv_is_one_of_the_formats():
    assert "tsv-raw" in FORMATS


@pytest.mark.parametrize(("path", "rows", "known_id", "field", "text"), [
    (EN_DE, 300, "109", "original",
     '"Interpreting Serials", in his The Limits of Interpretation, pp.'),
    (RU_EN, 200, "10035", "translation",
     '"He himself never used cannabis, meaning he did not smoke it and never used any drugs '
     'at all," the court was told.'),
])
def test_both_mlqe_pe_samples_import_whole_as_raw_tsv(owner, path, rows, known_id, field, text):
    require(DA)
    campaign = make_campaign(owner=owner, schema=DA_SCHEMA)
    result = items_import(campaign=campaign, content=mlqe_with_id_column(path),
                          filename=path.name, fmt="tsv-raw")
    assert result.created == rows
    item = Item.objects.get(campaign=campaign, external_id=known_id)
    assert item.data[field] == text
    assert item.data["scores"].startswith("[")  # the list columns arrive as their text


@pytest.mark.parametrize(("path", "row"), [(EN_DE, 110), (RU_EN, 17)])
def test_a_quoted_parse_of_mlqe_pe_names_the_row_and_suggests_raw_tsv(owner, path, row):
    require(DA)
    campaign = make_campaign(owner=owner, schema=DA_SCHEMA)
    errors = rejected(campaign, mlqe_with_id_column(path), path.name)
    assert len(errors) == 1
    assert errors[0].startswith(f"row {row} ")
    assert "import it with the format tsv-raw" in errors[0]


def test_raw_tsv_reads_the_wmt_mqm_sample_row_for_row():
    """The other quote-free TSV of the folder: 200 rows, each line one record, all 10 columns."""
    require(DA)
    path = DA / "wmt-mqm_ted_ende_first200.tsv"
    text = decode(path.read_bytes())
    records = [record for _, _, record in read_records(text, "tsv-raw")]
    lines = text.splitlines()
    assert len(records) == len(lines) - 1 == 200
    assert all(len(r) == 10 for r in records)
    assert [records[n]["target"] for n in (0, 199)] == [
        lines[1].split("\t")[6], lines[200].split("\t")[6]]


def test_raw_tsv_reads_quotes_as_text_and_cannot_swallow_rows():
    text = 'id\tprompt\n1\t"opens\n2\tcloses"\n3\t"a" b\n'
    records = [r for _, _, r in read_records(text, "tsv-raw")]
    assert records == [{"id": "1", "prompt": '"opens'}, {"id": "2", "prompt": 'closes"'},
                       {"id": "3", "prompt": '"a" b'}]


def test_a_csv_that_breaks_on_a_quote_gets_no_tsv_suggestion(campaign):
    errors = rejected(campaign, b'id,prompt,completion\n1,"a"b,c\n', "a.csv")
    assert "tsv-raw" not in errors[0]


# -- encodings and compression -------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_a_byte_order_mark_are_decoded(campaign, codec):
    text = "id\tprompt\tcompletion\nr1\tCafé «ü»\tЭтот\n"
    content = text.encode(codec)
    if codec != "utf-16" and codec != "utf-32":
        content = "\ufeff".encode(codec) + content  # an explicit BOM in the stated order
    assert items_import(campaign=campaign, content=content, filename="a.tsv").created == 1
    item = Item.objects.get(campaign=campaign)
    assert (item.external_id, item.data["prompt"]) == ("r1", "Café «ü»")


def test_utf16_without_a_byte_order_mark_is_named_not_called_nul_characters(campaign):
    errors = rejected(campaign, "id,prompt,completion\n1,a,b\n".encode("utf-16-le"), "a.csv")
    assert errors == ["file: the file looks like UTF-16 text without a byte-order mark: save it "
                      "as UTF-8 (or as UTF-16 with a BOM)"]


def test_gzip_and_zip_uploads_are_named_as_compressed(campaign):
    plain = b"id,prompt,completion\n1,a,b\n"
    zipped = BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("items.csv", plain)
    for content, what in [(gzip.compress(plain), "gzip-compressed"),
                          (zipped.getvalue(), "a ZIP archive")]:
        errors = rejected(campaign, content, "items.csv")
        assert errors == [f"file: the file is {what}, not text: decompress it and upload the "
                          ".csv, .tsv, .json or .jsonl file inside"]


def test_utf8_still_decodes_with_or_without_its_bom():
    assert decode("\ufeffid\n1\n".encode()) == "id\n1\n"
    assert decode(b"id\n1\n") == "id\n1\n"


# -- ids and systems -----------------------------------------------------------------------


def test_a_system_over_200_characters_is_an_error_with_its_row_not_truncated(campaign):
    long_system = "s" * 201
    content = f"id,system,prompt,completion\n1,ok,a,b\n2,{long_system},a,b\n".encode()
    assert rejected(campaign, content, "a.csv") == ["row 2 (line 3), system: 201 characters; "
                                                     "at most 200"]
    exact = f"id,system,prompt,completion\n1,{'s' * 200},a,b\n".encode()
    items_import(campaign=campaign, content=exact, filename="a.csv")
    assert Item.objects.get(campaign=campaign).system == "s" * 200


@pytest.mark.parametrize(("char", "name"), [
    ("\x1b", "U+001B"), ("\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"), ("\x85", "U+0085"),
    ("\x7f", "U+007F"), ("\u200b", "U+200B (ZERO WIDTH SPACE)"), ("\t", "U+0009"),
])
@pytest.mark.parametrize("field", ["id", "system"])
def test_control_and_bidi_characters_in_ids_and_systems_are_refused_with_row_and_field(
    campaign, char, name, field
):
    row = {"id": "r1", "system": "sys", "prompt": "a", "completion": "b"}
    row[field] = f"x{char}y"
    content = json.dumps([row]).encode()
    errors = rejected(campaign, content, "a.json")
    assert len(errors) == 1
    assert errors[0].startswith(f"row 1, {field}: contains {name}")


def test_tabs_and_line_breaks_stay_allowed_in_text_fields(campaign):
    content = b'[{"id": "r1", "prompt": "a\\tb\\nc", "completion": "d"}]'
    items_import(campaign=campaign, content=content, filename="a.json")
    assert Item.objects.get(campaign=campaign).data["prompt"] == "a\tb\nc"
