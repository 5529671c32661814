"""Commands that run other commands (`env`, `timeout`, `xargs`, `watch`, `sudo` ...).

A wrapper with an option table (`option_tables`) has its options read as the program
reads them, so every abbreviation of a long option is the option itself
(`env --sp='sh x'` is `env --split-string`) and an option it does not have asks. The
others keep the option lists of their rule in `permissions.yaml`. What follows the
options is the command: classified in turn, or parsed as shell code when the wrapper
hands it to `sh -c` (`watch` without `-x`, `env -S`, `flock FILE -c`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ducklm.tools.commands.calls import Ctx
from ducklm.tools.commands.code import ROOT_SHELL, CodeRunner, joined
from ducklm.tools.commands.findings import Findings
from ducklm.tools.commands.getopt import parse_options
from ducklm.tools.commands.option_tables import OPTION_SPECS
from ducklm.tools.commands.options import Opt, flag_matches, split_options
from ducklm.tools.commands.rules import WrapperRule
from ducklm.tools.commands.variables import Variables
from ducklm.tools.commands.verdict import CLASS_REASONS
from ducklm.tools.commands.words import Word

SUDO = "{name} runs a command as root"
CLEARS_ENV = "{name} {option} drops the environment the sandbox gives commands (git's settings)"
_CLEARING = {"env": ("-i", "--ignore-environment", "-u", "--unset"), "exec": ("-c",)}


@dataclass(frozen=True)
class Wrappers:
    """Finds the command a wrapper runs, classifying what the wrapper itself does."""

    found: Findings
    run_code: CodeRunner
    variables: Variables

    def unwrap(
        self, name: str, rule: WrapperRule, args: list[Word], ctx: Ctx
    ) -> tuple[list[Word], Ctx] | None:
        """The command a wrapper runs, or None when it runs none the policy can see."""
        if rule.floor != "read_only" or rule.sudo:
            reason = SUDO if rule.sudo else CLASS_REASONS[rule.floor]
            self.found.add(rule.floor, reason.format(name=name), sudo=rule.sudo)
        ctx = replace(ctx, sudo=ctx.sudo or rule.sudo, appended=ctx.appended or rule.appends)
        options = self._options(name, rule, args, ctx)
        if options is None:
            return None
        rest, ctx, joins = options
        i = 0
        while rule.assignments and i < len(rest) and "=" in rest[i].text:
            self.variables.assignment(rest[i], how=name, prefix=True)
            i += 1
        rest = rest[i + rule.skip :]
        if rest and rest[0].text in rule.code_options:  # `flock FILE -c CODE`
            if len(rest) > 1:
                self.run_code(name, rest[1], ctx)
            return None
        if not rest:
            if ctx.root_shell:
                self.found.add("dangerous", ROOT_SHELL.format(name=name), sudo=ctx.sudo)
            return None
        if joins:
            self.run_code(name, joined(rest), ctx)
            return None
        return rest, ctx

    def _options(
        self, name: str, rule: WrapperRule, args: list[Word], ctx: Ctx
    ) -> tuple[list[Word], Ctx, bool] | None:
        """The words after a wrapper's options, the context, and whether they are joined.

        None when the wrapper runs no command after them (`command -v`, `env -S`).
        """
        spec = OPTION_SPECS.get(name)
        if spec is not None:
            parsed = parse_options(name, spec, args)
            opts, rest = parsed.opts, parsed.positionals
            for problem in parsed.problems:
                self.found.add("system", problem, ask=True)
        else:
            value_options = (*rule.value_options, *rule.code_options)
            opts, _, rest = split_options(args, value_options, stop=True)
        joins = rule.joins
        for opt in opts:
            if any(flag_matches(opt, f) for f in _CLEARING.get(name, ())):
                self._clears_env(name, opt)
            if any(flag_matches(opt, f) for f in rule.lookup_options):
                return None
            if any(flag_matches(opt, f) for f in rule.shell_options):
                ctx = replace(ctx, root_shell=True)
            joins = joins and opt.name not in rule.argv_options
            if spec is not None and opt.name in spec.risky:
                self.found.add("system", f"{name} {opt.name} {spec.risky[opt.name]}", ask=True)
            if opt.value is not None and opt.name in rule.code_options:
                # `env -S 'sh -c' x`: the split string comes before the words after it
                self.run_code(name, joined([opt.value, *rest]), ctx)
                return None
            self._option_value(name, opt, spec.writes if spec else ())
        return rest, ctx, joins

    def _option_value(self, name: str, opt: Opt, writes: tuple[str, ...]) -> None:
        if opt.value is None:
            return
        if opt.name in writes or opt.name in self.found.rules.write_options.get(name, ()):
            self.found.write(opt.value, "workspace_write", name)
        else:
            self.found.secret(opt.value)  # xargs -a FILE

    def _clears_env(self, name: str, opt: Opt) -> None:
        """`env -i`, `exec -c`, `env -u NAME`: the last only matters for a risky NAME."""
        if opt.value is None:
            self.found.add("system", CLEARS_ENV.format(name=name, option=opt.name), ask=True)
        else:
            self.variables.assignment(opt.value, how=f"{name} {opt.name}", prefix=True)
