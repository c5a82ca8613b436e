"""``--format html``: one self-contained page (inline CSS and script, no network reference of any kind), for
sharing in an incident ticket.

A document whose entries are trees of fields (``kdump explain``: :meth:`kdump.explain.Explained.to_dict` with
each entry's on-disk ``bytes`` in hex) is drawn as a hex pane beside the field tree, fields coloured by kind; a
field and its bytes light up together under the pointer, from either side. Any other document is shown as its
JSON, a findings report as its text lines. Every string from the data (a path, a key, a message) is HTML-escaped.
"""
from __future__ import annotations

import json
from html import escape
from typing import Any

BYTES_PER_ROW = 16
MAX_PANE_BYTES = 1 << 16  # bytes drawn in an entry's hex pane (the tree still covers the whole entry)
PREVIEW_BYTES = 48  # bytes of a key, value or header shown as text beside the field

# a field's colour class, by what it is (the legend says the same)
KINDS = {"int": "fixed-width integer", "varint": "varint", "bytes": "bytes (key, value, payload)", "crc": "CRC",
         "size": "size", "struct": "structure", "problem": "breaks a rule"}
_SIZES = {"batchLength", "messageSize", "length", "size"}

_CSS = """
body{font:13px/1.35 monospace;margin:1em;color:#222;background:#fff}
h1{font-size:15px}h2{font-size:14px;margin:1.2em 0 .3em}
.entry{display:flex;gap:1.5em;align-items:flex-start;border-top:1px solid #ccc;padding-top:.5em}
.hex{white-space:pre;flex:none;position:sticky;top:0;max-height:100vh;overflow:auto}
.hex i{font-style:normal;padding:0 1px;border-radius:2px}
.hex .pos{color:#888}.tree{flex:1;min-width:0}
.tree ul{list-style:none;margin:0;padding-left:1.2em}.tree>ul{padding-left:0}
.f{padding:0 3px;border-radius:2px;cursor:default;white-space:pre-wrap;word-break:break-all}
.f .n{font-weight:bold}.f .v{color:#333}.f .m{color:#666}.prob{color:#b00;font-weight:bold}
.k-int{background:#dbeafe}.k-varint{background:#dcfce7}.k-bytes{background:#fef3c7}.k-crc{background:#f3e8ff}
.k-size{background:#ffe4e6}.k-struct{background:#f1f5f9}.k-problem{background:#fca5a5}
.hl{outline:2px solid #111;background:#fde047!important}
.legend span{margin-right:.8em;padding:0 4px}.note{color:#666}
"""

# hover: a tree field lights its bytes (its range, or its compressed payload's for decompressed fields), the hex
# pane (sticky beside a long tree) scrolled to them; a byte lights the field it belongs to and that field's bytes
_JS = """
(function(){
var lit=[];
function clear(){lit.forEach(function(e){e.classList.remove('hl')});lit=[];}
function light(e){e.classList.add('hl');lit.push(e);}
function show(f,fromTree){var sec=f.closest('.entry'),pane=sec.querySelector('.hex'),bytes=pane.querySelectorAll('i');
 var base=+sec.dataset.start,s=+f.dataset.s,e=s+(+f.dataset.l),first=null;light(f);
 for(var p=Math.max(s,base);p<e&&p-base<bytes.length;p++){light(bytes[p-base]);first=first||bytes[p-base];}
 if(fromTree&&first&&(first.offsetTop<pane.scrollTop||first.offsetTop>pane.scrollTop+pane.clientHeight-20))
  pane.scrollTop=first.offsetTop-pane.clientHeight/3;}
document.addEventListener('mouseover',function(ev){var t=ev.target;clear();
 var f=t.closest?t.closest('.f[data-s]'):null;
 if(f){show(f,true);return;}
 if(t.tagName==='I'&&t.dataset.f){var g=document.getElementById(t.dataset.f);if(g)show(g);}});
})();
"""


def _category(node: dict) -> str:
    if "problem" in node:
        return "problem"
    if node["name"] == "crc":
        return "crc"
    if node["name"] in _SIZES and isinstance(node.get("value"), int):
        return "size"
    kind = node.get("kind", "")
    if "varint" in kind or "varlong" in kind:
        return "varint"
    if kind.startswith(("int", "uint")):
        return "int"
    children = node.get("children")
    if children and not (children[0].get("decompressed") and not node.get("decompressed")):
        return "struct"  # (a compressed payload is bytes: its children are not in the file)
    return "bytes"


def _preview(hexed: str) -> str:
    data = bytes.fromhex(hexed[:2 * PREVIEW_BYTES])
    text = data.decode("utf-8", "replace")
    shown = "".join(c if c.isprintable() else "\u00b7" for c in text)
    return f"\u201c{shown}\u201d" + ("\u2026" if len(hexed) > 2 * PREVIEW_BYTES else "")


def _value_text(node: dict) -> str:
    value, kind = node.get("value"), node.get("kind", "")
    if "zigzag" in node:
        return f"{value} (varint {node['raw']}: unsigned {node['unsigned']}, zigzag {node['zigzag']})"
    if kind == "bytes" or (kind == "unreadable" and value is None):
        if isinstance(value, str):
            return f"{node['length']} bytes {_preview(value)}"
        return "null" if node["name"] in ("key", "value", "headerKey", "headerValue") and not node["length"] \
            else f"{node['length']} bytes"
    if kind == "array":
        return f"{value} items"
    parts = [] if value is None else [str(value)]
    if "meaning" in node:
        parts.append(f"{value:#06x}: {node['meaning']}")
    if "crc" in node:
        c = node["crc"]
        check = ("matches" if c["valid"] else f"computed {c['computed']}: MISMATCH") if c["valid"] is not None \
            else "not computable"
        parts.append(f"{c['function']} of bytes {c['covers']['start']}..{c['covers']['end']} {check}")
    if "entryEnd" in node:
        parts.append(f"ends at byte {node['entryEnd']}")
    if node.get("children") is not None:  # a record's or inner message's offset, timestamp, control type
        parts.extend(f"{key} {node[key]}" for key in ("offset", "timestamp", "relativeOffset", "absoluteOffset",
                                                      "control") if node.get(key) is not None)
    if "decompressedLength" in node:
        parts.append(f"decompressed: {node['decompressedLength']} bytes")
    return ", ".join(parts)


class _Page:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.fields = 0

    def tree(self, node: dict, owner: list[tuple[str, str] | None], disk: tuple[int, int] | None, entry: int) -> None:
        """``node`` as a list item; ``owner[p - entry start]`` takes (id, colour class) of the leaf that holds byte
        p on disk; ``disk``: the on-disk range a decompressed node stands for (its compressed payload's)."""
        self.fields += 1
        fid = f"f{self.fields}"
        if node.get("decompressed"):
            s, n = disk if disk is not None else (node["start"], 0)
        else:
            s, n = node["start"], node["length"]
        children = node.get("children")
        problem = node.get("problem")
        at = f"+{node['start']}" if node.get("decompressed") else str(node["start"])
        category = _category(node)
        self.parts.append(
            f'<li><div class="f k-{category}" id="{fid}" data-s="{s}" data-l="{n}" '
            f'title="{escape(node.get("kind", ""))} at {at}, {node["length"]} bytes">'
            f'<span class="m">{escape(at)}</span> <span class="n">{escape(node["name"])}</span> '
            f'<span class="v">{escape(_value_text(node))}</span>'
            + (f'<div class="prob">!! {escape(problem["code"])}: {escape(problem["message"])}</div>' if problem
               else "") + "</div>")
        leaf = not children or (children[0].get("decompressed") and not node.get("decompressed"))
        if leaf and not node.get("decompressed"):
            for p in range(max(s - entry, 0), min(s + n - entry, len(owner))):
                owner[p] = (fid, category)
        if children:
            inner_disk = (s, n) if children[0].get("decompressed") and not node.get("decompressed") else disk
            self.parts.append("<ul>")
            for c in children:
                self.tree(c, owner, inner_disk, entry)
            self.parts.append("</ul>")
        self.parts.append("</li>")

    def entry(self, node: dict) -> None:
        start = node["start"]
        data = bytes.fromhex(node.get("bytes", ""))[:MAX_PANE_BYTES]
        owner: list[tuple[str, str] | None] = [None] * len(data)
        tree_at = len(self.parts)
        self.parts.append('<div class="tree"><ul>')
        for c in node.get("children") or ():
            self.tree(c, owner, None, start)
        self.parts.append("</ul></div>")
        tree = self.parts[tree_at:]
        del self.parts[tree_at:]
        head = f"{node.get('kind', node['name'])} at byte {start}, {node['length']} bytes"
        self.parts.append(f"<h2>{escape(head)}</h2>")
        if "damagedArea" in node:
            self.parts.append(f'<div class="prob">damage: {escape(node["damagedArea"]["message"])}</div>')
        if "firstProblem" in node:
            p = node["firstProblem"]
            self.parts.append(f'<div class="prob">first field that breaks a rule: {escape(p["field"])} at byte '
                              f'{p["start"]} ({escape(p["code"])})</div>')
        self.parts.append(f'<div class="entry" data-start="{start}"><div class="hex">')
        for row in range(0, len(data), BYTES_PER_ROW):
            cells = []
            for i in range(row, min(row + BYTES_PER_ROW, len(data))):
                o = owner[i]
                cells.append(f'<i class="k-{o[1]}" data-f="{o[0]}">{data[i]:02x}</i>' if o else f"<i>{data[i]:02x}</i>")
            self.parts.append(f'<span class="pos">{start + row:>10}</span>  {" ".join(cells)}\n')
        if node["length"] > len(data):
            self.parts.append(f'<span class="note">({node["length"] - len(data)} more bytes not drawn)</span>\n')
        self.parts.append("</div>")
        self.parts.extend(tree)
        self.parts.append("</div>")


def page(title: str, body: str) -> str:
    """A complete HTML page: ``body`` (already escaped markup) with the style and the hover script inline."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            f'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">'
            f"<title>{escape(title)}</title><style>{_CSS}</style></head>\n<body>\n{body}\n"
            f"<script>{_JS}</script>\n</body></html>\n")


def fields_page(doc: dict) -> str:
    """The page of a document of field trees (``kdump explain``)."""
    p = _Page()
    p.parts.append(f"<h1>{escape(str(doc.get('path', '')))}: {doc.get('fileSize')} bytes</h1>")
    p.parts.append('<div class="legend">' + "".join(f'<span class="k-{k}">{escape(v)}</span>'
                                                    for k, v in KINDS.items()) + "</div>")
    for entry in doc["entries"]:
        p.entry(entry)
    if doc.get("stop"):
        p.parts.append(f'<p class="note">stopped: {escape(doc["stop"])}</p>')
    return page(f"kdump explain {doc.get('path', '')}", "".join(p.parts))


def document_page(doc: Any) -> str:
    """A document as a page: field trees drawn, anything else as its JSON."""
    if isinstance(doc, dict) and isinstance(doc.get("entries"), list) and all(
            isinstance(e, dict) and "children" in e for e in doc["entries"]):
        return fields_page(doc)
    return page("kdump", f"<pre>{escape(json.dumps(doc, indent=2))}</pre>")


def lines_page(title: str, text: str) -> str:
    """Lines of text (a findings report) as a page."""
    return page(title, f"<pre>{escape(text)}</pre>")


class LinesPage:
    """A :class:`kdump.render.protocol.ResultStream` as a page: each result's lines for people, written as one page
    when the report ends."""

    def __init__(self, out, title: str):
        self.out = out
        self.title = title
        self.lines: list[str] = []

    def result(self, doc: dict, lines) -> None:
        self.lines.extend(lines)

    def end(self, doc: dict, lines=()) -> None:
        self.lines.extend(lines)
        self.out.write(lines_page(self.title, "\n".join(self.lines) + "\n"))
