"""The HTTP commands of the CLI, kept here so the CLI module only wires them in:
``tollgate serve`` and ``tollgate dev token``."""

from __future__ import annotations

import argparse
import re
from typing import Any

from contracts.base import ID_PATTERN
from tollgate.config import Settings


def add_http_parsers(sub: Any, dev: argparse.ArgumentParser) -> None:
    serve = sub.add_parser("serve", help="the HTTP service (webhook intake, review API, inbox) "
                                         "and its outbox relay")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="default 8400 "
                       "(TOLLGATE_HTTP_PORT)")
    serve.set_defaults(func=_serve)
    token = dev.add_subparsers(dest="dev_cmd").add_parser(
        "token", help="print a local reviewer token signed by the dev key")
    token.add_argument("--reviewer", required=True)
    token.add_argument("--role", required=True)
    token.add_argument("--tenant", required=True)
    token.add_argument("--hours", type=float, default=8.0)
    token.set_defaults(func=_dev_token)


def _serve(args: argparse.Namespace) -> int:
    from tollgate.http.app import run_server

    return run_server(Settings.from_env(), args.host, args.port)


def _dev_token(args: argparse.Namespace) -> int:
    from tollgate.http.identity import issue_dev_token

    for name in ("reviewer", "role", "tenant"):
        if not re.fullmatch(ID_PATTERN, getattr(args, name)):
            print(f"not a valid {name}: {getattr(args, name)!r}")
            return 2
    if not 0 < args.hours <= 24 * 30:
        print("--hours must be between 0 and 720")
        return 2
    print(issue_dev_token(Settings.from_env().state_dir, reviewer=args.reviewer, role=args.role,
                          tenant=args.tenant, ttl_s=int(args.hours * 3600)))
    return 0
