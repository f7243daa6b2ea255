"""README.md's Quick start and four roles, run in order against one fresh ``tollgate dev``: each
line's exit code and the key words of the output the README shows beside it. A README line that
stops working, or a new line this test does not know, fails here."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contracts import EventState
from tests.docs.readme_lines import Line, readme_lines, without_comment
from tests.eventually import eventually
from tests.stack.devproc import DevProcess, stack_folder
from tollgate.config.settings import Settings
from tollgate.dev.demo import wait_state
from tollgate.runtime.client import build_client

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EXAMPLE_ID = "event/acme/care-C-1001-0930"
#: The review request ids the README shows; the test puts in the ones the stack made.
SHOWN_SEEN = {"v1": "v1:6f0b2ee4-35e3-49f1-8e8f-0124a87f3f6c",
              "v2": "v2:0d4c1a8e-5b0f-4c55-9a4e-2f1de8a7c301"}

#: Lines a test cannot run, with the reason.
SKIPPED = {
    "make demo": "the demo is tests/e2e's own end-to-end run",
    "make test": "the whole suite, this test among it",
    "make dev": "the stack this test starts itself (tollgate dev), kept up until stopped",
    "make bench": "several minutes; tests/bench runs the benchmark's parts",
    ".venv/bin/tollgate ops dlq list | show ID | approve ID --reason ... --token $OWNER | "
    "replay ID --token $ONCALL | close ID --reason ... --token $OWNER":
    "a synopsis of five commands; a fresh stack has no dead letter",
}
#: Every other line: (exit code, words its output must contain beyond what the README shows).
#: Reads are retried until they say so (the workflow moves on in the background).
EXPECTED: dict[str, tuple[set[int], list[str]]] = {
    "tollgate submit --json": ({1}, ['"signature_missing"']),
    "review list": ({0}, [EXAMPLE_ID, "left"]),
    "review show event/acme/care-C-1001-0930 | grep seen": ({0}, ["decide with --seen v2:"]),
    "ops state": ({0}, ["SUCCEEDED"]),
    "ops kill": ({0}, ["messaging"]),
    "ops reopen": ({0}, ["messaging"]),
    "ops sweep": ({0}, []),
    # The unsigned examples above were quarantined: the table counts them too.
    "ops status": ({0, 6}, ["needs a human", "QUARANTINED", "codec: ok"]),
    # The README's event completed with an outcome: there is nothing to close, said in one line.
    "ops close": ({1}, []),
    "ops backup": ({0}, []),
    "trace": ({0}, [EXAMPLE_ID]),
    "ops audit --verify": ({0}, []),
    "ops rollout": ({0}, ["shadow"]),
}
_READS = ("review list", "review show", "ops state", "ops status", "trace")


def expected(line: Line) -> tuple[set[int], list[str]]:
    command = without_comment(line.command)
    codes = {1} if any(s.startswith("refused:") for s in line.shown) else {0}
    words = [":".join(s.split(":")[:2]) for s in line.shown
             if s.startswith(("refused:", "accepted:"))]
    words += [s.split("(")[0].strip() for s in line.shown
              if s.startswith(("accepted  ", "duplicate "))]
    words += [w for s in line.shown for w in re.findall(r'"status":"\w+"', s)]
    words += [w for s in line.shown for w in re.findall(r"state \w+", s)]
    for key, (want_codes, want_words) in EXPECTED.items():
        if key in command:
            codes, words = want_codes, words + want_words
            break
    return codes, words


def test_every_line_is_run_or_skipped_with_a_reason() -> None:
    commands = [without_comment(line.command) for line in readme_lines()]
    assert [c for c in commands if c.startswith("make")] == ["make demo", "make test",
                                                            "make dev", "make bench"]
    assert set(SKIPPED) <= set(commands), set(SKIPPED) - set(commands)
    assert len(commands) > 30, commands


@pytest.fixture(scope="module")
def stack() -> Iterator[DevProcess]:
    with stack_folder() as state:
        dev = DevProcess(state).start()
        try:
            yield dev
        finally:
            assert dev.proc is not None
            dev.proc.send_signal(signal.SIGINT)
            try:
                dev.wait_exit(60)
            except subprocess.TimeoutExpired:
                dev.proc.kill()


def _env(dev: DevProcess) -> dict[str, str]:
    # Only the state folder: other terminals find the rest in its endpoints.json.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOLLGATE_", "TEMPORAL_"))
           and k not in ("DATABASE_URL",)}
    return {**env, "TOLLGATE_STATE_DIR": str(dev.state_dir),
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}


def _run(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], env=env, cwd=ROOT,  # noqa: S603, S607
                          capture_output=True, text=True, timeout=120, check=False)


def _seen_in(out: str, name: str) -> str | None:
    """The request id ``review show`` printed ("decide with --seen v1:…"), if it printed one."""
    found = re.search(rf"--seen ({name}:[0-9a-f-]{{36}})", out)
    return found[1] if found else None


def _seen(env: dict[str, str]) -> str:
    done = _run(f"tollgate review show {EXAMPLE_ID} --json", env)
    if done.returncode != 0:
        return done.stderr
    shown = json.loads(done.stdout)
    return str(shown["seen"] or (shown["state"], shown["decisions"]))


async def test_the_readme_lines_work_as_written(stack: DevProcess, tmp_path: Path) -> None:
    env = _env(stack)
    ran: list[str] = []
    seens: dict[str, str] = {}
    last_out = ""
    for line in readme_lines():
        command = without_comment(line.command)
        if command in SKIPPED:
            continue
        for name, shown in SHOWN_SEEN.items():
            if shown in command and name not in seens:  # the first line that answers it
                # The README reads it off the `review show` just run; only when that line
                # printed none yet does the test ask again (a console-script run each).
                printed = _seen_in(last_out, name)
                seens[name] = printed if printed is not None else await eventually(
                    functools.partial(_seen, env), f"a {name} review request",
                    until=lambda s, n=name: s.startswith(n + ":"),  # type: ignore[misc]
                    timeout=60, interval=0.5)
            command = command.replace(shown, seens.get(name, shown))
        script = (command.replace(".venv/bin/", f"{BIN}/")
                  .replace("http://127.0.0.1:8400", f"http://127.0.0.1:{stack.ports['HTTP']}")
                  .replace("event/acme/KEY", EXAMPLE_ID).replace(" FILE", f" {tmp_path}/b.dump"))
        if re.match(r"^[A-Z]+=", command):  # an assignment: keep what it set for later lines
            done = _run(f"set -a\n{script}\nenv -0", env)  # set -a: export what it sets
            assert done.returncode == 0, (command, done.stderr)
            env = dict(kv.split("=", 1) for kv in done.stdout.split("\0") if "=" in kv)
            continue
        codes, words = expected(line)

        def said_so(done: subprocess.CompletedProcess[str], c: set[int] = codes,
                    w: list[str] = words) -> bool:
            return done.returncode in c and all(x in done.stdout for x in w)

        run = lambda s=script, e=env: _run(s, e)  # noqa: E731
        if any(read in command for read in _READS):
            done = await eventually(run, command, until=said_so, timeout=90, interval=0.5)
        else:
            done = run()
        assert said_so(done), (command, done.returncode, words, done.stdout, done.stderr)
        assert "Traceback" not in done.stdout + done.stderr, (command, done.stderr)
        ran.append(command)
        last_out = done.stdout
    assert len(ran) > 20, ran
    await _example_outcomes(stack)



def test_the_endpoints_file_names_the_http_service_the_codec_and_the_metrics(
    stack: DevProcess,
) -> None:
    named = json.loads((stack.state_dir / "endpoints.json").read_text())
    ports = stack.ports
    assert named["http_url"] == f"http://127.0.0.1:{ports['HTTP']}"
    assert named["metrics_url"] == f"http://127.0.0.1:{ports['METRICS']}/metrics"
    assert named["sdk_metrics_url"] == f"http://127.0.0.1:{ports['SDK_METRICS']}/metrics"
    assert named["codec_url"].startswith("http://127.0.0.1:")


async def _example_outcomes(stack: DevProcess) -> None:
    """The example events end as the README says. Asked of the workflows from here: `ops
    state` is a README line of its own above, and a console-script run per event and poll cost
    ≈ 1.5 s of CPU each (docs/performance.md, "CLI start-up")."""
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(stack.state_dir)})
    client = await build_client(settings.temporal_address, env=settings.env)
    for workflow_id, state in [("event/acme/care-C-1002-0930", EventState.STOPPED),
                               ("event/globex/care-C-2001-0930", EventState.AWAITING_REVIEW),
                               ("event/acme/curl-1", EventState.SUPERSEDED),
                               ("event/acme/care-C-1001-1030", EventState.AWAITING_REVIEW)]:
        await wait_state(client, workflow_id, state)
