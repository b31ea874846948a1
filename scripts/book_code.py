#!/usr/bin/env python3
"""Extracts the C++ of the book (docs/book/*.md) into translation units that tests/book builds.

Every ```cpp block of a chapter is compiled; a program (a unit with `int main(`) is also run on
the CPU backend. A block starts a new translation unit unless an HTML comment on the line just
before its fence says otherwise:

  <!-- book: continues -->  the block is appended to the chapter's previous unit (a kernel in one
                            block, the program that launches it in the next, with prose between);
  <!-- book: body -->       the block is a few statements: it is appended to the previous unit
                            wrapped in a function of its own (or, first in a chapter, to a unit
                            that includes tessera.hpp and uses both namespaces);
  <!-- book: dlpack -->     the block starts a unit built only when Tessera has DLPack's header.

`#line` directives point the compiler's messages at the chapter's own lines.

It also checks that index.md links every chapter and that the book's links to .md files resolve.

usage: book_code.py <chapters folder> <output folder>; prints one line per unit:
<name> <program|unit> <always|dlpack>
"""

import pathlib
import re
import sys

PRELUDE = ("#include <tessera/tessera.hpp>\n"
           "using namespace tessera;\n"
           "using namespace tessera::tile;\n")
FENCE = re.compile(r"^```\s*([A-Za-z+]*)\s*$")
MARK = re.compile(r"^<!--\s*book:\s*(continues|body|dlpack)\s*-->\s*$")


def units_of(chapter: pathlib.Path):
    lines = chapter.read_text().split("\n")
    units = []  # [text, needs]
    i = 0
    body_count = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang = m.group(1).lower()
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            sys.exit(f"{chapter}:{i + 1}: a code block is not closed")
        if lang in ("c++", "cxx", "cc", "c"):
            sys.exit(f"{chapter}:{i + 1}: write C++ blocks as ```cpp, so that they are compiled")
        if lang == "cpp":
            mark = MARK.match(lines[i - 1]) if i > 0 else None
            kind = mark.group(1) if mark else None
            line_directive = f'#line {start + 1} "{chapter.as_posix()}"\n'
            code = line_directive + "\n".join(lines[start:end]) + "\n"
            if kind == "continues":
                if not units:
                    sys.exit(f"{chapter}:{i}: 'continues' but no block comes before it")
                units[-1][0] += code
            elif kind == "body":
                body_count += 1
                wrapped = (f"[[maybe_unused]] static void book_body_{body_count}() {{\n{code}}}\n")
                if units:
                    units[-1][0] += wrapped
                else:
                    units.append([PRELUDE + wrapped, "always"])
            else:
                units.append([code, "dlpack" if kind == "dlpack" else "always"])
        i = end + 1
    return units


def check_links(source: pathlib.Path):
    """Every chapter is linked from index.md, and every relative .md link of the book exists."""
    index = source / "index.md"
    linked = set(re.findall(r"\]\(([^)#:]+\.md)", index.read_text()))
    for chapter in sorted(source.glob("*.md")):
        if chapter.name != "index.md" and chapter.name not in linked:
            sys.exit(f"{chapter}: the chapter is not linked from {index}")
        for target in re.findall(r"\]\(([^)#:]+\.md)", chapter.read_text()):
            if not (chapter.parent / target).exists():
                sys.exit(f"{chapter}: the link '{target}' names no file")


def main():
    source, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    check_links(source)
    for chapter in sorted(source.glob("*.md")):
        for n, (text, needs) in enumerate(units_of(chapter), start=1):
            name = f"{chapter.stem.replace('-', '_')}_{n}"
            path = out / f"{name}.cpp"
            if not path.exists() or path.read_text() != text:  # unchanged files are not rebuilt
                path.write_text(text)
            kind = "program" if re.search(r"\bint main\s*\(", text) else "unit"
            print(name, kind, needs)


if __name__ == "__main__":
    main()
