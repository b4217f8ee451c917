"""One declaration per parameter: a family's options, written once, make its door, its estimator
and its CLI flags.

A family (LAD, the SVMs, ...) declares its problem-specific parameters as a :class:`Family` of
:class:`Param` (name, default, numpydoc type, help, allowed values, CLI flag), as
:class:`aidopt.decomposition.run.RunConfig` declares the options every run shares; Pyomo's
``ConfigDict`` with ``declare_as_argument`` is the model. From it:

* :meth:`Family.door` makes the ``solve_*`` function's signature and documents every parameter in
  its docstring; the function receives the values as one namespace ``p`` and the common
  options as ``**options``;
* :meth:`Family.estimator_params` gives the estimator's parameters (``_params``);
* :meth:`Family.add_arguments` adds the CLI flags and :meth:`Family.cli_kwargs` reads them back.

So adding an option to a family is one :class:`Param` in its module (plus the line that uses it).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import re
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["COEF0", "DEGREE", "ENGINE", "GAMMA", "Family", "Param", "none_or_float", "none_or_str", "number",
           "plain_text", "scale_or_float"]


_SAME = object()  # Param.model_default unset


@dataclass(frozen=True)
class Param:
    """One problem-specific parameter of a family.

    Attributes
    ----------
    name : str
        The keyword of the ``solve_*`` function and of the estimator.
    default : object
        Its default, the same in the function, the estimator and the CLI.
    help : str
        One paragraph for the docstring and ``--help``.
    kind : str
        The numpydoc type (``"float"``, ``'{"auto", "dual"}'``); default: from ``choices`` or the
        default's type.
    choices : tuple
        The allowed values (checked before anything is built; the CLI's choices), or ``()``.
    parse : callable, optional
        CLI: the value from its text (default ``float`` / ``int`` / ``str`` by the default's type,
        ``str`` with ``choices``).
    flag : str, optional
        CLI flag (default ``--name`` with dashes; a boolean that defaults to True gets
        ``--no-name``); ``""``: no CLI flag (a callable, an array).
    estimator : bool
        Also a parameter of the family's estimator (``False`` for how the data is read, e.g. the
        out-of-core engine).
    metavar : str, optional
        CLI placeholder of the value.
    flag_help : str, optional
        The help of a negated flag (``--no-name``, for a boolean whose default is True): what
        the flag does, which is the opposite of ``help``. Required for such a flag.
    model_default : object, optional
        The default of the estimator and the CLI where it differs from the ``solve_*``
        function's: they fit a user's model and follow its field's conventions (scikit-learn's
        regressors and R's ``rq(y ~ x)`` fit an intercept), while ``solve_*`` takes a design
        matrix as given. Unset: ``default`` everywhere.
    """

    name: str
    default: Any
    help: str
    kind: str = ""
    choices: tuple = ()
    parse: Callable | None = None
    flag: str | None = None
    estimator: bool = True
    metavar: str | None = None
    flag_help: str | None = None
    model_default: Any = _SAME

    @property
    def user_default(self) -> Any:
        """The default of the estimator and the CLI (``model_default`` when set)."""
        return self.default if self.model_default is _SAME else self.model_default

    def type_text(self) -> str:
        if self.kind:
            return self.kind
        if self.choices:
            return "{" + ", ".join(repr(c) for c in self.choices) + "}"
        if isinstance(self.default, bool):
            return "bool"
        return type(self.default).__name__ if self.default is not None else "object"

    def doc(self, user: bool = False) -> str:
        """The numpydoc entry: ``name : type, default value`` and the help, wrapped (``user``:
        the estimator's default)."""
        default = self.user_default if user else self.default
        text = textwrap.fill(self.help, 96, initial_indent="    ", subsequent_indent="    ")
        return f"{self.name} : {self.type_text()}, default {default!r}\n{text}"

    def cli_help(self) -> str:
        """The help as plain text for ``--help``: reST roles and literals unwrapped, and the
        default added unless the help states it."""
        negated = (self.cli_flag() or "").startswith("--no-")
        if negated and not self.flag_help:
            raise ValueError(f"parameter {self.name!r}: its flag {self.cli_flag()} needs a "
                             "flag_help (the help says what the option does when on)")
        text = plain_text(self.flag_help if negated else self.help)
        if not negated and ("default" not in text.lower() or self.model_default is not _SAME):
            text += f" (default: {self.user_default})"
        return text

    def cli_flag(self) -> str | None:
        if self.flag == "":
            return None
        if self.flag:
            return self.flag
        stem = self.name.replace("_", "-")
        return f"--no-{stem}" if self.user_default is True else f"--{stem}"


class Family:
    """The problem-specific parameters of one family, declared once (see the module docstring).

    Parameters
    ----------
    name : str
        The family (``"lad"``), for messages.
    *params : Param
    """

    def __init__(self, name: str, *params: Param):
        self.name = name
        self.params = {p.name: p for p in params}
        if len(self.params) != len(params):
            raise ValueError(f"{name}: a parameter is declared twice")

    # ------------------------------------------------------------------ the door
    def values(self, given: dict) -> types.SimpleNamespace:
        """Every parameter's value: ``given``, else its default. Booleans are checked here
        (:meth:`check_bools`); the other values where they are used (the plug-ins'
        constructors, the data validation), with messages that name the accepted values;
        ``choices`` are the CLI's and the documentation's."""
        self.check_bools(given)
        return types.SimpleNamespace(**{name: given.get(name, param.default)
                                        for name, param in self.params.items()})

    def check_bools(self, given: dict) -> None:
        """Refuse a value other than True or False (numpy's booleans included) for a boolean
        parameter: ``prune="no"`` would otherwise be true.

        Raises
        ------
        TypeError
            Naming the parameter and the value given.
        """
        import numpy as np

        for name, value in given.items():
            param = self.params.get(name)
            if (param is not None and param.type_text() == "bool"
                    and not isinstance(value, bool | np.bool_)):
                raise TypeError(f"{name} must be True or False, got {value!r}")

    def door(self, *, namespace: str = "p", exclude: tuple[str, ...] = (), **defaults):
        """Decorator for ``solve_*(data..., *, p, **options)``: the public function takes the
        data arguments of ``solve_*``, then every parameter of the family, then the common
        options (``defaults`` override a common option's default in the signature, ``exclude``
        leaves some out); its docstring documents all of them. The parameters reach the
        function as one namespace, its keyword ``namespace`` (``p`` unless a data argument has
        that name)."""
        from aidopt.decomposition.run import common_options

        def wrap(func):
            sig = inspect.signature(func)
            own = [q for q in sig.parameters.values()
                   if q.name != namespace and q.kind is not q.VAR_KEYWORD]
            clash = [q.name for q in own if q.name in self.params]
            if namespace not in sig.parameters or clash:
                raise TypeError(f"{func.__name__} must take the keyword {namespace!r} and none of "
                                f"the family's parameters itself (got {clash})")
            mine = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
                    for name, p in self.params.items()]

            @functools.wraps(func)
            def door(*args, **kwargs):
                given = {name: kwargs.pop(name) for name in list(kwargs) if name in self.params}
                return func(*args, **{namespace: self.values(given)}, **kwargs)

            door.__signature__ = sig.replace(parameters=[
                *own, *mine, inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD)])
            doc = inspect.cleandoc(func.__doc__ or "")
            block = "\n".join(p.doc() for p in self.params.values())
            marker = "\n\nReturns\n-------"
            if "\nParameters\n----------" not in doc:
                block = "Parameters\n----------\n" + block
            door.__doc__ = (doc.replace(marker, "\n" + block + marker, 1) if marker in doc
                            else doc + "\n\n" + block)
            door.family = self
            return common_options(exclude=exclude, **defaults)(door)

        return wrap

    # ------------------------------------------------------------------ the estimator
    def estimator_params(self) -> dict[str, Any]:
        """``name -> default`` of the estimator's parameters (``Param.estimator``)."""
        return {name: p.user_default for name, p in self.params.items() if p.estimator}

    # ------------------------------------------------------------------ the CLI
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One flag per parameter that has one (group "<family> options")."""
        group = parser.add_argument_group(f"{self.name} options")
        for name, p in self.params.items():
            flag = p.cli_flag()
            if flag is None:
                continue
            default = p.user_default
            if isinstance(default, bool):
                group.add_argument(flag, dest=name, action="store_false" if default else "store_true",
                                   default=default, help=p.cli_help())
                if default and p.default is False and not p.flag:  # the function's flag still works
                    group.add_argument(f"--{name.replace('_', '-')}", dest=name,
                                       action="store_true", help="The default (kept for scripts "
                                       f"that pass it): {plain_text(p.help)}")
                continue
            parse = p.parse or (str if p.choices or default is None
                                else type(default))
            group.add_argument(flag, dest=name, type=parse, default=default,
                               choices=list(p.choices) or None, metavar=p.metavar,
                               help=p.cli_help())

    def cli_kwargs(self, args: argparse.Namespace) -> dict[str, Any]:
        """The parameters :meth:`add_arguments` parsed, as keyword arguments of the door."""
        return {name: getattr(args, name) for name, p in self.params.items()
                if p.cli_flag() is not None}


#: LaTeX commands with a plain-text spelling of their own (the others lose their backslash:
#: ``\lambda`` -> ``lambda``)
_LATEX_WORDS = {
    "le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "ne": "!=", "neq": "!=", "in": "in",
    "notin": "not in", "cdot": "*", "times": "x", "to": "->", "infty": "inf", "approx": "~",
    "pm": "+/-", "mid": "|", "ldots": "...", "dots": "...", "cdots": "...", "top": "'",
    "varepsilon": "epsilon", "varphi": "phi", "setminus": "minus", "quad": " ", "qquad": " ",
}
#: LaTeX commands dropped with only their argument kept (fonts, sizes, text)
_LATEX_DROP = ("mathcal", "mathbf", "mathrm", "mathbb", "boldsymbol", "operatorname", "textrm",
               "text", "left", "right", "bigl", "bigr", "big", "Big", "displaystyle")
_ARG = r"(\{[^{}]*\}|[^\s{}\\])"  # a LaTeX argument: a braced group or one character


def _argument(arg: str) -> str:
    """A LaTeX argument without its braces, in parentheses when it is more than one term."""
    arg = arg[1:-1] if arg.startswith("{") else arg
    return arg if arg.isalnum() or len(arg) == 1 else f"({arg})"


def plain_text(text: str) -> str:
    r"""``text`` (a parameter's help, written for the API documentation) as plain text for
    ``--help``: reST roles (``:math:`x```, ``:func:`~a.b```), literals, emphasis and the common
    LaTeX of the formulas become readable ASCII: ``\frac12`` -> ``1/2``, ``\lceil x \rceil`` ->
    ``ceil(x)``, ``\mathcal D^-_t`` -> ``D^-_t``, ``K_{ij}`` -> ``K_ij``, ``x^{j-\tau}`` ->
    ``x^(j-tau)``, ``\le`` -> ``<=``, ``\lambda`` -> ``lambda``, ``\|w\|`` -> ``||w||``. No
    backslash command is left.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)  # roles, :math: included
    text = text.replace("``", "")
    text = re.sub(r"(?<![\w*])\*\*(\S(?:[^*]*\S)?)\*\*(?![\w*])", r"\1", text)  # **strong**
    text = re.sub(r"(?<![\w*])\*(\S(?:[^*]*\S)?)\*(?![\w*])", r"\1", text)  # *emphasis*
    text = re.sub(r"\\arg\s*\\(min|max)", r"arg\1", text)
    text = re.sub(r"\\l(ceil|floor)\s*(.*?)\s*\\r(?:ceil|floor)", r"\1(\2)", text)
    text = re.sub(r"\\[dt]?frac\s*" + _ARG + r"\s*" + _ARG,
                  lambda m: f"{_argument(m.group(1))}/{_argument(m.group(2))}", text)
    text = re.sub(r"\\sqrt\s*" + _ARG, lambda m: f"sqrt({_argument(m.group(1)).strip('()')})",
                  text)
    text = re.sub(r"\\(?:" + "|".join(_LATEX_DROP) + r")(?![A-Za-z])\s*(?:\{([^{}]*)\})?",
                  lambda m: m.group(1) or "", text)
    text = re.sub(r"\^\s*\{?\\top\}?", "'", text)  # w^\top: w'
    text = text.replace("\\|", "||")  # a norm's bars
    text = re.sub(r"\\([{}%#&_$])", r"\1", text)  # escaped symbols: \{ \}
    text = re.sub(r"\\[,;:! ]", " ", text)  # LaTeX spaces

    def word(m):
        spelled = _LATEX_WORDS.get(m.group(2), m.group(2))
        return m.group(1) + (" " if m.group(1) and spelled[0].isalnum() else "") + spelled

    text = re.sub(r"(\w?)\\([A-Za-z]+)", word, text)
    return re.sub(r"([_^])\{([^{}]*)\}", lambda m: m.group(1) + _argument(m.group(0)[1:]), text)


def number(text: str) -> int | float:
    """CLI: an integer when the text is one, else a float (``8`` rows blocks, ``0.125`` a share)."""
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def none_or_str(text: str) -> str | None:
    """CLI: ``none`` for the value ``None``, else the text."""
    return None if text == "none" else text


def none_or_float(text: str) -> float | None:
    """CLI: ``none`` for the value ``None``, else a number."""
    return None if text.lower() == "none" else float(text)


def scale_or_float(text: str) -> str | float:
    """CLI: a kernel width as scikit-learn takes it: ``scale``, ``auto`` or a number."""
    return text if text in ("scale", "auto") else float(text)


#: how X is held (a parameter of the families that read X out of core, not of their estimators;
#: the CLI reads files with its own ``--engine``, docs/dask.md)
ENGINE = Param(
    "engine", None,
    "``\"numpy\"`` holds X in memory; ``\"dask\"`` streams it chunk by chunk (every pass over "
    "the data runs on Dask: on a ``dask.distributed`` cluster when a ``Client`` is active; the "
    "aggregated models are solved here). Default: ``\"dask\"`` for a dask array, a ChunkedMatrix "
    "or a path, else ``\"numpy\"``. The number of passes over X is reported in "
    "``result.dimensions[\"data_passes\"]`` and ``result.message``.",
    choices=("numpy", "dask"), flag="", estimator=False)


#: the kernel parameters as scikit-learn's SVC takes them (the linear and kernel SVMs, SCM)
GAMMA = Param("gamma", "scale",
              "Width of the rbf kernel and scale of the poly kernel, as in scikit-learn's SVC: a "
              "number, ``\"scale\"`` (1 / (m Var(X))) or ``\"auto\"`` (1 / m).",
              kind="float or {\"scale\", \"auto\"}", parse=scale_or_float)
DEGREE = Param("degree", 3, "Degree of the poly kernel.")
COEF0 = Param("coef0", 1.0, "Constant term of the poly kernel.")
