"""The replays' state as text for people: headings, ``key: value`` lines and tables; rich tables on a terminal,
plain aligned columns when piped. Every string from a record is escaped (:func:`printable`) before it is
printed: untrusted bytes never reach a terminal raw."""
from __future__ import annotations

from dataclasses import dataclass

from kdump.text.escape import escape
from kdump.text.times import iso_utc


def printable(value) -> str:
    """``value`` as text safe for a terminal and a table cell (:func:`kdump.text.escape.escape`, tabs
    too), and None as ``-``."""
    if value is None:
        return "-"
    return escape(str(value), keep_tab=False)


def when(ms, form=iso_utc) -> str:
    """Epoch milliseconds in the ``--time-format`` ``form`` (a :func:`kdump.text.times.time_formatter`; UTC
    ISO-8601 by default), ``-`` for none (-1 or absent)."""
    if ms is None or ms < 0:
        return "-"
    return form(ms)


@dataclass
class Table:
    title: str
    columns: tuple
    rows: list


def emit(out, blocks, *, rich: bool) -> None:
    """Print ``blocks``: a str is a line, a :class:`Table` a table (an empty one: its title and ``(none)``).
    ``rich``: tables fitted to the terminal (:func:`_rich_table`)."""
    if rich:
        from rich.console import Console
        from rich.text import Text
        # lines wrapped at spaces by rich, not mid-token by the terminal (a line names a group's leader id)
        console = Console(file=out, highlight=False)
        for b in blocks:
            if isinstance(b, Table):
                if b.rows:
                    console.print(_rich_table(b, console.width))
                else:
                    console.print(Text(f"{b.title}: (none)"))
            else:
                console.print(Text(b, style="bold" if b and not b.startswith(" ") else ""))
        return
    for b in blocks:
        if isinstance(b, Table):
            out.write(_plain_table(b))
        else:
            out.write(b + "\n")


def _rich_table(t: Table, width: int):
    """``t`` as a rich table that fits ``width`` columns without cutting a token: a column whose cells are all
    single tokens (ids, timestamps, states, numbers) is never wrapped, a column of text with spaces (partition
    lists, listeners, assignments) wraps at them. If the tokens do not fit in one line per row even with the headings
    broken at their spaces, the columns empty in every row are left out (and named); failing that, each row is shown as
    its own ``column  value`` list under a divider instead."""
    from rich import box
    from rich.console import Group
    from rich.table import Table as RichTable
    from rich.text import Text
    rows = [[printable(v) for v in row] for row in t.rows]
    indent = " " * (len(t.title) - len(t.title.lstrip()) + 2)  # under the title, as the table's rows would be
    # Too wide: first leave out the columns empty in every row (a group's offsets rarely carry a leader epoch,
    # metadata or expiry), said under the title, so an 80-column terminal still gets one line per row.
    blank = [i for i, column in enumerate(zip(*rows, strict=True)) if all(cell in ("", "-") for cell in column)]
    note = Text(f"{indent}({', '.join(t.columns[i] for i in blank)}: none in any row)")
    for left_out in ([], blank) if blank and len(blank) < len(t.columns) else ([],):
        kept = [i for i in range(len(t.columns)) if i not in left_out]
        kept_rows = [[row[i] for i in kept] for row in rows]
        free = [any(" " in cell for cell in column) for column in zip(*kept_rows, strict=True)]
        names = [t.columns[i] for i in kept]
        for headings in (names, [c.replace(" ", "\n") for c in names]):
            if _least_width(headings, kept_rows, free) <= width:
                table = RichTable(title=Text(t.title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD)
                for heading, wraps in zip(headings, free, strict=True):
                    table.add_column(heading, no_wrap=not wraps, overflow="fold")
                for row in kept_rows:
                    table.add_row(*map(Text, row))
                return Group(table, note) if left_out else table
    # Still too wide: each row as its own ``column  value`` block (as psql's ``\x auto``), each under a divider
    # naming it, so one row's lines are never read as the next one's.
    parts: list = [Text(t.title, style="bold")]
    for n, row in enumerate(rows):
        if len(rows) > 1:
            head = f"{indent}── {n + 1} of {len(rows)} "
            parts.append(Text(head + "─" * max(2, min(width, 60) - len(head)), style="dim"))
        record = RichTable(box=None, show_header=False, padding=(0, 1), pad_edge=False)
        record.add_column(no_wrap=True, style="bold")
        record.add_column(overflow="fold")
        for i, (heading, cell) in enumerate(zip(t.columns, row, strict=True)):
            if i not in left_out:
                record.add_row(indent + heading, Text(cell))
        parts.append(record)
    return Group(*parts, note) if left_out else Group(*parts)


def _least_width(headings: list[str], rows: list[list[str]], free: list[bool]) -> int:
    """The narrowest :func:`_rich_table` of ``rows`` that cuts no token: a token column as wide as its widest
    cell, a text column as its longest word, headings as their longest line (or word, in a text column); two
    columns of padding each, and the table's edges and column separators."""
    from rich.cells import cell_len

    def widest(texts, split) -> int:
        return max((cell_len(part) for text in texts for part in split(text)), default=0)
    total = 0
    for i, (heading, wraps) in enumerate(zip(headings, free, strict=True)):
        cells = [row[i] for row in rows]
        total += 2 + max(widest([heading], str.split if wraps else str.splitlines),
                         widest(cells, str.split if wraps else lambda cell: [cell]))
    return total + len(headings) + 1


def _plain_table(t: Table) -> str:
    if not t.rows:
        return f"{t.title}: (none)\n"
    cells = [list(t.columns)] + [[printable(v) for v in row] for row in t.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t.columns))]
    lines = [t.title] + ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def skipped_lines(skipped) -> list[str]:
    lines = [f"kdump: {printable(s.text())}" for s in skipped]
    more = getattr(skipped, "not_listed", 0)
    if more:
        lines.append(f"kdump: ... {more} more skipped record(s) or stretch(es) not listed")
    return lines


# --- groups ----------------------------------------------------------------------------------------------
def _assignment(value) -> str:
    """A member's assignment: decoded consumer-protocol partitions, or the size of bytes kept undecoded."""
    if isinstance(value, dict):
        parts = value.get("assignedPartitions") or value.get("topics") or []
        return " ".join(f"{p['topic']}[{','.join(map(str, p['partitions']))}]" for p in parts) or "(none)"
    if isinstance(value, list):  # consumer-protocol (KIP-848) topic-id assignments
        return " ".join(f"{p['topic'] or p['topicId']}[{','.join(map(str, p['partitions']))}]"
                        for p in value) or "(none)"
    return "(not decoded)" if value else "(none)"


def _tasks(value) -> str:
    """A Streams member's tasks: ``<subtopology>[<partitions>]`` each."""
    if value is None:
        return "-"
    return " ".join(f"{t['subtopologyId']}[{','.join(map(str, t['partitions']))}]" for t in value) or "(none)"


def _streams_lines(g: dict) -> list:
    topology = g["topology"]
    out: list = [f"  streams group (KIP-1071): group epoch {printable(g['groupEpoch'])}, target assignment epoch "
                 f"{printable(g['targetAssignmentEpoch'])}, topology epoch "
                 f"{printable(topology['epoch'] if topology else None)} (validated "
                 f"{printable(g['validatedTopologyEpoch'])})"]
    if g["assignmentConfigs"]:
        out.append("  assignment configs: " + printable(", ".join(f"{c['key']}={c['value']}"
                                                                  for c in g["assignmentConfigs"])))
    out.append(Table("  Topology", ("subtopology", "source topics", "repartition sinks", "repartition sources",
                                    "changelogs"),
                     [(s["subtopologyId"], " ".join(s["sourceTopics"] + [f"/{r}/" for r in s["sourceTopicRegex"]]),
                       " ".join(s["repartitionSinkTopics"]) or None,
                       " ".join(t["name"] for t in s["repartitionSourceTopics"]) or None,
                       " ".join(t["name"] for t in s["stateChangelogTopics"]) or None)
                      for s in (topology or {}).get("subtopologies", ())]))
    return out


def group_blocks(g: dict, form=iso_utc) -> list:
    out: list[str | Table] = [f"Group {printable(g['group'])}"]
    if g["type"] == "classic":
        out.append(f"  classic group: protocol type {printable(g['protocolType'])}, "
                   f"protocol {printable(g['protocol'])}, "
                   f"generation {g['generation']}, leader {printable(g['leader'])}, state since "
                   f"{when(g['currentStateTimestamp'], form)}")
        members = Table("  Members", ("member id", "instance id", "client id", "host", "session ms", "rebalance ms",
                                      "assignment"),
                        [(m["memberId"], m["groupInstanceId"], m["clientId"], m["clientHost"], m["sessionTimeout"],
                          m["rebalanceTimeout"], _assignment(m["assignment"])) for m in g["members"]])
    elif g["type"] == "consumer":
        out.append(f"  consumer group (KIP-848): group epoch {printable(g['groupEpoch'])}, target assignment epoch "
                   f"{printable(g['targetAssignmentEpoch'])}")
        members = Table("  Members", ("member id", "member epoch", "state", "client id", "host", "assigned",
                                      "target"),
                        [(m["memberId"], m.get("memberEpoch"), m.get("state"), m.get("clientId"), m.get("clientHost"),
                          _assignment(m.get("assignedPartitions")), _assignment(m.get("targetAssignment")))
                         for m in g["members"]])
        if g["regularExpressions"]:
            out.append(Table("  Regular expressions", ("regular expression", "topics", "version", "resolved"),
                             [(r["regularExpression"], " ".join(r["topics"]) or "(none)", r["version"],
                               when(r["timestamp"], form)) for r in g["regularExpressions"]]))
    elif g["type"] == "streams":
        out.extend(_streams_lines(g))
        members = Table("  Members", ("member id", "member epoch", "state", "process id", "client id", "host",
                                      "active", "standby", "warmup", "target active"),
                        [(m["memberId"], m.get("memberEpoch"), m.get("state"), m.get("processId"), m.get("clientId"),
                          m.get("clientHost"), _tasks(m.get("activeTasks")), _tasks(m.get("standbyTasks")),
                          _tasks(m.get("warmupTasks")), _tasks((m.get("targetAssignment") or {}).get("activeTasks")))
                         for m in g["members"]])
    elif g["type"] == "share":
        out.append(f"  share group (KIP-932): group epoch {printable(g['groupEpoch'])}, target assignment epoch "
                   f"{printable(g['targetAssignmentEpoch'])}")
        states = g["topicStates"] or {}
        out.append(Table("  Share partitions", ("topic", "topic id", "state", "partitions"),
                         [(t["topicName"], t["topicId"], state, _ids(t.get("partitions")))
                          for k, state in (("initializingTopics", "initializing"), ("initializedTopics", "initialized"),
                                           ("deletingTopics", "deleting"))
                          for t in states.get(k) or ()]))
        members = Table("  Members", ("member id", "member epoch", "state", "client id", "host", "subscribed",
                                      "assigned", "target"),
                        [(m["memberId"], m.get("memberEpoch"), m.get("state"), m.get("clientId"), m.get("clientHost"),
                          " ".join(m.get("subscribedTopicNames") or ()) or None,
                          _assignment(m.get("assignedPartitions")), _assignment(m.get("targetAssignment")))
                         for m in g["members"]])
    else:
        out.append("  no group metadata (deleted, or never written here): committed offsets only")
        members = None
    if members is not None:
        out.append(members)
    out.append(Table("  Committed offsets", ("topic", "partition", "offset", "leader epoch", "metadata", "committed",
                                             "expires"),
                     [(o["topic"], o["partition"], o["offset"], o["leaderEpoch"], o["metadata"],
                       when(o["commitTimestamp"], form), when(o["expireTimestamp"], form)) for o in g["offsets"]]))
    out.append(f"  (state as of log offset {g['lastRecordOffset']})")
    return out


def groups_blocks(data: dict, form=iso_utc) -> list:
    blocks = []
    for g in data["groups"]:
        blocks.extend(group_blocks(g, form))
        blocks.append("")
    summary = f"{len(data['groups'])} group(s) from {data['records']} record(s)"
    if data["pendingTransactionalRecords"]:
        summary += f"; {data['pendingTransactionalRecords']} transactional record(s) still wait for their marker"
    if data["ignoredRecords"]:
        summary += f"; {data['ignoredRecords']} record(s) of types not modelled"
    return [*blocks, summary]


# --- transactions ---------------------------------------------------------------------------------------
def txn_blocks(data: dict, form=iso_utc) -> list:
    rows = [(t["transactionalId"], t["producerId"], t["producerEpoch"],
             "-" if t["previousProducerId"] < 0 else t["previousProducerId"],
             "-" if t["nextProducerId"] < 0 else t["nextProducerId"], t["state"], t["transactionTimeoutMs"],
             " ".join(f"{p['topic']}[{','.join(map(str, p['partitions']))}]" for p in t["partitions"]) or "-",
             when(t["transactionStartTimestampMs"], form), when(t["transactionLastUpdateTimestampMs"], form))
            for t in data["transactions"]]
    table = Table("Transactional ids", ("transactional id", "producer id", "epoch", "previous pid", "next pid",
                                        "state", "timeout ms", "partitions", "started", "last update"), rows)
    return [table, f"{len(rows)} transactional id(s) from {data['records']} record(s)"]


# --- cluster image --------------------------------------------------------------------------------------
def _listeners(ls) -> str:
    return " ".join(f"{e['name']}://{e['host']}:{e['port']}" for e in ls) or "-"


def _ids(values) -> str:
    return ",".join(map(str, values)) if values else "-"


def _cordoned(dirs) -> str:
    """A broker's cordoned log directories: "-" where no record has said (null: Kafka's "not known yet"), "none"
    where the list is empty (every directory uncordoned)."""
    if dirs is None:
        return "-"
    return ",".join(dirs) if dirs else "none"


def metadata_blocks(data: dict, form=iso_utc) -> list:
    valid = data["validAtOffset"]
    head = [f"Cluster image valid at offset {valid if valid is not None else '- (nothing read)'}"]
    if data["snapshotPath"]:
        head.append(f"  snapshot: {printable(data['snapshotPath'])} (end offset {data['snapshotEndOffset']}, "
                    f"{data['snapshotRecords']} record(s)); then {data['logRecords']} log record(s)")
    else:
        head.append(f"  no snapshot; {data['logRecords']} log record(s)")
    head += [f"  note: {printable(n)}" for n in data["notes"]]
    features = Table("Features", ("feature", "level"), [(k, v) for k, v in data["features"].items()])
    if data["zkMigrationState"] is not None:
        features.rows.append(("(zk migration state)", data["zkMigrationState"]))
    brokers = Table("Brokers", ("id", "epoch", "incarnation id", "listeners", "rack", "fenced", "controlled shutdown",
                                "cordoned log dirs"),
                    [(b["id"], b["epoch"], b["incarnationId"], _listeners(b["listeners"]), b["rack"], b["fenced"],
                      b["inControlledShutdown"], _cordoned(b.get("cordonedLogDirs"))) for b in data["brokers"]])
    controllers = Table("Controllers", ("id", "incarnation id", "listeners"),
                        [(c["id"], c["incarnationId"], _listeners(c["listeners"])) for c in data["controllers"]])
    blocks = [*head, features, brokers, controllers]
    blocks.append(f"Topics: {len(data['topics'])}")
    blocks.extend(Table(f"  {printable(t['name'])} (id {t['topicId']}, {len(t['partitions'])} partition(s))",
                        ("partition", "leader", "leader epoch", "isr", "replicas", "elr", "last known elr",
                         "partition epoch"),
                        [(p["partition"], "none" if p["leader"] == -1 else p["leader"], p["leaderEpoch"],
                          _ids(p["isr"]), _ids(p["replicas"]), _ids(p["eligibleLeaderReplicas"]),
                          _ids(p["lastKnownElr"]), p["partitionEpoch"]) for p in t["partitions"]])
                  for t in data["topics"])
    blocks.append(Table("Configs", ("resource", "name", "value"),
                        [(f"{c['resourceType']}:{c['resourceName']}", k, v)
                         for c in data["configs"] for k, v in c["configs"].items()]))
    blocks.append(Table("ACLs", ("resource", "pattern", "principal", "host", "operation", "permission"),
                        [(f"{a['resourceType']}:{a['resourceName']}", a["patternType"], a["principal"], a["host"],
                          a["operation"], a["permissionType"]) for a in data["acls"]]))
    blocks.append(f"Producer ids: next {printable(data['producerIds']['nextProducerId'])}")
    blocks.append(Table("Client quotas", ("entity", "quota", "value"),
                        [(",".join(f"{e['entityType']}={printable(e['entityName'])}" for e in q["entity"]), k, v)
                         for q in data["clientQuotas"] for k, v in q["quotas"].items()]))
    blocks.append(Table("SCRAM credentials", ("user", "mechanism", "iterations"),
                        [(s["user"], s["mechanism"], s["iterations"]) for s in data["scramCredentials"]]))
    blocks.append(Table("Delegation tokens", ("token id", "owner", "requester", "expires"),
                        [(d["tokenId"], d["owner"], d["requester"], when(d["expirationTimestamp"], form))
                         for d in data["delegationTokens"]]))
    return blocks
