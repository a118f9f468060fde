"""manage.py new_campaign --template <name> --slug <slug>: a draft campaign from a starter."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaigns.errors import ServiceError
from campaigns.importing import ImportRejected
from campaigns.schema import SchemaInvalid
from campaigns.services.starters import campaign_create_from_starter
from campaigns.starters import starter_list


class Command(BaseCommand):
    help = ("Create a draft campaign from a starter template (schema, instructions with a worked "
            "example, settings); --list shows the templates.")

    def add_arguments(self, parser):
        parser.add_argument("--template", help="The template's name (see --list).")
        parser.add_argument("--slug", help="The new campaign's slug.")
        parser.add_argument("--name", default="", help="Default: the template's title.")
        parser.add_argument("--owner", default="admin", help="Username that will own it.")
        parser.add_argument("--with-sample-items", action="store_true",
                            help="Also import the template's sample items.")
        parser.add_argument("--list", dest="list_only", action="store_true",
                            help="List the templates and stop.")

    def handle(self, *args, template, slug, name, owner, with_sample_items, list_only, **options):
        if list_only:
            for starter in starter_list():
                self.stdout.write(f"{starter.name}: {starter.title}")
            return
        if not template or not slug:
            raise CommandError("Give --template <name> and --slug <slug> (--list shows the "
                               "templates).")
        user = get_user_model().objects.filter(username=owner).first()
        if user is None:
            raise CommandError(f"No user {owner!r}; create it first (manage.py "
                               "create_researcher).")
        try:
            campaign = campaign_create_from_starter(owner=user, template=template, slug=slug,
                                                    name=name, with_items=with_sample_items)
        except SchemaInvalid as exc:
            raise CommandError("Invalid configuration:\n" + "\n".join(
                str(issue) for issue in exc.issues)) from None
        except ImportRejected as exc:
            raise CommandError(f"The sample items were refused:\n{exc}") from None
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        items = campaign.items.count()
        self.stdout.write(self.style.SUCCESS(
            f"Created draft campaign {campaign.slug!r} from {template!r} ({items} items)."))
