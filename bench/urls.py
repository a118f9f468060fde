"""The project's routes plus the ceiling view; mounted only by the bench's own server."""
from django.urls import path

from annotate.urls import handler500
from annotate.urls import urlpatterns as project_urlpatterns

from .views import bench_insert

urlpatterns = [path("bench/insert/", bench_insert, name="bench-insert"), *project_urlpatterns]

__all__ = ["handler500", "urlpatterns"]
