"""``kdump dump``'s internal-topic decoder options: Kafka's five ``--*-decoder`` flags and ``--decoder``."""
from __future__ import annotations

import click

from kdump.decoders import DECODER_NAMES, TOPIC_DECODERS

_FLAGS = [f"{name}_decoder".replace("-", "_") for name in DECODER_NAMES]


def decoder_options(command):
    """Adds ``--offsets-decoder`` ... ``--remote-log-metadata-decoder`` and ``--decoder`` to a command; the
    command receives them as ``decoder_flags`` (a dict)."""
    for name in reversed(DECODER_NAMES):
        command = click.option(f"--{name}-decoder", f"{name}_decoder".replace("-", "_"), is_flag=True,
                               help=f"Decode the records as {TOPIC_DECODERS[name]}'s, as Kafka's tool does. "
                                    "Implies --print-data-log.")(command)
    command = click.option(
        "--decoder", "decoder_choice", type=click.Choice(["auto", *DECODER_NAMES]), default=None,
        help="auto: decode segments in __consumer_offsets-N, __transaction_state-N, __cluster_metadata-N, "
             "__share_group_state-N and __remote_log_metadata-N directories with their topic's decoder "
             "(other files as with --print-data-log); or a decoder by name. Implies --print-data-log.")(command)
    return command


def chosen_decoder(kwargs: dict) -> str | None:
    """Pops the decoder options from a command's keyword arguments; the decoder name, "auto" or None."""
    chosen = [name for name, flag in zip(DECODER_NAMES, _FLAGS, strict=True) if kwargs.pop(flag, False)]
    choice = kwargs.pop("decoder_choice", None)
    if choice is not None:
        chosen.append(choice)
    if len(set(chosen)) > 1:
        raise click.UsageError(f"choose one decoder, not {' and '.join(sorted(set(chosen)))}")
    return chosen[0] if chosen else None
