"""Hostile records in the HTML viewer, in a real headless Chromium: no string from a file runs as script or breaks
the page, and every string is shown as text.

Three ways in, as a user would take them: ``blokus-jax view`` (the record embedded in the page), the page's file
opener and its drop target. The last two are driven by a probe script the test adds to an empty viewer page (and
allows in the page's Content-Security-Policy by its hash): it builds a ``File`` with the hostile text, puts it in a
``DataTransfer`` and either assigns it to the ``<input type="file">`` and fires ``change``, or fires a ``drop``
event carrying it on the drop target. So the page's own handlers, ``File.text()``, parsers and renderers run
exactly as for a real file; no test-only code is in the page itself. ``--virtual-time-budget`` lets the browser
finish the asynchronous file read before ``--dump-dom``, and the probe then records whether the payloads' global
``window.__pwned`` was set. The payloads also try to change ``document.title`` and to set a ``data-pwned``
attribute, which the dumped DOM would show.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import jax
import pytest

import blokus_jax
from blokus_agents import cli
from blokus_jax.io import records, viewer
from blokus_jax.pieces import Piece
from blokus_jax.rollout import rollout

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium)")
DUO_GAME = Path(__file__).parents[1] / "data" / "sgf" / "duo" / "duo_dev_00_seed20243000.blksgf"

_RUN = "document.title='PWNED';window.__pwned=1;document.documentElement.setAttribute('data-pwned','1')"
HOSTILE = [
    f"</script><script>{_RUN}</script>",
    "<!--<script>",
    f'<img src=x onerror="{_RUN}">',
    f'"><svg onload="{_RUN}"><b x=\'',
    f"\u2028\u2029</SCRIPT ><script>{_RUN}</script><!--",
    "${" + _RUN + "}",
    "<style>body{display:none}</style>&amp;&lt;",
]


def _text(s: str) -> str:
    """How Chromium serialises ``s`` as a text node."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\xa0", "&nbsp;")


def _dom(page: Path) -> str:
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--virtual-time-budget=10000",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def _assert_clean(dom: str) -> None:
    assert "<title>blokus-jax viewer</title>" in dom
    assert 'data-pwned="1"' not in dom
    assert "<svg onload" not in dom and "<img src" not in dom.replace("&lt;img src", "")


@pytest.fixture(scope="module")
def hostile_record():
    """A finished game of a custom variant whose name, piece names, players and metadata are all hostile."""
    base = blokus_jax.get_variant("simple")
    pieces = tuple(Piece(HOSTILE[k % len(HOSTILE)] + str(k), p.cells, p.copies) for k, p in enumerate(base.pieces))
    variant = dataclasses.replace(base, name=HOSTILE[0], pieces=pieces)
    env = blokus_jax.make(variant)
    _, actions = rollout(env, jax.random.key(3), batch=1)
    metadata = {h: HOSTILE[-1 - k] for k, h in enumerate(HOSTILE)}
    return records.from_rollout(env, actions, players=HOSTILE[1:3], metadata=metadata)[0]


def test_embedded_data_cannot_end_the_script(hostile_record):
    page = viewer.viewer_html(hostile_record, title=HOSTILE[1])
    block = re.search(r'<script type="application/json" id="blokus-data">(.*?)</script>', page, re.DOTALL).group(1)
    assert not re.search(r"[<>&\u2028\u2029]", block)
    assert json.loads(block)["record"] == hostile_record.to_dict()
    assert "default-src 'none'" in page and "'unsafe-inline'" not in page.split("script-src")[1].split(";")[0]


def test_view_shows_hostile_strings_as_text(tmp_path, hostile_record):
    source = tmp_path / (HOSTILE[2].replace("/", "") + ".json")
    hostile_record.save(source)
    page = tmp_path / "page.html"
    assert cli.main(["view", str(source), "--out", str(page)]) == 0
    dom = _dom(page)
    _assert_clean(dom)
    assert f'data-total="{len(hostile_record.actions)}"' in dom
    for name in hostile_record.players:
        assert f'<td class="player">{_text(name)}</td>' in dom
    title = re.search(r'<h1 id="title">(.*?)</h1>', dom, re.DOTALL).group(1)
    assert title.startswith(_text(source.name))
    for key, value in hostile_record.metadata.items():
        assert _text(f"{key}: {value}") in title
    placed = {
        hostile_record.variant.pieces[blokus_jax.make(hostile_record.variant).decode_action(a)[0]].name
        for a, cells in zip(hostile_record.actions, hostile_record.cells)
        if len(cells)
    }
    moves = re.search(r'<ol id="movelist"[^>]*>(.*?)</ol>', dom, re.DOTALL).group(1)
    assert all(_text(name) in moves for name in placed)


def _probe_page(tmp_path: Path, text: str, name: str, how: str) -> Path:
    """An empty viewer page plus a probe that hands ``text`` as file ``name`` to the page's file input
    (``how="input"``) or drops it on the page (``how="drop"``), then notes whether ``window.__pwned`` was set."""
    probe = f"""
(() => {{
  const file = new File([{json.dumps(text)}], {json.dumps(name)});
  const dt = new DataTransfer();
  dt.items.add(file);
  if ({json.dumps(how)} === "input") {{
    const input = document.getElementById("file");
    input.files = dt.files;
    input.dispatchEvent(new Event("change"));
  }} else {{
    document.getElementById("drop").dispatchEvent(new DragEvent("drop", {{dataTransfer: dt, bubbles: true,
      cancelable: true}}));
  }}
  setTimeout(() => {{ document.body.dataset.probe = window.__pwned === undefined ? "clean" : "pwned"; }}, 3000);
}})();
""".replace("<", "\\u003c")
    digest = base64.b64encode(hashlib.sha256(probe.encode()).digest()).decode()
    html = viewer.viewer_html(None).replace("script-src ", f"script-src 'sha256-{digest}' ")
    html = html.replace("</body>", f"<script>{probe}</script>\n</body>")
    page = tmp_path / f"probe_{how}.html"
    page.write_text(html, encoding="utf-8")
    return page


def _hostile_json(record) -> str:
    data = record.to_dict()
    data["variant"]["color_names"] = [HOSTILE[3], "__proto__"]
    return json.dumps(data)


def _hostile_sgf() -> str:
    escape = lambda s: s.replace("\\", "\\\\").replace("]", "\\]")  # noqa: E731
    header = f"GM[Blokus Duo]PB[{escape(HOSTILE[0])}]PW[{escape(HOSTILE[4])}]GN[{escape(HOSTILE[5])}]"
    return DUO_GAME.read_text().replace("GM[Blokus Duo]", header)


@pytest.mark.parametrize("how", ["input", "drop"])
def test_file_opener_and_drop_target_show_hostile_json_as_text(tmp_path, hostile_record, how):
    dom = _dom(_probe_page(tmp_path, _hostile_json(hostile_record), HOSTILE[6] + ".json", how))
    _assert_clean(dom)
    assert 'data-probe="clean"' in dom
    assert 'id="error"></div>' in dom
    assert f'data-total="{len(hostile_record.actions)}"' in dom
    for name in hostile_record.players:
        assert f'<td class="player">{_text(name)}</td>' in dom
    assert _text(HOSTILE[3]) in dom and _text(HOSTILE[6] + ".json") in dom


@pytest.mark.parametrize("how", ["input", "drop"])
def test_file_opener_and_drop_target_show_hostile_sgf_as_text(tmp_path, how):
    dom = _dom(_probe_page(tmp_path, _hostile_sgf(), HOSTILE[1] + ".blksgf", how))
    _assert_clean(dom)
    assert 'data-probe="clean"' in dom and 'id="error"></div>' in dom
    assert f'<td class="player">{_text(HOSTILE[0])}</td>' in dom
    assert f'<td class="player">{_text(HOSTILE[4])}</td>' in dom


def test_errors_from_hostile_files_are_text(tmp_path):
    text = f"(;GM[{HOSTILE[2]}];B[a1])"
    dom = _dom(_probe_page(tmp_path, text, HOSTILE[0] + ".blksgf", "input"))
    _assert_clean(dom)
    assert 'data-probe="clean"' in dom
    error = re.search(r'<div id="error">(.*?)</div>', dom, re.DOTALL).group(1)
    assert _text(HOSTILE[2][:60]) in error and _text(HOSTILE[0]) in error
    deep = "(;GM[Blokus Duo]" + "(" * 5000 + ";B[a1]" + ")" * 5000 + ")"
    dom = _dom(_probe_page(tmp_path, deep, "deep.blksgf", "drop"))
    assert 'data-probe="clean"' in dom and 'data-total="1"' in dom  # parsed without recursion


def test_oversized_files_are_refused_by_the_page(tmp_path):
    text = "(;GM[Blokus Duo]C[" + "x" * records.MAX_RECORD_BYTES + "])"
    dom = _dom(_probe_page(tmp_path, text, "big.blksgf", "drop"))
    assert 'data-probe="clean"' in dom
    error = re.search(r'<div id="error">(.*?)</div>', dom, re.DOTALL).group(1)
    assert "cannot open big.blksgf: it is larger than" in error


def test_a_page_keeps_the_record_file_name_never_its_folders(tmp_path, monkeypatch):
    """A page shared with others must not reveal the maker's file system layout."""
    from blokus_jax.io import viewer as v

    for source in ("/home/alice/secret project/games/duo 1.json", "C:\\Users\\alice\\games\\duo 1.json"):
        page = v.viewer_html(None, source=source)
        assert "alice" not in page and "secret" not in page and "Users" not in page
        assert 'content="duo 1.json"' in page
    record_dir = tmp_path / "private" / "games"
    record_dir.mkdir(parents=True)
    source = record_dir / "g.json"
    source.write_text("{}")
    page_path = v.write_viewer(None, record_dir / "g.html", source=str(source.resolve()))
    text = page_path.read_text()
    assert "private" not in text and str(tmp_path) not in text
    assert v.page_source(page_path) == str(source.resolve())  # found beside the page
    moved = tmp_path / "elsewhere.html"
    moved.write_text(text)
    monkeypatch.chdir(tmp_path)
    assert v.page_source(moved) == "g.json"  # neither beside it nor here: the bare name
    monkeypatch.chdir(record_dir)
    assert v.page_source(moved) == str(source.resolve())  # in the current folder
