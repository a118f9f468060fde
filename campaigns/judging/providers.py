"""Where a judge's requests go and with which key: the operator's providers, or a researcher's
own key for a host the operator allows.

The operator declares providers in settings.LLM_PROVIDERS (base URL, the environment variable
of its key, allowed models, an optional token budget per researcher). A judge names a
provider and never a URL or a variable, so the operator's key only ever goes to the
operator's URL. A researcher's own key is stored encrypted (Fernet, JUDGE_KEY_SECRET) and
sent only to an https URL on a host of settings.LLM_OWN_KEY_HOSTS.
"""
from __future__ import annotations

import base64
import hashlib
import ipaddress
import os
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from annotate.http.egress import EgressRefused, parse_target


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    key_env: str
    models: tuple[str, ...]
    budget_tokens: int | None  # prompt + completion tokens per researcher; None: no limit


def providers() -> dict[str, Provider]:
    """The operator's providers by name (entries that are not objects are left out); "local"
    without a base URL of its own has LLM_JUDGE_LOCAL_URL's."""
    found = {}
    for name, spec in (getattr(settings, "LLM_PROVIDERS", None) or {}).items():
        if not isinstance(spec, dict):
            continue
        budget = spec.get("budget_tokens")
        url = spec.get("base_url") or (settings.LLM_JUDGE_LOCAL_URL if name == "local" else "")
        found[str(name)] = Provider(
            name=str(name), base_url=str(url or ""),
            key_env=str(spec.get("key_env") or ""),
            models=tuple(str(m) for m in spec.get("models") or ()),
            budget_tokens=budget if isinstance(budget, int) and budget >= 0 else None)
    return found


def provider_key(provider: Provider) -> str | None:
    """The operator's key for this provider, read from its environment variable when sent."""
    return os.environ.get(provider.key_env) or None if provider.key_env else None


def own_url_problem(url: str) -> str | None:
    """Why a researcher may not send their own key to this base URL, or None if they may.

    The host must be one the operator allows (LLM_OWN_KEY_HOSTS) and the scheme https; the
    addresses it resolves to are checked again when each request connects."""
    try:
        target = parse_target(url)
    except EgressRefused as exc:
        return str(exc)
    if target.scheme != "https":
        return "a base URL of your own must use https://"
    try:
        ipaddress.ip_address(target.host.strip("[]"))
        return "a base URL of your own names a host, not an address"
    except ValueError:
        pass
    allowed = [h.lower() for h in getattr(settings, "LLM_OWN_KEY_HOSTS", [])]
    if target.host not in allowed:
        listed = ", ".join(allowed) or "none"
        return (f"{target.host} is not a host this instance allows for your own key "
                f"(allowed: {listed}); or choose one of the operator's providers")
    return None


def _fernet() -> Fernet:
    secret = getattr(settings, "JUDGE_KEY_SECRET", "")
    if secret:
        return Fernet(secret.encode())
    derived = hashlib.sha256(b"judge-api-keys:" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt_key(key: str) -> str:
    return _fernet().encrypt(key.encode()).decode()


def decrypt_key(token: str) -> str | None:
    """The stored key, or None when it cannot be read (the encryption secret changed)."""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None
