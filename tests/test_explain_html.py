"""``kdump explain --format html``: one self-contained page (nothing fetched from the network, data escaped), and in
headless Chromium (Debian's ``chromium``, driven over the DevTools pipe by ``tests/support/cdp.py``) the page
renders, a field lights its bytes under the pointer and a byte lights its field. Without chromium the browser tests
skip, unless CI=true (``.ci/run`` installs it), where that is a failure."""
import os
import re
from html.parser import HTMLParser

import pytest
from corpus import CORPUS, load_json
from support import cdp
from support.cli import run_cli

TXN = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
HOSTILE_KEY = b'<script>alert("key")</script>\'"&'
HOSTILE_HEADER = '<img src=x onerror="alert(1)">'
# the v2 batch header (spec: the batch format): baseOffset is bytes 0..7, crc bytes 17..20
BASE_OFFSET_BYTES = list(range(0, 8))
CRC_BYTES = list(range(17, 21))
# the page's colours of a fixed-width integer, a varint and a CRC (its legend's and its fields')
KIND_COLOURS = {"int": (0xDB, 0xEA, 0xFE), "varint": (0xDC, 0xFC, 0xE7), "crc": (0xF3, 0xE8, 0xFF)}


class Markup(HTMLParser):
    """The tags of a page with their attributes, and the text of its style and script elements."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list]] = []
        self.style = self.script = ""
        self._in = ""

    @classmethod
    def of(cls, html: str) -> "Markup":
        m = cls()
        m.feed(html)
        m.close()
        return m

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in = tag

    def handle_endtag(self, tag):
        self._in = ""

    def handle_data(self, data):
        if self._in == "style":
            self.style += data
        elif self._in == "script":
            self.script += data


def hostile_segment(directory) -> str:
    """A batch whose key and header key are markup, written by kafka-python's record builder (the test oracle)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=0, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, 1_700_000_000_000, HOSTILE_KEY, b"value", [(HOSTILE_HEADER, b'"quoted"')])
    path = os.path.join(directory, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(bytes(b.build()))
    return path


def page_of(tmp_path, log, *args) -> str:
    out = tmp_path / "page.html"
    result = run_cli("explain", "--records", "--format", "html", "-o", str(out), *args, str(log))
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_the_page_is_self_contained_and_escapes_the_data(tmp_path):
    directory = tmp_path / 'a<b>"x\''
    directory.mkdir()
    html = page_of(tmp_path, hostile_segment(directory))
    tags = Markup.of(html)
    assert [t for t, _ in tags.tags if t in ("script", "img", "link", "iframe", "object", "embed")] == ["script"]
    # nothing to fetch: no attribute that loads anything, no stylesheet import or url(), no address in the script
    assert not {name for _, attrs in tags.tags for name, _ in attrs} & {"src", "href", "srcset", "action", "data",
                                                                         "poster", "background", "style"}
    assert not re.search(r"(?i)url\(|@import|@font-face|https?:|//[a-z]", tags.style + tags.script)
    assert "default-src 'none'" in html
    assert '<script>alert("key")' not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;key&quot;)&lt;/script&gt;&#x27;&quot;&amp;" in html  # the key's text, escaped
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "a&lt;b&gt;&quot;x&#x27;" in html  # the path


def test_an_existing_page_is_replaced_only_with_force(tmp_path):
    out = tmp_path / "page.html"
    out.write_text("old")
    result = run_cli("explain", "--format", "html", "-o", str(out), str(TXN))
    assert result.exit_code == 2 and "--force" in result.output and out.read_text() == "old"
    result = run_cli("explain", "--format", "html", "--force", "-o", str(out), str(TXN))
    assert result.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")


def test_html_is_offered_by_explain_only():
    assert run_cli("dump", "--format", "html", str(TXN)).exit_code == 2
    assert run_cli("stats", "--format", "html", str(TXN)).exit_code == 2


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    program = cdp.chromium()
    if program is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium package)")
        pytest.skip("chromium is not installed")
    b = cdp.Browser(program, str(tmp_path_factory.mktemp("chromium-profile")))
    try:
        b.open_page()
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """log -> its page (explain --records --format html), made once per module."""
    made: dict = {}

    def page(log):
        if log not in made:
            out = tmp_path_factory.mktemp("page") / "page.html"
            assert run_cli("explain", "--records", "--format", "html", "-o", str(out), str(log)).exit_code == 0
            made[log] = out.as_uri()
        return made[log]
    return page


@pytest.fixture
def txn_page(browser, pages):
    browser.navigate(pages(TXN))
    return browser


def hover(b, js_element: str) -> None:
    """Move the pointer over the middle of the element ``js_element`` evaluates to (scrolled into view)."""
    x, y = b.evaluate(f"(function(){{var e={js_element};e.scrollIntoView({{block:'center'}});"
                      "var r=e.getBoundingClientRect();return [r.left+r.width/2,r.top+r.height/2];})()")
    b.move_mouse(x, y)


LIT_BYTES = ("(function(){var s=document.querySelector('.entry'),all=[...s.querySelectorAll('.hex i')];"
             "return all.map(function(e,i){return e.classList.contains('hl')?i:-1}).filter(function(i){return i>=0})"
             "})()")
LIT_FIELDS = "[...document.querySelectorAll('.f.hl .n')].map(function(e){return e.textContent})"
FIELD = ("[...document.querySelectorAll('.entry .f')]"
         ".find(function(e){{return e.querySelector('.n').textContent==={!r}}})")


def test_a_field_under_the_pointer_lights_its_bytes(txn_page):
    hover(txn_page, FIELD.format("crc"))
    assert txn_page.evaluate(LIT_FIELDS) == ["crc"]
    assert txn_page.evaluate(LIT_BYTES) == CRC_BYTES


def test_a_byte_under_the_pointer_lights_its_field_and_its_bytes(txn_page):
    hover(txn_page, "document.querySelector('.entry .hex i')")  # the file's first byte: baseOffset's
    assert txn_page.evaluate(LIT_FIELDS) == ["baseOffset"]
    assert txn_page.evaluate(LIT_BYTES) == BASE_OFFSET_BYTES


def test_the_page_renders_coloured_and_requests_nothing_but_itself(txn_page):
    png = txn_page.screenshot(640, 240)
    assert cdp.png_size(png) == (640, 240)
    colours = {c[:3] for c in cdp.png_colours(png)}
    assert len(colours) > 8  # text, backgrounds, the kinds' colours: not a blank page
    assert {k for k, rgb in KIND_COLOURS.items() if bytes(rgb) in colours} == set(KIND_COLOURS)
    urls = txn_page.requested_urls()
    assert urls and all(u.startswith("file:") for u in urls), urls


def test_a_decompressed_field_lights_the_compressed_payload_it_is_in(browser, pages):
    """A field inside a compressed payload has no bytes of its own in the file: it lights the payload's, which in
    a v2 batch run from byte 61 (the end of the batch header, spec) to the end of the batch (Kafka's view)."""
    log = CORPUS / "kafka-generated/v2-gzip/00000000000000000000.log"
    first = load_json(log)["batches"][0]
    browser.navigate(pages(log))
    hover(browser, FIELD.format("value"))  # the first record's value, in the decompressed records
    assert browser.evaluate(LIT_FIELDS) == ["value"]
    assert browser.evaluate(LIT_BYTES) == list(range(first["position"] + 61, first["position"] + first["size"]))
