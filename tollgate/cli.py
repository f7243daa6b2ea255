"""`tollgate`: one command for every role. `tollgate --help` lists them."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tollgate.bench import add_bench_parser
from tollgate.config import Settings
from tollgate.http.cli_hooks import add_http_parsers
from tollgate.ops import add_ops_parser
from tollgate.review_cli import add_review_parser


def _submit(args: argparse.Namespace) -> int:
    import starter

    settings = Settings.from_env()
    raws = [raw for path in args.files for raw in starter.split_events(starter.read_source(path))]
    if args.sign:
        from policies.signing import sign_json

        secrets = settings.tenant_secrets()
        raws = [sign_json(raw, secrets) for raw in raws]
    acks = asyncio.run(starter.submit_all(raws, settings))
    return 0 if all(a.status != "invalid" for a in acks) else 1


def _dev(args: argparse.Namespace) -> int:
    from tollgate.devstack import DevStack, run_dev

    settings = Settings.from_env()
    stack = DevStack(state_dir=settings.state_dir, database_url=settings.env.get("DATABASE_URL"),
                     temporal_address=settings.env.get("TEMPORAL_ADDRESS"))
    try:
        asyncio.run(run_dev(stack))
    except KeyboardInterrupt:
        print("stopped")
    return 0


def _demo(args: argparse.Namespace) -> int:
    import logging

    from tollgate.demo import run_demo
    from tollgate.logging import configure_logging

    # Configured here, not in run_demo: structlog keeps the stream it was given.
    configure_logging(logging.WARNING)
    return 1 if asyncio.run(run_demo(Path(args.state_dir).resolve())) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tollgate", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    dev = sub.add_parser("dev", help="start the embedded stack and a worker until Ctrl-C")
    dev.set_defaults(func=_dev)
    demo = sub.add_parser("demo", help="run the demo scenario end to end and check it")
    demo.add_argument("--state-dir", default=".tollgate/demo")
    demo.set_defaults(func=_demo)
    submit = sub.add_parser("submit", help="producer: submit events from files or - (stdin)")
    submit.add_argument("files", nargs="+")
    submit.add_argument("--sign", action="store_true",
                        help="sign each event with its tenant's key (stand-in for the producer)")
    submit.set_defaults(func=_submit)
    add_review_parser(sub)
    add_bench_parser(sub)
    add_ops_parser(sub)
    add_http_parsers(sub, dev)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))
