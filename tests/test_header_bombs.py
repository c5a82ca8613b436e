"""Issue 22, item 2 (part): record headers are decoded in bounded memory. Each header becomes a Python object
(about 100-250 bytes for 2 stored bytes), so two bounds from kdump/format/limits.py hold on both decoders: a
record declaring more than MAX_RECORD_HEADERS headers is refused (record-headers-invalid, exit 1), and a chunk
of records ends after the record whose headers reach HEADERS_PER_CHUNK (a whole-batch read is not cut)."""
import pytest
from support.cli import run_cli
from support.hostile import headers_batch as header_batch
from support.hostile import set_chunk_budget
from test_hostile import NAME, batches_of, columns_equal, peak_rss_mb

from kdump.format import _records as compiled_records  # noqa: F401  (patched below when built)
from kdump.format import limits


@pytest.mark.usefixtures("backend")
def test_a_record_above_the_header_limit_is_refused(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(header_batch([1, limits.MAX_RECORD_HEADERS + 1, 1]))
    for args in (["dump", "--deep-iteration"], ["dump", "--format", "json", "--deep-iteration"],
                 ["verify", "--deep"]):
        result = run_cli(*args, path)
        assert result.exit_code == 1, (args, result.output)
        assert f"{limits.MAX_RECORD_HEADERS + 1} headers declared" in result.output, args
    stats = run_cli("stats", path)  # stats leaves out (and counts) a batch whose records cannot be decoded: damage
    assert stats.exit_code == 1 and "1 batch whose records could not be decoded" in stats.output
    assert f"{limits.MAX_RECORD_HEADERS + 1} headers declared" in stats.stderr


@pytest.fixture
def small_budget(monkeypatch):
    """HEADERS_PER_CHUNK = 10 in both decoders (module globals, read at each call)."""
    return set_chunk_budget(monkeypatch, "HEADERS_PER_CHUNK", 10)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("chunk", [2, 100])
def test_chunks_end_at_the_header_budget_and_add_up_to_the_whole_batch(tmp_path, small_budget, chunk):
    headers = [3, 0, 4, 5, 0, 0, 11, 1, 2, 9, 1]
    (batch,) = batches_of(tmp_path, header_batch(headers))
    chunks = list(batch.column_chunks(1 << 24, chunk))
    columns_equal(chunks, batch.columns(1 << 24))  # the whole-batch read is not cut
    for c in chunks[:-1]:  # each chunk ends at its record count, or at the record that reaches the budget
        n = sum(len(h) for h in c.headers)
        assert c.count == chunk or (n >= small_budget and n - len(c.headers[-1]) < small_budget)
    if chunk == 100:  # 36 headers: cut by the budget, not by the count
        assert len(chunks) > 1
    summaries = list(batch.summary_chunks(1 << 24, chunk))
    assert [s.count for s in summaries] == [c.count for c in chunks]  # the summary walk cuts the same way


def test_many_records_of_many_headers_take_bounded_memory(tmp_path):
    # 8 records of just under the per-record limit: 2 M headers (4 MB stored, 2 KB compressed). Read whole they
    # took about 500 MB; in chunks bounded by headers, about 100 MB
    path = tmp_path / NAME
    path.write_bytes(header_batch([limits.MAX_RECORD_HEADERS - 1] * 8))
    for args in (["dump", "--deep-iteration", "--print-data-log"], ["dump", "--format", "json", "--deep-iteration"],
                 ["stats"]):
        code, peak = peak_rss_mb(*args, path)
        assert code in (0, 1)
        assert peak < 200, (args, f"{peak:.0f} MB")
