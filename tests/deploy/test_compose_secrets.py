"""The compose walk-through's secret files (docs/deploy.md, "Compose"): Compose mounts a file
secret as it is on the host (its ``uid``/``mode`` apply only under Swarm), so the 0600 copies
must be given to the image's user or every Tollgate service stops at start on its key ring; and
none of them may reach git."""

from __future__ import annotations

import fnmatch
import re

from tests.deploy.files import COMPOSE, DEPLOY, ROOT, compose

SECRETS = COMPOSE.parent / "secrets"


def file_secrets() -> set[str]:
    """The file names under ``./secrets/`` that compose.yaml mounts."""
    return {spec["file"].removeprefix("./secrets/") for spec in compose()["secrets"].values()}


def image_user() -> set[str]:
    """Each ``USER`` of deploy/Dockerfile's stages."""
    text = (DEPLOY / "Dockerfile").read_text()
    return set(re.findall(r"^USER\s+(\S+)", text, re.MULTILINE))


def compose_steps() -> str:
    """The shell block of docs/deploy.md's compose section that starts the stack."""
    section = (ROOT / "docs" / "deploy.md").read_text().split("## 2. Compose", 1)[1]
    section = section.split("\n## ", 1)[0]
    return next(b for b in re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
                if "docker compose up" in b)


def test_the_walk_through_gives_every_secret_file_to_the_images_user() -> None:
    steps = re.sub(r"[ \t]+", " ", compose_steps().replace("\\\n", " "))
    owner = re.search(r"--entrypoint chown .*? (\d+:\d+) ((?:/secrets/\S+ ?)+)", steps)
    assert owner, "no chown of the secret files before `docker compose up`"
    assert image_user() == {owner.group(1)}
    assert {p.removeprefix("/secrets/") for p in owner.group(2).split()} == file_secrets()
    assert steps.index("chown") < steps.index("docker compose up")
    copied = re.search(r"cp ((?:\S+ )+)secrets/", steps)
    assert copied and {p.rsplit("/", 1)[1] for p in copied.group(1).split()} == file_secrets()


def test_the_laptop_reads_its_own_copies_not_the_containers() -> None:
    section = (ROOT / "docs" / "deploy.md").read_text().split("## 2. Compose", 1)[1]
    exports = re.findall(r"(TOLLGATE_\w+_FILE)=(\S+)", section.split("\n## ", 1)[0])
    assert exports
    assert not [value for _, value in exports if "compose/secrets" in value]


def test_no_secret_file_of_the_walk_through_reaches_git() -> None:
    patterns = [line.strip() for line in (SECRETS / ".gitignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert not [name for name in file_secrets()
                if not any(fnmatch.fnmatch(name, p) for p in patterns)]
