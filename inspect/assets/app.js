// rlsearch inspector. One script for both modes: served by `rlsearch serve`
// at /ui/ (data from /ui/api/*, what-if through /v1/*), or inlined into the
// self-contained report of `rlsearch inspect` (data in JSON script
// blocks). Every string from a rollout reaches the
// page through textContent or an attribute value; nothing is parsed as HTML.
'use strict';
(function () {
  const REPORT = document.getElementById('rl-summary') !== null;
  const app = document.getElementById('app');
  const where = document.getElementById('where');
  window.__rl = { renders: 0, mode: REPORT ? 'report' : 'serve' };

  // ---------- DOM helpers (textContent only) ----------
  function setAttrs(el, a) {
    if (!a) return;
    for (const k of Object.keys(a)) {
      const v = a[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k === 'text') el.textContent = String(v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  function add(el, ...kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === null || k === undefined || k === false) continue;
      el.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return el;
  }
  function h(tag, attrs, ...kids) { const el = document.createElement(tag); setAttrs(el, attrs); return add(el, ...kids); }
  const SVGNS = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...kids) { const el = document.createElementNS(SVGNS, tag); setAttrs(el, attrs); return add(el, ...kids); }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }
  function fmt(v) {
    if (v === undefined || v === null) return '–';
    if (typeof v !== 'number') return String(v);
    return Number.isInteger(v) ? String(v) : v.toFixed(3);
  }
  function chip(text, cls, attrs) { return h('span', Object.assign({ class: 'chip ' + (cls || '') }, attrs || {}), text); }
  const BIG = 100000; // characters of a long text shown before "show all"
  function bigText(str, cls) {
    str = str || '';
    const pre = h('pre', { class: cls || '' });
    if (str.length <= BIG) { pre.textContent = str; return pre; }
    pre.textContent = str.slice(0, BIG);
    const more = h('button', { onclick: () => { pre.textContent = str; more.remove(); note.remove(); } }, 'show all ' + str.length.toLocaleString() + ' characters');
    const note = h('div', { class: 'trunc' }, 'showing the first ' + BIG.toLocaleString() + ' of ' + str.length.toLocaleString() + ' characters ');
    return h('div', null, pre, note, more);
  }

  // ---------- program highlighting ----------
  const KW = new Set('and as assert break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False'.split(' '));
  const BI = new Set('question dense sparse fuse rerank dedup doc print len range sorted list dict set str int float enumerate zip min max any all reversed tuple bool type'.split(' '));
  function highlight(src) {
    const pre = h('pre', { class: 'code' });
    const n = src.length;
    let i = 0, plain = '';
    const flush = () => { if (plain) { pre.appendChild(document.createTextNode(plain)); plain = ''; } };
    const tok = (cls, t) => { flush(); pre.appendChild(h('span', { class: cls }, t)); };
    while (i < n) {
      const c = src[i];
      if (c === '#') {
        let j = src.indexOf('\n', i); if (j < 0) j = n;
        tok('com', src.slice(i, j)); i = j; continue;
      }
      if (c === '"' || c === "'") {
        const q = src.startsWith(c + c + c, i) ? c + c + c : c;
        let j = i + q.length;
        while (j < n) {
          if (src[j] === '\\') { j += 2; continue; }
          if (src.startsWith(q, j)) { j += q.length; break; }
          if (q.length === 1 && src[j] === '\n') break;
          j++;
        }
        j = Math.min(j, n); tok('str', src.slice(i, j)); i = j; continue;
      }
      if (/[0-9]/.test(c) && !/[A-Za-z_0-9]/.test(src[i - 1] || '')) {
        let j = i; while (j < n && /[0-9_.eExXa-fA-F]/.test(src[j])) j++;
        tok('num', src.slice(i, j)); i = j; continue;
      }
      if (/[A-Za-z_]/.test(c)) {
        let j = i; while (j < n && /[A-Za-z_0-9]/.test(src[j])) j++;
        const w = src.slice(i, j);
        if (KW.has(w)) tok('kw', w); else if (BI.has(w)) tok('bi', w); else plain += w;
        i = j; continue;
      }
      plain += c; i++;
    }
    flush();
    return pre;
  }

  // ---------- data sources ----------
  async function fetchJSON(url, opts) {
    const res = await fetch(url, opts);
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (!res.ok) {
      const msg = body && body.error ? body.error + (body.field ? ' (field ' + body.field + ')' : '') : res.statusText;
      const err = new Error(res.status + ': ' + msg);
      err.status = res.status;
      throw err;
    }
    return body;
  }
  function postJSON(url, body) {
    return fetchJSON(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  }

  function serverSource() {
    return {
      live: true,
      config: () => fetchJSON('api/config'),
      summary: (d) => fetchJSON('api/summary?dump=' + d),
      rows: (d, q) => fetchJSON('api/rows?' + queryParams(q, d).toString()),
      rollout: (d, i, trace) => fetchJSON('api/rollout?dump=' + d + '&i=' + i + (trace ? '&trace=1' : '')),
    };
  }

  function readJSON(id) { const el = document.getElementById(id); return el ? JSON.parse(el.textContent) : null; }

  // inflate decodes a report block: base64, then gzip (report.go).
  async function inflate(b64) {
    if (typeof DecompressionStream === 'undefined') throw new Error('this browser has no DecompressionStream (Chromium 80+, Firefox 113+, Safari 16.4+ read reports)');
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
  }

  function reportSource() {
    const cfg = readJSON('rl-config');
    const summary = readJSON('rl-summary');
    const rows = readJSON('rl-rows');
    let offsets = null;
    const chunks = new Map(); // block number → its text, the last few read
    const parsed = new Promise((resolve) => {
      if (document.readyState !== 'loading') resolve();
      else document.addEventListener('DOMContentLoaded', () => resolve());
    });
    return {
      live: false,
      config: async () => cfg,
      summary: async () => summary,
      rows: async (d, q) => localQuery(rows, summary, q),
      rollout: async (d, i) => {
        await parsed;
        if (offsets === null) offsets = readJSON('rl-offsets');
        if (!(i >= 0 && 2 * i + 1 < offsets.length)) throw new Error('400: rollout ' + i + ': the report has ' + offsets.length / 2 + ' (field i)');
        const c = Math.floor(i / cfg.chunk);
        let text = chunks.get(c);
        if (text === undefined) {
          text = await inflate(document.getElementById('rl-details-' + c).textContent);
          if (chunks.size >= 4) chunks.delete(chunks.keys().next().value);
          chunks.set(c, text);
        }
        return JSON.parse(text.slice(offsets[2 * i], offsets[2 * i] + offsets[2 * i + 1]));
      },
    };
  }

  // The rules of inspect.Query (summary.go), applied to the embedded rows.
  function binOf(hist, v) {
    if (hist.scale === 'unit') return Math.min(Math.max(Math.floor(v * 10), 0), 9);
    return Math.min(Math.max(Math.floor(v), 0), hist.cap || 0);
  }
  const PATTERN_NAMES = () => (state.summary ? state.summary.patterns.map((p) => p.name) : []);
  function localQuery(rows, summary, q) {
    const bad = (field, msg) => { const e = new Error('400: ' + msg + ' (field ' + field + ')'); e.status = 400; throw e; };
    const offset = q.offset || 0, limit = q.limit || 50;
    if (offset < 0) bad('offset', 'offset ' + offset + ' is negative');
    if (limit < 0 || limit > 500) bad('limit', 'limit ' + limit + ': want 1..500');
    if (q.pattern && !summary.patterns.some((p) => p.name === q.pattern)) bad('pattern', 'unknown pattern ' + q.pattern);
    let hist = null, bin = -1;
    if (q.bin) {
      const k = q.bin.lastIndexOf(':');
      const key = q.bin.slice(0, k), i = Number(q.bin.slice(k + 1));
      hist = (summary.components || []).find((c) => c.key === key) || null;
      if (k < 0 || !hist || !Number.isInteger(i) || i < 0 || i >= hist.counts.length) bad('bin', 'bin ' + q.bin);
      bin = i;
    }
    const text = (q.text || '').toLowerCase();
    const sel = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (q.pattern && !(r.p || []).includes(q.pattern)) continue;
      if (q.code && !(r.c || []).includes(q.code)) continue;
      if (q.format && r.f !== q.format) continue;
      if (q.cell && q.cell !== r.gs + ':' + r.ans) continue;
      if (hist) { const v = r.v[hist.key]; if (v === undefined || binOf(hist, v) !== bin) continue; }
      if (text && !(r.id + '\n' + r.q + '\n' + r.a).toLowerCase().includes(text)) continue;
      sel.push(i);
    }
    const sortKey = q.sort || 'index';
    if (sortKey !== 'index' || q.desc) {
      const key = (r) => sortKey === 'index' ? r.i : sortKey === 'id' ? r.r : r.v[sortKey];
      sel.sort((a, b) => {
        const va = key(rows[a]), vb = key(rows[b]);
        const oka = va !== undefined, okb = vb !== undefined;
        if (oka !== okb) return oka ? -1 : 1;
        if (!oka || va === vb) return 0;
        return q.desc ? (vb < va ? -1 : 1) : (va < vb ? -1 : 1);
      });
    }
    return { total: sel.length, offset: offset, rows: sel.slice(offset, offset + limit).map((i) => rows[i]) };
  }

  // ---------- state and routing ----------
  const src = REPORT ? reportSource() : serverSource();
  const state = { cfg: null, summary: null, dump: 0, lastBatch: '' };
  function params() { return new URLSearchParams(location.hash.slice(1)); }
  function hashOf(obj) {
    const p = new URLSearchParams();
    for (const k of Object.keys(obj)) { const v = obj[k]; if (v !== '' && v !== null && v !== undefined && v !== false && !(k === 'page' && v === 0)) p.set(k, v); }
    return '#' + p.toString();
  }
  function go(obj) { location.hash = hashOf(obj); }
  function batchQuery(p) {
    return { text: p.get('q') || '', pattern: p.get('pattern') || '', code: p.get('code') || '', format: p.get('format') || '',
      cell: p.get('cell') || '', bin: p.get('bin') || '', sort: p.get('sort') || '', desc: p.get('desc') === '1',
      page: Number(p.get('page') || 0), limit: Number(p.get('limit') || 50) };
  }
  function queryParams(q, d) {
    const p = new URLSearchParams();
    p.set('dump', d);
    for (const k of ['text', 'pattern', 'code', 'format', 'cell', 'bin', 'sort']) if (q[k]) p.set(k === 'text' ? 'q' : k, q[k]);
    if (q.desc) p.set('desc', '1');
    p.set('offset', q.offset || 0);
    p.set('limit', q.limit || 50);
    return p;
  }
  function batchHash(q, over) {
    const m = Object.assign({ view: 'batch', dump: state.dump, q: q.text, pattern: q.pattern, code: q.code, format: q.format, cell: q.cell,
      bin: q.bin, sort: q.sort, desc: q.desc ? '1' : '', page: q.page, limit: q.limit === 50 ? '' : q.limit }, over);
    return m;
  }

  function showError(where, err) { add(clear(where), h('p', { class: 'err', 'data-k': 'error' }, String(err && err.message || err))); }
  // rendered marks a finished view for tests and timings: painted becomes
  // "KIND:N" (N counts renders) once the frame after it was drawn.
  function rendered(kind) {
    const n = ++window.__rl.renders;
    requestAnimationFrame(() => setTimeout(() => { window.__rl.paintedAt = performance.now(); window.__rl.painted = kind + ':' + n; }, 0));
  }

  async function route() {
    const p = params();
    state.dump = Number(p.get('dump') || 0);
    try {
      if (p.get('view') === 'rollout') await renderRollout(state.dump, Number(p.get('i') || 0), p.get('trace') === '1');
      else await renderBatch(state.dump, batchQuery(p));
    } catch (e) { showError(app, e); rendered('error'); }
  }

  async function start() {
    try {
      state.cfg = await src.config();
    } catch (e) { showError(app, e); return; }
    renderHeader();
    window.__rl.refresh = route; // re-render the current hash (tests, and a view of a dump that changed)
    window.addEventListener('hashchange', route);
    route();
  }

  function renderHeader() {
    clear(where);
    const c = state.cfg;
    if (REPORT) {
      add(where, 'report of ', h('strong', null, c.dump), ' · ', c.generated, ' · offline (what-if needs rlsearch serve)');
      return;
    }
    const dumps = c.dumps || [];
    if (dumps.length === 0) { add(where, 'no dump loaded (serve --inspect ROLLOUTS.jsonl)'); return; }
    const sel = h('select', { 'data-k': 'dump-select', onchange: (e) => go({ view: 'batch', dump: e.target.value }) },
      dumps.map((d, i) => h('option', { value: i }, d.name)));
    sel.value = String(state.dump);
    add(where, 'dump ', sel, ' · live: ', c.trace ? 'replay and what-if against the served index' : 'what-if only');
  }

  // ---------- batch view ----------
  async function loadSummary(d) {
    if (REPORT) { state.summary = await src.summary(d); return true; }
    for (;;) {
      try { state.summary = await src.summary(d); return true; } catch (e) {
        if (e.status !== 503) throw e;
        const dumps = (await src.config()).dumps || [];
        const st = dumps[d] || {};
        clear(app);
        const bar = h('div', { class: 'progress' }, h('div'));
        bar.firstChild.style.width = (st.bytes ? 100 * st.read_bytes / st.bytes : 0).toFixed(1) + '%';
        add(app, h('p', null, 'Loading ', st.name || '', ': ', (st.read_bytes || 0).toLocaleString(), ' of ', (st.bytes || 0).toLocaleString(), ' bytes, ', (st.rollouts || 0).toLocaleString(), ' rollouts'), bar);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async function renderBatch(d, q) {
    if (!state.summary || state.summaryDump !== d) { await loadSummary(d); state.summaryDump = d; }
    const sum = state.summary;
    state.lastBatch = location.hash;
    const page = await src.rows(d, Object.assign({}, q, { offset: q.page * q.limit }));
    clear(app);
    add(app, overview(sum), charts(sum, q), table(sum, q, page));
    rendered('batch');
  }

  function statCard(v, l, k, extra) { return h('div', { class: 'card stat' }, h('div', { class: 'v', 'data-k': k, 'data-v': v }, fmt(v)), h('div', { class: 'l' }, l), extra || null); }

  function overview(sum) {
    const cards = h('div', { class: 'cards' },
      statCard(sum.rollouts, 'rollouts', 'rollouts'),
      statCard(sum.bad, 'bad lines', 'bad', sum.bad ? h('a', { onclick: () => badList.hidden = !badList.hidden }, 'show') : null),
      h('div', { class: 'card stat' }, h('div', { class: 'l' }, 'formats'), Object.keys(sum.formats).sort().map((f) => chip(f + ' ' + sum.formats[f], '', { 'data-k': 'format:' + f, 'data-v': sum.formats[f] }))),
      h('div', { class: 'card stat' }, h('div', { class: 'l' }, 'judge'), h('div', null, sum.judge), h('div', { class: 'l' }, 'gold'), h('div', null, sum.gold || 'from the dump')),
      statCard(Number(sum.load_seconds.toFixed(2)), 'seconds to load', 'load'));
    const badList = h('div', { class: 'card', hidden: true, 'data-k': 'bad-lines' },
      h('h3', null, 'Bad lines (', String(sum.bad), sum.bad > sum.bad_lines.length ? ', first ' + sum.bad_lines.length + ' listed' : '', ')'),
      h('table', null, h('tr', null, h('th', null, 'line'), h('th', null, 'error'), h('th', null, 'start of the line')),
        sum.bad_lines.map((b) => h('tr', { 'data-k': 'bad-line', 'data-line': b.line }, h('td', { class: 'num' }, String(b.line)), h('td', null, b.error), h('td', null, h('code', null, b.preview))))));
    const errs = (sum.reward_errors || []).length ? h('div', { class: 'card' }, h('h3', null, 'Rewards not computed'),
      sum.reward_errors.map((c) => h('div', null, chip(c.name), ' ', String(c.count), ' rollouts, e.g. ', h('span', { class: 'muted' }, c.label)))) : null;
    return h('section', null, cards, badList, errs);
  }

  function histogram(hist, q) {
    const W = 300, H = 120, top = 14, base = 92;
    const n = hist.counts.length, bw = (W - 10) / n;
    const maxc = Math.max(1, ...hist.counts);
    const svg = s('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'data-k': 'hist:' + hist.key });
    hist.counts.forEach((c, i) => {
      const bh = (base - top) * c / maxc;
      const x = 5 + i * bw;
      const sel = q.bin === hist.key + ':' + i;
      const rect = s('rect', { class: 'bar' + (sel ? ' sel' : ''), x: x + 1, y: base - bh, width: Math.max(1, bw - 2), height: Math.max(bh, c ? 1 : 0),
        'data-k': 'bin:' + hist.key + ':' + i, 'data-v': c, onclick: () => go(batchHash(q, { bin: sel ? '' : hist.key + ':' + i, page: 0 })) },
      s('title', null, hist.bins[i] + ': ' + c));
      svg.appendChild(rect);
      if (c) svg.appendChild(s('text', { class: 'cnt', x: x + bw / 2, y: base - bh - 2, 'text-anchor': 'middle' }, String(c)));
      const lbl = hist.scale === 'unit' ? (i === 0 ? '0' : '.' + i) : hist.bins[i];
      svg.appendChild(s('text', { class: 'lbl', x: x + bw / 2, y: base + 11, 'text-anchor': 'middle' }, lbl));
    });
    svg.appendChild(s('line', { x1: 5, x2: W - 5, y1: base, y2: base, stroke: '#a0aec0' }));
    if (hist.scale === 'unit') svg.appendChild(s('text', { class: 'lbl', x: W - 5, y: base + 24, 'text-anchor': 'end' }, '1.0'));
    return h('div', { class: 'card hist' },
      h('div', { class: 'title' }, h('strong', null, hist.label), h('span', { class: 'muted' }, 'mean ', h('span', { 'data-k': 'mean:' + hist.key, 'data-v': hist.mean }, fmt(hist.mean)), ' · n ', h('span', { 'data-k': 'n:' + hist.key, 'data-v': hist.n }, String(hist.n)))),
      svg);
  }

  function charts(sum, q) {
    const comps = sum.components || [];
    const gt = sum.gold_table;
    const gtab = h('table', { 'data-k': 'gold-table' },
      h('tr', null, h('th', null, 'gold passages printed ↓ / answer →'), gt.cols.map((c) => h('th', { class: 'num' }, c === 'correct' ? 'EM = 1' : c === 'wrong' ? 'EM = 0' : 'no answer'))),
      gt.rows.map((r, i) => h('tr', null, h('th', null, r),
        gt.cols.map((c, j) => {
          const key = r + ':' + c, sel = q.cell === key;
          return h('td', { class: 'cellclick' + (sel ? ' sel' : ''), 'data-k': 'gold:' + key, 'data-v': gt.counts[i][j], onclick: () => go(batchHash(q, { cell: sel ? '' : key, page: 0 })) }, String(gt.counts[i][j]));
        }))));
    const maxCode = Math.max(1, ...sum.codes.map((c) => c.count));
    const codes = h('table', { 'data-k': 'codes' }, sum.codes.length ? sum.codes.map((c) => {
      const bar = h('div', { class: 'progress' }, h('div'));
      bar.firstChild.style.width = (100 * c.count / maxCode).toFixed(1) + '%';
      const sel = q.code === c.name;
      return h('tr', { class: 'click', onclick: () => go(batchHash(q, { code: sel ? '' : c.name, page: 0 })) },
        h('td', null, chip(c.name, c.name === 'ok' ? 'ok' : 'bad', sel ? { 'data-sel': '1' } : null)), h('td', { class: 'num', 'data-k': 'code:' + c.name, 'data-v': c.count }, String(c.count)), h('td', null, bar));
    }) : h('tr', null, h('td', { class: 'muted' }, 'no programs')));
    const pats = h('table', { 'data-k': 'patterns' }, sum.patterns.map((p) => {
      const sel = q.pattern === p.name;
      return h('tr', { class: 'click', onclick: () => go(batchHash(q, { pattern: sel ? '' : p.name, page: 0 })) },
        h('td', null, chip(p.name, p.count ? 'bad' : '')), h('td', { class: 'num', 'data-k': 'pattern:' + p.name, 'data-v': p.count }, String(p.count)), h('td', { class: 'muted' }, p.label));
    }));
    return h('section', null,
      h('h2', null, 'Rewards and counts (click a bar to filter the table)'),
      h('div', { class: 'grid' }, comps.map((c) => histogram(c, q))),
      h('div', { class: 'row2' },
        h('div', null, h('h2', null, 'Gold seen vs answered correctly'), h('div', { class: 'card' }, gtab),
          h('h2', null, 'Program outcome codes (per program)'), h('div', { class: 'card' }, codes)),
        h('div', null, h('h2', null, 'Failure patterns'), h('div', { class: 'card' }, pats))));
  }

  const COLS = [
    { key: 'index', label: '#', num: true, get: (r) => r.i },
    { key: 'id', label: 'id', get: (r) => r.id },
    { key: null, label: 'question', get: (r) => r.q },
    { key: null, label: 'answer', get: (r) => r.af ? r.a : '—' },
    { key: null, label: 'format', get: (r) => r.f },
    { key: 'calls', label: 'calls', num: true, get: (r) => r.v.calls },
    { key: 'qa.em', label: 'EM', num: true, get: (r) => r.v['qa.em'] },
    { key: 'qa.f1', label: 'F1', num: true, get: (r) => r.v['qa.f1'] },
    { key: 'rpl.v_ret', label: 'V_ret', num: true, get: (r) => r.v['rpl.v_ret'] },
    { key: 'search-p1.total', label: 'S-P1', num: true, get: (r) => r.v['search-p1.total'] },
  ];

  let textTimer = null;
  function table(sum, q, page) {
    const filters = h('div', { class: 'filters' },
      h('input', { type: 'search', placeholder: 'search id, question, answer', value: q.text, 'data-k': 'search',
        oninput: (e) => { clearTimeout(textTimer); const v = e.target.value; textTimer = setTimeout(() => go(batchHash(q, { q: v, page: 0 })), 300); } }),
      select('pattern', q, [''].concat(sum.patterns.map((p) => p.name)), 'any pattern'),
      select('code', q, [''].concat(sum.codes.map((c) => c.name)), 'any outcome'),
      select('format', q, [''].concat(Object.keys(sum.formats).sort()), 'any format'),
      q.cell ? chip('cell ' + q.cell + ' ×', 'chipbtn', { onclick: () => go(batchHash(q, { cell: '', page: 0 })) }) : null,
      q.bin ? chip('bin ' + q.bin + ' ×', 'chipbtn', { onclick: () => go(batchHash(q, { bin: '', page: 0 })) }) : null);
    const pages = Math.max(1, Math.ceil(page.total / q.limit));
    const pager = h('div', { class: 'pager' },
      h('button', { disabled: q.page <= 0, 'data-k': 'prev', onclick: () => go(batchHash(q, { page: q.page - 1 })) }, '‹ prev'),
      h('span', { 'data-k': 'pageinfo', 'data-v': page.total }, 'page ', String(q.page + 1), ' of ', String(pages), ' · ', page.total.toLocaleString(), ' rollouts'),
      h('button', { disabled: q.page + 1 >= pages, 'data-k': 'next', onclick: () => go(batchHash(q, { page: q.page + 1 })) }, 'next ›'));
    const head = h('tr', null, COLS.map((c) => {
      if (!c.key) return h('th', null, c.label);
      const on = (q.sort || 'index') === c.key;
      return h('th', { class: 'sort' + (c.num ? ' num' : ''), 'data-k': 'sort:' + c.key, onclick: () => go(batchHash(q, { sort: c.key, desc: on && !q.desc ? '1' : '', page: 0 })) },
        c.label, on ? (q.desc ? ' ▼' : ' ▲') : '');
    }), h('th', null, 'outcomes'), h('th', null, 'patterns'));
    const body = page.rows.map((r) => h('tr', { class: 'click', 'data-k': 'row', 'data-i': r.i, onclick: () => go({ view: 'rollout', dump: state.dump, i: r.i }) },
      COLS.map((c) => { const v = c.get(r); return h('td', { class: c.num ? 'num' : '', 'data-c': c.label }, c.num ? fmt(v) : v); }),
      h('td', null, (r.c || []).map((c) => chip(c, c === 'ok' ? 'ok' : 'bad'))),
      h('td', null, (r.p || []).map((p) => chip(p, 'bad')))));
    return h('section', null, h('h2', null, 'Rollouts'), filters, pager, h('div', { class: 'card' }, h('table', { 'data-k': 'rows' }, head, body)));
  }

  function select(name, q, values, any) {
    const el = h('select', { 'data-k': 'filter:' + name, onchange: (e) => go(batchHash(q, { [name]: e.target.value, page: 0 })) },
      values.map((v) => h('option', { value: v }, v || any)));
    el.value = q[name] || '';
    return el;
  }

  // ---------- rollout view ----------
  async function renderRollout(d, i, trace) {
    clear(app);
    add(app, h('p', { class: 'muted' }, 'Loading rollout ' + i + '…'));
    if (!state.summary || state.summaryDump !== d) { await loadSummary(d); state.summaryDump = d; }
    const r = await src.rollout(d, i, trace);
    clear(app);
    const n = state.summary.rollouts;
    const back = state.lastBatch || hashOf({ view: 'batch', dump: d });
    add(app,
      h('div', { class: 'pager' }, h('a', { href: back, 'data-k': 'back' }, '← all rollouts'),
        h('button', { disabled: i <= 0, onclick: () => go({ view: 'rollout', dump: d, i: i - 1 }) }, '‹ previous'),
        h('span', null, 'rollout ', String(i + 1), ' of ', String(n)),
        h('button', { disabled: i + 1 >= n, onclick: () => go({ view: 'rollout', dump: d, i: i + 1 }) }, 'next ›')),
      header(r), rewards(r), turns(r), traceView(r, d, i), whatIf(r), variants(r));
    rendered('rollout');
  }

  function header(r) {
    return h('section', { class: 'card', 'data-k': 'rollout', 'data-id': r.id },
      h('h2', null, 'Rollout ', h('span', { 'data-k': 'rollout-id' }, r.id)),
      h('table', { class: 'kv' },
        h('tr', null, h('td', null, 'line'), h('td', null, String(r.line), ' · format ', r.format)),
        h('tr', null, h('td', null, 'question'), h('td', { 'data-k': 'question' }, r.question || '—')),
        h('tr', null, h('td', null, 'gold answers'), h('td', null, r.golden_answers.length ? r.golden_answers.map((a) => chip(a, 'gold')) : '—')),
        h('tr', null, h('td', null, 'gold passages'), h('td', null, r.gold_ids.length ? r.gold_ids.map((a) => chip(a, 'gold')) : '—',
          r.gold_titles.length ? [' titles: ', r.gold_titles.map((a) => chip(a, 'gold'))] : null)),
        h('tr', null, h('td', null, 'gold from'), h('td', null, r.gold_source || 'nowhere: no gold')),
        h('tr', null, h('td', null, 'final answer'), h('td', { 'data-k': 'answer' }, r.answer_found ? r.answer : '(none)', ' ', r.answer_blocks > 1 ? chip(r.answer_blocks + ' answer blocks', 'bad') : null)),
        h('tr', null, h('td', null, 'patterns'), h('td', null, r.patterns.length ? r.patterns.map((p) => chip(p, 'bad')) : chip('none', 'ok')))));
  }

  function flatten(obj, prefix, out) {
    for (const k of Object.keys(obj)) {
      const v = obj[k], key = prefix ? prefix + '.' + k : k;
      if (v && typeof v === 'object' && !Array.isArray(v)) flatten(v, key, out);
      else out.push([key, v]);
    }
    return out;
  }

  function rewards(r) {
    const kinds = ['qa', 'rpl', 'search-p1', 'proretrieval'];
    return h('section', null, h('h2', null, 'Rewards (reward package, the code of /v1/rewards/*)'),
      h('div', { class: 'grid' }, kinds.filter((k) => r.rewards[k] || r.reward_errors[k]).map((k) => {
        const res = r.rewards[k];
        return h('div', { class: 'card', 'data-k': 'reward:' + k },
          h('h3', null, k),
          r.reward_errors[k] ? h('p', { class: 'err' }, r.reward_errors[k]) : null,
          res ? h('table', { class: 'kv' }, flatten(res, '', []).filter(([key]) => key !== 'id').map(([key, v]) =>
            h('tr', null, h('td', null, key), h('td', { 'data-k': 'r:' + k + '.' + key, 'data-v': JSON.stringify(v) }, Array.isArray(v) ? JSON.stringify(v) : fmt(v))))) : null,
          (r.formulas[k] || []).map((f) => h('div', { class: 'formula' }, f)),
          r.reward_inputs[k] ? h('details', null, h('summary', null, 'input scored'), bigText(JSON.stringify(r.reward_inputs[k], null, 1))) : null);
      })));
  }

  function turns(r) {
    return h('section', null, h('h2', null, 'Turns'), r.turns.map((t, i) => {
      const box = h('div', { class: 'turn ' + t.role, 'data-k': 'turn', 'data-turn': i });
      add(box, h('div', { class: 'role' }, t.role, ' · turn ', String(i), t.outcome ? [' · ', chip(t.outcome, t.outcome === 'ok' ? 'ok' : 'bad', { 'data-k': 'outcome' })] : null,
        t.v_ret !== undefined && t.v_ret !== null ? [' · ', chip('V_ret ' + t.v_ret, t.v_ret ? 'ok' : 'bad', { 'data-k': 'turn-vret', 'data-v': t.v_ret })] : null));
      if (t.role === 'prompt') {
        add(box, h('details', null, h('summary', null, 'prompt (', String(t.text.length), ' characters)'), bigText(t.text)));
        return box;
      }
      if (t.role === 'model') {
        if (t.program) {
          add(box, h('h3', null, 'program'), highlight(t.program));
          if (t.typed) add(box, h('div', null, 'typed: ', chip('mode ' + t.typed.mode), chip('width ' + t.typed.width), chip('rerank ' + t.typed.rerank), chip('print ' + t.typed.print),
            ' queries: ', t.typed.queries.map((q) => chip(q))));
          else add(box, h('div', { class: 'muted' }, t.typed_error));
        }
        if (t.searches && t.searches.length) add(box, h('div', null, 'searches: ', t.searches.map((q) => chip(q))));
        if (t.answers && t.answers.length) add(box, h('div', null, 'answer blocks: ', t.answers.map((a) => chip(a || '(blank)', 'gold'))));
        add(box, h('details', null, h('summary', null, 'the policy\'s text (', String(t.text.length), ' characters)'), bigText(t.text)));
        return box;
      }
      if (t.stats) add(box, h('div', null, 'stats: ', Object.keys(t.stats).map((k) => chip(k + ' ' + t.stats[k]))));
      if (t.outcome_message) add(box, h('div', { class: 'err' }, t.outcome_message));
      if (t.docs && t.docs.length) {
        add(box, h('table', { 'data-k': 'obs-docs' }, h('tr', null, h('th', null, 'doc'), h('th', null, 'title'), h('th', null, 'id'), h('th', null, 'gold')),
          t.docs.map((dd) => h('tr', { class: dd.gold ? 'gold' : '' }, h('td', { class: 'num' }, String(dd.n)), h('td', null, dd.title), h('td', null, dd.id || '—'), h('td', null, dd.gold ? chip('gold', 'gold') : '')))));
      }
      add(box, h('div', { class: 'muted' }, 'observation exactly as the policy saw it (', String(t.text.length), ' characters):'), bigText(t.text));
      return box;
    }));
  }

  function candTable(hits) {
    return h('table', { 'data-k': 'cands' }, h('tr', null, h('th', { class: 'num' }, 'rank'), h('th', null, 'id'), h('th', null, 'title'), h('th', { class: 'num' }, 'score'), h('th', null, '')),
      hits.map((c) => h('tr', { class: (c.gold ? 'gold ' : '') + (c.printed ? 'printed' : '') }, h('td', { class: 'num' }, String(c.rank)), h('td', null, c.id), h('td', null, c.title),
        h('td', { class: 'num' }, c.score.toFixed(4)), h('td', null, c.gold ? chip('gold', 'gold') : null, c.printed ? chip('printed', 'ok') : null))));
  }

  function traceView(r, d, i) {
    const sec = h('section', { 'data-k': 'trace' }, h('h2', null, 'Retrieval calls (programs replayed against the index)'));
    if (!r.trace) {
      if (r.trace_error) add(sec, h('p', { class: 'err' }, r.trace_error));
      else if (!REPORT && state.cfg.trace && r.turns.some((t) => t.program)) add(sec, h('button', { 'data-k': 'replay', onclick: () => go({ view: 'rollout', dump: d, i: i, trace: '1' }) }, 'replay the programs with every call recorded'));
      else add(sec, h('p', { class: 'muted' }, REPORT ? 'not replayed (rlsearch inspect --index IDX replays every program)' : 'no programs, or no index to replay them'));
      return sec;
    }
    if (r.trace_error) add(sec, h('p', { class: 'err' }, r.trace_error));
    if (state.cfg.budgets) add(sec, h('div', { class: 'muted' }, 'budgets: ', Object.keys(state.cfg.budgets).map((k) => chip(k + ' ' + state.cfg.budgets[k]))));
    for (const pt of r.trace) {
      const card = h('div', { class: 'card', 'data-k': 'trace-program', 'data-turn': pt.turn });
      add(card, h('h3', null, 'program of turn ', String(pt.turn), ' · ', chip(pt.code, pt.code === 'ok' ? 'ok' : 'bad'), ' · gold printed ', String(pt.gold_covered), ' · ',
        pt.matches_dump === null || pt.matches_dump === undefined ? 'the dump shows no observation' : pt.matches_dump ? chip('replay = dump observation', 'ok', { 'data-k': 'matches' }) : chip('replay differs from the dump (other index?)', 'bad', { 'data-k': 'matches' })),
      h('div', null, 'stats: ', Object.keys(pt.stats).map((k) => chip(k + ' ' + pt.stats[k]))));
      pt.calls.forEach((c, k) => add(card, h('div', null, h('strong', null, 'call ', String(k + 1), ': '), chip(c.route + ' (' + c.retriever + ')'), ' k = ', String(c.k), ' query ', chip(c.query)), candTable(c.hits)));
      pt.reranks.forEach((c, k) => add(card, h('div', null, h('strong', null, 'rerank ', String(k + 1), ': '), chip(c.model), ' query ', chip(c.query)), candTable(c.hits)));
      if (pt.error) add(card, h('div', { class: 'err' }, pt.error));
      sec.appendChild(card);
    }
    return sec;
  }

  const DOC_RE = /^Doc (\d+)\(Title: (.*?)\)(?: |$)/gm;
  function lastProgram(r) {
    for (let i = r.turns.length - 1; i >= 0; i--) if (r.turns[i].program) return i;
    return -1;
  }
  function originalEvidence(r, turn) {
    const obs = r.turns[turn + 1] && r.turns[turn + 1].role === 'observation' ? r.turns[turn + 1] : null;
    const tr = (r.trace || []).find((p) => p.turn === turn);
    if (obs && obs.printed_ids) return { ids: obs.printed_ids, titles: (obs.docs || []).map((d) => d.title), from: 'the dump, turn ' + turn };
    if (tr) return { ids: tr.printed_ids, titles: [], from: 'the replay, turn ' + turn };
    return { ids: null, titles: obs ? (obs.docs || []).map((d) => d.title) : [], from: 'the observation\'s titles, turn ' + turn };
  }

  function whatIf(r) {
    const turn = lastProgram(r);
    const sec = h('section', { 'data-k': 'whatif' }, h('h2', null, 'What if: edit the program and run it against the live index'));
    if (!src.live) { add(sec, h('p', { class: 'muted' }, 'Offline report: open the dump in rlsearch serve --inspect to re-run programs.')); return sec; }
    const ed = h('textarea', { class: 'editor', 'data-k': 'editor', spellcheck: 'false' });
    ed.value = turn >= 0 ? r.turns[turn].program : 'print(sparse(question, k=3))\n';
    state.editor = ed;
    const out = h('div', { 'data-k': 'whatif-out' });
    const run = h('button', { 'data-k': 'run', onclick: async () => {
      run.disabled = true; clear(out).appendChild(h('p', { class: 'muted' }, 'running…'));
      try { await runWhatIf(r, turn, ed.value, out); } catch (e) { showError(out, e); }
      run.disabled = false;
    } }, 'run (POST /v1/programs/execute)');
    add(sec, h('div', { class: 'muted' }, 'question visible to the program: ', h('code', null, r.question || '""'), ' (gold never is)'), ed, h('div', null, run), out);
    return sec;
  }

  async function runWhatIf(r, turn, code, out) {
    const res = await postJSON('../v1/programs/execute', { programs: [{ id: 'what-if', question: r.question, code: code }] });
    const got = res.results[0];
    clear(out);
    const orig = turn >= 0 ? originalEvidence(r, turn) : { ids: [], titles: [], from: 'nothing' };
    const newTitles = [];
    for (const m of got.observation.matchAll(DOC_RE)) newTitles.push(m[2]);
    const gold = new Set(r.gold_ids);
    const goldT = new Set(r.gold_titles);
    const byIds = orig.ids !== null;
    const before = byIds ? orig.ids : orig.titles, after = byIds ? got.printed_ids : newTitles;
    const isGold = (x) => byIds ? gold.has(x) : goldT.has(x);
    const diff = h('table', { 'data-k': 'diff' }, h('tr', null, h('th', null, 'evidence (by ' + (byIds ? 'id' : 'title') + ', original from ' + orig.from + ')'), h('th', null, 'change'), h('th', null, '')));
    const seen = new Set();
    for (const x of after) { seen.add(x); add(diff, h('tr', { class: isGold(x) ? 'gold' : '' }, h('td', { class: before.includes(x) ? '' : 'diff-add' }, x), h('td', null, before.includes(x) ? 'kept' : 'added'), h('td', null, isGold(x) ? chip('gold', 'gold') : null))); }
    for (const x of before) if (!seen.has(x)) add(diff, h('tr', { class: isGold(x) ? 'gold' : '' }, h('td', { class: 'diff-del' }, x), h('td', null, 'removed'), h('td', null, isGold(x) ? chip('gold', 'gold') : null)));
    add(out, h('div', null, 'outcome ', chip(got.code, got.code === 'ok' ? 'ok' : 'bad', { 'data-k': 'whatif-code' }), ' · stats: ', Object.keys(got.stats).map((k) => chip(k + ' ' + got.stats[k]))), diff);
    if (r.golden_answers.length || r.gold_ids.length || r.gold_titles.length) {
      const rr = await postJSON('../v1/rewards/rpl', { rollouts: [{ id: r.id, golden_answers: r.golden_answers, gold_ids: r.gold_ids, gold_titles: r.gold_titles, response: '', turns: [got] }] });
      const w = rr.rewards[0];
      const was = turn >= 0 && r.turns[turn + 1] ? r.turns[turn + 1].v_ret : undefined;
      add(out, h('div', null, 'V_ret of this program alone (POST /v1/rewards/rpl): ', chip(String(w.v_ret), w.v_ret ? 'ok' : 'bad', { 'data-k': 'whatif-vret', 'data-v': w.v_ret }),
        ' coverage ', h('span', { 'data-k': 'whatif-coverage', 'data-v': w.coverage }, fmt(w.coverage)), ' (', String(w.gold_covered), ' of ', String(w.n_gold), ', matched by ', w.matched_by || '–', ')',
        was !== undefined ? [' · original program: V_ret ', String(was)] : null));
    }
    add(out, h('div', { class: 'muted' }, 'observation the policy would see:'), bigText(got.observation));
  }

  function variants(r) {
    const sec = h('section', { 'data-k': 'variants' }, h('h2', null, 'Verified variants of the last program (mutation verifier)'));
    if (!src.live) { add(sec, h('p', { class: 'muted' }, 'Offline report: rlsearch serve --inspect runs POST /v1/programs/mutate.')); return sec; }
    if (!r.gold_ids.length) { add(sec, h('p', { class: 'muted' }, 'V_ret needs gold passage ids; this rollout has none.')); return sec; }
    const out = h('div', { 'data-k': 'variants-out' });
    const btn = h('button', { 'data-k': 'mutate', onclick: async () => {
      btn.disabled = true; clear(out).appendChild(h('p', { class: 'muted' }, 'searching…'));
      try {
        const traj = { id: r.id, question: r.question, gold_ids: r.gold_ids, turns: r.turns.map((t) => ({ role: t.role, text: t.text })) };
        const res = await postJSON('../v1/programs/mutate', { trajectories: [traj] });
        showVariants(res.proposals[0], out);
      } catch (e) { showError(out, e); }
      btn.disabled = false;
    } }, 'search (POST /v1/programs/mutate)');
    add(sec, btn, out);
    return sec;
  }

  function showVariants(p, out) {
    clear(out);
    if (p.error) { add(out, h('p', { class: 'err' }, p.error)); return; }
    add(out, h('div', null, 'status ', chip(p.status, p.status === 'verified' ? 'ok' : 'bad', { 'data-k': 'variants-status' }), p.reason ? [' ', h('span', { class: 'muted' }, p.reason)] : null,
      p.original ? [' · original program: gold printed ', String(p.original.gold_covered), ' of ', String(p.need_gold), ', code ', p.original.code] : null,
      ' · ', String(p.executions), ' executions of ', String(p.space_size), ' mutations'));
    (p.verified || []).forEach((v, k) => {
      const d = v.distance || {};
      add(out, h('div', { class: 'card', 'data-k': 'variant' },
        h('div', null, h('strong', null, 'variant ', String(k + 1)), ' distance ', chip('mode ' + d.mode), chip('rerank toggle ' + d.rerank_toggle), chip('queries ' + d.queries), chip('width ' + d.width), chip('rerank ' + d.rerank),
          ' · gold printed ', String(v.gold_covered), ' ', h('button', { onclick: () => { if (state.editor) { state.editor.value = v.source; state.editor.scrollIntoView(); } } }, 'edit in what-if')),
        highlight(v.source), h('div', null, 'printed: ', (v.printed_ids || []).map((id) => chip(id)))));
    });
  }

  start();
})();
