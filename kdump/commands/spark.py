"""``kdump spark scan|verify|stats|replicas``: thin Click shells over :mod:`kdump.spark.jobs`.

Each starts a quiet local Spark session (``local[*]``) unless ``--master`` names a cluster (or the command
runs under ``spark-submit``), shows a progress line counting segments on stderr, and stops the session.
"""
from __future__ import annotations

import re

import click

from kdump.commands.findings import fail_on_option
from kdump.commands.options import exit_help, output_options, output_path_option, say
from kdump.errors import EXIT_USAGE, WriteError

EXIT_HELP = exit_help(
    ok="success (verify: no error; warnings are reported, not failing unless --fail-on warning)",
    data="verify: findings (errors); scan: damaged regions were skipped (listed on stderr); FAILFAST: damage "
         "stopped the job",
    usage="usage error, a path is missing or unreadable, or Spark cannot start (no Java 17, no pyspark)")


def _session_options(f):
    f = click.option("--master", default=None, metavar="URL",
                     help="Spark master (default: local[*], or what spark-submit set).")(f)
    return output_options(verbose_help="Also show Spark's own log output.")(f)


def _require(command: str, decoders: bool = False) -> None:
    """The optional parts every ``kdump spark`` command needs, checked before any of them is imported: a
    missing one is exit 2 with its pip line (:class:`kdump.errors.MissingExtra`, shown by ``kdump.cli.main``)."""
    from kdump.errors import require_extra
    require_extra(f"kdump spark {command}", "pyspark", "pyarrow", "numpy")
    if decoders:
        require_extra(f"kdump spark {command} with a schema-registry decoder", "fastavro", "google.protobuf",
                      "grpc_tools")


def _start(ui, master):
    """The session to run in: kdump's own (stopped at the end), or the caller's when one is active
    (kdump called from a Spark application, or its tests), which is left running. Spark that cannot start is a
    usage error (``ui``'s outcome: exit 2)."""
    from kdump.spark.session import RuntimeMissing, build_session
    try:
        from pyspark.sql import SparkSession
        if SparkSession.getActiveSession() is not None:
            return build_session(master, verbose=True), False
        return build_session(master, verbose=ui.verbose), True
    except (RuntimeMissing, ImportError) as e:
        ui.problem(None, str(e), code=EXIT_USAGE)
        ui.exit()


def _progress(verb, ui):
    """A line counting segments, rewritten in place on stderr: only on a terminal (`spark scan 2>log` leaves no
    progress in the log) and not with --quiet; a Spark job always takes seconds, so it is always worth showing."""
    from kdump.commands.progress import stderr_is_terminal
    if ui.quiet or not stderr_is_terminal():
        return None

    def show(done, total):
        click.echo(f"\r{verb}: {done}/{total} segments", err=True, nl=done >= total)
    return show


_DAMAGED = re.compile(r"DamagedData: (.*)")


def _run(ui, session, fn):
    """Run a job; a path problem is a usage error (exit 2), damage under FAILFAST exit 1 (``ui``'s outcome);
    kdump's own session is stopped."""
    from kdump.spark.plan import PathError
    spark, owned = session
    finished = False
    try:
        result = fn(spark)
        finished = True
        return result
    except FileExistsError as e:
        ui.problem(e.filename, e.strerror or str(e), code=EXIT_USAGE, error="output-exists")
        ui.exit()
    except PathError as e:
        ui.problem(None, str(e), code=EXIT_USAGE)
        ui.exit()
    except WriteError as e:  # an output that cannot be written (an export's tasks, its staging, its commit)
        ui.cannot(e.filename, e, "write")
        ui.exit()
    except Exception as e:  # FAILFAST: a task met damage; Spark wraps the task's error in its own
        from kdump.spark.jobs import write_failure
        failure = write_failure(e)
        if failure is not None:  # a task could not write (stats: its spilled key digests): exit 2, never 70
            ui.cannot(failure.filename, failure, "write")
            ui.exit()
        damaged = _DAMAGED.search(f"{type(e).__name__}: {e}")  # wrapped by Spark, or not (a job run in-process)
        if damaged is None:
            raise
        ui.problem(None, damaged.group(1))
        ui.exit()
    finally:
        if owned:
            from kdump.spark.session import stop_session
            kept = stop_session(spark, keep_log=not finished)
            if kept is not None:
                say(f"kdump: Spark's own log of this run: {kept}")


@click.group("spark", epilog=EXIT_HELP)
def command():
    """Run kdump's reader, verifier and statistics on Apache Spark (pip install 'kdump[spark]', Java 17).

    \b
    kdump spark scan fixtures/generated --out /tmp/records      every record to Parquet
    kdump spark verify --master spark://host:7077 /data/kafka  the deep verifier, spread over a cluster
    kdump spark stats /var/lib/kafka/data                       the numbers of kdump stats per partition
    """


@command.command("scan", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@output_path_option("New directory for the exported files (required).", old="--out")
@click.option("--to", "to_format", type=click.Choice(["parquet", "json"]), default="parquet", show_default=True,
              help="What the exported files are.")
@click.option("--include-headers/--no-include-headers", default=True, show_default=True)
@click.option("--mode", type=click.Choice(["PERMISSIVE", "FAILFAST"], case_sensitive=False), default="PERMISSIVE",
              show_default=True, help="PERMISSIVE: skip damaged regions, list them on stderr and exit 1; "
              "FAILFAST: stop at the first one.")
@click.option("--key-decoder", type=click.Choice(["schema-registry"]), default=None,
              help="Also export keyJson and keySchemaId: Schema Registry framed keys decoded.")
@click.option("--value-decoder", type=click.Choice(["schema-registry"]), default=None,
              help="Also export valueJson and valueSchemaId: Schema Registry framed values decoded.")
@click.option("--schemas", metavar="PATH", default=None,
              help="Where the decoders find schemas (default: the _schemas partition beside the paths).")
@_session_options
def scan(paths, output, to_format, include_headers, mode, key_decoder, value_decoder, schemas, master, ui):
    """Export the records of log directories, partition directories or segments (local, s3://, hdfs://)
    to Parquet or JSON files, in Spark's Kafka schema.

    \b
    Examples:
      kdump spark scan fixtures/generated -o /tmp/records
      kdump spark scan --to json --master spark://host:7077 s3://bucket/kafka/orders-0 -o /data/orders
    """
    if output is None:
        raise click.UsageError("name the new directory for the exported files with -o/--output")
    if "://" not in output:  # checked before Spark or pyarrow starts (seconds): a doomed export stops at once
        from kdump.write.guards import check_new_directory
        try:
            check_new_directory(output)
        except FileExistsError as e:
            ui.problem(e.filename, e.strerror, code=EXIT_USAGE, error="output-exists")
            ui.exit()
        except WriteError as e:
            ui.cannot(e.filename, e, "write")
            ui.exit()
    _require("scan", bool(key_decoder or value_decoder))
    from kdump.render import RENDERERS
    from kdump.spark import jobs
    from kdump.spark.arrow import ReadOptions
    from kdump.spark.schema import default_columns
    columns = default_columns(include_headers, False)
    if key_decoder or value_decoder:
        import json

        from kdump.spark.options import OptionError, schemas_path
        reader_options = {"paths": json.dumps(list(paths)), "keyDecoder": key_decoder, "valueDecoder": value_decoder,
                          "schemas": schemas}
        columns += [c for c, on in (("keyJson", key_decoder), ("keySchemaId", key_decoder),
                                    ("valueJson", value_decoder), ("valueSchemaId", value_decoder)) if on]
        try:
            schemas = schemas_path({k: v for k, v in reader_options.items() if v is not None}, columns)
        except OptionError as e:
            raise click.UsageError(str(e)) from None
    options = ReadOptions(columns=tuple(columns), failfast=mode.upper() == "FAILFAST", schemas=schemas)
    result = _run(ui, _start(ui, master),
                  lambda spark: jobs.export(spark, paths, output, to_format, options, progress=_progress("scan", ui)))
    for d in result.damage:
        say(f"kdump: {_damage_line(d)}")
        # a crash-cut tail is Kafka's "Found N invalid bytes at the end" (exit 0): a warning, as in verify
        ui.outcome.saw(d["path"], **({"warnings": 1} if d["code"] == "truncated-tail" else {"errors": 1}))
    ui.read(None)  # the job read every path (a path it cannot use stops it: exit 2 above)
    RENDERERS[ui.format].document(
        ui.stdout, {"records": result.records, "outputPath": output, "format": to_format, "errors": result.damage},
        lambda: ui.echo(f"{result.records} records written to {output}"), indent=None)
    ui.exit()


def _damage_line(d: dict) -> str:
    from kdump.text.escape import printable_path
    # the damage's own description (kdump.read.damage.Damage.describe), as every command says it; a file name is
    # the user's bytes: escaped
    return printable_path(f"{d['path']}: at byte {d['position']}: {d['description']}")


@command.command("verify", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@_session_options
@fail_on_option
def verify(paths, master, ui, fail_on):
    """``kdump verify --deep`` on Spark: one report, the same JSON and exit codes."""
    _require("verify")
    from kdump.commands.findings import render_reports
    from kdump.spark import jobs
    from kdump.verify import VerifyOptions
    reports = _run(ui, _start(ui, master),
                   lambda spark: jobs.verify(spark, paths, VerifyOptions(deep=True), progress=_progress("verify", ui)))
    from kdump.verify import check_internal_records
    check_internal_records(reports)  # as verify --deep does on one machine
    render_reports(ui, reports, fail_on)


@command.command("stats", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@_session_options
def stats(paths, master, ui):
    """``kdump stats`` on Spark, one task per partition: the same numbers, text and JSON (key memory: the
    default --memory of `kdump stats`, spilled to the executor's temporary directory beyond it)."""
    _require("stats")
    from kdump.commands.partition_paths import say_problems
    from kdump.render import RENDERERS
    from kdump.render.stats import render_text
    from kdump.spark import jobs
    from kdump.stats import counts as S
    summary = _run(ui, _start(ui, master),
                   lambda spark: jobs.stats(spark, paths, progress=_progress("stats", ui)))
    # as `kdump stats`: the summary decides the outcome (one line per partition), its problems go to stderr
    outcome = summary.outcome()
    say_problems(ui, [e for p in summary.partitions for e in p.stats.errors],
                 [n for p in summary.partitions for n in p.stats.notes])
    RENDERERS[ui.format].document(ui.stdout, S.summary_doc(summary), lambda: ui.echo(render_text(summary)))
    ui.exit(outcome.exit_code())


@command.command("replicas", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--reference", metavar="LOGDIR", default=None,
              help="The replica to compare the others with (the leader), as `kdump replicas --reference`.")
@click.option("--records", is_flag=True, help="Also read and show the records each replica would lose.")
@_session_options
def replicas(paths, reference, records, master, ui):
    """``kdump replicas`` on Spark: one task per replica surveyed, then one per topic-partition compared; the
    same report, JSON and exit codes. The log directories must be mounted where every executor can read them."""
    _require("replicas")
    from kdump.commands.replicas import check_paths, report
    from kdump.spark.replicas import replicas as job
    existing = check_paths(paths, reference, ui)
    found, results = _run(ui, _start(ui, master),
                          lambda spark: job(spark, existing, reference=reference, records=records))
    report(ui, found, results)
