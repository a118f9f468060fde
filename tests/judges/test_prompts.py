"""The prompt and the JSON Schema a judge gets, generated from each seed campaign's schema."""
import os
import random
from pathlib import Path

import jsonschema
import pytest

from campaigns.judging.prompts import (
    PromptTemplateInvalid,
    answers_json_schema,
    compile_template,
    prompt_hash,
)
from campaigns.models import Annotation, Judge
from campaigns.schema import parse_schema, validate_answers
from campaigns.selectors.judges import judge_prompt_preview
from campaigns.services.judges import judge_create
from campaigns.services.seeds import SEED_SLUGS, seed_campaigns_load
from campaigns.work import answer_values

pytestmark = pytest.mark.django_db
SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
def all_seeds(owner):
    return {c.slug: c for c, _ in seed_campaigns_load(owner=owner, slugs=SEED_SLUGS)}


def _judge(campaign, **values):
    return judge_create(campaign=campaign, name="judge", model="m", **values)


@pytest.mark.parametrize("slug", SEED_SLUGS)
def test_the_default_prompt_of_each_seed_matches_its_reviewed_snapshot(all_seeds, slug):
    campaign = all_seeds[slug]
    item = campaign.items.filter(control="").order_by("id").first()
    preview = judge_prompt_preview(_judge(campaign), item)
    snapshot = SNAPSHOTS / f"{slug}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(preview.prompt, encoding="utf-8")
    assert preview.prompt == snapshot.read_text(encoding="utf-8")
    assert preview.prompt_hash == prompt_hash(preview.prompt)


def _human_answers(campaign, n_workers=3):
    """Answers as the worker pages store them: each kind's example answers, validated."""
    schema = parse_schema(campaign.schema)
    stored = []
    for item in campaign.items.all():
        for worker in range(n_workers):
            rng = random.Random(f"{item.pk}-{worker}")
            raw = {q.id: q.example_answer(item.data, rng) for q in schema.questions}
            stored.append((item, answer_values(schema, item, raw, None)["answers"]))
    return schema, stored


@pytest.mark.parametrize("slug", SEED_SLUGS)
def test_the_json_schema_of_each_seed_validates_the_human_answers_stored_for_it(all_seeds, slug):
    campaign = all_seeds[slug]
    schema, stored = _human_answers(campaign)
    for item, answers in stored:
        jsonschema.validate(answers, answers_json_schema(schema, item.data))


def test_the_json_schema_refuses_what_validate_answers_refuses(all_seeds):
    campaign = all_seeds["comparative-rubric"]
    schema = parse_schema(campaign.schema)
    json_schema = answers_json_schema(schema)
    answers = {"rubric": {f"C{n}": 0 for n in range(1, 16)}}
    jsonschema.validate(answers, json_schema)
    validate_answers(schema, answers)
    for bad in ({"rubric": {**answers["rubric"], "C1": 2}}, {"rubric": {"C1": 1}},
                {**answers, "extra": 1}, {}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, json_schema)


def test_the_lines_schema_fixes_the_number_of_segments_per_item(all_seeds):
    campaign = all_seeds["summary-consistency"]
    schema = parse_schema(campaign.schema)
    item = campaign.items.first()
    question = next(q for q in schema.questions if q.json_schema(None).get("type") == "array")
    n = len(question.segments(item.data))
    assert question.json_schema(item.data)["minItems"] == n == question.json_schema(
        item.data)["maxItems"]
    prompt = judge_prompt_preview(_judge(campaign), item).prompt
    assert f"\n{n}. " in prompt and f"\n{n + 1}. " not in prompt.split("# Questions")[1]


def test_a_researchers_template_renders_the_items_fields_without_escaping(all_seeds):
    campaign = all_seeds["movie-continuation"]
    item = campaign.items.first()
    item.data["completion"] = 'He said "<b>no</b>" & left.'
    template = ("Rate: {{ item.completion }}\n{% if item.prompt %}has a prompt{% endif %}\n"
                "{{ answer_format }}")
    preview = judge_prompt_preview(_judge(campaign, prompt_template=template), item)
    assert preview.prompt.startswith('Rate: He said "<b>no</b>" & left.\nhas a prompt\n')
    assert '"coherence": one of the integers 1, 2, 3, 4, 5' in preview.prompt


@pytest.mark.parametrize("template", [
    "{% include 'admin/base.html' %}", "{% load static %}{% static 'x' %}",
    "{% extends 'admin/base.html' %}", "{% debug %}", "{% if %}",
    "{% for x in item %}{% include 'admin/base.html' %}{% endfor %}",
])
def test_a_template_can_reach_no_files_tags_or_code(template):
    with pytest.raises(PromptTemplateInvalid):
        compile_template(template)


def test_a_template_sees_only_the_item_and_the_campaign(all_seeds, settings):
    campaign = all_seeds["movie-continuation"]
    judge = _judge(campaign, prompt_template="[{{ settings.SECRET_KEY }}{{ request }}"
                                             "{{ campaign.owner }}{{ item.data }}]")
    assert judge_prompt_preview(judge, campaign.items.first()).prompt == "[]\n"
    assert Judge.objects.count() == 1 and not Annotation.objects.exists()


def _realdata():
    from tests import shared_data
    return shared_data.SHARED / "realdata"


def test_the_translation_schema_validates_the_published_da_scores_of_the_seed_items(all_seeds):
    """Seed 004's items are MLQE-PE en-de rows; their raters' 0-100 scores, imported as past
    human results, are stored answers the generated JSON Schema must accept."""
    import ast

    import pandas as pd

    from campaigns.services.judgments import JudgmentRow, judgments_import
    from tests.shared_data import require

    folder = _realdata() / "translation_da"
    require(folder)
    campaign = all_seeds["translation-acceptability"]
    scores = {}
    for name, prefix, key in (("mlqe-pe_en-de_test20.ende.df.short_first300.tsv", "ende", "index"),
                              ("mlqe-pe_ru-en_test20.ruen.df.short_first200.tsv", "ruen", "segid")):
        table = pd.read_csv(folder / name, sep="\t", keep_default_na=False)
        scores.update({f"mlqe-{prefix}-{i}": ast.literal_eval(s) for i, s in zip(
            table[key], table["scores"], strict=True)})
    ids = [i for i in campaign.items.values_list("external_id", flat=True) if i in scores]
    assert len(ids) >= 20
    rows = [JudgmentRow(n, item, f"rater{r}", repr({"acceptability": score}))
            for n, (item, r, score) in enumerate(
                ((i, r, s) for i in ids for r, s in enumerate(scores[i])), start=1)]
    judgments_import(campaign=campaign, rows=rows, platform="account")
    schema = parse_schema(campaign.schema)
    stored = Annotation.objects.filter(campaign=campaign).select_related("item")
    assert stored.count() == len(rows)
    for annotation in stored:
        jsonschema.validate(annotation.answers, answers_json_schema(schema, annotation.item.data))


def test_the_rubric_schema_validates_the_published_expert_scores(all_seeds):
    """Seed 003's rubric with the published experts' 15 criterion scores (realdata)."""
    import pandas as pd

    from tests.shared_data import require

    folder = _realdata() / "comparative_rubric"
    require(folder)
    schema = parse_schema(all_seeds["comparative-rubric"].schema)
    table = pd.read_csv(folder / "small_dataset_hum_evaluation.tsv", sep="\t",
                        keep_default_na=False)
    columns = [f"score_dict.{n}" for n in range(1, 16)]
    json_schema = answers_json_schema(schema)
    checked = 0
    for values in table[columns].astype(float).to_numpy():
        answers = validate_answers(schema, {"rubric": {f"C{n}": int(v) for n, v in enumerate(
            values, start=1)}})
        jsonschema.validate(answers, json_schema)
        checked += 1
    assert checked == len(table) >= 100


def test_conversations_reach_the_judge_as_role_labelled_transcripts(owner):
    from campaigns.services.items import items_import
    from tests.factories import make_campaign
    schema = {"display": [{"field": "conversation", "label": "Conversation", "format": "chat"},
                          {"field": "notes", "label": "Notes", "format": "markdown"}],
              "outputs_format": "chat", "role_labels": {"user": "Customer"},
              "questions": [{"id": "pref", "kind": "pairwise", "text": "Which is better?"}]}
    campaign = make_campaign(owner=owner, schema=schema)
    context = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
               {"role": "user", "content": "A table?"}]
    row = {"id": "c1", "conversation": context, "notes": "| a |\n|---|\n| 1 |", "outputs": [
        {"system": "x", "messages": [*context, {"role": "assistant", "content": "| n |"}]},
        {"system": "y", "messages": [*context, {"role": "assistant", "content": "No."}]}]}
    items_import(campaign=campaign, content=__import__("json").dumps([row]).encode(),
                 filename="i.json")
    prompt = judge_prompt_preview(_judge(campaign), campaign.items.get()).prompt
    assert "## Conversation\nCustomer: Hi\n\nAssistant: Hello.\n\nCustomer: A table?\n" in prompt
    assert "## Notes\n| a |\n|---|\n| 1 |" in prompt  # Markdown reads as it is
    assert ("The conversation so far:\nCustomer: Hi\n\nAssistant: Hello.\n\nCustomer: A table?\n\n"
            "Response A (how the conversation continues):\nAssistant: | n |\n\n"
            "Response B (how the conversation continues):\nAssistant: No.") in prompt
