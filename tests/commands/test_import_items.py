"""manage.py import_items reports success or every problem, and stores nothing on failure."""

import pytest
from django.core.management import CommandError, call_command

from campaigns.models import Item

pytestmark = pytest.mark.django_db


def test_it_imports_a_file_and_says_how_many(campaign, tmp_path, capsys):
    path = tmp_path / "items.csv"
    path.write_text("id,prompt,completion\n1,p,c\n2,p,c\n")
    call_command("import_items", campaign.slug, str(path))
    assert "Imported 2 items" in capsys.readouterr().out
    assert Item.objects.filter(campaign=campaign).count() == 2


def test_it_fails_with_the_row_numbered_problems(campaign, tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("id,prompt,completion\n1,p,c\n1,p,c\n")
    with pytest.raises(
        CommandError, match=r"Nothing imported; 1 problem\(s\):\nrow 2 \(line 3\), id"
    ):
        call_command("import_items", campaign.slug, str(path))
    assert not Item.objects.exists()


def test_it_names_an_unknown_campaign_or_file(campaign, tmp_path):
    with pytest.raises(CommandError, match="No campaign with slug 'nope'"):
        call_command("import_items", "nope", str(tmp_path / "x.csv"))
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_items", campaign.slug, str(tmp_path / "missing.csv"))


@pytest.mark.parametrize("completion,message", [
    ("[" * 5000 + "]" * 5000, "nested deeper than 64"),
    ("Infinity", "Infinity is not a JSON value"),
    ("9" * 5000, "an integer of 5000 digits"),
])
def test_refused_json_is_a_one_line_error_not_a_traceback(campaign, tmp_path, completion,
                                                          message):
    path = tmp_path / "items.json"
    path.write_text('[{"id": "1", "prompt": "p", "completion": ' + completion + '}]')
    with pytest.raises(CommandError, match=f"(?s)Nothing imported; 1 problem.*{message}"):
        call_command("import_items", campaign.slug, str(path))
    assert not Item.objects.exists()


def test_the_raw_tsv_format_reads_quotes_as_text(campaign, tmp_path, capsys):
    path = tmp_path / "items.tsv"
    path.write_text('id\tprompt\tcompletion\n1\t"p\tc"\n')
    with pytest.raises(CommandError, match="import it with the format tsv-raw"):
        call_command("import_items", campaign.slug, str(path))
    call_command("import_items", campaign.slug, str(path), "--format", "tsv-raw")
    assert Item.objects.get(campaign=campaign).data == {"prompt": '"p', "completion": 'c"'}
