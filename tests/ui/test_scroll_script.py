"""The results scroll script (``ui.common.layout.SCROLL_SCRIPT``) runs again and again in one page.

The browser runs every such script of a session in one global scope: one that declared a top-level
``const`` failed with "Identifier 'el' has already been declared" from the second upload on (seen as
page errors in the soak benchmark). Run by Node with a stand-in ``document``.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from ui.common.layout import RESULTS_ANCHOR, SCROLL_SCRIPT

NODE = shutil.which("node") or shutil.which("nodejs")


@pytest.mark.skipif(NODE is None, reason="needs node (Debian: nodejs)")
def test_the_scroll_script_runs_twice_in_one_scope_and_scrolls_each_time():
    harness = f"""
    const vm = require('vm');
    let scrolled = 0, asked = [];
    const ctx = vm.createContext({{document: {{querySelector: (s) => {{ asked.push(s);
        return {{scrollIntoView: (o) => {{ if (o.block === 'start') scrolled += 1; }}}}; }}}}}});
    const src = {json.dumps(SCROLL_SCRIPT)};
    vm.runInContext(src, ctx); vm.runInContext(src, ctx); vm.runInContext(src, ctx);
    console.log(JSON.stringify({{scrolled, asked}}));
    """
    out = subprocess.run([NODE, "-e", harness], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["scrolled"] == 3
    assert got["asked"] == [f".st-key-{RESULTS_ANCHOR}"] * 3
