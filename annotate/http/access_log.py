"""Assignment tokens kept out of the logs.

An assignment's URL (/a/<token>/...) is the worker's bearer credential for their answers (as a
qualification test's /q/<token>/... is for its answers), so gunicorn's access log
(MaskedAccessLogger, docker/gunicorn.conf.py) and Django's own request logs ("Not Found:
/a/...", runserver's lines; MaskTokens on the console handler) write /a/[token]/ instead.
"""
from __future__ import annotations

import logging
import re

from gunicorn.glogging import Logger

# An assignment's /a/<token>/ and a qualification test's /q/<token>/.
TOKEN_IN_PATH = re.compile(r"/([aq])/[^/?#\s\"]+")
MASK = r"/\1/[token]"


def mask_tokens(text: str) -> str:
    return TOKEN_IN_PATH.sub(MASK, text) if "/a/" in text or "/q/" in text else text


class MaskedAccessLogger(Logger):
    """gunicorn's logger with the request line, path and referrer masked, and its error log
    ("Error handling request /a/...") filtered like Django's."""

    def setup(self, cfg):
        super().setup(cfg)
        self.error_log.addFilter(MaskTokens())

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for key in ("r", "U", "f", "{referer}i"):
            if isinstance(atoms.get(key), str):
                atoms[key] = mask_tokens(atoms[key])
        return atoms


class MaskTokens(logging.Filter):
    """Rewrites a record's message with tokens masked (its arguments folded in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True  # a malformed record: the handler reports it as logging always has
        masked = mask_tokens(message)
        if masked != message:
            record.msg, record.args = masked, ()
        return True
