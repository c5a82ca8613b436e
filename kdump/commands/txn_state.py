"""``kdump txn-state``: a thin Click layer over :mod:`kdump.replay.txn_state`."""
from __future__ import annotations

import click

from kdump.commands.replay_common import EXIT_HELP, replay_output_options, run


@click.command("txn-state", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@replay_output_options
def command(paths, time_format, ui):
    """Replay __transaction_state into every transactional id's state: what the transaction
    coordinator would load.

    PATHS: __transaction_state-N partition directories, a log directory holding them, or their .log
    segments. The latest record of a transactional id wins, a tombstone removes it. Per id: producer
    id and epoch (and, from value version 1, the previous and next producer id and the client's
    transaction version), timeout, state (Empty, Ongoing, PrepareCommit, PrepareAbort,
    CompleteCommit, CompleteAbort, Dead, PrepareEpochFence), partitions (none when Empty, as Kafka
    loads it), start and last-update time.

    \b
    Examples:
      kdump txn-state /var/lib/kafka/data
      kdump txn-state --format json __transaction_state-7/ | jq '.transactions[] | select(.state == "Ongoing")'
      kdump txn-state --time-format local __transaction_state-7/
    """
    from kdump.render.replay import txn_blocks
    from kdump.replay.txn_state import replay_transactions
    run(replay_transactions, paths, ui, lambda r: r.to_json(), txn_blocks, time_format)
