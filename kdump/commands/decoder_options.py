"""``kdump dump``'s internal-topic decoder options: Kafka's five ``--*-decoder`` flags and ``--decoder``."""
from __future__ import annotations

import click

from kdump.decode.internal import DECODER_NAMES, TOPIC_DECODERS

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
             "(other files as with --print-data-log), and Schema Registry framed keys and values with the "
             "schema-registry decoder when a _schemas partition is beside them (or --schemas names schemas); or "
             "a decoder by name. Implies --print-data-log.")(command)
    command = click.option(
        "--schemas", "schemas_path", metavar="PATH", type=click.Path(exists=True, path_type=str), default=None,
        help="Where --key-decoder/--value-decoder schema-registry find schemas: the registry's _schemas "
             "partition (or a log directory holding it), a directory of <id>.avsc/<id>.proto/<id>.json files, "
             "or a saved GET /schemas answer. Default: the _schemas partition beside the data.")(command)
    return command


def chosen_schemas(kwargs: dict) -> str | None:
    """Pops ``--schemas`` from a command's keyword arguments."""
    return kwargs.pop("schemas_path", None)


def chosen_decoder(kwargs: dict) -> str | None:
    """Pops the decoder options from a command's keyword arguments; the decoder name, "auto" or None."""
    chosen = [name for name, flag in zip(DECODER_NAMES, _FLAGS, strict=True) if kwargs.pop(flag, False)]
    choice = kwargs.pop("decoder_choice", None)
    if choice is not None:
        chosen.append(choice)
    if len(set(chosen)) > 1:
        raise click.UsageError(f"choose one decoder, not {' and '.join(sorted(set(chosen)))}")
    return chosen[0] if chosen else None
