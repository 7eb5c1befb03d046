"""The documentation holds together: every relative link and image in
README.md and docs/*.md reaches a file (and, for a link into a Markdown
page, a heading) of the repository; the README stays short; nothing in
the repository cites a file outside it (docs/design.md, "Layout")."""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
README_MAX_LINES = 250
# spelled in pieces so that this file does not cite them itself
OUTSIDE = ('..' + '/shared', 'DESIGN' + '.md', 'POLICIES' + '.md')
# not the repository's own files: git's store, the virtual environment,
# run outputs, caches
SKIP_DIRS = {'.git', '.venv', 'results', '__pycache__', '.pytest_cache',
             'build'}

FENCE = re.compile(r'^(```|~~~).*?^\1[^\n]*$', re.M | re.S)
INLINE_CODE = re.compile(r'`[^`\n]*`')
# [text](target "title") and ![alt](target); the target has no spaces
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?'
                  r'(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^#{1,6}\s+(.*?)\s*#*\s*$', re.M)


def pages():
    return [os.path.join(ROOT, 'README.md')] + sorted(
        glob.glob(os.path.join(ROOT, 'docs', '*.md')))


def strip_code(text):
    """The text without fenced blocks and inline code, where brackets
    are not links."""
    return INLINE_CODE.sub('', FENCE.sub('', text))


def links(text):
    """Every link and image target of a Markdown text, in order, code
    left out."""
    return LINK.findall(strip_code(text))


def slug(heading):
    """GitHub's anchor for a heading: lower case, inline markup and
    punctuation other than - and _ dropped, spaces to hyphens."""
    h = re.sub(r'[`*]', '', heading).strip().lower()
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h)     # a link: its text
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


def anchors(text):
    """The anchors of a page's headings (repeats get -1, -2, ...)."""
    out, seen = set(), {}
    for h in HEADING.findall(FENCE.sub('', text)):
        s = slug(h)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else '%s-%d' % (s, n))
    return out


def is_external(target):
    return re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I) is not None


def broken(page, root=ROOT):
    """The relative links of ``page`` that reach nothing (or reach out
    of ``root``), as text."""
    with open(page) as f:
        text = f.read()
    bad = []
    for target in links(text):
        if is_external(target):
            continue
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) \
            if path else page
        if not os.path.exists(dest):
            bad.append('%s (no such file)' % target)
        elif not os.path.realpath(dest).startswith(root + os.sep):
            bad.append('%s (outside the repository)' % target)
        elif anchor and dest.endswith('.md'):
            with open(dest) as f:
                if anchor not in anchors(f.read()):
                    bad.append('%s (no such heading)' % target)
    return bad


# --- the checker itself, on hand-made text ---------------------------------

SAMPLE = '''# Title

See [a page](docs/a.md), ![a figure](img/x.png "its title") and
[the web](https://example.org), [a section](#the-second-part) and
[a page's section](b.md#usage).
Inline `[not a link](code.md)` is code.

```
[nor this](fenced.md)
```

## The second part: `make it` (now)
## Usage
## Usage
'''


def test_links_found_in_text_and_none_in_code():
    # five links outside code, in order; the inline-code one and the
    # fenced one are left out
    assert links(SAMPLE) == ['docs/a.md', 'img/x.png', 'https://example.org',
                             '#the-second-part', 'b.md#usage']


def test_external_targets_are_told_apart():
    assert is_external('https://example.org')
    assert is_external('mailto:someone@example.org')
    assert not is_external('docs/a.md')
    assert not is_external('#usage')


def test_anchors_follow_github():
    # "The second part: `make it` (now)": backticks, colon and
    # parentheses dropped, spaces to hyphens; the repeated "Usage" gets
    # "-1"
    assert anchors(SAMPLE) == {'title', 'the-second-part-make-it-now',
                               'usage', 'usage-1'}


def test_missing_files_headings_and_escapes_are_reported(tmp_path):
    root = tmp_path / 'repo'
    root.mkdir()
    (tmp_path / 'outside.md').write_text('# Outside\n')
    (root / 'b.md').write_text('# B\n## Usage\n')
    page = root / 'README.md'
    page.write_text('[ok](b.md#usage) [gone](c.md) [no heading](b.md#nope) '
                    '[self](#b-section) [out](../outside.md)\n'
                    '## B section\n')
    assert broken(str(page), str(root)) == [
        'c.md (no such file)', 'b.md#nope (no such heading)',
        '../outside.md (outside the repository)']


# --- the repository's documentation ----------------------------------------

@pytest.mark.parametrize('page', pages(),
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_every_relative_link_and_image_resolves(page):
    assert broken(page) == []


def test_the_readme_links_every_docs_page():
    with open(os.path.join(ROOT, 'README.md')) as f:
        targets = {t.partition('#')[0] for t in links(f.read())}
    for page in pages()[1:]:
        assert os.path.relpath(page, ROOT) in targets, page


def test_readme_is_short():
    with open(os.path.join(ROOT, 'README.md')) as f:
        n = len(f.read().splitlines())
    assert n <= README_MAX_LINES, 'README.md has %d lines' % n


def repository_files():
    for dirpath, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs
                   if d not in SKIP_DIRS and not d.endswith('.egg-info')]
        for f in files:
            yield os.path.join(dirpath, f)


def test_nothing_cites_a_file_outside_the_repository():
    found = []
    for path in repository_files():
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue                       # binary: figures, archives
        for n, line in enumerate(text.splitlines(), 1):
            for s in OUTSIDE:
                if s in line:
                    found.append('%s:%d: %s' % (os.path.relpath(path, ROOT),
                                                n, s))
    assert found == []


# every key an experiment file may hold, as the checks read it
KEY_READ = re.compile(r"\b[a-z]\w*\.(?:num|get|choice|string|flag)"
                      r"\(\s*'([a-z][a-z0-9_]*)'")


def test_key_reader_finds_keys_in_hand_made_source():
    src = ("c.num('link_gbps', 10, positive=True)\n"
           "tc.choice('racks', ('strict', 'wrap'), 'strict')\n"
           "x = environ.get(var, '')\n"
           "d.get('backend', 'emu') == 'emu'\n")
    # three literal first arguments; environ.get(var ...) names none
    assert KEY_READ.findall(src) == ['link_gbps', 'racks', 'backend']


def test_every_experiment_key_is_documented():
    keys = set()
    for mod in ('experiment.py', 'knobs.py'):
        with open(os.path.join(ROOT, 'netsched', 'pipeline', mod)) as f:
            keys |= set(KEY_READ.findall(f.read()))
    with open(os.path.join(ROOT, 'docs', 'experiment-format.md')) as f:
        doc = f.read()
    assert len(keys) > 40                  # the reader found the keys
    missing = sorted(k for k in keys
                     if not re.search(r'\b%s\b' % re.escape(k), doc))
    assert missing == []
