"""Pseudonymous worker ids for exports: a keyed hash, stable within a campaign."""
from django.utils.crypto import salted_hmac


def worker_pseudonym(*, campaign_id: int, platform: str, platform_id: str) -> str:
    """The same worker gets the same pseudonym in one campaign and unlinkable ones across them."""
    digest = salted_hmac(
        "campaigns.worker-pseudonym", f"{campaign_id}:{platform}:{platform_id}", algorithm="sha256"
    ).hexdigest()
    return f"w_{digest[:16]}"
