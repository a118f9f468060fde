"""Serializer fields shared by the API's input serializers."""
from __future__ import annotations

from typing import Any

from rest_framework import serializers


def _unstorable(value: Any) -> str | None:
    """Why a JSON value cannot be stored (NUL or lone surrogates in a string), or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "text must not contain NUL characters"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "text must not contain unpaired surrogate characters"
        return None
    if isinstance(value, dict):
        for key, inner in value.items():
            problem = _unstorable(key) or _unstorable(inner)
            if problem:
                return problem
    if isinstance(value, list):
        for inner in value:
            problem = _unstorable(inner)
            if problem:
                return problem
    return None


def reject_unstorable(value: Any) -> None:
    problem = _unstorable(value)
    if problem:
        raise serializers.ValidationError(problem)


class StorableJSONField(serializers.JSONField):
    """Any JSON value both databases can store (PostgreSQL's jsonb refuses NUL characters)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("validators", []).append(reject_unstorable)
        super().__init__(**kwargs)


class StrictInput(serializers.Serializer):
    """An input body: a misspelt or unknown key is a 400, not silently ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: ["Unknown field."] for key in unknown})
        return super().to_internal_value(data)


def validated(serializer_class, data, *, partial: bool = False) -> dict:
    """Run an input serializer; a ValidationError becomes a 400 naming the fields."""
    serializer = serializer_class(data=data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
