"""What every section of the settings tree shares: fields named by their environment variable,
blank values meaning unset, and a bad value failing in one line that names the variable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ConfigError(SystemExit):
    """A configuration value the settings tree refused, said in one line that names the
    variable and never echoes a secret. A ``SystemExit`` so that ``python worker.py`` ends with
    that line and no traceback; the CLI maps it to ``Exit.CONFIG``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def env_field(variable: str, default: Any = None, description: str = "") -> Any:
    """A field read from ``variable`` (also settable by its own name, for tests and code)."""
    return Field(default, validation_alias=variable, description=description)


class Section(BaseModel):
    """One concern's variables. Built from the whole flat environment: each section picks the
    variables it declares and ignores the rest."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        # An exported-but-empty variable (``FOO= cmd``) means "use the default", as it always has.
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if not (isinstance(v, str) and not v.strip())}
        return data

    @classmethod
    def variable(cls, field_name: str) -> str:
        """The environment variable behind ``field_name``."""
        alias = cls.model_fields[field_name].validation_alias
        return alias if isinstance(alias, str) else field_name

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Field name -> environment variable, in declaration order."""
        return {name: cls.variable(name) for name in cls.model_fields}

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self:
        """This section from a flat mapping of environment variables.

        Raises:
            ConfigError: one line naming the first variable whose value is refused.
        """
        try:
            return cls.model_validate(dict(env))
        except ValidationError as exc:
            raise config_error(exc) from None


def port_number(raw: Any, variable: str, *, lowest: int = 0) -> int:
    """A TCP port from a variable's text (``" 0 "`` is 0: pick a free one)."""
    text = str(raw).strip()
    if not text.isdigit() or not lowest <= int(text) <= 65535:
        if lowest:
            raise ValueError(f"{variable}: expected a port number, got {text!r}")
        raise ValueError(f"{variable}={text!r} is not a port number (0-65535)")
    return int(text)


def whole_number(raw: Any, variable: str, *, lowest: int, highest: int | None = None) -> int:
    """A count from a variable's text, at least ``lowest`` and at most ``highest`` if given
    (sizes of the worker's cache and slots, connections, tries)."""
    text = str(raw).strip()
    too_high = highest is not None and text.isdigit() and int(text) > highest
    if not text.isdigit() or int(text) < lowest or too_high:
        span = f"of at least {lowest}" if highest is None else f"from {lowest} to {highest}"
        raise ValueError(f"{variable} must be a whole number {span}, not {text!r}")
    return int(text)


def positive_number(raw: Any, variable: str) -> float:
    """A number above 0 (rates, sizes)."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{variable} must be a number, not {raw!r}") from None
    if not value > 0:
        raise ValueError(f"{variable} must be above 0")
    return value


def comma_list(raw: Any) -> tuple[str, ...]:
    """``"a, b,,c"`` -> ``("a", "b", "c")``."""
    if isinstance(raw, str):
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    return tuple(raw)


def config_error(exc: ValidationError) -> ConfigError:
    """The first problem of ``exc`` as one line: ``VARIABLE: what is wrong``. Pydantic's own
    messages never carry the input value, so a refused secret is not echoed."""
    first = exc.errors(include_input=False, include_url=False)[0]
    names = [part for part in first["loc"] if isinstance(part, str) and part.isupper()]
    variable = names[-1] if names else ""
    message = first["msg"].removeprefix("Value error, ").splitlines()[0]
    if not variable or message.startswith(variable):
        return ConfigError(message)
    return ConfigError(f"{variable}: {message[:1].lower()}{message[1:]}")
