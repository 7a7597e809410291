"""A config that fails its JSON Schema, told in a few lines a person reads.

jsonschema's own message prints the whole failing instance and schema (for a typo at the
top level, the whole config: thousands of lines). This names the key by its dotted path, says
what is wrong in one line, and for an unknown key lists the keys allowed there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import jsonschema

if TYPE_CHECKING:  # referencing exports its Resolver only from a private module
    from referencing._core import Resolver

MAX_MESSAGE = 300  # characters of jsonschema's own sentence (it can quote a whole section)
UNKNOWN_KEYS = ("additionalProperties", "unevaluatedProperties")


def dotted(parts: Iterable[Any]) -> str:
    """``papers.<id>.seeds[1]`` from the parts of a path into the config."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".")


def allowed_keys(schema: Mapping[str, Any], resolver: Resolver) -> list[str]:
    """The keys an object schema declares, through its ``$ref``s and ``allOf`` branches."""
    keys = list(schema.get("properties", {}))
    if "$ref" in schema:
        found = resolver.lookup(schema["$ref"])
        keys += allowed_keys(found.contents, found.resolver)
    for branch in schema.get("allOf", []):
        keys += allowed_keys(branch, resolver)
    return sorted(set(keys))


def explain(error: jsonschema.ValidationError, prefix: Iterable[Any], resolver: Resolver) -> str:
    """One line: the dotted path of the key at fault and what is wrong with it; for an
    unknown key, the keys allowed beside it. ``resolver`` resolves the schema's ``$ref``s
    (``repro.common.schemas.resolver``)."""
    path = [*prefix, *error.absolute_path]
    if error.validator in UNKNOWN_KEYS:
        allowed = allowed_keys(error.schema, resolver)
        unknown = [k for k in error.instance if k not in allowed]
        return (
            f"{dotted([*path, unknown[0]])}: unknown key (allowed here: {', '.join(allowed)})"
            if unknown
            else f"{dotted(path)}: {_short(error.message)}"
        )
    return f"{dotted(path) or 'the config'}: {_short(error.message)}"


def _short(message: str) -> str:
    message = re.sub(r"\s+", " ", message)
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"
