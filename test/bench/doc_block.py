"""test/bench/doc_block.py -- writing a bench's generated block into a page of doc/.

A block starts with a marker comment ("<!-- name: written by ... -->") and ends with its closing
comment ("<!-- /name -->"). Regenerating replaces the block in place; a page without it gets the
block before the heading "before" (or at the end).
"""


def splice(md_path, start, end, block, before=None):
    """Writes "block" (which begins with "start" and ends with "end") into the page md_path."""
    try:
        with open(md_path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    block = block.rstrip("\n")
    if start in text and end in text:
        text = text[:text.index(start)] + block + text[text.index(end) + len(end):]
    elif before and "\n" + before in text:
        i = text.index("\n" + before)
        text = text[:i + 1] + block + "\n\n" + text[i + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(md_path, "w") as f:
        f.write(text)
