"""Worker-facing routes (no account needed)."""
from django.urls import path

from . import views

app_name = "campaigns"

urlpatterns = [
    path("c/<slug:slug>/", views.campaign_entry, name="entry"),
]
