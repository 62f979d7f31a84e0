// Weir dashboard: a static page over the REST API. The token lives in this tab's sessionStorage
// only and goes out as a bearer token; nothing is stored server-side and no cookie is used.
(function () {
  'use strict';

  const TOKEN_KEY = 'weir.token';
  const REFRESH_MS = 5000;
  const COLORS = ['#4fb3ff', '#3ccf8e', '#f5b83d', '#ff6b6b', '#b48cff', '#5ee0e0', '#ff9f5a', '#9aa7b8'];
  const $ = (id) => document.getElementById(id);

  const state = { charts: {}, taskNames: null, volumeChosen: false, nodeChosen: false, timer: null, volumes: [], nodes: null, tenants: [], busy: false };

  // ---- formatting -------------------------------------------------------------------------
  function num(v, digits) {
    if (v == null || isNaN(v)) return '–';
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1) + 'G';
    if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    return v.toFixed(digits == null ? (a >= 100 || a === 0 ? 0 : 1) : digits);
  }
  function bytesPerSec(v) {
    if (v == null || isNaN(v)) return '–';
    const units = ['B/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return v.toFixed(v >= 100 || i === 0 ? 0 : 1) + ' ' + units[i];
  }
  function micros(v) {
    if (v == null || isNaN(v)) return '–';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' s';
    if (v >= 1e3) return (v / 1e3).toFixed(v >= 1e4 ? 0 : 1) + ' ms';
    return Math.round(v) + ' µs';
  }
  function millis(v) {
    if (v == null || isNaN(v)) return '–';
    if (v >= 60000) return (v / 60000).toFixed(1) + ' min';
    if (v >= 1000) return (v / 1000).toFixed(1) + ' s';
    return Math.round(v) + ' ms';
  }
  function esc(s) {
    return String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }

  // ---- QoS in force -------------------------------------------------------------------------
  // The absolute numbers the data nodes enforce for the chosen volume, after scaling by capacity,
  // and the term that produced each (absolute, per GiB, floor or cap).
  const SOURCE_TEXT = { absolute: 'absolute', perGiB: 'per GiB', floor: 'floor', cap: 'cap' };
  function renderQos(volume) {
    const body = $('qos-table').querySelector('tbody');
    const note = $('qos-capacity');
    if (!volume || !volume.effectivePolicy) {
      body.innerHTML = '<tr class="empty"><td colspan="3">No volume</td></tr>';
      note.textContent = '';
      return;
    }
    const e = volume.effectivePolicy;
    const sources = e.sources || {};
    const rows = [['Reservation', 'minIops', num], ['IOPS limit', 'maxIops', num], ['Burst IOPS', 'burstIops', num],
      ['Throughput limit', 'maxBytesPerSec', bytesPerSec], ['Burst throughput', 'burstBytesPerSec', bytesPerSec]];
    body.innerHTML = rows.map(([label, key, fmt]) => '<tr data-qos="' + key + '"><td>' + esc(label) + '</td><td class="num">'
      + (e[key] == null ? 'none' : esc(fmt(e[key]))) + '</td><td>' + esc(sources[key] ? SOURCE_TEXT[sources[key]] || sources[key] : '–')
      + '</td></tr>').join('');
    const gib = (b) => (b / 1073741824).toFixed(b >= 10 * 1073741824 ? 0 : 2) + ' GiB';
    note.textContent = e.capacityBasis
      ? 'Scaled by ' + (e.capacityBasis === 'used' ? 'used space' : 'size') + ': ' + gib(e.capacityBytes)
        + (volume.usedBytes != null ? ' · used now ' + gib(volume.usedBytes) : '')
      : 'Absolute numbers' + (volume.usedBytes != null ? ' · used now ' + gib(volume.usedBytes) : '');
  }

  // ---- Copies -------------------------------------------------------------------------------
  // A replicated volume's copies: which node is the primary, each copy's state as the primary
  // last reported it, and whether the volume is degraded (fewer copies in sync than it keeps).
  const COPY_TEXT = { inSync: 'in sync', resyncing: 'resyncing', outOfSync: 'out of sync' };
  const COPY_PILL = { inSync: 'ok', resyncing: 'warn', outOfSync: 'bad' };
  function renderCopies(volume, nodesById) {
    const el = $('volume-copies');
    if (!volume || !volume.copies || volume.replicas < 2) {
      el.innerHTML = '';
      return;
    }
    const mib = (b) => (b / 1048576).toFixed(0) + ' MiB';
    const copies = volume.copies.map((c) => {
      const node = nodesById[c.nodeId] ? nodesById[c.nodeId].name : c.nodeId.slice(0, 8);
      const left = c.state !== 'inSync' && c.resyncRemainingBytes > 0 ? ', ' + mib(c.resyncRemainingBytes) + ' left' : '';
      return '<span class="pill ' + (COPY_PILL[c.state] || 'none') + '" data-copy="' + esc(c.nodeId) + '">' + esc(node)
        + (c.nodeId === volume.primaryNodeId ? ' (primary)' : '') + ': ' + esc(COPY_TEXT[c.state] || c.state) + esc(left)
        + '</span>';
    }).join(' ');
    el.innerHTML = esc(volume.replicas + ' copies · epoch ' + volume.epoch) + ' '
      + (volume.degraded ? '<span class="pill bad">degraded</span>' : '<span class="pill ok">all in sync</span>') + ' ' + copies;
  }

  // ---- API ----------------------------------------------------------------------------------
  class HttpError extends Error {
    constructor(status, detail) { super(detail || ('HTTP ' + status)); this.status = status; }
  }
  async function api(path) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const res = await fetch(path, { headers: { 'Authorization': 'Bearer ' + token, 'Accept': 'application/json' }, cache: 'no-store' });
    if (!res.ok) {
      let detail = '';
      try { detail = (await res.json()).detail || ''; } catch (e) { /* not JSON */ }
      throw new HttpError(res.status, detail);
    }
    return res.json();
  }
  async function optional(path) {
    try { return await api(path); } catch (e) {
      if (e.status === 403 || e.status === 404) return null;
      throw e;
    }
  }
  function rangeQuery() {
    const seconds = Number($('range').value);
    const to = new Date();
    const from = new Date(to.getTime() - seconds * 1000);
    return 'from=' + from.toISOString() + '&to=' + to.toISOString();
  }

  // ---- charts -------------------------------------------------------------------------------
  function axis(fmt) {
    return { stroke: '#8394a8', grid: { stroke: '#263241', width: 1 }, ticks: { stroke: '#263241' },
      values: fmt ? (u, vals) => vals.map((v) => fmt(v)) : undefined, size: fmt ? 76 : 50 };
  }
  function chart(id, series, fmt, opts) {
    const el = $(id);
    const width = Math.max(280, el.clientWidth || el.parentElement.clientWidth || 400);
    const o = Object.assign({
      width: width, height: 200, series: [{}].concat(series), legend: { live: true },
      cursor: { points: { size: 6 } },
      axes: [axis(null), axis(fmt)], scales: { x: { time: true } },
    }, opts || {});
    const empty = [[]].concat(series.map(() => []));
    if (state.charts[id]) state.charts[id].destroy();
    el.innerHTML = '';
    state.charts[id] = new uPlot(o, empty, el);
    return state.charts[id];
  }
  function line(label, color, fmt, fill) {
    return { label: label, stroke: color, width: 1.6, fill: fill ? color + '22' : undefined,
      value: (u, v) => (fmt ? fmt(v) : num(v)), points: { show: false } };
  }
  function setupCharts() {
    // what a replicated volume's copies apply for the primary (its writes, trims and flushes, and
    // resync steps): counted apart from the clients' reads and writes (which count each request
    // once), dashed beside them
    const replica = (fmt) => Object.assign(line('replica', COLORS[4], fmt), { dash: [4, 4] });
    chart('chart-iops', [line('read', COLORS[0], num, true), line('write', COLORS[1], num, true), replica(num)], num);
    chart('chart-bps', [line('read', COLORS[0], bytesPerSec, true), line('write', COLORS[1], bytesPerSec, true),
      replica(bytesPerSec)], bytesPerSec);
    // the queued part of the latency (time waiting at the scheduler), dashed under its total: when
    // it is most of the latency, the node is saturated and weights decide who waits
    chart('chart-lat', [line('p50', COLORS[1], micros), line('p99', COLORS[2], micros), line('max', COLORS[3], micros),
      Object.assign(line('queued p50', COLORS[1], micros), { dash: [4, 4] }),
      Object.assign(line('queued p99', COLORS[2], micros), { dash: [4, 4] })], micros);
    chart('chart-thr', [line('throttled ms/s', COLORS[3], (v) => num(v, 1), true), line('queue depth', COLORS[4], (v) => num(v, 2))], (v) => num(v, 1));
  }
  function xs(points) { return points.map((p) => Date.parse(p.ts) / 1000); }
  function stepSeconds(series) {
    const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(series.step || '');
    if (!m) return 1;
    return (Number(m[1] || 0) * 3600) + (Number(m[2] || 0) * 60) + Number(m[3] || 0);
  }

  // ---- rendering ----------------------------------------------------------------------------
  function lastComplete(points) {
    // The newest point is still filling up; show the one before it when there is one.
    // The one before may still wait for its report, so take the newest of the two before that
    // with any IO.
    if (!points || points.length === 0) return null;
    const candidates = points.slice(-3, -1).reverse();
    return candidates.find((p) => p.readOps + p.writeOps > 0) || candidates[0] || points[points.length - 1];
  }
  function renderNodes(nodes) {
    const body = $('nodes-table').querySelector('tbody');
    if (nodes == null) {
      $('nodes-table').hidden = true; $('nodes-note').hidden = false; $('tasks-card').hidden = true;
      $('kpi-nodes').textContent = '–'; $('kpi-nodes-hint').textContent = 'not in your scope';
      return;
    }
    $('nodes-table').hidden = false; $('nodes-note').hidden = true; $('tasks-card').hidden = false;
    $('kpi-nodes').textContent = nodes.length;
    let behind = 0;
    body.innerHTML = nodes.length === 0 ? '<tr class="empty"><td colspan="6">No data nodes registered</td></tr>' : nodes.map((n) => {
      const s = n.status || {};
      const connected = s.connected === true ? '<span class="pill ok">connected</span>'
        : s.connected === false ? '<span class="pill bad">offline</span>' : '<span class="pill none">unknown</span>';
      let push = '<span class="pill none">–</span>';
      if (s.desiredRevision != null && s.appliedRevision != null) {
        push = s.appliedRevision >= s.desiredRevision ? '<span class="pill ok">applied</span>'
          : '<span class="pill warn">behind ' + (s.desiredRevision - s.appliedRevision) + '</span>';
        if (s.appliedRevision < s.desiredRevision) behind++;
      } else if (s.desiredRevision != null) {
        push = '<span class="pill warn">never applied</span>'; behind++;
      }
      if (s.lastError) push += ' <span class="pill bad" title="' + esc(s.lastError) + '">nack</span>';
      return '<tr><td>' + esc(n.name) + '</td><td>' + esc(n.address || '–') + '</td><td>' + connected + '</td><td class="num">'
        + (s.desiredRevision == null ? '–' : s.desiredRevision) + '</td><td class="num">'
        + (s.appliedRevision == null ? '–' : s.appliedRevision) + '</td><td>' + push + '</td></tr>';
    }).join('');
    $('kpi-nodes-hint').textContent = behind ? behind + ' behind on config' : '';
  }
  function renderTenants(rows) {
    const body = $('tenants-table').querySelector('tbody');
    body.innerHTML = rows.length === 0 ? '<tr class="empty"><td colspan="6">No tenants</td></tr>' : rows.map((r) => {
      const p = lastComplete(r.series && r.series.points) || {};
      const throttled = r.series ? r.series.points.reduce((a, q) => a + q.throttledMs, 0) : null;
      return '<tr><td>' + esc(r.tenant.displayName || r.tenant.name) + '</td><td class="num">' + r.volumes + '</td><td class="num">'
        + num(p.iops) + '</td><td class="num">' + bytesPerSec(p.bytesPerSec) + '</td><td class="num">' + micros(p.latencyP99Us)
        + '</td><td class="num">' + millis(throttled) + '</td></tr>';
    }).join('');
  }
  function renderTotal(total) {
    // everything the caller sees, not only the tenants in the table
    const p = total && lastComplete(total.points);
    const iops = $('kpi-iops');
    iops.textContent = p ? num(p.iops) : '–';
    iops.dataset.ts = p ? p.ts : '';
    iops.dataset.value = p ? p.iops : '';
    $('kpi-bps').textContent = p ? bytesPerSec(p.bytesPerSec) : '–';
    $('kpi-throttled').textContent = total ? millis(total.points.reduce((a, q) => a + q.throttledMs, 0)) : '–';
    const gaps = total ? total.gaps : [];
    const banner = $('gaps');
    if (gaps.length) {
      const dropped = gaps.reduce((a, g) => a + (g.lastSequence - g.firstSequence + 1), 0);
      banner.hidden = false;
      banner.textContent = '⚠ Incomplete usage: data nodes dropped ' + dropped + ' unacknowledged report(s) in this range ('
        + gaps.map((g) => new Date(g.from).toLocaleTimeString() + '–' + new Date(g.to).toLocaleTimeString()).join(', ') + ').';
    } else {
      banner.hidden = true;
    }
  }
  function renderVolume(series) {
    if (!series) return;
    const x = xs(series.points);
    const p = series.points;
    const sec = stepSeconds(series);
    state.charts['chart-iops'].setData([x, p.map((q) => q.readOps / sec), p.map((q) => q.writeOps / sec),
      p.map((q) => q.replicaOps / sec)]);
    state.charts['chart-bps'].setData([x, p.map((q) => q.readBytes / sec), p.map((q) => q.writeBytes / sec),
      p.map((q) => q.replicaBytes / sec)]);
    state.charts['chart-lat'].setData([x, p.map((q) => q.latencyP50Us), p.map((q) => q.latencyP99Us), p.map((q) => q.latencyMaxUs),
      p.map((q) => q.queuedP50Us), p.map((q) => q.queuedP99Us)]);
    state.charts['chart-thr'].setData([x, p.map((q) => q.throttledMs / sec), p.map((q) => q.queueDepth)]);
  }
  function renderTasks(series) {
    if (!series) return;
    const names = series.tasks.map((t) => t.name).join(',');
    if (names !== state.taskNames) {
      state.taskNames = names;
      chart('chart-tasks', series.tasks.map((t, i) => line(t.name, COLORS[i % COLORS.length], (v) => (v == null ? '–' : (v * 100).toFixed(1) + ' %'), true)),
        (v) => (v * 100).toFixed(0) + ' %', { height: 240, scales: { x: { time: true }, y: { range: [0, 1] } } });
    }
    if (series.tasks.length === 0) return;
    const x = xs(series.tasks[0].points);
    state.charts['chart-tasks'].setData([x].concat(series.tasks.map((t) => t.points.map((q) => q.workerFraction))));
  }
  function renderTop(top, tenantsById) {
    const body = $('top-table').querySelector('tbody');
    const rows = top ? top.volumes : [];
    body.innerHTML = rows.length === 0 ? '<tr class="empty"><td colspan="7">No IO in this range</td></tr>' : rows.map((v, i) => {
      const t = tenantsById[v.tenantId];
      return '<tr><td>' + (i + 1) + '</td><td>' + esc(v.volumeName || v.volumeId) + '</td><td>' + esc(t ? t.name : '–')
        + '</td><td class="num">' + num(v.iops) + '</td><td class="num">' + bytesPerSec(v.bytesPerSec) + '</td><td class="num">'
        + micros(v.latencyP99Us) + '</td><td class="num">' + millis(v.throttledMs) + '</td></tr>';
    }).join('');
  }
  function fillSelect(select, items, label) {
    const previous = select.value;
    const html = items.map((it) => '<option value="' + esc(it.id) + '">' + esc(label(it)) + '</option>').join('');
    if (select.dataset.html !== html) {
      select.innerHTML = html;
      select.dataset.html = html;
      if (items.some((it) => it.id === previous)) select.value = previous;
    }
  }

  // ---- refresh loop -------------------------------------------------------------------------
  async function refresh() {
    if (state.busy) return;
    state.busy = true;
    try {
      const q = rangeQuery();
      const [tenants, volumes, nodes] = await Promise.all([
        api('/api/v1/tenants?size=500'), api('/api/v1/volumes?size=500'), optional('/api/v1/nodes?size=500')]);
      state.tenants = tenants.items;
      state.volumes = volumes.items;
      const tenantsById = Object.fromEntries(tenants.items.map((t) => [t.id, t]));
      $('kpi-tenants').textContent = tenants.totalItems;
      $('kpi-volumes').textContent = volumes.totalItems;
      renderNodes(nodes ? nodes.items : null);
      fillSelect($('volume-select'), volumes.items, (v) => (tenantsById[v.tenantId] ? tenantsById[v.tenantId].name + ' / ' : '') + v.name);
      if (nodes) fillSelect($('node-select'), nodes.items, (n) => n.name);

      // The busiest volumes first decide what is shown by default: the tenants they belong to
      // lead the table, the busiest volume is charted, and its first node's tasks.
      const busiest = await optional('/api/v1/usage/top?limit=25&by=iops&' + q);
      const busy = busiest ? busiest.volumes : [];
      const busyTenants = [...new Set(busy.map((v) => v.tenantId).filter((t) => t))];
      const perTenant = busyTenants.map((id) => tenantsById[id]).filter((t) => t)
        .concat(tenants.items.filter((t) => !busyTenants.includes(t.id))).slice(0, 12);
      if (!state.volumeChosen && busy.length && volumes.items.some((v) => v.id === busy[0].volumeId)) {
        $('volume-select').value = busy[0].volumeId;
        const v = volumes.items.find((x) => x.id === busy[0].volumeId);
        if (nodes && !state.nodeChosen && v.nodeIds && v.nodeIds.length) $('node-select').value = v.nodeIds[0];
      }
      const [total, ...tenantSeries] = await Promise.all([optional('/api/v1/usage/total?' + q)]
        .concat(perTenant.map((t) => optional('/api/v1/usage/tenants/' + t.id + '?' + q))));
      const volumeCounts = {};
      volumes.items.forEach((v) => { volumeCounts[v.tenantId] = (volumeCounts[v.tenantId] || 0) + 1; });
      renderTenants(perTenant.map((t, i) => ({ tenant: t, series: tenantSeries[i], volumes: volumeCounts[t.id] || 0 })));
      renderTotal(total);

      const volumeId = $('volume-select').value;
      const nodeId = nodes && $('node-select').value;
      const [volumeSeries, taskSeries, top] = await Promise.all([
        volumeId ? optional('/api/v1/usage/volumes/' + volumeId + '?' + q) : null,
        nodeId ? optional('/api/v1/usage/nodes/' + nodeId + '/tasks?' + q) : null,
        optional('/api/v1/usage/top?limit=10&by=' + $('top-by').value + '&' + q)]);
      renderVolume(volumeSeries);
      renderQos(volumes.items.find((v) => v.id === volumeId));
      renderCopies(volumes.items.find((v) => v.id === volumeId),
        Object.fromEntries((nodes ? nodes.items : []).map((n) => [n.id, n])));
      renderTasks(taskSeries);
      renderTop(top, tenantsById);
      $('live').classList.remove('stale');
      $('live-text').textContent = 'live · ' + new Date().toLocaleTimeString();
      document.body.dataset.loaded = 'true';
    } catch (e) {
      if (e.status === 401) { signOut('Your token was refused (expired or revoked). Sign in again.'); return; }
      $('live').classList.add('stale');
      $('live-text').textContent = 'stale · ' + e.message;
    } finally {
      state.busy = false;
    }
  }
  function schedule() {
    clearTimeout(state.timer);
    state.timer = setTimeout(async () => { await refresh(); if (sessionStorage.getItem(TOKEN_KEY)) schedule(); }, REFRESH_MS);
  }
  function showApp() {
    $('signin').hidden = true; $('app').hidden = false; $('controls').hidden = false;
    setupCharts();
    state.taskNames = null;
    state.volumeChosen = false;
    state.nodeChosen = false;
    refresh().then(schedule);
  }
  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    clearTimeout(state.timer);
    Object.values(state.charts).forEach((c) => c.destroy());
    state.charts = {};
    $('app').hidden = true; $('controls').hidden = true; $('signin').hidden = false;
    $('signin-error').textContent = message || '';
    $('token').value = '';
    delete document.body.dataset.loaded;
  }

  $('signin-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = $('token').value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    try {
      await api('/api/v1/tenants?size=1');
      $('signin-error').textContent = '';
      showApp();
    } catch (e) {
      sessionStorage.removeItem(TOKEN_KEY);
      $('signin-error').textContent = e.status === 401 ? 'That token was not accepted.' : 'Sign-in failed: ' + e.message;
    }
  });
  $('signout').addEventListener('click', () => signOut(''));
  ['range', 'volume-select', 'node-select', 'top-by'].forEach((id) => $(id).addEventListener('change', () => {
    if (id === 'volume-select') state.volumeChosen = true;
    if (id === 'node-select') state.nodeChosen = true;
    refresh();
  }));
  window.addEventListener('resize', () => {
    Object.entries(state.charts).forEach(([id, c]) => c.setSize({ width: Math.max(280, $(id).clientWidth), height: c.height }));
  });
  // A link may carry a token in its fragment (#token=..., as `weir demo` prints): the fragment is
  // never sent to the server; take it into this tab's session storage and drop it from the URL.
  const fromLink = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromLink) {
    sessionStorage.setItem(TOKEN_KEY, fromLink.trim());
    history.replaceState(null, '', location.pathname + location.search);
  }
  if (sessionStorage.getItem(TOKEN_KEY)) showApp();
})();
