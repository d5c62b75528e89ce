// The Python program the intake parser process runs (see python-syntax.ts, which speaks to it).

/** At most this many distinct imported names are listed per parse (the first ones by line); a real skill has a few dozen. */
export const MAX_LISTED_IMPORTS = 256;

/**
 * The parser: one persistent interpreter per checker. Requests are a 4-byte big-endian length
 * and UTF-8 source; answers are a 4-byte length and JSON. `compile(..., PyCF_ONLY_AST)` builds
 * the AST only, so nothing in the input is ever executed. The memory cap is set from inside
 * (no preexec hook is available to Node's spawn). Kept in sync with `SyntaxVerdict` in python-syntax.ts.
 * Code that parses also gets its imports listed, the standard library told apart by this same
 * interpreter's `sys.stdlib_module_names`: Debian's python3 on the host is the sandbox image's
 * Python version (docs/packages.md#the-dependency-scan).
 */
export const PARSER_SCRIPT = String.raw`
import ast, json, resource, struct, sys, warnings
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
warnings.simplefilter("ignore")
# PyCF_DONT_IMPLY_DEDENT | PyCF_ALLOW_INCOMPLETE_INPUT, as codeop uses them (Include/cpython/compile.h)
INCOMPLETE = ast.PyCF_ONLY_AST | 0x200 | 0x4000
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

def read_exact(n):
    data = b""
    while len(data) < n:
        chunk = stdin.read(n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data

def send(obj):
    data = json.dumps(obj).encode("ascii")
    stdout.write(struct.pack(">I", len(data)) + data)
    stdout.flush()

def fail(message, line, column, at_end):
    return {"ok": False, "message": message, "line": max(line, 0), "column": max(column, 0), "atEndOfInput": at_end}

def incomplete(src):
    try:
        compile(src, "<skill>", "exec", flags=INCOMPLETE, dont_inherit=True)
    except SyntaxError as e:
        return e.msg == "incomplete input"
    except Exception:
        pass
    return False

def at_end(src, e):
    if incomplete(src):
        return True
    body = src.rstrip()
    last_line = body.count("\n") + 1
    last_column = len(body) - body.rfind("\n") - 1
    line, column = e.lineno or 0, e.offset or 0
    if (line, column) > (last_line, last_column):
        return True
    return str(e.msg).startswith("unterminated string literal") and line == last_line

def inert(tree):
    return all(isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in tree.body)

STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
IMPORT_GUARDS = {"ImportError", "ModuleNotFoundError"}
TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))
BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)

def guards_imports(handler):
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id in IMPORT_GUARDS or isinstance(k, ast.Attribute) and k.attr in IMPORT_GUARDS for k in kinds)

def imports(tree):
    found = {}
    stack = [(tree, False)]
    while stack:
        node, optional = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = [node.module] if node.level == 0 and node.module else []
            for name in names:
                line, was_optional = found.get(name, (node.lineno, True))
                found[name] = (min(line, node.lineno), was_optional and optional)
            continue
        guarded = isinstance(node, TRIES) and any(guards_imports(h) for h in node.handlers)
        # Imports are statements: only the lists of statements (bodies, handlers, match cases) are walked.
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for child in value:
                    if isinstance(child, BLOCKS):
                        stack.append((child, optional or (guarded and field == "body")))
    listed = sorted(found.items(), key=lambda item: (item[1][0], item[0]))[:${MAX_LISTED_IMPORTS}]
    return [{"module": name, "line": line, "stdlib": name.split(".")[0] in STDLIB, "optional": optional} for name, (line, optional) in listed]

def ok(tree):
    answer = {"ok": True, "inert": inert(tree)}
    try:
        answer["imports"] = imports(tree)
    except (MemoryError, RecursionError):
        pass  # the code parsed; only the dependency scan goes without
    return answer

def verdict(src):
    try:
        tree = compile(src, "<skill>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return ok(tree)
    except SyntaxError as e:
        return fail(str(e.msg or e), e.lineno or 0, e.offset or 0, at_end(src, e))
    except ValueError as e:
        at = src.find("\0")
        if at < 0:
            return fail(str(e), 0, 0, False)
        return fail(str(e), src.count("\n", 0, at) + 1, at - src.rfind("\n", 0, at), False)
    except RecursionError:
        return fail("the code is nested too deeply for the Python parser", 0, 0, False)
    except MemoryError:
        return fail("the code is too complex for the Python parser (it ran out of memory)", 0, 0, False)
    except OverflowError as e:
        return fail(str(e), 0, 0, False)

send({"ready": True})
while True:
    (size,) = struct.unpack(">I", read_exact(4))
    source = read_exact(size).decode("utf-8", "replace")
    try:
        answer = verdict(source)
    except MemoryError:
        answer = fail("the code is too complex for the Python parser (it ran out of memory)", 0, 0, False)
    send(answer)
`;
