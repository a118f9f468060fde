"""Conversations (campaigns/schema/conversations.py): reading the three transcript shapes,
refusing a malformed turn by its number, shared turns and the judge's transcript."""
import json

import pytest

from campaigns.schema import parse_schema, validate_schema
from campaigns.schema.conversations import (
    ConversationInvalid,
    hh_rlhf_turns,
    read_conversation,
    shared_turns,
    transcript,
)
from campaigns.schema.outputs import outputs_prompt, read_outputs
from tests.shared_data import SHARED, require

TURNS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello!"}]


def test_a_messages_list_and_a_json_cell_read_the_same():
    assert read_conversation(TURNS) == TURNS
    assert read_conversation(json.dumps(TURNS)) == TURNS


@pytest.mark.parametrize(("value", "message"), [
    ([], "expected a non-empty list"),
    ([{"role": "user", "content": "Hi"}, {"role": "bot", "content": "x"}],
     "turn 2: role 'bot' is not one of system, user, assistant, tool"),
    ([{"role": "user", "content": ["part"]}], "turn 1: content must be text"),
    ([{"role": "user", "content": "a"}, "b"], "turn 2: expected an object"),
    ([{"role": "user", "content": "a", "tone": "x"}], "turn 1: unknown key 'tone'"),
    ([{"from": "human", "value": "a"}], "a ShareGPT turn"),
    ("not json", "in a CSV or TSV cell, the list written as JSON"),
    ("\n\nHuman: hi\n\nAssistant: hello", "import with transcripts hh-rlhf"),
])
def test_a_malformed_conversation_is_refused_naming_the_turn(value, message):
    with pytest.raises(ConversationInvalid, match=None) as caught:
        read_conversation(value)
    assert message in str(caught.value)


def test_sharegpt_turns_become_messages():
    turns = [{"from": "system", "value": "Be brief."}, {"from": "human", "value": "Hi"},
             {"from": "gpt", "value": "Hello!"}]
    assert read_conversation(turns, "sharegpt") == TURNS
    with pytest.raises(ConversationInvalid, match="turn 2: from 'bard2'"):
        read_conversation([turns[1], {"from": "bard2", "value": "x"}], "sharegpt")


def test_hh_rlhf_transcripts_split_only_at_turn_markers():
    text = ("\n\nHuman: Is this fine?\n\nHuman: said nobody. Also Assistant: inline\n\n"
            "Assistant: Yes.\n\nIt is.")
    assert hh_rlhf_turns(text) == [
        {"role": "user", "content": "Is this fine?"},
        {"role": "user", "content": "said nobody. Also Assistant: inline"},
        {"role": "assistant", "content": "Yes.\n\nIt is."}]
    with pytest.raises(ConversationInvalid, match="starts with"):
        hh_rlhf_turns("Hello\n\nHuman: hi")


def test_every_real_hh_rlhf_row_reads_with_its_shared_turns():
    folder = SHARED / "realdata" / "chat_preference"
    require(folder)
    rows = [json.loads(line) for line in (folder / "harmless_base_test_first400.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    for row in rows:
        chosen = read_conversation(row["chosen"], "hh-rlhf")
        rejected = read_conversation(row["rejected"], "hh-rlhf")
        n = shared_turns([chosen, rejected])
        assert chosen[:n] == rejected[:n] and n < min(len(chosen), len(rejected))
        assert {t["role"] for t in chosen} <= {"user", "assistant"}
    first = read_conversation(rows[0]["chosen"], "hh-rlhf")
    assert first[0] == {"role": "user", "content": "what are some pranks with a pen i can do?"}


def test_shared_turns_leave_each_conversation_a_turn_of_its_own():
    other = [*TURNS[:2], {"role": "assistant", "content": "Hey."}]
    assert shared_turns([TURNS, other]) == 2
    assert shared_turns([TURNS, TURNS]) == 2
    assert shared_turns([TURNS]) == 0


def test_outputs_may_be_conversations():
    stored, problem = read_outputs([{"system": "a", "messages": TURNS},
                                    {"system": "b", "text": "Hey."}])
    assert problem is None and stored[0]["messages"] == TURNS
    _, problem = read_outputs([{"system": "a", "messages": [{"role": "x", "content": ""}]}])
    assert problem == "output 1: messages: turn 1: role 'x' is not one of system, user, " \
                      "assistant, tool"


def test_the_judge_reads_a_role_labelled_transcript_with_the_shared_turns_once():
    assert transcript(TURNS[1:], {"user": "Customer", "assistant": "Agent"}) == \
        "Customer: Hi\n\nAgent: Hello!"
    other = [*TURNS[:2], {"role": "assistant", "content": "Hey."}]
    prompt = outputs_prompt([{"system": "a", "messages": TURNS},
                             {"system": "b", "messages": other}], ["Response A", "Response B"])
    assert prompt == ("The conversation so far:\nSystem: Be brief.\n\nUser: Hi\n\n"
                      "Response A (how the conversation continues):\nAssistant: Hello!\n\n"
                      "Response B (how the conversation continues):\nAssistant: Hey.")


def test_the_schema_settings_have_json_paths():
    schema = {"display": [{"field": "c", "format": "chat"}, {"field": "d", "format": "markdown"}],
              "questions": [{"id": "p", "kind": "pairwise", "text": "?"}],
              "outputs_format": "chat", "role_labels": {"user": "Customer"},
              "text_direction": "rtl"}
    parsed = parse_schema(schema)
    assert parsed.role_labels.user == "Customer" and parsed.role_labels.assistant == "Assistant"
    found = {i.path: i.message for i in validate_schema({
        **schema, "outputs_format": "html", "role_labels": {"bot": "B"},
        "text_direction": "up", "display": [{"field": "c", "format": "rich"}]})}
    assert found == {
        "outputs_format": "Input should be 'text', 'markdown' or 'chat'",
        "role_labels.bot": "unknown setting",
        "text_direction": "Input should be 'auto', 'ltr' or 'rtl'",
        "display[0].format": "Input should be 'text', 'markdown', 'chat', 'lines', 'pre' or "
                             "'image'"}
