// Walks the demo's Android app (`stallscope demo --android-keys`, SPEC §13)
// in headless Chromium for tests/integration/test_demo.py: signs in, reads
// the groups list (Java names) and its kind filter, filters to ANRs, opens
// a group's flame graph and sizes it by time, opens a report's Java stack,
// the overview's startup table, the frames page and the missing files;
// then signs in to the iOS app, which has no frames page. It asserts
// nothing itself: it prints what the pages showed as JSON, and the Python
// test compares that with the API. Views are measured for sideways scroll
// at 1280 px and at a phone's 390 px.
//
//   node android.mjs SCENARIO.json
// SCENARIO: {url, app, token, ios_app, ios_token, tree_key}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { launch, openPage, overflowOf, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = {};

const browser = await launch(chromium);
try {
  const { page, measure } = await openPage(browser, seen);
  const go = async (hash, ready) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await settled(page);
    await page.waitForSelector(ready);
  };
  const signIn = async (app, token) => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', app);
    await page.fill('#signin-token', token);
    await page.click('#signin-submit');
    await settled(page);
  };
  const flameNodes = () => page.$$eval('#flame .flame-node', (els) => {
    const graph = document.getElementById('flame');
    return els.filter((e) => !e.dataset.root && !e.classList.contains('ancestor')).map((e) => ({
      path: e.dataset.path, count: Number(e.dataset.count), ms: Number(e.dataset.ms),
      width: e.getBoundingClientRect().width, graph_width: graph.getBoundingClientRect().width,
      size: graph.dataset.size,
    }));
  });

  await step('sign in', () => signIn(s.app, s.token));

  seen.groups = await step('groups list', async () => {
    await page.waitForSelector('#groups tr[data-key1]');
    await measure('groups');
    return page.$$eval('#groups tr[data-key1]', (rows) => rows.map((r) => ({
      key: r.dataset.key1, title: r.querySelector('td.frames').innerText,
    })));
  });
  seen.nav_frames = await page.isVisible('#nav-frames');

  seen.kind_options = await step('the kind filter', () => page.$$eval('#filter-kind option',
    (os) => os.map((o) => ({ value: o.dataset.v ?? null, text: o.textContent }))));

  seen.anr = await step('the list filtered to ANRs', async () => {
    await page.selectOption('#filter-kind', { label: seen.kind_options.find((o) => o.value === 'anr').text });
    await page.click('#filters-apply');
    await page.waitForFunction(() => location.hash.includes('kind=anr'));
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1], #view p.empty:not([hidden])');
    return {
      keys: await page.$$eval('#groups tr[data-key1]', (rows) => rows.map((r) => r.dataset.key1)),
      chosen: await page.$eval('#filter-kind', (el) => el.selectedOptions[0].textContent),
    };
  });

  seen.flame = await step('a group sized by reports, then by time', async () => {
    await go(`#/groups/${s.tree_key}`, '#flame .flame-node');
    const byCount = await flameNodes();
    const switchShown = await page.isVisible('#flame-size');
    await page.check('#flame-size-time');
    await page.waitForFunction(() => document.getElementById('flame').dataset.size === 'ms');
    await measure('group');
    const kinds = await page.$$eval('#breakdown-kind .bd-value', (els) => els.map((e) => e.innerText));
    return { switch: switchShown, by_count: byCount, by_time: await flameNodes(), kinds };
  });

  seen.report = await step('a report\'s Java stack', async () => {
    await page.click('#subgroups tr[data-key2] >> nth=0');
    await page.waitForSelector('#reports tr[data-report-id]');
    await page.click('#reports tr[data-report-id] >> nth=0');
    await page.waitForSelector('#report li.frame');
    await measure('report');
    return {
      id: new URL(page.url()).hash.split('/')[2].split('?')[0],
      frames: await page.$$eval('#report .representative li.frame', (fs) => fs.map((f) => f.innerText)),
      images: await page.$$eval('#report table.images tbody tr', (rows) => rows.map((r) => r.innerText)),
    };
  });

  seen.startup = await step('the overview\'s startup table', async () => {
    await go('#/overview', '#overview-startup tr[data-version]');
    await measure('overview');
    return page.$$eval('#overview-startup tr[data-version]', (rows) => rows.map((r) => ({
      ...r.dataset, text: r.innerText,
    })));
  });

  seen.frames = await step('the frames page', async () => {
    await page.click('#nav-frames');
    await settled(page);
    await page.waitForSelector('#frames tr[data-scene]');
    await measure('frames');
    return page.$$eval('#frames tr[data-scene]', (rows) => rows.map((r) => ({ ...r.dataset, text: r.innerText })));
  });

  seen.missing = await step('missing mappings', async () => {
    await page.click('#nav-missing');
    await settled(page);
    await page.waitForSelector('#missing tr[data-uuid]');
    await measure('missing');
    return {
      nav: await page.innerText('#nav-missing'),
      rows: await page.$$eval('#missing tr[data-uuid]', (rows) => rows.map((r) => ({ ...r.dataset, text: r.innerText }))),
      mappings: await page.$$eval('#mappings tr[data-version]', (rows) => rows.map((r) => ({ ...r.dataset }))),
    };
  });

  seen.phone = await step('phone width', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    const out = [];
    const views = [['#/groups', '#groups tr[data-key1]'], [`#/groups/${s.tree_key}`, '#flame .flame-node'],
      [`#/reports/${seen.report.id}`, '#report li.frame'], ['#/overview', '#overview-startup'],
      ['#/frames', '#frames tr[data-scene]'], ['#/missing', '#missing tr[data-uuid]']];
    for (const [hash, ready] of views) {
      await go(hash, ready);
      out.push({ view: hash, ...(await overflowOf(page)) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return out;
  });

  seen.ios = await step('the iOS app has no frames page', async () => {
    await page.click('#signout');
    await signIn(s.ios_app, s.ios_token);
    await page.waitForSelector('#groups tr[data-key1]');
    // The navigation settles once the app's kinds are known.
    await page.waitForFunction(() => document.getElementById('nav-missing').textContent === 'Missing dSYMs');
    return { nav_frames: await page.isVisible('#nav-frames'), nav_missing: await page.innerText('#nav-missing') };
  });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
