"""Conversations in imported items (campaigns/importing/conversations.py): chat fields and chat
outputs from JSON lists, JSON-encoded CSV cells, HH-RLHF transcripts and ShareGPT turns, on
every route (the service, manage.py, the API, the admin form); a malformed turn is refused with
its row, field and turn number, and nothing is stored."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from campaigns.importing import ImportRejected
from campaigns.importing.items import parse_items
from campaigns.models import Item
from campaigns.schema import parse_schema
from campaigns.services.items import items_import
from tests.factories import make_campaign
from tests.shared_data import SHARED, require

CHAT_SCHEMA = {"display": [{"field": "conversation", "label": "Conversation", "format": "chat"}],
               "questions": [{"id": "helpful", "kind": "likert", "text": "Helpful?",
                              "points": [{"value": 1, "label": "No"},
                                         {"value": 2, "label": "Yes"}]}]}
PAIR_SCHEMA = {"outputs_format": "chat",
               "questions": [{"id": "pref", "kind": "pairwise", "text": "Which is better?"}]}
TURNS = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
HH_FILE = "harmless_base_test_first400.jsonl"


def jsonl(*rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def test_a_chat_field_is_read_from_a_json_list_and_from_a_csv_cell():
    schema = parse_schema(CHAT_SCHEMA)
    [item] = parse_items(jsonl({"id": "a", "conversation": TURNS}), "jsonl", schema)
    assert item.data["conversation"] == TURNS
    cell = json.dumps(TURNS).replace('"', '""')
    [item] = parse_items(f'id,conversation\nb,"{cell}"\n'.encode(), "csv", schema)
    assert item.data["conversation"] == TURNS


def test_a_malformed_turn_is_refused_with_its_row_field_and_number():
    bad = [*TURNS, {"role": "assistant", "content": 7}]
    with pytest.raises(ImportRejected) as caught:
        parse_items(jsonl({"id": "a", "conversation": TURNS},
                          {"id": "b", "conversation": bad}), "jsonl", parse_schema(CHAT_SCHEMA))
    assert [str(e) for e in caught.value.errors] == [
        "row 2 (line 2), conversation: turn 3: content must be text"]


def test_outputs_that_are_conversations_are_read_and_checked():
    schema = parse_schema(PAIR_SCHEMA)
    other = [TURNS[0], {"role": "assistant", "content": "Hey."}]
    [item] = parse_items(jsonl({"id": "a", "outputs": [{"system": "x", "messages": TURNS},
                                                       {"system": "y", "messages": other}]}),
                         "jsonl", schema)
    assert item.data["outputs"][1] == {"system": "y", "messages": other}
    # In a CSV, each output:<system> cell holds its conversation as JSON.
    cells = [json.dumps(c).replace('"', '""') for c in (TURNS, other)]
    [item] = parse_items(f'id,output:x,output:y\nb,"{cells[0]}","{cells[1]}"\n'.encode(),
                         "csv", schema)
    assert item.data["outputs"] == [{"system": "x", "messages": TURNS},
                                    {"system": "y", "messages": other}]
    with pytest.raises(ImportRejected, match="row 1 .*, outputs: output 2: messages: turn 1: "
                                             "role 'human'"):
        parse_items(jsonl({"id": "c", "outputs": [
            {"system": "x", "messages": TURNS},
            {"system": "y", "messages": [{"role": "human", "content": "x"}]}]}), "jsonl", schema)


def test_sharegpt_turns_are_read_with_the_option():
    rows = jsonl({"id": "a", "conversation": [{"from": "human", "value": "Hi"},
                                              {"from": "gpt", "value": "Hello!"}]})
    [item] = parse_items(rows, "jsonl", parse_schema(CHAT_SCHEMA), transcripts="sharegpt")
    assert item.data["conversation"] == TURNS
    with pytest.raises(ImportRejected, match="turn 1: a ShareGPT turn"):
        parse_items(rows, "jsonl", parse_schema(CHAT_SCHEMA))
    with pytest.raises(ImportRejected, match="unknown transcripts 'alpaca'"):
        parse_items(rows, "jsonl", parse_schema(CHAT_SCHEMA), transcripts="alpaca")


def hh_rows(n: int) -> bytes:
    folder = SHARED / "realdata" / "chat_preference"
    require(folder)
    return b"\n".join((folder / HH_FILE).read_bytes().splitlines()[:n])


@pytest.mark.django_db
def test_the_hh_rlhf_sample_imports_as_a_chat_pairwise_campaign(owner):
    campaign = make_campaign(owner=owner, schema=PAIR_SCHEMA)
    result = items_import(campaign=campaign, content=hh_rows(400), filename=HH_FILE,
                          transcripts="hh-rlhf")
    assert result.created == 400
    item = campaign.items.get(external_id="hh-1")
    chosen, rejected = item.data["outputs"]
    assert (chosen["system"], rejected["system"]) == ("chosen", "rejected")
    assert chosen["messages"][0] == {"role": "user",
                                     "content": "what are some pranks with a pen i can do?"}
    assert chosen["messages"][:-1] == rejected["messages"][:-1]


@pytest.mark.django_db
def test_manage_py_takes_the_transcripts_option(owner, tmp_path, capsys):
    campaign = make_campaign(owner=owner, schema=PAIR_SCHEMA)
    path = tmp_path / HH_FILE
    path.write_bytes(hh_rows(3))
    # Without the option the rows carry neither ids nor outputs.
    with pytest.raises(CommandError, match=r"row 1 \(line 1\), id: missing"):
        call_command("import_items", campaign.slug, str(path))
    call_command("import_items", campaign.slug, str(path), "--transcripts", "hh-rlhf")
    assert "Imported 3 items" in capsys.readouterr().out


@pytest.mark.django_db
def test_the_api_takes_the_transcripts_option(owner):
    from tests.api.conftest import token_client
    api = token_client(owner)
    campaign = make_campaign(owner=owner, schema=CHAT_SCHEMA)
    url = f"/api/campaigns/{campaign.slug}/items/import/"
    rows = [{"id": "a", "conversation": [{"from": "human", "value": "Hi"},
                                         {"from": "gpt", "value": "Hello!"}]}]
    refused = api.post(url, rows, format="json")
    assert refused.status_code == 400
    assert refused.json()["extra"]["errors"][0]["field"] == "conversation"
    assert api.post(f"{url}?transcripts=sharegpt", rows, format="json").status_code == 201
    upload = SimpleUploadedFile("items.jsonl", jsonl({"id": "b", **rows[0]} | {"id": "b"}))
    response = api.post(url, {"file": upload, "transcripts": "sharegpt"}, format="multipart")
    assert response.status_code == 201, response.json()
    assert campaign.items.get(external_id="b").data["conversation"] == TURNS
    assert api.post(f"{url}?transcripts=nope", rows, format="json").status_code == 400


@pytest.mark.django_db
def test_the_admin_form_takes_the_transcripts_option(researcher_client, owner):
    campaign = make_campaign(owner=owner, schema=PAIR_SCHEMA)
    response = researcher_client.post(
        reverse("admin:campaigns_campaign_import", args=[campaign.pk]),
        {"file": SimpleUploadedFile(HH_FILE, hh_rows(2)), "transcripts": "hh-rlhf"},
        follow=True)
    assert "Imported 2 items" in response.content.decode()
    assert Item.objects.filter(campaign=campaign).count() == 2
