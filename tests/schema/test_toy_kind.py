"""A question kind defined here, in the test suite, works end to end once registered.

`hearts` (give 1 to N hearts) is one class, one template partial and one script name: schema
validation, the worker's item page, saving an answer, the dashboard, the exports and an LLM
judge (its prompt, JSON Schema, run and imported judgments) take it without any other module
knowing its name; tests/schema/test_kinds.py runs it through the kind matrix too.
"""
import csv
import io
import random
from collections import Counter
from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field

from campaigns.models import Annotation, Item
from campaigns.schema import REGISTRY, parse_schema, register_kind, unregister_kind, validate_schema
from campaigns.schema.base import (
    AnswerInvalid,
    AnswerReader,
    BaseQuestion,
    ChartSpec,
    as_int,
    prompt_heading,
)
from campaigns.schema.contract import Capability, KindExample
from campaigns.selectors.dashboard import score_distributions
from tests.exports.conftest import make_annotation, read_export
from tests.factories import make_campaign
from tests.views.conftest import PROLIFIC, item_url, start

PARTIAL = """<fieldset class="question q-hearts" id="{{ f.dom_id }}" data-kind="hearts">
{% include "campaigns/_question_head.html" %}
{% for n in f.extra.hearts %}<label><input type="radio" name="{{ f.name }}" value="{{ n }}"\
{% if n == f.extra.value %} checked{% endif %}>{{ n }} heart{{ n|pluralize }}</label>{% endfor %}
</fieldset>
"""


class HeartsQuestion(BaseQuestion):
    kind: Literal["hearts"]
    hearts: int = Field(default=5, ge=2, le=10)

    template: ClassVar[str] = "toy/hearts.html"
    script: ClassVar[str] = "toy/hearts.js"
    example: ClassVar = KindExample(settings={"hearts": 3}, valid=[1, "3"], invalid=[0, 4, "lots"])
    capabilities: ClassVar = frozenset({Capability.AGREEMENT, Capability.DASHBOARD,
                                        Capability.LLM_JUDGE})
    measurement: ClassVar = "ordinal"

    def validate_answer(self, raw: Any, item_data: dict | None) -> int:
        value = as_int(raw)
        if value is None or not 1 <= value <= self.hearts:
            raise AnswerInvalid({self.id: f"Give 1 to {self.hearts} hearts."})
        return value

    def widget(self, value: Any, item_data: dict | None, errors: dict[str, str]) -> dict:
        return {"hearts": list(range(1, self.hearts + 1)), "value": as_int(value)}

    def example_answer(self, item_data: dict | None, rng: random.Random) -> int:
        return rng.randint(1, self.hearts)

    def dashboard_rows(self, reader: AnswerReader) -> list:
        return reader.values(self.id)

    def dashboard_count(self, value: Any, counter: Counter, n: int) -> None:
        counter[int(value)] += n

    def dashboard_charts(self) -> list[ChartSpec]:
        return [ChartSpec(self.text, [(n, "♥" * n) for n in range(1, self.hearts + 1)])]

    def prompt_section(self, item_data: dict | None) -> str:
        return f"{prompt_heading(self)}\nGive 1 to {self.hearts} hearts."

    def prompt_answer(self, item_data: dict | None) -> str:
        return f"a whole number of hearts from 1 to {self.hearts}"

    def json_schema(self, item_data: dict | None) -> dict:
        return {"type": "integer", "minimum": 1, "maximum": self.hearts}


SCHEMA = {
    "display": [{"field": "text", "label": "Text"}],
    "questions": [
        {"id": "love", "kind": "hearts", "text": "How much do you love it?", "hearts": 3},
        {"id": "note", "kind": "text", "text": "Anything else?", "required": False},
    ],
}


@pytest.fixture
def hearts(settings, tmp_path):
    """The kind registered, its partial in a template folder of its own; removed afterwards."""
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "hearts.html").write_text(PARTIAL)
    templates = [dict(engine) for engine in settings.TEMPLATES]
    templates[0]["DIRS"] = [*templates[0]["DIRS"], tmp_path]
    settings.TEMPLATES = templates
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    settings.RATELIMIT_ENABLED = False
    register_kind(HeartsQuestion)
    yield HeartsQuestion
    unregister_kind("hearts")


def test_it_validates_the_kinds_settings_with_their_paths(hearts):
    assert validate_schema(SCHEMA) == []
    assert parse_schema(SCHEMA).question("love").hearts == 3
    bad = {"questions": [{"id": "love", "kind": "hearts", "text": "Love?", "hearts": 1},
                         {"id": "more", "kind": "hearts", "text": "More?", "colour": "red"}]}
    found = {issue.path: issue.message for issue in validate_schema(bad)}
    assert "greater than or equal to 2" in found["questions[0].hearts"]
    assert found["questions[1].colour"] == "unknown setting"


def test_unregistering_removes_the_kind(hearts):
    unregister_kind("hearts")
    try:
        assert "hearts" not in REGISTRY
        assert "does not match" in {i.path: i.message for i in validate_schema(SCHEMA)}[
            "questions[0]"]
    finally:
        register_kind(HeartsQuestion)


def test_a_second_class_cannot_take_a_registered_name(hearts):
    class Impostor(HeartsQuestion):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register_kind(Impostor)


@pytest.mark.django_db
def test_the_item_page_shows_the_widget_and_saves_a_valid_answer(client, owner, hearts):
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="hearts")
    Item.objects.create(campaign=campaign, external_id="h1", slots_wanted=3,
                        data={"text": "A poem."})
    assignment = start(client, campaign, PROLIFIC)
    html = client.get(item_url(assignment)).content.decode()
    assert 'data-kind="hearts"' in html and 'name="q-love" value="3"' in html
    assert "3 hearts" in html and '<script src="/static/toy/hearts.js" defer>' in html

    response = client.post(item_url(assignment), {"q-love": "2", "q-note": "nice"})
    assert response.status_code == 200  # the next page, answered directly
    assert Annotation.objects.get().answers == {"love": 2, "note": "nice"}


@pytest.mark.django_db
def test_a_bad_answer_shows_its_error_by_the_question_and_stores_nothing(client, owner, hearts):
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="hearts")
    Item.objects.create(campaign=campaign, external_id="h1", slots_wanted=3,
                        data={"text": "A poem."})
    assignment = start(client, campaign, PROLIFIC)
    response = client.post(item_url(assignment), {"q-love": "7"})
    assert response.status_code == 400
    html = response.content.decode()
    widget = html[html.index('id="f-love"'):html.index("</fieldset>", html.index('id="f-love"'))]
    assert 'id="f-love-error"' in widget and "Give 1 to 3 hearts." in widget
    assert not Annotation.objects.exists()


@pytest.mark.django_db
def test_the_dashboard_counts_the_kind_as_it_says(owner, hearts):
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    for n, love in enumerate([1, 3, 3]):
        make_annotation(campaign, item=f"i{n}", answers={"love": love}, platform_id=f"W{n}")
    chart = score_distributions(campaign=campaign)[0]
    assert chart.labels == ["♥", "♥♥", "♥♥♥"] and chart.series == {"sys-a": [1, 0, 2]}


def _export(campaign, owner, fmt, capture, **options):
    from campaigns.services.exports import export_job_create

    with capture(execute=True):
        job = export_job_create(campaign=campaign, requested_by=owner, fmt=fmt, options=options)
    return read_export(job)


@pytest.mark.django_db
@pytest.mark.parametrize("sql_path", [False, True])
def test_the_exports_carry_its_columns(owner, hearts, settings, tmp_path, sql_path, celery_eager,
                                       django_capture_on_commit_callbacks):
    settings.EXPORT_SQL_PATH = sql_path
    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = make_campaign(owner=owner, schema=SCHEMA)
    make_annotation(campaign, item="i1", answers={"love": 2, "note": "=1+1"})
    make_annotation(campaign, item="i2", answers={"love": 3}, platform_id="W2")
    wide = _export(campaign, owner, "csv", django_capture_on_commit_callbacks).splitlines()
    header = wide[0].split(",")
    assert header[-2:] == ["love", "note"]
    assert [row.split(",")[-2:] for row in wide[1:]] == [["2", "'=1+1"], ["3", ""]]
    long = _export(campaign, owner, "csv-long", django_capture_on_commit_callbacks).splitlines()
    assert [row.split(",")[-3:] for row in long[1:]] == [
        ["love", "(whole)", "2"], ["note", "(whole)", "'=1+1"], ["love", "(whole)", "3"]]


def test_simulated_workers_draw_valid_answers_from_the_kind(hearts):
    from tests.admin.simulate import random_answer

    question = parse_schema(SCHEMA).question("love")
    rng = random.Random(3)
    assert {random_answer(question, {}, rng) for _ in range(50)} == {1, 2, 3}


@pytest.fixture
def standin(settings):
    """A stand-in OpenAI-compatible endpoint, declared as the operator's provider."""
    from tests.judges.conftest import valid_reply
    from tests.judges.standin import StandIn

    server = StandIn(valid_reply).start().declare(settings)
    yield server
    server.close()


@pytest.mark.django_db
def test_a_judge_run_asks_the_kinds_prompt_and_schema_and_the_export_carries_its_answers(
        owner, hearts, standin, settings, tmp_path, django_capture_on_commit_callbacks,
        celery_eager):
    from campaigns.services.judge_runs import judge_run_execute, judge_run_start
    from campaigns.services.judges import judge_create

    settings.STORAGES = {**settings.STORAGES, "exports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(tmp_path / "exports")}}}
    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="hearts")
    for n in range(2):
        Item.objects.create(campaign=campaign, external_id=f"h{n}", slots_wanted=3,
                            data={"text": f"Poem {n}."})
    judge = judge_create(campaign=campaign, name="stand-in", provider=standin.provider,
                         model="standin-1", requests_per_minute=60_000)
    run = judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
    judge_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.done, run.failed) == ("done", 2, 0)
    prompt = standin.prompts()[0]
    assert "Give 1 to 3 hearts." in prompt
    assert '- "love": a whole number of hearts from 1 to 3' in prompt
    sent = standin.bodies[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["love"] == {"type": "integer", "minimum": 1, "maximum": 3}
    loves = [a.answers["love"] for a in Annotation.objects.filter(worker__platform="llm")]
    assert len(loves) == 2 and all(1 <= love <= 3 for love in loves)
    wide = list(csv.DictReader(io.StringIO(_export(
        campaign, owner, "csv", django_capture_on_commit_callbacks, worker_platform="llm"))))
    assert sorted(int(row["love"]) for row in wide) == sorted(loves)


@pytest.mark.django_db
def test_an_imported_judgment_is_checked_by_the_kind(owner, hearts):
    from campaigns.importing.records import ImportRejected
    from campaigns.services.judgments import JudgmentRow, judgments_import

    campaign = make_campaign(owner=owner, schema=SCHEMA, slug="hearts")
    Item.objects.create(campaign=campaign, external_id="h1", slots_wanted=3,
                        data={"text": "A poem."})
    result = judgments_import(campaign=campaign, rows=[
        JudgmentRow(1, "h1", "gpt-x", '{"love": 2}')])
    assert result.created == 1 and Annotation.objects.get().answers == {"love": 2}
    with pytest.raises(ImportRejected, match="Give 1 to 3 hearts"):
        judgments_import(campaign=campaign, rows=[JudgmentRow(1, "h1", "gpt-y", '{"love": 7}')])


@pytest.mark.django_db
def test_a_kind_without_the_judge_capability_is_refused_a_judge_run_by_name(owner, hearts,
                                                                            standin):
    from campaigns.errors import ServiceError
    from campaigns.services.judge_runs import judge_run_start
    from campaigns.services.judges import judge_create

    class Sealed(BaseQuestion):  # the required entries only: no capability at all
        kind: Literal["sealed"]
        template: ClassVar[str] = "toy/hearts.html"
        example: ClassVar = HeartsQuestion.example

        def validate_answer(self, raw: Any, item_data: dict | None) -> Any:
            return raw

        def example_answer(self, item_data: dict | None, rng: random.Random) -> int:
            return 1

    register_kind(Sealed)
    try:
        schema = {"questions": [{"id": "vault", "kind": "sealed", "text": "Love?"}]}
        campaign = make_campaign(owner=owner, schema=schema, slug="sealed")
        judge = judge_create(campaign=campaign, name="j", provider=standin.provider, model="m")
        with pytest.raises(ServiceError, match="cannot answer 'vault' \\(a sealed question\\)"
                           ) as refused:
            judge_run_start(judge=judge, scope={"scope": "all"}, enqueue=False)
        assert refused.value.code == "not_judgeable"
    finally:
        unregister_kind("sealed")
