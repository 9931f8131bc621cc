"""Finding one's way in a long review page: a contents sidebar that stays in
view and marks the section being read, test sections that fold, and buttons
to fold or unfold them all. Plain HTML, CSS and a little JavaScript; the page
reads the same without JavaScript (every section open, the sidebar a list).

API: :data:`NAV_CSS`, :data:`NAV_JS`; :func:`sidebar` ``(entries) -> str``;
:func:`fold` ``(anchor, title, body) -> str``.
"""

from __future__ import annotations

import html
from typing import Sequence, Tuple

__all__ = ["NAV_CSS", "NAV_JS", "sidebar", "fold", "check_note"]

NAV_CSS = """
body.with-toc{max-width:1480px}
.layout{display:grid;grid-template-columns:14.5em minmax(0,1fr);gap:1.6em;align-items:start}
nav.toc{position:sticky;top:0;max-height:100vh;overflow-y:auto;font-family:Helvetica,Arial,sans-serif;font-size:.8em;
  padding:.6em .4em 1em 0;border-right:1px solid #ddd}
nav.toc ol{list-style:none;margin:0;padding:0} nav.toc ol ol{padding-left:1em;margin:.1em 0 .4em}
nav.toc a{color:#1f4f7f;text-decoration:none;display:block;padding:.08em .3em;border-radius:3px}
nav.toc a.current{background:#1f77b4;color:#fff}
nav.toc .fold-all button{font-size:.9em;margin:.2em .3em .6em 0;cursor:pointer}
details.test{border-top:1px solid #eee;margin:.4em 0} details.test>summary{cursor:pointer;list-style:none}
details.test>summary::-webkit-details-marker{display:none}
details.test>summary h3{display:inline-block;margin:.5em 0} details.test>summary::before{content:"\\25BE ";color:#888}
details.test:not([open])>summary::before{content:"\\25B8 "}
.check{font-family:Helvetica,Arial,sans-serif;font-size:.8em;background:#fff4e0;border-left:4px solid #e69500;padding:.3em .6em}
.check b{color:#a05a00}
@media (max-width:900px){.layout{display:block} nav.toc{position:static;max-height:none;border:0}}
"""

NAV_JS = """
document.addEventListener('DOMContentLoaded', function(){
  var links = Array.prototype.slice.call(document.querySelectorAll('nav.toc a[href^="#"]'));
  function openTarget(id){
    var el = document.getElementById(id);
    while (el) { if (el.tagName === 'DETAILS') { el.open = true; } el = el.parentElement; }
  }
  links.forEach(function(a){ a.addEventListener('click', function(){ openTarget(a.getAttribute('href').slice(1)); }); });
  if (location.hash) { openTarget(location.hash.slice(1)); }
  document.querySelectorAll('[data-fold]').forEach(function(b){
    b.addEventListener('click', function(){
      var open = b.getAttribute('data-fold') === 'open';
      document.querySelectorAll('details.test').forEach(function(d){ d.open = open; });
    });
  });
  if (!('IntersectionObserver' in window)) { return; }
  var byId = {};
  links.forEach(function(a){ byId[a.getAttribute('href').slice(1)] = a; });
  var obs = new IntersectionObserver(function(entries){
    entries.forEach(function(e){
      if (!e.isIntersecting) { return; }
      links.forEach(function(a){ a.classList.remove('current'); });
      var a = byId[e.target.id];
      if (a) { a.classList.add('current'); }
    });
  }, {rootMargin: '0px 0px -75% 0px'});
  Object.keys(byId).forEach(function(id){ var el = document.getElementById(id); if (el) { obs.observe(el); } });
});
"""


def _esc(x: object) -> str:
    return html.escape(str(x))


def sidebar(entries: Sequence[Tuple[str, str, Sequence[Tuple[str, str]]]]) -> str:
    """The contents: ``(anchor, title, [(test anchor, test title), ...])`` per
    group, with fold/unfold buttons for the test sections."""
    items = []
    for anchor, title, tests in entries:
        sub = "".join(f'<li><a href="#{_esc(a)}">{_esc(t)}</a></li>' for a, t in tests)
        items.append(f'<li><a href="#{_esc(anchor)}">{_esc(title)}</a>' + (f"<ol>{sub}</ol>" if sub else "") + "</li>")
    buttons = ('<div class="fold-all"><button type="button" data-fold="close">fold all tests</button>'
               '<button type="button" data-fold="open">unfold all</button></div>')
    return f'<nav class="toc" aria-label="Contents">{buttons}<ol>{"".join(items)}</ol></nav>'


def fold(anchor: str, title: str, body: str) -> str:
    """A test section that folds: open by default, its title the handle."""
    return (f'<details class="test" id="{_esc(anchor)}" open><summary><h3>{_esc(title)}</h3></summary>'
            f"{body}</details>")


def check_note(messages: Sequence[str]) -> str:
    """The "check" marker of a section: what a reviewer would question there."""
    if not messages:
        return ""
    return "".join(f'<p class="check"><b>check:</b> {_esc(m)}</p>' for m in messages)
