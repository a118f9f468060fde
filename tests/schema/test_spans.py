"""The `spans` kind: settings, answers (offsets into the field's exact text), exports, judges."""
import json
import random
from collections import Counter

import pytest
from django.http import QueryDict

from campaigns.schema import parse_schema, validate_answers, validate_schema
from campaigns.schema.base import AnswerInvalid
from tests.factories import ESA_SCHEMA, MQM_SCHEMA

# Code points, not bytes or UTF-16 units: "ü" is one, the emoji one (two in JavaScript).
TARGET = "Der Hund 🐕 läuft über die Straße, der Hund bellt."
DATA = {"source": "The dog runs across the street, the dog barks.", "target": TARGET}


def esa():
    return parse_schema(ESA_SCHEMA).question("errors")


def mqm():
    return parse_schema(MQM_SCHEMA).question("mqm")


def span(text, severity="minor", category=None, occurrence=0, **extra):
    start = -1
    for _ in range(occurrence + 1):
        start = TARGET.index(text, start + 1)
    return {"start": start, "end": start + len(text), "text": text, "severity": severity,
            "category": category, **extra}


def issues(schema):
    return {i.path: i.message for i in validate_schema(schema)}


def with_question(**changes):
    question = {**ESA_SCHEMA["questions"][0], **changes}
    return {"questions": [question]}


# --- settings ---------------------------------------------------------------------------------

def test_the_esa_and_mqm_schemas_are_valid():
    assert validate_schema(ESA_SCHEMA) == []
    assert validate_schema(MQM_SCHEMA) == []


def test_a_field_and_at_least_one_severity_are_required():
    found = issues({"questions": [{"id": "e", "kind": "spans", "text": "?"}]})
    assert found["questions[0].field"] == "Field required"
    assert found["questions[0].severities"] == "Field required"
    assert "at least 1 item" in issues(with_question(severities=[]))["questions[0].severities"]


@pytest.mark.parametrize(("changes", "message"), [
    ({"severities": [{"value": "minor", "label": "a"}, {"value": "minor", "label": "b"}]},
     "severity values must be distinct; repeated: minor"),
    ({"categories": [{"value": "x", "label": "X", "weights": {"huge": 3}}]},
     "category 'x': weights name unknown severities huge"),
    ({"categories": [{"value": "x", "label": "X", "weights": {"minor": -1}}]},
     "category 'x': weights must not be negative (minor)"),
    ({"require_category": True}, "require_category needs a list of categories"),
    ({"source_field": "target"}, "source_field must differ from field"),
])
def test_inconsistent_settings_are_refused_at_the_question_path(changes, message):
    assert issues(with_question(**changes))["questions[0]"] == message


def test_bad_setting_values_name_their_path():
    found = issues(with_question(max_spans=0, severities=[{"value": "m", "label": "M",
                                                           "weight": -2}], colour="red"))
    assert "greater than or equal to 1" in found["questions[0].max_spans"]
    assert "greater than or equal to 0" in found["questions[0].severities[0].weight"]
    assert found["questions[0].colour"] == "unknown setting"


def test_the_item_must_carry_the_marked_field_and_the_source_field_as_text():
    schema = parse_schema(ESA_SCHEMA)
    assert schema.item_fields == ["source", "target"]
    assert esa().prepare_item({"target": ["a", "list"]}) == {
        "target": "a spans question marks text: expected a string"}
    assert esa().prepare_item(dict(DATA)) == {}


def test_weights_come_from_the_category_where_it_sets_one():
    q = mqm()
    assert q.weight("major", "accuracy/mistranslation") == 5
    assert q.weight("minor", "fluency/punctuation") == 0.1
    assert q.weight("major", "fluency/punctuation") == 5
    assert q.weight("minor", "non-translation") == 25
    assert q.weight("critical", None) == 25


# --- answers ----------------------------------------------------------------------------------

def test_spans_are_stored_sorted_with_their_text_and_a_null_category():
    answer = [span("bellt", "major"), span("Hund", occurrence=0), span("🐕")]
    cleaned = validate_answers(parse_schema(ESA_SCHEMA), {"errors": answer, "score": 40},
                               DATA)["errors"]
    assert cleaned == [span("Hund"), span("🐕"), span("bellt", "major")]
    assert [TARGET[s["start"]:s["end"]] for s in cleaned] == ["Hund", "🐕", "bellt"]
    # Offsets count code points: the emoji is one character, "ü" of "über" too.
    assert cleaned[1]["start"] == 9 and cleaned[1]["end"] == 10


def test_an_empty_list_means_no_errors_and_is_an_answer():
    assert validate_answers(parse_schema(ESA_SCHEMA), {"errors": [], "score": 90},
                            DATA)["errors"] == []
    with pytest.raises(AnswerInvalid) as exc:
        validate_answers(parse_schema(ESA_SCHEMA), {"score": 90}, DATA)
    assert exc.value.errors == {"errors": "Please answer this question."}


def test_a_span_may_be_given_by_its_text_alone_when_it_occurs_once():
    q = esa()
    assert q.validate_answer([{"text": "bellt", "severity": "minor"}], DATA) == [span("bellt")]
    assert q.validate_answer([{"text": "Hund", "start": TARGET.rindex("Hund"),
                               "severity": "minor"}], DATA) == [span("Hund", occurrence=1)]
    with pytest.raises(AnswerInvalid) as exc:
        q.validate_answer([{"text": "Hund", "severity": "minor"}], DATA)
    assert exc.value.errors == {"errors.1": "Span 1: “Hund” occurs more than once in the "
                                            "text; give its start."}
    with pytest.raises(AnswerInvalid, match="occurs more than once"):  # overlapping occurrences
        q.validate_answer([{"text": "aa", "severity": "minor"}], {"target": "aaa"})


@pytest.mark.parametrize(("entry", "message"), [
    ({**span("Hund"), "text": "Katze"}, "the text at 4-8 is “Hund”, not “Katze”."),
    ({**span("Hund"), "end": 9}, "the text at 4-9 is “Hund ”, not “Hund”."),
    ({**span("Hund"), "start": -1}, "the offsets -1-8 lie outside the text (0-49)."),
    ({**span("bellt"), "end": 99}, "the offsets 43-99 lie outside the text (0-49)."),
    ({**span("Hund"), "start": "4"}, "start and end must be whole numbers."),
    ({**span("Hund"), "start": True}, "start and end must be whole numbers."),
    ({**span("Hund"), "start": 4.0}, "start and end must be whole numbers."),
    ({**span("Hund"), "text": ""}, "the marked text is missing."),
    ({**span("Hund"), "severity": "fatal"}, "the severity must be one of minor, major."),
    ({**span("Hund"), "severity": ""}, "choose a severity."),
    ({**span("Hund"), "category": "fluency/grammar"}, "this question asks for no category."),
    ({**span("Hund"), "colour": "red"}, 'expected an object with "start", "end", "text", '
                                        '"severity" and "category".'),
    ("Hund", 'expected an object with "start", "end", "text", "severity" and "category".'),
    ({"end": 8, "text": "Hund", "severity": "minor"}, "give start with end."),
    ({"start": 3, "end": 4, "text": " ", "severity": "minor"},
     "a span must mark a word or more, not only white space."),
])
def test_a_bad_span_is_refused_naming_it_and_why(entry, message):
    with pytest.raises(AnswerInvalid) as exc:
        esa().validate_answer([span("bellt"), entry], DATA)
    assert exc.value.errors == {"errors.2": f"Span 2: {message}"}


def test_overlapping_spans_are_refused_unless_allowed():
    overlapping = [span("Hund 🐕"), span("🐕 läuft", "major")]
    with pytest.raises(AnswerInvalid) as exc:
        esa().validate_answer(overlapping, DATA)
    assert exc.value.errors == {"errors": "Spans may not overlap: “Hund 🐕” (4-10) and "
                                          "“🐕 läuft” (9-16)."}
    touching = [span("Hund"), span(" 🐕")]
    assert len(esa().validate_answer(touching, DATA)) == 2
    allowed = parse_schema(with_question(allow_overlap=True)).questions[0]
    assert len(allowed.validate_answer(overlapping, DATA)) == 2


def test_the_same_span_twice_is_refused_even_where_overlap_is_allowed():
    allowed = parse_schema(with_question(allow_overlap=True)).questions[0]
    with pytest.raises(AnswerInvalid) as exc:
        allowed.validate_answer([span("Hund"), span("Hund")], DATA)
    assert "is marked twice with the same labels" in exc.value.errors["errors"]
    # The same words with two different labels are two errors (MQM marks them so).
    assert len(allowed.validate_answer([span("Hund"), span("Hund", "major")], DATA)) == 2


def test_categories_come_from_the_schema_and_are_required_when_it_says_so():
    q = mqm()
    good = span("bellt", "critical", "accuracy/mistranslation")
    assert q.validate_answer([good], DATA) == [good]
    for entry, message in [({**good, "category": None}, "choose a category."),
                           ({**good, "category": "style"}, "“style” is not one of the "
                                                           "categories.")]:
        with pytest.raises(AnswerInvalid) as exc:
            q.validate_answer([entry], DATA)
        assert exc.value.errors == {"mqm.1": f"Span 1: {message}"}
    optional = parse_schema(with_question(categories=MQM_SCHEMA["questions"][0]["categories"][:3]))
    assert optional.questions[0].validate_answer([span("bellt")], DATA)[0]["category"] is None


def test_at_most_max_spans_are_taken():
    q = parse_schema(with_question(max_spans=2)).questions[0]
    with pytest.raises(AnswerInvalid) as exc:
        q.validate_answer([span("Der"), span("Hund"), span("bellt")], DATA)
    assert exc.value.errors == {"errors": "At most 2 spans, please (3 marked)."}


@pytest.mark.parametrize("raw", [{"start": 0}, 5, "not json", "[[[[", '{"a": 1}'])
def test_anything_but_a_list_of_spans_is_refused(raw):
    with pytest.raises(AnswerInvalid) as exc:
        esa().validate_answer(raw, DATA)
    assert set(exc.value.errors) == {"errors"}


def test_the_page_posts_the_spans_as_json_in_one_field():
    q = esa()
    post = QueryDict(mutable=True)
    post["q-errors"] = json.dumps([span("bellt")])
    assert q.form_value(post, "q-errors") == [span("bellt")]
    post["q-errors"] = "[" * 100000  # deeper than the parser goes: kept as text, then refused
    assert isinstance(q.form_value(post, "q-errors"), str)
    assert q.form_value(QueryDict(), "q-errors") is None


def test_the_widget_shows_the_valid_spans_of_a_refused_answer_with_their_labels():
    q = mqm()
    posted = [span("bellt", "major", "fluency/grammar"), {**span("Hund"), "text": "Katze"}]
    extra = q.widget(posted, DATA, {"1": "Span 2: wrong"})
    assert extra["text"] == TARGET
    assert json.loads(extra["value"]) == [posted[0]]
    assert extra["spans"][0]["severity_label"] == "Major"
    assert extra["spans"][0]["category_label"] == "Fluency / Grammar"
    assert [s["value"] for s in extra["severities"]] == ["minor", "major", "critical"]
    assert extra["errors"] == ["Span 2: wrong"]


# --- exports, dashboard, renames ----------------------------------------------------------------

def test_the_atoms_are_the_spans_how_many_and_how_many_of_each_severity():
    q = mqm()
    answer = [span("Hund", "minor", "fluency/grammar"), span("bellt", "critical",
                                                             "non-translation")]
    assert q.parts() == ["spans", "n_spans", "n_minor", "n_major", "n_critical"]
    assert q.atoms(answer) == [("spans", json.dumps(answer, ensure_ascii=False)),
                               ("n_spans", 2), ("n_minor", 1), ("n_major", 0), ("n_critical", 1)]
    assert q.atoms([]) == [("spans", "[]"), ("n_spans", 0), ("n_minor", 0), ("n_major", 0),
                           ("n_critical", 0)]
    assert q.is_free_text("spans") and not q.is_free_text("n_major")


def test_the_dashboard_counts_spans_per_answer_by_severity_and_by_category():
    q, counter = mqm(), Counter()
    q.dashboard_count([span("Hund", "minor", "fluency/grammar"),
                       span("bellt", "minor", "fluency/grammar")], counter, 1)
    q.dashboard_count([], counter, 1)
    assert counter["#answers"] == 2
    assert counter[("severity", "minor")] == 2
    assert counter[("category", "fluency/grammar")] == 2
    by_severity, by_category = q.dashboard_charts()
    assert by_severity.mean_of == "#answers" and by_category.suffix == ".categories"
    assert [label for _, label in by_severity.categories] == ["Minor", "Major", "Critical"]


def test_a_severity_or_category_renamed_is_renamed_in_answers_and_weights():
    q = mqm()
    answer = [span("Hund", "minor", "fluency/grammar")]
    assert q.rename_value(answer, "minor", "small")[0]["severity"] == "small"
    assert q.rename_value(answer, "fluency/grammar", "grammar")[0]["category"] == "grammar"
    renamed = q.schema_with_value_renamed(MQM_SCHEMA["questions"][0], "minor", "small")
    assert renamed["severities"][0]["value"] == "small"
    assert renamed["categories"][2]["weights"] == {"small": 0.1}


# --- simulated workers and LLM judges -------------------------------------------------------

def test_example_answers_are_valid_and_meet_the_json_schema():
    import jsonschema

    q, rng = mqm(), random.Random(3)
    for _ in range(30):
        cleaned = q.validate_answer(q.example_answer(DATA, rng), DATA)
        jsonschema.validate(cleaned, q.json_schema(DATA))
        jsonschema.validate(cleaned, q.json_schema(None))


def test_a_judge_reads_the_text_the_labels_and_the_answer_format():
    q = mqm()
    section = q.prompt_section(DATA)
    assert f'"""\n{TARGET}\n"""' in section
    assert "- critical = Critical" in section
    assert "Give each span a category:\n- accuracy/mistranslation" in section
    assert '"severity": "minor" | "major" | "critical"' in q.prompt_answer(DATA)
    schema = q.json_schema(DATA)
    assert schema["items"]["required"] == ["text", "severity", "category"]
    assert schema["items"]["properties"]["end"]["maximum"] == len(TARGET)


# --- stored answers: the dashboard, the exports and the statistics ----------------------------

def mqm_annotations(owner):
    from tests.exports.conftest import make_annotation
    from tests.factories import make_campaign

    campaign = make_campaign(owner=owner, schema=MQM_SCHEMA)
    answers = {"mt-a": [[span("Hund", "major", "accuracy/mistranslation"),
                         span("bellt", "minor", "fluency/punctuation")], []],
               "mt-b": [[span("Straße", "critical", "non-translation")],
                        [span("Der", "minor", "fluency/grammar")]]}
    for system, given in answers.items():
        for n, answer in enumerate(given):
            make_annotation(campaign, item=f"{system}-{n}", system=system, data=DATA,
                            platform_id=f"W{n}", answers={"mqm": answer})
    return campaign


@pytest.mark.django_db
def test_the_dashboard_shows_spans_per_answer_by_severity_per_system(owner):
    from campaigns.selectors.dashboard import score_distributions

    severity, category = score_distributions(campaign=mqm_annotations(owner))
    assert severity.kind == "mean" and severity.labels == ["Minor", "Major", "Critical"]
    assert severity.series == {"mt-a": [0.5, 0.5, 0], "mt-b": [0.5, 0, 0.5]}
    assert category.series["mt-b"] == [0, 1, 0, 1]


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["csv", "csv-long", "jsonl"])
def test_every_export_carries_the_spans_and_their_counts(owner, settings, tmp_path, fmt,
                                                         django_capture_on_commit_callbacks,
                                                         celery_eager):
    import csv
    import io

    from campaigns.services.exports import export_job_create
    from tests.exports.conftest import read_export

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = mqm_annotations(owner)
    with django_capture_on_commit_callbacks(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt=fmt, options={})
    text = read_export(job)
    if fmt == "jsonl":
        stored = {r["item_id"]: r["answers"]["mqm"] for r in map(json.loads, text.splitlines())}
        assert stored["mt-b-0"] == [span("Straße", "critical", "non-translation")]
        return
    rows = list(csv.DictReader(io.StringIO(text)))
    if fmt == "csv":
        row = next(r for r in rows if r["item_id"] == "mt-a-0")
        assert json.loads(row["mqm.spans"]) == [
            span("Hund", "major", "accuracy/mistranslation"),
            span("bellt", "minor", "fluency/punctuation")]
        assert (row["mqm.n_spans"], row["mqm.n_minor"], row["mqm.n_major"],
                row["mqm.n_critical"]) == ("2", "1", "1", "0")
    else:
        parts = {r["part"] for r in rows}
        assert {"spans", "n_spans", "n_minor", "n_major", "n_critical"} <= parts


@pytest.mark.django_db
def test_the_statistics_read_the_span_counts_and_leave_the_spans_json_alone(owner):
    from campaigns.selectors.analysis import campaign_statistics

    stats = campaign_statistics(campaign=mqm_annotations(owner), n_boot=20)
    text = json.dumps(stats, default=str)
    assert "mqm.spans" not in text and '"spans"' not in text


def test_the_spans_cell_has_one_key_order_so_a_gold_answer_compares_equal():
    from types import SimpleNamespace

    from campaigns.schema.scoring import control_passed

    schema = parse_schema(ESA_SCHEMA)
    gold = [span("Hund", "major")]
    item = SimpleNamespace(gold={"errors": gold}, gold_tolerance=None)
    from_database = [dict(reversed(list(s.items()))) for s in gold]  # jsonb reorders keys
    assert control_passed(schema, item, {"errors": from_database}) is True
    assert control_passed(schema, item, {"errors": [span("Hund")]}) is False
    assert dict(esa().atoms(from_database))["spans"] == dict(esa().atoms(gold))["spans"]


def test_a_judges_response_naming_spans_by_their_text_is_stored_with_offsets():
    from types import SimpleNamespace

    from campaigns.judging.outputs import OutputInvalid, output_answers
    from campaigns.judging.prompts import answer_format

    schema, item = parse_schema(MQM_SCHEMA), SimpleNamespace(data=DATA, control="")
    assert '"mqm": a list (maybe empty) of objects {"text": "<exact words>"' in answer_format(
        schema, DATA)
    response = ('```json\n{"mqm": [{"text": "bellt", "severity": "major", "category": '
                '"fluency/grammar"}, {"text": "Hund", "start": 38, "severity": "minor", '
                '"category": "accuracy/mistranslation"}]}\n```')
    assert output_answers(schema, item, response)["answers"]["mqm"] == [
        span("Hund", "minor", "accuracy/mistranslation", occurrence=1),
        span("bellt", "major", "fluency/grammar")]
    with pytest.raises(OutputInvalid, match="“Hund” occurs more than once in the text"):
        output_answers(schema, item, '{"mqm": [{"text": "Hund", "severity": "minor", '
                                     '"category": "fluency/grammar"}]}')


def test_every_error_of_the_wmt_mqm_sample_is_a_valid_span_of_its_segment():
    """Google's WMT MQM annotations (TED en-de, one row per error, the span tagged <v>...</v>
    in the target) validate as spans at the offsets of the untagged target."""
    import csv
    import re

    from tests.shared_data import SHARED, require

    folder = SHARED / "realdata" / "translation_da"
    require(folder)
    with open(folder / "wmt-mqm_ted_ende_first200.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    categories = sorted({r["category"] for r in rows} - {"No-error"})
    schema = parse_schema({"questions": [{
        "id": "mqm", "kind": "spans", "text": "Errors", "field": "target",
        "require_category": True, "allow_overlap": True,  # WMT raters' errors overlap
        "severities": [{"value": "Minor", "label": "Minor"},
                       {"value": "Major", "label": "Major", "weight": 5}],
        "categories": [{"value": c, "label": c} for c in categories]}]})
    segments: dict[tuple, dict] = {}
    for r in rows:
        target = r["target"].replace("<v>", "").replace("</v>", "")
        segment = segments.setdefault((r["system"], r["seg_id"], r["rater"]),
                                      {"target": target, "spans": []})
        assert segment["target"] == target
        tagged = re.search(r"<v>(.*?)</v>", r["target"])
        if tagged:
            start = tagged.start()
            segment["spans"].append({"start": start, "end": start + len(tagged[1]),
                                     "text": tagged[1], "severity": r["severity"],
                                     "category": r["category"]})
    counted = 0
    for segment in segments.values():
        cleaned = validate_answers(schema, {"mqm": segment["spans"]},
                                   {"target": segment["target"]})["mqm"]
        assert sorted(map(str, cleaned)) == sorted(map(str, segment["spans"]))
        counted += len(cleaned)
    assert counted == sum(1 for r in rows if "<v>" in r["target"]) == 106
    with pytest.raises(AnswerInvalid, match="Spans may not overlap"):
        no_overlap = parse_schema({"questions": [{**schema.questions[0].model_dump(),
                                                  "allow_overlap": False}]})
        for segment in segments.values():
            validate_answers(no_overlap, {"mqm": segment["spans"]}, segment)
