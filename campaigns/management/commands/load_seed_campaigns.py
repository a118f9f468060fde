"""manage.py load_seed_campaigns: the five seed campaigns with their demo items."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from campaigns.services.seeds import seed_campaigns_load


class Command(BaseCommand):
    help = "Load the five seed campaigns from fixtures/ (existing slugs are left untouched)."

    def add_arguments(self, parser):
        parser.add_argument("--owner", default="admin", help="Username that will own them.")

    def handle(self, *args, owner, **options):
        user = get_user_model().objects.filter(username=owner).first()
        if user is None:
            raise CommandError(f"No user {owner!r}; create it first (manage.py createsuperuser).")
        for campaign, created in seed_campaigns_load(owner=user):
            state = "loaded" if created else "already present"
            self.stdout.write(f"{campaign.slug}: {state} ({campaign.items.count()} items)")
