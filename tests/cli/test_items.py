"""`tollgate items`: bad input is one clear line and exit code 2, before anything is written."""

from __future__ import annotations

import pytest

from tollgate.cli import main


@pytest.mark.parametrize(("argv", "line"), [
    (["--url", "ftp://x", "--title", "t"], "invalid item: url:"),
    (["--url", "https://example.com/", "--title", "   "], "invalid item: title:"),
    # The page text reaches PostgreSQL: a control character is refused at the edge.
    (["--url", "https://example.com/", "--title", "t", "--text", "a\x01b"],
     "Invalid value for '--text': control character refused"),
])
def test_an_invalid_capture_is_one_line(argv: list[str], line: str,
                                        capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(SystemExit) as exit_:
        main(["items", "save", "--tenant", "acme", "--user", "u-1", *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith(f"tollgate items save: {line}")
    assert err.count("\n") == 1 and "Traceback" not in err
