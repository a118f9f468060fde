"""Parity: every campaign state change through the admin (the real forms, posted), the API and
the management commands gives the same outcome and leaves the same stored state.

Each action of the table runs once per route, each time on a fresh copy of the same campaigns.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from campaigns.models import AllocationChange, Annotation, AnswerMigration, Campaign, Item, Worker
from campaigns.services.researchers import researchers_group
from tests.admin.test_forms import form_data
from tests.api.conftest import make_annotation, make_items, token_client
from tests.factories import make_campaign
from tests.rulebook.conftest import ANSWERS, PREFERENCE_SCHEMA, with_question

pytestmark = pytest.mark.django_db

TIE_REMOVED = with_question(PREFERENCE_SCHEMA, "preference", options=[
    o for o in PREFERENCE_SCHEMA["questions"][0]["options"] if o["value"] != "tie"])
RENAMED = with_question(PREFERENCE_SCHEMA, "preference", id="pref")
RELABELLED = with_question(PREFERENCE_SCHEMA, "preference", text="Which reads better?")
NEW_ITEMS = b'{"id": "n1", "prompt": "p", "completion": "c"}\n'
ADULT = {"id": "adult", "kind": "choice", "text": "Are you 18 or older?",
         "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]}
BAD_ITEMS = b'{"id": "sys-a-0", "prompt": "p", "completion": "c"}\n{"id": "n2", "prompt": "p"}\n'


@dataclass
class Action:
    name: str
    verb: str
    slug: str = "study"
    params: dict = field(default_factory=dict)
    ok: bool = True
    says: str = ""  # what every route's answer contains (the service's message)


TABLE = [
    Action("create", "create", "fresh", {"name": "Fresh", "schema": PREFERENCE_SCHEMA}),
    Action("create with a bad schema", "create", "fresh", {"name": "Fresh", "schema": {}},
           ok=False, says="questions"),
    Action("create with a taken slug", "create", "draft",
           {"name": "Again", "schema": PREFERENCE_SCHEMA}, ok=False),
    Action("edit settings", "update", params={"annotations_per_item": 5}),
    Action("edit a label", "update", params={"schema": RELABELLED}),
    Action("remove an answered option", "update", params={"schema": TIE_REMOVED}, ok=False,
           says="would no longer fit"),
    Action("rename an answered question by editing", "update", params={"schema": RENAMED},
           ok=False, says="cannot be removed or renamed"),
    Action("ask for checks with no attention items", "update",
           params={"attention_checks_per_assignment": 2}, says="0 attention item(s)"),
    Action("switch a live answered campaign to dynamic redundancy (recorded)", "update",
           params={"allocation": "dynamic_redundancy", "min_annotations_per_item": 2,
                   "max_annotations_per_item": 4, "stop_when": {"max_annotations": 100}}),
    Action("adaptive ranking without a pairwise question", "update",
           params={"allocation": "adaptive_ranking"}, ok=False,
           says="needs a question with preferences"),
    Action("a minimum above the maximum", "update",
           params={"min_annotations_per_item": 5, "max_annotations_per_item": 2}, ok=False,
           says="must be at least the minimum (5)"),
    Action("a stopping target that is not one", "update",
           params={"stop_when": {"half_width": -1}}, ok=False,
           says="must be a positive number"),
    Action("screen participants by their intake answers", "update", params={
        "intake_questions": [{**ADULT, "eligible": ["yes"], "quota": {"yes": 40}}],
        "completion_code_screened_out": "SCR1"}),
    Action("a screening rule with an answer the question has not", "update", params={
        "intake_questions": [{**ADULT, "eligible": ["maybe"]}]}, ok=False,
        says="is not an answer to this question"),
    Action("turn off pasting into free-text answers and copying the item", "update",
           params={"block_paste": True, "block_copy": True}),
    Action("import items", "import", "draft", {"content": NEW_ITEMS}),
    Action("import a bad file", "import", params={"content": BAD_ITEMS}, ok=False,
           says="'sys-a-0' already exists in this campaign"),
    Action("publish without items", "publish", "draft", ok=False,
           says="has no items to annotate"),
    Action("publish without attention items", "publish", "checked", ok=False,
           says="attention item(s)"),
    Action("publish", "publish", "ready"),
    Action("pause", "pause"),
    Action("close", "close"),
    Action("reopen a closed campaign", "publish", "done", ok=False, says="closing is for good"),
    Action("duplicate", "duplicate"),
    Action("delete as the owner", "delete", "draft"),
    Action("delete as a collaborator", "delete", "shared", {"as": "collaborator"}, ok=False),
    Action("erase a worker", "erase", params={"platform_id": "W1"}),
    Action("rename a question (migration)", "rename", params={"question": "preference",
                                                               "to": "pref"}),
    Action("rename an option value (migration)", "rename", params={
        "question": "preference", "value": "tie", "to": "draw"}),
    Action("rename an option to a taken value", "rename", params={
        "question": "preference", "value": "tie", "to": "a"}, ok=False, says="distinct"),
    Action("rename to a taken id", "rename", params={"question": "preference",
                                                     "to": "fluency"}, ok=False,
           says="taken"),
]


def build(owner, collaborator) -> None:
    """The same starting campaigns for every route."""
    study = make_campaign(owner=owner, slug="study", name="Study", schema=PREFERENCE_SCHEMA)
    study.collaborators.add(collaborator)
    for n, (item, answers) in enumerate(zip(make_items(study, 4), ANSWERS, strict=True)):
        make_annotation(study, item, worker_id=f"W{n}", answers=answers)
    make_campaign(owner=owner, slug="draft", name="Draft", schema=PREFERENCE_SCHEMA,
                  status=Campaign.Status.DRAFT)
    make_items(make_campaign(owner=owner, slug="ready", name="Ready", schema=PREFERENCE_SCHEMA,
                             status=Campaign.Status.DRAFT), 2)
    make_items(make_campaign(owner=owner, slug="checked", name="Checked", schema=PREFERENCE_SCHEMA,
                             status=Campaign.Status.DRAFT, attention_checks_per_assignment=2), 2)
    make_items(make_campaign(owner=owner, slug="done", name="Done", schema=PREFERENCE_SCHEMA,
                             status=Campaign.Status.CLOSED), 2)
    shared = make_campaign(owner=owner, slug="shared", name="Shared", schema=PREFERENCE_SCHEMA,
                           status=Campaign.Status.PAUSED)
    shared.collaborators.add(collaborator)


def state() -> list:
    """What is stored, without ids, times or which route and account asked (records keep
    those): campaigns, items, answers, erased workers, answer migrations."""
    rows = []
    for c in Campaign.objects.order_by("slug"):
        rows.append((c.slug, c.name, c.status, c.schema, c.intake_questions,
                     c.completion_code_screened_out, c.annotations_per_item,
                     c.attention_checks_per_assignment, c.owner.username,
                     sorted(c.collaborators.values_list("username", flat=True)),
                     sorted(Item.objects.filter(campaign=c).values_list(
                         "external_id", "slots_wanted")),
                     sorted(json.dumps(a, sort_keys=True) for a in Annotation.objects.filter(
                         campaign=c).values_list("answers", flat=True)),
                     sorted(Worker.objects.filter(campaign=c, erased_at__isnull=False)
                            .values_list("platform", flat=True)),
                     list(AnswerMigration.objects.filter(campaign=c).values_list(
                         "question", "renamed_to", "value", "value_renamed_to",
                         "annotations_changed")),
                     (c.allocation, c.min_annotations_per_item, c.max_annotations_per_item,
                      c.stop_when, c.allocation_stopped),
                     list(AllocationChange.objects.filter(campaign=c).values_list(
                         "allocation_before", "allocation_after", "stop_when_after",
                         "annotations_before"))))
    return rows


# The three routes. Each returns (done, what it said).

def _admin_messages(response) -> str:
    return html.unescape(response.content.decode())


class AdminRoute:
    def __init__(self, users):
        self.users = users

    def client(self, who="owner") -> Client:
        client = Client()
        client.force_login(self.users[who])
        return client

    def run(self, a: Action) -> tuple[bool, str]:
        client = self.client(a.params.get("as", "owner"))
        campaign = Campaign.objects.filter(slug=a.slug).first()

        def url(name, *args):
            return reverse(f"admin:campaigns_campaign_{name}", args=[campaign.pk, *args])

        if a.verb == "create":
            data = form_data(Campaign(slug=a.slug, name=a.params["name"], schema={}),
                             schema=json.dumps(a.params["schema"]))
            data["owner"] = self.users["owner"].pk
            response = client.post(reverse("admin:campaigns_campaign_add"), data, follow=True)
            return response.redirect_chain != [], _admin_messages(response)
        if a.verb == "update":
            changes = {k: json.dumps(v) if k in ("schema", "intake_questions", "stop_when")
                       else v
                       for k, v in a.params.items()}
            data = form_data(campaign, **changes)  # as the page shows it: collaborators kept
            data["collaborators"] = "\n".join(  # the field takes usernames, one per line
                campaign.collaborators.values_list("username", flat=True))
            response = client.post(url("change"), data, follow=True)
            return response.redirect_chain != [], _admin_messages(response)
        if a.verb == "import":
            response = client.post(url("import"), {
                "file": SimpleUploadedFile("items.jsonl", a.params["content"])}, follow=True)
            return response.status_code == 200 and response.redirect_chain != [], \
                _admin_messages(response)
        if a.verb in ("publish", "pause", "close"):
            response = client.post(url("status", a.verb), {"confirm": "yes"}, follow=True)
            text = _admin_messages(response)
            return 'class="error"' not in text, text
        if a.verb == "duplicate":
            response = client.post(url("duplicate"), follow=True)
            return response.redirect_chain != [], _admin_messages(response)
        if a.verb == "delete":
            response = client.post(url("delete"), {"post": "yes"})
            return response.status_code == 302, response.content.decode()
        if a.verb == "erase":
            worker = Worker.objects.get(campaign=campaign, platform_id=a.params["platform_id"])
            response = client.post(reverse("admin:campaigns_worker_changelist"), {
                "action": "erase_workers", "_selected_action": [worker.pk], "confirm": "yes"},
                follow=True)
            return "Deleted the data of 1 worker" in response.content.decode(), ""
        if a.verb == "rename":
            response = client.post(url("rename_question"), {**a.params, "confirm": "on"},
                                   follow=True)
            return response.redirect_chain != [], _admin_messages(response)
        raise AssertionError(a.verb)


class ApiRoute:
    def __init__(self, users):
        self.users = users

    def run(self, a: Action) -> tuple[bool, str]:
        api: APIClient = token_client(self.users[a.params.get("as", "owner")])
        base = f"/api/campaigns/{a.slug}/"
        if a.verb == "create":
            response = api.post("/api/campaigns/", {"slug": a.slug, **a.params}, format="json")
        elif a.verb == "update":
            response = api.patch(base, a.params, format="json")
        elif a.verb == "import":
            response = api.post(f"{base}items/import/", {
                "file": SimpleUploadedFile("items.jsonl", a.params["content"])},
                format="multipart")
        elif a.verb in ("publish", "pause", "close"):
            target = {"publish": "live", "pause": "paused", "close": "closed"}[a.verb]
            response = api.post(f"{base}status/", {"status": target}, format="json")
        elif a.verb == "duplicate":
            response = api.post(f"{base}duplicate/", {}, format="json")
        elif a.verb == "delete":
            response = api.delete(base)
        elif a.verb == "erase":
            response = api.post(f"{base}workers/erase/", {"platform": "prolific", **a.params},
                                format="json")
        elif a.verb == "rename":
            response = api.post(f"{base}questions/rename/", a.params, format="json")
        else:
            raise AssertionError(a.verb)
        return response.status_code < 300, response.content.decode("unicode_escape")


class CommandRoute:
    def __init__(self, users, tmp_path):
        self.users, self.tmp = users, tmp_path

    def _file(self, name: str, content) -> str:
        path = self.tmp / name
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
        return str(path)

    def run(self, a: Action) -> tuple[bool, str]:
        args = {
            "create": lambda: ["campaign", "create", a.slug, self._file("s.json", a.params),
                               "--owner", "alice"],
            "update": lambda: ["campaign", "update", a.slug, self._file("s.json", a.params)],
            "import": lambda: ["import_items", a.slug, self._file("i.jsonl",
                                                                  a.params["content"])],
            "publish": lambda: ["campaign", "publish", a.slug],
            "pause": lambda: ["campaign", "pause", a.slug],
            "close": lambda: ["campaign", "close", a.slug],
            "duplicate": lambda: ["campaign", "duplicate", a.slug],
            "delete": lambda: ["campaign", "delete", a.slug, "--user",
                               self.users[a.params.get("as", "owner")].username],
            "erase": lambda: ["erase_worker", a.slug, "prolific", a.params["platform_id"]],
            "rename": lambda: ["campaign", "rename-question", a.slug, a.params["question"],
                               a.params["to"],
                               *(["--value", a.params["value"]] if "value" in a.params else [])],
        }[a.verb]()
        from io import StringIO

        out = StringIO()
        try:
            call_command(*args, stdout=out)
        except CommandError as exc:
            return False, str(exc)
        return True, out.getvalue()


@pytest.mark.parametrize("action", TABLE, ids=[a.name for a in TABLE])
def test_every_route_gives_the_same_outcome_and_stored_state(action, django_user_model,
                                                             tmp_path):
    group = researchers_group()
    users = {}
    for name in ("owner", "collaborator"):
        user = django_user_model.objects.create_user(
            {"owner": "alice", "collaborator": "carol"}[name], is_staff=True)
        user.groups.add(group)
        users[name] = user
    routes = {"admin": AdminRoute(users), "api": ApiRoute(users),
              "command": CommandRoute(users, tmp_path)}
    results = {}
    for name, route in routes.items():
        Campaign.objects.all().delete()
        build(users["owner"], users["collaborator"])
        done, said = route.run(action)
        results[name] = (done, state())
        assert done == action.ok, f"{name}: {said[:2000]}"
        if action.says:
            assert action.says in said, f"{name} did not say {action.says!r}: {said[:3000]}"
    assert results["admin"][1] == results["api"][1] == results["command"][1]
