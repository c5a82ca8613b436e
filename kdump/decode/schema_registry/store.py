"""What the registry knows, as kdump rebuilds it offline: schemas by id, and subjects' versions.

A :class:`SchemaStore` is filled by a schema source (:mod:`kdump.decode.schema_registry.storage` replays the
registry's own topic, :mod:`kdump.decode.schema_registry.sources` reads schema files) and asked by the decoders:
:meth:`SchemaStore.schema` for the id a payload names, :meth:`SchemaStore.version` for a reference.
"""
from __future__ import annotations

from dataclasses import dataclass, field

AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"
SCHEMA_TYPES = (AVRO, PROTOBUF, JSON)


@dataclass(frozen=True, slots=True)
class Reference:
    """A schema's use of another: ``name`` is how the schema names it (an Avro full name, a Protobuf import
    path, a JSON Schema ``$ref`` URL); ``subject`` and ``version`` say which registered schema it is."""

    name: str
    subject: str
    version: int


@dataclass(slots=True)
class RegisteredSchema:
    """One schema text under its id; ``versions``: the (subject, version) pairs registered with it."""

    id: int
    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()
    versions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def subject(self) -> str | None:
        """The first subject it was registered under (what stats and messages name it by)."""
        return self.versions[0][0] if self.versions else None


@dataclass(slots=True)
class SubjectVersion:
    """A (subject, version) of the registry: the schema id it holds and whether it was soft-deleted (a
    soft-deleted version still decodes the records written with it, as the registry still serves it by id)."""

    subject: str
    version: int
    id: int
    schema_type: str
    text: str
    references: tuple[Reference, ...]
    deleted: bool = False


class SchemaStore:
    """Schemas by id and by (subject, version); ``source`` says where they came from (for messages)."""

    def __init__(self, source: str):
        self.source = source
        self.versions: dict[tuple[str, int], SubjectVersion] = {}
        self._by_id: dict[int, RegisteredSchema] | None = None
        self._extra: dict[int, RegisteredSchema] = {}  # schemas known by id alone (schema files)

    def put_version(self, entry: SubjectVersion) -> None:
        self.versions[(entry.subject, entry.version)] = entry
        self._by_id = None

    def drop_version(self, subject: str, version: int) -> None:
        """A hard delete (a null value in the registry's topic): the version is gone."""
        if self.versions.pop((subject, version), None) is not None:
            self._by_id = None

    def put_schema(self, schema: RegisteredSchema) -> None:
        """A schema known by id only (a schema file, a saved ``GET /schemas`` answer)."""
        self._extra[schema.id] = schema
        self._by_id = None

    def schema(self, schema_id: int) -> RegisteredSchema | None:
        return self.by_id.get(schema_id)

    def version(self, subject: str, version: int) -> SubjectVersion | None:
        found = self.versions.get((subject, version))
        if found is None and version == -1:  # "latest", as references may say
            latest = [v for (s, n), v in self.versions.items() if s == subject]
            found = max(latest, key=lambda v: v.version, default=None)
        return found

    @property
    def by_id(self) -> dict[int, RegisteredSchema]:
        if self._by_id is None:
            by_id: dict[int, RegisteredSchema] = {}
            # The registry keeps the first text registered under an id and refuses a different one later
            # (its store checks this before every update): the lowest offset wins, which is the insertion
            # order of ``versions`` for the versions still there.
            for v in self.versions.values():
                known = by_id.get(v.id)
                if known is None:
                    known = by_id[v.id] = RegisteredSchema(v.id, v.schema_type, v.text, v.references)
                if known.text == v.text:
                    known.versions.append((v.subject, v.version))
            for schema_id, schema in self._extra.items():
                by_id.setdefault(schema_id, schema)
            self._by_id = by_id
        return self._by_id

    def __len__(self) -> int:
        return len(self.by_id)

    def __repr__(self) -> str:
        return f"SchemaStore({self.source!r}, {len(self)} schemas)"
