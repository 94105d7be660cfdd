// Walks the demo data set (`stallscope demo`) in headless Chromium for
// tests/integration/test_dashboard.py, as a newcomer would after `make
// run`: signs in, opens the top group, drills down to its first subgroup's
// newest report and its stack, then does it again from a list filtered to
// one app version. Every view is measured for sideways scroll at 1280 px.
// It asserts nothing itself: it prints what the pages showed as JSON, and
// the Python test compares that with the API.
//
//   node demo.mjs SCENARIO.json      SCENARIO: {url, app, token, version}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { launch, openPage, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = {};

const browser = await launch(chromium);
try {
  const { page, measure } = await openPage(browser, seen);
  const rowsOf = (table, key) => page.$$eval(`#${table} tr[data-${key}]`, (rows, k) =>
    rows.map((r) => ({ key: r.getAttribute(`data-${k}`), text: r.innerText })), key);

  // The top group, its first subgroup, that one's newest report.
  const drill = async (label) => {
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1]');
    await measure(`groups${label}`);
    const groups = await rowsOf('groups', 'key1');
    const sparks = await page.$$eval('#groups svg.spark', (els) =>
      els.map((el) => ({ from: el.dataset.from, to: el.dataset.to, days: Number(el.dataset.days) })));
    await page.click('#groups tr[data-key1] >> nth=0');
    await page.waitForSelector('#subgroups tr[data-key2]');
    await measure(`group${label}`);
    const group = {
      hash: new URL(page.url()).hash,
      reports: await page.innerText('#group-reports'),
      users: await page.innerText('#group-users'),
      subgroups: await rowsOf('subgroups', 'key2'),
    };
    await page.click('#subgroups tr[data-key2] >> nth=0');
    await page.waitForSelector('#reports tr[data-report-id]');
    await measure(`reports${label}`);
    const reports = await rowsOf('reports', 'report-id');
    await page.click('#reports tr[data-report-id] >> nth=0');
    await page.waitForSelector('#report li.frame');
    await measure(`report${label}`);
    const report = {
      hash: new URL(page.url()).hash,
      representative_frames: await page.$$eval('#report .representative li.frame',
        (fs) => fs.map((f) => f.innerText)),
    };
    return { groups, sparks, group, reports, report };
  };

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
  });
  seen.all = await step('the top group down to its stack', () => drill(''));
  seen.filtered = await step('the same from a list filtered to one version', async () => {
    await page.click('#nav-groups');
    await page.waitForSelector('#filter-version');
    seen.versions = await page.$$eval('#filter-version option', (os) => os.map((o) => o.value));
    await page.selectOption('#filter-version', s.version);
    await page.click('#filters-apply');
    await page.waitForFunction((v) => location.hash.includes(`version=${encodeURIComponent(v)}`), s.version);
    return drill(', filtered');
  });
  seen.missing = await step('missing dSYMs', async () => {
    await page.click('#nav-missing');
    await page.waitForSelector('#missing tr[data-uuid], #view p.empty:not([hidden])');
    await measure('missing dSYMs');
    return {
      app: await rowsOf('missing', 'uuid'),
      system: await rowsOf('missing-system', 'uuid'),
    };
  });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
