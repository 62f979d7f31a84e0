// Signs in to the Weir dashboard in headless Chromium, waits for live data, checks what a user
// sees and saves a screenshot. Run by io.weir.controlplane.dashboard.DashboardE2ETest:
//   node dashboard.mjs <baseUrl> <token> <screenshot.png> <expect: admin|tenant>
// With token "-", baseUrl is a link that signs in by itself (the demo's, with #token=...), and the
// range is the last 15 minutes.
// Prints one JSON line with what it found; exits non-zero on any failed check.
import { chromium } from 'playwright-core';

const [baseUrl, token, screenshot, expect] = process.argv.slice(2);
const fail = (msg) => { console.error('FAIL: ' + msg); process.exitCode = 1; };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1480, height: 1250 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // The dashboard runs under its Content-Security-Policy (no inline script or style): Chromium
  // reports each thing the policy blocked on the console.
  const blocked = [];
  page.on('console', (m) => { if (m.text().includes('Content Security Policy')) blocked.push(m.text()); });
  if (token === '-') {
    const first = await page.goto(baseUrl, { waitUntil: 'load' });
    if (!(first.headers()['content-security-policy'] || '').includes("script-src 'self'")) fail('no Content-Security-Policy');
    if (page.url().includes('#')) fail('the token stayed in the address bar: ' + page.url());
    // a cluster that has just started has minutes of usage, not an hour: look at the last 15 minutes
    await page.selectOption('#range', '900');
  } else {
    const first = await page.goto(baseUrl + '/', { waitUntil: 'load' });
    if (!(first.headers()['content-security-policy'] || '').includes("script-src 'self'")) fail('no Content-Security-Policy');
    await page.fill('#token', token);
    await page.click('#signin-form button[type=submit]');
  }
  try {
    await page.waitForSelector('body[data-loaded=true]', { timeout: 180000 });
  } catch (e) {
    const live = await page.evaluate(() => document.getElementById('live-text').textContent);
    throw new Error('the dashboard did not load (status: "' + live + '"; page errors: ' + errors.join('; ') + ')');
  }
  // one more refresh cycle, so the live loop has run at least twice
  await page.waitForFunction(() => document.getElementById('live-text').textContent.startsWith('live'), null, { timeout: 30000 });

  const seen = await page.evaluate(() => {
    const text = (id) => document.getElementById(id).textContent.trim();
    const rows = (id) => [...document.querySelectorAll('#' + id + ' tbody tr:not(.empty)')].map((r) => [...r.cells].map((c) => c.textContent.trim()));
    // Pixels of an IOPS chart series' colour (read #4fb3ff, replica #b48cff): a drawn line with data.
    const canvas = document.querySelector('#chart-iops canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const pixels = (r, g, b) => {
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (Math.abs(data[i] - r) < 12 && Math.abs(data[i + 1] - g) < 12 && Math.abs(data[i + 2] - b) < 12) n++;
      }
      return n;
    };
    const coloured = pixels(0x4f, 0xb3, 0xff);
    return {
      tenants: text('kpi-tenants'), volumes: text('kpi-volumes'), nodes: text('kpi-nodes'), iops: text('kpi-iops'),
      kpi: { ts: document.getElementById('kpi-iops').dataset.ts, value: document.getElementById('kpi-iops').dataset.value },
      tenantRows: rows('tenants-table'), nodeRows: document.getElementById('nodes-table').hidden ? null : rows('nodes-table'),
      topRows: rows('top-table'), qosRows: rows('qos-table'), tasksVisible: !document.getElementById('tasks-card').hidden,
      charts: document.querySelectorAll('.uplot canvas').length, iopsPixels: coloured, replicaPixels: pixels(0xb4, 0x8c, 0xff),
      iopsSeries: [...document.querySelectorAll('#chart-iops .u-legend .u-label')].map((e) => e.textContent.trim()),
      latencySeries: [...document.querySelectorAll('#chart-lat .u-legend .u-label')].map((e) => e.textContent.trim()),
      token: { session: sessionStorage.getItem('weir.token') != null, local: localStorage.length, cookies: document.cookie },
      gaps: document.getElementById('gaps').hidden ? null : document.getElementById('gaps').textContent,
    };
  });
  if (blocked.length > 0) fail('the Content-Security-Policy blocked: ' + blocked.join('; '));
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify(seen));

  if (errors.length) fail('page errors: ' + errors.join('; '));
  if (seen.charts < (expect === 'admin' ? 5 : 4)) fail('charts drawn: ' + seen.charts);
  if (!seen.latencySeries.includes('queued p50') || !seen.latencySeries.includes('queued p99')) {
    fail('the latency chart does not show the time queued at the scheduler: ' + seen.latencySeries.join(', '));
  }
  if (seen.iopsPixels < 50) fail('the IOPS chart shows no data (' + seen.iopsPixels + ' pixels of the read colour)');
  if (!seen.iopsSeries.includes('replica') || seen.replicaPixels < 50) {
    fail('the IOPS chart does not draw the ops applied as a copy (' + seen.iopsSeries.join(', ') + '; '
      + seen.replicaPixels + ' pixels of the replica colour)');
  }
  if (seen.topRows.length === 0) fail('top-N is empty');
  if (!(Number(seen.iops.replace(/[kMG]$/, '')) > 0)) fail('cluster IOPS KPI is ' + seen.iops);
  if (!seen.token.session || seen.token.local !== 0 || seen.token.cookies !== '') fail('token storage: ' + JSON.stringify(seen.token));
  if (expect === 'admin' && (seen.nodeRows == null || seen.nodeRows.length === 0 || !seen.tasksVisible)) fail('admin sees no nodes');
  if (expect === 'tenant' && (seen.nodeRows != null || seen.tasksVisible)) fail('a tenant-bound caller sees nodes');

  // signing out forgets the token
  await page.click('#signout');
  if (await page.evaluate(() => sessionStorage.getItem('weir.token')) !== null) fail('token kept after sign-out');
} finally {
  await browser.close();
}
