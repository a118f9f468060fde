"""App configuration."""
from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = "Evaluation campaigns"
    default_auto_field = "django.db.models.BigAutoField"
