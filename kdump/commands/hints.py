"""What the command line can do about what the library reports: the one table from a code to the hint that names
the flags to use.

The library's errors, findings and problems carry a stable code and their facts (sizes, limits, positions) and name
no flag (``tests/test_architecture.py`` checks that no string below ``kdump/commands/`` does); a command adds the
hint where it shows the message, so a hint is said once, in the words of the command line.
"""
from __future__ import annotations

# code -> the message as the command line shows it ({message}: the library's own words)
HINTS = {
    # a batch above the memory limit a reader was given (not damage: a higher limit reads it)
    "batch-too-large": "{message} (raise --max-batch-bytes to read it)",
    # an output that exists: --force would replace it (never the input itself: InputRefused, see force_hint)
    "output-exists": "{message} (use --force to replace)",
    # convert: zstd below magic 2, which Kafka refuses too
    "zstd-below-v2": "{message}; add --recompress zstd=lz4 (or gzip, snappy, none) to write it with another codec",
    # convert: records that re-encoded take more than a reader of the output would read
    "records-above-limit": "{message} (--max-batch-bytes of dump, verify and salvage); write them one message each "
                           "with --recompress CODEC=none",
    # convert: damaged input refused (as Kafka's converter refuses a corrupt record)
    "damaged-input": "{message}; `kdump salvage` keeps every intact batch, and --skip-damaged converts them and "
                     "reports the damage",
    # convert: a loss refused
    "loss": "--strict: {message}",
    # convert: batches below the target magic kept, as Kafka keeps them
    "kept-below-target": "{message} (--all-in-target-magic rewrites them)",
    # the schema-registry decoder found no schemas beside the data
    # a plain dump of an internal topic's segment: which decoder flag decodes it
    "internal-topic": "kdump: note: {topic} records are binary; add --{decoder}-decoder (or --decoder auto) to decode "
                      "them",
    "schemas-not-found": "{message}; name the schemas with --schemas PATH (a _schemas partition, a directory of "
                         "<id>.avsc/.proto/.json files or a saved GET /schemas answer)",
}


def hinted(code: str | None, message: str = "", **facts) -> str:
    """``message`` with the command line's hint for ``code`` (unchanged when there is none); ``facts``: the values
    a hint names besides the message."""
    hint = HINTS.get(code or "")
    return hint.format(message=message, **facts) if hint else message


def force_hint(error: FileExistsError, forced: bool = False) -> str:
    """What to add to a refusal's message: the ``--force`` hint only where ``--force`` would change the answer
    (never for :class:`kdump.write.guards.InputRefused`: the output named is the input itself; not when ``--force``
    was given: then the file appeared meanwhile)."""
    from kdump.write.guards import InputRefused
    if isinstance(error, InputRefused):
        return ""
    if forced:
        return " (it appeared while this run was writing; nothing was replaced)"
    return hinted("output-exists")


def hint_reports(reports) -> None:
    """Each finding of ``reports`` (:class:`kdump.report.findings.FileReport`) in the command line's words."""
    for report in reports:
        for finding in report.findings:
            finding.message = hinted(finding.code, finding.message)
