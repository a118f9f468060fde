"""The benchmark server's settings: the project's, with the bench's URLconf on top."""
from annotate.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
