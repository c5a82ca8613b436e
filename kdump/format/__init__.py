"""Kafka's record formats: structure definitions (``layout``, ``types``) and one module per format
generation (``legacy`` for magic 0 and 1, ``v2`` for magic 2), plus control records and the
generated-message encoding used by KRaft control records."""
