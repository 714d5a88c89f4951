"""The CLI reference page, read from ``draguard``'s own argument parser (app/cli.py builds it;
each sub-command's options are added by app/cli.py, app/commands.py, app/server/cli_serve.py and
app/certs.py), so a flag, a default or a help text cannot be documented differently from what
the program accepts."""

from __future__ import annotations

import argparse
import contextlib

from docs_common import banner, cell, code
from draguard.cli import build_parser

INTRO = """\
# Command line

Every sub-command of `draguard`, with each option, its argument, default and help — read from
the argument parser itself. `python -m draguard …` and, as a kubectl plugin, `kubectl draguard …`
take the same arguments. What the commands do and how their answers read is in the guides:
[the CLI](../guides/cli.md), [CI](../guides/ci.md), [explain and capacity](../guides/explain-capacity.md),
[the webhook](../guides/webhook.md).

"""


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _default(action: argparse.Action) -> str:
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        return "off" if action.default is False else "on"
    value = action.default
    if value is None or value == [] or value is argparse.SUPPRESS:
        return ""
    return code(value)


def _argument(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return " \\| ".join(code(c) for c in action.choices)
    metavar = action.metavar if action.metavar is not None else action.dest.upper()
    shown = " ".join(metavar) if isinstance(metavar, tuple) else str(metavar)
    if action.nargs in ("+", "*"):
        shown += " …"
    return code(shown)


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        with contextlib.suppress(KeyError, TypeError, ValueError):  # a literal % stays as written
            text = text % {**vars(action), "prog": prog}
    notes = []
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    if action.required and action.option_strings:
        notes.append("required")
    return cell(text + (f" ({', '.join(notes)})" if notes else ""))


def _table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| option | argument | default | meaning |", "|---|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name, argument = ", ".join(code(o) for o in action.option_strings), _argument(action)
        else:  # a positional: its metavar is its name
            name, argument = _argument(action), "(positional)"
        rows.append(f"| {name} | {argument} | {_default(action)} | {_help(action, parser.prog)} |")
    return rows


def _exclusive(parser: argparse.ArgumentParser) -> list[str]:
    out = []
    for group in parser._mutually_exclusive_groups:
        names = [a.option_strings[0] for a in group._group_actions if a.option_strings]
        if len(names) > 1:
            out.append("At most one of " + ", ".join(code(n) for n in names) + ".")
    return out


def render() -> str:
    top = build_parser()
    sub = _subparsers(top)
    helps = {a.dest: a.help or "" for a in sub._choices_actions}
    lines = [banner("the argument parser (app/cli.py)") + INTRO.rstrip("\n"), ""]
    lines += ["## draguard", "", cell(top.description or ""), "", *_table(top), ""]
    lines.append("Sub-commands: " + ", ".join(f"[`{name}`](#draguard-{name})" for name in sub.choices) + ".")
    lines.append("")
    for name in sub.choices:
        parser = _subparsers(build_parser(name)).choices[name]
        lines += [f"## draguard {name}", "", cell(helps.get(name, "")).rstrip(".") + ".", ""]
        lines += _table(parser)
        lines.append("")
        for note in _exclusive(parser):
            lines += [note, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
