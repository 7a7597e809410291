"""How the report shows a figure or a table: its caption first, then the figure, from the top.

Snakemake's report (9.27) shows a figure alone, centred in the window (a figure taller than
the window has its top pushed above it, where no scrolling reaches), and hides its caption
behind a separate button; a category's sidebar is as wide as its longest name, which left a
figure 633 of 1366 pixels. The report has no template hook, so the front page
(:func:`repro.common.ledger.claims_rst`, which the report opens on) carries :func:`hook_html`:
an image whose load error runs :data:`SCRIPT` once, which

* adds :data:`CSS` to the page for good (the sidebar of a category keeps to a quarter of the
  window and wraps long names);
* replaces the view of an image result by its caption above the image, at the top left, in a
  container that scrolls, and that of an HTML result (a table, a paper's claims) by its caption
  above the page.

``tests/workflow/test_report_browser.py`` checks the result in Chromium at 1400×1000 and
1366×768 (caption visible, every figure's top and bottom reachable).
"""

from __future__ import annotations

import html
import json

CSS = (
    "#app nav.min-w-fit { min-width: 0; flex: none; } "
    "#app nav.min-w-fit * { white-space: normal; } "
    "#app nav.min-w-fit td { overflow-wrap: anywhere; } "
    ".repro-view { align-self: flex-start; width: 100%; } "
    ".repro-view img { max-width: 100%; height: auto; } "
    ".repro-caption { max-width: 60rem; margin-bottom: .75rem; } "
    ".repro-page { height: 100vh; display: flex; flex-direction: column; } "
    ".repro-page .repro-caption { max-height: 30vh; overflow: auto; flex: none; "
    "padding: .75rem .75rem 0; margin-bottom: .25rem; } "
    ".repro-page iframe { flex: 1 1 auto; width: 100%; }"
)

# Runs in the page's global scope (an inline event handler), where Snakemake's report app
# defines ContentDisplay, e (React.createElement), results and app.
SCRIPT = (
    "(function () {"
    "  if (window.reproView) return;"
    "  window.reproView = true;"
    "  var style = document.createElement('style');"
    f"  style.textContent = {json.dumps(CSS)};"
    "  document.head.appendChild(style);"
    "  var own = ContentDisplay.prototype.renderContent;"
    "  function caption(result) {"
    "    return result.caption ? e('div', {className: 'repro-caption prose prose-sm',"
    "      dangerouslySetInnerHTML: {__html: result.caption}}) : null;"
    "  }"
    "  ContentDisplay.prototype.renderContent = function () {"
    "    var state = this.props.app.state;"
    "    var result = state.resultPath && results[state.resultPath];"
    "    if (result && state.content === 'img') {"
    "      return e('div', {className: 'p-3 repro-view'}, caption(result),"
    "        e('img', {src: state.contentPath}));"
    "    }"
    "    if (result && state.content === 'html') {"
    "      return e('div', {className: 'repro-view repro-page'}, caption(result),"
    "        e('iframe', {src: state.contentPath, key: String(state.renderTrigger)}));"
    "    }"
    "    return own.call(this);"
    "  };"
    "  app.forceUpdate();"
    "})();"
)


def hook_html() -> str:
    """The front page's hidden image that installs :data:`SCRIPT` (raw HTML for reST)."""
    return (
        '<img alt="" src="data:," style="display:none" '
        f'onerror="{html.escape(SCRIPT, quote=True)}">'
    )
