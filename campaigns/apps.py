"""App configuration."""
from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = "Evaluation campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every registered question kind keeps the kind contract, or nothing starts: the error
        # names the kind and what it misses (campaigns/schema/contract.py).
        from .schema.kinds import check_registry

        check_registry()
