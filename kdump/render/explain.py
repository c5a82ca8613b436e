"""``kdump explain``'s text: an annotated hex view of the explained document (:meth:`kdump.explain.Explained.to_dict`),
a line per field: its position, its bytes, its name (indented by nesting), its value and what it means. Positions
inside a decompressed payload are marked ``+N`` (N: the position in the decompressed buffer)."""
from __future__ import annotations

from collections.abc import Callable

SHOWN_BYTES = 10  # bytes of a field shown in hex; longer fields end with their length
NAME_WIDTH = 26


def _hex(raw: str | None, length: int) -> str:
    if raw is None:
        return ""
    shown = " ".join(raw[i:i + 2] for i in range(0, min(len(raw), 2 * SHOWN_BYTES), 2))
    return shown + (f" .. ({length} bytes)" if length > SHOWN_BYTES else "")


def _value(node: dict) -> str:
    kind, value = node.get("kind", ""), node["value"]
    if "zigzag" in node:  # a varint: what its bytes say both ways
        return f"{value}  (varint {node['raw']}: unsigned {node['unsigned']}, zigzag {node['zigzag']})"
    if node.get("children") is not None and kind in ("array", "v2 record", "record header"):
        return "" if kind != "array" else f"{value} items"
    if kind == "bytes":
        if value is None and node["name"] not in ("records", "unread", "value"):
            return "null"
        if value is None and node["name"] == "value" and node["length"] == 0:
            return "null"
        return f"{node['length']} bytes"
    parts = [str(value)]
    if "meaning" in node:
        parts.append(f"{value:#06x}: {node['meaning']}")
    if "crc" in node:
        c = node["crc"]
        check = ("matches" if c["valid"] else f"computed {c['computed']}: MISMATCH") if c["valid"] is not None \
            else f"not computable ({c['note']})"
        parts.append(f"{c['function']} of bytes {c['covers']['start']}..{c['covers']['end']} {check}")
    if "entryEnd" in node:
        parts.append(f"the entry ends at byte {node['entryEnd']}")
    return ", ".join(parts)


def _lines(node: dict, depth: int, out: Callable[[str], None]) -> None:
    at = f"+{node['start']}" if node.get("decompressed") else str(node["start"])
    extra = [f"{key} {node[key]}" for key in ("offset", "timestamp", "relativeOffset", "absoluteOffset", "control")
             if node.get(key) is not None and "children" in node]
    children = node.get("children")
    if children is not None and node.get("kind") not in ("array",) and "raw" not in node and node["name"] in (
            "record", "message", "record header"):
        out(f"{at:>12}  {'':<47} {'  ' * depth}{node['name']} {node['value']}"
            + (f" ({', '.join(extra)})" if extra else "") + f", {node['length']} bytes")
    else:
        raw = node.get("raw")
        if raw is None and node.get("kind") == "bytes" and isinstance(node["value"], str):
            raw = node["value"]  # (a key, a value: its bytes in hex)
        out(f"{at:>12}  {_hex(raw, node['length']):<47} {'  ' * depth}{node['name']:<{NAME_WIDTH}} {_value(node)}")
    if "problem" in node:
        p = node["problem"]
        out(f"{'':>12}  {'':<47} {'  ' * depth}!! {p['code']}: {p['message']}")
    if children:
        if children[0].get("decompressed") and not node.get("decompressed"):
            out(f"{'':>12}  {'':<47} {'  ' * (depth + 1)}(decompressed: {node.get('decompressedLength')} bytes, "
                "positions +N in them)")
        for c in children:
            _lines(c, depth + 1, out)


def render_text(doc: dict, echo: Callable[[str], None]) -> None:
    """The explained entries of ``doc`` as lines given to ``echo``."""
    echo(f"{doc['path']}: {doc['fileSize']} bytes")
    for entry in doc["entries"]:
        echo("")
        echo(f"{entry['kind']} at byte {entry['start']}, {entry['length']} bytes")
        if "damagedArea" in entry:
            echo(f"  damage: {entry['damagedArea']['message']}")
        if "firstProblem" in entry:
            p = entry["firstProblem"]
            echo(f"  first field that breaks a rule: {p['field']} at byte {p['start']} ({p['code']})")
        echo(f"{'position':>12}  {'bytes':<47} {'field':<{NAME_WIDTH}} value")
        for c in entry["children"]:
            _lines(c, 0, echo)
    if doc.get("stop"):
        echo("")
        echo(f"stopped: {doc['stop']}")
