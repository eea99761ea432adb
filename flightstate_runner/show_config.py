"""``flightstate config``: the configuration in effect, each setting with its value and the
source it came from (docs/configuration.md: default, TOML file, environment, option, the
later winning). Values pass through ``RunnerConfig.describe``, which redacts the DSNs'
passwords, so the output may be pasted into a ticket."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig, config_layers

__all__ = ["effective_settings", "render_json", "render_text"]

Entry = dict[str, Any]


def _where(source: str, name: str, path: Path | None) -> str:
    """Which file, variable or option set the value (the default names nothing)."""
    if source == "file":
        return str(path)
    if source == "environment":
        return ENV_PREFIX + name.upper()
    if source == "option":
        return "--" + name.replace("_", "-")
    return "host:pid of each process" if name == "holder" else ""


def effective_settings(config: RunnerConfig, path: Path | None, environ: Mapping[str, str],
                       options: Mapping[str, object]) -> dict[str, Entry]:  # fmt: skip
    """Setting name -> ``{"value", "source", "where"}``, in the order of ``RunnerConfig``;
    *config* is the one loaded from the same *path*, *environ* and *options*."""
    sources = {f.name: "default" for f in fields(RunnerConfig)}
    for source, layer in config_layers(path, environ, options):
        sources.update(dict.fromkeys(layer, source))
    shown = config.describe()
    return {
        name: {"value": shown[name], "source": source, "where": _where(source, name, path)}
        for name, source in sources.items()
    }


def render_text(settings: Mapping[str, Entry]) -> str:
    """One line per setting: name, value (JSON: strings quoted, ``null`` unset), source."""
    width = max(len(name) for name in settings)
    values = {name: json.dumps(entry["value"], ensure_ascii=False)
              for name, entry in settings.items()}  # fmt: skip
    value_width = min(48, max(len(value) for value in values.values()))
    lines = []
    for name, entry in settings.items():
        source = entry["source"] + (f" ({entry['where']})" if entry["where"] else "")
        lines.append(f"{name:<{width}}  {values[name]:<{value_width}}  {source}")
    return "\n".join(lines)


def render_json(settings: Mapping[str, Entry]) -> str:
    """The same as one JSON document."""
    return json.dumps(settings, ensure_ascii=False, indent=2)
