"""tests/packages/readme_block.py README HEADING LANG: prints the first
```LANG code block under the heading (a line "## HEADING") of README, so
that the package tests run the very code the README shows."""
import sys


def block(text, heading, lang):
    lines = text.splitlines()
    start = lines.index(f"## {heading}")
    out = None
    for line in lines[start + 1:]:
        if out is None:
            if line.startswith("## "):
                break
            if line.strip() == f"```{lang}":
                out = []
        elif line.strip() == "```":
            return "\n".join(out) + "\n"
        else:
            out.append(line)
    raise SystemExit(f"no ```{lang} block under '## {heading}'")


if __name__ == "__main__":
    path, heading, lang = sys.argv[1:4]
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(block(f.read(), heading, lang))
