"""`tollgate certify`: the release gate (docs/rollout.md)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tollgate.cli.common import Command
from tollgate.cli.params import EdgePath
from tollgate.runtime.exits import Exit, Failure

if TYPE_CHECKING:
    from tollgate.config.settings import Settings
    from tollgate.ops.certify import CatalogueRun


@click.command()
@click.option("--out", type=EdgePath(file_okay=False, path_type=Path),
              default=Path("acceptance-pack"), help="folder the pack is written to")
@click.option("--catalogue", type=EdgePath(dir_okay=False, exists=True, path_type=Path),
              help="another catalogue file (a subset: its certification opens no rollout)")
@click.option("--no-record", is_flag=True,
              help="write the pack only; do not record the certification in PostgreSQL")
@click.option("--checkout", type=EdgePath(file_okay=False, exists=True, path_type=Path),
              help="a checkout of this release's commit, whose tests/ the catalogue runs"
                   " (default: the checkout of an editable install)")
def certify(out: Path, catalogue: Path | None, no_record: bool,
            checkout: Path | None) -> Command:
    """Run the fixture catalogue (shipped in the package, from docs/fixtures.md) and write the
    acceptance pack with its evidence; record the certification for `ops rollout`. Exit 1 when
    a fixture fails."""

    async def go(s: Settings) -> int:
        import asyncio

        # The catalogue runs for minutes in a child pytest: off the event loop.
        run, evidence, where = await asyncio.to_thread(_run_and_write, out, catalogue,
                                                       checkout)
        if not no_record:
            from adapters.postgres.rollout import RolloutStore
            from tollgate.cli.common import pool

            try:
                async with pool(s, migrate=True) as p:
                    await RolloutStore(p).record_certification(
                        policy_version=evidence["policy_version"], code_commit=evidence["commit"],
                        catalogue=evidence["catalogue_digest"], passed=run.ok,
                        tests_passed=run.passed, tests_failed=run.failed, pack_dir=where)
            except Failure as failure:
                raise Failure(failure.code, f"pack written to {out}, certification not"
                              f" recorded: {failure.message} (--no-record skips it)") from None
        verdict = "PASSED" if evidence["certified"] else "FAILED"
        click.echo(f"{verdict}: {run.passed} passed, {run.failed} failed; pack in {out}")
        return Exit.OK if run.ok else Exit.REFUSED

    return go


def _run_and_write(out: Path, catalogue: Path | None, checkout: Path | None
                   ) -> tuple[CatalogueRun, dict[str, Any], str]:
    from policies.matrix import newest_matrix_file
    from tollgate.ops.certify import catalogue_nodes, run_catalogue, write_pack
    from tollgate.ops.release_identity import (
        ROOT,
        checkout_commit,
        code_commit,
        policy_version,
    )

    checkout = (checkout or ROOT).resolve()
    if not (checkout / "tests").is_dir():
        raise Failure(Exit.USAGE, f"no tests/ in {checkout}: pass --checkout with a checkout"
                      " of this release's commit (the package ships no tests)")
    commit, version = code_commit(), policy_version()
    if checkout != ROOT and (theirs := checkout_commit(checkout)) != commit:
        raise Failure(Exit.REFUSED, f"the checkout {checkout} is at {theirs[:12]}, this"
                      f" install was built from {commit[:12]}: its tests certify other code")
    nodes = catalogue_nodes(catalogue) if catalogue else catalogue_nodes()
    click.echo(f"certify: {len(nodes)} catalogue entries, policy {version},"
               f" commit {commit[:12]}", err=True)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        run = run_catalogue(nodes, Path(work), checkout)
        shutil.copyfile(Path(work) / "pytest.log", out / "pytest.log")
    evidence = write_pack(out, run, commit=commit, policy_version=version,
                          policy_file=newest_matrix_file(), checkout=checkout)
    return run, evidence, str(out.resolve())
