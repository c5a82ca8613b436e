"""``kdump metadata``: a thin Click layer over :mod:`kdump.replay.metadata`."""
from __future__ import annotations

import click

from kdump.commands.replay_common import EXIT_HELP, replay_output_options, run


@click.command("metadata", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@replay_output_options
def command(paths, time_format, ui):
    """Replay a KRaft snapshot and the __cluster_metadata log after it into the cluster image, as
    Kafka's metadata shell shows it.

    PATHS: the __cluster_metadata-0 directory (its newest <offset>-<epoch>.checkpoint, then the log
    records from the snapshot's end offset on), a log directory holding it, or files: a .checkpoint
    snapshot (bootstrap.checkpoint too) and/or .log segments. Kafka's replay rules apply: fencing,
    unfencing and registration changes need the broker's epoch, PartitionChangeRecord leaves null
    fields and leader -2 unchanged (leader -1: no leader) and bumps the epochs, a null config value
    deletes the key, feature level 0 removes the feature, aborted metadata transactions are undone.
    Shows brokers (epoch, incarnation, listeners, rack, fenced, controlled shutdown), controllers,
    topics with ids and partitions (leader, ISR, replicas, leader and partition epoch, ELR),
    configs, features, ACLs, the next producer id, client quotas, SCRAM users (no secrets),
    delegation tokens, and the offset the image is valid at.

    \b
    Examples:
      kdump metadata /var/lib/kafka/metadata/__cluster_metadata-0/
      kdump metadata 00000000000000012345-0000000007.checkpoint
      kdump metadata --format json __cluster_metadata-0/ | jq '.topics[] | {name, topicId}'
      kdump metadata --time-format epoch __cluster_metadata-0/
    """
    from kdump.render.replay import metadata_blocks
    from kdump.replay.metadata import replay_metadata
    run(replay_metadata, paths, ui, lambda r: r.to_json(), metadata_blocks, time_format)
