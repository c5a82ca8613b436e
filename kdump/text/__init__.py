"""Text for people, below every layer that prints: how a timestamp is written (:mod:`kdump.text.times`) and
untrusted text made safe for a terminal (:mod:`kdump.text.escape`). Pure functions of their arguments, no I/O
and nothing of Kafka's formats, so that checkers (verify, index check) and renderers share one spelling of each
without a checker importing a renderer."""
