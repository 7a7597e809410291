"""Config validation against the workflow's JSON Schemas, with every schema file read once.

``snakemake.utils.validate`` (9.27) reads and parses a schema file from disk again for every
``$ref`` it follows: about 800 YAML loads per validation of this workflow's config, most of
the CPU of a ``snakemake -n`` (measured: docs/timings.md). This does the same
validation (JSON Schema 2020-12, defaults filled in as snakemake's ``set_default=True`` does)
with the schemas of one folder parsed once per process and cached.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _with_defaults(validator_class):
    """The validator that sets each property's ``default`` before validating it (the
    jsonschema FAQ's recipe, as snakemake.utils.validate uses it)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


DefaultValidator = _with_defaults(jsonschema.Draft202012Validator)


@functools.cache
def _registry(folder: Path) -> tuple[Registry, dict[str, dict]]:
    """Every ``*.schema.yaml`` of ``folder``, parsed once, under its file URI (which is how
    the relative ``$ref``s between them resolve)."""
    schemas = {}
    for path in sorted(folder.glob("*.yaml")):
        schema = yaml.load(path.read_text(), Loader=_Loader)
        schema["$id"] = path.resolve().as_uri()
        schemas[path.name] = schema
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return registry, schemas


def validate(data: dict[str, Any], schema_path: str | Path) -> None:
    """Validate ``data`` against the schema file, filling in defaults in place; raises
    ``jsonschema.ValidationError`` (the first error, as snakemake's validate reports it)."""
    path = Path(schema_path).resolve()
    registry, schemas = _registry(path.parent)
    DefaultValidator(schemas[path.name], registry=registry).validate(data)


def resolver(schema_path: str | Path):
    """A resolver of the ``$ref``s of the schema file (for messages about its errors)."""
    path = Path(schema_path).resolve()
    registry, schemas = _registry(path.parent)
    return registry.resolver(base_uri=schemas[path.name]["$id"])
