"""manage.py demo_setup: admin account, seed campaigns, the Arena side-by-side template as a
sixth campaign, and the links to try them (make demo).

The seeds are Prolific studies. Each gets the demo participant (work.DEMO_PARTICIPANT_ID), so
its "Try it" link opens as Prolific would open it for a participant and leads to a first item;
the Prolific line is the study URL to paste into Prolific, placeholders and all.
"""
import secrets
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from campaigns.selectors.platforms import campaign_platform_setup
from campaigns.services.judges import DEMO_JUDGE, judge_demo_ensure
from campaigns.services.researchers import researchers_group
from campaigns.services.seeds import (
    demo_participant_register,
    seed_campaigns_load,
    starter_campaigns_load,
)
from campaigns.work import DEMO_PARTICIPANT_ID

# What Prolific would send for the demo participant; the ids are made up and say so.
DEMO_PARAMETERS = urlencode({"PROLIFIC_PID": DEMO_PARTICIPANT_ID, "STUDY_ID": "demo-study",
                             "SESSION_ID": "demo-session"})


class Command(BaseCommand):
    help = ("Create the demo admin (printing its password), load the seed campaigns and the "
            "Arena template's, print links.")

    def handle(self, *args, **options):
        User = get_user_model()
        user = User.objects.filter(username="admin").first()
        password = secrets.token_urlsafe(12)
        if user is None:
            user = User.objects.create_superuser("admin", "admin@example.org", password)
        else:
            user.set_password(password)  # a fresh password each run, printed below
            user.save(update_fields=["password"])
        researchers_group()  # so `manage.py create_researcher` accounts work right away
        loaded = seed_campaigns_load(owner=user) + starter_campaigns_load(owner=user)
        for campaign, _created in loaded:
            judge_demo_ensure(campaign=campaign)
            demo_participant_register(campaign=campaign)
        base = settings.SITE_URL
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS("Demo ready."))
        self.stdout.write(f"  Admin:    {base}/admin/login/   user: admin   password: {password}")
        for campaign, _created in loaded:
            self.stdout.write(f"  {campaign.name}")
            self.stdout.write(f"    Try it:   {base}/c/{campaign.slug}/?{DEMO_PARAMETERS}")
            study_url = campaign_platform_setup(campaign=campaign).study_url
            self.stdout.write(f"    Prolific: {study_url}   (the study URL to paste into Prolific)")
        endpoint = settings.LLM_JUDGE_LOCAL_URL or "off (set LLM_JUDGE_LOCAL_URL to use it)"
        self.stdout.write(f"  LLM judge: {DEMO_JUDGE} on every campaign; endpoint {endpoint}")
        self.stdout.write("")
