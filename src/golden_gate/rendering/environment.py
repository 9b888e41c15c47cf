"""The templates' Jinja environment: where the built-in templates are, the filters every
template has, and for a user's template (a pull request's to write) a sandbox whose includes
stay inside its own directory."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import jinja2

from golden_gate.errors import InputError


def templates_dir() -> Path:
    """Templates ship inside the package when installed, beside `src/` in a checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "templates", package.parents[1] / "templates"):
        if (candidate / "comment.md.j2").is_file():
            return candidate
    raise FileNotFoundError("golden-gate's templates are missing from the installation")


def environment(template_dir: Path, user_template: Path | None) -> jinja2.Environment:
    """The templates' environment; the built-in one is made (and its templates compiled)
    once a process, since the comment and the summary share it."""
    if user_template is None:
        return _builtin_environment(template_dir)
    return _new_environment(template_dir, user_template)


@functools.cache
def _builtin_environment(template_dir: Path) -> jinja2.Environment:
    return _new_environment(template_dir, None)


class _OwnDirectoryLoader(jinja2.FileSystemLoader):
    """A user's templates: each must resolve inside the user template's own directory, so a
    symlink (to /proc/self/environ, say) or an include cannot read anything else."""

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        root = Path(self.searchpath[0]).resolve()
        resolved = Path(filename).resolve()
        if not resolved.is_relative_to(root):
            raise jinja2.TemplateError(
                f"'{template}' resolves to {resolved}, outside the template's directory {root}"
            )
        return source, filename, uptodate


def _new_environment(template_dir: Path, user_template: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(template_dir))]
    kind: type[jinja2.Environment] = jinja2.Environment
    if user_template is not None:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        loaders.insert(0, _OwnDirectoryLoader(str(user_template.parent)))
        # A user's template is a pull request's to write: no attribute internals (no route to
        # os.system or os.environ), no unsafe callables, no changing the context's lists.
        kind = ImmutableSandboxedEnvironment
    env = kind(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,  # Markdown, not HTML: escaping is done on the data, see escape.py
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = lambda v, d=1: "n/a" if v is None else f"{v * 100:.{d}f}%"
    env.filters["num"] = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    env.filters["count"] = lambda v: f"{v:,}"
    return env


def load_template(name: str, user_template: Path | None) -> jinja2.Template:
    try:
        return environment(templates_dir(), user_template).get_template(name)
    except (jinja2.TemplateError, UnicodeDecodeError, OSError) as exc:  # not UTF-8, unreadable
        raise InputError(f"{user_template or name}: cannot load the template ({exc})") from None


def check_template(user_template: Path) -> None:
    """Load (parse) a user's template as `render` will: an error is said before it is needed.
    What it includes, and what it does with the data, can only fail when it renders."""
    load_template(user_template.name, user_template)


def init_environment() -> jinja2.Environment:
    """`init`'s templates (the golden set, the config, the workflows): ours alone, unsandboxed."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "init")),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        keep_trailing_newline=True,
    )
