"""Worker-facing routes (no account needed)."""
from django.urls import path

from . import views

app_name = "campaigns"

urlpatterns = [
    path("c/<slug:slug>/", views.campaign_entry, name="entry"),
    path("a/<str:token>/<int:position>/", views.item_page, name="item"),
    path("a/<str:token>/finish/", views.finish_page, name="finish"),
    path("a/<str:token>/done/", views.done_page, name="done"),
]
