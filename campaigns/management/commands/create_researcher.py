"""manage.py create_researcher <username>: a staff account that runs its own campaigns."""
from django.core.management.base import BaseCommand, CommandError

from campaigns.errors import ServiceError
from campaigns.services.researchers import researcher_create


class Command(BaseCommand):
    help = ("Create a staff user in the 'Researchers' group: they can use the admin and see only "
            "the campaigns they own or collaborate on. Prints the password unless one is given.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--password", help="Default: a random password, printed once.")

    def handle(self, *args, username, email, password, **options):
        try:
            user, password_used = researcher_create(username=username, email=email,
                                                    password=password)
        except ServiceError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(self.style.SUCCESS(f"Created researcher {user.username!r}."))
        if not password:
            self.stdout.write(f"  password: {password_used}")
