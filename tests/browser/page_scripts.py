"""The JavaScript the browser tests run in the JupyterLab page (``page.evaluate``), and the CSS
selector of the ipywidgets controls they move: what the page is asked, apart from the test logic
of test_notebooks_browser.py."""

CONTROL_SELECTOR = ".widget-slider, .widget-hslider, .widget-dropdown, .widget-checkbox, " \
                   ".widget-toggle-buttons, button.widget-button"

JS_CELL_STATE = """() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell')];
  return cells.map((c, i) => {
    const prompt = c.querySelector('.jp-InputArea-prompt');
    const src = c.querySelector('.cm-content');
    return {prompt: prompt ? prompt.textContent.trim() : '',
            empty: src ? src.textContent.trim() === '' : false};
  });
}"""

# A hash of everything the notebook's outputs show, with the widget controls themselves removed
# (a moved slider changes its own readout; that must not count as "the output changed"). With
# `stable`, what a re-run measures anew is left out: everything inside an output the notebook
# marked `aics-timing` (widgets.Output().add_class("aics-timing"): timing plots and the verdicts
# drawn from them) and measured times and rates in other text.
JS_OUTPUT_SIGNATURE = """([sel, stable, text]) => {
  const parts = [];
  const measured = /[0-9][0-9.,]*\\s*(ms|µs|us|ns|s|GFLOP\\/s|GB\\/s|x|×)(?![A-Za-z])/g;
  for (const area of document.querySelectorAll('.jp-Notebook .jp-Cell .jp-OutputArea')) {
    if (stable && area.closest('.aics-timing')) continue;     // (an Output widget's own output area)
    const clone = area.cloneNode(true);
    clone.querySelectorAll(sel).forEach(e => e.remove());
    if (stable) clone.querySelectorAll('.aics-timing').forEach(e => e.remove());
    parts.push(stable ? clone.textContent.replace(measured, '#') : clone.textContent);
    clone.querySelectorAll('img').forEach(i => parts.push(i.getAttribute('src') || ''));
    clone.querySelectorAll('svg').forEach(s => parts.push(s.outerHTML));
    clone.querySelectorAll('pre').forEach(p => parts.push(stable ? p.textContent.replace(measured, '#')
                                                                 : p.textContent));
  }
  const s = parts.join('\\u0001');
  if (text) return s;
  let h = 2166136261 >>> 0;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
  return h.toString(16) + ':' + s.length;
}"""

# The notebook's panel, found by its path, and its kernel (JupyterLab exposes the app with
# --LabApp.expose_app_in_browser; see conftest.py).
JS_PANEL = """(name) => [...window.jupyterapp.shell.widgets('main')]
  .find(w => w.context && w.context.path && w.context.path.split('/').pop() === name)"""

# Each wait races a timer: a promise that can no longer settle (its widget disposed) is otherwise
# garbage collected and Playwright reports only "Resulting promise was garbage collected".
JS_WITHIN = """(p, what) => Promise.race([p, new Promise((_, fail) =>
  setTimeout(() => fail(new Error(what + ' not done in 120 s')), 120000))])"""

JS_OPEN = """async (name) => {
  const within = (p, what) => (%s)(p, 'opening ' + name + ': ' + what);
  const app = window.jupyterapp;
  await within(app.restored, 'the app');
  const panel = await within(app.commands.execute('docmanager:open', {path: name, factory: 'Notebook'}),
                             'docmanager:open');
  await within(panel.context.ready, 'the document');
  await within(panel.sessionContext.ready, 'the kernel session');
  return true;
}""" % JS_WITHIN

# Every document closed without asking (the test saved what it checks), so the next notebook is
# the only one in the page.
JS_CLOSE_ALL = """() => { for (const w of [...window.jupyterapp.shell.widgets('main')]) {
  if (w.context && w.context.model) w.context.model.dirty = false;
  w.dispose(); } }"""

JS_SAVE = """async (name) => { await (%s)((%s)(name).context.save(), 'saving ' + name); return true; }""" % (
    JS_WITHIN, JS_PANEL)

JS_ERRORS = """() => {
  const found = [];
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  cells.forEach((c, i) => {
    c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
      .forEach(o => { const t = o.textContent;
        if (/Traceback|Error\\b|Exception/.test(t)) found.push({cell: i, kind: 'stderr', text: t.slice(0, 1500)}); });
    c.querySelectorAll('.jp-OutputArea-output').forEach(o => {
      const t = o.textContent;
      if (/Error displaying widget|Failed to display|model not found/.test(t))
        found.push({cell: i, kind: 'widget', text: t.slice(0, 500)}); });
    // an exception raised in a widget callback, shown inside an Output widget
    c.querySelectorAll('.widget-output .jp-OutputArea-output').forEach(o => {
      const t = o.textContent, k = t.indexOf('Traceback (most recent call last)');
      if (k >= 0) found.push({cell: i, kind: 'widget callback', text: t.slice(k, k + 3000)}); });
  });
  return found.filter((e, k) => found.findIndex(f => f.text === e.text) === k);
}"""

JS_STDERR = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].flatMap((c, i) =>
  [...c.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(o => ({cell: i, text: o.textContent.trim().slice(0, 400)})))"""

JS_LABEL_CONTROLS = """(sel) => {
  const all = [...document.querySelectorAll('.jp-Notebook .jp-Cell .jp-OutputArea')]
      .flatMap(a => [...a.querySelectorAll(sel)]);
  // outermost only (a toggle-buttons group holds buttons)
  const ctl = all.filter(e => !all.some(o => o !== e && o.contains(e)));
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  return ctl.map((e, n) => {
    e.setAttribute('data-aics-ctl', String(n));
    const kind = e.matches('.widget-toggle-buttons') ? 'toggle' : e.matches('.widget-dropdown') ? 'dropdown'
               : e.matches('.widget-checkbox') ? 'checkbox' : e.matches('button') ? 'button' : 'slider';
    const label = e.querySelector('.widget-label');
    return {n, kind, cell: cells.findIndex(c => c.contains(e)),
            label: ((label && label.textContent.replace(/\u200b/g, '').trim()) || e.textContent)
                     .replace(/\u200b/g, '').trim()};
  });
}"""

JS_DISABLED = """(e) => !!(e.matches(':disabled') || e.querySelector(':disabled') || e.querySelector('[disabled]')
                           || e.classList.contains('mod-disabled'))"""

JS_CJK_HEADING = r"""() => {
  const re = /[\u3400-\u9fff]/;
  const hs = [...document.querySelectorAll('.jp-Notebook .jp-RenderedMarkdown :is(h1,h2,h3)')]
      .filter(h => re.test(h.textContent));
  if (!hs.length) return null;
  const h = hs[0];
  h.setAttribute('data-aics-cjk', '1');
  h.scrollIntoView({block: 'center'});
  const walker = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
  const widths = [], chars = [];
  let n;
  while ((n = walker.nextNode())) {
    for (let i = 0; i < n.data.length; i++) if (re.test(n.data[i])) {
      const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
      widths.push(r.getBoundingClientRect().width); chars.push(n.data[i]);
    }
  }
  const cs = getComputedStyle(h);
  const c = document.createElement('canvas'); c.width = c.height = 64;
  const g = c.getContext('2d', {willReadFrequently: true});
  const draw = ch => { g.clearRect(0, 0, 64, 64); g.font = '48px ' + cs.fontFamily; g.fillStyle = '#000';
                       g.textBaseline = 'top'; g.fillText(ch, 4, 4);
                       const d = g.getImageData(0, 0, 64, 64).data; let s = '', ink = 0;
                       for (let i = 3; i < d.length; i += 4) { s += d[i] > 127 ? '1' : '0'; ink += d[i] > 127; }
                       return [s, ink]; };
  const distinct = [...new Set(chars)].slice(0, 6);
  const glyphs = distinct.map(draw);
  const differ = glyphs.length > 1 && new Set(glyphs.map(x => x[0])).size === glyphs.length;
  return {text: h.textContent.trim(), fontSize: parseFloat(cs.fontSize), fontFamily: cs.fontFamily,
          widths, chars: chars.join(''), glyphsDiffer: differ, ink: glyphs.map(x => x[1])};
}"""
