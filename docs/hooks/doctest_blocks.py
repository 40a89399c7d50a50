"""Griffe extension (mkdocstrings' loader): niwa's docstrings carry doctests in their prose,
python-chess style; Markdown would read `>>>` as a quote and `[1.0, 6.0]` as a link, so
each run of doctest lines (prompts and their output, up to a blank line) becomes a
```pycon block on the site. The docstrings themselves are unchanged."""

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


class DoctestBlocks(griffe.Extension):
    def on_object(self, *, obj, loader, **kwargs):
        if obj.docstring is not None and ">>> " in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
