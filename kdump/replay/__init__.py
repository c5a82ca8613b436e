"""Replays of Kafka's internal topics into the state their records add up to.

Operators want the answer, not 40,000 commit records:

* :func:`kdump.replay.groups.replay_groups` — ``__consumer_offsets`` into each group's state (classic groups:
  protocol, generation, leader, members and their assignments; consumer-protocol groups: epochs, members and
  their assignments) and the last committed offset per topic-partition;
* :func:`kdump.replay.metadata.replay_metadata` — a KRaft snapshot plus the ``__cluster_metadata`` log after it
  into the cluster image (brokers, controllers, topics and partitions, configs, features, ACLs, producer ids,
  client quotas, SCRAM users, delegation tokens) and the offset it is valid at;
* :func:`kdump.replay.txn_state.replay_transactions` — ``__transaction_state`` into each transactional id's
  producer, epoch, state and partitions.

Each applies Kafka's own replay rules, record by record, in offset order; a later record with the same key
supersedes an earlier one and a tombstone deletes it (what compaction keeps). A record that does not decode
or that Kafka would refuse to apply is left out and listed (:class:`kdump.replay.source.Skipped`); it never
stops a replay. Renderers for people are in :mod:`kdump.render.replay`.
"""
