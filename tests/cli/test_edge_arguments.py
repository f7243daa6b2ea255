"""Every `tollgate ops …`, `items`, `trace`, `submit` and `review` argument that reaches
PostgreSQL or Temporal is checked at the edge (issue 25 item 1): a NUL, a lone surrogate or a
control character answers one line naming the option, exit 2, before any connection."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tests.cli.edge_arguments_support import answer
from tollgate.cli import cli
from tollgate.cli.params import EdgePath, EdgeText
from tollgate.runtime.exits import Exit

#: Where the hostile value goes: ``{}`` in the argv; the name the answer must carry.
CASES: list[tuple[str, str]] = [
    ("ops state {}", "WORKFLOW_ID"),
    ("ops kill --adapter {} --reason r", "--adapter"),
    ("ops kill --tenant {} --reason r", "--tenant"),
    ("ops kill --reason {}", "--reason"),
    ("ops reopen --tenant {} --root-cause rc --fixture f --canary 1", "--tenant"),
    ("ops reopen --root-cause {} --fixture f --canary 1", "--root-cause"),
    ("ops reopen --root-cause rc --fixture {} --canary 1", "--fixture"),
    ("ops dlq approve 1 --reason {}", "--reason"),
    ("ops dlq close 1 --reason {}", "--reason"),
    ("ops outbox retry 1 --reason {}", "--reason"),
    ("ops outbox drop 1 --reason {}", "--reason"),
    ("ops close {} --reason r", "WORKFLOW_ID"),
    ("ops close event/acme/k-1 --reason {}", "--reason"),
    ("ops rollout --tenant {} --to shadow --reason r", "--tenant"),
    ("ops rollout --tenant acme --adapter {} --to shadow --reason r", "--adapter"),
    ("ops rollout --tenant acme --to shadow --reason {}", "--reason"),
    ("ops audit --verify --tenant {}", "--tenant"),
    ("items save --tenant {} --user u --url https://x.test/ --title t", "--tenant"),
    ("items save --tenant acme --user {} --url https://x.test/ --title t", "--user"),
    ("items save --tenant acme --user u --url {} --title t", "--url"),
    ("items save --tenant acme --user u --url https://x.test/ --title {}", "--title"),
    ("items save --tenant acme --user u --url https://x.test/ --title t --description {}",
     "--description"),
    ("items save --tenant acme --user u --url https://x.test/ --title t --text {}", "--text"),
    ("items untag 1 {} --tenant acme --user u", "TAG"),
    ("trace {}", "EVENT"),
    ("review list --tenant {}", "--tenant"),
    ("review show {}", "WORKFLOW_ID"),
]
#: File arguments: only the NUL, which no file name can hold (other odd bytes may be real).
PATH_CASES = [("ops backup {}", "FILE"), ("ops restore {} --yes", "FILE"),
              ("submit {}", "FILE..."), ("certify --catalogue {}", "--catalogue"),
              ("certify --checkout {}", "--checkout"), ("certify --out {}", "--out"),
              # The tools: they reach no server, but a traceback is no answer either.
              ("bench --state-dir {}", "--state-dir"), ("bench --json {}", "--json"),
              ("bench --py-spy {}", "--py-spy"), ("chaos --state-dir {}", "--state-dir"),
              ("chaos --json {}", "--json"), ("chaos --out {}", "--out"),
              ("demo --state-dir {}", "--state-dir")]
HOSTILE = {"nul": "a\x00b", "surrogate": "a\ud800b", "escape": "a\x1b[2Jb"}
#: Every case with a NUL, and with a surrogate or an escape in turn (all three rules are the
#: same check; each command gets two of them, keeping the run short).
HOSTILE_CASES = [(line, name, kind) for i, (line, name) in enumerate(CASES)
                 for kind in ("nul", "surrogate" if i % 2 else "escape")]


@pytest.fixture(autouse=True)
def _nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Servers that refuse every connection: a command that got past its arguments would
    answer "cannot reach" (exit 3) or want a token (exit 8), never exit 2."""
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", "postgresql://tollgate@127.0.0.1:9/none")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:9")
    monkeypatch.delenv("TOLLGATE_TOKEN", raising=False)
    monkeypatch.delenv("TOLLGATE_DEBUG", raising=False)


@pytest.mark.parametrize(("line", "name", "kind"), HOSTILE_CASES)
def test_hostile_argument_is_one_line_naming_it(
        line: str, name: str, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = answer(line, HOSTILE[kind], capsys)
    assert code == Exit.USAGE, text
    assert len(text.strip().splitlines()) == 1, text
    assert name in text and "refused" in text and "Traceback" not in text
    assert "cannot reach" not in text and HOSTILE[kind] not in text


@pytest.mark.parametrize(("line", "name"), PATH_CASES)
def test_file_argument_with_nul_is_one_line_naming_it(
        line: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = answer(line, "state\x00.dump", capsys)
    assert code == Exit.USAGE, text
    assert len(text.strip().splitlines()) == 1, text
    assert name in text and "nul refused" in text and "Traceback" not in text


@pytest.mark.parametrize(("line", "name"), CASES[:3])
def test_plain_values_pass_the_edge(
        line: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the same commands with ordinary values go on to the servers (or the
    token check) and are answered by them, not by the edge."""
    code, text = answer(line, "event/acme/k-1" if "state" in line else "acme", capsys)
    assert code in (Exit.UNREACHABLE, Exit.NO_IDENTITY, Exit.FILE), text
    assert "refused" not in text


#: Command groups whose text reaches PostgreSQL or Temporal (the tools and `serve` are not).
CHECKED_GROUPS = ("ops", "items", "trace", "submit", "review", "certify")
#: Text parameters checked elsewhere: a token by the identity verifier (one line, exit 8), a
#: review's --seen by its own pattern (exit 2).
CHECKED_ELSEWHERE = {"token", "seen"}


def subcommands(group: click.Group) -> list[tuple[str, click.Command]]:
    """A group's commands, loaded (the root group imports each only when asked for it)."""
    ctx = click.Context(group)
    return [(name, command) for name in group.list_commands(ctx)
            if (command := group.get_command(ctx, name)) is not None]


def text_parameters(command: click.Command, path: str) -> list[tuple[str, click.Parameter]]:
    if isinstance(command, click.Group):
        return [found for name, sub in subcommands(command)
                for found in text_parameters(sub, f"{path} {name}")]
    # A flag's value is one the command fixed (`--live`, `--all`), never typed in.
    return [(path, p) for p in command.params
            if (p.type is click.STRING or isinstance(p.type, click.Path))
            and not (isinstance(p, click.Option) and p.is_flag)]


def test_every_text_parameter_is_checked_at_the_edge() -> None:
    """The cases above, kept complete: an option added later without ``TEXT``/``ID_TEXT`` (or
    ``EdgePath``) fails here, naming it."""
    unchecked = [f"{path} {param.name}"
                 for group in CHECKED_GROUPS
                 for path, param in text_parameters(dict(subcommands(cli))[group], group)
                 if not isinstance(param.type, EdgeText | EdgePath)
                 and param.name not in CHECKED_ELSEWHERE]
    assert unchecked == []


def path_parameters(command: click.Command, path: str) -> list[str]:
    if isinstance(command, click.Group):
        return [found for name, sub in subcommands(command)
                for found in path_parameters(sub, f"{path} {name}")]
    return [f"{path} {p.name}" for p in command.params
            if isinstance(p.type, click.Path) and not isinstance(p.type, EdgePath)]


def test_every_file_parameter_of_every_command_refuses_a_nul() -> None:
    """Tools included (``bench``, ``chaos``, ``demo``, ``dev``): a file option added later as a
    plain ``click.Path`` fails here, naming it."""
    assert path_parameters(cli, "tollgate") == []
