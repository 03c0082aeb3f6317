"""What makes a report page fit to send, as a list of defects found in its HTML (empty when it is
fit): the tab titled by the notebook, no code, no stderr box, no file path with a line number,
no row index of 0, 1, 2 (pandas' or a Styler's), no figure twice, no Markdown escape shown
literally, no raw dict dump (the headline's, or a dict in a table cell), nothing loaded from the
network (a script, stylesheet, image or frame with an http(s) source)."""

from __future__ import annotations

import collections
import re


def defects(page: str, *, title: str) -> list[str]:
    found = []
    shown = re.search(r"<title>(.*?)</title>", page, re.S)
    if not shown or shown.group(1).strip() != title:
        found.append(f"tab title {shown.group(1).strip() if shown else None!r}, not {title!r}")
    if re.search(r'class="[^"]*(jp-CodeMirrorEditor|highlight hl-)', page):
        found.append("code shown")
    if 'data-mime-type="application/vnd.jupyter.stderr"' in page:
        found.append("a stderr box")
    if re.search(r"\.py:\d+", page):
        found.append("a file path with a line number")
    if re.search(r"<tbody>\s*<tr>\s*<th>\d+</th>", page) or re.search(
        r'<th[^>]*class="row_heading[^"]*"[^>]*>\s*\d+\s*</th>', page
    ):
        found.append("a row index column")
    images = collections.Counter(re.findall(r'src="data:image/png;base64,([^"]+)"', page))
    if any(n > 1 for n in images.values()):
        found.append("a figure shown twice")
    body = page[page.find("<body") :]
    if re.search(
        r"\\[._-]", re.sub(r"<style.*?</style>|<script.*?</script>", "", body, flags=re.S)
    ):
        found.append("a Markdown escape shown literally")
    if re.search(r"\{(&#x27;|')results", body):
        found.append("the headline numbers dumped as a dict")
    # a Python dict's repr ({'case': 40}); a JSON answer ({"name": ...}) is model output, shown as is
    if re.search(r"<td>\s*\{(&#x27;|')", body):
        found.append("a dict dumped in a table cell")
    if re.search(r"<(script|img|iframe|link|source)\b[^>]*\b(src|href)=[\"']?(https?:)?//", page):
        found.append("a resource loaded from the network")
    return found
