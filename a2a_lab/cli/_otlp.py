"""``a2a-lab export-otlp``: the exchanges of SOURCE as OpenTelemetry traces (issue 26)."""

from __future__ import annotations

import argparse
import sys

from a2a_lab.cli._common import (
    CliError,
    Commands,
    add_command,
    add_number_option,
    add_output_file,
    default_zone,
    errors_as_cli,
    float_option,
    int_option,
)


def register(sub: Commands) -> None:
    p = add_command(
        sub,
        "export-otlp",
        run_export_otlp,
        help="export every A2A exchange as an OpenTelemetry GenAI trace (OTLP)",
        description=(
            "Turn each A2A exchange of SOURCE into an OpenTelemetry trace that follows the "
            "GenAI agent conventions (the requester's invoke_agent CLIENT span, the target's "
            "run, the ping-pong turns and the announce step), and send it to an OTLP/HTTP "
            "receiver (Phoenix, Jaeger, Tempo, an OpenTelemetry Collector) or write OTLP/JSON."
        ),
        epilog=(
            "examples:\n"
            "  a2a-lab export-otlp ~/.openclaw/logs --endpoint http://127.0.0.1:6006/v1/traces\n"
            "  a2a-lab export-otlp ~/.openclaw/logs -o exchanges.otlp.json"
        ),
    )
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--endpoint", metavar="URL", help="an OTLP/HTTP traces URL (.../v1/traces)")
    add_output_file(out, "FILE.json", "write OTLP/JSON, one request per line")
    p.add_argument(
        "--project",
        default="a2a-lab",
        help="openinference.project.name of the traces (the Phoenix project; default a2a-lab)",
    )
    batch, timeout = int_option(1, 1_000_000), float_option(0.1, 3600.0)
    add_number_option(p, "--batch", batch, 2_000, "exchanges per request", metavar="N")
    per_request = "how long the exporter tries one request, retries included"
    add_number_option(p, "--timeout", timeout, 30.0, per_request, metavar="SECONDS")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run_export_otlp(args: argparse.Namespace) -> int:
    from a2a_lab.cli._source import load_source
    from a2a_lab.io import SourceError, is_store
    from a2a_lab.otel import OtlpExportError, log_otlp_lines, otlp_lines, write_otlp

    if args.endpoint is not None and not args.endpoint.startswith(("http://", "https://")):
        raise CliError(f"--endpoint must be an http:// or https:// URL, not {args.endpoint!r}")
    with errors_as_cli(SourceError, OtlpExportError, os_error=f"cannot write {args.output}"):
        if is_store(args.source):
            events = load_source(args.source, tz=args.tz or default_zone()).events
            lines = otlp_lines(events, project=args.project, batch_exchanges=args.batch)
        else:
            # a log: read once, a bucket of whole conversations at a time (bounded memory)
            lines = log_otlp_lines(
                args.source,
                tz=args.tz or default_zone(),
                project=args.project,
                batch_exchanges=args.batch,
            )
        res = write_otlp(
            lines,
            output=args.output,
            endpoint=args.endpoint,
            progress=not args.no_progress,
            timeout_s=args.timeout,
        )
    print(
        f"{res.exchanges} exchanges -> {res.spans} spans ({res.span_events} log events) "
        f"in {res.requests} requests -> {res.target}",
        file=sys.stderr,
    )
    return 0
