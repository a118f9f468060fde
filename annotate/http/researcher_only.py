"""The middleware only researcher pages need, passed by on worker routes (/c/, /a/, /q/).

A worker never logs in: the worker pages know the worker by the study link's parameters, a
signed cookie and an unguessable assignment token, never by a session, `request.user` or a
flash message, and they are framed by MTurk under CSP's `frame-ancestors`
(annotate/http/frames.py). Sessions, authentication and messages therefore do nothing for a
worker request but cost it CPU on the path every answer takes, so these subclasses hand a
worker request straight on. Every other path (the admin, the API, the site) gets them
unchanged. Each class keeps Django's name and is a subclass of it, so the admin's checks for
the middleware it needs still find them. (Django's X-Frame-Options and django-axes' middleware
stay as they are: their checks look for their own dotted paths, and each costs a worker
request one header or one attribute read.)
"""
from __future__ import annotations

from django.contrib.auth.middleware import AuthenticationMiddleware as _AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as _MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as _SessionMiddleware

from .frames import is_worker_path

__all__ = ["AuthenticationMiddleware", "MessageMiddleware", "SessionMiddleware"]


class _PassWorkerRoutes:
    """Mixed in before the middleware it wraps: a worker request skips it entirely."""

    def __call__(self, request):
        if is_worker_path(request.path_info):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_PassWorkerRoutes, _SessionMiddleware):
    pass


class AuthenticationMiddleware(_PassWorkerRoutes, _AuthenticationMiddleware):
    pass


class MessageMiddleware(_PassWorkerRoutes, _MessageMiddleware):
    pass
