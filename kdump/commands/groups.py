"""``kdump groups``: a thin Click layer over :mod:`kdump.replay.groups`."""
from __future__ import annotations

import click

from kdump.commands.replay_common import EXIT_HELP, replay_output_options, run


@click.command("groups", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--group", "names", multiple=True, metavar="NAME", help="Show only this group (repeatable).")
@replay_output_options
def command(paths, names, time_format, ui):
    """Replay __consumer_offsets into each group's state: what the group coordinator would load.

    PATHS: __consumer_offsets-N partition directories, a log directory holding them, or their .log
    segments. Segments are read in offset order; a later record with the same key supersedes an
    earlier one and a tombstone deletes it, as compaction would; transactional offset commits count
    once their producer's COMMIT marker is in the log. Per group: protocol type and protocol,
    generation, leader, members (client id, host, timeouts, assignment decoded from the consumer
    protocol); for KIP-848 consumer groups the epochs, member assignments and regular-expression
    subscriptions; for Kafka Streams groups (KIP-1071) the epochs, topology and members' tasks; for
    share groups (KIP-932) the epochs, members and share partitions' state; and the last committed
    offset per topic-partition (leader epoch, metadata, commit and expire time).

    \b
    Examples:
      kdump groups /var/lib/kafka/data                     every group in the log directory
      kdump groups --group orders-app __consumer_offsets-12/
      kdump groups --format json /var/lib/kafka/data | jq '.groups[] | {group, generation}'
      kdump groups --time-format local --group orders-app __consumer_offsets-12/
    """
    from kdump.render.replay import groups_blocks
    from kdump.replay.groups import replay_groups
    wanted = set(names)
    run(replay_groups, paths, ui, lambda r: r.to_json(wanted), groups_blocks, time_format)
