"""Griffe extension (mkdocstrings' loader) for the API page.

niwa's docstrings carry doctests in their prose,
python-chess style; Markdown would read `>>>` as a quote and `[1.0, 6.0]` as a link, so
each run of doctest lines (prompts and their output, up to a blank line) becomes a
```pycon block on the site, and a subscript such as `agents[g][s]` (a Markdown reference
link otherwise) becomes code text. The docstrings themselves are unchanged."""

import inspect
import re

import griffe

PROMPT = re.compile(r"^(\s*)>>> ")


def fence_doctests(text):
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        match = PROMPT.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        indent = match.group(1)
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        out += ["", indent + "```pycon", *(indent + line for line in block), indent + "```", ""]
    return "\n".join(out)


SUBSCRIPT = re.compile(r"(?<![`\w])(\w+(?:\[[^\]\s`]+\])+)")


def code_subscripts(text):
    """`agents[g][s]` in prose would be a Markdown reference link: make it code text."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.count("`") % 2 == 0:
            line = SUBSCRIPT.sub(r"`\1`", line)
        out.append(line)
    return "\n".join(out)


# A constant found by inspection (in a compiled module) "has" its type's docstring.
BUILTIN_DOCS = {inspect.cleandoc(t.__doc__) for t in (int, float, str, bytes, bool, tuple, list, dict,
                                                      set, frozenset)}


class DoctestBlocks(griffe.Extension):
    def on_module_members(self, *, mod, **kwargs):
        # a name a module merely imports is documented where it is defined, unless the
        # module re-exports it in __all__ (as niwa.analysis.stats does); a package's own
        # submodules stay
        exports = set(mod.exports or ())
        for name, member in list(mod.members.items()):
            inside = member.is_alias and member.target_path.startswith(mod.path + ".")
            if member.is_alias and name not in exports and not inside:
                del mod.members[name]

    def on_object(self, *, obj, loader, **kwargs):
        if obj.docstring is None:
            return
        if obj.is_attribute and inspect.cleandoc(obj.docstring.value) in BUILTIN_DOCS:
            obj.docstring = None
            return
        if ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
        if "[" in obj.docstring.value:
            obj.docstring.value = code_subscripts(obj.docstring.value)
