"""Parse CEL text into :mod:`app.cel.ast` with cel-go-shaped syntax errors.

The grammar is cel-python's (``celpy/cel.lark``, the engine the project standardised on), but
the Lark parser is our own instance: cel-python keeps one process-wide parser singleton whose
tree class depends on whichever ``Environment`` was built first, and building an
``Environment`` also calls ``sys.setrecursionlimit``.  Using the grammar file directly avoids
both side effects.  Lark parsing is serialised by a lock (it is cheap and compile results are
cached by :mod:`app.cel.selector`).

Syntax errors are rendered like cel-go's ANTLR front end: ``token recognition error at: '= '``
for characters no token can start, ``mismatched input '<EOF>' expecting {...}`` and
``extraneous input 'x' expecting <EOF>``.  Lark stops at the first parse error, so after a
lexer error we blank the offending characters (as ANTLR's lexer skips them) and parse again to
find the next error; the first ERROR line always has cel-go's position.  Exact ANTLR
"expecting" sets are reproduced for the common cases (an operand is missing; trailing input).

Compilation asks :func:`parse_source`, which first tries :mod:`app.cel.quickparse` — a
hand-written parser for the plainest selectors that builds the very same tree — and makes
cel-python's Lark tree only when an engine asks for it (:class:`LarkTree`).  Why: importing
Lark, loading the grammar and building its lexer are a few percent of a short ``draguard lint``
(measured: ~100 M instructions, 4 % of linting a file of plain claims), and most selectors are
answered without cel-python (:mod:`app.cel.plain`).  So ``lark`` is imported here only inside
the functions that really run it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..k8s import DraguardError, cache_folder, fits_int64, fits_uint64
from . import ast as A
from .errors import format_error
from .quickparse import quick_parse
from .values import UInt

if TYPE_CHECKING:
    import lark

__all__ = ["LarkTree", "ParseError", "parse", "parse_source", "parse_with_tree", "read_literal"]

MAX_RECURSION_DEPTH = 250  # cel-go parser default (parser.MaxRecursionDepth)

_EXPR_START = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
)
_EXPR_START_TERMINALS = frozenset(
    {"LSQB", "LBRACE", "LPAR", "DOT", "MINUS", "BANG", "BOOL_LIT", "FLOAT_LIT", "INT_LIT", "UINT_LIT",
     "STRING_LIT", "MLSTRING_LIT", "BYTES_LIT", "IDENT"}
)
_OPERATOR_TERMINALS = frozenset({"PLUS", "STAR", "SLASH", "PERCENT", "LESSTHAN", "MORETHAN", "QMARK"})
_TERMINAL_NAMES = {
    "RPAR": "')'", "RSQB": "']'", "RBRACE": "'}'", "COLON": "':'", "COMMA": "','", "IDENT": "IDENTIFIER",
    "$END": "<EOF>", "LPAR": "'('", "LSQB": "'['", "LBRACE": "'{'", "DOT": "'.'", "MINUS": "'-'", "BANG": "'!'",
    "INT_LIT": "NUM_INT", "UINT_LIT": "NUM_UINT", "FLOAT_LIT": "NUM_FLOAT", "STRING_LIT": "STRING",
    "MLSTRING_LIT": "STRING", "BYTES_LIT": "BYTES", "BOOL_LIT": "'true'", "NULL_LIT": "'null'",
}

_lock = threading.Lock()
_lark: lark.Lark | None = None


class ParseError(DraguardError):
    """Syntax errors, already formatted as cel-go prints them (one ``ERROR:`` block each)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _bool_literal(tok: lark.Token) -> lark.Token:
    import lark  # loaded: Lark's lexer is calling

    if tok.value in ("true", "false"):
        return lark.Token("BOOL_LIT", tok.value, tok.start_pos, tok.line, tok.column, tok.end_line,
                          tok.end_column, tok.end_pos)
    if tok.value == "null":
        return lark.Token("NULL_LIT", tok.value, tok.start_pos, tok.line, tok.column, tok.end_line,
                          tok.end_column, tok.end_pos)
    return tok


def _parser() -> lark.Lark:
    global _lark
    if _lark is None:
        import lark

        grammar = _celpy_folder().joinpath("cel.lark").read_text()
        _lark = lark.Lark(
            grammar, parser="lalr", start="expr", g_regex_flags=re.M, propagate_positions=True,
            maybe_placeholders=False, priority="invert", lexer_callbacks={"IDENT": _bool_literal},
            cache=_grammar_cache_file(),
        )
    return _lark


def _celpy_folder() -> Path:
    """Where cel-python is installed, found without importing it (its ``__init__`` imports the
    evaluator and pendulum: start-up a selector that is only parsed does not need)."""
    spec = importlib.util.find_spec("celpy")
    if spec is None or spec.origin is None:  # pragma: no cover - a declared dependency
        raise ImportError("cel-python (celpy) is not installed")
    return Path(spec.origin).parent


def _grammar_cache_file() -> str | bool:
    """Where Lark may keep its analysed grammar (8x faster start-up: ~20 ms instead of ~160 ms).

    Keyed by Lark on the grammar and options, so a new cel-python version never reads a stale
    file.  ``DRAGUARD_CACHE_DIR`` overrides the place (``off``: no file at all); a folder that cannot
    be written (a read-only root filesystem) or that someone else could write to turns the cache
    off.  One file per Lark version: the folder never grows with use.
    """
    import lark

    folder = cache_folder()  # Lark's cache is a pickle: only a folder that is ours alone
    if folder is None:
        return False
    return os.path.join(folder, f"cel-lark-{lark.__version__}.cache")


# --------------------------------------------------------------------------- syntax errors
def _skip_ws(src: str, pos: int) -> int:
    """Offset of the next token at or after ``pos`` (skips blanks and ``//`` comments)."""
    n = len(src)
    while pos < n:
        ch = src[pos]
        if ch in " \t\n\r\f":
            pos += 1
        elif src.startswith("//", pos):
            nl = src.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            break
    return pos


def _depth_at(src: str, pos: int) -> int:
    """Open-bracket depth before ``pos`` (ignoring string contents), to phrase 'expecting' sets."""
    depth = 0
    quote = ""
    i = 0
    while i < pos:
        ch = src[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        i += 1
    return depth


def _expecting(expected: set[str]) -> str:
    if expected | {"NULL_LIT"} >= _EXPR_START_TERMINALS and not expected & {"PLUS", "STAR"}:
        return _EXPR_START
    names = sorted({_TERMINAL_NAMES.get(t, t) for t in expected if t in _TERMINAL_NAMES})
    if len(names) == 1:
        return names[0]
    return "{" + ", ".join(names) + "}"


def _syntax_errors(src: str) -> tuple[list[tuple[int, str]], Any]:
    """Parse, collecting (offset, message) syntax errors the way ANTLR would report them."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

    errors: list[tuple[int, str]] = []
    text = src
    for _ in range(20):
        try:
            return errors, _parser().parse(text)
        except UnexpectedCharacters as e:
            pos = int(e.pos_in_stream or 0)
            ch = text[pos]
            end = pos + 1
            if ch in "\"'":  # unterminated string: ANTLR's lexer consumed to the end of the line
                nl = text.find("\n", pos)
                end = len(text) if nl < 0 else nl
                bad = text[pos:end]
            elif ch in "=&|" and pos + 1 < len(text):  # prefix of '==', '&&', '||': one more char seen
                end = pos + 2
                bad = text[pos:end]
            else:
                bad = ch
            errors.append((pos, f"Syntax error: token recognition error at: '{bad}'"))
            text = text[:pos] + "".join(c if c == "\n" else " " for c in text[pos:end]) + text[end:]
        except UnexpectedToken as e:
            tok = e.token
            expected = set(e.expected or ())
            if tok.type == "$END":
                errors.append((len(src), f"Syntax error: mismatched input '<EOF>' expecting {_expecting(expected)}"))
            else:
                start = tok.start_pos or 0
                tail_empty = _skip_ws(text, tok.end_pos or start + len(tok.value)) >= len(text)
                if expected & _OPERATOR_TERMINALS and _depth_at(text, start) == 0:
                    word = "extraneous" if tail_empty else "mismatched"
                    msg = f"Syntax error: {word} input '{tok.value}' expecting <EOF>"
                else:
                    msg = f"Syntax error: mismatched input '{tok.value}' expecting {_expecting(expected)}"
                errors.append((start, msg))
            return errors, None
        except UnexpectedInput as e:  # pragma: no cover - other Lark failures
            errors.append((getattr(e, "pos_in_stream", 0) or 0, f"Syntax error: {e}"))
            return errors, None
    return errors, None


# --------------------------------------------------------------------------- literals
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
                   "'": "'", '"': '"', "`": "`", "?": "?"}


def _unescape(text: str, as_bytes: bool) -> str | bytes:
    raw = text[0] in "rR"
    if raw:
        text = text[1:]
    quote = text[:3] if text[:3] in ('"""', "'''") else text[0]
    body = text[len(quote) : len(text) - len(quote)]
    if raw:
        return body.encode() if as_bytes else body
    out = bytearray()
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("found '\\' as last character")
        e = body[i + 1]
        if e in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[e].encode()
            i += 2
        elif e in "xX" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2 : i + 4]):
            v = int(body[i + 2 : i + 4], 16)
            out += bytes([v]) if as_bytes else chr(v).encode()
            i += 4
        elif e in "uU":
            width = 4 if e == "u" else 8
            digits = body[i + 2 : i + 2 + width]
            if as_bytes or not re.fullmatch(rf"[0-9a-fA-F]{{{width}}}", digits):
                raise ValueError("invalid unicode escape")
            cp = int(digits, 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                raise ValueError("invalid unicode code point")
            out += chr(cp).encode()
            i += 2 + width
        elif e in "0123" and re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
            v = int(body[i + 1 : i + 4], 8)
            out += bytes([v]) if as_bytes else chr(v).encode()
            i += 4
        else:
            raise ValueError("invalid escape sequence")
    return bytes(out) if as_bytes else out.decode("utf-8", errors="surrogatepass")


def _literal(tok: lark.Token) -> A.Const:
    pos = tok.start_pos or 0
    kind = tok.type
    v = tok.value
    if kind == "INT_LIT":
        neg = v.startswith("-")
        body = v[1:] if neg else v
        n = int(body, 16) if body[:2] in ("0x", "0X") else int(body)
        n = -n if neg else n
        if not fits_int64(n):
            raise _ConvError(pos, "invalid int literal")
        return A.Const(pos, n, "int")
    if kind == "UINT_LIT":
        body = v[:-1]
        if body.startswith("-"):
            raise _ConvError(pos, "invalid uint literal")
        n = int(body, 16) if body[:2] in ("0x", "0X") else int(body)
        if not fits_uint64(n):
            raise _ConvError(pos, "invalid uint literal")
        return A.Const(pos, UInt(n), "uint")
    if kind == "FLOAT_LIT":
        return A.Const(pos, float(v), "double")
    if kind in ("STRING_LIT", "MLSTRING_LIT"):
        try:
            return A.Const(pos, _unescape(v, False), "string")
        except ValueError as e:
            raise _ConvError(pos, f"Syntax error: {e}") from None
    if kind == "BYTES_LIT":
        try:
            return A.Const(pos, _unescape(v[1:], True), "bytes")
        except ValueError as e:
            raise _ConvError(pos, f"Syntax error: {e}") from None
    if kind == "BOOL_LIT":
        return A.Const(pos, v == "true", "bool")
    return A.Const(pos, None, "null")


# --------------------------------------------------------------------------- tree conversion
class _ConvError(Exception):
    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


_PASS_THROUGH = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member", "primary"}
)
_BINARY = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_", "relation_eq": "_==_",
    "relation_ne": "_!=_", "relation_in": "@in", "addition_add": "_+_", "addition_sub": "_-_",
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
}
_ONE_VAR_MACROS = {"all": "all", "exists": "exists", "exists_one": "exists_one", "existsOne": "exists_one",
                   "map": "map", "filter": "filter"}
_TWO_VAR_MACROS = {"all": "all2", "exists": "exists2", "exists_one": "exists_one2", "existsOne": "exists_one2",
                   "transformList": "transformList", "transformMap": "transformMap"}


class _Converter:
    def __init__(self, src: str) -> None:
        import lark  # loaded: the tree to convert is Lark's

        self.src = src
        self.tree_type = lark.Tree
        self.token_type = lark.Token

    def start(self, t: Any) -> int:
        return int(t.meta.start_pos) if isinstance(t, self.tree_type) and not t.meta.empty else 0

    def end(self, t: Any) -> int:
        if isinstance(t, self.token_type):
            return int(t.end_pos or 0)
        return int(t.meta.end_pos) if not t.meta.empty else 0

    def after(self, t: Any) -> int:
        return _skip_ws(self.src, self.end(t))

    def conv(self, t: Any, depth: int = 0) -> A.Expr:
        if depth > MAX_RECURSION_DEPTH * 4:
            raise _ConvError(self.start(t), f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        while isinstance(t, self.tree_type) and t.data in _PASS_THROUGH and len(t.children) == 1:
            t = t.children[0]
        if isinstance(t, self.token_type):  # pragma: no cover - grammar always wraps tokens
            raise _ConvError(t.start_pos or 0, f"Syntax error: unexpected token {t.value!r}")
        d = t.data
        ch = t.children
        nd = depth + 1
        if d == "expr":  # ternary
            cond, a, b = ch
            return A.Call(self.after(cond), "_?_:_", None, [self.conv(cond, nd), self.conv(a, nd), self.conv(b, nd)])
        if d in ("conditionalor", "conditionaland"):
            left, right = ch
            fn = "_||_" if d == "conditionalor" else "_&&_"
            return A.Call(self.after(left), fn, None, [self.conv(left, nd), self.conv(right, nd)])
        if d in ("relation", "addition", "multiplication"):
            op_tree, right = ch
            left = op_tree.children[0]
            return A.Call(self.after(left), _BINARY[op_tree.data], None, [self.conv(left, nd), self.conv(right, nd)])
        if d == "unary":
            op, operand = ch
            fn = "!_" if op.data == "unary_not" else "-_"
            return A.Call(self.start(t), fn, None, [self.conv(operand, nd)])
        if d == "member_dot":
            operand, ident = ch
            return A.Select(self.after(operand), self.conv(operand, nd), str(ident))
        if d == "member_dot_arg":
            operand, ident = ch[0], ch[1]
            args = [self.conv(a, nd) for a in ch[2].children] if len(ch) > 2 else []
            return self.call(_skip_ws(self.src, int(ident.end_pos or 0)), str(ident), self.conv(operand, nd), args,
                             ch[2].children if len(ch) > 2 else [])
        if d == "member_index":
            operand, index = ch
            return A.Call(self.after(operand), "_[_]", None, [self.conv(operand, nd), self.conv(index, nd)])
        if d == "member_object":
            raise _ConvError(self.after(ch[0]), "message construction is not supported in the DRA environment")
        if d in ("ident", "dot_ident"):
            tok = ch[0]
            return A.Ident(int(tok.start_pos or 0), str(tok))
        if d in ("ident_arg", "dot_ident_arg"):
            tok = ch[0]
            raw_args = ch[1].children if len(ch) > 1 else []
            args = [self.conv(a, nd) for a in raw_args]
            return self.call(_skip_ws(self.src, int(tok.end_pos or 0)), str(tok), None, args, raw_args)
        if d == "paren_expr":
            return self.conv(ch[0], nd)
        if d == "list_lit":
            elems = [self.conv(a, nd) for a in ch[0].children] if ch else []
            return A.ListLit(self.start(t), elems)
        if d == "map_lit":
            items = [self.conv(a, nd) for a in ch[0].children] if ch else []
            return A.MapLit(self.start(t), list(zip(items[0::2], items[1::2], strict=True)))
        if d == "literal":
            return _literal(ch[0])
        raise _ConvError(self.start(t), f"Syntax error: unsupported construct {d}")  # pragma: no cover

    def call(self, pos: int, fn: str, target: A.Expr | None, args: list[A.Expr], raw: list[Any]) -> A.Expr:
        """Build a call, expanding the standard macros like cel-go's parser does."""
        if target is None and fn == "has" and len(args) == 1:
            arg = args[0]
            if not isinstance(arg, A.Select) or arg.test_only:
                raise _ConvError(arg.pos, "invalid argument to has() macro")
            return A.Select(pos, arg.operand, arg.field, test_only=True)
        if (
            fn == "bind" and isinstance(target, A.Ident) and target.name == "cel" and len(args) == 3
        ):
            var = args[0]
            if not isinstance(var, A.Ident):
                raise _ConvError(var.pos, "cel.bind() variable names must be simple identifiers")
            return A.Bind(pos, var.name, args[1], args[2])
        if target is not None:
            if (fn in _ONE_VAR_MACROS and len(args) == 2) or (fn == "map" and len(args) == 3):
                var = args[0]
                if not isinstance(var, A.Ident):
                    raise _ConvError(var.pos, "argument must be a simple name")
                kind = _ONE_VAR_MACROS[fn]
                if fn == "map" and len(args) == 3:  # map(x, filter, transform)
                    return A.Comp(pos, "map", target, var.name, None, [args[1], args[2]])
                return A.Comp(pos, kind, target, var.name, None, [args[1]])  # type: ignore[arg-type]
            if fn in _TWO_VAR_MACROS and (
                (len(args) == 3 and fn in ("all", "exists", "exists_one", "existsOne", "transformList", "transformMap"))
                or (len(args) == 4 and fn in ("transformList", "transformMap"))
            ):
                v1, v2 = args[0], args[1]
                for v in (v1, v2):
                    if not isinstance(v, A.Ident):
                        raise _ConvError(v.pos, "argument must be a simple name")
                assert isinstance(v1, A.Ident) and isinstance(v2, A.Ident)
                if v1.name == v2.name:
                    raise _ConvError(v2.pos, "duplicate variable name: " + v1.name)
                kind = _TWO_VAR_MACROS[fn]
                return A.Comp(pos, kind, target, v1.name, v2.name, args[2:])  # type: ignore[arg-type]
        return A.Call(pos, fn, target, args)


def read_literal(tok: lark.Token) -> object:
    """The value of one literal token (draguard's value model), for engines walking the Lark tree."""
    return _literal(tok).value


class LarkTree:
    """cel-python's Lark tree of one expression (what ``celpy.Evaluator`` walks), made on first use.

    Why lazy: a selector :mod:`app.cel.quickparse` read needs no Lark to be compiled, and the
    cel-python engine needs the tree only to evaluate a device :mod:`app.cel.plain` cannot
    answer; parsing the text again then costs less than importing Lark for every lint.
    """

    __slots__ = ("_tree", "shallow", "text")

    def __init__(self, text: str, tree: lark.Tree[Any] | None = None, *, shallow: bool = False) -> None:
        self.text = text
        self._tree = tree
        self.shallow = shallow
        """Known, without making the tree, to nest no deeper than cel-python's evaluator can run
        (:data:`app.cel.quickparse.MAX_DEPTH`), so the engine need not look at it to accept the
        selector."""

    def get(self) -> lark.Tree[Any]:
        """The tree, parsed the first time it is asked for (two threads asking at once may both
        parse; both get an equal tree, and the cel-python engine asks under its own lock)."""
        tree = self._tree
        if tree is None:
            tree = self._tree = parse_with_tree(self.text)[1]
        return tree


def parse(src: str) -> A.Expr:
    """Parse ``src``; raises :class:`ParseError` with the cel-go rendering of every error."""
    return parse_source(src)[0]


def parse_source(src: str) -> tuple[A.Expr, LarkTree]:
    """Parse ``src`` for compilation: draguard's tree now, cel-python's when it is asked for.

    Text in :mod:`app.cel.quickparse`'s subset never loads Lark here; anything else (and every
    error) goes through :func:`parse_with_tree`, with the same tree and messages as ever."""
    root = quick_parse(src)
    if root is None:
        root, tree = parse_with_tree(src)
        return root, LarkTree(src, tree)
    _number(root)
    return root, LarkTree(src, shallow=True)


def _number(root: A.Expr) -> None:
    """Node ids in pre-order from 1 (the type checker's and cost estimator's keys)."""
    for i, node in enumerate(A.walk(root), start=1):
        node.id = i


def parse_with_tree(src: str) -> tuple[A.Expr, lark.Tree[Any]]:
    """Like :func:`parse`, also returning cel-python's Lark tree (what ``celpy.Evaluator`` walks);
    always through Lark (the reference :func:`parse_source`'s quick path is tested against)."""
    with _lock:
        errors, tree = _syntax_errors(src)
    if errors or tree is None:
        errors.sort(key=lambda e: e[0])
        raise ParseError("\n".join(format_error(src, pos, msg) for pos, msg in errors))
    try:
        root = _Converter(src).conv(tree)
    except _ConvError as e:
        raise ParseError(format_error(src, e.pos, e.message)) from None
    except RecursionError:
        raise ParseError(
            format_error(src, 0, f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
        ) from None
    _number(root)
    return root, tree
