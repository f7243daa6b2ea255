"""For the tests of hostile command-line arguments: the console script's answer to one."""

from __future__ import annotations

import pytest

from tollgate.cli import main


def answer(line: str, value: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    argv = [value if word == "{}" else word for word in line.split()]
    with pytest.raises(SystemExit) as ended:
        main(argv)
    said = capsys.readouterr()
    return int(ended.value.code or 0), said.out + said.err
