"""Which campaigns a researcher may see: owned, shared with them, or all for superusers."""
from django.db.models import Q, QuerySet

from ..models import Campaign


def campaigns_visible_to(user) -> QuerySet[Campaign]:
    if not getattr(user, "is_authenticated", False):
        return Campaign.objects.none()
    if user.is_superuser:
        return Campaign.objects.all()
    return Campaign.objects.filter(Q(owner=user) | Q(collaborators=user)).distinct()


def campaign_visible_to(user, campaign: Campaign) -> bool:
    return campaigns_visible_to(user).filter(pk=campaign.pk).exists()
