"""manage.py campaign <action> <slug> ...: the campaign rulebook from a shell.

Every action calls the same service as the admin and the API (campaigns/services), so a
refusal here reads as it does there; the rules are tabled in docs/rules.md.
"""
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaigns.errors import ServiceError
from campaigns.management.arguments import campaign_by_slug, existing_file
from campaigns.schema import SchemaInvalid
from campaigns.selectors import qualification
from campaigns.services import campaigns as rules
from campaigns.services.schema_changes import answers_rename
from campaigns.services.statistics import Kind, Status, statistics_request

STATUS_ACTIONS = {"publish": rules.campaign_publish, "pause": rules.campaign_pause,
                  "close": rules.campaign_close}


class Command(BaseCommand):
    help = ("Create, edit, publish, pause, close, duplicate or delete a campaign, rename one "
            "of its questions (a recorded migration of its stored answers), list its "
            "qualification test's answers, or recompute its statistics.")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="A new draft from a JSON settings file.")
        create.add_argument("slug")
        create.add_argument("settings", help="A JSON object: name, schema and other settings.")
        create.add_argument("--owner", required=True, help="The owner's username.")
        update = sub.add_parser("update", help="Change settings from a JSON file.")
        update.add_argument("slug")
        update.add_argument("settings", help="A JSON object with the settings to change.")
        for name in STATUS_ACTIONS:
            sub.add_parser(name).add_argument("slug")
        duplicate = sub.add_parser("duplicate", help="A new draft without items or results.")
        duplicate.add_argument("slug")
        duplicate.add_argument("--to", dest="new_slug", help="The copy's slug.")
        duplicate.add_argument("--owner", help="The copy's owner (default: the original's).")
        delete = sub.add_parser("delete", help="Delete the campaign with its results.")
        delete.add_argument("slug")
        delete.add_argument("--user", help="Acting user (default: the owner).")
        sub.add_parser("qualifications", help="The qualification test's answers as CSV "
                       "(stdout).").add_argument("slug")
        recompute = sub.add_parser(
            "recompute-statistics", help="Recompute the cached statistics (the admin's "
            "Recompute; --full: its Recompute in full).")
        recompute.add_argument("slug")
        recompute.add_argument("--full", action="store_true", help="Every figure and interval "
                               "again, however few annotations changed since the last full "
                               "computation.")
        recompute.add_argument("--exclude-flagged", action="store_true",
                               help="The figures without flagged workers.")
        recompute.add_argument("--ties", choices=("split", "davidson"),
                               help="How Bradley-Terry fits treat ties (default: the schema's).")
        recompute.add_argument("--style", action="store_true",
                               help="With style-adjusted strengths.")
        rename = sub.add_parser("rename-question",
                                help="Rename a question's id and migrate its stored answers.")
        rename.add_argument("slug")
        rename.add_argument("question")
        rename.add_argument("to", help="The new id (or, with --value, the new option value).")
        rename.add_argument("--value", help="Rename this option value of the question instead.")

    def handle(self, *args, action, slug, **options):
        try:
            message = getattr(self, "_" + action.replace("-", "_"))(slug, **options)
        except SchemaInvalid as exc:
            raise CommandError("Invalid configuration:\n" + "\n".join(
                f"  {issue}" for issue in exc.issues)) from None
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        if message:
            self.stdout.write(self.style.SUCCESS(message))

    def _warnings(self, campaign) -> None:
        for problem in rules.campaign_control_problems(campaign=campaign):
            self.stdout.write(self.style.WARNING(f"Warning: {problem}"))

    def _create(self, slug, *, settings, owner, **_):
        fields = _settings(settings)
        campaign = rules.campaign_create(owner=_user(owner), slug=slug, **fields)
        self._warnings(campaign)
        return f"Created the draft {campaign.slug}."

    def _update(self, slug, *, settings, **_):
        campaign = rules.campaign_update(campaign=campaign_by_slug(slug), **_settings(settings))
        self._warnings(campaign)
        return f"Updated {campaign.slug}."

    def _qualifications(self, slug, **_):
        campaign = campaign_by_slug(slug)
        rows = qualification.qualification_rows(campaign=campaign)
        self.stdout.write(qualification.qualification_csv(rows), ending="")
        self.stderr.write(qualification.qualification_summary(
            qualification.qualification_counts(campaign=campaign)))
        return ""  # stdout is the CSV alone

    def _recompute_statistics(self, slug, *, full, exclude_flagged, ties=None, style, **_):
        """The statistics of these options (the admin page's and GET .../stats/'s row) queued
        again, as the page's Recompute buttons do; without a broker they are computed here."""
        campaign = campaign_by_slug(slug)
        options = {"exclude_flagged": exclude_flagged, "ties": ties, "style": style}
        row = statistics_request(campaign=campaign, kind=Kind.STATISTICS, options=options,
                                 recompute=True, full=full).row
        row.refresh_from_db()
        if row.status == Status.FAILED:
            raise CommandError(f"Computing the statistics of {slug} failed: {row.error}")
        if row.status == Status.DONE:
            computation = row.result.get("computation") or {}
            if computation.get("intervals") == "reused":
                return f"Recomputed the statistics of {slug}. {computation['note']}"
            return (f"Recomputed the statistics of {slug} in full: every figure and interval "
                    f"from {computation['intervals_basis']['annotations']:,} annotations.")
        if full and not row.full_requested and row.result is not None:  # the first is full
            raise CommandError(f"A computation of the statistics of {slug} is already under "
                               "way; run this again once it is done for a full one.")
        return (f"Queued a {'full ' if full else ''}recomputation of the statistics of {slug}: "
                f"the statistics page and GET /api/campaigns/{slug}/stats/ show it once a "
                "worker has computed it.")

    def _publish(self, slug, **_):
        return f"{rules.campaign_publish(campaign=campaign_by_slug(slug)).slug} is live."

    def _pause(self, slug, **_):
        return f"{rules.campaign_pause(campaign=campaign_by_slug(slug)).slug} is paused."

    def _close(self, slug, **_):
        rules.campaign_close(campaign=campaign_by_slug(slug))
        return f"{slug} is closed. {rules.CLOSE_EXPLAINED}"

    def _duplicate(self, slug, *, new_slug=None, owner=None, **_):
        campaign = campaign_by_slug(slug)
        copy = rules.campaign_duplicate(campaign=campaign, slug=new_slug,
                                        owner=_user(owner) if owner else campaign.owner)
        return f"Created the draft {copy.slug} from {slug}, without items or results."

    def _delete(self, slug, *, user=None, **_):
        campaign = campaign_by_slug(slug)
        counts = rules.campaign_delete(campaign=campaign,
                                       user=_user(user) if user else campaign.owner)
        return f"Deleted {slug}: " + ", ".join(f"{n} {m}" for m, n in sorted(counts.items()))

    def _rename_question(self, slug, *, question, to, value=None, **_):
        campaign = campaign_by_slug(slug)
        record = answers_rename(campaign=campaign, question=question, to=to, value=value or "",
                                via="command")
        what = f"{question!r}'s option {value!r}" if value else repr(question)
        return (f"Renamed {what} to {to!r}: {record.annotations_changed} stored answer(s) "
                f"and {record.gold_items_changed} gold item(s) rewritten; recorded as "
                f"migration #{record.pk}.")


def _settings(path: str) -> dict:
    try:
        fields = json.loads(existing_file(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CommandError(f"{path} is not a JSON file: {exc}") from None
    if not isinstance(fields, dict):
        raise CommandError(f"{path} must hold a JSON object of settings.")
    unknown = sorted(set(fields) - set(rules.SETTINGS_FIELDS) - {"status"})
    if unknown:
        raise CommandError(f"Unknown settings: {', '.join(unknown)}.")
    return fields


def _user(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user named {username!r}.")
    return user
