"""Renderers: turn batches and records into text (Kafka's DumpLogSegments lines, JSON Lines, rich)."""
