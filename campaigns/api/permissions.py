"""Who may touch which campaign: its owner and collaborators; everyone else gets a 404."""
from rest_framework.exceptions import NotFound

from ..models import Campaign
from ..selectors.campaigns import campaigns_visible_to


def campaign_for(user, slug: str) -> Campaign:
    """The campaign `slug` if `user` owns or collaborates on it; otherwise NotFound (404).

    A 404 rather than a 403, so nobody learns which campaigns exist.
    """
    campaign = campaigns_visible_to(user).filter(slug=slug).select_related("owner").first()
    if campaign is None:
        raise NotFound("No such campaign.")
    return campaign
