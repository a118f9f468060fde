"""URL routes: admin, worker pages, API, health."""
from django.contrib import admin
from django.urls import include, path

from campaigns import views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", views.healthz, name="healthz"),
    path("", include("campaigns.urls")),
]
